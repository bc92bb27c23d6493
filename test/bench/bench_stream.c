/* bench_stream: the streamer on a page-cached HDF5 file (issue 6). Writes (once) a file of
 * user-report 004's shape, /features n x 360 x 167 float32 and /targets n x 36 float32, reads
 * it once so it is in the page cache, measures the ceiling in the same run, then streams it
 * for several epochs and reports each epoch's rate as a fraction of that ceiling:
 *   --device cpu     the host backend; the ceiling is memcpy over as many threads as readers
 *                    (streaming from the page cache is a copy out of it);
 *   --device cuda:N  a GPU; the ceiling is a pinned host-to-device copy (cudaMemcpyAsync from
 *                    registered memory), as in issue 6's target (>= 80% of it).
 * Usage: bench_stream [--size SIZE] [--file PATH] [--device cpu|cuda:N] [--readers N]
 *                     [--batch N] [--budget SIZE] [--epochs N] [--shuffle] [--slabs]
 * (defaults: 2GiB, /tmp/vramkit-bench-stream-SIZE.h5, cpu, the CPUs (2..8), 128, 1GiB on
 * the host and 4GiB on a GPU, 3 epochs; --slabs stages through pinned slabs on the host too,
 * which the host backend otherwise skips). The file stays for the next run and for
 * baseline_h5py_torch.py, which reads the same file. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/text.h"
#include "cuda/cuda_device.h"
#include "device/host_device.h"
#include "stream/stream.h"

#ifdef VRAMKIT_HAVE_HDF5
#include <hdf5.h>

#include "hdf5/h5source.h"

#if defined(VRAMKIT_HAVE_CUDA) && defined(__has_include)
#if __has_include(<vramkit_kernels.h>)
#include <vramkit_kernels.h>
#define BENCH_GATHER vram_k_gather_rows
#endif
#endif

#define FEAT_ELEMS (360u * 167u)
#define TARG_ELEMS 36u
#define SAMPLE_BYTES ((FEAT_ELEMS + TARG_ELEMS) * 4u)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes n samples in blocks; the values are cheap and not all equal. */
static int write_file(const char *path, uint64_t n) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return -1;
    hsize_t fd[3] = {n, 360, 167}, td[2] = {n, TARG_ELEMS};
    hid_t fs = H5Screate_simple(3, fd, NULL), ts = H5Screate_simple(2, td, NULL);
    hid_t fds = H5Dcreate2(f, "/features", H5T_IEEE_F32LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t tds = H5Dcreate2(f, "/targets", H5T_IEEE_F32LE, ts, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const uint64_t block = 256;
    float *buf = (float *)malloc(block * FEAT_ELEMS * sizeof(float));
    int rc = fds >= 0 && tds >= 0 && buf ? 0 : -1;
    for (uint64_t s = 0; s < n && rc == 0; s += block) {
        uint64_t k = n - s < block ? n - s : block;
        for (uint64_t i = 0; i < k * FEAT_ELEMS; i++) buf[i] = (float)((s * FEAT_ELEMS + i) % 65521u);
        hsize_t start[3] = {s, 0, 0}, cnt[3] = {k, 360, 167};
        hid_t ms = H5Screate_simple(3, cnt, NULL);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
        if (H5Dwrite(fds, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, buf) < 0) rc = -1;
        H5Sclose(ms);
        hsize_t tstart[2] = {s, 0}, tcnt[2] = {k, TARG_ELEMS};
        ms = H5Screate_simple(2, tcnt, NULL);
        H5Sselect_hyperslab(ts, H5S_SELECT_SET, tstart, NULL, tcnt, NULL);
        if (H5Dwrite(tds, H5T_NATIVE_FLOAT, ms, ts, H5P_DEFAULT, buf) < 0) rc = -1;
        H5Sclose(ms);
    }
    free(buf);
    if (fds >= 0) H5Dclose(fds);
    if (tds >= 0) H5Dclose(tds);
    H5Sclose(fs);
    H5Sclose(ts);
    if (H5Fclose(f) < 0) rc = -1;
    return rc;
}

/* Reads the whole file once (into the page cache); returns GB/s. */
static double warm(const char *path, uint64_t *bytes) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    size_t cap = 64u << 20;
    char *b = (char *)malloc(cap);
    ssize_t r;
    double t0 = now();
    *bytes = 0;
    while (b && (r = read(fd, b, cap)) > 0) *bytes += (uint64_t)r;
    double t = now() - t0;
    free(b);
    close(fd);
    return (double)*bytes / t / 1e9;
}

