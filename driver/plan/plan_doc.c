/* driver/plan/plan_doc.c — see plan_doc.h. The schema, version 1:
 *   {version, inputs {model | components [{name, model, device}] + global_device,
 *    workload {mode, format, compute, batch, seq, src_len, tgt_len, optimizer, checkpointing,
 *    flash_attention, grad_accum, lora_rank, lora_targets}, machine {gpus [{total_bytes,
 *    free_bytes, cc}], gpus_assumed, no_gpu_reason, host_free_bytes, margin_bytes, and for
 *    GPUs read here gpu_source ("nvml" | "cuda"), gpu_source_note, tenants ([{gpu, pid, name,
 *    bytes}] of other processes, or null when not known), tenants_more}},
 *    strategies [{name, format, devices, bytes, per_device [{device, bytes, blocks}], fits,
 *    reason, reason_text}], chosen, placement [...], gpu_use (component plans) [{device,
 *    budget_bytes, used_bytes, components, components_bytes, cuda_context_bytes,
 *    workspace_bytes}], notes [{component, note}] (only when a model reader noted something),
 *    changes (plans made again)}
 * gpu_use, notes and the machine's gpu_source/tenants came later within version 1: output
 * only, so plans without them load the same.
 * Byte counts are written as exact integers (cJSON's numbers are doubles). */
#include "plan_doc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "isolate/chain.h"
#include "util/file.h"
#include "util/json.h"
#include "util/text.h"
#include "workload.h"

/* ---- writing -------------------------------------------------------------------------- */

static void inputs_json(vram_json *j, const vram_plan *p) {
    const vram_workload *w = &p->w;
    const vram_machine *m = &p->mach;
    vram_json_begin_object(j);
    if (p->single) {
        vram_json_key_string(j, "model", p->comps[0].model_arg);
    } else {
        vram_json_key(j, "components");
        vram_json_begin_array(j);
        for (int i = 0; i < p->ncomp; i++) {
            vram_json_begin_object(j);
            vram_json_key_string(j, "name", p->comps[i].name);
            vram_json_key_string(j, "model", p->comps[i].model_arg);
            vram_json_key_string(j, "device", p->comps[i].setting_text[0] ? p->comps[i].setting_text : NULL);
            vram_json_end_object(j);
        }
        vram_json_end_array(j);
        vram_json_key_string(j, "global_device", p->global_text);
    }
    vram_json_key(j, "workload");
    vram_json_begin_object(j);
    vram_json_key_string(j, "mode", w->mode == VRAM_MODE_TRAIN ? "train" : "infer");
    vram_json_key_string(j, "format", w->format != VRAM_DTYPE_NONE ? vram_dtype_name(w->format) : NULL);
    vram_json_key_string(j, "compute", w->compute != VRAM_DTYPE_NONE ? vram_dtype_name(w->compute) : NULL);
    vram_json_key_u64(j, "batch", w->batch);
    vram_json_key_u64(j, "seq", w->seq);
    vram_json_key_u64(j, "src_len", w->src_len);
    vram_json_key_u64(j, "tgt_len", w->tgt_len);
    vram_json_key_string(j, "optimizer", vram_optimizer_name(w->optimizer));
    vram_json_key_bool(j, "checkpointing", w->checkpointing);
    vram_json_key_bool(j, "flash_attention", w->flash_attention);
    vram_json_key_u64(j, "grad_accum", w->grad_accum);
    vram_json_key_u64(j, "lora_rank", w->lora_rank);
    vram_json_key_u64(j, "lora_targets", w->lora_targets);
    if (w->images) vram_json_key_u64(j, "images", w->images); /* (absent from older plans) */
    if (w->image_tokens) vram_json_key_u64(j, "image_tokens", w->image_tokens);
    if (w->logits) /* (absent from older plans: the default) */
        vram_json_key_string(j, "logits", w->logits == VRAM_LOGITS_ALL ? "all" : "last");
    vram_json_end_object(j);
    vram_json_key(j, "machine");
    vram_json_begin_object(j);
    vram_json_key(j, "gpus");
    vram_json_begin_array(j);
    for (int g = 0; g < m->ngpu; g++) {
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", m->gpus[g].cc_major, m->gpus[g].cc_minor);
        vram_json_begin_object(j);
        vram_json_key_u64(j, "total_bytes", m->gpus[g].total);
        vram_json_key_u64(j, "free_bytes", m->gpus[g].free);
        vram_json_key_string(j, "cc", m->gpus[g].cc_major ? cc : NULL);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key_bool(j, "gpus_assumed", !m->gpus_detected);
    vram_json_key_string(j, "no_gpu_reason", m->ngpu == 0 ? m->no_gpu : NULL);
    /* read here: how, and who else holds memory on them */
    if (m->gpus_detected) vram_machine_view_json(j, &m->view);
    vram_json_key_u64(j, "host_free_bytes", m->host);
    vram_json_key_u64(j, "margin_bytes", vram_devices_margin(&m->dev));
    vram_json_end_object(j);
    vram_json_end_object(j);
}

static uint64_t cand_total(const vram_candidate *c) {
    uint64_t t = c->cpu_bytes;
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++) t += c->gpu_bytes[g];
    return t;
}

