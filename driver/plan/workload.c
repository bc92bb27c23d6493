/* driver/plan/workload.c — see workload.h. */
#include "workload.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/text.h"

const char *vram_wl_option_name(vram_wl_option opt) {
    static const char *const names[] = {
        "mode",       "format",    "compute",     "batch",         "seq",
        "src-len",    "tgt-len",   "optimizer",   "checkpointing", "flash-attention",
        "grad-accum", "lora-rank", "lora-targets", "images",        "image-tokens",
        "logits"};
    if (opt < VRAM_WL_BASE || opt >= VRAM_WL_END) return NULL;
    return names[opt - VRAM_WL_BASE];
}

vram_status vram_wl_format(const char *text, vram_dtype *out) {
    static const struct {
        const char *alias;
        vram_dtype t;
    } aliases[] = {{"fp32", VRAM_DTYPE_F32},   {"float32", VRAM_DTYPE_F32},
                   {"fp16", VRAM_DTYPE_F16},   {"float16", VRAM_DTYPE_F16},
                   {"half", VRAM_DTYPE_F16},   {"bfloat16", VRAM_DTYPE_BF16},
                   {"int4", VRAM_DTYPE_NF4},   {"int4_double", VRAM_DTYPE_NF4_DQ},
                   {"fp8", VRAM_DTYPE_F8_E4M3}};
    if (text == NULL || text[0] == '\0') return VRAM_E_INVALID;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcasecmp(text, aliases[i].alias) == 0) {
            *out = aliases[i].t;
            return VRAM_OK;
        }
    }
    return vram_dtype_from_name(text, strlen(text), out) == VRAM_OK ? VRAM_OK : VRAM_E_INVALID;
}

/* A whole number from 1 to max (vram_parse_u64). */
static vram_status count(vram_wl_option opt, const char *text, uint64_t max, uint64_t *out,
                         char *err, size_t cap) {
    uint64_t v = 0;
    if (vram_parse_u64(text, max, &v) != VRAM_OK || v == 0)
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "--%s: '%s' is not a whole number from 1 to %llu",
                           vram_wl_option_name(opt), text, (unsigned long long)max);
    *out = v;
    return VRAM_OK;
}

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

static vram_status lora_targets(const char *arg, uint32_t *out, char *err, size_t cap) {
    char buf[128];
    uint32_t t = 0;
    if (strlen(arg) >= sizeof buf || arg[0] == '\0')
        FAIL("--lora-targets: '%s' is not a list of q,k,v,o,mlp", arg);
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "q") == 0) t |= VRAM_LORA_Q;
        else if (strcmp(tok, "k") == 0) t |= VRAM_LORA_K;
        else if (strcmp(tok, "v") == 0) t |= VRAM_LORA_V;
        else if (strcmp(tok, "o") == 0) t |= VRAM_LORA_O;
        else if (strcmp(tok, "mlp") == 0) t |= VRAM_LORA_MLP;
        else if (strcmp(tok, "all") == 0) t |= VRAM_LORA_ALL;
        else FAIL("--lora-targets: '%s' is not one of q, k, v, o, mlp, all", tok);
    }
    if (t == 0 || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,") || arg[0] == ',')
        FAIL("--lora-targets: '%s' has an empty item", arg);
    *out = t;
    return VRAM_OK;
}

vram_status vram_wl_check_model(const vram_workload *w, const vram_model *m, const char *label,
                                char *err, size_t cap) {
    if (w->images != 0 && w->image_tokens == 0 && m->image_tokens == 0)
        FAIL("--images: %s has no vision tower whose images add tokens to its sequence "
             "(--image-tokens N adds N tokens)",
             label);
    return VRAM_OK;
}

vram_status vram_wl_apply(vram_workload *w, vram_wl_option opt, const char *arg, char *err,
                          size_t cap) {
    vram_dtype t;
    vram_dtype_layout l;
    switch (opt) {
    case VRAM_WL_MODE:
        if (strcmp(arg, "infer") == 0 || strcmp(arg, "inference") == 0) w->mode = VRAM_MODE_INFER;
        else if (strcmp(arg, "train") == 0 || strcmp(arg, "training") == 0)
            w->mode = VRAM_MODE_TRAIN;
        else FAIL("--mode: '%s' is not infer or train", arg);
        return VRAM_OK;
    case VRAM_WL_FORMAT:
        if (vram_wl_format(arg, &t) != VRAM_OK || vram_dtype_get(t, &l) != VRAM_OK ||
            l.kind == VRAM_DTYPE_INT)
            FAIL("--format: '%s' is not a weight format (fp32, fp16, bf16, int8, int4, "
                 "int4_double, fp4, q4_k, ...)",
                 arg);
        w->format = t;
        return VRAM_OK;
    case VRAM_WL_COMPUTE:
        if (vram_wl_format(arg, &t) != VRAM_OK ||
            (t != VRAM_DTYPE_F32 && t != VRAM_DTYPE_F16 && t != VRAM_DTYPE_BF16))
            FAIL("--compute: '%s' is not f32, f16 or bf16", arg);
        w->compute = t;
        return VRAM_OK;
    case VRAM_WL_BATCH: return count(opt, arg, 1000000000u, &w->batch, err, cap);
    case VRAM_WL_SEQ: return count(opt, arg, 1000000000u, &w->seq, err, cap);
    case VRAM_WL_SRC: return count(opt, arg, 1000000000u, &w->src_len, err, cap);
    case VRAM_WL_TGT: return count(opt, arg, 1000000000u, &w->tgt_len, err, cap);
    case VRAM_WL_OPTIMIZER:
        if (vram_optimizer_from_name(arg, strlen(arg), &w->optimizer) != VRAM_OK)
            FAIL("--optimizer: '%s' is not adamw, adam, sgd-momentum, sgd or adam8bit", arg);
        return VRAM_OK;
    case VRAM_WL_CHECKPOINTING: w->checkpointing = 1; return VRAM_OK;
    case VRAM_WL_FLASH: w->flash_attention = 1; return VRAM_OK;
    case VRAM_WL_GRAD_ACCUM: return count(opt, arg, 1000000u, &w->grad_accum, err, cap);
    case VRAM_WL_LORA_RANK: return count(opt, arg, 65536u, &w->lora_rank, err, cap);
    case VRAM_WL_LORA_TARGETS: return lora_targets(arg, &w->lora_targets, err, cap);
    case VRAM_WL_IMAGES: return count(opt, arg, 1000000u, &w->images, err, cap);
    case VRAM_WL_IMAGE_TOKENS: return count(opt, arg, 1000000000u, &w->image_tokens, err, cap);
    case VRAM_WL_LOGITS:
        if (strcmp(arg, "last") == 0) w->logits = VRAM_LOGITS_LAST;
        else if (strcmp(arg, "all") == 0) w->logits = VRAM_LOGITS_ALL;
        else FAIL("--logits: '%s' is not last or all", arg);
        return VRAM_OK;
    default: FAIL("internal: unknown workload option %d", (int)opt);
    }
}
