/* driver/plan/plan_run.c — see plan_run.h. */
#include "plan_run.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "estimating.h"
#include "isolate/chain.h"
#include "plan_doc.h"
#include "util/text.h"

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

/* ---- options ------------------------------------------------------------------------- */

/* The options kept as given (vram_plan_check looks at them together). */
static const struct {
    const char *name;
    size_t at; /* of its const char * in vram_plan_request */
} plan_text_opts[] = {{"load", offsetof(vram_plan_request, load)},
                      {"save", offsetof(vram_plan_request, save)},
                      {"strategy", offsetof(vram_plan_request, strategy)},
                      {"calibration", offsetof(vram_plan_request, calibration)}};

vram_status vram_plan_set(vram_plan *p, vram_plan_request *o, const char *name, const char *arg,
                          char *err, size_t cap) {
    vram_status st;
    if (strcmp(name, "model") == 0) return vram_plan_set_model(p, arg, err, cap);
    if (strcmp(name, "component") == 0) return vram_plan_add_component(p, arg, err, cap);
    for (size_t i = 0; i < sizeof plan_text_opts / sizeof plan_text_opts[0]; i++) {
        if (strcmp(name, plan_text_opts[i].name) != 0) continue;
        *(const char **)(void *)((char *)o + plan_text_opts[i].at) = arg;
        return VRAM_OK;
    }
    if (strcmp(name, "emit") == 0) {
        vram_emit_format f;
        if (vram_emit_format_parse(arg, &f) != VRAM_OK)
            FAIL("--emit: '%s' is not a format (%s)", arg, vram_emit_format_names);
        for (int i = 0; i < o->nemit; i++)
            if (o->emit[i] == f) FAIL("--emit %s is given twice", arg);
        o->emit[o->nemit++] = f;
        return VRAM_OK;
    }
    if ((st = vram_workload_set(&p->w, name, arg, err, cap)) != VRAM_E_UNHANDLED) return st;
    if ((st = vram_parallel_set(&o->layout, name, arg, err, cap)) != VRAM_E_UNHANDLED) return st;
    return vram_machine_set(&p->mach, name, arg, err, cap);
}

vram_status vram_plan_check(const vram_plan *p, const vram_plan_request *o, char *err, size_t cap) {
    if (o->calibration != NULL && strcmp(o->calibration, VRAM_CALIB_NONE) != 0 && p->ncomp > 0 && !p->single)
        FAIL("--calibration %s: it goes with --model (components have no strategy chain)", o->calibration);
    if (o->strategy != NULL && o->nemit == 0)
        FAIL("--strategy %s: it chooses what --emit writes; give --emit FORMAT", o->strategy);
    if (vram_parallel_any(&o->layout)) {
        const char *flag = o->layout.first ? o->layout.first : "--nodes";
        if (o->nemit > 0) FAIL("%s: --emit cannot express a layout across GPUs; drop one of them", flag);
        if (o->save != NULL || o->load != NULL)
            FAIL("%s: layouts are not kept in plan files; drop --%s", flag,
                 o->save != NULL ? "save" : "load");
        if (!p->single && p->ncomp > 0)
            FAIL("%s: a layout is for one model (--model), not --component", flag);
    }
    if (o->load != NULL && p->ncomp > 0)
        FAIL("--load takes its models from the plan; drop --model/--component");
    if (o->load == NULL && p->ncomp == 0)
        FAIL("give --model MODEL or --component NAME=MODEL (see vramkit plan --help)");
    return VRAM_OK;
}

/* ---- making it ----------------------------------------------------------------------- */

/* The layout of a --model plan for its model and workload, against the GPU with the most
 * room. */
static vram_status make_layout(const vram_plan *p, const vram_plan_request *o,
                               vram_parallel_report *rep, char *err, size_t cap) {
    vram_estimate e;
    const vram_plan_component *c = &p->comps[0];
    uint64_t budget = 0;
    int best = vram_machine_best(&p->mach, &budget);
    vram_status st = vram_estimate_model(&c->m.model, &p->w, &e);
    if (st != VRAM_OK) {
        if (!vram_parallel_any(&o->layout)) return VRAM_OK; /* the chain has said why */
        FAIL("%s: cannot estimate for a layout: %s", c->m.label, vram_status_str(st));
    }
    return vram_parallel_make(&o->layout, &c->m.model, &p->w, &e, best >= 0 ? budget : 0u, 1, rep,
                              err, cap);
}