/* ---- the ceilings ---------------------------------------------------------------------- */

typedef struct mc {
    char *dst;
    const char *src;
    size_t bytes;
    int reps;
} mc;

/* In 4 MiB pieces, the size of the streamer's reads (glibc switches to other stores for
 * single copies larger than part of the cache). */
static void *memcpy_thread(void *arg) {
    mc *m = (mc *)arg;
    const size_t piece = 4u << 20;
    for (int r = 0; r < m->reps; r++)
        for (size_t at = 0; at < m->bytes; at += piece) memcpy(m->dst + at, m->src + at, piece);
    return NULL;
}

/* memcpy over `threads` threads, each its own 64 MiB source and destination, in 4 MiB
 * pieces; GB/s copied. */
static double memcpy_ceiling(uint32_t threads) {
    const size_t per = 64u << 20;
    const int reps = 8;
    mc m[VRAM_STREAM_MAX_READERS];
    pthread_t th[VRAM_STREAM_MAX_READERS];
    for (uint32_t i = 0; i < threads; i++) {
        m[i].dst = (char *)malloc(per);
        m[i].src = (char *)malloc(per);
        if (!m[i].dst || !m[i].src) return 0;
        memset(m[i].dst, 1, per);
        memset((char *)m[i].src, 2, per);
        m[i].bytes = per;
        m[i].reps = reps;
    }
    double t0 = now();
    for (uint32_t i = 0; i < threads; i++) pthread_create(&th[i], NULL, memcpy_thread, &m[i]);
    for (uint32_t i = 0; i < threads; i++) pthread_join(th[i], NULL);
    double t = now() - t0;
    for (uint32_t i = 0; i < threads; i++) {
        free(m[i].dst);
        free((char *)m[i].src);
    }
    return (double)per * reps * threads / t / 1e9;
}

/* Pinned host-to-device copies of 256 MiB, 8 times, on one stream; GB/s. */
static double h2d_ceiling(const vram_device_ops *ops, int dev) {
    const uint64_t bytes = 256u << 20;
    void *h = NULL, *d = NULL;
    vram_stream s = NULL;
    double r = 0;
    if (ops->host_alloc_pinned(ops->ctx, bytes, &h) != VRAM_OK) return 0;
    if (ops->dev_alloc(ops->ctx, dev, bytes, &d) == VRAM_OK &&
        ops->stream_create(ops->ctx, dev, &s) == VRAM_OK) {
        memset(h, 3, bytes);
        ops->memcpy_async(ops->ctx, d, h, bytes, VRAM_COPY_H2D, s); /* warm-up */
        ops->stream_sync(ops->ctx, s);
        double t0 = now();
        for (int i = 0; i < 8; i++) ops->memcpy_async(ops->ctx, d, h, bytes, VRAM_COPY_H2D, s);
        ops->stream_sync(ops->ctx, s);
        r = (double)bytes * 8 / (now() - t0) / 1e9;
    }
    if (s) ops->stream_destroy(ops->ctx, s);
    if (d) ops->dev_free(ops->ctx, dev, d);
    ops->host_free_pinned(ops->ctx, h);
    return r;
}