static void device_bytes(vram_json *j, const char *device, uint64_t bytes, uint64_t blocks) {
    vram_json_begin_object(j);
    vram_json_key_string(j, "device", device);
    vram_json_key_u64(j, "bytes", bytes);
    vram_json_key_u64(j, "blocks", blocks);
    vram_json_end_object(j);
}

static void strategy_json(vram_json *j, const vram_candidate *c) {
    char name[16], why[512];
    vram_json_begin_object(j);
    vram_json_key_string(j, "name", c->name);
    vram_json_key_string(j, "format", vram_dtype_name(c->format));
    vram_json_key(j, "devices");
    vram_json_begin_array(j);
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
        if (c->gpu_mask & (1u << g)) vram_json_string(j, vram_plan_device_name(g, name, sizeof name));
    if (c->cpu_bytes) vram_json_string(j, "cpu");
    vram_json_end_array(j);
    vram_json_key_u64(j, "bytes", cand_total(c));
    vram_json_key(j, "per_device");
    vram_json_begin_array(j);
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
        if (c->gpu_mask & (1u << g))
            device_bytes(j, vram_plan_device_name(g, name, sizeof name), c->gpu_bytes[g], c->gpu_blocks[g]);
    if (c->cpu_bytes) device_bytes(j, "cpu", c->cpu_bytes, c->cpu_blocks);
    vram_json_end_array(j);
    vram_json_key_bool(j, "fits", c->fits);
    vram_json_key_string(j, "reason", vram_reason_name(c->reason));
    vram_json_key_string(j, "reason_text", vram_plan_candidate_text(c, why, sizeof why));
    vram_json_end_object(j);
}

/* The placement of a single model: one entry per device of its chosen strategy. */
static void chosen_placement(vram_json *j, const vram_plan *p) {
    const vram_candidate *c;
    char name[16];
    if (p->chain.chosen < 0) return;
    c = &p->chain.cand[p->chain.chosen];
    for (int g = 0; g <= VRAM_PLAN_MAX_GPUS; g++) {
        int dev = g < VRAM_PLAN_MAX_GPUS ? g : VRAM_PLAN_CPU;
        uint64_t bytes = g < VRAM_PLAN_MAX_GPUS ? c->gpu_bytes[g] : c->cpu_bytes;
        if (g < VRAM_PLAN_MAX_GPUS ? !(c->gpu_mask & (1u << g)) : c->cpu_bytes == 0) continue;
        vram_json_begin_object(j);
        vram_json_key_string(j, "component", "model");
        vram_json_key_string(j, "model", p->comps[0].m.label);
        vram_json_key_string(j, "device", vram_plan_device_name(dev, name, sizeof name));
        vram_json_key_string(j, "strategy", c->name);
        vram_json_key_u64(j, "bytes", bytes);
        vram_json_key_bool(j, "fits", 1);
        vram_json_end_object(j);
    }
}

