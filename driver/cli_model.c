/* driver/cli_model.c — see cli_model.h. */
#include "cli_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "builtin_models.h"
#include "cuda_device.h"
#include "snapshot.h"
#include "model_read.h"

/* ---- finding a model ------------------------------------------------------------- */

int cli_model_resolve(const char *cmd, const char *arg, cli_model *out) {
    const vram_builtin_model *b;
    struct stat st;
    char err[1024];
    vram_status s;
    memset(out, 0, sizeof *out);
    if (arg == NULL || arg[0] == '\0') return cli_usage_error(cmd, "MODEL: empty name");
    snprintf(out->label, sizeof out->label, "%s", arg);
    b = vram_builtin_find(arg);
    if (b != NULL) {
        vram_builtin_to_model(b, &out->model);
        snprintf(out->label, sizeof out->label, "%s", b->name);
        snprintf(out->source, sizeof out->source, "built-in");
        snprintf(out->hf_id, sizeof out->hf_id, "%s", b->hf_id);
        return 0;
    }
    if (stat(arg, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return cli_usage_error(cmd,
                                   "%s: not a built-in model and no such file or directory "
                                   "(built-ins: vramkit estimate --list-models)",
                                   arg);
        return cli_error(VRAM_EXIT_ENV, cmd, "%s: %s", arg, strerror(errno));
    }
    err[0] = '\0';
    s = vram_read_path(arg, &out->model, err, sizeof err);
    if (s != VRAM_OK) {
        int code = s == VRAM_E_IO || s == VRAM_E_OOM ? VRAM_EXIT_ENV : VRAM_EXIT_USAGE;
        return cli_error(code, cmd, "%s", err[0] ? err : vram_status_str(s));
    }
    snprintf(out->note, sizeof out->note, "%s", err);
    if (S_ISDIR(st.st_mode))
        snprintf(out->source, sizeof out->source, "directory");
    else if (out->model.stats.tensors == 0)
        snprintf(out->source, sizeof out->source, "config.json");
    else
        snprintf(out->source, sizeof out->source, "file");
    return 0;
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
    "  --lora-targets LIST    q,k,v,o,mlp or all (default q,v)\n";

int cli_parse_format(const char *text, vram_dtype *out) {
    static const struct {
        const char *alias;
        vram_dtype t;
    } aliases[] = {{"fp32", VRAM_DTYPE_F32},       {"float32", VRAM_DTYPE_F32},
                   {"fp16", VRAM_DTYPE_F16},       {"float16", VRAM_DTYPE_F16},
                   {"half", VRAM_DTYPE_F16},       {"bfloat16", VRAM_DTYPE_BF16},
                   {"int4", VRAM_DTYPE_NF4},       {"int4_double", VRAM_DTYPE_NF4_DQ},
                   {"fp8", VRAM_DTYPE_F8_E4M3}};
    if (text == NULL || text[0] == '\0') return -1;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcasecmp(text, aliases[i].alias) == 0) {
            *out = aliases[i].t;
            return 0;
        }
    }
    return vram_dtype_from_name(text, strlen(text), out) == VRAM_OK ? 0 : -1;
}

