/* driver/nvml/nvml.c — the NVML backend of the gpumem seam (see nvml.h), loaded with dlopen.
 * The few NVML types and functions used are declared here from NVML's public reference
 * (docs.nvidia.com/deploy/nvml-api): no NVML header is needed to build. Where a newer entry
 * point is missing (an older driver), the older one of the same meaning is used. */
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/device_slots.h"

/* ---- what vramkit uses of NVML's API ------------------------------------------------------- */

typedef int nv_return;      /* nvmlReturn_t */
typedef void *nv_device;    /* nvmlDevice_t: an opaque pointer */
enum {
    NV_SUCCESS = 0,
    NV_ERROR_NOT_SUPPORTED = 3,
    NV_ERROR_NO_PERMISSION = 4,
    NV_ERROR_INSUFFICIENT_SIZE = 7,
    NV_ERROR_DRIVER_NOT_LOADED = 9,
    NV_ERROR_LIB_RM_VERSION_MISMATCH = 18
};
typedef struct nv_memory {   /* nvmlMemory_t (v1) */
    unsigned long long total, free, used;
} nv_memory;
typedef struct nv_proc_v1 {  /* nvmlProcessInfo_v1_t */
    unsigned int pid;
    unsigned long long used;
} nv_proc_v1;
typedef struct nv_proc {     /* nvmlProcessInfo_t (v2 layout, also what the _v3 calls fill) */
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance, compute_instance;
} nv_proc;
#define NV_VALUE_NOT_AVAILABLE (~0ULL)
#define NV_NAME_MAX 96

typedef nv_return (*fn_init)(void);
typedef nv_return (*fn_shutdown)(void);
typedef const char *(*fn_error_string)(nv_return);
typedef nv_return (*fn_text)(char *, unsigned int);
typedef nv_return (*fn_count)(unsigned int *);
typedef nv_return (*fn_handle)(unsigned int, nv_device *);
typedef nv_return (*fn_name)(nv_device, char *, unsigned int);
typedef nv_return (*fn_memory)(nv_device, nv_memory *);
typedef nv_return (*fn_procs)(nv_device, unsigned int *, void *);
typedef nv_return (*fn_cc)(nv_device, int *, int *);
typedef nv_return (*fn_mig)(nv_device, unsigned int *, unsigned int *);

typedef struct nvml_state {
    const char *library; /* NULL: from the environment */
    void *dl;
    int opened;
    fn_init init;
    fn_shutdown shutdown;
    fn_error_string error_string;
    fn_text driver_version;
    fn_count count;
    fn_handle handle;
    fn_name name;
    fn_memory memory;
    fn_procs compute, graphics; /* NULL: that list is not available */
    int procs_v1;               /* the lists are the old nvmlProcessInfo_v1_t layout */
    fn_cc cc;                   /* NULL: an NVML without nvmlDeviceGetCudaComputeCapability */
    fn_mig mig;                 /* NULL: an NVML from before MIG */
    char err[512];
} nvml_state;

static nvml_state nvml_static;

static const char *nv_text(nvml_state *s, nv_return r) {
    const char *t = s->error_string ? s->error_string(r) : NULL;
    return t ? t : "unknown NVML error";
}

static vram_status nv_status(nv_return r) {
    switch (r) {
    case NV_SUCCESS: return VRAM_OK;
    case NV_ERROR_NOT_SUPPORTED: return VRAM_E_NOT_SUPPORTED;
    case NV_ERROR_DRIVER_NOT_LOADED: return VRAM_E_NO_DRIVER;
    case NV_ERROR_LIB_RM_VERSION_MISMATCH: return VRAM_E_VERSION;
    default: return VRAM_E_CUDA;
    }
}

/* The first of the names the library has. */
static void *sym_first(void *dl, const char *const *names, const char **found) {
    for (; *names; names++) {
        void *p = dlsym(dl, *names);
        if (p) {
            if (found) *found = *names;
            return p;
        }
    }
    return NULL;
}

/* A symbol as a function pointer: POSIX guarantees the two have one representation; ISO C
 * has no cast between them, so the bytes are copied. */
#define LOAD(dst, expr)                                                  \
    do {                                                                 \
        void *sym_ = (expr);                                             \
        _Static_assert(sizeof(dst) == sizeof sym_, "function pointers"); \
        memcpy(&(dst), &sym_, sizeof sym_);                              \
    } while (0)