static void component_json(vram_json *j, const vram_plan *p, int i) {
    const vram_plan_component *c = &p->comps[i];
    const vram_placement *pl = &p->placed[i];
    char name[16], st[32], why[512];
    vram_json_begin_object(j);
    vram_json_key_string(j, "component", c->name);
    vram_json_key_string(j, "model", c->m.label);
    vram_json_key_string(j, "device", vram_plan_device_name(pl->device, name, sizeof name));
    vram_json_key_string(j, "strategy",
                         pl->device == VRAM_PLAN_CPU ? "cpu" : vram_plan_format_strategy(c->gpu_format));
    vram_json_key_u64(j, "bytes", pl->bytes);
    vram_json_key_bool(j, "fits", pl->fits);
    vram_json_key_string(j, "setting", vram_plan_setting_text(pl->setting, st, sizeof st));
    vram_json_key_string(j, "setting_from", c->setting_from);
    vram_json_key_u64(j, "short_by_bytes", pl->short_by ? pl->short_by : pl->host_short_by);
    vram_json_key_string(j, "reason", vram_place_reason_name(pl->reason));
    vram_json_key_string(j, "reason_text", vram_plan_placement_text(pl, why, sizeof why));
    vram_json_end_object(j);
}

/* Each GPU itemised: used_bytes = components_bytes + cuda_context_bytes + workspace_bytes
 * (added in version 1 without a version change: readers of older plans never needed it, and
 * this reader does not need it either). */
