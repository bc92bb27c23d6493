/* bench_gen.h — the safetensors header the header benchmarks read: Llama-style names over
 * blocks of 10 tensors, 2-D F16 shapes, contiguous offsets; about 115 bytes of JSON a tensor.
 * Tensors [from, to) with offsets from 0 (one file, or one shard of a set). */
#ifndef VRAMKIT_BENCH_GEN_H
#define VRAMKIT_BENCH_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const bench_parts[10] = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj",    "input_layernorm",
    "post_attention_layernorm", "self_attn.rotary"};

/* The header's JSON (malloc'd, *len bytes) and its data section's bytes in *data. */
static char *bench_header(long from, long to, uint64_t *data, size_t *len) {
    size_t cap = (size_t)(to - from) * 128 + 64, n = 0;
    char *json = malloc(cap);
    uint64_t off = 0;
    if (json == NULL) exit(3);
    n += (size_t)snprintf(json + n, cap - n, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (long i = from; i < to; i++) {
        const uint64_t rows = 64 + (uint64_t)(i % 7) * 32, cols = 128, bytes = rows * cols * 2;
        n += (size_t)snprintf(json + n, cap - n,
                              ",\"model.layers.%ld.%s.weight\":{\"dtype\":\"F16\",\"shape\":[%llu,"
                              "%llu],\"data_offsets\":[%llu,%llu]}",
                              i / 10, bench_parts[i % 10], (unsigned long long)rows,
                              (unsigned long long)cols, (unsigned long long)off,
                              (unsigned long long)(off + bytes));
        off += bytes;
    }
    n += (size_t)snprintf(json + n, cap - n, "}");
    *data = off;
    *len = n;
    return json;
}

#endif /* VRAMKIT_BENCH_GEN_H */
