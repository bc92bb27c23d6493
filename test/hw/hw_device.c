/* hw_device.c — the real CUDA backend and the probes on a GPU (label hw; exits 77 when no
 * CUDA device can be used). The snapshot taken through the table matches what cudart says
 * when asked directly (properties, free/total memory within a tolerance, the attributes the
 * runtime shares); an allocation moves the free figure; every probe succeeds on an
 * H100/H200; a kernel that traps, in a probe child, leaves an error classified sticky after
 * which the backend refuses every call, and the parent is unharmed; an event query that says
 * "not ready" leaves nothing in cudart's last-error slot. */
#include <libgen.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw_common.h"

#include <vramkit/cudaerr.h>
#include <vramkit/device.h>

#include "cuda/cuda_device.h"
#include "probe/probe.h"
#include "device/snapshot.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)
/* Free memory is racy across processes (and cudart's own context takes some): how far two
 * reads a moment apart may differ. */
#define FREE_SLACK (256 * MiB)

static vram_device_ops ops;
static vram_device_snapshot snap;

/* The probe child is the built vramkit: <build>/test/hw/hw_device -> <build>/driver/vramkit,
 * unless VRAMKIT_PROBE_EXE already says where it is. */
static void setup(void) {
    cr_assert_eq(vram_cuda_ops(&ops), VRAM_OK);
    const char *set = getenv(VRAM_PROBE_EXE_ENV);
    if (set != NULL && set[0] != '\0') return;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    cr_assert_gt(n, 0);
    self[n] = '\0';
    char exe[PATH_MAX + 32];
    snprintf(exe, sizeof exe, "%s/../../driver/vramkit", dirname(self));
    cr_assert_eq(access(exe, X_OK), 0, "the vramkit executable is not at %s", exe);
    cr_assert_eq(setenv(VRAM_PROBE_EXE_ENV, exe, 1), 0);
}

TestSuite(hw_device, .init = setup, .timeout = 300);

static uint64_t diff_u64(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

Test(hw_device, snapshot_matches_cudart) {
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK, "%s (cuda error %d)", vram_status_str(snap.status),
                 snap.cuda_error);
    int n = -1, drv = -1, rt = -1;
    cr_assert_eq(cudaGetDeviceCount(&n), cudaSuccess);
    cr_assert_eq(cudaDriverGetVersion(&drv), cudaSuccess);
    cr_assert_eq(cudaRuntimeGetVersion(&rt), cudaSuccess);
    cr_assert_eq(snap.device_count, n);
    cr_assert_eq(snap.driver_version, drv);
    cr_assert_gt(drv, 0);
    cr_assert_eq(snap.runtime_version, rt);
    for (int i = 0; i < n && i < VRAM_MAX_DEVICES; i++) {
        const vram_device_info *d = &snap.devices[i];
        struct cudaDeviceProp p;
        cr_assert_eq(cudaGetDeviceProperties(&p, i), cudaSuccess);
        cr_assert_str_eq(d->name, p.name);
        cr_assert_eq(d->ordinal, i);
        cr_assert_eq(d->cc_major, p.major);
        cr_assert_eq(d->cc_minor, p.minor);
        cr_assert_eq(d->multiprocessors, p.multiProcessorCount);
        cr_assert_eq(d->copy_engines, p.asyncEngineCount);
        cr_assert_eq(d->integrated, p.integrated != 0);
        int mode = -1;
        cr_assert_eq(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, i), cudaSuccess);
        cr_assert_eq((int)d->compute_mode, mode);

        size_t f = 0, t = 0;
        cr_assert_eq(cudaSetDevice(i), cudaSuccess);
        cr_assert_eq(cudaMemGetInfo(&f, &t), cudaSuccess);
        cr_assert_eq(d->total_bytes, (uint64_t)t, "total is cudaMemGetInfo's");
        cr_assert_leq(diff_u64(d->total_bytes, p.totalGlobalMem), p.totalGlobalMem / 50,
                      "and within 2%% of totalGlobalMem");
        cr_assert_leq(diff_u64(d->free_bytes, f), FREE_SLACK, "free %llu vs %zu", (unsigned long long)d->free_bytes, f);
        cr_assert_leq(d->free_bytes, d->total_bytes);

        /* the attributes the runtime shares, read by the runtime (the backend uses the driver API) */
        int v = -1;
        cr_assert_eq(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, i), cudaSuccess);
        cr_assert_eq(d->memory_pools, v ? VRAM_YES : VRAM_NO);
        cr_assert_eq(cudaDeviceGetAttribute(&v, cudaDevAttrHostRegisterSupported, i), cudaSuccess);
        cr_assert_eq(d->host_register, v ? VRAM_YES : VRAM_NO);
        cr_assert_eq(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolSupportedHandleTypes, i), cudaSuccess);
        cr_assert_eq(d->mempool_handle_types, v);
        cr_assert_neq(d->vmm, VRAM_UNKNOWN, "the driver API answered attribute 102");
        if (strstr(d->name, "H100") != NULL || strstr(d->name, "H200") != NULL) {
            cr_assert_eq(d->vmm, VRAM_YES, "an H100/H200 on bare metal supports VMM");
            cr_assert_eq(d->memory_pools, VRAM_YES);
            cr_assert_eq(vram_device_cc(d), 90);
        }
    }
    cr_assert_eq(ops.last_error(ops.ctx), 0, "%s failed", vram__cuda_last_call());
}

