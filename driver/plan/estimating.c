/* driver/plan/estimating.c — see estimating.h. */
#include "estimating.h"

#include <stdio.h>
#include <string.h>

#include "util/text.h"
#include "workload.h"

/* ---- options ------------------------------------------------------------------------- */

vram_status vram_workload_set(vram_workload *w, const char *name, const char *arg, char *err,
                              size_t cap) {
    for (int k = VRAM_WL_BASE; k < VRAM_WL_END; k++)
        if (strcmp(name, vram_wl_option_name((vram_wl_option)k)) == 0)
            return vram_wl_apply(w, (vram_wl_option)k, arg, err, cap);
    return VRAM_E_UNHANDLED;
}

vram_status vram_estimate_set(vram_estimate_opts *o, const char *name, const char *arg,
                              char *err, size_t cap) {
    vram_status st;
    if ((st = vram_workload_set(&o->w, name, arg, err, cap)) != VRAM_E_UNHANDLED) return st;
    if ((st = vram_parallel_set(&o->layout, name, arg, err, cap)) != VRAM_E_UNHANDLED) return st;
    if (strcmp(name, "host-memory") == 0) return VRAM_E_UNHANDLED; /* plan's, not estimate's */
    return vram_machine_set(&o->machine, name, arg, err, cap);
}

/* ---- the estimate --------------------------------------------------------------------- */

vram_status vram_estimate_refused(const vram_model_ref *m, const vram_workload *w,
                                  vram_status st, char *err, size_t cap) {
    switch (vram_estimate_refusal(&m->model, w)) {
    case VRAM_REFUSAL_LORA_NEEDS_ARCH:
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "%s: LoRA needs the architecture numbers (add config.json)", m->label);
    case VRAM_REFUSAL_QUANTISED_TRAINING:
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "--format %s: quantised weights cannot be trained; add --lora-rank R "
                           "to train adapters on them",
                           vram_dtype_name(w->format));
    case VRAM_REFUSAL_LORA_NOT_TRAINING:
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "--lora-rank: LoRA is for training (--mode train)");
    case VRAM_REFUSAL_NO_MODEL:
        return vram_errorf(err, cap, VRAM_E_INVALID, "%s: nothing to estimate from: %s", m->label,
                           m->note[0] ? m->note : "no architecture numbers and no tensor list");
    default:
        return vram_errorf(err, cap, VRAM_E_INVALID, "%s: cannot estimate: %s", m->label,
                           vram_status_str(st));
    }
}

vram_status vram_estimate_run(const vram_estimate_opts *o, vram_estimate_report *out, char *err,
                              size_t cap) {
    vram_status st;
    memset(out, 0, sizeof *out);
    out->best = -1;
    out->w = o->w;
    out->machine = o->machine;
    if (o->model == NULL || o->model[0] == '\0')
        return vram_errorf(err, cap, VRAM_E_INVALID, "MODEL is missing");
    if ((st = vram_model_find(o->model, &out->m, err, cap)) != VRAM_OK) return st;
    if ((st = vram_wl_check_model(&out->w, &out->m.model, out->m.label, err, cap)) != VRAM_OK)
        return st;
    if ((st = vram_estimate_model(&out->m.model, &out->w, &out->e)) != VRAM_OK)
        return vram_estimate_refused(&out->m, &out->w, st, err, cap);
    /* the recommendation: for the GPU with the largest budget, else for the CPU */
    if ((st = vram_machine_make(&out->machine, NULL, err, cap)) != VRAM_OK) return st;
    out->best = vram_machine_best(&out->machine, &out->budget);
    st = vram_estimate_recommend(&out->m.model, &out->w, out->budget, &out->r);
    if (st != VRAM_OK)
        return vram_errorf(err, cap, VRAM_E_INVALID, "%s: cannot recommend a preset: %s",
                           out->m.label, vram_status_str(st));
    /* a layout across GPUs: the one given, or proposed (--nodes alone, or training that does
       not fit the GPU) */
    return vram_parallel_make(&o->layout, &out->m.model, &out->w, &out->e,
                              out->best >= 0 ? out->budget : 0u, 1, &out->layout, err, cap);
}

