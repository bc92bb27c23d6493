/* driver/cli/cli_model.c — see cli_model.h. */
#include "cli_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "models/builtin_models.h"
#include "plan/workload.h"

/* ---- finding a model ------------------------------------------------------------- */

int cli_model_resolve(const char *cmd, const char *arg, vram_model_ref *out) {
    char err[1200];
    vram_status st = vram_model_find(arg, out, err, sizeof err);
    if (st == VRAM_OK) return 0;
    return cli_error(cli_exit_code(st), cmd,
                     "%s", err);
}

void cli_model_list(FILE *out) {
    size_t n = 0;
    const vram_builtin_model *all = vram_builtin_models(&n);
    for (size_t i = 0; i < n; i++) {
        vram_param_count c;
        char ps[32] = "?";
        if (vram_arch_params(&all[i].arch, &c) == VRAM_OK)
            snprintf(ps, sizeof ps, "%.2fB", (double)c.total / 1e9);
        fprintf(out, "  %-26s %7s params  %s\n", all[i].name, ps, all[i].summary);
    }
}

/* ---- workload options -------------------------------------------------------------- */

const char cli_workload_help[] =
    "workload:\n"
    "  --mode infer|train   inference (default) or training\n"
    "  --format F           weights: fp32, fp16, bf16, int8, int4, int4_double, fp4, or a GGUF\n"
    "                       format (q4_k, ...); default: as published\n"
    "  --compute F          activations: f32, f16, bf16 (default from the weights)\n"
    "  --batch N            sequences per step (default 1)\n"
    "  --seq N              tokens per sequence (default: the model's context, at most 2048)\n"
    "  --src-len N, --tgt-len N  encoder-decoder source and target tokens (default --seq)\n"
    "  --optimizer O        adamw (default), adam, sgd-momentum, sgd, adam8bit\n"
    "  --checkpointing      training: recompute activations per block\n"
    "  --flash-attention    fused attention: no sequence x sequence scores\n"
    "  --grad-accum N       micro-batches per step (above 1: gradients kept through backward)\n"
    "  --lora-rank R        training: LoRA adapters of rank R on frozen weights\n"
    "  --lora-targets LIST  q,k,v,o,mlp or all (default q,v)\n"
    "  --images N, --image-tokens N  vision-language models: images, or image tokens, per\n"
    "                       sequence\n"
    "  --logits last|all    inference: the last position's logits (generate()) or every\n"
    "                       position's (scoring, masked-LM, seq2seq); default by model kind\n"
    "\n";

int cli_parse_gpu_spec(const char *cmd, const char *text, vram_gpu_budget *out) {
    char err[512];
    if (vram_gpu_spec_parse(text, out, err, sizeof err) != VRAM_OK) return cli_usage_error(cmd, "%s", err);
    return 0;
}

/* ---- printing ------------------------------------------------------------------------ */

void cli_workload_text(const vram_model *m, const vram_workload *w, const vram_estimate *e,
                       char *buf, size_t cap) {
    int n;
    if (m->arch.family == VRAM_FAMILY_ENCODER_DECODER)
        n = snprintf(buf, cap, "%s, batch %llu, source %llu and target %llu tokens",
                     w->mode == VRAM_MODE_TRAIN ? "training" : "inference",
                     (unsigned long long)e->batch,
                     (unsigned long long)e->src_len, (unsigned long long)e->tgt_len);
    else
        n = snprintf(buf, cap, "%s, batch %llu, sequence %llu",
                     w->mode == VRAM_MODE_TRAIN ? "training" : "inference",
                     (unsigned long long)e->batch, (unsigned long long)e->seq);
    if (n >= 0 && (size_t)n < cap && e->image_tokens != 0)
        n += snprintf(buf + n, cap - (size_t)n, " (%llu of them image tokens)",
                      (unsigned long long)e->image_tokens);
    if (n < 0 || (size_t)n >= cap) return;
    n += snprintf(buf + n, cap - (size_t)n, ", weights %s, compute %s",
                  vram_dtype_name(e->format), vram_dtype_name(e->compute));
    if (w->mode == VRAM_MODE_TRAIN && (size_t)n < cap) {
        n += snprintf(buf + n, cap - (size_t)n, ", %s%s%s", vram_optimizer_name(w->optimizer),
                      w->checkpointing ? ", checkpointing" : "",
                      w->lora_rank ? ", LoRA" : "");
        if (w->lora_rank && (size_t)n < cap)
            n += snprintf(buf + n, cap - (size_t)n, " rank %llu", (unsigned long long)w->lora_rank);
        if (w->grad_accum > 1 && (size_t)n < cap)
            snprintf(buf + n, cap - (size_t)n, ", %llu micro-batches per step",
                     (unsigned long long)w->grad_accum);
    } else if ((size_t)n < cap) {
        if (e->logits != VRAM_LOGITS_DEFAULT)
            n += snprintf(buf + n, cap - (size_t)n, ", logits of %s",
                          e->logits == VRAM_LOGITS_ALL ? "every position" : "the last position");
        if (w->flash_attention && n >= 0 && (size_t)n < cap)
            snprintf(buf + n, cap - (size_t)n, ", flash attention");
    }
}