static void nvml_close(void *ctx) {
    nvml_state *s = ctx;
    if (s->opened && s->shutdown) s->shutdown();
    if (s->dl) dlclose(s->dl);
    const char *lib = s->library;
    memset(s, 0, sizeof *s);
    s->library = lib;
}

static vram_status nvml_open(void *ctx) {
    nvml_state *s = ctx;
    const char *lib = s->library;
    if (s->opened) return VRAM_OK;
    if (lib == NULL) lib = getenv(VRAM_NVML_LIBRARY_ENV);
    if (lib == NULL) lib = VRAM_NVML_LIBRARY;
    if (lib[0] == '\0') {
        snprintf(s->err, sizeof s->err, "NVML is ruled out (" VRAM_NVML_LIBRARY_ENV " is empty)");
        return VRAM_E_NOT_SUPPORTED;
    }
    s->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (s->dl == NULL) {
        const char *e = dlerror();
        snprintf(s->err, sizeof s->err, "cannot load %s: %s", lib, e ? e : "not found");
        return VRAM_E_NOT_SUPPORTED;
    }
    static const char *const n_init[] = {"nvmlInit_v2", "nvmlInit", NULL};
    static const char *const n_count[] = {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL};
    static const char *const n_handle[] = {"nvmlDeviceGetHandleByIndex_v2",
                                           "nvmlDeviceGetHandleByIndex", NULL};
    static const char *const n_compute[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                            "nvmlDeviceGetComputeRunningProcesses_v2", NULL};
    static const char *const n_graphics[] = {"nvmlDeviceGetGraphicsRunningProcesses_v3",
                                             "nvmlDeviceGetGraphicsRunningProcesses_v2", NULL};
    LOAD(s->init, sym_first(s->dl, n_init, NULL));
    LOAD(s->shutdown, dlsym(s->dl, "nvmlShutdown"));
    LOAD(s->error_string, dlsym(s->dl, "nvmlErrorString"));
    LOAD(s->driver_version, dlsym(s->dl, "nvmlSystemGetDriverVersion"));
    LOAD(s->count, sym_first(s->dl, n_count, NULL));
    LOAD(s->handle, sym_first(s->dl, n_handle, NULL));
    LOAD(s->name, dlsym(s->dl, "nvmlDeviceGetName"));
    LOAD(s->memory, dlsym(s->dl, "nvmlDeviceGetMemoryInfo"));
    LOAD(s->compute, sym_first(s->dl, n_compute, NULL));
    LOAD(s->graphics, sym_first(s->dl, n_graphics, NULL));
    LOAD(s->cc, dlsym(s->dl, "nvmlDeviceGetCudaComputeCapability"));
    LOAD(s->mig, dlsym(s->dl, "nvmlDeviceGetMigMode"));
    if (s->compute == NULL) { /* a driver before the v2 lists: the first layout */
        LOAD(s->compute, dlsym(s->dl, "nvmlDeviceGetComputeRunningProcesses"));
        LOAD(s->graphics, dlsym(s->dl, "nvmlDeviceGetGraphicsRunningProcesses"));
        s->procs_v1 = 1;
    }
    const char *missing = !s->init ? "nvmlInit_v2" : !s->shutdown ? "nvmlShutdown"
                        : !s->count ? "nvmlDeviceGetCount_v2" : !s->handle ? "nvmlDeviceGetHandleByIndex_v2"
                        : !s->name ? "nvmlDeviceGetName" : !s->memory ? "nvmlDeviceGetMemoryInfo"
                        : NULL;
    if (missing) {
        snprintf(s->err, sizeof s->err, "%s lacks %s: a version of NVML vramkit cannot use", lib,
                 missing);
        dlclose(s->dl);
        s->dl = NULL;
        return VRAM_E_VERSION;
    }
    nv_return r = s->init();
    if (r != NV_SUCCESS) {
        if (r == NV_ERROR_LIB_RM_VERSION_MISMATCH)
            snprintf(s->err, sizeof s->err, "NVML cannot start: %s (the NVIDIA library and "
                     "kernel driver differ, as after a driver upgrade without a reboot)",
                     nv_text(s, r));
        else
            snprintf(s->err, sizeof s->err, "NVML cannot start: %s", nv_text(s, r));
        vram_status st = nv_status(r);
        dlclose(s->dl);
        s->dl = NULL;
        return st;
    }
    s->opened = 1;
    return VRAM_OK;
}

