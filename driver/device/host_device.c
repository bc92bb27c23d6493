/* driver/device/host_device.c — the "host" backend: vram_device_ops over plain host memory.
 * Lets everything above the ops table (streamer, CLI) run on machines without a GPU; no
 * state, so it is thread-safe by construction. */
#include "host_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/device_slots.h"

#define HOST_DEV_ALIGN 256u /* what cudaMalloc guarantees; code tuned on it may rely on it */

static const char host_device_name[] = "host (CPU memory)";

/* ---- memory figures -------------------------------------------------------------- */

vram_status vram__host_parse_meminfo(const char *text, uint64_t *bytes) {
    static const char key[] = "MemAvailable:";
    const char *p = text;
    while (p != NULL && strncmp(p, key, sizeof key - 1) != 0) {
        p = strchr(p, '\n');
        if (p != NULL) p++;
    }
    if (p == NULL) return VRAM_E_FORMAT;
    p += sizeof key - 1;
    while (*p == ' ' || *p == '\t') p++;
    if (*p < '0' || *p > '9') return VRAM_E_FORMAT;
    uint64_t kib = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (vram__mul_u64(kib, 10, &kib) != VRAM_OK ||
            vram__add_u64(kib, (uint64_t)(*p - '0'), &kib) != VRAM_OK)
            return VRAM_E_OVERFLOW;
    }
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "kB", 2) != 0) return VRAM_E_FORMAT; /* the kernel always writes kB */
    uint64_t b;
    if (vram__mul_u64(kib, 1024, &b) != VRAM_OK) return VRAM_E_OVERFLOW;
    *bytes = b;
    return VRAM_OK;
}

static uint64_t host_pages(int name) {
    long pages = sysconf(name), size = sysconf(_SC_PAGESIZE);
    uint64_t b;
    if (pages <= 0 || size <= 0) return 0;
    if (vram__mul_u64((uint64_t)pages, (uint64_t)size, &b) != VRAM_OK) return UINT64_MAX;
    return b;
}

static uint64_t host_total_bytes(void) { return host_pages(_SC_PHYS_PAGES); }

/* MemAvailable counts reclaimable cache, which is what a new allocation can really get;
 * sysconf's free pages would undercount on any machine that has been up a while. */
static uint64_t host_free_bytes(uint64_t total) {
    uint64_t avail = 0;
    int have = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f != NULL) {
        char buf[8192];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        have = vram__host_parse_meminfo(buf, &avail) == VRAM_OK;
    }
    if (!have) avail = host_pages(_SC_AVPHYS_PAGES);
    return avail > total ? total : avail;
}

/* ---- versions and inventory ------------------------------------------------------ */

static vram_status hostmem_driver_version(void *ctx, int *version) {
    (void)ctx;
    if (version == NULL) return VRAM_E_INVALID;
    *version = 0;
    return VRAM_OK;
}

static vram_status hostmem_runtime_version(void *ctx, int *version) {
    (void)ctx;
    if (version == NULL) return VRAM_E_INVALID;
    *version = 0;
    return VRAM_OK;
}

static vram_status hostmem_device_count(void *ctx, int *count) {
    (void)ctx;
    if (count == NULL) return VRAM_E_INVALID;
    *count = 1;
    return VRAM_OK;
}

static vram_status hostmem_device_info(void *ctx, int device, vram_device_info *out) {
    (void)ctx;
    if (out == NULL || device != 0) return VRAM_E_INVALID;
    memset(out, 0, sizeof *out);
    memcpy(out->name, host_device_name, sizeof host_device_name);
    out->ordinal = 0;
    out->cc_major = 0;
    out->cc_minor = 0;
    out->total_bytes = host_total_bytes();
    out->free_bytes = host_free_bytes(out->total_bytes);
    out->multiprocessors = 0;
    out->copy_engines = 0;
    out->integrated = 1;
    out->compute_mode = VRAM_COMPUTE_DEFAULT;
    out->vmm = VRAM_NO;
    out->vmm_posix_fd = VRAM_NO;
    out->vmm_rdma = VRAM_NO;
    out->memory_pools = VRAM_NO;
    out->host_register = VRAM_YES;
    return VRAM_OK;
}

static vram_status hostmem_mem_info(void *ctx, int device, uint64_t *free_bytes,
                                    uint64_t *total_bytes) {
    (void)ctx;
    if (free_bytes == NULL || total_bytes == NULL || device != 0) return VRAM_E_INVALID;
    *total_bytes = host_total_bytes();
    *free_bytes = host_free_bytes(*total_bytes);
    return VRAM_OK;
}

static vram_status hostmem_attribute(void *ctx, int device, int attr, int *value) {
    (void)ctx;
    if (value == NULL || device != 0) return VRAM_E_INVALID;
    switch (attr) {
    case VRAM_ATTR_HOST_REGISTER_SUPPORTED: *value = 1; return VRAM_OK;
    case VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case VRAM_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED:
    case VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED:
    case VRAM_ATTR_MEMORY_POOLS_SUPPORTED:
    case VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES: *value = 0; return VRAM_OK;
    default: return VRAM_E_NOT_SUPPORTED;
    }
}

/* ---- memory ---------------------------------------------------------------------- */

static vram_status hostmem_set_device(void *ctx, int device) {
    (void)ctx;
    return device == 0 ? VRAM_OK : VRAM_E_INVALID;
}

/* Nothing is held on the machine's own memory beyond what the caller allocated. */
static vram_status hostmem_release_device(void *ctx, int device) {
    (void)ctx;
    return device == 0 ? VRAM_OK : VRAM_E_INVALID;
}

