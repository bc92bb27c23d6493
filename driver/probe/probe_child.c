/* driver/probe/probe_child.c — the probes themselves, run inside the probe child
 * (`vramkit __probe KIND DEVICE`, driver/probe/probe.c). Each does the real thing once through the
 * CUDA table or, for what the table has no slot for (VMM, pools, kernels), through the same
 * checking macro; every step is undone, and a failure names the call and its error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/cudaerr.h>
#include <vramkit/device.h>

#include "util/text.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_internal.h"
#include "probe.h"
#include "probe_kernel.h"

#define MiB (1024ull * 1024ull)
#define PINNED_BYTES (64 * MiB)
#define POOL_BYTES (16 * MiB)
#define KERNEL_N 4096
#define ALLOC_ALIGN (2 * MiB)


static int pc_is_cuda_status(vram_status st) {
    return st == VRAM_E_OOM || st == VRAM_E_NOT_SUPPORTED || st == VRAM_E_CUDA ||
           st == VRAM_E_CUDA_STICKY || st == VRAM_E_NO_DRIVER || st == VRAM_E_NO_DEVICE;
}

/* A failed step: the status, the raw error and "what: call: NAME (code)". */
static void pc_fail(vram_probe_result *out, int ran, vram_status st, const char *what) {
    out->ran = ran;
    out->status = st;
    if (pc_is_cuda_status(st) && vram__cuda_last_error() != 0) {
        int code = vram__cuda_last_error();
        const char *call = vram__cuda_last_call();
        out->cuda_error = code;
        vram__probe_detail(out, "%s: %s: %s (%d, %s)", what, call, vram__cuda_error_text(code, call), code,
                           vram_cuda_class_name(vram_cuda_error_class(code)));
    } else {
        out->cuda_error = 0;
        vram__probe_detail(out, "%s: %s", what, vram_status_str(st));
    }
}

static void pc_ok(vram_probe_result *out) {
    out->ran = 1;
    out->status = VRAM_OK;
    out->cuda_error = 0;
}

/* The probe ran, no call failed, and the device's answer was wrong: the caller says how. */
static void pc_wrong(vram_probe_result *out) {
    out->ran = 1;
    out->status = VRAM_E_CUDA;
}

/* Opens the device: a driver, the device exists, it can be made current. Returns 1 when the
 * probe can go on; else *out says why (ran 0 for no driver / no such device). */
static int pc_open(vram_device_ops *ops, int device, vram_probe_result *out) {
    vram_status st = vram_cuda_ops(ops);
    if (st != VRAM_OK) {
        pc_fail(out, 0, st, "CUDA backend");
        return 0;
    }
    int n = 0;
    st = ops->device_count(ops->ctx, &n);
    if (st == VRAM_E_NO_DRIVER) {
        pc_fail(out, 0, st, "no NVIDIA driver found");
        return 0;
    }
    if (st != VRAM_OK) {
        pc_fail(out, 0, st, "cannot count CUDA devices");
        return 0;
    }
    if (device >= n) {
        out->ran = 0;
        out->status = VRAM_E_NO_DEVICE;
        vram__probe_detail(out, "device %d does not exist (%d CUDA device%s visible)", device, n, n == 1 ? "" : "s");
        return 0;
    }
    st = ops->set_device(ops->ctx, device);
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "cannot use the device");
        return 0;
    }
    return 1;
}

static const char *pc_size(uint64_t bytes, char *buf, size_t cap) { return vram_fmt_size(bytes, buf, cap); }

/* ---- vmm --------------------------------------------------------------------------- */

