/* bench_plan: the strategy chain for a 1,000-block model over 8 GPUs (issue 3: "a
 * 1,000-layer model split over 8 devices ... well under a second"). Times, each as the
 * median of many runs: the multi_gpu split and the gpu_cpu split of the model's numbers
 * alone (vram_split_gpus, vram_split_gpu_cpu), and the whole chain (six candidates, each
 * with its own estimate). Prints the plan it timed so the numbers can be checked.
 * Usage: bench_plan [runs]   (default 2001) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vramkit/strategy.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile uint64_t sink;

/* Median, min and max of `runs` timings of one call, each call timed alone (reps calls per
 * sample, for calls shorter than the clock's resolution). */
static void report(const char *what, double *t, int runs, int reps) {
    qsort(t, (size_t)runs, sizeof t[0], cmp_double);
    printf("%-34s median %10.1f ns   min %10.1f ns   max %10.1f ns   (%d samples x %d calls)\n",
           what, t[runs / 2] / reps, t[0] / reps, t[runs - 1] / reps, runs, reps);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 2001;
    const int reps = 100;
    vram_model m;
    vram_workload w;
    vram_devices d;
    vram_chain c;
    vram_split s;
    vram_candidate cand;
    double *t;
    if (runs < 1) runs = 1;
    t = (double *)malloc(sizeof(double) * (size_t)runs);
    if (!t) return 1;

    /* 1,000 decoder blocks of width 4096 (Llama-like: 32 heads, 8 KV heads, gated MLP of
       14336): ~218B parameters, ~436 GB in 16-bit; eight 80 GB GPUs, 60 GB of it free */
    memset(&m, 0, sizeof m);
    m.arch.family = VRAM_FAMILY_DECODER;
    m.arch.layers = 1000;
    m.arch.hidden = 4096;
    m.arch.heads = 32;
    m.arch.kv_heads = 8;
    m.arch.intermediate = 14336;
    m.arch.vocab = 128256;
    m.arch.context = 8192;
    m.arch.mlp = VRAM_MLP_GATED;
    m.arch.norm = VRAM_NORM_RMS;
    m.arch.flags = VRAM_ARCH_FINAL_NORM;
    m.dtype = VRAM_DTYPE_BF16;
    memset(&w, 0, sizeof w);
    w.seq = 4096;
    memset(&d, 0, sizeof d);
    d.gpus = 8;
    for (int i = 0; i < 8; i++) {
        d.gpu[i].total = 80ull << 30;
        d.gpu[i].free = 60ull << 30;
        d.gpu[i].cc_major = 9;
    }
    d.host_free = 2048ull << 30;

    if (vram_strategy_chain(&m, &w, &d, &c) != VRAM_OK) {
        fprintf(stderr, "bench_plan: the chain failed\n");
        return 1;
    }
    printf("model: %llu blocks, %llu parameters; 8 GPUs of 60 GiB free, host 2 TiB\n",
           (unsigned long long)c.cand[VRAM_STRATEGY_MULTI_GPU].blocks,
           (unsigned long long)c.cand[VRAM_STRATEGY_CPU].estimate.params);
    for (int i = 0; i < c.count; i++) {
        const vram_candidate *k = &c.cand[i];
        uint64_t blocks = 0;
        int used = 0;
        for (int g = 0; g < 8; g++) {
            blocks += k->gpu_blocks[g];
            used += (int)((k->gpu_mask >> g) & 1u);
        }
        printf("  %-10s %-15s GPUs used %d, blocks on GPUs %5llu, on host %5llu, needed %.1f GiB\n",
               k->name, vram_reason_name(k->reason), used, (unsigned long long)blocks,
               (unsigned long long)k->cpu_blocks, (double)k->needed / (double)(1ull << 30));
    }
    printf("chosen: %s\n\n", c.chosen >= 0 ? c.cand[c.chosen].name : "none");

    s.fixed = c.cand[VRAM_STRATEGY_MULTI_GPU].fixed_bytes;
    s.rest = c.cand[VRAM_STRATEGY_MULTI_GPU].rest_bytes;
    s.block = c.cand[VRAM_STRATEGY_MULTI_GPU].block_bytes;
    s.blocks = c.cand[VRAM_STRATEGY_MULTI_GPU].blocks;

    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (int k = 0; k < reps; k++) {
            if (vram_split_gpus(&d, &s, &cand) != VRAM_OK) return 1;
            sink += cand.gpu_blocks[k & 7];
        }
        t[r] = now_ns() - t0;
    }
    report("multi_gpu split (vram_split_gpus)", t, runs, reps);

    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (int k = 0; k < reps; k++) {
            if (vram_split_gpu_cpu(&d, &s, &cand) != VRAM_OK) return 1;
            sink += cand.cpu_blocks;
        }
        t[r] = now_ns() - t0;
    }
    report("gpu_cpu split (vram_split_gpu_cpu)", t, runs, reps);

    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (int k = 0; k < reps; k++) {
            if (vram_strategy_chain(&m, &w, &d, &c) != VRAM_OK) return 1;
            sink += (uint64_t)c.chosen;
        }
        t[r] = now_ns() - t0;
    }
    report("whole chain (vram_strategy_chain)", t, runs, reps);
    free(t);
    return 0;
}
