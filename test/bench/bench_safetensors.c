/* Benchmark: parsing the header of a 100,000-tensor safetensors file (vram_safetensors_parse:
 * cJSON, every check, classification and statistics). The header is built in memory: Llama-
 * style names over 10,000 blocks, 2-D F16 shapes, contiguous offsets, about 10 MB of JSON.
 * Reports the median of 7 runs (after one warm-up) as seconds, tensors/s and MB/s of header,
 * and the ratio to the floor of any cJSON-based reader measured in the same run: cJSON
 * parsing and freeing the same text, nothing else.
 * Usage: bench_safetensors [tensors] (default 100000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bench_gen.h"
#include "models/model_read.h"

#define RUNS 7

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long tensors = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    if (tensors <= 0 || tensors > 10000000) {
        fprintf(stderr, "usage: %s [tensors (1..10000000)]\n", argv[0]);
        return 2;
    }
    uint64_t off = 0;
    size_t n = 0;
    char *json = bench_header(0, tensors, &off, &n);

    double t[RUNS];
    vram_model m;
    char err[512];
    for (int r = -1; r < RUNS; r++) {
        double t0 = now();
        vram_status st = vram_safetensors_parse(json, n, off, "bench", &m, err, sizeof err);
        double t1 = now();
        if (st != VRAM_OK) {
            fprintf(stderr, "bench_safetensors: %s\n", err);
            free(json);
            return 1;
        }
        if (r >= 0) t[r] = t1 - t0;
    }
    if (m.stats.tensors != (uint64_t)tensors || m.blocks != (uint64_t)(tensors + 9) / 10 ||
        m.stats.bytes != off) {
        fprintf(stderr, "bench_safetensors: wrong statistics\n");
        free(json);
        return 1;
    }
    double f[RUNS];
    for (int r = -1; r < RUNS; r++) {
        double t0 = now();
        cJSON *doc = cJSON_ParseWithLength(json, n);
        cJSON_Delete(doc);
        double t1 = now();
        if (doc == NULL) {
            fprintf(stderr, "bench_safetensors: cJSON rejected the header\n");
            free(json);
            return 1;
        }
        if (r >= 0) f[r] = t1 - t0;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    qsort(f, RUNS, sizeof f[0], cmp_double);
    double med = t[RUNS / 2], floor_med = f[RUNS / 2];
    printf("safetensors header: %ld tensors, %zu bytes of JSON, %llu blocks\n", tensors, n,
           (unsigned long long)m.blocks);
    printf("parse: median %.4f s of %d runs (min %.4f, max %.4f)\n", med, RUNS, t[0], t[RUNS - 1]);
    printf("       %.0f tensors/s, %.1f MB/s of header\n", (double)tensors / med,
           (double)n / med / 1e6);
    printf("cJSON parse + free alone: median %.4f s; vramkit's parse = %.2f x that floor\n",
           floor_med, med / floor_med);
    free(json);
    return 0;
}