static void probe_vmm(int device, vram_probe_result *out) {
    const vram__cuda_api *api = NULL;
    vram_status st = vram__cuda_driver_api(&api);
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "driver API");
        return;
    }
    const struct {
        int have;
        const char *name;
    } need[] = {
        {api->cuDeviceGet != NULL, "cuDeviceGet"},
        {api->cuMemGetAllocationGranularity != NULL, "cuMemGetAllocationGranularity"},
        {api->cuMemAddressReserve != NULL, "cuMemAddressReserve"},
        {api->cuMemCreate != NULL, "cuMemCreate"},
        {api->cuMemMap != NULL, "cuMemMap"},
        {api->cuMemSetAccess != NULL, "cuMemSetAccess"},
        {api->cuMemUnmap != NULL, "cuMemUnmap"},
        {api->cuMemRelease != NULL, "cuMemRelease"},
        {api->cuMemAddressFree != NULL, "cuMemAddressFree"},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (!need[i].have) {
            out->ran = 1;
            out->status = VRAM_E_NOT_SUPPORTED;
            vram__probe_detail(out, "the driver does not export %s (cudaGetDriverEntryPointByVersion)", need[i].name);
            return;
        }
    }
    CUdevice dev = 0;
    st = VRAM_CUDA_CALL(api->cuDeviceGet, (&dev, device));
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "vmm");
        return;
    }
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0;
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle h = 0;
    int reserved = 0, created = 0, mapped = 0;

    st = VRAM_CUDA_CALL(api->cuMemGetAllocationGranularity, (&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    if (st == VRAM_OK && gran == 0) st = VRAM_E_NOT_SUPPORTED;
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(api->cuMemAddressReserve, (&va, gran, 0, 0, 0));
    reserved = st == VRAM_OK;
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(api->cuMemCreate, (&h, gran, &prop, 0));
    created = reserved && st == VRAM_OK;
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(api->cuMemMap, (va, gran, 0, h, 0));
    mapped = created && st == VRAM_OK;
    if (st == VRAM_OK) {
        CUmemAccessDesc acc;
        memset(&acc, 0, sizeof acc);
        acc.location = prop.location;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        st = VRAM_CUDA_CALL(api->cuMemSetAccess, (va, gran, &acc, 1));
    }
    /* access is the claim that matters (a WSL2 driver accepted the mapping, then failed
     * here): write the granule and read some of it back */
    int touched_ok = 1;
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaMemset, ((void *)(uintptr_t)va, 0x5a, gran));
    if (st == VRAM_OK) {
        unsigned char back[256];
        size_t n = gran < sizeof back ? gran : sizeof back;
        st = VRAM_CUDA_CALL(cudaMemcpy, (back, (const void *)(uintptr_t)(va + gran - n), n,
                                         cudaMemcpyDeviceToHost));
        for (size_t i = 0; st == VRAM_OK && i < n; i++)
            if (back[i] != 0x5a) touched_ok = 0;
    }
    vram_status failed = st;
    char what[64];
    snprintf(what, sizeof what, "vmm granule");
    /* undo whatever was done, even after a failure */
    if (failed != VRAM_E_CUDA_STICKY) {
        vram_status u = VRAM_OK;
        if (mapped) u = VRAM_CUDA_CALL(api->cuMemUnmap, (va, gran));
        if (created) {
            vram_status r = VRAM_CUDA_CALL(api->cuMemRelease, (h));
            if (u == VRAM_OK) u = r;
        }
        if (reserved) {
            vram_status r = VRAM_CUDA_CALL(api->cuMemAddressFree, (va, gran));
            if (u == VRAM_OK) u = r;
        }
        if (failed == VRAM_OK && u != VRAM_OK) {
            failed = u;
            snprintf(what, sizeof what, "vmm undo");
        }
    }
    if (failed != VRAM_OK) {
        pc_fail(out, 1, failed, what);
        return;
    }
    if (!touched_ok) {
        pc_wrong(out);
        vram__probe_detail(out, "vmm granule: mapped memory did not read back what was written");
        return;
    }
    char sz[32];
    pc_ok(out);
    vram__probe_detail(out, "reserved, created, mapped, wrote and read one %s granule, then released it",
                       pc_size(gran, sz, sizeof sz));
}

/* ---- pinned ------------------------------------------------------------------------ */

static void probe_pinned(vram_device_ops *ops, vram_probe_result *out) {
    unsigned char *p = NULL;
    vram_status st = ops->host_alloc_pinned(ops->ctx, PINNED_BYTES, (void **)&p);
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "pinned 64 MiB");
        return;
    }
    for (uint64_t i = 0; i < PINNED_BYTES; i += 4096) p[i] = (unsigned char)(i >> 12);
    int ok = 1;
    for (uint64_t i = 0; i < PINNED_BYTES; i += 4096)
        if (p[i] != (unsigned char)(i >> 12)) ok = 0;
    st = ops->host_free_pinned(ops->ctx, p);
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "pinned free");
        return;
    }
    if (!ok) {
        pc_wrong(out);
        vram__probe_detail(out, "pinned 64 MiB: pages did not read back what was written");
        return;
    }
    pc_ok(out);
    vram__probe_detail(out, "allocated, touched and freed 64 MiB of pinned host memory (cudaHostAlloc)");
}