int cli_workload_option(const char *cmd, int code, const char *arg, vram_workload *w) {
    vram_dtype t;
    switch (code) {
    case CLI_WL_MODE:
        if (strcmp(arg, "infer") == 0 || strcmp(arg, "inference") == 0)
            w->mode = VRAM_MODE_INFER;
        else if (strcmp(arg, "train") == 0 || strcmp(arg, "training") == 0)
            w->mode = VRAM_MODE_TRAIN;
        else
            return cli_usage_error(cmd, "--mode: '%s' is not infer or train", arg);
        return 0;
    case CLI_WL_FORMAT: {
        vram_dtype_layout l;
        if (cli_parse_format(arg, &t) != 0 || vram_dtype_get(t, &l) != VRAM_OK ||
            l.kind == VRAM_DTYPE_INT)
            return cli_usage_error(cmd,
                                   "--format: '%s' is not a weight format (fp32, fp16, bf16, "
                                   "int8, int4, int4_double, fp4, q4_k, ...)",
                                   arg);
        w->format = t;
        return 0;
    }
    case CLI_WL_COMPUTE:
        if (cli_parse_format(arg, &t) != 0 ||
            (t != VRAM_DTYPE_F32 && t != VRAM_DTYPE_F16 && t != VRAM_DTYPE_BF16))
            return cli_usage_error(cmd, "--compute: '%s' is not f32, f16 or bf16", arg);
        w->compute = t;
        return 0;
    case CLI_WL_BATCH:
        return cli_opt_count(cmd, "batch", arg, 1, 1000000000u, 0, &w->batch);
    case CLI_WL_SEQ:
        return cli_opt_count(cmd, "seq", arg, 1, 1000000000u, 0, &w->seq);
    case CLI_WL_SRC:
        return cli_opt_count(cmd, "src-len", arg, 1, 1000000000u, 0, &w->src_len);
    case CLI_WL_TGT:
        return cli_opt_count(cmd, "tgt-len", arg, 1, 1000000000u, 0, &w->tgt_len);
    case CLI_WL_OPTIMIZER:
        if (vram_optimizer_from_name(arg, strlen(arg), &w->optimizer) != VRAM_OK)
            return cli_usage_error(cmd,
                                   "--optimizer: '%s' is not adamw, adam, sgd-momentum, sgd "
                                   "or adam8bit",
                                   arg);
        return 0;
    case CLI_WL_CHECKPOINTING:
        w->checkpointing = 1;
        return 0;
    case CLI_WL_FLASH:
        w->flash_attention = 1;
        return 0;
    case CLI_WL_GRAD_ACCUM:
        return cli_opt_count(cmd, "grad-accum", arg, 1, 1000000u, 0, &w->grad_accum);
    case CLI_WL_LORA_RANK:
        return cli_opt_count(cmd, "lora-rank", arg, 1, 65536u, 0, &w->lora_rank);
    case CLI_WL_LORA_TARGETS: {
        char buf[128];
        uint32_t t2 = 0;
        if (strlen(arg) >= sizeof buf || arg[0] == '\0')
            return cli_usage_error(cmd, "--lora-targets: '%s' is not a list of q,k,v,o,mlp",
                                   arg);
        snprintf(buf, sizeof buf, "%s", arg);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (strcmp(tok, "q") == 0) t2 |= VRAM_LORA_Q;
            else if (strcmp(tok, "k") == 0) t2 |= VRAM_LORA_K;
            else if (strcmp(tok, "v") == 0) t2 |= VRAM_LORA_V;
            else if (strcmp(tok, "o") == 0) t2 |= VRAM_LORA_O;
            else if (strcmp(tok, "mlp") == 0) t2 |= VRAM_LORA_MLP;
            else if (strcmp(tok, "all") == 0) t2 |= VRAM_LORA_ALL;
            else
                return cli_usage_error(cmd, "--lora-targets: '%s' is not one of q, k, v, o, "
                                            "mlp, all", tok);
        }
        if (t2 == 0 || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,") || arg[0] == ',')
            return cli_usage_error(cmd, "--lora-targets: '%s' has an empty item", arg);
        w->lora_targets = t2;
        return 0;
    }
    default:
        return cli_usage_error(cmd, "internal: unknown workload option %d", code);
    }
}

/* ---- --assume-gpu -------------------------------------------------------------------- */

int cli_parse_gpu_spec(const char *cmd, const char *text, cli_gpu *out) {
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
            if (eq != NULL || cli_parse_size(tok, &out->total) != 0 || out->total == 0)
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
            if (cli_parse_size(val, &used) != 0)
                return cli_usage_error(cmd, "--assume-gpu: '%s': used='%s' is not a size", text,
                                       val);
            have_used = 1;
        } else if (strcmp(tok, "free") == 0) {
            if (cli_parse_size(val, &freeb) != 0)
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

uint64_t cli_host_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    if (f == NULL) return 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    }
    fclose(f);
    return (uint64_t)kb * 1024u;
}

/* ---- printing ------------------------------------------------------------------------ */

void cli_workload_text(const vram_model *m, const vram_workload *w, const vram_estimate *e,
                       char *buf, size_t cap) {
    int n;
    if (m->arch.family == VRAM_FAMILY_ENCODER_DECODER)
        n = snprintf(buf, cap, "%s, batch %llu, source %llu and target %llu tokens",
                     w->mode == VRAM_MODE_TRAIN ? "training" : "inference",
                     (unsigned long long)e->batch,
                     (unsigned long long)(w->src_len ? w->src_len : e->seq),
                     (unsigned long long)(w->tgt_len ? w->tgt_len : e->seq));
    else
        n = snprintf(buf, cap, "%s, batch %llu, sequence %llu",
                     w->mode == VRAM_MODE_TRAIN ? "training" : "inference",
                     (unsigned long long)e->batch, (unsigned long long)e->seq);
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
                cli_format_size(t->low, a, sizeof a), cli_format_size(t->expected, b, sizeof b),
                cli_format_size(t->high, c, sizeof c),
                t->low == t->high ? "exact" : vram_cause_name(t->cause));
        if (t->low != t->high) causes[t->cause] = 1;
    }
    fprintf(out, "  %-17s %12s %12s %12s\n", "total", cli_format_size(e->low, a, sizeof a),
            cli_format_size(e->expected, b, sizeof b), cli_format_size(e->high, c, sizeof c));
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

