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

static vram_status fg_driver_version(void *ctx, int *v) {
    FG_GUARD();
    return FG_INNER(ctx)->driver_version(FG_INNER(ctx)->ctx, v);
}
static vram_status fg_runtime_version(void *ctx, int *v) {
    FG_GUARD();
    return FG_INNER(ctx)->runtime_version(FG_INNER(ctx)->ctx, v);
}
static vram_status fg_device_count(void *ctx, int *n) {
    FG_GUARD();
    return FG_INNER(ctx)->device_count(FG_INNER(ctx)->ctx, n);
}
static vram_status fg_device_info(void *ctx, int device, vram_device_info *out) {
    FG_GUARD();
    return FG_INNER(ctx)->device_info(FG_INNER(ctx)->ctx, device, out);
}
static vram_status fg_mem_info(void *ctx, int device, uint64_t *free_bytes, uint64_t *total_bytes) {
    FG_GUARD();
    return FG_INNER(ctx)->mem_info(FG_INNER(ctx)->ctx, device, free_bytes, total_bytes);
}
static vram_status fg_attribute(void *ctx, int device, int attr, int *value) {
    FG_GUARD();
    return FG_INNER(ctx)->attribute(FG_INNER(ctx)->ctx, device, attr, value);
}
static vram_status fg_set_device(void *ctx, int device) {
    FG_GUARD();
    return FG_INNER(ctx)->set_device(FG_INNER(ctx)->ctx, device);
}
static vram_status fg_release_device(void *ctx, int device) {
    FG_GUARD();
    return FG_INNER(ctx)->release_device(FG_INNER(ctx)->ctx, device);
}
static vram_status fg_dev_alloc(void *ctx, int device, uint64_t bytes, void **ptr) {
    FG_GUARD();
    return FG_INNER(ctx)->dev_alloc(FG_INNER(ctx)->ctx, device, bytes, ptr);
}
static vram_status fg_dev_free(void *ctx, int device, void *ptr) {
    FG_GUARD();
    return FG_INNER(ctx)->dev_free(FG_INNER(ctx)->ctx, device, ptr);
}
static vram_status fg_host_alloc_pinned(void *ctx, uint64_t bytes, void **ptr) {
    FG_GUARD();
    return FG_INNER(ctx)->host_alloc_pinned(FG_INNER(ctx)->ctx, bytes, ptr);
}
static vram_status fg_host_free_pinned(void *ctx, void *ptr) {
    FG_GUARD();
    return FG_INNER(ctx)->host_free_pinned(FG_INNER(ctx)->ctx, ptr);
}
static vram_status fg_host_register(void *ctx, void *ptr, uint64_t bytes) {
    FG_GUARD();
    return FG_INNER(ctx)->host_register(FG_INNER(ctx)->ctx, ptr, bytes);
}
static vram_status fg_host_unregister(void *ctx, void *ptr) {
    FG_GUARD();
    return FG_INNER(ctx)->host_unregister(FG_INNER(ctx)->ctx, ptr);
}
static vram_status fg_stream_create(void *ctx, int device, vram_stream *out) {
    FG_GUARD();
    return FG_INNER(ctx)->stream_create(FG_INNER(ctx)->ctx, device, out);
}
static vram_status fg_stream_destroy(void *ctx, vram_stream s) {
    FG_GUARD();
    return FG_INNER(ctx)->stream_destroy(FG_INNER(ctx)->ctx, s);
}
static vram_status fg_stream_sync(void *ctx, vram_stream s) {
    FG_GUARD();
    return FG_INNER(ctx)->stream_sync(FG_INNER(ctx)->ctx, s);
}
static vram_status fg_memcpy_async(void *ctx, void *dst, const void *src, uint64_t bytes,
                                   vram_copy_kind kind, vram_stream s) {
    FG_GUARD();
    return FG_INNER(ctx)->memcpy_async(FG_INNER(ctx)->ctx, dst, src, bytes, kind, s);
}
static vram_status fg_event_create(void *ctx, vram_event *out) {
    FG_GUARD();
    return FG_INNER(ctx)->event_create(FG_INNER(ctx)->ctx, out);
}
static vram_status fg_event_destroy(void *ctx, vram_event e) {
    FG_GUARD();
    return FG_INNER(ctx)->event_destroy(FG_INNER(ctx)->ctx, e);
}
static vram_status fg_event_record(void *ctx, vram_event e, vram_stream s) {
    FG_GUARD();
    return FG_INNER(ctx)->event_record(FG_INNER(ctx)->ctx, e, s);
}
static vram_status fg_event_query(void *ctx, vram_event e) {
    FG_GUARD();
    return FG_INNER(ctx)->event_query(FG_INNER(ctx)->ctx, e);
}
static vram_status fg_event_sync(void *ctx, vram_event e) {
    FG_GUARD();
    return FG_INNER(ctx)->event_sync(FG_INNER(ctx)->ctx, e);
}
static vram_status fg_stream_wait_event(void *ctx, vram_stream s, vram_event e) {
    FG_GUARD();
    return FG_INNER(ctx)->stream_wait_event(FG_INNER(ctx)->ctx, s, e);
}
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
