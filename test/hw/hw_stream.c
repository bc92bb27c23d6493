/* hw_stream.c — the streamer on a real GPU (label hw; exits 77 when no CUDA device can be
 * used): slabs pinned by cudaHostRegister, copies on the copy stream, chunk events waited on
 * by a non-blocking consumer stream, the in-chunk shuffle gathered on the device by
 * vram_k_gather_rows. Each batch is copied back on the consumer stream and released at once,
 * with no host wait between batches (and the consumer stream stalled now and then, so the
 * copy stream runs ahead of it); the host synchronises once, at the end, and compares every
 * batch, byte for byte and in the planner's order, with the source. A missing wait (copy ->
 * consumer, consumer -> buffer reuse) shows as wrong bytes here, not as a pass. */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw_common.h"
#include "hw_context.h"

#include <vramkit/chunks.h>

#include "../unit/stream_check.h"
#include "cuda/cuda_device.h"
#include "stream/stream.h"

#if defined(__has_include)
#if __has_include(<vramkit_kernels.h>)
#include <vramkit_kernels.h>
#define HW_GATHER vram_k_gather_rows
#endif
#endif

VRAM_HW_MAIN()

#define ROW0 (36u * 7u * 4u)
#define ROW1 (3u * 8u)

/* Runs in the consumer stream's order and holds it up for a moment: work queued there after
 * it starts late, while the copy stream goes on. */
