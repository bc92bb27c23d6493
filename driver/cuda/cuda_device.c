/* driver/cuda/cuda_device.c — the "cuda" backend: vram_device_ops over cudart, with the
 * driver API reached through cudaGetDriverEntryPointByVersion (libcuda is never linked).
 * Every CUDA call goes through VRAM_CUDA_CALL: the raw error is recorded and classified
 * with vramkit/cudaerr.h, and a sticky one retires the backend for the whole process. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <vramkit/cudaerr.h>

#include "cuda_device.h"
#include "cuda_internal.h"
#include "forkguard.h"
#include "util/device_slots.h"

/* The VRAM_ATTR_* numbers are CUdevice_attribute numbers; the runtime shares three of
 * them (the fallback when the driver does not export cuDeviceGetAttribute). */
_Static_assert((int)CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED == VRAM_ATTR_HOST_REGISTER_SUPPORTED, "99");
_Static_assert((int)CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED ==
                   VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "102");
_Static_assert((int)CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED ==
                   VRAM_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED, "103");
_Static_assert((int)CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED ==
                   VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED, "110");
_Static_assert((int)CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED == VRAM_ATTR_MEMORY_POOLS_SUPPORTED, "115");
_Static_assert((int)CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES ==
                   VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES, "119");
_Static_assert((int)cudaDevAttrHostRegisterSupported == VRAM_ATTR_HOST_REGISTER_SUPPORTED, "rt 99");
_Static_assert((int)cudaDevAttrMemoryPoolsSupported == VRAM_ATTR_MEMORY_POOLS_SUPPORTED, "rt 115");
_Static_assert((int)cudaDevAttrMemoryPoolSupportedHandleTypes == VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES,
               "rt 119");
/* cudaComputeMode values are vram_compute_mode's. */
_Static_assert((int)cudaComputeModeDefault == VRAM_COMPUTE_DEFAULT &&
                   (int)cudaComputeModeExclusive == VRAM_COMPUTE_EXCLUSIVE_THREAD &&
                   (int)cudaComputeModeProhibited == VRAM_COMPUTE_PROHIBITED &&
                   (int)cudaComputeModeExclusiveProcess == VRAM_COMPUTE_EXCLUSIVE_PROCESS,
               "compute modes");
/* A CUresult with a number in cudaerr.h's table means what the cudaError_t does, so driver
 * API errors are classified by the same table (35 has no CUresult). */
_Static_assert(CUDA_ERROR_OUT_OF_MEMORY == 2 && CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER == 36 &&
                   CUDA_ERROR_NO_DEVICE == 100 && CUDA_ERROR_NO_BINARY_FOR_GPU == 209 &&
                   CUDA_ERROR_UNSUPPORTED_PTX_VERSION == 222 && CUDA_ERROR_CONTAINED == 226,
               "setup and recoverable CUresults");
_Static_assert(CUDA_ERROR_ILLEGAL_ADDRESS == 700 && CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES == 701 &&
                   CUDA_ERROR_LAUNCH_TIMEOUT == 702 && CUDA_ERROR_ASSERT == 710 &&
                   CUDA_ERROR_HARDWARE_STACK_ERROR == 714 && CUDA_ERROR_ILLEGAL_INSTRUCTION == 715 &&
                   CUDA_ERROR_MISALIGNED_ADDRESS == 716 && CUDA_ERROR_INVALID_ADDRESS_SPACE == 717 &&
                   CUDA_ERROR_INVALID_PC == 718 && CUDA_ERROR_LAUNCH_FAILED == 719 &&
                   CUDA_ERROR_TENSOR_MEMORY_LEAK == 721,
               "sticky CUresults");
_Static_assert(CUDA_ERROR_NOT_SUPPORTED == 801 && CUDA_ERROR_SYSTEM_DRIVER_MISMATCH == 803 &&
                   CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE == 804 &&
                   CUDA_ERROR_MPS_CLIENT_TERMINATED == 810 && CUDA_ERROR_EXTERNAL_DEVICE == 911 &&
                   CUDA_ERROR_NOT_READY == 600 && cudaErrorNotReady == 600,
               "more CUresults");
_Static_assert(cudaErrorStubLibrary == 34 && cudaErrorInsufficientDriver == 35, "no-driver codes");

/* ---- the process-wide error state ------------------------------------------------- */

