/* driver/plan/planner.c — see planner.h. */
#include "planner.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/machine.h"
#include "util/text.h"
#include "workload.h"

/* ---- inputs ------------------------------------------------------------------------- */

vram_status vram_plan_set_model(vram_plan *p, const char *model, char *err, size_t cap) {
    vram_plan_component *c = &p->comps[0];
    if (p->single) return vram_errorf(err, cap, VRAM_E_INVALID, "--model: one model only");
    if (p->ncomp > 0)
        return vram_errorf(err, cap, VRAM_E_INVALID, "--model and --component do not mix");
    if (model[0] == '\0' || strlen(model) >= sizeof c->model_arg)
        return vram_errorf(err, cap, VRAM_E_INVALID, "--model: '%s' is empty or too long", model);
    memset(c, 0, sizeof *c);
    p->single = 1;
    p->ncomp = 1;
    snprintf(c->name, sizeof c->name, "model");
    snprintf(c->model_arg, sizeof c->model_arg, "%s", model);
    return VRAM_OK;
}

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

vram_status vram_plan_add_component(vram_plan *p, const char *spec, char *err, size_t cap) {
    const char *eq = strchr(spec, '='), *at;
    vram_plan_component *c;
    size_t nlen;
    if (p->single) FAIL("--model and --component do not mix");
    if (p->ncomp == VRAM_PLACE_MAX) FAIL("--component: at most %d components", VRAM_PLACE_MAX);
    if (eq == NULL || eq == spec) FAIL("--component: '%s' is not NAME=MODEL[@DEVICE]", spec);
    nlen = (size_t)(eq - spec);
    c = &p->comps[p->ncomp];
    memset(c, 0, sizeof *c);
    if (nlen >= sizeof c->name)
        FAIL("--component: name in '%s' is longer than %zu bytes", spec, sizeof c->name - 1);
    for (size_t i = 0; i < nlen; i++)
        if (!isalnum((unsigned char)spec[i]) && spec[i] != '-' && spec[i] != '_')
            FAIL("--component: name '%.*s' may hold only letters, digits, '-' and '_'", (int)nlen,
                 spec);
    memcpy(c->name, spec, nlen);
    for (int k = 0; k < p->ncomp; k++)
        if (strcmp(p->comps[k].name, c->name) == 0)
            FAIL("--component: '%s' is given twice", c->name);
    at = strrchr(eq + 1, '@');
    if (at != NULL) {
        if ((size_t)(at - eq - 1) >= sizeof c->model_arg || at == eq + 1)
            FAIL("--component: '%s' has no model before '@'", spec);
        memcpy(c->model_arg, eq + 1, (size_t)(at - eq - 1));
        if (strlen(at + 1) >= sizeof c->setting_text || at[1] == '\0')
            FAIL("--component: '%s' has no device after '@'", spec);
        snprintf(c->setting_text, sizeof c->setting_text, "%s", at + 1);
    } else {
        if (strlen(eq + 1) >= sizeof c->model_arg || eq[1] == '\0')
            FAIL("--component: '%s' has no model", spec);
        snprintf(c->model_arg, sizeof c->model_arg, "%s", eq + 1);
    }
    p->ncomp++;
    return VRAM_OK;
}

/* ---- making the plan ---------------------------------------------------------------- */

static vram_status parse_setting(const char *what, const char *text, vram_device_setting *out,
                                 char *err, size_t cap) {
    if (vram_setting_parse(text, strlen(text), out) != VRAM_OK)
        FAIL("%s: '%s' is not a device (auto, cpu, cuda, cuda:N)", what, text);
    return VRAM_OK;
}

#undef FAIL

/* Each component's setting: @DEVICE, else VRAMKIT_<NAME>_DEVICE (components only), else the
 * global one (VRAMKIT_DEVICE, default auto). */
static vram_status resolve_settings(vram_plan *p, char *err, size_t cap) {
    const char *g = getenv("VRAMKIT_DEVICE");
    vram_status st;
    p->global.kind = VRAM_SETTING_AUTO;
    p->global.gpu = 0;
    snprintf(p->global_text, sizeof p->global_text, "auto");
    if (g != NULL && g[0] != '\0') {
        if ((st = parse_setting("VRAMKIT_DEVICE", g, &p->global, err, cap)) != VRAM_OK) return st;
        snprintf(p->global_text, sizeof p->global_text, "%.31s", g);
    }
    for (int i = 0; i < p->ncomp; i++) {
        vram_plan_component *c = &p->comps[i];
        char env[96];
        const char *v;
        if (c->setting_text[0]) {
            char what[96];
            snprintf(what, sizeof what, "--component %s", c->name);
            if ((st = parse_setting(what, c->setting_text, &c->setting, err, cap)) != VRAM_OK)
                return st;
            snprintf(c->setting_from, sizeof c->setting_from, "%s",
                     p->saved.present ? "saved plan" : "command line");
            continue;
        }
        snprintf(env, sizeof env, "VRAMKIT_%s_DEVICE", c->name);
        for (char *q = env; *q; q++) *q = *q == '-' ? '_' : (char)toupper((unsigned char)*q);
        v = p->single ? NULL : getenv(env);
        if (v != NULL && v[0] != '\0') {
            if ((st = parse_setting(env, v, &c->setting, err, cap)) != VRAM_OK) return st;
            snprintf(c->setting_text, sizeof c->setting_text, "%.31s", v);
            snprintf(c->setting_from, sizeof c->setting_from, "%s", env);
        } else {
            c->setting.kind = VRAM_SETTING_INHERIT;
            snprintf(c->setting_from, sizeof c->setting_from, "%s",
                     g != NULL && g[0] ? "VRAMKIT_DEVICE" : "default");
        }
    }
    return VRAM_OK;
}