Test(hw_device, allocation_moves_free_memory) {
    uint64_t f0 = 0, t0 = 0, f1 = 0, t1 = 0, f2 = 0, t2 = 0;
    cr_assert_eq(ops.mem_info(ops.ctx, 0, &f0, &t0), VRAM_OK);
    const uint64_t bytes = 2 * GiB;
    cr_assert_gt(f0, bytes + FREE_SLACK, "room for the test allocation");
    void *p = NULL;
    cr_assert_eq(ops.dev_alloc(ops.ctx, 0, bytes, &p), VRAM_OK);
    cr_assert_not_null(p);
    cr_assert_eq(cudaMemset(p, 0x11, (size_t)bytes), cudaSuccess);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    cr_assert_eq(ops.mem_info(ops.ctx, 0, &f1, &t1), VRAM_OK);
    cr_assert_eq(t1, t0);
    cr_assert_geq(f0 - f1 + FREE_SLACK, bytes, "free fell by about 2 GiB: %llu -> %llu", (unsigned long long)f0,
                  (unsigned long long)f1);
    cr_assert_leq(f0 - f1, bytes + FREE_SLACK);
    cr_assert_eq(ops.dev_free(ops.ctx, 0, p), VRAM_OK);
    cr_assert_eq(ops.mem_info(ops.ctx, 0, &f2, &t2), VRAM_OK);
    cr_assert_leq(diff_u64(f2, f0), FREE_SLACK, "and came back after the free");

    /* the copies and events of the table, through pinned memory, bit for bit */
    enum { N = 1 << 20 };
    unsigned char *h = NULL, *back = NULL, *d = NULL;
    vram_stream s = NULL;
    vram_event e = NULL;
    cr_assert_eq(ops.host_alloc_pinned(ops.ctx, N, (void **)&h), VRAM_OK);
    cr_assert_eq(ops.host_alloc_pinned(ops.ctx, N, (void **)&back), VRAM_OK);
    cr_assert_eq(ops.dev_alloc(ops.ctx, 0, N, (void **)&d), VRAM_OK);
    cr_assert_eq(ops.stream_create(ops.ctx, 0, &s), VRAM_OK);
    cr_assert_eq(ops.event_create(ops.ctx, &e), VRAM_OK);
    for (int i = 0; i < N; i++) h[i] = (unsigned char)(i * 31 + (i >> 9));
    memset(back, 0, N);
    cr_assert_eq(ops.memcpy_async(ops.ctx, d, h, N, VRAM_COPY_H2D, s), VRAM_OK);
    cr_assert_eq(ops.event_record(ops.ctx, e, s), VRAM_OK);
    cr_assert_eq(ops.stream_wait_event(ops.ctx, NULL, e), VRAM_OK);
    cr_assert_eq(ops.memcpy_async(ops.ctx, back, d, N, VRAM_COPY_D2H, NULL), VRAM_OK);
    cr_assert_eq(ops.stream_sync(ops.ctx, NULL), VRAM_OK);
    cr_assert_eq(ops.event_sync(ops.ctx, e), VRAM_OK);
    cr_assert_eq(ops.event_query(ops.ctx, e), VRAM_OK);
    cr_assert_eq(memcmp(back, h, N), 0);
    cr_assert_eq(ops.event_destroy(ops.ctx, e), VRAM_OK);
    cr_assert_eq(ops.stream_destroy(ops.ctx, s), VRAM_OK);
    cr_assert_eq(ops.dev_free(ops.ctx, 0, d), VRAM_OK);
    cr_assert_eq(ops.host_free_pinned(ops.ctx, h), VRAM_OK);
    cr_assert_eq(ops.host_free_pinned(ops.ctx, back), VRAM_OK);

    /* a recoverable failure: far more than the GPU has */
    void *huge = NULL;
    cr_assert_eq(ops.dev_alloc(ops.ctx, 0, t0 * 4, &huge), VRAM_E_OOM);
    cr_assert_eq(ops.last_error(ops.ctx), 2);
    cr_assert_eq(cudaGetLastError(), cudaSuccess, "the backend cleared cudart's own record");
    cr_assert_eq(ops.mem_info(ops.ctx, 0, &f2, &t2), VRAM_OK, "still usable after an OOM");
}