static atomic_int cuda_sticky;      /* a sticky error was seen: the backend is retired */
static atomic_int cuda_last;        /* the last recorded error number */
static atomic_int cuda_noted;       /* vram_fork_guard_note_init was called */
static _Atomic(const char *) cuda_last_call_name;

vram_status vram__cuda_enter(void) {
    if (vram_fork_guard_tripped()) return VRAM_E_FORKED;
    if (atomic_load(&cuda_sticky)) return VRAM_E_CUDA_STICKY;
    return VRAM_OK;
}

/* "api->cuMemMap" -> "cuMemMap": the name as the user knows it. */
static const char *cuda_bare_name(const char *call) {
    if (call == NULL) return "";
    const char *arrow = strrchr(call, '>');
    const char *dot = strrchr(call, '.');
    if (arrow != NULL) call = arrow + 1;
    if (dot != NULL && dot + 1 > call) call = dot + 1;
    return call;
}

static int cuda_is_version_query(const char *call) {
    return strcmp(call, "cudaDriverGetVersion") == 0 || strcmp(call, "cudaRuntimeGetVersion") == 0;
}

vram_status vram__cuda_check(int code, const char *call) {
    /* what to do with the code is the core's decision (vram_cuda_verdict_of), shared with the
     * kernels' check; this recorder keeps the process-wide state */
    const vram_cuda_verdict v = vram_cuda_verdict_of(code);
    call = cuda_bare_name(call);
    if (code == 0) {
        /* the first success that needed the driver: from here on, a fork cannot use CUDA */
        if (!atomic_load(&cuda_noted) && !cuda_is_version_query(call)) {
            atomic_store(&cuda_noted, 1);
            (void)vram_fork_guard_note_init();
        }
        return VRAM_OK;
    }
    /* cudart keeps the code of a failed (or not-ready) call for the next cudaGetLastError; a
     * launch check elsewhere must not see ours (a sticky one stays whatever is done) */
    if (v.clear) (void)cudaGetLastError();
    if (!v.record) return v.status; /* 600: a query's answer, not a failure */
    atomic_store(&cuda_last, code);
    atomic_store(&cuda_last_call_name, call);
    if (v.retire) {
        atomic_store(&cuda_sticky, 1);
        return v.status;
    }
    if (code == cudaErrorInsufficientDriver || code == cudaErrorStubLibrary) {
        int drv = -1;
        if (cudaDriverGetVersion(&drv) == cudaSuccess && drv == 0) return VRAM_E_NO_DRIVER;
    }
    return v.status;
}

int vram__cuda_last_error(void) {
    if (vram_fork_guard_tripped()) return VRAM_FORK_GUARD_CUDA_CODE;
    return atomic_load(&cuda_last);
}

const char *vram__cuda_last_call(void) {
    const char *c = atomic_load(&cuda_last_call_name);
    return c != NULL ? c : "";
}

vram_status vram__cuda_inject(int code, const char *call) {
    return vram__cuda_check(code, call != NULL ? call : "injected");
}

/* ---- driver API entry points ----------------------------------------------------- */

static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static vram__cuda_api api_table;
static vram_status api_status;

static void *api_entry(const char *name, unsigned version) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    void *fn = NULL;
    vram_status st = VRAM_CUDA_CALL(cudaGetDriverEntryPointByVersion,
                                    (name, &fn, version, cudaEnableDefault, &q));
    return st == VRAM_OK && q == cudaDriverEntryPointSuccess ? fn : NULL;
}