static void gpu_use_json(vram_json *j, const vram_plan *p) {
    vram_json_key(j, "gpu_use");
    vram_json_begin_array(j);
    for (int g = 0; g < p->sum.gpus; g++) {
        vram_plan_gpu_use u;
        char name[16];
        if (vram_plan_gpu_use_of(p, g, &u) != VRAM_OK) continue;
        vram_json_begin_object(j);
        vram_json_key_string(j, "device", vram_plan_device_name(g, name, sizeof name));
        vram_json_key_u64(j, "budget_bytes", u.budget);
        vram_json_key_u64(j, "used_bytes", u.used);
        vram_json_key_u64(j, "components", (uint64_t)u.components);
        vram_json_key_u64(j, "components_bytes", u.components_bytes);
        vram_json_key_u64(j, "cuda_context_bytes", u.cuda_context);
        vram_json_key_u64(j, "workspace_bytes", u.workspace);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
}

const char *vram_plan_change_text(const vram_plan *p, const vram_change *c, char *buf, size_t cap) {
    char a[16], b[16];
    const char *then, *now;
    if (c->component < 0) {
        then = p->saved.chosen_given ? p->saved.chosen : NULL;
        now = p->single && p->chain.chosen >= 0 ? p->chain.cand[p->chain.chosen].name : NULL;
        snprintf(buf, cap, "chosen: %s -> %s", then ? then : "none", now ? now : "none");
        return buf;
    }
    then = vram_plan_device_name(c->then.device, a, sizeof a);
    now = vram_plan_device_name(c->now.device, b, sizeof b);
    snprintf(buf, cap, "%s: %s%s -> %s%s", p->comps[c->component].name, then ? then : "none",
             c->then.fits ? "" : " (not placed)", now ? now : "none",
             c->now.fits ? "" : " (not placed)");
    return buf;
}

void vram_plan_doc_members(vram_json *j, const vram_plan *p, const vram_change *changes, size_t n) {
    vram_json_key_u64(j, "version", VRAM_PLAN_VERSION);
    vram_json_key(j, "inputs");
    inputs_json(j, p);
    vram_json_key(j, "strategies");
    vram_json_begin_array(j);
    if (p->single)
        for (int i = 0; i < p->chain.count; i++) strategy_json(j, &p->chain.cand[i]);
    vram_json_end_array(j);
    if (p->single)
        vram_json_key_string(j, "chosen", p->chain.chosen >= 0 ? p->chain.cand[p->chain.chosen].name : NULL);
    else
        vram_json_key_bool(j, "chosen", p->sum.all_fit);
    vram_json_key(j, "placement");
    vram_json_begin_array(j);
    if (p->single) chosen_placement(j, p);
    else
        for (int i = 0; i < p->ncomp; i++) component_json(j, p, i);
    vram_json_end_array(j);
    if (!p->single) gpu_use_json(j, p);
    /* what the model readers noted (one shard of a set read alone, a GGUF not read beside
       safetensors, ...): only when there is something, output only */
    int notes = 0;
    for (int i = 0; i < p->ncomp; i++) {
        if (p->comps[i].m.note[0] == '\0') continue;
        if (notes++ == 0) {
            vram_json_key(j, "notes");
            vram_json_begin_array(j);
        }
        vram_json_begin_object(j);
        vram_json_key_string(j, "component", p->comps[i].name);
        vram_json_key_string(j, "note", p->comps[i].m.note);
        vram_json_end_object(j);
    }
    if (notes) vram_json_end_array(j);
    if (p->saved.present) {
        char buf[512];
        vram_json_key(j, "changes");
        vram_json_begin_array(j);
        for (size_t i = 0; i < n; i++) vram_json_string(j, vram_plan_change_text(p, &changes[i], buf, sizeof buf));
        vram_json_end_array(j);
    }
}

char *vram_plan_doc_json(const vram_plan *p, const vram_change *changes, size_t n) {
    char *text = NULL;
    size_t len = 0;
    vram_json j;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) return NULL;
    vram_json_init(&j, f);
    vram_json_begin_object(&j);
    vram_plan_doc_members(&j, p, changes, n);
    vram_json_end_object(&j);
    vram_json_finish(&j);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

vram_status vram_plan_doc_save(const char *path, const char *text, char *err, size_t cap) {
    return vram_write_file(path, "--save", text, strlen(text), err, cap);
}

/* ---- reading -------------------------------------------------------------------------- */

/* In a reader that owns something to free at `out`. */
#define FAIL(...)                                                \
    do {                                                         \
        st = vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__); \
        goto out;                                                \
    } while (0)

vram_status vram_plan_read_json(const char *path, const char *what, struct cJSON **doc,
                                char *err, size_t cap) {
    const char *why = NULL;
    int fd = vram_open_read(path, 0, NULL, &why);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    char *text = NULL;
    long len;
    *doc = NULL;
    if (f == NULL) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (fd == VRAM_OPEN_NOT_FILE) /* a FIFO, a directory: not a plan, and never waited on */
            return vram_errorf(err, cap, VRAM_E_INVALID, "%s: %s", what, why);
        if (e == ENOENT) return vram_errorf(err, cap, VRAM_E_INVALID, "%s: no such file", what);
        return vram_errorf(err, cap, VRAM_E_IO, "%s: %s", what, strerror(e));
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return vram_errorf(err, cap, VRAM_E_IO, "%s: cannot read it (not a regular file?)", what);
    }
    if ((unsigned long)len > VRAM_PLAN_FILE_MAX) {
        fclose(f);
        return vram_errorf(err, cap, VRAM_E_INVALID, "%s: %ld bytes, over the limit of %zu", what,
                           len, VRAM_PLAN_FILE_MAX);
    }
    text = malloc((size_t)len + 1);
    if (text == NULL || fread(text, 1, (size_t)len, f) != (size_t)len) {
        free(text);
        fclose(f);
        return vram_errorf(err, cap, VRAM_E_IO, "%s: cannot read it", what);
    }
    fclose(f);
    text[len] = '\0';
    *doc = cJSON_ParseWithLength(text, (size_t)len);
    if (*doc == NULL) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
        if (off >= 0) snprintf(err, cap, "%s: not valid JSON (at byte %ld)", what, off);
        else snprintf(err, cap, "%s: not valid JSON", what);
        free(text);
        return VRAM_E_INVALID;
    }
    free(text);
    vram_json_last_wins(*doc); /* a key given twice: the last, as Python's json reads it */
    return VRAM_OK;
}