/* aligned_alloc wants a size that is a multiple of the alignment. */
static vram_status host_aligned(uint64_t bytes, size_t align, void **ptr) {
    if (ptr == NULL) return VRAM_E_INVALID;
    *ptr = NULL;
    if (bytes == 0) return VRAM_OK; /* like cudaMalloc(0): success, NULL */
    if (bytes > (uint64_t)(SIZE_MAX - (align - 1))) return VRAM_E_OOM;
    size_t rounded = ((size_t)bytes + (align - 1)) & ~(align - 1);
    void *p = aligned_alloc(align, rounded);
    if (p == NULL) return VRAM_E_OOM;
    *ptr = p;
    return VRAM_OK;
}

static vram_status hostmem_dev_alloc(void *ctx, int device, uint64_t bytes, void **ptr) {
    (void)ctx;
    if (device != 0) return VRAM_E_INVALID;
    return host_aligned(bytes, HOST_DEV_ALIGN, ptr);
}

static vram_status hostmem_dev_free(void *ctx, int device, void *ptr) {
    (void)ctx;
    if (device != 0) return VRAM_E_INVALID;
    free(ptr);
    return VRAM_OK;
}

static vram_status hostmem_host_alloc_pinned(void *ctx, uint64_t bytes, void **ptr) {
    (void)ctx;
    long page = sysconf(_SC_PAGESIZE);
    return host_aligned(bytes, page > 0 ? (size_t)page : 4096u, ptr);
}

static vram_status hostmem_host_free_pinned(void *ctx, void *ptr) {
    (void)ctx;
    free(ptr);
    return VRAM_OK;
}

/* All host memory is as good as pinned here: registration has nothing to do. */
static vram_status hostmem_host_register(void *ctx, void *ptr, uint64_t bytes) {
    (void)ctx;
    return ptr == NULL || bytes == 0 ? VRAM_E_INVALID : VRAM_OK;
}

static vram_status hostmem_host_unregister(void *ctx, void *ptr) {
    (void)ctx;
    return ptr == NULL ? VRAM_E_INVALID : VRAM_OK;
}

/* ---- streams, copies, events ----------------------------------------------------- */

/* Streams and events are one-byte heap objects: distinct handles (callers may key state
 * on them) whose leaks a memory checker sees. Work is done before a call returns, so
 * there is nothing for them to track. */
static vram_status host_token(void **out) {
    if (out == NULL) return VRAM_E_INVALID;
    *out = malloc(1);
    return *out != NULL ? VRAM_OK : VRAM_E_OOM;
}

static vram_status hostmem_stream_create(void *ctx, int device, vram_stream *out) {
    (void)ctx;
    if (device != 0) return VRAM_E_INVALID;
    return host_token(out);
}

static vram_status hostmem_stream_destroy(void *ctx, vram_stream s) {
    (void)ctx;
    if (s == NULL) return VRAM_E_INVALID; /* the default stream is not destroyed */
    free(s);
    return VRAM_OK;
}

static vram_status hostmem_stream_sync(void *ctx, vram_stream s) {
    (void)ctx;
    (void)s;
    return VRAM_OK;
}

static vram_status hostmem_memcpy_async(void *ctx, void *dst, const void *src, uint64_t bytes,
                                        vram_copy_kind kind, vram_stream s) {
    (void)ctx;
    (void)s;
    if (kind < VRAM_COPY_H2D || kind > VRAM_COPY_H2H) return VRAM_E_INVALID;
    if (bytes == 0) return VRAM_OK;
    if (dst == NULL || src == NULL || bytes > SIZE_MAX) return VRAM_E_INVALID;
    memmove(dst, src, (size_t)bytes); /* memmove: a D2D copy within one buffer may overlap */
    return VRAM_OK;
}

static vram_status hostmem_event_create(void *ctx, vram_event *out) {
    (void)ctx;
    return host_token(out);
}

static vram_status hostmem_event_destroy(void *ctx, vram_event e) {
    (void)ctx;
    if (e == NULL) return VRAM_E_INVALID;
    free(e);
    return VRAM_OK;
}

static vram_status hostmem_event_record(void *ctx, vram_event e, vram_stream s) {
    (void)ctx;
    (void)s;
    return e == NULL ? VRAM_E_INVALID : VRAM_OK;
}

static vram_status hostmem_event_query(void *ctx, vram_event e) {
    (void)ctx;
    return e == NULL ? VRAM_E_INVALID : VRAM_OK;
}

static vram_status hostmem_event_sync(void *ctx, vram_event e) {
    (void)ctx;
    return e == NULL ? VRAM_E_INVALID : VRAM_OK;
}

static vram_status hostmem_stream_wait_event(void *ctx, vram_stream s, vram_event e) {
    (void)ctx;
    (void)s;
    return e == NULL ? VRAM_E_INVALID : VRAM_OK;
}

static int hostmem_last_error(void *ctx) {
    (void)ctx;
    return 0; /* no CUDA call is ever made */
}

vram_device_ops vram_host_ops(void) {
    vram_device_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.api_version = VRAM_DEVICE_API_VERSION;
    ops.size = (uint32_t)sizeof(vram_device_ops);
    ops.flags = VRAM_DEVICE_HOST_MEMORY;
    ops.backend = "host";
    ops.ctx = NULL;
    VRAM_DEVICE_OPS_FILL(ops, hostmem)
    return ops;
}