static void api_load(void) {
    int n = 0;
    /* initialises the runtime (and cuInit) first: the lookups need a loaded driver */
    api_status = VRAM_CUDA_CALL(cudaGetDeviceCount, (&n));
    if (api_status != VRAM_OK) return;
    /* the lookup hands back a void *: copied, not cast, into the typed pointer */
#define API_ENTRY(name, version)                                             \
    do {                                                                     \
        void *fn_ = api_entry(#name, version);                               \
        _Static_assert(sizeof fn_ == sizeof api_table.name, "pointer sizes"); \
        memcpy(&api_table.name, &fn_, sizeof fn_);                           \
    } while (0)
    API_ENTRY(cuDeviceGet, 2000);
    API_ENTRY(cuDeviceGetAttribute, 2000);
    API_ENTRY(cuGetErrorName, 6000);
    API_ENTRY(cuDevicePrimaryCtxGetState, 7000);
    API_ENTRY(cuMemGetAllocationGranularity, 10020);
    API_ENTRY(cuMemAddressReserve, 10020);
    API_ENTRY(cuMemAddressFree, 10020);
    API_ENTRY(cuMemCreate, 10020);
    API_ENTRY(cuMemRelease, 10020);
    API_ENTRY(cuMemMap, 10020);
    API_ENTRY(cuMemUnmap, 10020);
    API_ENTRY(cuMemSetAccess, 10020);
#undef API_ENTRY
}

vram_status vram__cuda_driver_api(const vram__cuda_api **api) {
    pthread_once(&api_once, api_load);
    *api = &api_table;
    return api_status;
}

const char *vram__cuda_error_text(int code, const char *call) {
    call = cuda_bare_name(call);
    const char *name = NULL;
    if (strncmp(call, "cuda", 4) == 0) {
        name = cudaGetErrorName((cudaError_t)code);
        if (name != NULL && strncmp(name, "unrecognized", 12) == 0) name = NULL;
    } else if (strncmp(call, "cu", 2) == 0) {
        const vram__cuda_api *api = NULL;
        /* a cu* call failed, so the runtime is up and the lookup (if still to do) works */
        if (vram__cuda_driver_api(&api) == VRAM_OK && api->cuGetErrorName != NULL &&
            api->cuGetErrorName((CUresult)code, &name) != CUDA_SUCCESS)
            name = NULL;
    }
    if (name == NULL) name = vram_cuda_error_name(code);
    return name != NULL ? name : "unknown error";
}

/* ---- helpers --------------------------------------------------------------------- */

/* Makes `device` current for one slot's work; *prev is what to give back. */
static vram_status cuda_enter_device(int device, int *prev) {
    *prev = -1;
    vram_status st = VRAM_CUDA_CALL(cudaGetDevice, (prev));
    if (st != VRAM_OK) return st;
    if (*prev == device) return VRAM_OK;
    return VRAM_CUDA_CALL(cudaSetDevice, (device));
}

static vram_status cuda_leave_device(int device, int prev, vram_status st) {
    if (prev >= 0 && prev != device) {
        vram_status back = VRAM_CUDA_CALL(cudaSetDevice, (prev));
        if (st == VRAM_OK) st = back;
    }
    return st;
}

/* ---- versions and inventory ------------------------------------------------------ */

static vram_status cuda_driver_version(void *ctx, int *version) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (version == NULL) return VRAM_E_INVALID;
    int v = 0;
    vram_status st = VRAM_CUDA_CALL(cudaDriverGetVersion, (&v));
    if (st == VRAM_OK) *version = v;
    return st;
}

static vram_status cuda_runtime_version(void *ctx, int *version) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (version == NULL) return VRAM_E_INVALID;
    int v = 0;
    vram_status st = VRAM_CUDA_CALL(cudaRuntimeGetVersion, (&v));
    if (st == VRAM_OK) *version = v;
    return st;
}

static vram_status cuda_device_count(void *ctx, int *count) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (count == NULL) return VRAM_E_INVALID;
    int n = 0;
    vram_status st = VRAM_CUDA_CALL(cudaGetDeviceCount, (&n));
    if (st == VRAM_OK) *count = n;
    return st;
}

static vram_status cuda_attribute(void *ctx, int device, int attr, int *value) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (value == NULL || device < 0) return VRAM_E_INVALID;
    const vram__cuda_api *api = NULL;
    vram_status st = vram__cuda_driver_api(&api);
    if (st != VRAM_OK) return st;
    int v = 0;
    if (api->cuDeviceGet != NULL && api->cuDeviceGetAttribute != NULL) {
        CUdevice dev = 0;
        st = VRAM_CUDA_CALL(api->cuDeviceGet, (&dev, device));
        if (st != VRAM_OK) return st;
        st = VRAM_CUDA_CALL(api->cuDeviceGetAttribute, (&v, (CUdevice_attribute)attr, dev));
    } else if (attr == VRAM_ATTR_HOST_REGISTER_SUPPORTED || attr == VRAM_ATTR_MEMORY_POOLS_SUPPORTED ||
               attr == VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES) {
        st = VRAM_CUDA_CALL(cudaDeviceGetAttribute, (&v, (enum cudaDeviceAttr)attr, device));
    } else {
        return VRAM_E_NOT_SUPPORTED;
    }
    if (st == VRAM_OK) *value = v;
    return st;
}