/* ---- pool -------------------------------------------------------------------------- */

static void probe_pool(vram_device_ops *ops, int device, vram_probe_result *out) {
    cudaMemPool_t pool = NULL;
    vram_status st = VRAM_CUDA_CALL(cudaDeviceGetDefaultMemPool, (&pool, device));
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "pool");
        return;
    }
    vram_stream s = NULL;
    st = ops->stream_create(ops->ctx, device, &s);
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "pool stream");
        return;
    }
    void *p = NULL;
    st = VRAM_CUDA_CALL(cudaMallocAsync, (&p, (size_t)POOL_BYTES, (cudaStream_t)s));
    if (st == VRAM_OK) {
        vram_status m = VRAM_CUDA_CALL(cudaMemsetAsync, (p, 0x3c, (size_t)POOL_BYTES, (cudaStream_t)s));
        vram_status f = VRAM_CUDA_CALL(cudaFreeAsync, (p, (cudaStream_t)s));
        st = m != VRAM_OK ? m : f;
    }
    if (st == VRAM_OK) st = ops->stream_sync(ops->ctx, s);
    vram_status d = st == VRAM_E_CUDA_STICKY ? st : ops->stream_destroy(ops->ctx, s);
    if (st == VRAM_OK) st = d;
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "pool 16 MiB");
        return;
    }
    pc_ok(out);
    vram__probe_detail(out, "allocated, wrote and freed 16 MiB from the default memory pool (cudaMallocAsync)");
}

/* ---- kernel ------------------------------------------------------------------------ */

static void probe_kernel(vram_device_ops *ops, int device, vram_probe_result *out) {
    int bin = 0, ptx = 0, code = 0, major = 0, minor = 0;
    (void)vram_k_probe_image(&bin, &ptx, &code);
    vram_status st = vram__cuda_check(code, "cudaFuncGetAttributes");
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "kernel image");
        return;
    }
    st = VRAM_CUDA_CALL(cudaDeviceGetAttribute, (&major, cudaDevAttrComputeCapabilityMajor, device));
    if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaDeviceGetAttribute, (&minor, cudaDevAttrComputeCapabilityMinor, device));
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "compute capability");
        return;
    }
    int *d = NULL;
    vram_stream s = NULL;
    int *host = (int *)malloc(KERNEL_N * sizeof(int));
    if (host == NULL) {
        out->ran = 1;
        out->status = VRAM_E_OOM;
        vram__probe_detail(out, "kernel: out of host memory");
        return;
    }
    memset(host, 0, KERNEL_N * sizeof(int));
    const char *what = "kernel buffer";
    st = ops->dev_alloc(ops->ctx, device, KERNEL_N * sizeof(int), (void **)&d);
    if (st == VRAM_OK) {
        what = "kernel stream";
        st = ops->stream_create(ops->ctx, device, &s);
    }
    if (st == VRAM_OK) {
        what = "kernel launch";
        (void)vram_k_probe_fill(d, KERNEL_N, s, &code);
        st = vram__cuda_check(code, "cudaLaunchKernel");
    }
    if (st == VRAM_OK) {
        what = "kernel result copy";
        st = ops->memcpy_async(ops->ctx, host, d, KERNEL_N * sizeof(int), VRAM_COPY_D2H, s);
    }
    if (st == VRAM_OK) {
        what = "kernel run";
        st = ops->stream_sync(ops->ctx, s);
    }
    int wrong = -1;
    for (int i = 0; st == VRAM_OK && i < KERNEL_N && wrong < 0; i++)
        if (host[i] != vram_k_probe_value(i)) wrong = i;
    if (st != VRAM_E_CUDA_STICKY) {
        if (s != NULL) (void)ops->stream_destroy(ops->ctx, s);
        if (d != NULL) (void)ops->dev_free(ops->ctx, device, d);
    }
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, what);
    } else if (wrong >= 0) {
        pc_wrong(out);
        vram__probe_detail(out, "kernel ran but element %d is %d, not %d", wrong, host[wrong], vram_k_probe_value(wrong));
    } else {
        pc_ok(out);
        vram__probe_detail(out, "launched a kernel (image sm_%d, PTX %d) on compute capability %d.%d and checked its %d outputs",
                           bin, ptx, major, minor, KERNEL_N);
    }
    free(host);
}

/* ---- alloc90 ----------------------------------------------------------------------- */