static const cJSON *item(const cJSON *o, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* "cpu" -> VRAM_PLAN_CPU, "gpuN" (N < VRAM_PLAN_MAX_GPUS) -> N, into *dev; 0 for anything
 * else. */
static int parse_device(const char *t, int *dev) {
    unsigned g = 0;
    int used = 0;
    if (strcmp(t, "cpu") == 0) {
        *dev = VRAM_PLAN_CPU;
        return 1;
    }
    if (sscanf(t, "gpu%3u%n", &g, &used) == 1 && t[used] == '\0' && t[3] >= '0' && t[3] <= '9' &&
        g < VRAM_PLAN_MAX_GPUS) {
        *dev = (int)g;
        return 1;
    }
    return 0;
}

static vram_status load_components(const cJSON *list, const char *what, vram_plan *p, char *err,
                                   size_t cap) {
    const cJSON *c;
    vram_status st = VRAM_OK;
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
        FAIL("%s: inputs has neither \"model\" nor \"components\"", what);
    cJSON_ArrayForEach(c, list) {
        const cJSON *n = item(c, "name"), *mo = item(c, "model"), *dv = item(c, "device");
        char spec[700];
        if (!cJSON_IsString(n) || !cJSON_IsString(mo) || !(cJSON_IsString(dv) || cJSON_IsNull(dv)))
            FAIL("%s: a component lacks name, model or device", what);
        if (strlen(n->valuestring) + strlen(mo->valuestring) + 40 > sizeof spec)
            FAIL("%s: component '%s' is too long", what, n->valuestring);
        snprintf(spec, sizeof spec, "%s=%s%s%s", n->valuestring, mo->valuestring,
                 cJSON_IsString(dv) ? "@" : "", cJSON_IsString(dv) ? dv->valuestring : "");
        if ((st = vram_plan_add_component(p, spec, err, cap)) != VRAM_OK) return st;
    }
out:
    return st;
}

static vram_status load_workload(const cJSON *x, const char *what, vram_workload *w, char *err,
                                 size_t cap) {
    static const struct {
        const char *key;
        vram_wl_option opt;
    } keys[] = {{"mode", VRAM_WL_MODE},
                {"format", VRAM_WL_FORMAT},
                {"compute", VRAM_WL_COMPUTE},
                {"batch", VRAM_WL_BATCH},
                {"seq", VRAM_WL_SEQ},
                {"src_len", VRAM_WL_SRC},
                {"tgt_len", VRAM_WL_TGT},
                {"optimizer", VRAM_WL_OPTIMIZER},
                {"grad_accum", VRAM_WL_GRAD_ACCUM},
                {"lora_rank", VRAM_WL_LORA_RANK},
                {"images", VRAM_WL_IMAGES},
                {"image_tokens", VRAM_WL_IMAGE_TOKENS},
                {"logits", VRAM_WL_LOGITS}};
    const cJSON *lt;
    vram_status st = VRAM_OK;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const cJSON *v = item(x, keys[k].key);
        char num[32];
        if (v == NULL || cJSON_IsNull(v)) continue;
        if (cJSON_IsNumber(v)) {
            if (v->valuedouble == 0) continue; /* 0 = default */
            if (v->valuedouble < 0 || v->valuedouble > 1e15 ||
                v->valuedouble != (double)(uint64_t)v->valuedouble)
                FAIL("%s: workload.%s is not a whole number", what, keys[k].key);
            snprintf(num, sizeof num, "%llu", (unsigned long long)v->valuedouble);
            st = vram_wl_apply(w, keys[k].opt, num, err, cap);
        } else if (cJSON_IsString(v)) {
            st = vram_wl_apply(w, keys[k].opt, v->valuestring, err, cap);
        } else {
            FAIL("%s: workload.%s has the wrong type", what, keys[k].key);
        }
        if (st != VRAM_OK) return st;
    }
    w->checkpointing = cJSON_IsTrue(item(x, "checkpointing"));
    w->flash_attention = cJSON_IsTrue(item(x, "flash_attention"));
    lt = item(x, "lora_targets");
    if (cJSON_IsNumber(lt)) {
        if (lt->valuedouble < 0 || lt->valuedouble > VRAM_LORA_ALL ||
            lt->valuedouble != (double)(uint32_t)lt->valuedouble)
            FAIL("%s: workload.lora_targets is out of range", what);
        w->lora_targets = (uint32_t)lt->valuedouble;
    }
out:
    return st;
}