static vram_status cuda_mem_info(void *ctx, int device, uint64_t *free_bytes, uint64_t *total_bytes) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (free_bytes == NULL || total_bytes == NULL || device < 0) return VRAM_E_INVALID;
    int prev = -1;
    vram_status st = cuda_enter_device(device, &prev);
    size_t f = 0, t = 0;
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaMemGetInfo, (&f, &t));
    st = cuda_leave_device(device, prev, st);
    if (st != VRAM_OK) return st;
    *free_bytes = (uint64_t)f;
    *total_bytes = (uint64_t)t;
    return VRAM_OK;
}

/* An attribute as a tristate; only a sticky (or forked) failure stops device_info. */
static vram_status cuda_tristate(int device, int attr, vram_tristate *out) {
    int v = 0;
    vram_status st = cuda_attribute(NULL, device, attr, &v);
    *out = st == VRAM_OK ? (v != 0 ? VRAM_YES : VRAM_NO) : VRAM_UNKNOWN;
    return st == VRAM_E_CUDA_STICKY || st == VRAM_E_FORKED ? st : VRAM_OK;
}

static vram_status cuda_device_info(void *ctx, int device, vram_device_info *out) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (out == NULL || device < 0) return VRAM_E_INVALID;
    struct cudaDeviceProp p;
    memset(&p, 0, sizeof p);
    vram_status st = VRAM_CUDA_CALL(cudaGetDeviceProperties, (&p, device));
    if (st != VRAM_OK) return st;
    int mode = 0;
    st = VRAM_CUDA_CALL(cudaDeviceGetAttribute, (&mode, cudaDevAttrComputeMode, device));
    if (st != VRAM_OK) return st;

    vram_device_info d;
    memset(&d, 0, sizeof d);
    size_t n = strnlen(p.name, sizeof p.name);
    if (n >= sizeof d.name) n = sizeof d.name - 1;
    memcpy(d.name, p.name, n);
    d.ordinal = device;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.total_bytes = (uint64_t)p.totalGlobalMem;
    d.multiprocessors = p.multiProcessorCount;
    d.copy_engines = p.asyncEngineCount;
    d.integrated = p.integrated != 0;
    d.compute_mode = (vram_compute_mode)mode;
    /* free memory needs the device's context; a GPU that refuses one (compute mode
     * prohibited, exclusive and busy) still has a name and attributes */
    uint64_t f = 0, t = 0;
    st = cuda_mem_info(NULL, device, &f, &t);
    if (st == VRAM_E_CUDA_STICKY || st == VRAM_E_FORKED) return st;
    if (st == VRAM_OK) {
        d.free_bytes = f;
        d.total_bytes = t;
    }
    const struct {
        int attr;
        vram_tristate *field;
    } attrs[] = {
        {VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &d.vmm},
        {VRAM_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED, &d.vmm_posix_fd},
        {VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED, &d.vmm_rdma},
        {VRAM_ATTR_MEMORY_POOLS_SUPPORTED, &d.memory_pools},
        {VRAM_ATTR_HOST_REGISTER_SUPPORTED, &d.host_register},
    };
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
        st = cuda_tristate(device, attrs[k].attr, attrs[k].field);
        if (st != VRAM_OK) return st;
    }
    int types = 0;
    st = cuda_attribute(NULL, device, VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES, &types);
    if (st == VRAM_E_CUDA_STICKY || st == VRAM_E_FORKED) return st;
    d.mempool_handle_types = st == VRAM_OK ? types : -1;
    *out = d;
    return VRAM_OK;
}

/* ---- memory ---------------------------------------------------------------------- */

static vram_status cuda_set_device(void *ctx, int device) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (device < 0) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaSetDevice, (device));
}

/* Is the device's primary context alive in this process? 1 yes, 0 no, -1 cannot tell (the
 * driver does not export the query, or it failed). Never creates the context. */
