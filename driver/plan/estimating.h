/* driver/plan/estimating.h — `estimate` as a function: a model (found by name or path), a
 * workload and a machine (given or read) in; the estimate term by term, the load preset for
 * the GPU with the most room, and a parallel layout when asked or needed, out. The CLI prints
 * the report as text; its JSON document is written here, for the CLI's --json and Python
 * alike. Prints nothing. */
#ifndef VRAMKIT_DRIVER_ESTIMATING_H
#define VRAMKIT_DRIVER_ESTIMATING_H

#include <stddef.h>

#include <vramkit/estimate.h>

#include "device/machine.h"
#include "models/model_find.h"
#include "parallel.h"
#include "util/json.h"

/* Zero means default in every field; model is required. */
typedef struct vram_estimate_opts {
    const char *model;        /* a built-in name, a file or a directory (vram_model_find) */
    vram_workload w;          /* plan/workload.h fills it from option values */
    vram_parallel_opts layout;
    vram_machine machine;     /* --assume-gpu and --margin; the rest is read */
} vram_estimate_opts;

/* Applies workload option `name` ("batch", "lora-rank", ...: plan/workload.h's names) with its
 * value. VRAM_OK; VRAM_E_INVALID with err; VRAM_E_UNHANDLED for another name. */
vram_status vram_workload_set(vram_workload *w, const char *name, const char *arg, char *err,
                              size_t cap);

/* Applies option `name` with its value: a workload option (plan/workload.h), a layout option
 * (parallel.h), "assume-gpu" or "margin". VRAM_OK; VRAM_E_INVALID with err one line naming
 * the option; VRAM_E_UNHANDLED for another name. */
vram_status vram_estimate_set(vram_estimate_opts *o, const char *name, const char *arg,
                              char *err, size_t cap);

typedef struct vram_estimate_report {
    vram_model_ref m;
    vram_workload w;           /* as given */
    vram_estimate e;
    vram_recommendation r;
    vram_machine machine;
    int best;                  /* the GPU the recommendation is for; -1: the CPU */
    uint64_t budget;           /* its free memory less the margin; 0 without a GPU */
    vram_parallel_report layout;
} vram_estimate_report;

/* Runs the estimate. Requires o, out valid (out is large: allocate it). VRAM_OK with *out;
 * else a status with err one line naming the input: VRAM_E_INVALID (an unknown or malformed
 * model, a workload it refuses, a bad layout), VRAM_E_IO / VRAM_E_NOMEM (a file that cannot
 * be read). */
vram_status vram_estimate_run(const vram_estimate_opts *o, vram_estimate_report *out, char *err,
                              size_t cap);

/* The report as one JSON object: model, workload, terms, total, notes, recommendation, and
 * layout when there is one. */
void vram_estimate_json(vram_json *j, const vram_estimate_report *r);

/* Pieces the plan's text and JSON use too. */
/* Why a preset fits or not, in words ("fits", "does not fit", "needs LoRA ..."). */
const char *vram_estimate_preset_reason(const vram_recommendation *r, int preset);
/* The model's description as a JSON object (the current key's value). */
void vram_model_json(vram_json *j, const vram_model_ref *m, const vram_estimate *e);
/* The workload as a JSON object. */
void vram_workload_json(vram_json *j, const vram_workload *w, const vram_estimate *e);
/* The members terms, total and notes of an estimate, in the open object. */
void vram_estimate_terms_json(vram_json *j, const vram_estimate *e);
/* What a guessed architecture was read as: "decoder, gated MLP, RMS norm, no biases, untied
 * head". */
void vram_arch_reading(const vram_arch *a, char *buf, size_t cap);
/* The line for a workload the estimator refused for model m (vram_estimate_refusal), naming
 * the option to change. Returns VRAM_E_INVALID (err set). */
vram_status vram_estimate_refused(const vram_model_ref *m, const vram_workload *w,
                                  vram_status st, char *err, size_t cap);

#endif /* VRAMKIT_DRIVER_ESTIMATING_H */