void cli_estimate_json(cli_json *j, const vram_estimate *e) {
    cli_json_key(j, "terms");
    cli_json_begin_array(j);
    for (int i = 0; i < VRAM_TERM_COUNT; i++) {
        const vram_term *t = &e->term[i];
        cli_json_begin_object(j);
        cli_json_key(j, "name");
        cli_json_string(j, vram_term_name((vram_term_id)i));
        cli_json_key(j, "bytes");
        cli_json_u64(j, t->expected);
        cli_json_key(j, "low");
        cli_json_u64(j, t->low);
        cli_json_key(j, "high");
        cli_json_u64(j, t->high);
        cli_json_key(j, "cause");
        cli_json_string(j, t->low == t->high ? "exact" : vram_cause_name(t->cause));
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
    cli_json_key(j, "total");
    cli_json_begin_object(j);
    cli_json_key(j, "low");
    cli_json_u64(j, e->low);
    cli_json_key(j, "expected");
    cli_json_u64(j, e->expected);
    cli_json_key(j, "high");
    cli_json_u64(j, e->high);
    cli_json_end_object(j);
    cli_json_key(j, "notes");
    cli_json_begin_array(j);
    if (e->notes & VRAM_NOTE_NO_ARCH) cli_json_string(j, "no_arch");
    if (e->notes & VRAM_NOTE_DTYPE_ASSUMED) cli_json_string(j, "dtype_assumed");
    if (e->notes & VRAM_NOTE_GQA_KV) cli_json_string(j, "gqa_kv");
    cli_json_end_array(j);
}

void cli_model_json(cli_json *j, const cli_model *m, const vram_estimate *e) {
    cli_json_begin_object(j);
    cli_json_key(j, "name");
    cli_json_string(j, m->label);
    cli_json_key(j, "source");
    cli_json_string(j, m->source);
    if (m->hf_id[0]) {
        cli_json_key(j, "hf_id");
        cli_json_string(j, m->hf_id);
    }
    cli_json_key(j, "family");
    cli_json_string(j, vram_family_name(m->model.arch.family));
    cli_json_key(j, "params");
    cli_json_u64(j, e->params);
    cli_json_key(j, "blocks");
    cli_json_u64(j, e->blocks);
    cli_json_key(j, "published_format");
    cli_json_string(j, m->model.dtype != VRAM_DTYPE_NONE ? vram_dtype_name(m->model.dtype)
                                                         : "unknown");
    if (m->model.stats.tensors) {
        cli_json_key(j, "tensors");
        cli_json_u64(j, m->model.stats.tensors);
        cli_json_key(j, "stored_bytes");
        cli_json_u64(j, m->model.stats.bytes);
    }
    if (m->note[0]) {
        cli_json_key(j, "note");
        cli_json_string(j, m->note);
    }
    cli_json_end_object(j);
}

void cli_workload_json(cli_json *j, const vram_workload *w, const vram_estimate *e) {
    cli_json_begin_object(j);
    cli_json_key(j, "mode");
    cli_json_string(j, w->mode == VRAM_MODE_TRAIN ? "train" : "infer");
    cli_json_key(j, "format");
    cli_json_string(j, vram_dtype_name(e->format));
    cli_json_key(j, "compute");
    cli_json_string(j, vram_dtype_name(e->compute));
    cli_json_key(j, "batch");
    cli_json_u64(j, e->batch);
    cli_json_key(j, "seq");
    cli_json_u64(j, e->seq);
    if (w->src_len) {
        cli_json_key(j, "src_len");
        cli_json_u64(j, w->src_len);
    }
    if (w->tgt_len) {
        cli_json_key(j, "tgt_len");
        cli_json_u64(j, w->tgt_len);
    }
    if (w->mode == VRAM_MODE_TRAIN) {
        cli_json_key(j, "optimizer");
        cli_json_string(j, vram_optimizer_name(w->optimizer));
        cli_json_key(j, "checkpointing");
        cli_json_bool(j, w->checkpointing);
        cli_json_key(j, "grad_accum");
        cli_json_u64(j, w->grad_accum ? w->grad_accum : 1u);
        cli_json_key(j, "lora_rank");
        cli_json_u64(j, w->lora_rank);
        cli_json_key(j, "trainable_params");
        cli_json_u64(j, e->trainable);
    }
    cli_json_key(j, "flash_attention");
    cli_json_bool(j, w->flash_attention);
    cli_json_end_object(j);
}

int cli_detect_gpus(cli_gpu *out, int max, char *why, size_t cap) {
    vram_device_ops ops;
    vram_device_snapshot *snap;
    int n = 0;
    if (cap) why[0] = '\0';
    if (vram_cuda_ops(&ops) != VRAM_OK) {
        snprintf(why, cap, "this vramkit was built without CUDA");
        return 0;
    }
    snap = calloc(1, sizeof *snap);
    if (snap == NULL) {
        snprintf(why, cap, "out of memory");
        return 0;
    }
    vram_status st = vram_snapshot_take(&ops, snap);
    for (int d = 0; d < snap->device_count && n < max; d++) {
        const vram_device_info *di = &snap->devices[d];
        if (di->total_bytes == 0) break; /* keep indices: GPU n is cuda:n */
        out[n].total = di->total_bytes;
        out[n].free = di->free_bytes <= di->total_bytes ? di->free_bytes : di->total_bytes;
        out[n].cc_major = di->cc_major;
        out[n].cc_minor = di->cc_minor;
        n++;
    }
    if (n == 0)
        snprintf(why, cap, "%s", st == VRAM_OK ? "no GPU found" : vram_status_str(st));
    vram_cuda_release();
    free(snap);
    return n;
}