static int cuda_context_active(int device) {
    const vram__cuda_api *api = NULL;
    if (vram__cuda_driver_api(&api) != VRAM_OK || api->cuDeviceGet == NULL ||
        api->cuDevicePrimaryCtxGetState == NULL)
        return -1;
    CUdevice dev = 0;
    unsigned flags = 0;
    int active = 0;
    if (VRAM_CUDA_CALL(api->cuDeviceGet, (&dev, device)) != VRAM_OK) return -1;
    if (VRAM_CUDA_CALL(api->cuDevicePrimaryCtxGetState, (dev, &flags, &active)) != VRAM_OK) return -1;
    return active != 0;
}

/* cudaDeviceReset works on the current device, and since CUDA 12 selecting a device creates
 * its context: so a device without a context is left alone, and the calling thread's
 * previous device is selected again only when its context still lives. */
static vram_status cuda_release_device(void *ctx, int device) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (device < 0) return VRAM_E_INVALID;
    int n = 0;
    vram_status st = VRAM_CUDA_CALL(cudaGetDeviceCount, (&n));
    if (st != VRAM_OK) return st;
    if (device >= n) return VRAM_CUDA_CALL(cudaSetDevice, (device)); /* cudart's own error */
    if (cuda_context_active(device) == 0) return VRAM_OK;
    int prev = -1;
    st = VRAM_CUDA_CALL(cudaGetDevice, (&prev));
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaSetDevice, (device));
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaDeviceReset, ());
    if (st == VRAM_OK && prev >= 0 && prev != device && cuda_context_active(prev) == 1)
        st = VRAM_CUDA_CALL(cudaSetDevice, (prev));
    return st;
}

static vram_status cuda_dev_alloc(void *ctx, int device, uint64_t bytes, void **ptr) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (ptr == NULL || device < 0) return VRAM_E_INVALID;
    *ptr = NULL;
    if (bytes == 0) return VRAM_OK;
    if (bytes > (uint64_t)SIZE_MAX) return VRAM_E_OOM;
    int prev = -1;
    void *p = NULL;
    vram_status st = cuda_enter_device(device, &prev);
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaMalloc, (&p, (size_t)bytes));
    st = cuda_leave_device(device, prev, st);
    if (st == VRAM_OK) *ptr = p;
    return st;
}

static vram_status cuda_dev_free(void *ctx, int device, void *ptr) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (device < 0) return VRAM_E_INVALID;
    if (ptr == NULL) return VRAM_OK;
    int prev = -1;
    vram_status st = cuda_enter_device(device, &prev);
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaFree, (ptr));
    return cuda_leave_device(device, prev, st);
}

static vram_status cuda_host_alloc_pinned(void *ctx, uint64_t bytes, void **ptr) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (ptr == NULL) return VRAM_E_INVALID;
    *ptr = NULL;
    if (bytes == 0) return VRAM_OK;
    if (bytes > (uint64_t)SIZE_MAX) return VRAM_E_OOM;
    void *p = NULL;
    vram_status st = VRAM_CUDA_CALL(cudaHostAlloc, (&p, (size_t)bytes, cudaHostAllocPortable));
    if (st == VRAM_OK) *ptr = p;
    return st;
}

static vram_status cuda_host_free_pinned(void *ctx, void *ptr) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (ptr == NULL) return VRAM_OK;
    return VRAM_CUDA_CALL(cudaFreeHost, (ptr));
}

static vram_status cuda_host_register(void *ctx, void *ptr, uint64_t bytes) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (ptr == NULL || bytes == 0) return VRAM_E_INVALID;
    if (bytes > (uint64_t)SIZE_MAX) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaHostRegister, (ptr, (size_t)bytes, cudaHostRegisterPortable));
}

static vram_status cuda_host_unregister(void *ctx, void *ptr) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (ptr == NULL) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaHostUnregister, (ptr));
}

/* ---- streams, copies, events ----------------------------------------------------- */

static vram_status cuda_stream_create(void *ctx, int device, vram_stream *out) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (out == NULL || device < 0) return VRAM_E_INVALID;
    int prev = -1;
    cudaStream_t s = NULL;
    vram_status st = cuda_enter_device(device, &prev);
    /* non-blocking: not ordered with the legacy default stream, so work queued here never
     * waits for (nor holds up) kernels a caller runs on stream 0; events order everything */
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaStreamCreateWithFlags, (&s, cudaStreamNonBlocking));
    st = cuda_leave_device(device, prev, st);
    if (st == VRAM_OK) *out = (vram_stream)s;
    return st;
}