static vram_status load_machine(const cJSON *x, const char *what, vram_plan *p, char *err,
                                size_t cap) {
    const cJSON *gs = item(x, "gpus"), *g;
    const cJSON *hf = item(x, "host_free_bytes"), *mg = item(x, "margin_bytes");
    vram_status st = VRAM_OK;
    if (!p->mach.gpus_given && cJSON_IsArray(gs)) {
        cJSON_ArrayForEach(g, gs) {
            const cJSON *t = item(g, "total_bytes"), *fr = item(g, "free_bytes"),
                        *cc = item(g, "cc");
            vram_gpu_budget *o;
            if (p->mach.ngpu == VRAM_PLAN_MAX_GPUS)
                FAIL("%s: more than %d GPUs", what, VRAM_PLAN_MAX_GPUS);
            if (!cJSON_IsNumber(t) || !cJSON_IsNumber(fr) || t->valuedouble <= 0 ||
                fr->valuedouble < 0 || fr->valuedouble > t->valuedouble || t->valuedouble > 1.8e19)
                FAIL("%s: a GPU lacks sane total_bytes / free_bytes", what);
            o = &p->mach.gpus[p->mach.ngpu++];
            memset(o, 0, sizeof *o);
            o->total = (uint64_t)t->valuedouble;
            o->free = (uint64_t)fr->valuedouble;
            if (cJSON_IsString(cc)) {
                unsigned a = 0, b = 0;
                int nn = 0;
                if (sscanf(cc->valuestring, "%2u.%1u%n", &a, &b, &nn) != 2 ||
                    cc->valuestring[nn] != '\0')
                    FAIL("%s: a GPU's cc '%s' is not M.m", what, cc->valuestring);
                o->cc_major = (int)a;
                o->cc_minor = (int)b;
            }
        }
    }
    if (!p->mach.host_given && cJSON_IsNumber(hf) && hf->valuedouble >= 0 && hf->valuedouble < 1.8e19) {
        p->mach.host = (uint64_t)hf->valuedouble;
        p->mach.host_given = 1;
    }
    if (!p->mach.margin_given && cJSON_IsNumber(mg) && mg->valuedouble >= 0 &&
        mg->valuedouble < 1.8e19) {
        p->mach.margin = (uint64_t)mg->valuedouble;
        p->mach.margin_given = 1;
    }
out:
    return st;
}

/* What the saved plan decided: the chosen strategy of a --model plan, where each component
 * went (entries naming no current component are left out). */
