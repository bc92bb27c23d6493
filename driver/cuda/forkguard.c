/* driver/cuda/forkguard.c — the fork guard (see forkguard.h). Two process-wide flags: "CUDA was
 * initialised here" (set by the CUDA backend) and "this is a fork of such a process" (set
 * by the pthread_atfork child handler, and inherited by forks of forks). */
#include "forkguard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "util/device_slots.h"

static atomic_int fg_initialised;
static atomic_int fg_tripped;
static pthread_once_t fg_once = PTHREAD_ONCE_INIT;
static int fg_install_rc;

/* Runs in the child right after fork(): only plain atomic stores, nothing that could need
 * a lock another thread held at the fork. */
static void fg_child(void) {
    if (atomic_load(&fg_initialised)) atomic_store(&fg_tripped, 1);
}

static void fg_register(void) { fg_install_rc = pthread_atfork(NULL, NULL, fg_child); }

vram_status vram_fork_guard_install(void) {
    pthread_once(&fg_once, fg_register);
    return fg_install_rc == 0 ? VRAM_OK : VRAM_E_STATE;
}

vram_status vram_fork_guard_note_init(void) {
    vram_status st = vram_fork_guard_install();
    atomic_store(&fg_initialised, 1);
    return st;
}

int vram_fork_guard_tripped(void) { return atomic_load(&fg_tripped) != 0; }

vram_status vram_fork_guard_check(void) {
    return vram_fork_guard_tripped() ? VRAM_E_FORKED : VRAM_OK;
}

/* ---- the guarded slots --------------------------------------------------------------- */

#define FG_INNER(ctx) (&((const vram_fork_guarded *)(ctx))->inner)
#define FG_GUARD()                                     \
    do {                                               \
        if (vram_fork_guard_tripped()) return VRAM_E_FORKED; \
    } while (0)

/* A guarded slot: refused after a fork, else the inner table's slot with the same arguments. */
#define FG_SLOT(slot, params, ...)                                                                 \
    static vram_status fg_##slot params {                                                          \
        FG_GUARD();                                                                                \
        return FG_INNER(ctx)->slot(FG_INNER(ctx)->ctx, __VA_ARGS__);                               \
    }

FG_SLOT(driver_version, (void *ctx, int *v), v)
FG_SLOT(runtime_version, (void *ctx, int *v), v)
FG_SLOT(device_count, (void *ctx, int *n), n)
FG_SLOT(device_info, (void *ctx, int device, vram_device_info *out), device, out)
FG_SLOT(mem_info, (void *ctx, int device, uint64_t *free_bytes, uint64_t *total_bytes), device,
        free_bytes, total_bytes)
FG_SLOT(attribute, (void *ctx, int device, int attr, int *value), device, attr, value)
FG_SLOT(set_device, (void *ctx, int device), device)
FG_SLOT(release_device, (void *ctx, int device), device)
FG_SLOT(dev_alloc, (void *ctx, int device, uint64_t bytes, void **ptr), device, bytes, ptr)
FG_SLOT(dev_free, (void *ctx, int device, void *ptr), device, ptr)
FG_SLOT(host_alloc_pinned, (void *ctx, uint64_t bytes, void **ptr), bytes, ptr)
FG_SLOT(host_free_pinned, (void *ctx, void *ptr), ptr)
FG_SLOT(host_register, (void *ctx, void *ptr, uint64_t bytes), ptr, bytes)
FG_SLOT(host_unregister, (void *ctx, void *ptr), ptr)
FG_SLOT(stream_create, (void *ctx, int device, vram_stream *out), device, out)
FG_SLOT(stream_destroy, (void *ctx, vram_stream s), s)
FG_SLOT(stream_sync, (void *ctx, vram_stream s), s)
FG_SLOT(memcpy_async, (void *ctx, void *dst, const void *src, uint64_t bytes, vram_copy_kind kind,
                       vram_stream s),
        dst, src, bytes, kind, s)
FG_SLOT(event_create, (void *ctx, vram_event *out), out)
FG_SLOT(event_destroy, (void *ctx, vram_event e), e)
FG_SLOT(event_record, (void *ctx, vram_event e, vram_stream s), e, s)
FG_SLOT(event_query, (void *ctx, vram_event e), e)
FG_SLOT(event_sync, (void *ctx, vram_event e), e)
FG_SLOT(stream_wait_event, (void *ctx, vram_stream s, vram_event e), s, e)

static int fg_last_error(void *ctx) {
    if (vram_fork_guard_tripped()) return VRAM_FORK_GUARD_CUDA_CODE;
    return FG_INNER(ctx)->last_error(FG_INNER(ctx)->ctx);
}

vram_status vram_fork_guard_wrap(const vram_device_ops *inner, vram_fork_guarded *g,
                                 vram_device_ops *out) {
    vram_status st = vram_device_ops_check(inner);
    if (st != VRAM_OK) return st;
    if (g == NULL || out == NULL) return VRAM_E_INVALID;
    if (vram_fork_guard_install() != VRAM_OK) return VRAM_E_STATE;
    g->inner = *inner;
    vram_device_ops t;
    memset(&t, 0, sizeof t);
    t.api_version = VRAM_DEVICE_API_VERSION;
    t.size = (uint32_t)sizeof t;
    t.flags = inner->flags;
    t.backend = inner->backend;
    t.ctx = g;
    VRAM_DEVICE_OPS_FILL(t, fg)
    *out = t;
    return VRAM_OK;
}