static void CUDART_CB stall(void *arg) {
    (void)arg;
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void run_on(int device, int shuffle, uint32_t world, uint32_t rank, uint64_t epochs, int drop_last) {
    vram_device_ops ops;
    cr_assert_eq(vram_cuda_ops(&ops), VRAM_OK);
    cr_assert_eq(cudaSetDevice(device), cudaSuccess); /* the consumer stream's device */
    const uint64_t n = 5003;
    uint8_t *d0 = (uint8_t *)malloc(n * ROW0), *d1 = (uint8_t *)malloc(n * ROW1);
    sc_fill(d0, 0, n, ROW0);
    sc_fill(d1, 1, n, ROW1);
    vram_memsource m;
    memset(&m, 0, sizeof m);
    m.samples = n;
    m.datasets = 2;
    m.row_bytes[0] = ROW0;
    m.row_bytes[1] = ROW1;
    m.data[0] = d0;
    m.data[1] = d1;
    vram_source src = vram_memsource_source(&m);
    cudaStream_t consumer;
    cr_assert_eq(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
    vram_stream_config c;
    memset(&c, 0, sizeof c);
    c.plan.batch = 64;
    c.plan.budget_bytes = 2u * 700u * (ROW0 + ROW1); /* 640-row chunks */
    c.plan.shuffle = shuffle;
    c.plan.seed = 11;
    c.plan.world = world;
    c.plan.rank = rank;
    c.plan.drop_last = drop_last;
    c.epochs = epochs;
    c.slab_bytes = 256u << 10; /* several slabs per chunk */
    c.device = device;
    c.consumer = consumer;
#ifdef HW_GATHER
    c.gather = HW_GATHER;
#else
    if (shuffle) {
        free(d0);
        free(d1);
        cudaStreamDestroy(consumer);
        cr_skip_test("the kernels library is not linked here: no device gather");
    }
#endif
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    vram_status st = vram_streamer_open(&ops, &src, &c, &s, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s: %s", vram_status_name(st), err);
    cr_assert_str_eq(vram_streamer_staging(s), "slabs");
    sc_walk w;
    cr_assert_eq(sc_walk_make(vram_streamer_plan(s), epochs, 0, &w), 0);
    /* every delivered row lands at its place in the run: batch b at row w.start[b] */
    uint64_t rows = w.start[w.batches];
    uint8_t *h0, *h1;
    cr_assert_eq(cudaMallocHost((void **)&h0, rows * ROW0 + 1), cudaSuccess);
    cr_assert_eq(cudaMallocHost((void **)&h1, rows * ROW1 + 1), cudaSuccess);
    memset(h0, 0, rows * ROW0 + 1);
    memset(h1, 0, rows * ROW1 + 1);
    uint64_t b = 0;
    for (;; b++) {
        vram_batch bt;
        st = vram_streamer_next(s, &bt);
        cr_assert_eq(st, VRAM_OK, "%s", vram_streamer_error(s));
        if (bt.done) break;
        cr_assert_lt(b, w.batches);
        cr_assert_eq(bt.count, w.start[b + 1] - w.start[b]);
        for (uint64_t k = 0; k < bt.count; k++) cr_assert_eq(bt.samples[k], w.samples[w.start[b] + k]);
        /* used in consumer stream order, then given back at once: no host wait */
        if (b % 5 == 0) cr_assert_eq(cudaLaunchHostFunc(consumer, stall, NULL), cudaSuccess);
        cr_assert_eq(cudaMemcpyAsync(h0 + w.start[b] * ROW0, bt.data[0], bt.count * ROW0, cudaMemcpyDeviceToHost,
                                     consumer),
                     cudaSuccess);
        cr_assert_eq(cudaMemcpyAsync(h1 + w.start[b] * ROW1, bt.data[1], bt.count * ROW1, cudaMemcpyDeviceToHost,
                                     consumer),
                     cudaSuccess);
        cr_assert_eq(vram_streamer_release(s, &bt), VRAM_OK);
    }
    cr_assert_eq(b, w.batches);
    cr_assert_eq(cudaStreamSynchronize(consumer), cudaSuccess);
    for (b = 0; b < w.batches; b++)
        for (uint64_t i = w.start[b]; i < w.start[b + 1]; i++) {
            uint64_t smp = w.samples[i];
            cr_assert(sc_row_ok(h0 + i * ROW0, 0, smp, ROW0), "batch %llu row %llu: /0 is not sample %llu's",
                      (unsigned long long)b, (unsigned long long)(i - w.start[b]), (unsigned long long)smp);
            cr_assert(sc_row_ok(h1 + i * ROW1, 1, smp, ROW1), "batch %llu row %llu: /1 is not sample %llu's",
                      (unsigned long long)b, (unsigned long long)(i - w.start[b]), (unsigned long long)smp);
        }
    vram_stream_stats all;
    cr_assert_eq(vram_streamer_stats(s, UINT64_MAX, &all), VRAM_OK);
    cr_assert_eq(all.bytes_copied, all.bytes_read, "every byte read went over the copy stream");
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
    sc_walk_free(&w);
    cudaFreeHost(h0);
    cudaFreeHost(h1);
    cudaStreamDestroy(consumer);
    free(d0);
    free(d1);
}

static void run(int shuffle, uint32_t world, uint32_t rank, uint64_t epochs, int drop_last) {
    run_on(0, shuffle, world, rank, epochs, drop_last);
}

Test(hw_stream, in_order_to_the_gpu) { run(0, 1, 0, 2, 0); }
Test(hw_stream, sharded_with_drop_last) {
    for (uint32_t r = 0; r < 3; r++) run(0, 3, r, 2, 1);
}
Test(hw_stream, shuffled_by_the_device_gather) { run(1, 1, 0, 3, 0); }
Test(hw_stream, shuffled_sharded) {
    for (uint32_t r = 0; r < 3; r++) run(1, 3, r, 2, r == 1);
}

/* The producer thread selects the stream's device: a stream on the last GPU leaves no
 * context on GPU 0 (a thread that did not would make one there and copy from it). */
Test(hw_stream, a_stream_on_another_gpu_leaves_gpu_0_alone) {
    int n = 0;
    cr_assert_eq(cudaGetDeviceCount(&n), cudaSuccess);
    if (n < 2) cr_skip_test("one GPU here: nothing to tell apart");
    cr_assert_eq(hw_context_active(0), 0, "GPU 0 held before the test");
    run_on(n - 1, 0, 1, 0, 1, 0);
    cr_expect_eq(hw_context_active(0), 0, "streaming on GPU %d made a context on GPU 0", n - 1);
    cr_expect_eq(hw_context_active(n - 1), 1);
}