void vram_plan_probe_vmm(const vram_plan *p, uint32_t mask, vram_emit_machine *out) {
    memset(out, 0, sizeof *out);
    if (mask == 0) return;
    if (!p->mach.gpus_detected) {
        snprintf(out->no_probe, sizeof out->no_probe,
                 "the GPUs are assumed (--assume-gpu or a saved plan), not this machine's");
        return;
    }
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (v != NULL && strlen(v) < sizeof out->visible) {
        out->visible_set = 1;
        snprintf(out->visible, sizeof out->visible, "%s", v);
    }
    for (int g = 0; g < p->mach.ngpu && g < VRAM_PLAN_MAX_GPUS; g++) {
        vram_probe_result r;
        vram_status st;
        if (!(mask & (1u << g))) continue;
        st = vram_probe_run(g, VRAM_PROBE_VMM, 0, &r);
        if (st != VRAM_OK || !r.ran) {
            snprintf(out->no_probe, sizeof out->no_probe, "the VMM probe could not run on GPU %d: %s",
                     g, vram_status_str(st != VRAM_OK ? st : r.status));
            continue;
        }
        out->vmm[g].ran = 1;
        out->vmm[g].status = r.status;
        out->vmm[g].cuda_error = r.cuda_error;
    }
}

vram_status vram_plan_run(vram_plan *p, const vram_plan_request *o, vram_plan_result *r,
                          char *err, size_t cap) {
    vram_status st;
    memset(r, 0, sizeof *r);
    if (o->load != NULL) {
        char what[4200];
        snprintf(what, sizeof what, "--load %s", o->load);
        if ((st = vram_plan_doc_load(o->load, what, p, err, cap)) != VRAM_OK) return st;
    }
    if ((st = vram_plan_make(p, err, cap)) != VRAM_OK) return st;
    if ((st = vram_calib_plan_apply(p, o->calibration, &r->calib, err, cap)) != VRAM_OK) return st;
    if (p->single && (st = make_layout(p, o, &r->layout, err, cap)) != VRAM_OK) return st;
    /* at most one change per saved entry, plus the chosen strategy */
    if (vram_plan_changes_since(p, r->changes, sizeof r->changes / sizeof r->changes[0], &r->nch) != VRAM_OK)
        r->nch = sizeof r->changes / sizeof r->changes[0];
    if (o->nemit == 0) return VRAM_OK;
    if ((st = vram_emit_pick(p, o->strategy, &r->cand, err, cap)) != VRAM_OK) return st;
    for (int i = 0; i < o->nemit; i++)
        if (o->emit[i] == VRAM_EMIT_ENV) vram_plan_probe_vmm(p, vram_emit_gpus(p, r->cand), &r->facts);
    return VRAM_OK;
}

int vram_plan_yes(const vram_plan *p, const vram_plan_request *o, const vram_plan_result *r) {
    if (o->nemit > 0) return 1; /* the strategy emitted fits */
    if (vram_parallel_any(&o->layout)) return vram_parallel_fits(&r->layout);
    return p->single ? p->chain.chosen >= 0 : p->sum.all_fit;
}

/* ---- documents ----------------------------------------------------------------------- */

vram_status vram_plan_result_json(vram_json *j, const vram_plan *p, const vram_plan_request *o,
                                  const vram_plan_result *r, char notes[][2048], char *err,
                                  size_t cap) {
    vram_status st = VRAM_OK;
    vram_json_begin_object(j);
    vram_plan_doc_members(j, p, r->changes, r->nch);
    vram_parallel_json(j, &r->layout);
    if (r->calib.used) vram_calib_plan_json(j, p, &r->calib);
    if (o->nemit > 0) {
        vram_json_key(j, "emit");
        vram_json_begin_object(j);
        for (int i = 0; i < o->nemit && st == VRAM_OK; i++) {
            vram_json_key(j, vram_emit_format_name(o->emit[i]));
            st = vram_emit_json(j, o->emit[i], p, r->cand, &r->facts, notes[i], 2048, err, cap);
        }
        vram_json_end_object(j);
    }
    vram_json_end_object(j);
    return st;
}

vram_status vram_plan_emit_text(FILE *out, const vram_plan *p, const vram_plan_request *o,
                                const vram_plan_result *r, char notes[][2048], char *err,
                                size_t cap) {
    for (int i = 0; i < o->nemit; i++) {
        vram_status st;
        if (o->nemit > 1) fprintf(out, "%s# --emit %s\n", i ? "\n" : "", vram_emit_format_name(o->emit[i]));
        st = vram_emit_write(out, o->emit[i], p, r->cand, &r->facts, notes[i], 2048, err, cap);
        if (st != VRAM_OK) return st;
    }
    return VRAM_OK;
}