static vram_status load_saved(const cJSON *doc, const char *what, vram_plan *p, char *err,
                              size_t cap) {
    const cJSON *sc = item(doc, "chosen"), *sp = item(doc, "placement"), *e;
    vram_status st = VRAM_OK;
    if (cJSON_IsString(sc)) {
        p->saved.chosen_given = 1;
        snprintf(p->saved.chosen, sizeof p->saved.chosen, "%s", sc->valuestring);
    }
    cJSON_ArrayForEach(e, sp) {
        const cJSON *cn = item(e, "component"), *dv = item(e, "device");
        vram_outcome o = {-1, VRAM_PLAN_NONE, cJSON_IsTrue(item(e, "fits"))};
        if (!cJSON_IsString(cn)) continue;
        for (int i = 0; i < p->ncomp; i++)
            if (strcmp(p->comps[i].name, cn->valuestring) == 0) o.component = i;
        if (o.component < 0) continue;
        if (cJSON_IsString(dv) && !parse_device(dv->valuestring, &o.device))
            FAIL("%s: the placement of '%s' names a device that is not cpu or gpu0..gpu%d", what,
                 cn->valuestring, VRAM_PLAN_MAX_GPUS - 1);
        if (p->saved.placed == VRAM_PLACE_MAX)
            FAIL("%s: more than %d placement entries", what, VRAM_PLACE_MAX);
        p->saved.place[p->saved.placed++] = o;
    }
out:
    return st;
}

vram_status vram_plan_doc_load(const char *path, const char *what, vram_plan *p, char *err,
                               size_t cap) {
    cJSON *doc = NULL;
    const cJSON *in, *x;
    vram_status st = vram_plan_read_json(path, what, &doc, err, cap);
    if (st != VRAM_OK) return st;
    p->saved.present = 1;
    x = item(doc, "version");
    if (!cJSON_IsNumber(x) || x->valuedouble != VRAM_PLAN_VERSION)
        FAIL("%s: not a vramkit plan of version %d", what, VRAM_PLAN_VERSION);
    in = item(doc, "inputs");
    if (!cJSON_IsObject(in)) FAIL("%s: no \"inputs\" object", what);
    x = item(in, "model");
    if (cJSON_IsString(x)) {
        if (strlen(x->valuestring) >= sizeof p->comps[0].model_arg || !x->valuestring[0])
            FAIL("%s: inputs.model is empty or too long", what);
        if ((st = vram_plan_set_model(p, x->valuestring, err, cap)) != VRAM_OK) goto out;
    } else if ((st = load_components(item(in, "components"), what, p, err, cap)) != VRAM_OK) {
        goto out;
    }
    x = item(in, "workload");
    if (cJSON_IsObject(x) && (st = load_workload(x, what, &p->w, err, cap)) != VRAM_OK) goto out;
    x = item(in, "machine");
    if (cJSON_IsObject(x) && (st = load_machine(x, what, p, err, cap)) != VRAM_OK) goto out;
    st = load_saved(doc, what, p, err, cap);
out:
    cJSON_Delete(doc);
    return st;
}

/* A plan names only strategies vramkit plans (isolate/chain.h's vocabulary): a name is run
 * as {strategy} in the user's command, so a file must not be able to choose its text. */
static vram_status name_check(const cJSON *name, const char *what, int i, char *err, size_t cap) {
    char *t;
    vram_status st;
    if (cJSON_IsString(name) && vram_strategy_known(name->valuestring)) return VRAM_OK;
    if (!cJSON_IsString(name))
        return vram_errorf(err, cap, VRAM_E_INVALID, "%s: strategy %d has no \"name\" string", what, i);
    t = vram_clean_text(name->valuestring, strlen(name->valuestring), VRAM_PLAN_NAME_MAX, 0);
    st = vram_errorf(err, cap, VRAM_E_INVALID,
                     "%s: strategy %d is named '%s%s', not a strategy vramkit plans (see 'vramkit "
                     "try --help')", what, i, t ? t : "?",
                     strlen(name->valuestring) > VRAM_PLAN_NAME_MAX ? "..." : "");
    free(t);
    return st;
}