Test(hw_device, every_probe_succeeds) {
    for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
        vram_probe_result r;
        vram_status st = vram_probe_run(0, (vram_probe_kind)k, 120000, &r);
        cr_log_info("probe %s: %s %s (%.2f s): %s", vram_probe_name((vram_probe_kind)k), vram_status_name(st),
                    vram_status_name(r.status), r.seconds, r.detail);
        cr_expect_eq(st, VRAM_OK, "%s: %s", vram_probe_name((vram_probe_kind)k), r.detail);
        cr_expect_eq(r.ran, 1, "%s: %s", vram_probe_name((vram_probe_kind)k), r.detail);
        cr_expect_eq(r.status, VRAM_OK, "%s: %s", vram_probe_name((vram_probe_kind)k), r.detail);
        cr_expect_eq(r.cuda_error, 0);
    }
    vram_probe_result r;
    cr_assert_eq(vram_probe_run(VRAM_MAX_DEVICES - 1, VRAM_PROBE_VMM, 0, &r), VRAM_E_NO_DEVICE, "%s", r.detail);
    cr_assert_eq(r.ran, 0);
}

Test(hw_device, trap_is_sticky_and_contained) {
    cr_assert_eq(setenv(VRAM_PROBE_TEST_ENV, "trap", 1), 0);
    vram_probe_result r;
    vram_status st = vram_probe_run(0, VRAM_PROBE_KERNEL, 120000, &r);
    cr_assert_eq(unsetenv(VRAM_PROBE_TEST_ENV), 0);
    cr_log_info("trap: %s %s %d: %s", vram_status_name(st), vram_status_name(r.status), r.cuda_error, r.detail);
    cr_assert_eq(st, VRAM_OK, "%s", r.detail);
    cr_assert_eq(r.ran, 1);
    cr_assert_eq(r.status, VRAM_E_CUDA_STICKY, "%s", r.detail);
    cr_assert_eq(vram_cuda_error_class(r.cuda_error), VRAM_CUDA_STICKY, "code %d", r.cuda_error);
    cr_assert(strstr(r.detail, "a later dev_alloc was refused with VRAM_E_CUDA_STICKY") != NULL, "%s", r.detail);
    /* the parent never saw it */
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(ops.last_error(ops.ctx), 0);
}

/* A host function that holds its stream until the test lets it go. */
static atomic_int release_hold;
static void CUDART_CB hold_stream(void *arg) {
    (void)arg;
    while (!atomic_load(&release_hold)) {
    }
}

/* "Not ready" (600) is a query's answer: the backend reports VRAM_E_NOT_READY and leaves no
 * error behind in cudart's last-error slot, where a later launch check would have found it
 * (the check used to return early for 600 without clearing the slot). */
Test(hw_device, not_ready_leaves_no_error_behind) {
    vram_stream s = NULL;
    vram_event e = NULL;
    cr_assert_eq(ops.stream_create(ops.ctx, 0, &s), VRAM_OK);
    cr_assert_eq(ops.event_create(ops.ctx, &e), VRAM_OK);
    (void)cudaGetLastError();
    atomic_store(&release_hold, 0);
    VRAM_HW_CUDA(cudaLaunchHostFunc((cudaStream_t)s, hold_stream, NULL));
    cr_assert_eq(ops.event_record(ops.ctx, e, s), VRAM_OK);
    vram_status q = ops.event_query(ops.ctx, e);
    cudaError_t slot = cudaPeekAtLastError();
    atomic_store(&release_hold, 1);
    cr_assert_eq(ops.stream_sync(ops.ctx, s), VRAM_OK);
    cr_assert_eq(q, VRAM_E_NOT_READY, "the event waits behind the held stream: %s", vram_status_name(q));
    cr_assert_eq(slot, cudaSuccess, "cudart's slot holds %d after the query", (int)slot);
    cr_assert_eq(ops.event_query(ops.ctx, e), VRAM_OK);
    cr_assert_eq(ops.event_destroy(ops.ctx, e), VRAM_OK);
    cr_assert_eq(ops.stream_destroy(ops.ctx, s), VRAM_OK);
}

VRAM_HW_MAIN()
