/* driver/plan/workload.h — a workload (vramkit/estimate.h) from its text form: the values of
 * the workload options (--mode train, --format int4, --batch 8, ...) as the CLI takes them and
 * a saved plan stores them. One reader for both, so a plan file means what the flags mean.
 * Prints nothing. */
#ifndef VRAMKIT_DRIVER_WORKLOAD_H
#define VRAMKIT_DRIVER_WORKLOAD_H

#include <stddef.h>

#include <vramkit/estimate.h>

/* The options, numbered from VRAM_WL_BASE so a command's getopt codes can sit below. */
typedef enum vram_wl_option {
    VRAM_WL_BASE = 1000,
    VRAM_WL_MODE = VRAM_WL_BASE, /* infer|inference|train|training */
    VRAM_WL_FORMAT,              /* a weight format or alias (fp16, int4, q4_k, ...) */
    VRAM_WL_COMPUTE,             /* f32, f16, bf16 (and their aliases) */
    VRAM_WL_BATCH,               /* 1 .. 10^9 */
    VRAM_WL_SEQ,                 /* 1 .. 10^9 */
    VRAM_WL_SRC,                 /* 1 .. 10^9 */
    VRAM_WL_TGT,                 /* 1 .. 10^9 */
    VRAM_WL_OPTIMIZER,           /* adamw|adam|sgd-momentum|sgd_momentum|sgd|adam8bit|adam-8bit */
    VRAM_WL_CHECKPOINTING,       /* a flag: no value */
    VRAM_WL_FLASH,               /* a flag: no value */
    VRAM_WL_GRAD_ACCUM,          /* 1 .. 10^6 */
    VRAM_WL_LORA_RANK,           /* 1 .. 65536 */
    VRAM_WL_LORA_TARGETS,        /* a comma list of q, k, v, o, mlp, all */
    VRAM_WL_IMAGES,              /* 1 .. 10^6 images per sequence */
    VRAM_WL_IMAGE_TOKENS,        /* 1 .. 10^9 image tokens per sequence */
    VRAM_WL_LOGITS,              /* last|all */
    VRAM_WL_END
} vram_wl_option;

/* The option's name as the CLI spells it ("lora-rank"); NULL out of range. */
const char *vram_wl_option_name(vram_wl_option opt);

/* A storage format from the user's spelling: vramkit's names (f16, bf16, nf4, q4_k, ...) and
 * the aliases fp32/float32, fp16/float16/half, bfloat16, int4 (nf4), int4_double (nf4_dq),
 * fp8 (f8_e4m3), aliases case-insensitive. VRAM_OK or VRAM_E_INVALID. */
vram_status vram_wl_format(const char *text, vram_dtype *out);

/* Applies one option's value (ignored for the flags) to w. VRAM_OK, or VRAM_E_INVALID with
 * err one line naming the option ("--batch: 'x' is not a whole number from 1 to
 * 1000000000") and w unchanged. */
vram_status vram_wl_apply(vram_workload *w, vram_wl_option opt, const char *arg, char *err,
                          size_t cap);

/* Does w suit model m (named label)? VRAM_E_INVALID with err one line when w gives --images
 * for a model whose images add no tokens (no vision tower); else VRAM_OK. */
vram_status vram_wl_check_model(const vram_workload *w, const vram_model *m, const char *label,
                                char *err, size_t cap);

#endif /* VRAMKIT_DRIVER_WORKLOAD_H */