/* A component on a GPU and on the host (vram_component_workloads). */
static vram_status estimate_component(vram_plan *p, vram_plan_component *c, char *err, size_t cap) {
    vram_workload gw, cw;
    vram_status st;
    vram_component_workloads(&p->w, &p->mach.dev, &gw, &cw);
    c->gpu_format = gw.format;
    st = vram_estimate_model(&c->m.model, &gw, &c->gpu_est);
    if (st != VRAM_OK)
        return vram_errorf(
            err, cap, VRAM_E_INVALID, "component %s (%s): cannot estimate with %s weights: %s",
            c->name, c->m.label, vram_dtype_name(gw.format),
            vram_estimate_refusal(&c->m.model, &gw) == VRAM_REFUSAL_QUANTISED_TRAINING
                ? "quantised weights need --lora-rank to train"
                : vram_status_str(st));
    st = vram_estimate_model(&c->m.model, &cw, &c->cpu_est);
    if (st != VRAM_OK)
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "component %s (%s): cannot estimate on the CPU: %s", c->name, c->m.label,
                           vram_status_str(st));
    return VRAM_OK;
}

vram_status vram_plan_make(vram_plan *p, char *err, size_t cap) {
    vram_component vc[VRAM_PLACE_MAX];
    vram_status st;
    if (cap) err[0] = '\0';
    if ((st = vram_machine_make(&p->mach, p->saved.present ? "none in the saved plan" : NULL, err,
                                cap)) != VRAM_OK)
        return st;
    if ((st = resolve_settings(p, err, cap)) != VRAM_OK) return st;
    for (int i = 0; i < p->ncomp; i++)
        if ((st = vram_model_find(p->comps[i].model_arg, &p->comps[i].m, err, cap)) != VRAM_OK)
            return st;
    if (p->single) {
        vram_plan_component *c = &p->comps[0];
        if ((st = vram_wl_check_model(&p->w, &c->m.model, c->m.label, err, cap)) != VRAM_OK)
            return st;
        st = vram_strategy_chain(&c->m.model, &p->w, &p->mach.dev, &p->chain);
        if (st != VRAM_OK)
            return vram_errorf(
                err, cap, VRAM_E_INVALID, "%s: cannot plan: %s%s", c->m.label, vram_status_str(st),
                vram_estimate_refusal(&c->m.model, &p->w) == VRAM_REFUSAL_LORA_NOT_TRAINING
                    ? " (LoRA is for training: --mode train)"
                    : "");
        return VRAM_OK;
    }
    p->fixed_context = p->fixed_workspace = 0;
    for (int i = 0; i < p->ncomp; i++) {
        vram_plan_component *c = &p->comps[i];
        uint64_t ctx, ws;
        if ((st = estimate_component(p, c, err, cap)) != VRAM_OK) return st;
        if (vram_component_from_estimates(&c->gpu_est, &c->cpu_est, &vc[i]) != VRAM_OK)
            return vram_errorf(err, cap, VRAM_E_INVALID, "component %s: bad estimate", c->name);
        vc[i].setting = c->setting;
        /* the fixed costs each estimate left out of gpu_bytes, paid once per GPU: the
           largest any component's estimate has (today the same constants for all) */
        ctx = c->gpu_est.term[VRAM_TERM_CUDA_CONTEXT].expected;
        ws = c->gpu_est.term[VRAM_TERM_WORKSPACE].expected;
        if (ctx > p->fixed_context) p->fixed_context = ctx;
        if (ws > p->fixed_workspace) p->fixed_workspace = ws;
    }
    /* both are below 1 GiB (estimate.h's constants): the sum cannot wrap; 0 would mean the
       core's default, which is the same sum */
    st = vram_place(&p->mach.dev, p->global, p->fixed_context + p->fixed_workspace, vc,
                    (size_t)p->ncomp, p->placed, &p->sum);
    if (st != VRAM_OK)
        return vram_errorf(err, cap, VRAM_E_INVALID, "cannot place the components: %s",
                           vram_status_str(st));
    return VRAM_OK;
}

