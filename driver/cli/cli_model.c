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
    "  --mode infer|train     inference (default) or training\n"
    "  --format F             storage of the weights: fp32, fp16, bf16, int8, int4 (nf4),\n"
    "                         int4_double (nf4_dq), fp4, or a GGUF format (q4_k, q8_0, ...);\n"
    "                         default: as published\n"
    "  --compute F            activations: f32, f16 or bf16 (default: f32 for fp32 weights,\n"
    "                         bf16 for bf16 models, else f16; 16-bit training is mixed\n"
    "                         precision with fp32 master weights)\n"
    "  --batch N              sequences per step (the micro-batch; default 1)\n"
    "  --seq N                tokens per sequence, prompt and generated (default: the\n"
    "                         model's context, at most 2048)\n"
    "  --src-len N, --tgt-len N  encoder-decoder source and target tokens (default --seq)\n"
    "  --optimizer O          adamw (default; also adam), sgd-momentum, sgd, adam8bit\n"
    "  --checkpointing        training: recompute activations per block\n"
    "  --flash-attention      fused attention: no sequence x sequence score matrix\n"
    "  --grad-accum N         micro-batches per step (changes no memory; shown)\n"
    "  --lora-rank R          training: LoRA adapters of rank R on frozen (possibly\n"
    "                         quantised) weights\n"
    "  --lora-targets LIST    q,k,v,o,mlp or all (default q,v)\n"
    "  --images N             vision-language models: images per sequence, each adding the\n"
    "                         model's image tokens to the sequence (default 1)\n"
    "  --image-tokens N       image tokens per sequence, whatever the model's per image says\n"
    "                         (dynamic resolution, several images); added to --seq\n";

int cli_workload_option(const char *cmd, int code, const char *arg, vram_workload *w) {
    char err[512];
    if (vram_wl_apply(w, (vram_wl_option)code, arg, err, sizeof err) != VRAM_OK)
        return cli_usage_error(cmd, "%s", err);
    return 0;
}

/* ---- --assume-gpu -------------------------------------------------------------------- */

int cli_parse_gpu_spec(const char *cmd, const char *text, vram_gpu_budget *out) {
    char buf[256];
    char *save = NULL, *tok;
    int first = 1, have_used = 0, have_free = 0;
    uint64_t used = 0, freeb = 0;
    memset(out, 0, sizeof *out);
    if (text == NULL || text[0] == '\0' || strlen(text) >= sizeof buf)
        return cli_usage_error(cmd, "--assume-gpu: '%s' is not SIZE[,used=SIZE][,cc=M.m]",
                               text ? text : "");
    if (text[strlen(text) - 1] == ',' || strstr(text, ",,"))
        return cli_usage_error(cmd, "--assume-gpu: '%s' has an empty item", text);
    snprintf(buf, sizeof buf, "%s", text);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = 0) {
        char *eq = strchr(tok, '=');
        if (first) {
            if (eq != NULL || vram_parse_size(tok, &out->total) != 0 || out->total == 0)
                return cli_usage_error(cmd,
                                       "--assume-gpu: '%s': the first item is the GPU's size "
                                       "(e.g. 8GiB), not '%s'",
                                       text, tok);
            continue;
        }
        if (eq == NULL)
            return cli_usage_error(cmd, "--assume-gpu: '%s': '%s' is not KEY=VALUE", text, tok);
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(tok, "used") == 0) {
            if (vram_parse_size(val, &used) != 0)
                return cli_usage_error(cmd, "--assume-gpu: '%s': used='%s' is not a size", text,
                                       val);
            have_used = 1;
        } else if (strcmp(tok, "free") == 0) {
            if (vram_parse_size(val, &freeb) != 0)
                return cli_usage_error(cmd, "--assume-gpu: '%s': free='%s' is not a size", text,
                                       val);
            have_free = 1;
        } else if (strcmp(tok, "cc") == 0) {
            unsigned maj = 0, min = 0;
            int n = 0;
            if (sscanf(val, "%2u.%1u%n", &maj, &min, &n) != 2 || val[n] != '\0' || maj == 0)
                return cli_usage_error(cmd,
                                       "--assume-gpu: '%s': cc='%s' is not a compute "
                                       "capability such as 8.9",
                                       text, val);
            out->cc_major = (int)maj;
            out->cc_minor = (int)min;
        } else {
            return cli_usage_error(cmd, "--assume-gpu: '%s': unknown key '%s' (used, free, cc)",
                                   text, tok);
        }
    }
    if (have_used && have_free)
        return cli_usage_error(cmd, "--assume-gpu: '%s': give used= or free=, not both", text);
    if (have_used && used > out->total)
        return cli_usage_error(cmd, "--assume-gpu: '%s': used is more than the GPU's size", text);
    if (have_free && freeb > out->total)
        return cli_usage_error(cmd, "--assume-gpu: '%s': free is more than the GPU's size", text);
    out->free = have_free ? freeb : out->total - used;
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
    } else if (w->flash_attention && (size_t)n < cap) {
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
    if (e->notes & VRAM_NOTE_GQA_KV)
        fprintf(out, "  note: training activations count keys and values at full width "
                     "(grouped-query attention stores less)\n");
}