static void probe_alloc90(vram_device_ops *ops, int device, vram_probe_result *out) {
    uint64_t f = 0, t = 0;
    vram_status st = ops->mem_info(ops->ctx, device, &f, &t);
    if (st != VRAM_OK) {
        pc_fail(out, 1, st, "free memory");
        return;
    }
    uint64_t bytes = f / 10 * 9 / ALLOC_ALIGN * ALLOC_ALIGN;
    char a[32], b[32], c[32];
    pc_size(bytes, a, sizeof a);
    pc_size(f, b, sizeof b);
    pc_size(t, c, sizeof c);
    if (bytes == 0) {
        out->ran = 1;
        out->status = VRAM_E_OOM;
        vram__probe_detail(out, "alloc90: only %s of %s free, nothing to allocate", b, c);
        return;
    }
    void *p = NULL;
    st = ops->dev_alloc(ops->ctx, device, bytes, &p);
    if (st == VRAM_OK) {
        st = VRAM_CUDA_CALL(cudaMemset, (p, 0, (size_t)bytes));
        if (st == VRAM_OK) st = VRAM_CUDA_CALL(cudaDeviceSynchronize, ());
        vram_status fr = st == VRAM_E_CUDA_STICKY ? st : ops->dev_free(ops->ctx, device, p);
        if (st == VRAM_OK) st = fr;
    }
    if (st != VRAM_OK) {
        char what[96];
        snprintf(what, sizeof what, "alloc90 %s (90%% of %s free)", a, b);
        pc_fail(out, 1, st, what);
        return;
    }
    pc_ok(out);
    vram__probe_detail(out, "allocated, touched and freed %s (90%% of %s free of %s)", a, b, c);
}

/* ---- entry points ------------------------------------------------------------------ */

void vram__probe_execute(vram_probe_kind kind, int device, vram_probe_result *out) {
    vram_device_ops ops;
    if (!pc_open(&ops, device, out)) return;
    switch (kind) {
    case VRAM_PROBE_VMM: probe_vmm(device, out); return;
    case VRAM_PROBE_PINNED: probe_pinned(&ops, out); return;
    case VRAM_PROBE_POOL: probe_pool(&ops, device, out); return;
    case VRAM_PROBE_KERNEL: probe_kernel(&ops, device, out); return;
    case VRAM_PROBE_ALLOC90: probe_alloc90(&ops, device, out); return;
    case VRAM_PROBE_COUNT: break;
    }
    out->ran = 0;
    out->status = VRAM_E_INVALID;
    vram__probe_detail(out, "unknown probe kind %d", (int)kind);
}

void vram__probe_trap(int device, vram_probe_result *out) {
    vram_device_ops ops;
    if (!pc_open(&ops, device, out)) return;
    vram_stream s = NULL;
    vram_status st = ops.stream_create(ops.ctx, device, &s);
    int code = 0;
    if (st == VRAM_OK) {
        (void)vram_k_probe_trap(s, &code);
        st = vram__cuda_check(code, "cudaLaunchKernel");
    }
    if (st == VRAM_OK) st = ops.stream_sync(ops.ctx, s);
    if (st != VRAM_E_CUDA_STICKY) {
        pc_fail(out, 1, st == VRAM_OK ? VRAM_E_STATE : st, "trap kernel did not leave a sticky error");
        return;
    }
    int sticky_code = ops.last_error(ops.ctx);
    const char *call = vram__cuda_last_call();
    /* the backend must now refuse everything, without asking CUDA */
    void *p = NULL;
    vram_status later = ops.dev_alloc(ops.ctx, device, 1 * MiB, &p);
    int later_code = ops.last_error(ops.ctx);
    out->ran = 1;
    out->cuda_error = sticky_code;
    if (later != VRAM_E_CUDA_STICKY || later_code != sticky_code) {
        out->status = VRAM_E_STATE;
        vram__probe_detail(out, "trap kernel: %s gave %s (%d), but a later dev_alloc returned %s (last error %d)", call,
                           vram__cuda_error_text(sticky_code, call), sticky_code, vram_status_name(later), later_code);
        return;
    }
    out->status = VRAM_E_CUDA_STICKY;
    vram__probe_detail(out, "trap kernel: %s gave %s (%d, %s); a later dev_alloc was refused with %s", call,
                       vram__cuda_error_text(sticky_code, call), sticky_code,
                       vram_cuda_class_name(vram_cuda_error_class(sticky_code)), vram_status_name(later));
}
