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

#include "util/text.h"
#include "workload.h"

/* ---- writing -------------------------------------------------------------------------- */

/* Building a document: every add goes through these, and one failed allocation makes the
 * whole document NULL at the end (cJSON ignores adds to NULL parents). */
typedef struct doc_build {
    int failed;
} doc_build;

static cJSON *checked(doc_build *b, cJSON *item) {
    if (item == NULL) b->failed = 1;
    return item;
}

static void add(doc_build *b, cJSON *to, const char *key, cJSON *item) {
    if (item == NULL || to == NULL) {
        b->failed = 1;
        cJSON_Delete(item);
        return;
    }
    if (key != NULL ? !cJSON_AddItemToObject(to, key, item) : !cJSON_AddItemToArray(to, item)) {
        b->failed = 1;
        cJSON_Delete(item);
    }
}

static void add_u64(doc_build *b, cJSON *to, const char *key, uint64_t v) {
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    add(b, to, key, cJSON_CreateRaw(num));
}

static void add_str(doc_build *b, cJSON *to, const char *key, const char *s) {
    add(b, to, key, s != NULL ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void add_bool(doc_build *b, cJSON *to, const char *key, int v) {
    add(b, to, key, cJSON_CreateBool(v));
}

static cJSON *inputs_json(doc_build *b, const vram_plan *p) {
    const vram_workload *w = &p->w;
    cJSON *in = checked(b, cJSON_CreateObject()), *wl, *mc, *gs;
    if (p->single) {
        add_str(b, in, "model", p->comps[0].model_arg);
    } else {
        cJSON *cs = checked(b, cJSON_CreateArray());
        for (int i = 0; i < p->ncomp; i++) {
            cJSON *c = checked(b, cJSON_CreateObject());
            add_str(b, c, "name", p->comps[i].name);
            add_str(b, c, "model", p->comps[i].model_arg);
            add_str(b, c, "device", p->comps[i].setting_text[0] ? p->comps[i].setting_text : NULL);
            add(b, cs, NULL, c);
        }
        add(b, in, "components", cs);
        add_str(b, in, "global_device", p->global_text);
    }
    wl = checked(b, cJSON_CreateObject());
    add_str(b, wl, "mode", w->mode == VRAM_MODE_TRAIN ? "train" : "infer");
    add_str(b, wl, "format", w->format != VRAM_DTYPE_NONE ? vram_dtype_name(w->format) : NULL);
    add_str(b, wl, "compute", w->compute != VRAM_DTYPE_NONE ? vram_dtype_name(w->compute) : NULL);
    add_u64(b, wl, "batch", w->batch);
    add_u64(b, wl, "seq", w->seq);
    add_u64(b, wl, "src_len", w->src_len);
    add_u64(b, wl, "tgt_len", w->tgt_len);
    add_str(b, wl, "optimizer", vram_optimizer_name(w->optimizer));
    add_bool(b, wl, "checkpointing", w->checkpointing);
    add_bool(b, wl, "flash_attention", w->flash_attention);
    add_u64(b, wl, "grad_accum", w->grad_accum);
    add_u64(b, wl, "lora_rank", w->lora_rank);
    add_u64(b, wl, "lora_targets", w->lora_targets);
    if (w->images) add_u64(b, wl, "images", w->images); /* (absent from older plans) */
    if (w->image_tokens) add_u64(b, wl, "image_tokens", w->image_tokens);
    if (w->logits) /* (absent from older plans: the default) */
        add_str(b, wl, "logits", w->logits == VRAM_LOGITS_ALL ? "all" : "last");
    add(b, in, "workload", wl);
    mc = checked(b, cJSON_CreateObject());
    gs = checked(b, cJSON_CreateArray());
    for (int g = 0; g < p->ngpu; g++) {
        cJSON *o = checked(b, cJSON_CreateObject());
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", p->gpus[g].cc_major, p->gpus[g].cc_minor);
        add_u64(b, o, "total_bytes", p->gpus[g].total);
        add_u64(b, o, "free_bytes", p->gpus[g].free);
        add_str(b, o, "cc", p->gpus[g].cc_major ? cc : NULL);
        add(b, gs, NULL, o);
    }
    add(b, mc, "gpus", gs);
    add_bool(b, mc, "gpus_assumed", !p->gpus_detected);
    add_str(b, mc, "no_gpu_reason", p->ngpu == 0 ? p->no_gpu : NULL);
    if (p->gpus_detected) { /* read here: how, and who else holds memory on them */
        const vram_machine_view *v = &p->view;
        add_str(b, mc, "gpu_source", v->source);
        add_str(b, mc, "gpu_source_note", v->note[0] ? v->note : NULL);
        if (v->tenants_known) {
            cJSON *ts = checked(b, cJSON_CreateArray());
            for (int i = 0; i < v->ntenants; i++) {
                const vram_machine_tenant *t = &v->tenants[i];
                cJSON *o = checked(b, cJSON_CreateObject());
                add_u64(b, o, "gpu", (uint64_t)t->gpu);
                add_u64(b, o, "pid", t->pid);
                add_str(b, o, "name", t->name[0] ? t->name : NULL);
                if (t->bytes == VRAM_GPUMEM_UNKNOWN) add(b, o, "bytes", cJSON_CreateNull());
                else add_u64(b, o, "bytes", t->bytes);
                add(b, ts, NULL, o);
            }
            add(b, mc, "tenants", ts);
            add_u64(b, mc, "tenants_more", (uint64_t)v->tenants_more);
        } else {
            add(b, mc, "tenants", cJSON_CreateNull());
        }
    }
    add_u64(b, mc, "host_free_bytes", p->host);
    add_u64(b, mc, "margin_bytes", vram_devices_margin(&p->dev));
    add(b, in, "machine", mc);
    return in;
}

static uint64_t cand_total(const vram_candidate *c) {
    uint64_t t = c->cpu_bytes;
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++) t += c->gpu_bytes[g];
    return t;
}

static cJSON *strategy_json(doc_build *b, const vram_candidate *c) {
    cJSON *o = checked(b, cJSON_CreateObject());
    cJSON *devs = checked(b, cJSON_CreateArray()), *per = checked(b, cJSON_CreateArray());
    char name[16], why[512];
    add_str(b, o, "name", c->name);
    add_str(b, o, "format", vram_dtype_name(c->format));
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++) {
        cJSON *d;
        if (!(c->gpu_mask & (1u << g))) continue;
        add_str(b, devs, NULL, vram_plan_device_name(g, name, sizeof name));
        d = checked(b, cJSON_CreateObject());
        add_str(b, d, "device", vram_plan_device_name(g, name, sizeof name));
        add_u64(b, d, "bytes", c->gpu_bytes[g]);
        add_u64(b, d, "blocks", c->gpu_blocks[g]);
        add(b, per, NULL, d);
    }
    if (c->cpu_bytes) {
        cJSON *d = checked(b, cJSON_CreateObject());
        add_str(b, devs, NULL, "cpu");
        add_str(b, d, "device", "cpu");
        add_u64(b, d, "bytes", c->cpu_bytes);
        add_u64(b, d, "blocks", c->cpu_blocks);
        add(b, per, NULL, d);
    }
    add(b, o, "devices", devs);
    add_u64(b, o, "bytes", cand_total(c));
    add(b, o, "per_device", per);
    add_bool(b, o, "fits", c->fits);
    add_str(b, o, "reason", vram_reason_name(c->reason));
    add_str(b, o, "reason_text", vram_plan_candidate_text(c, why, sizeof why));
    return o;
}