static vram_status not_open(nvml_state *s) {
    snprintf(s->err, sizeof s->err, "NVML is not open");
    return VRAM_E_STATE;
}

static vram_status nvml_driver_version(void *ctx, char *buf, size_t cap) {
    nvml_state *s = ctx;
    char v[96];
    if (!s->opened) return not_open(s);
    if (!s->driver_version) return VRAM_E_NOT_SUPPORTED;
    nv_return r = s->driver_version(v, (unsigned)sizeof v);
    if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlSystemGetDriverVersion: %s", nv_text(s, r));
        return nv_status(r);
    }
    v[sizeof v - 1] = '\0';
    snprintf(buf, cap, "%s", v);
    return VRAM_OK;
}

static vram_status nvml_device_count(void *ctx, int *count) {
    nvml_state *s = ctx;
    unsigned int n = 0;
    if (!s->opened) return not_open(s);
    nv_return r = s->count(&n);
    if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlDeviceGetCount: %s", nv_text(s, r));
        return nv_status(r);
    }
    *count = n > VRAM_MAX_DEVICES ? VRAM_MAX_DEVICES : (int)n;
    return VRAM_OK;
}

static vram_status get_handle(nvml_state *s, int device, nv_device *h) {
    if (!s->opened) return not_open(s);
    if (device < 0) return VRAM_E_RANGE;
    nv_return r = s->handle((unsigned)device, h);
    if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlDeviceGetHandleByIndex(%d): %s", device, nv_text(s, r));
        return nv_status(r) == VRAM_E_CUDA ? VRAM_E_RANGE : nv_status(r);
    }
    return VRAM_OK;
}

static vram_status nvml_device_name(void *ctx, int device, char *buf, size_t cap) {
    nvml_state *s = ctx;
    nv_device h;
    char name[NV_NAME_MAX];
    vram_status st = get_handle(s, device, &h);
    if (st != VRAM_OK) return st;
    nv_return r = s->name(h, name, (unsigned)sizeof name);
    if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlDeviceGetName(%d): %s", device, nv_text(s, r));
        return nv_status(r);
    }
    name[sizeof name - 1] = '\0';
    snprintf(buf, cap, "%s", name);
    return VRAM_OK;
}

static vram_status nvml_memory(void *ctx, int device, uint64_t *total, uint64_t *free_bytes,
                               uint64_t *used) {
    nvml_state *s = ctx;
    nv_device h;
    nv_memory m;
    vram_status st = get_handle(s, device, &h);
    if (st != VRAM_OK) return st;
    nv_return r = s->memory(h, &m);
    if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlDeviceGetMemoryInfo(%d): %s", device, nv_text(s, r));
        return nv_status(r);
    }
    if (m.free > m.total) {
        snprintf(s->err, sizeof s->err, "nvmlDeviceGetMemoryInfo(%d): free %llu above total %llu",
                 device, m.free, m.total);
        return VRAM_E_FORMAT;
    }
    *total = m.total;
    *free_bytes = m.free;
    *used = m.used;
    return VRAM_OK;
}

/* One of NVML's process lists into out[*n ...], skipping pids already there. */
static vram_status one_list(nvml_state *s, fn_procs f, nv_device h, int graphics,
                            vram_gpumem_proc *out, int cap, int *n) {
    nv_proc buf[VRAM_GPUMEM_MAX_PROCS];
    unsigned int count = VRAM_GPUMEM_MAX_PROCS;
    nv_return r;
    if (f == NULL) return VRAM_OK;
    if (s->procs_v1) {
        nv_proc_v1 old[VRAM_GPUMEM_MAX_PROCS];
        r = f(h, &count, old);
        if (r == NV_SUCCESS || r == NV_ERROR_INSUFFICIENT_SIZE)
            for (unsigned i = 0; i < count && i < VRAM_GPUMEM_MAX_PROCS; i++) {
                buf[i].pid = old[i].pid;
                buf[i].used = old[i].used;
            }
    } else {
        r = f(h, &count, buf);
    }
    if (r == NV_ERROR_INSUFFICIENT_SIZE) count = VRAM_GPUMEM_MAX_PROCS; /* keep what fits */
    else if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlDevice%sRunningProcesses: %s",
                 graphics ? "GetGraphics" : "GetCompute", nv_text(s, r));
        return nv_status(r);
    }
    if (count > VRAM_GPUMEM_MAX_PROCS) count = VRAM_GPUMEM_MAX_PROCS;
    for (unsigned i = 0; i < count && *n < cap; i++) {
        int dup = 0;
        for (int k = 0; k < *n && !dup; k++) dup = out[k].pid == buf[i].pid;
        if (dup) continue;
        out[*n].pid = buf[i].pid;
        out[*n].used_bytes = buf[i].used == NV_VALUE_NOT_AVAILABLE ? VRAM_GPUMEM_UNKNOWN : buf[i].used;
        out[*n].graphics = graphics;
        (*n)++;
    }
    return VRAM_OK;
}