void cli_estimate_json(vram_json *j, const vram_estimate *e) {
    vram_json_key(j, "terms");
    vram_json_begin_array(j);
    for (int i = 0; i < VRAM_TERM_COUNT; i++) {
        const vram_term *t = &e->term[i];
        vram_json_begin_object(j);
        vram_json_key(j, "name");
        vram_json_string(j, vram_term_name((vram_term_id)i));
        vram_json_key(j, "bytes");
        vram_json_u64(j, t->expected);
        vram_json_key(j, "low");
        vram_json_u64(j, t->low);
        vram_json_key(j, "high");
        vram_json_u64(j, t->high);
        vram_json_key(j, "cause");
        vram_json_string(j, t->low == t->high ? "exact" : vram_cause_name(t->cause));
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key(j, "total");
    vram_json_begin_object(j);
    vram_json_key(j, "low");
    vram_json_u64(j, e->low);
    vram_json_key(j, "expected");
    vram_json_u64(j, e->expected);
    vram_json_key(j, "high");
    vram_json_u64(j, e->high);
    vram_json_end_object(j);
    vram_json_key(j, "notes");
    vram_json_begin_array(j);
    if (e->notes & VRAM_NOTE_NO_ARCH) vram_json_string(j, "no_arch");
    if (e->notes & VRAM_NOTE_DTYPE_ASSUMED) vram_json_string(j, "dtype_assumed");
    if (e->notes & VRAM_NOTE_GQA_KV) vram_json_string(j, "gqa_kv");
    vram_json_end_array(j);
}

void cli_model_json(vram_json *j, const vram_model_ref *m, const vram_estimate *e) {
    vram_json_begin_object(j);
    vram_json_key(j, "name");
    vram_json_string(j, m->label);
    vram_json_key(j, "source");
    vram_json_string(j, m->source);
    if (m->hf_id[0]) {
        vram_json_key(j, "hf_id");
        vram_json_string(j, m->hf_id);
    }
    vram_json_key(j, "family");
    vram_json_string(j, vram_family_name(m->model.arch.family));
    vram_json_key(j, "params");
    vram_json_u64(j, e->params);
    if (m->model.arch.experts != 0) { /* a mixture of experts: what one token goes through */
        vram_json_key(j, "active_params");
        vram_json_u64(j, e->active_params);
        vram_json_key(j, "experts");
        vram_json_u64(j, m->model.arch.experts);
        vram_json_key(j, "experts_per_token");
        vram_json_u64(j, m->model.arch.experts_per_token);
    }
    if (e->expert_bytes != 0) {
        vram_json_key(j, "expert_bytes");
        vram_json_u64(j, e->expert_bytes);
    }
    vram_json_key(j, "blocks");
    vram_json_u64(j, e->blocks);
    vram_json_key(j, "published_format");
    vram_json_string(j, m->model.dtype != VRAM_DTYPE_NONE ? vram_dtype_name(m->model.dtype)
                                                         : "unknown");
    if (m->model.stats.tensors) {
        vram_json_key(j, "tensors");
        vram_json_u64(j, m->model.stats.tensors);
        vram_json_key(j, "stored_bytes");
        vram_json_u64(j, m->model.stats.bytes);
    }
    if (m->model.guess_high != 0) {
        char as[160];
        cli_arch_reading(&m->model.arch, as, sizeof as);
        vram_json_key(j, "read_as");
        vram_json_string(j, as);
        vram_json_key(j, "guessed_params");
        vram_json_begin_object(j);
        vram_json_key(j, "low");
        vram_json_u64(j, m->model.guess_low);
        vram_json_key(j, "high");
        vram_json_u64(j, m->model.guess_high);
        vram_json_end_object(j);
    }
    if (m->note[0]) {
        vram_json_key(j, "note");
        vram_json_string(j, m->note);
    }
    vram_json_end_object(j);
}

void cli_arch_reading(const vram_arch *a, char *buf, size_t cap) {
    snprintf(buf, cap, "%s, %s MLP, %s norm, %s, %s head%s", vram_family_name(a->family),
             a->mlp == VRAM_MLP_GATED ? "gated" : "plain",
             a->norm == VRAM_NORM_RMS ? "RMS" : "layer",
             (a->flags & (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS))
                 ? "biases"
                 : "no biases",
             (a->flags & VRAM_ARCH_NO_HEAD) ? "no"
             : (a->flags & VRAM_ARCH_TIED)  ? "tied"
                                            : "untied",
             (a->flags & VRAM_ARCH_PARALLEL) ? ", parallel blocks" : "");
}

void cli_workload_json(vram_json *j, const vram_workload *w, const vram_estimate *e) {
    vram_json_begin_object(j);
    vram_json_key(j, "mode");
    vram_json_string(j, w->mode == VRAM_MODE_TRAIN ? "train" : "infer");
    vram_json_key(j, "format");
    vram_json_string(j, vram_dtype_name(e->format));
    vram_json_key(j, "compute");
    vram_json_string(j, vram_dtype_name(e->compute));
    vram_json_key(j, "batch");
    vram_json_u64(j, e->batch);
    vram_json_key(j, "seq");
    vram_json_u64(j, e->seq);
    /* given, or resolved to something other than seq (whisper's 1500 source frames) */
    if (w->src_len || (e->src_len != 0 && e->src_len != e->seq)) {
        vram_json_key(j, "src_len");
        vram_json_u64(j, e->src_len);
    }
    if (w->tgt_len || (e->tgt_len != 0 && e->tgt_len != e->seq)) {
        vram_json_key(j, "tgt_len");
        vram_json_u64(j, e->tgt_len);
    }
    if (w->mode == VRAM_MODE_TRAIN) {
        vram_json_key(j, "optimizer");
        vram_json_string(j, vram_optimizer_name(w->optimizer));
        vram_json_key(j, "checkpointing");
        vram_json_bool(j, w->checkpointing);
        vram_json_key(j, "grad_accum");
        vram_json_u64(j, w->grad_accum ? w->grad_accum : 1u);
        vram_json_key(j, "lora_rank");
        vram_json_u64(j, w->lora_rank);
        vram_json_key(j, "trainable_params");
        vram_json_u64(j, e->trainable);
    }
    if (e->image_tokens != 0) {
        vram_json_key(j, "image_tokens");
        vram_json_u64(j, e->image_tokens);
    }
    vram_json_key(j, "flash_attention");
    vram_json_bool(j, w->flash_attention);
    vram_json_end_object(j);
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

void cli_machine_json(vram_json *j, const vram_machine_view *v) {
    vram_json_key(j, "gpu_source");
    vram_json_string(j, v->source);
    vram_json_key(j, "gpu_source_note");
    if (v->note[0]) vram_json_string(j, v->note);
    else vram_json_null(j);
    vram_json_key(j, "tenants");
    if (!v->tenants_known) {
        vram_json_null(j);
        return;
    }
    vram_json_begin_array(j);
    for (int i = 0; i < v->ntenants; i++) {
        const vram_machine_tenant *t = &v->tenants[i];
        vram_json_begin_object(j);
        vram_json_key(j, "gpu");
        vram_json_u64(j, (uint64_t)t->gpu);
        vram_json_key(j, "pid");
        vram_json_u64(j, t->pid);
        vram_json_key(j, "name");
        if (t->name[0]) vram_json_string(j, t->name);
        else vram_json_null(j);
        vram_json_key(j, "bytes");
        if (t->bytes == VRAM_GPUMEM_UNKNOWN) vram_json_null(j);
        else vram_json_u64(j, t->bytes);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key(j, "tenants_more");
    vram_json_u64(j, (uint64_t)v->tenants_more);
}