vram_status vram_plan_save(const vram_plan *p, const vram_plan_result *r, const char *path,
                           char *err, size_t cap) {
    char *doc = vram_plan_doc_json(p, r->changes, r->nch);
    vram_status st;
    if (doc == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    st = vram_plan_doc_save(path, doc, err, cap);
    free(doc);
    return st;
}

/* ---- the strategies of try and run ---------------------------------------------------------- */

/* The dtype a plan's format stands for; NULL for a format not listed. */
static const char *format_dtype(vram_dtype f) {
    switch (f) {
    case VRAM_DTYPE_F32: return "float32";
    case VRAM_DTYPE_F16: return "float16";
    case VRAM_DTYPE_BF16: return "bfloat16";
    case VRAM_DTYPE_INT8: return "int8";
    case VRAM_DTYPE_NF4: return "nf4";
    default: return NULL;
    }
}

/* The plan of --model now (default workload), on the --assume-gpu GPUs or this machine's: its
 * rows, and each fitting one-GPU strategy's high. */
static vram_status plan_model(vram_try_chain *c, vram_plan_rows *rows, uint64_t *high,
                              uint64_t *expected, char *err, size_t cap) {
    vram_plan *p = calloc(1, sizeof *p);
    vram_status st;
    if (p == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    if ((st = vram_plan_set_model(p, c->model, err, cap)) == VRAM_OK) {
        for (int g = 0; g < c->ngpu; g++) p->mach.gpus[g] = c->gpus[g];
        p->mach.ngpu = c->ngpu;
        p->mach.gpus_given = c->ngpu > 0;
        st = vram_plan_make(p, err, cap);
    }
    if (st == VRAM_OK) {
        vram_plan_rows_from_chain(p, rows);
        /* the rows follow the chain one to one; a saved document has no high (0: not known) */
        for (int i = 0; i < rows->n && i < p->chain.count; i++) {
            const vram_candidate *k = &p->chain.cand[i];
            if (k->fits && k->status == VRAM_OK && rows->row[i].device >= 0) high[i] = k->estimate.high;
        }
        vram_calib_chain_from_plan(c, p, expected);
    }
    free(p);
    return st;
}

vram_status vram_plan_chain(vram_try_chain *c, char *err, size_t cap) {
    char what[4200];
    uint64_t high[VRAM_PLAN_MAX_ROWS] = {0};
    uint64_t expected[VRAM_PLAN_MAX_ROWS] = {0}; /* each row's, for calibration.h */
    vram_plan_rows *rows;
    vram_status st;
    if (!c->plan_file && !c->model) return VRAM_OK;
    if ((rows = calloc(1, sizeof *rows)) == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    if (c->plan_file) {
        snprintf(what, sizeof what, "--plan %s", c->plan_file);
        st = vram_plan_doc_strategies(c->plan_file, what, rows, err, cap);
        if (st == VRAM_OK) vram_calib_chain_from_doc(c, c->plan_file, expected, rows->n);
    } else {
        snprintf(what, sizeof what, "the plan of %s", c->model);
        st = plan_model(c, rows, high, expected, err, cap);
    }
    /* those that fit, in the plan's order, with the plan's device and format */
    for (int i = 0; st == VRAM_OK && i < rows->n && c->n < VRAM_TRY_MAX_STRATEGIES; i++) {
        const vram_plan_row *r = &rows->row[i];
        int k = r->fits ? c->n++ : c->n_skipped++;
        if (!r->fits) {
            snprintf(c->skip_buf[k], sizeof c->skip_buf[k], "%s", r->name);
            snprintf(c->why_buf[k], sizeof c->why_buf[k], "%s", r->why[0] ? r->why : "it does not fit");
            c->skipped[k] = c->skip_buf[k];
            c->skipped_why[k] = c->why_buf[k];
            continue;
        }
        snprintf(c->name_buf[k], sizeof c->name_buf[k], "%s", r->name);
        if (r->device == VRAM_PLAN_CPU) {
            c->device_of[k] = "cpu";
        } else if (r->device >= 0) {
            snprintf(c->device_buf[k], sizeof c->device_buf[k], "cuda:%d", r->device);
            c->device_of[k] = c->device_buf[k];
        } else {
            c->device_of[k] = "auto";
        }
        c->strategies[k] = c->name_buf[k];
        c->dtype_of[k] = format_dtype(r->format);
        c->gpu_high[k] = high[i];
        c->expected[k] = expected[i];
    }
    if (st == VRAM_OK && c->n == 0)
        st = vram_errorf(err, cap, VRAM_E_NOSPACE,
                         "%s: none of the plan's %d strategies fits: nothing to try (see 'vramkit "
                         "plan')", what, rows->n);
    free(rows);
    return st;
}