static vram_status nvml_processes(void *ctx, int device, vram_gpumem_proc *out, int cap, int *n) {
    nvml_state *s = ctx;
    nv_device h;
    vram_status st = get_handle(s, device, &h);
    *n = 0;
    if (st != VRAM_OK) return st;
    if (s->compute == NULL && s->graphics == NULL) {
        snprintf(s->err, sizeof s->err, "this NVML has no process lists");
        return VRAM_E_NOT_SUPPORTED;
    }
    if ((st = one_list(s, s->compute, h, 0, out, cap, n)) != VRAM_OK) return st;
    return one_list(s, s->graphics, h, 1, out, cap, n);
}

static vram_status nvml_compute_capability(void *ctx, int device, int *major, int *minor) {
    nvml_state *s = ctx;
    nv_device h;
    vram_status st = get_handle(s, device, &h);
    *major = *minor = 0;
    if (st != VRAM_OK) return st;
    if (s->cc == NULL) {
        snprintf(s->err, sizeof s->err, "this NVML has no nvmlDeviceGetCudaComputeCapability");
        return VRAM_E_NOT_SUPPORTED;
    }
    nv_return r = s->cc(h, major, minor);
    if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlDeviceGetCudaComputeCapability(%d): %s", device,
                 nv_text(s, r));
        *major = *minor = 0;
        return nv_status(r);
    }
    return VRAM_OK;
}

static vram_status nvml_mig_mode(void *ctx, int device, int *on) {
    nvml_state *s = ctx;
    nv_device h;
    unsigned int current = 0, pending = 0;
    vram_status st = get_handle(s, device, &h);
    *on = 0;
    if (st != VRAM_OK) return st;
    if (s->mig == NULL) return VRAM_OK; /* an NVML from before MIG: a GPU without it */
    nv_return r = s->mig(h, &current, &pending);
    if (r == NV_ERROR_NOT_SUPPORTED) return VRAM_OK; /* a GPU without MIG */
    if (r != NV_SUCCESS) {
        snprintf(s->err, sizeof s->err, "nvmlDeviceGetMigMode(%d): %s", device, nv_text(s, r));
        return nv_status(r);
    }
    *on = current != 0;
    return VRAM_OK;
}

static const char *nvml_error(void *ctx) { return ((nvml_state *)ctx)->err; }

vram_gpumem_ops vram_nvml_ops(const char *library) {
    vram_gpumem_ops m;
    memset(&m, 0, sizeof m);
    if (!nvml_static.opened) nvml_static.library = library;
    m.api_version = VRAM_GPUMEM_API_VERSION;
    m.size = (uint32_t)sizeof m;
    m.source = "nvml";
    m.ctx = &nvml_static;
    m.open = nvml_open;
    m.close = nvml_close;
    m.driver_version = nvml_driver_version;
    m.device_count = nvml_device_count;
    m.device_name = nvml_device_name;
    m.memory = nvml_memory;
    m.processes = nvml_processes;
    m.error = nvml_error;
    m.compute_capability = nvml_compute_capability;
    m.mig_mode = nvml_mig_mode;
    return m;
}

vram_status vram_gpumem_ops_check(const vram_gpumem_ops *m) {
    if (m == NULL) return VRAM_E_INVALID;
    if (m->api_version != VRAM_GPUMEM_API_VERSION || m->size != sizeof *m) return VRAM_E_VERSION;
    if (!m->open || !m->close || !m->driver_version || !m->device_count || !m->device_name ||
        !m->memory || !m->processes || !m->error || !m->compute_capability || !m->mig_mode)
        return VRAM_E_INVALID;
    return VRAM_OK;
}