int main(int argc, char **argv) {
    setenv("VRAMKIT_EXE", VRAMKIT_EXE, 0); /* HDF5 runs in a child: this build's vramkit */
    uint64_t size = UINT64_C(2) << 30, batch = 128, budget = 0, epochs = 3, v;
    uint32_t readers = 0;
    int cuda = 0, dev = 0, shuffle = 0, slabs = 0;
    char file[512] = "";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *n = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--size") == 0 && n && vram_parse_size(n, &size) == 0) i++;
        else if (strcmp(a, "--file") == 0 && n) snprintf(file, sizeof file, "%s", argv[++i]);
        else if (strcmp(a, "--device") == 0 && n && strcmp(n, "cpu") == 0) i++;
        else if (strcmp(a, "--device") == 0 && n && sscanf(n, "cuda:%d", &dev) == 1) cuda = 1, i++;
        else if (strcmp(a, "--readers") == 0 && n && vram_parse_u64(n, VRAM_STREAM_MAX_READERS, &v) == 0 && v) readers = (uint32_t)v, i++;
        else if (strcmp(a, "--batch") == 0 && n && vram_parse_u64(n, UINT64_MAX, &batch) == 0 && batch) i++;
        else if (strcmp(a, "--budget") == 0 && n && vram_parse_size(n, &budget) == 0 && budget) i++;
        else if (strcmp(a, "--epochs") == 0 && n && vram_parse_u64(n, 1000, &epochs) == 0 && epochs) i++;
        else if (strcmp(a, "--shuffle") == 0) shuffle = 1;
        else if (strcmp(a, "--slabs") == 0) slabs = 1;
        else {
            fprintf(stderr, "usage: bench_stream [--size SIZE] [--file PATH] [--device cpu|cuda:N] "
                            "[--readers N] [--batch N] [--budget SIZE] [--epochs N] [--shuffle] [--slabs]\n");
            return 2;
        }
    }
    uint64_t n = size / SAMPLE_BYTES;
    if (n == 0) n = 1;
    if (file[0] == '\0')
        snprintf(file, sizeof file, "/tmp/vramkit-bench-stream-%llu.h5", (unsigned long long)size);
    struct stat st;
    if (stat(file, &st) != 0 || (uint64_t)st.st_size < n * SAMPLE_BYTES) {
        printf("writing %s (%llu samples)...\n", file, (unsigned long long)n);
        fflush(stdout);
        if (write_file(file, n) != 0) {
            fprintf(stderr, "bench_stream: cannot write %s\n", file);
            return 3;
        }
    }
    uint64_t fbytes = 0;
    double warm_rate = warm(file, &fbytes);
    warm(file, &fbytes);
    double hot_rate = warm(file, &fbytes);

    vram_device_ops ops;
    if (cuda) {
        int count = 0;
        if (vram_cuda_ops(&ops) != VRAM_OK || ops.device_count(ops.ctx, &count) != VRAM_OK || dev >= count) {
            fprintf(stderr, "bench_stream: no usable GPU cuda:%d\n", dev);
            return 3;
        }
    } else {
        ops = vram_host_ops();
    }
    if (budget == 0) budget = cuda ? UINT64_C(4) << 30 : UINT64_C(1) << 30;

    const char *names[2] = {"/features", "/targets"};
    vram_h5_file *f = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    if (vram_h5_open(file, names, 2, &f, err, sizeof err) != VRAM_OK) {
        fprintf(stderr, "bench_stream: %s\n", err);
        return 3;
    }
    vram_source src = vram_h5_source(f);
    vram_stream_config c;
    memset(&c, 0, sizeof c);
    c.plan.batch = batch;
    c.plan.budget_bytes = budget;
    c.plan.shuffle = shuffle;
    c.staging = slabs ? VRAM_STAGE_SLABS : VRAM_STAGE_AUTO;
    c.epochs = epochs;
    c.readers = readers;
    c.device = dev;
    vram_stream consumer = NULL;
#ifdef BENCH_GATHER
    if (cuda) c.gather = BENCH_GATHER;