vram_status vram_plan_doc_strategies(const char *path, const char *what, vram_plan_rows *rows,
                                     char *err, size_t cap) {
    cJSON *doc = NULL;
    const cJSON *version, *list, *it;
    int i = 0;
    vram_status st = vram_plan_read_json(path, what, &doc, err, cap);
    if (st != VRAM_OK) return st;
    memset(rows, 0, sizeof *rows);
    version = item(doc, "version");
    list = item(doc, "strategies");
    if (!cJSON_IsObject(doc) || !cJSON_IsNumber(version) ||
        version->valuedouble != VRAM_PLAN_VERSION)
        FAIL("%s: not a vramkit plan of version %d (save one with 'vramkit plan --model MODEL "
             "--save FILE')",
             what, VRAM_PLAN_VERSION);
    if (!cJSON_IsArray(list)) FAIL("%s: the plan has no \"strategies\" list", what);
    if (cJSON_GetArraySize(list) == 0)
        FAIL("%s: a plan of components has no strategy chain (save one with 'vramkit plan "
             "--model MODEL --save FILE')",
             what);
    cJSON_ArrayForEach(it, list) {
        const cJSON *name = item(it, "name"), *fits = item(it, "fits"), *devs = item(it, "devices");
        const cJSON *fmt = item(it, "format"), *why = item(it, "reason_text"), *d;
        vram_plan_row *r;
        int ndev = 0;
        i++;
        if ((st = name_check(name, what, i, err, cap)) != VRAM_OK) goto out;
        if (!cJSON_IsBool(fits))
            FAIL("%s: strategy %d (%s) has no \"fits\": true or false", what, i, name->valuestring);
        if (rows->n == VRAM_PLAN_MAX_ROWS)
            FAIL("%s: more than %d strategies", what, VRAM_PLAN_MAX_ROWS);
        r = &rows->row[rows->n];
        snprintf(r->name, sizeof r->name, "%s", name->valuestring);
        r->fits = cJSON_IsTrue(fits);
        r->device = VRAM_PLAN_NONE;
        if (!cJSON_IsString(fmt) ||
            vram_dtype_from_name(fmt->valuestring, strlen(fmt->valuestring), &r->format) != VRAM_OK)
            r->format = VRAM_DTYPE_NONE;
        if (cJSON_IsString(why)) snprintf(r->why, sizeof r->why, "%s", why->valuestring);
        if (r->fits) {
            if (!cJSON_IsArray(devs))
                FAIL("%s: strategy %d (%s) has no \"devices\" list", what, i, name->valuestring);
            cJSON_ArrayForEach(d, devs) {
                int dev = VRAM_PLAN_NONE;
                if (!cJSON_IsString(d) || !parse_device(d->valuestring, &dev))
                    FAIL("%s: strategy %d (%s) names a device that is not cpu or gpu0..gpu%d", what,
                         i, name->valuestring, VRAM_PLAN_MAX_GPUS - 1);
                r->device = ndev++ == 0 ? dev : VRAM_PLAN_NONE;
            }
            if (ndev == 0)
                FAIL("%s: strategy %d (%s) fits but lists no device", what, i, name->valuestring);
        }
        rows->n++;
    }
out:
    cJSON_Delete(doc);
    return st;
}

void vram_plan_rows_from_chain(const vram_plan *p, vram_plan_rows *rows) {
    memset(rows, 0, sizeof *rows);
    for (int i = 0; i < p->chain.count && rows->n < VRAM_PLAN_MAX_ROWS; i++) {
        const vram_candidate *c = &p->chain.cand[i];
        vram_plan_row *r = &rows->row[rows->n++];
        int ndev = 0;
        snprintf(r->name, sizeof r->name, "%s", c->name);
        r->fits = c->fits;
        r->format = c->format;
        r->device = VRAM_PLAN_NONE; /* as read from a document: only a fitting one's */
        for (int g = 0; g < VRAM_PLAN_MAX_GPUS && c->fits; g++)
            if (c->gpu_mask & (1u << g)) r->device = ndev++ == 0 ? g : VRAM_PLAN_NONE;
        if (c->fits && c->cpu_bytes) r->device = ndev++ == 0 ? VRAM_PLAN_CPU : VRAM_PLAN_NONE;
        vram_plan_candidate_text(c, r->why, sizeof r->why);
    }
}