/* ---- a device ops table over the seam ------------------------------------------------------- */

static vram_status ad_none(void) { return VRAM_E_NOT_SUPPORTED; }
#define AD(ctx) ((const vram_gpumem_ops *)(ctx))

static vram_status ad_driver_version(void *ctx, int *v) { (void)ctx; *v = 0; return ad_none(); }
static vram_status ad_runtime_version(void *ctx, int *v) { (void)ctx; *v = 0; return ad_none(); }
static vram_status ad_device_count(void *ctx, int *n) { return AD(ctx)->device_count(AD(ctx)->ctx, n); }
static vram_status ad_mem_info(void *ctx, int d, uint64_t *f, uint64_t *t) {
    uint64_t used;
    return AD(ctx)->memory(AD(ctx)->ctx, d, t, f, &used);
}
static vram_status ad_device_info(void *ctx, int d, vram_device_info *out) {
    vram_status st;
    memset(out, 0, sizeof *out);
    out->ordinal = d;
    out->vmm = out->vmm_posix_fd = out->vmm_rdma = out->memory_pools = out->host_register = VRAM_UNKNOWN;
    out->mempool_handle_types = -1;
    if ((st = AD(ctx)->device_name(AD(ctx)->ctx, d, out->name, sizeof out->name)) != VRAM_OK) return st;
    /* the compute capability where NVML says it (0.0: not known) */
    if (AD(ctx)->compute_capability(AD(ctx)->ctx, d, &out->cc_major, &out->cc_minor) != VRAM_OK)
        out->cc_major = out->cc_minor = 0;
    return ad_mem_info(ctx, d, &out->free_bytes, &out->total_bytes);
}
static vram_status ad_attribute(void *c, int d, int a, int *v) { (void)c; (void)d; (void)a; *v = 0; return ad_none(); }
static vram_status ad_set_device(void *c, int d) { (void)c; (void)d; return ad_none(); }
static vram_status ad_dev_alloc(void *c, int d, uint64_t b, void **p) { (void)c; (void)d; (void)b; *p = NULL; return ad_none(); }
static vram_status ad_dev_free(void *c, int d, void *p) { (void)c; (void)d; (void)p; return ad_none(); }
static vram_status ad_host_alloc_pinned(void *c, uint64_t b, void **p) { (void)c; (void)b; *p = NULL; return ad_none(); }
static vram_status ad_host_free_pinned(void *c, void *p) { (void)c; (void)p; return ad_none(); }
static vram_status ad_host_register(void *c, void *p, uint64_t b) { (void)c; (void)p; (void)b; return ad_none(); }
static vram_status ad_stream_create(void *c, int d, vram_stream *s) { (void)c; (void)d; *s = NULL; return ad_none(); }
static vram_status ad_stream_sync(void *c, vram_stream s) { (void)c; (void)s; return ad_none(); }
static vram_status ad_memcpy_async(void *c, void *dst, const void *src, uint64_t b, vram_copy_kind k, vram_stream s) {
    (void)c; (void)dst; (void)src; (void)b; (void)k; (void)s;
    return ad_none();
}
static vram_status ad_event_create(void *c, vram_event *e) { (void)c; *e = NULL; return ad_none(); }
static vram_status ad_event_sync(void *c, vram_event e) { (void)c; (void)e; return ad_none(); }
static vram_status ad_event_record(void *c, vram_event e, vram_stream s) { (void)c; (void)e; (void)s; return ad_none(); }
static int ad_last_error(void *c) { (void)c; return 0; }
/* the slots that share a stub above */
#define ad_release_device ad_set_device
#define ad_host_unregister ad_host_free_pinned
#define ad_stream_destroy ad_stream_sync
#define ad_event_destroy ad_event_sync
#define ad_event_query ad_event_sync
#define ad_stream_wait_event ad_event_record

vram_device_ops vram_gpumem_device_ops(const vram_gpumem_ops *m) {
    vram_device_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.api_version = VRAM_DEVICE_API_VERSION;
    ops.size = (uint32_t)sizeof ops;
    ops.backend = m->source;
    ops.ctx = (void *)m;
    VRAM_DEVICE_OPS_FILL(ops, ad)
    return ops;
}
