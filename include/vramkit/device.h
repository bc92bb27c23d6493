/* vramkit/device.h — the one seam between vramkit and a GPU.
 * A table of function pointers (filled by the CUDA driver in driver/, by the scriptable
 * mock in test/mock/, or by plain host memory) and the snapshot structs the core reasons
 * about. The core never calls the table; it only reads snapshots the driver took with it. */
#ifndef VRAMKIT_DEVICE_H
#define VRAMKIT_DEVICE_H

#include "base.h"

/* Bumped whenever a slot is added or changes meaning. A table declares the version and the
 * size it was written for, and vram_device_ops_check refuses one written for another
 * version, so a backend built against an older header fails loudly instead of calling
 * through a slot it never filled. */
#define VRAM_DEVICE_API_VERSION 2u

/* Bits of vram_device_ops.flags: what callers may assume about a backend beyond its slots. */
/* Device pointers are host pointers the host may read and write at any time, and work on a
 * stream is done when the call that queued it returns (the host backend, the plain mock).
 * Without it, device memory is only for the device: the host reaches it through copies. */
#define VRAM_DEVICE_HOST_MEMORY 0x1u
#define VRAM_DEVICE_FLAGS_KNOWN VRAM_DEVICE_HOST_MEMORY /* every bit this version defines */

#define VRAM_DEVICE_NAME_MAX 256
#define VRAM_MAX_DEVICES 64

/* Three-valued facts: an attribute the backend could not read is "unknown", never "no". */
typedef enum vram_tristate { VRAM_UNKNOWN = -1, VRAM_NO = 0, VRAM_YES = 1 } vram_tristate;

/* cudaComputeMode values (same numbers, no CUDA header needed). */
typedef enum vram_compute_mode {
    VRAM_COMPUTE_DEFAULT = 0,
    VRAM_COMPUTE_EXCLUSIVE_THREAD = 1, /* deprecated by NVIDIA, still reported */
    VRAM_COMPUTE_PROHIBITED = 2,
    VRAM_COMPUTE_EXCLUSIVE_PROCESS = 3
} vram_compute_mode;

/* CUdevice_attribute numbers (CUDA 13.0's cuda.h) the diagnostics care about; the
 * `attribute` slot takes these. */
enum {
    VRAM_ATTR_HOST_REGISTER_SUPPORTED = 99,
    VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
    VRAM_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED = 103,
    VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED = 110,
    VRAM_ATTR_MEMORY_POOLS_SUPPORTED = 115,
    VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119
};

/* Everything about one device that a plan or a diagnosis needs, as numbers. */
typedef struct vram_device_info {
    char name[VRAM_DEVICE_NAME_MAX]; /* NUL-terminated */
    int ordinal;                     /* index as the runtime sees it */
    int cc_major, cc_minor;          /* compute capability, e.g. 9.0 */
    uint64_t total_bytes;
    uint64_t free_bytes; /* at the moment of the snapshot; racy across processes */
    int multiprocessors;
    int copy_engines; /* asyncEngineCount */
    int integrated;   /* 1 when the GPU shares system memory (Jetson) */
    vram_compute_mode compute_mode;
    vram_tristate vmm;             /* attr 102 */
    vram_tristate vmm_posix_fd;    /* attr 103 */
    vram_tristate vmm_rdma;        /* attr 110 */
    vram_tristate memory_pools;    /* attr 115 */
    vram_tristate host_register;   /* attr 99 */
    int mempool_handle_types;      /* attr 119: CUmemAllocationHandleType bitmask; -1 unknown */
} vram_device_info;

/* A whole machine as seen at one moment. The attribute reads (vmm ... host_register,
 * mempool_handle_types) and mem_info take precedence over what device_info filled in. */
typedef struct vram_device_snapshot {
    int driver_version;  /* cudaDriverGetVersion: 13000 = 13.0; 0 = no driver */
    int runtime_version; /* cudaRuntimeGetVersion of the build */
    int device_count;    /* devices visible (after CUDA_VISIBLE_DEVICES) */
    vram_device_info devices[VRAM_MAX_DEVICES];
    vram_status status; /* VRAM_OK, or why the snapshot is incomplete */
    int cuda_error;     /* the raw CUDA error behind a failed status, else 0 */
} vram_device_snapshot;

/* Opaque handles: cudaStream_t / cudaEvent_t for the CUDA backend. */
typedef void *vram_stream;
typedef void *vram_event;

typedef enum vram_copy_kind {
    VRAM_COPY_H2D = 1,
    VRAM_COPY_D2H = 2,
    VRAM_COPY_D2D = 3,
    VRAM_COPY_H2H = 4
} vram_copy_kind;

/* The ops table. Every slot returns a vram_status; on a CUDA failure the backend also
 * records the raw CUDA error code, readable through `last_error` (a later success does not
 * clear it, as with cudaPeekAtLastError). `ctx` is the backend's own state and is passed
 * back as the first argument of every slot. A NULL vram_stream is the default stream. */