void cli_estimate_table(FILE *out, const vram_estimate *e) {
    char a[32], b[32], c[32];
    int causes[VRAM_CAUSE_COUNT] = {0};
    fprintf(out, "  %-17s %12s %12s %12s  %s\n", "term", "low", "expected", "high", "range");
    for (int i = 0; i < VRAM_TERM_COUNT; i++) {
        const vram_term *t = &e->term[i];
        if (t->high == 0) continue;
        fprintf(out, "  %-17s %12s %12s %12s  %s\n", vram_term_name((vram_term_id)i),
                vram_fmt_size(t->low, a, sizeof a), vram_fmt_size(t->expected, b, sizeof b),
                vram_fmt_size(t->high, c, sizeof c),
                t->low == t->high ? "exact" : vram_cause_name(t->cause));
        if (t->low != t->high) causes[t->cause] = 1;
    }
    fprintf(out, "  %-17s %12s %12s %12s\n", "total", vram_fmt_size(e->low, a, sizeof a),
            vram_fmt_size(e->expected, b, sizeof b), vram_fmt_size(e->high, c, sizeof c));
    for (int k = 0; k < VRAM_CAUSE_COUNT; k++)
        if (causes[k])
            fprintf(out, "  %s: %s\n", vram_cause_name((vram_cause)k),
                    vram_cause_text((vram_cause)k));
    if (e->notes & VRAM_NOTE_NO_ARCH)
        fprintf(out, "  note: no architecture numbers (config.json): activations, KV cache and "
                     "logits are not counted\n");
    if (e->notes & VRAM_NOTE_DTYPE_ASSUMED)
        fprintf(out, "  note: the published format is unknown; f16 assumed\n");
}

void cli_machine_text(FILE *out, const vram_machine_view *v) {
    char a[32];
    if (strcmp(v->source, "nvml") == 0)
        fprintf(out, "GPUs read through NVML (no CUDA context made)\n");
    else if (strcmp(v->source, "cuda") == 0)
        fprintf(out, "GPUs read through the CUDA runtime (not NVML: %s)\n", v->note);
    if (!v->tenants_known) return;
    if (v->ntenants == 0) {
        fprintf(out, "no other process holds memory on these GPUs\n");
        return;
    }
    for (int i = 0; i < v->ntenants; i++) {
        const vram_machine_tenant *t = &v->tenants[i];
        if (i == 0 || t->gpu != v->tenants[i - 1].gpu)
            fprintf(out, "%sGPU %d also used by: ", i ? "\n" : "", t->gpu);
        else
            fprintf(out, ", ");
        fprintf(out, "%s (pid %u) %s", t->name[0] ? t->name : "?", (unsigned)t->pid,
                t->bytes == VRAM_GPUMEM_UNKNOWN ? "memory not shown"
                                                : vram_fmt_size(t->bytes, a, sizeof a));
    }
    fprintf(out, "\n");
    if (v->tenants_more) fprintf(out, "and %d more processes\n", v->tenants_more);
}