/* The placement of a single model: one entry per device of its chosen strategy. */
static void chosen_placement(doc_build *b, cJSON *arr, const vram_plan *p) {
    const vram_candidate *c;
    char name[16];
    if (p->chain.chosen < 0) return;
    c = &p->chain.cand[p->chain.chosen];
    for (int g = 0; g <= VRAM_PLAN_MAX_GPUS; g++) {
        int dev = g < VRAM_PLAN_MAX_GPUS ? g : VRAM_PLAN_CPU;
        uint64_t bytes = g < VRAM_PLAN_MAX_GPUS ? c->gpu_bytes[g] : c->cpu_bytes;
        cJSON *o;
        if (g < VRAM_PLAN_MAX_GPUS ? !(c->gpu_mask & (1u << g)) : c->cpu_bytes == 0) continue;
        o = checked(b, cJSON_CreateObject());
        add_str(b, o, "component", "model");
        add_str(b, o, "model", p->comps[0].m.label);
        add_str(b, o, "device", vram_plan_device_name(dev, name, sizeof name));
        add_str(b, o, "strategy", c->name);
        add_u64(b, o, "bytes", bytes);
        add_bool(b, o, "fits", 1);
        add(b, arr, NULL, o);
    }
}

static cJSON *component_json(doc_build *b, const vram_plan *p, int i) {
    const vram_plan_component *c = &p->comps[i];
    const vram_placement *pl = &p->placed[i];
    cJSON *o = checked(b, cJSON_CreateObject());
    char name[16], st[32], why[512];
    add_str(b, o, "component", c->name);
    add_str(b, o, "model", c->m.label);
    add_str(b, o, "device", vram_plan_device_name(pl->device, name, sizeof name));
    add_str(b, o, "strategy",
            pl->device == VRAM_PLAN_CPU ? "cpu" : vram_plan_format_strategy(c->gpu_format));
    add_u64(b, o, "bytes", pl->bytes);
    add_bool(b, o, "fits", pl->fits);
    add_str(b, o, "setting", vram_plan_setting_text(pl->setting, st, sizeof st));
    add_str(b, o, "setting_from", c->setting_from);
    add_u64(b, o, "short_by_bytes", pl->short_by ? pl->short_by : pl->host_short_by);
    add_str(b, o, "reason", vram_place_reason_name(pl->reason));
    add_str(b, o, "reason_text", vram_plan_placement_text(pl, why, sizeof why));
    return o;
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

char *vram_plan_doc_json(const vram_plan *p, const vram_change *changes, size_t n) {
    doc_build b = {0};
    cJSON *doc = checked(&b, cJSON_CreateObject());
    cJSON *strategies = checked(&b, cJSON_CreateArray());
    cJSON *placement = checked(&b, cJSON_CreateArray());
    char *text = NULL, *out = NULL;
    add_u64(&b, doc, "version", VRAM_PLAN_VERSION);
    add(&b, doc, "inputs", inputs_json(&b, p));
    if (p->single)
        for (int i = 0; i < p->chain.count; i++)
            add(&b, strategies, NULL, strategy_json(&b, &p->chain.cand[i]));
    add(&b, doc, "strategies", strategies);
    if (p->single)
        add_str(&b, doc, "chosen",
                p->chain.chosen >= 0 ? p->chain.cand[p->chain.chosen].name : NULL);
    else add_bool(&b, doc, "chosen", p->sum.all_fit);
    if (p->single) chosen_placement(&b, placement, p);
    else
        for (int i = 0; i < p->ncomp; i++) add(&b, placement, NULL, component_json(&b, p, i));
    add(&b, doc, "placement", placement);
    if (!p->single) {
        /* each GPU itemised: used_bytes = components_bytes + cuda_context_bytes +
           workspace_bytes (added in version 1 without a version change: readers of older
           plans never needed it, and this reader does not need it either) */
        cJSON *gu = checked(&b, cJSON_CreateArray());
        for (int g = 0; g < p->sum.gpus; g++) {
            vram_plan_gpu_use u;
            char name[16];
            cJSON *o;
            if (vram_plan_gpu_use_of(p, g, &u) != VRAM_OK) continue;
            o = checked(&b, cJSON_CreateObject());
            add_str(&b, o, "device", vram_plan_device_name(g, name, sizeof name));
            add_u64(&b, o, "budget_bytes", u.budget);
            add_u64(&b, o, "used_bytes", u.used);
            add_u64(&b, o, "components", (uint64_t)u.components);
            add_u64(&b, o, "components_bytes", u.components_bytes);
            add_u64(&b, o, "cuda_context_bytes", u.cuda_context);
            add_u64(&b, o, "workspace_bytes", u.workspace);
            add(&b, gu, NULL, o);
        }
        add(&b, doc, "gpu_use", gu);
    }
    {
        /* what the model readers noted (one shard of a set read alone, a GGUF not read
           beside safetensors, ...): only when there is something, output only */
        cJSON *notes = NULL;
        for (int i = 0; i < p->ncomp; i++) {
            cJSON *o;
            if (p->comps[i].m.note[0] == '\0') continue;
            if (notes == NULL) notes = checked(&b, cJSON_CreateArray());
            o = checked(&b, cJSON_CreateObject());
            add_str(&b, o, "component", p->comps[i].name);
            add_str(&b, o, "note", p->comps[i].m.note);
            add(&b, notes, NULL, o);
        }
        if (notes != NULL) add(&b, doc, "notes", notes);
    }
    if (p->saved.present) {
        cJSON *ch = checked(&b, cJSON_CreateArray());
        char buf[512];
        for (size_t i = 0; i < n; i++)
            add_str(&b, ch, NULL, vram_plan_change_text(p, &changes[i], buf, sizeof buf));
        add(&b, doc, "changes", ch);
    }
    if (!b.failed) text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (text != NULL) {
        size_t len = strlen(text);
        out = malloc(len + 2);
        if (out != NULL) {
            memcpy(out, text, len);
            out[len] = '\n';
            out[len + 1] = '\0';
        }
        cJSON_free(text);
    }
    return out;
}

vram_status vram_plan_doc_save(const char *path, const char *text, char *err, size_t cap) {
    char tmp[4096];
    FILE *f;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        return vram_errorf(err, cap, VRAM_E_INVALID, "--save %s: path too long", path);
    }
    f = fopen(tmp, "wb");
    if (f == NULL) {
        return vram_errorf(err, cap, VRAM_E_IO, "--save %s: %s", path, strerror(errno));
    }
    if (fputs(text, f) == EOF || fclose(f) != 0) {
        unlink(tmp);
        return vram_errorf(err, cap, VRAM_E_IO, "--save %s: write failed", path);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return vram_errorf(err, cap, VRAM_E_IO, "--save %s: %s", path, strerror(e));
    }
    return VRAM_OK;
}

