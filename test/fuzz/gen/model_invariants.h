/* test/fuzz/gen/model_invariants.h — what every model reader's answer must satisfy, checked
 * by the fuzz harnesses (fuzz_safetensors.c, fuzz_gguf.c, fuzz_config.c): on success, the
 * statistics are consistent with each other and the architecture passes the core's check; on
 * failure, one line naming the input and an output left exactly as it was. */
#ifndef VRAMKIT_MODEL_INVARIANTS_H
#define VRAMKIT_MODEL_INVARIANTS_H

#include <string.h>

#include <vramkit/model.h>

#include "fuzz_common.h"

/* The byte every output model is filled with before a call, to see it untouched on error. */
#define FUZZ_MODEL_POISON 0xa5

static inline void fuzz_model_poison(vram_model *m) { memset(m, FUZZ_MODEL_POISON, sizeof *m); }

static inline void fuzz_check_stats(const vram_model *m) {
    const vram_tensor_stats *s = &m->stats;
    uint64_t sum = 0;
    for (int t = 0; t < VRAM_DTYPE_COUNT; t++) {
        FUZZ_CHECK(s->dtype_bytes[t] <= s->bytes);
        sum += s->dtype_bytes[t];
    }
    FUZZ_CHECK(sum == s->bytes);
    FUZZ_CHECK(s->matrix_params <= s->block_params);
    FUZZ_CHECK(s->block_params <= s->params);
    FUZZ_CHECK(s->outer_params <= s->params - s->matrix_params);
    FUZZ_CHECK(s->block_bytes <= s->bytes);
    FUZZ_CHECK(s->largest_bytes <= s->bytes);
    FUZZ_CHECK(s->matrices + s->outer_matrices <= s->tensors);
    FUZZ_CHECK(m->blocks <= s->tensors);
    FUZZ_CHECK(s->tensors > 0 || (s->params == 0 && s->bytes == 0 && m->blocks == 0));
    FUZZ_CHECK(s->block_params == 0 || m->blocks > 0);
    FUZZ_CHECK((int)m->dtype >= VRAM_DTYPE_NONE && (int)m->dtype < VRAM_DTYPE_COUNT);
}

static inline void fuzz_check_arch(const vram_model *m) {
    if (m->arch.family == VRAM_FAMILY_NONE) return;
    vram_param_count pc;
    FUZZ_CHECK(vram_arch_check(&m->arch) == VRAM_OK);
    FUZZ_CHECK(vram_arch_params(&m->arch, &pc) == VRAM_OK);
    FUZZ_CHECK(pc.total >= pc.blocks);
}

/* A reader's answer: err must start with "label: " on failure and be one line always; on
 * failure the model must still hold the poison. */
static inline void fuzz_check_answer(vram_status st, const vram_model *m, const char *err,
                                     const char *label) {
    FUZZ_CHECK(strchr(err, '\n') == NULL);
    if (st == VRAM_OK) {
        fuzz_check_stats(m);
        fuzz_check_arch(m);
        FUZZ_CHECK(err[0] == '\0' || strncmp(err, label, strlen(label)) == 0);
        return;
    }
    FUZZ_CHECK(st == VRAM_E_FORMAT || st == VRAM_E_UNHANDLED || st == VRAM_E_OVERFLOW ||
               st == VRAM_E_IO || st == VRAM_E_OOM);
    FUZZ_CHECK(strncmp(err, label, strlen(label)) == 0 && err[strlen(label)] == ':');
    const unsigned char *p = (const unsigned char *)m;
    for (size_t i = 0; i < sizeof *m; i++)
        FUZZ_CHECK(p[i] == FUZZ_MODEL_POISON);
}

#endif
