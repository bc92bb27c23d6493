/* hw_watch.c — on a real GPU, the samples of driver/gpustats/gpustats.h (what `vramkit watch` prints)
 * move when memory is allocated: 1 GiB from cudaMalloc between two samples shows as 1 GiB
 * more used, and less again after cudaFree; the figures match cudaMemGetInfo; a limit set
 * just above the current use raises near_limit once the 1 GiB lands; an allocation kept
 * across an epoch mark is reported as a leak. Assumes no other process allocates on GPU 0
 * while it runs (a dedicated test machine); the slack below covers the driver's rounding. */
#include <stdint.h>
#include <string.h>

#include "hw_common.h"

#include "cuda/cuda_device.h"
#include "gpustats/gpustats.h"

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)
#define SLACK (64 * MIB) /* page rounding and the allocator's own bookkeeping */

static void *alloc_gib(void) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, GIB);
    cr_assert_eq(e, cudaSuccess, "cudaMalloc(1 GiB): %s", cudaGetErrorString(e));
    cr_assert_eq(cudaMemset(p, 0x5A, GIB), cudaSuccess); /* touched, so surely backed */
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    return p;
}

static vram_gpustats *open_cuda(const vram_monitor_config *cfg) {
    char err[256];
    vram_gpustats *g = NULL;
    vram_status st = vram_gpustats_open(NULL, cfg, &g, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "open over CUDA: %s (%s)", vram_status_name(st), err);
    cr_assert_str_eq(vram_gpustats_backend(g), "cuda");
    cr_assert_gt(vram_gpustats_device_count(g), 0);
    return g;
}

static vram_monitor_sample sample0(vram_gpustats *g) {
    vram_monitor_sample s;
    vram_status st = vram_gpustats_sample_device(g, 0, 0);
    cr_assert_eq(st, VRAM_OK, "sample: %s (%s)", vram_status_name(st), vram_gpustats_error(g));
    cr_assert_eq(vram_gpustats_last(g, 0, &s), VRAM_OK);
    return s;
}

Test(hw_watch, samples_move_when_1GiB_is_allocated) {
    cr_assert_eq(cudaSetDevice(0), cudaSuccess);
    vram_gpustats *g = open_cuda(NULL);
    vram_monitor_sample a = sample0(g);
    void *p = alloc_gib();
    vram_monitor_sample b = sample0(g);
    cr_expect_eq(b.total_bytes, a.total_bytes);
    cr_expect_geq(b.used_bytes, a.used_bytes + GIB, "used %llu -> %llu",
                  (unsigned long long)a.used_bytes, (unsigned long long)b.used_bytes);
    cr_expect_leq(b.used_bytes, a.used_bytes + GIB + SLACK, "used %llu -> %llu",
                  (unsigned long long)a.used_bytes, (unsigned long long)b.used_bytes);
    cr_expect_eq(b.used_bytes + b.free_bytes, b.total_bytes);
    cr_assert_eq(cudaFree(p), cudaSuccess);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    vram_monitor_sample c = sample0(g);
    cr_expect_leq(c.used_bytes, b.used_bytes - GIB + SLACK, "freed: %llu -> %llu",
                  (unsigned long long)b.used_bytes, (unsigned long long)c.used_bytes);
    char line[256];
    cr_assert_eq(vram_gpustats_log_line(g, 0, line, sizeof line), VRAM_OK);
    cr_expect(strncmp(line, "gpu0 used ", 10) == 0, "%s", line);
    cr_expect(strstr(line, "reserved by this process unknown") != NULL, "%s", line);
    vram_gpustats_close(g);
}

Test(hw_watch, figures_match_cudaMemGetInfo) {
    cr_assert_eq(cudaSetDevice(0), cudaSuccess);
    vram_gpustats *g = open_cuda(NULL);
    vram_monitor_sample s = sample0(g);
    size_t free_b = 0, total_b = 0;
    cr_assert_eq(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    cr_expect_eq(s.total_bytes, (uint64_t)total_b);
    uint64_t d = s.free_bytes > free_b ? s.free_bytes - free_b : free_b - s.free_bytes;
    cr_expect_leq(d, SLACK, "free %llu vs cudaMemGetInfo %llu", (unsigned long long)s.free_bytes,
                  (unsigned long long)free_b);
    /* every device answers */
    cr_expect_eq(vram_gpustats_sample(g), VRAM_OK, "%s", vram_gpustats_error(g));
    vram_gpustats_close(g);
}

Test(hw_watch, near_limit_fires_when_the_allocation_crosses_it) {
    cr_assert_eq(cudaSetDevice(0), cudaSuccess);
    vram_gpustats *probe = open_cuda(NULL);
    vram_monitor_sample a = sample0(probe);
    vram_gpustats_close(probe);
    cr_assert_lt(a.used_bytes + 2 * GIB, a.total_bytes, "needs 2 GiB free");
    /* the limit half a GiB above what is used now */
    vram_monitor_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.limit = (double)(a.used_bytes + GIB / 2) / (double)a.total_bytes;
    vram_gpustats *g = open_cuda(&cfg);
    vram_monitor_warning w[4];
    size_t n = 9;
    sample0(g);
    cr_assert_eq(vram_gpustats_warnings(g, w, 4, &n), VRAM_OK);
    cr_expect_eq(n, 0u, "below the limit");
    void *p = alloc_gib();
    vram_monitor_sample b = sample0(g);
    cr_assert_eq(vram_gpustats_warnings(g, w, 4, &n), VRAM_OK);
    cr_assert_eq(n, 1u);
    cr_expect_eq(w[0].id, VRAM_MONITOR_NEAR_LIMIT);
    cr_expect_leq(w[0].threshold, b.used_bytes);
    cr_expect_gt(w[0].threshold, a.used_bytes);
    cr_assert_eq(cudaFree(p), cudaSuccess);
    vram_gpustats_close(g);
}

Test(hw_watch, memory_kept_across_an_epoch_is_a_leak) {
    cr_assert_eq(cudaSetDevice(0), cudaSuccess);
    vram_gpustats *g = open_cuda(NULL);
    vram_monitor_warning w[4];
    size_t n = 9;
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK, "%s", vram_gpustats_error(g));
    void *p = alloc_gib();
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK, "%s", vram_gpustats_error(g));
    cr_assert_eq(vram_gpustats_warnings(g, w, 4, &n), VRAM_OK);
    int leaks = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i].id != VRAM_MONITOR_LEAK || w[i].device != 0) continue;
        leaks++;
        cr_expect_geq(w[i].growth, GIB);
        cr_expect_leq(w[i].growth, GIB + SLACK);
        cr_expect_eq(w[i].epoch, 1u);
    }
    cr_expect_eq(leaks, 1, "one leak on GPU 0 (of %zu warnings)", n);
    cr_assert_eq(cudaFree(p), cudaSuccess);
    vram_gpustats_close(g);
}

VRAM_HW_MAIN()