vram_status vram_plan_gpu_use_of(const vram_plan *p, int g, vram_plan_gpu_use *out) {
    if (p->single || g < 0 || g >= p->sum.gpus || g >= VRAM_PLAN_MAX_GPUS) return VRAM_E_INVALID;
    memset(out, 0, sizeof *out);
    out->budget = p->sum.gpu[g].budget;
    out->used = p->sum.gpu[g].used;
    for (int i = 0; i < p->ncomp; i++)
        if (p->placed[i].fits && p->placed[i].device == g) {
            out->components++;
            out->components_bytes += p->placed[i].bytes; /* each <= used: no wrap */
        }
    if (out->components > 0) {
        out->cuda_context = p->fixed_context;
        out->workspace = p->fixed_workspace;
    }
    return VRAM_OK;
}

vram_status vram_plan_changes_since(const vram_plan *p, vram_change *out, size_t cap,
                                    size_t *count) {
    vram_outcome now[VRAM_PLACE_MAX];
    const char *now_chosen = NULL, *then_chosen = NULL;
    if (!p->saved.present) {
        *count = 0;
        return VRAM_OK;
    }
    if (p->single) {
        now_chosen = p->chain.chosen >= 0 ? p->chain.cand[p->chain.chosen].name : NULL;
        then_chosen = p->saved.chosen_given ? p->saved.chosen : NULL;
        return vram_plan_changes(then_chosen, now_chosen, NULL, 0, NULL, 0, out, cap, count);
    }
    for (int i = 0; i < p->ncomp; i++) {
        now[i].component = i;
        now[i].device = p->placed[i].device;
        now[i].fits = p->placed[i].fits;
    }
    return vram_plan_changes(NULL, NULL, p->saved.place, p->saved.placed, now, (size_t)p->ncomp,
                             out, cap, count);
}

/* ---- words -------------------------------------------------------------------------- */

const char *vram_plan_device_name(int device, char *buf, size_t cap) {
    if (device == VRAM_PLAN_CPU) return "cpu";
    if (device < 0) return NULL;
    snprintf(buf, cap, "gpu%d", device);
    return buf;
}

const char *vram_plan_format_strategy(vram_dtype gpu_format) {
    if (gpu_format == VRAM_DTYPE_F16) return "fp16";
    if (gpu_format == VRAM_DTYPE_NF4) return "int4";
    return vram_dtype_name(gpu_format);
}

const char *vram_plan_setting_text(vram_device_setting s, char *buf, size_t cap) {
    switch (s.kind) {
    case VRAM_SETTING_CPU: snprintf(buf, cap, "cpu"); break;
    case VRAM_SETTING_GPU: snprintf(buf, cap, "cuda:%d", s.gpu); break;
    case VRAM_SETTING_AUTO: snprintf(buf, cap, "auto"); break;
    default: snprintf(buf, cap, "inherit"); break;
    }
    return buf;
}

/* The values a reason's template may name (vram_reason_text, vram_place_reason_text). */
typedef struct reason_values {
    uint64_t needed, available, bytes, short_by, host_short_by;
    int device, short_device;
    vram_status status;
} reason_values;

static void where(int d, char *buf, size_t cap) {
    if (d == VRAM_PLAN_CPU) snprintf(buf, cap, "the host");
    else if (d < 0) snprintf(buf, cap, "no device");
    else snprintf(buf, cap, "GPU %d", d);
}

static int reason_value(void *ctx, const char *k, size_t n, char *val, size_t vcap) {
    const reason_values *v = ctx;
#define KEY(name) (n == sizeof(name) - 1 && memcmp(k, name, n) == 0)
    if (KEY("needed")) vram_fmt_size(v->needed, val, vcap);
    else if (KEY("available")) vram_fmt_size(v->available, val, vcap);
    else if (KEY("bytes")) vram_fmt_size(v->bytes, val, vcap);
    else if (KEY("short_by")) vram_fmt_size(v->short_by, val, vcap);
    else if (KEY("host_short_by")) vram_fmt_size(v->host_short_by, val, vcap);
    else if (KEY("device")) where(v->device, val, vcap);
    else if (KEY("short_device")) where(v->short_device, val, vcap);
    else if (KEY("status")) snprintf(val, vcap, "%s", vram_status_str(v->status));
    else return 0;
#undef KEY
    return 1;
}

const char *vram_plan_candidate_text(const vram_candidate *c, char *buf, size_t cap) {
    reason_values v = {c->needed,        c->available,   0,        0, 0,
                       c->reason_device, VRAM_PLAN_NONE, c->status};
    const char *tpl = vram_reason_text(c->reason);
    vram_expand(tpl ? tpl : "", reason_value, &v, buf, cap);
    return buf;
}

const char *vram_plan_placement_text(const vram_placement *pl, char *buf, size_t cap) {
    reason_values v = {pl->needed,        0,          pl->bytes,        pl->short_by,
                       pl->host_short_by, pl->device, pl->short_device, VRAM_OK};
    const char *tpl = vram_place_reason_text(pl->reason);
    vram_expand(tpl ? tpl : "", reason_value, &v, buf, cap);
    return buf;
}