/* ---- reading -------------------------------------------------------------------------- */

/* In a reader that owns something to free at `out`. */
#define FAIL(...)                                                \
    do {                                                         \
        st = vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__); \
        goto out;                                                \
    } while (0)

/* The file's JSON (the caller deletes it). */
static vram_status read_json(const char *path, const char *what, cJSON **doc, char *err,
                             size_t cap) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long len;
    *doc = NULL;
    if (f == NULL) {
        if (errno == ENOENT) {
            return vram_errorf(err, cap, VRAM_E_INVALID, "%s: no such file", what);
        }
        return vram_errorf(err, cap, VRAM_E_IO, "%s: %s", what, strerror(errno));
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
    if (!p->gpus_given && cJSON_IsArray(gs)) {
        cJSON_ArrayForEach(g, gs) {
            const cJSON *t = item(g, "total_bytes"), *fr = item(g, "free_bytes"),
                        *cc = item(g, "cc");
            vram_gpu_budget *o;
            if (p->ngpu == VRAM_PLAN_MAX_GPUS)
                FAIL("%s: more than %d GPUs", what, VRAM_PLAN_MAX_GPUS);
            if (!cJSON_IsNumber(t) || !cJSON_IsNumber(fr) || t->valuedouble <= 0 ||
                fr->valuedouble < 0 || fr->valuedouble > t->valuedouble || t->valuedouble > 1.8e19)
                FAIL("%s: a GPU lacks sane total_bytes / free_bytes", what);
            o = &p->gpus[p->ngpu++];
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
    if (!p->host_given && cJSON_IsNumber(hf) && hf->valuedouble >= 0 && hf->valuedouble < 1.8e19) {
        p->host = (uint64_t)hf->valuedouble;
        p->host_given = 1;
    }
    if (!p->margin_given && cJSON_IsNumber(mg) && mg->valuedouble >= 0 &&
        mg->valuedouble < 1.8e19) {
        p->margin = (uint64_t)mg->valuedouble;
        p->margin_given = 1;
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
    vram_status st = read_json(path, what, &doc, err, cap);
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

/* A strategy name try can run: 1 to VRAM_PLAN_NAME_MAX bytes, no blank or control byte. */
static int name_ok(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > VRAM_PLAN_NAME_MAX) return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f) return 0;
    return 1;
}

vram_status vram_plan_doc_strategies(const char *path, const char *what, vram_plan_rows *rows,
                                     char *err, size_t cap) {
    cJSON *doc = NULL;
    const cJSON *version, *list, *it;
    int i = 0;
    vram_status st = read_json(path, what, &doc, err, cap);
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
        if (!cJSON_IsString(name) || !name_ok(name->valuestring))
            FAIL("%s: strategy %d has no valid \"name\" (1 to %d characters, no blanks)", what, i,
                 VRAM_PLAN_NAME_MAX);
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