static vram_status cuda_stream_destroy(void *ctx, vram_stream s) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (s == NULL) return VRAM_E_INVALID; /* the default stream is not destroyed */
    return VRAM_CUDA_CALL(cudaStreamDestroy, ((cudaStream_t)s));
}

static vram_status cuda_stream_sync(void *ctx, vram_stream s) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    return VRAM_CUDA_CALL(cudaStreamSynchronize, ((cudaStream_t)s));
}

static vram_status cuda_memcpy_async(void *ctx, void *dst, const void *src, uint64_t bytes,
                                     vram_copy_kind kind, vram_stream s) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    enum cudaMemcpyKind k;
    switch (kind) {
    case VRAM_COPY_H2D: k = cudaMemcpyHostToDevice; break;
    case VRAM_COPY_D2H: k = cudaMemcpyDeviceToHost; break;
    case VRAM_COPY_D2D: k = cudaMemcpyDeviceToDevice; break;
    case VRAM_COPY_H2H: k = cudaMemcpyHostToHost; break;
    default: return VRAM_E_INVALID;
    }
    if (bytes == 0) return VRAM_OK;
    if (dst == NULL || src == NULL || bytes > (uint64_t)SIZE_MAX) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaMemcpyAsync, (dst, src, (size_t)bytes, k, (cudaStream_t)s));
}

static vram_status cuda_event_create(void *ctx, vram_event *out) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (out == NULL) return VRAM_E_INVALID;
    cudaEvent_t e = NULL;
    vram_status st = VRAM_CUDA_CALL(cudaEventCreateWithFlags, (&e, cudaEventDisableTiming));
    if (st == VRAM_OK) *out = (vram_event)e;
    return st;
}

static vram_status cuda_event_destroy(void *ctx, vram_event e) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (e == NULL) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaEventDestroy, ((cudaEvent_t)e));
}

static vram_status cuda_event_record(void *ctx, vram_event e, vram_stream s) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (e == NULL) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaEventRecord, ((cudaEvent_t)e, (cudaStream_t)s));
}

static vram_status cuda_event_query(void *ctx, vram_event e) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (e == NULL) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaEventQuery, ((cudaEvent_t)e)); /* 600 -> VRAM_E_NOT_READY */
}

static vram_status cuda_event_sync(void *ctx, vram_event e) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (e == NULL) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaEventSynchronize, ((cudaEvent_t)e));
}

static vram_status cuda_stream_wait_event(void *ctx, vram_stream s, vram_event e) {
    (void)ctx;
    VRAM_CUDA_ENTER();
    if (e == NULL) return VRAM_E_INVALID;
    return VRAM_CUDA_CALL(cudaStreamWaitEvent, ((cudaStream_t)s, (cudaEvent_t)e, 0));
}

static int cuda_last_error(void *ctx) {
    (void)ctx;
    return vram__cuda_last_error();
}

/* ---- the table ------------------------------------------------------------------- */

int vram_cuda_built(void) { return 1; }

uint64_t vram_cuda_live_contexts(void) {
    int n = 0;
    uint64_t live = 0;
    if (vram__cuda_enter() != VRAM_OK) return 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: no context */
        return 0;
    }
    for (int d = 0; d < n && d < 64; d++)
        if (cuda_context_active(d) != 0) live |= UINT64_C(1) << d; /* "cannot tell": kept */
    return live;
}

void vram_cuda_release_except(uint64_t keep) {
    int n = 0;
    if (vram__cuda_enter() != VRAM_OK) return;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: nothing was created */
        return;
    }
    for (int d = 0; d < n; d++)
        if (d < 64 && !(keep >> d & 1u)) (void)cuda_release_device(NULL, d);
}

void vram_cuda_release(void) { vram_cuda_release_except(0); }

static int cuda_backend_state; /* ctx: its address; the state itself is process-wide */

vram_status vram_cuda_ops(vram_device_ops *ops) {
    if (ops == NULL) return VRAM_E_INVALID;
    vram_device_ops t;
    memset(&t, 0, sizeof t);
    t.api_version = VRAM_DEVICE_API_VERSION;
    t.size = (uint32_t)sizeof(vram_device_ops);
    t.backend = "cuda";
    t.ctx = &cuda_backend_state;
    VRAM_DEVICE_OPS_FILL(t, cuda)
    *ops = t;
    return VRAM_OK;
}