typedef struct vram_device_ops {
    uint32_t api_version; /* VRAM_DEVICE_API_VERSION the table was written for */
    uint32_t size;        /* sizeof(vram_device_ops) as the backend saw it */
    uint32_t flags;       /* VRAM_DEVICE_* bits; 0 for a GPU */
    const char *backend;  /* "cuda", "mock", "host": for reports, never for decisions */
    void *ctx;

    /* versions and inventory */
    vram_status (*driver_version)(void *ctx, int *version);
    vram_status (*runtime_version)(void *ctx, int *version);
    vram_status (*device_count)(void *ctx, int *count);
    vram_status (*device_info)(void *ctx, int device, vram_device_info *out);
    vram_status (*mem_info)(void *ctx, int device, uint64_t *free_bytes, uint64_t *total_bytes);
    vram_status (*attribute)(void *ctx, int device, int attr, int *value);

    /* memory */
    vram_status (*set_device)(void *ctx, int device);
    /* Gives back what this process holds on the device (a GPU's primary context: its memory,
     * and its claim under exclusive compute mode), so another process can use it. Everything
     * made on the device through the table is invalid afterwards; the next call that needs
     * the device takes it again. Nothing to do when nothing is held. */
    vram_status (*release_device)(void *ctx, int device);
    vram_status (*dev_alloc)(void *ctx, int device, uint64_t bytes, void **ptr);
    vram_status (*dev_free)(void *ctx, int device, void *ptr);
    vram_status (*host_alloc_pinned)(void *ctx, uint64_t bytes, void **ptr);
    vram_status (*host_free_pinned)(void *ctx, void *ptr);
    vram_status (*host_register)(void *ctx, void *ptr, uint64_t bytes);
    vram_status (*host_unregister)(void *ctx, void *ptr);

    /* streams, copies, events */
    vram_status (*stream_create)(void *ctx, int device, vram_stream *out);
    vram_status (*stream_destroy)(void *ctx, vram_stream s);
    vram_status (*stream_sync)(void *ctx, vram_stream s);
    vram_status (*memcpy_async)(void *ctx, void *dst, const void *src, uint64_t bytes,
                                vram_copy_kind kind, vram_stream s);
    vram_status (*event_create)(void *ctx, vram_event *out);
    vram_status (*event_destroy)(void *ctx, vram_event e);
    vram_status (*event_record)(void *ctx, vram_event e, vram_stream s);
    vram_status (*event_query)(void *ctx, vram_event e); /* VRAM_OK done, VRAM_E_NOT_READY */
    vram_status (*event_sync)(void *ctx, vram_event e);
    vram_status (*stream_wait_event)(void *ctx, vram_stream s, vram_event e);

    /* the raw CUDA error code behind the last failed call (0 when none) */
    int (*last_error)(void *ctx);
} vram_device_ops;

/* Is this table usable by this build? Requires: nothing (NULL is reported).
 * Guarantees: VRAM_OK when the version matches and every slot is set;
 * VRAM_E_VERSION for another API version or a table smaller than this build's;
 * VRAM_E_INVALID for NULL, an unnamed backend, a missing slot or a flag bit this version
 * does not define. */
VRAM_DEF VRAM_NODISCARD vram_status vram_device_ops_check(const vram_device_ops *ops) {
    if (ops == NULL) return VRAM_E_INVALID;
    if (ops->api_version != VRAM_DEVICE_API_VERSION) return VRAM_E_VERSION;
    if (ops->size < (uint32_t)sizeof(vram_device_ops)) return VRAM_E_VERSION;
    if ((ops->flags & ~(uint32_t)VRAM_DEVICE_FLAGS_KNOWN) != 0u) return VRAM_E_INVALID;
    if (ops->backend == NULL || !ops->driver_version || !ops->runtime_version || !ops->device_count || !ops->device_info ||
        !ops->mem_info || !ops->attribute || !ops->set_device || !ops->release_device ||
        !ops->dev_alloc || !ops->dev_free || !ops->host_alloc_pinned || !ops->host_free_pinned || !ops->host_register ||
        !ops->host_unregister || !ops->stream_create || !ops->stream_destroy || !ops->stream_sync ||
        !ops->memcpy_async || !ops->event_create || !ops->event_destroy || !ops->event_record ||
        !ops->event_query || !ops->event_sync || !ops->stream_wait_event || !ops->last_error)
        return VRAM_E_INVALID;
    return VRAM_OK;
}

/* Compute capability as one integer (9.0 -> 90), the form build targets use. */
VRAM_DEF int vram_device_cc(const vram_device_info *d) { return d->cc_major * 10 + d->cc_minor; }

/* Devices of a snapshot, with the count clamped to what the struct can hold. */
VRAM_DEF int vram_snapshot_count(const vram_device_snapshot *s) {
    if (s->device_count < 0) return 0;
    return s->device_count > VRAM_MAX_DEVICES ? VRAM_MAX_DEVICES : s->device_count;
}

#endif /* VRAMKIT_DEVICE_H */