const char *vram_estimate_preset_reason(const vram_recommendation *r, int p) {
    if (r->status[p] == VRAM_E_INVALID) return "needs LoRA (--lora-rank) to train quantised weights";
    if (r->status[p] != VRAM_OK) return vram_status_str(r->status[p]);
    return r->fits[p] ? "fits" : "does not fit";
}

/* ---- JSON ----------------------------------------------------------------------------- */

static void recommendation_json(vram_json *j, const vram_estimate_report *rep) {
    const vram_recommendation *r = &rep->r;
    char buf[32];
    vram_json_begin_object(j);
    vram_json_key(j, "device");
    if (rep->best >= 0) {
        snprintf(buf, sizeof buf, "gpu%d", rep->best);
        vram_json_string(j, buf);
        vram_json_key_bool(j, "assumed", !rep->machine.gpus_detected);
        vram_json_key_u64(j, "free_bytes", rep->machine.gpus[rep->best].free);
        if (rep->machine.gpus_detected) vram_machine_view_json(j, &rep->machine.view);
    } else {
        vram_json_string(j, "cpu");
        vram_json_key_string(j, "no_gpu_reason", rep->machine.no_gpu);
        vram_json_key_u64(j, "host_available_bytes", rep->machine.host);
    }
    vram_json_key_u64(j, "margin_bytes", vram_machine_margin(&rep->machine));
    vram_json_key_u64(j, "budget_bytes", rep->budget);
    vram_json_key_string(j, "chosen", vram_preset_name(r->chosen));
    vram_json_key_string(j, "next_better",
                         r->next_better >= 0 ? vram_preset_name((vram_preset)r->next_better) : NULL);
    vram_json_key_u64(j, "next_short_bytes", r->next_short);
    vram_json_key(j, "presets");
    vram_json_begin_array(j);
    for (int p = 0; p < VRAM_PRESET_COUNT; p++) {
        vram_json_begin_object(j);
        vram_json_key_string(j, "name", vram_preset_name((vram_preset)p));
        vram_json_key_string(j, "format", vram_dtype_name(r->est[p].format));
        vram_json_key_u64(j, "gpu_bytes", r->gpu_bytes[p]);
        vram_json_key_u64(j, "cpu_bytes", r->cpu_bytes[p]);
        if (p == VRAM_PRESET_INT4_OFFLOAD && r->fits[p]) vram_json_key_u64(j, "gpu_blocks", r->gpu_blocks);
        vram_json_key_bool(j, "fits", r->status[p] == VRAM_OK && r->fits[p]);
        vram_json_key_string(j, "reason", vram_estimate_preset_reason(r, p));
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_end_object(j);
}

void vram_estimate_json(vram_json *j, const vram_estimate_report *r) {
    vram_json_begin_object(j);
    vram_json_key(j, "model");
    vram_model_json(j, &r->m, &r->e);
    vram_json_key(j, "workload");
    vram_workload_json(j, &r->w, &r->e);
    vram_estimate_terms_json(j, &r->e);
    vram_json_key(j, "recommendation");
    recommendation_json(j, r);
    vram_parallel_json(j, &r->layout);
    vram_json_end_object(j);
}

void vram_estimate_terms_json(vram_json *j, const vram_estimate *e) {
    vram_json_key(j, "terms");
    vram_json_begin_array(j);
    for (int i = 0; i < VRAM_TERM_COUNT; i++) {
        const vram_term *t = &e->term[i];
        vram_json_begin_object(j);
        vram_term_range_json(j, vram_term_name((vram_term_id)i), t->expected, t->low, t->high);
        vram_json_key_string(j, "cause", t->low == t->high ? "exact" : vram_cause_name(t->cause));
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_total_json(j, e->low, e->expected, e->high);
    vram_json_key(j, "notes");
    vram_json_begin_array(j);
    if (e->notes & VRAM_NOTE_NO_ARCH) vram_json_string(j, "no_arch");
    if (e->notes & VRAM_NOTE_DTYPE_ASSUMED) vram_json_string(j, "dtype_assumed");
    vram_json_end_array(j);
}

void vram_model_json(vram_json *j, const vram_model_ref *m, const vram_estimate *e) {
    vram_json_begin_object(j);
    vram_json_key_string(j, "name", m->label);
    vram_json_key_string(j, "source", m->source);
    if (m->hf_id[0]) {
        vram_json_key_string(j, "hf_id", m->hf_id);
    }
    vram_json_key_string(j, "family", vram_family_name(m->model.arch.family));
    vram_json_key_u64(j, "params", e->params);
    if (m->model.arch.experts != 0) { /* a mixture of experts: what one token goes through */
        vram_json_key_u64(j, "active_params", e->active_params);
        vram_json_key_u64(j, "experts", m->model.arch.experts);
        vram_json_key_u64(j, "experts_per_token", m->model.arch.experts_per_token);
    }
    if (e->expert_bytes != 0) {
        vram_json_key_u64(j, "expert_bytes", e->expert_bytes);
    }
    vram_json_key_u64(j, "blocks", e->blocks);
    vram_json_key(j, "published_format");
    vram_json_string(j, m->model.dtype != VRAM_DTYPE_NONE ? vram_dtype_name(m->model.dtype)
                                                         : "unknown");
    if (m->model.stats.tensors) {
        vram_json_key_u64(j, "tensors", m->model.stats.tensors);
        vram_json_key_u64(j, "stored_bytes", m->model.stats.bytes);
    }
    if (m->model.guess_high != 0) {
        char as[160];
        vram_arch_reading(&m->model.arch, as, sizeof as);
        vram_json_key_string(j, "read_as", as);
        vram_json_key(j, "guessed_params");
        vram_json_begin_object(j);
        vram_json_key_u64(j, "low", m->model.guess_low);
        vram_json_key_u64(j, "high", m->model.guess_high);
        vram_json_end_object(j);
    }
    if (m->note[0]) {
        vram_json_key_string(j, "note", m->note);
    }
    vram_json_end_object(j);
}

void vram_arch_reading(const vram_arch *a, char *buf, size_t cap) {
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

void vram_workload_json(vram_json *j, const vram_workload *w, const vram_estimate *e) {
    vram_json_begin_object(j);
    vram_json_key_string(j, "mode", w->mode == VRAM_MODE_TRAIN ? "train" : "infer");
    vram_json_key_string(j, "format", vram_dtype_name(e->format));
    vram_json_key_string(j, "compute", vram_dtype_name(e->compute));
    vram_json_key_u64(j, "batch", e->batch);
    vram_json_key_u64(j, "seq", e->seq);
    /* given, or resolved to something other than seq (whisper's 1500 source frames) */
    if (w->src_len || (e->src_len != 0 && e->src_len != e->seq)) {
        vram_json_key_u64(j, "src_len", e->src_len);
    }
    if (w->tgt_len || (e->tgt_len != 0 && e->tgt_len != e->seq)) {
        vram_json_key_u64(j, "tgt_len", e->tgt_len);
    }
    if (w->mode == VRAM_MODE_TRAIN) {
        vram_json_key_string(j, "optimizer", vram_optimizer_name(w->optimizer));
        vram_json_key_bool(j, "checkpointing", w->checkpointing);
        vram_json_key_u64(j, "grad_accum", w->grad_accum ? w->grad_accum : 1u);
        vram_json_key_u64(j, "lora_rank", w->lora_rank);
        vram_json_key_u64(j, "trainable_params", e->trainable);
    }
    if (e->image_tokens != 0) {
        vram_json_key_u64(j, "image_tokens", e->image_tokens);
    }
    if (e->logits != VRAM_LOGITS_DEFAULT) { /* resolved: last or all (none: no head) */
        vram_json_key_string(j, "logits", e->logits == VRAM_LOGITS_ALL ? "all" : "last");
    }
    vram_json_key_bool(j, "flash_attention", w->flash_attention);
    vram_json_end_object(j);
}