#endif
    if (cuda && ops.stream_create(ops.ctx, dev, &consumer) != VRAM_OK) {
        fprintf(stderr, "bench_stream: cannot create a stream\n");
        return 3;
    }
    c.consumer = consumer;
    c = vram_stream_defaults(&c, &src);

    /* the ceiling is measured before and after streaming; the higher one is used (a shared
     * machine only ever makes a measurement slower) */
    double ceiling = cuda ? h2d_ceiling(&ops, dev) : memcpy_ceiling(c.readers);
    double single = cuda ? 0 : memcpy_ceiling(1);
    double ceiling_before = ceiling;
    char sz[32], bz[32];
    printf("file      %s: %s, %llu samples of %u B (004's 360 x 167 float32 + 36 float32)\n", file,
           vram_fmt_size(fbytes, sz, sizeof sz), (unsigned long long)f->samples, SAMPLE_BYTES);
    printf("          paths: /features %s, /targets %s; read once cold-ish %.2f GB/s, page-cached %.2f GB/s (1 thread)\n",
           vram_h5_path_name(f->ds[0].path), vram_h5_path_name(f->ds[1].path), warm_rate, hot_rate);

    vram_streamer *s = NULL;
    double t0 = now();
    vram_status rs = vram_streamer_open(&ops, &src, &c, &s, err, sizeof err);
    if (rs != VRAM_OK) {
        fprintf(stderr, "bench_stream: %s\n", err);
        return 3;
    }
    double setup = now() - t0;
    const vram_chunks_plan *p = vram_streamer_plan(s);
    printf("stream    %s, %s staging, %u readers, batch %llu, budget %s: %llu chunks of %s, %s\n",
           cuda ? "cuda" : "cpu", vram_streamer_staging(s), c.readers, (unsigned long long)batch,
           vram_fmt_size(budget, bz, sizeof bz), (unsigned long long)p->chunk_count,
           vram_fmt_size(p->bytes_per_chunk, sz, sizeof sz), shuffle ? "shuffled" : "in order");
    for (;;) {
        vram_batch b;
        rs = vram_streamer_next(s, &b);
        if (rs != VRAM_OK) {
            fprintf(stderr, "bench_stream: %s\n", vram_streamer_error(s));
            return 3;
        }
        if (b.done) break;
        if (b.epoch_end && cuda) ops.stream_sync(ops.ctx, consumer); /* the epoch's data is there */
        vram_streamer_release(s, &b);
    }
    if (cuda) ops.stream_sync(ops.ctx, consumer);
    double total = now() - t0;
    double ceiling_after = cuda ? h2d_ceiling(&ops, dev) : memcpy_ceiling(c.readers);
    ceiling = ceiling_after > ceiling ? ceiling_after : ceiling;

    if (cuda)
        printf("ceiling   pinned host-to-device copy: %.2f GB/s (before %.2f, after %.2f)\n", ceiling,
               ceiling_before, ceiling_after);
    else
        printf("ceiling   memcpy on %u threads: %.2f GB/s (before %.2f, after %.2f; 1 thread: %.2f GB/s)\n",
               c.readers, ceiling, ceiling_before, ceiling_after, single);

    double best = 0;
    for (uint64_t e = 0; e < epochs; e++) {
        vram_stream_stats x;
        vram_streamer_stats(s, e, &x);
        double r = (double)x.bytes_delivered / x.seconds / 1e9;
        best = r > best ? r : best;
        printf("epoch %llu   %.2f GB/s = %.0f%% of the ceiling (read %.2f s over %u readers, copy %.2f s, "
               "consumer waited %.2f s of %.2f s)\n",
               (unsigned long long)e, r, 100.0 * r / ceiling, x.read_seconds, c.readers, x.copy_seconds,
               x.wait_seconds, x.seconds);
    }
    vram_stream_stats all;
    vram_streamer_stats(s, UINT64_MAX, &all);
    double overall = (double)all.bytes_delivered / total / 1e9;
    printf("result    best epoch %.2f GB/s = %.0f%% of the ceiling; all %llu epochs with setup (%.2f s) "
           "%.2f GB/s = %.0f%%\n",
           best, 100.0 * best / ceiling, (unsigned long long)epochs, setup, overall, 100.0 * overall / ceiling);

    vram_streamer_close(s);
    if (consumer) ops.stream_destroy(ops.ctx, consumer);
    vram_h5_close(f);
    return 0;
}

#else

int main(void) {
    printf("bench_stream: skipped, this build has no HDF5\n");
    return 0;
}

#endif
