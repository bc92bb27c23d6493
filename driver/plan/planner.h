/* driver/plan/planner.h — make a plan: find the models, read this machine (or take the GPUs
 * given), then the strategy chain of one model or the placement of a service's components,
 * beside other tenants. What `vramkit plan`, `vramkit try --model` and saved plans share; it
 * prints nothing: failures come back as a status and one line naming the input. */
#ifndef VRAMKIT_DRIVER_PLANNER_H
#define VRAMKIT_DRIVER_PLANNER_H

#include <stddef.h>

#include <vramkit/place.h>
#include <vramkit/plan.h>
#include <vramkit/strategy.h>

#include "device/machine.h"
#include "models/model_find.h"

/* The plan document's version (plan_doc.h writes and reads it). */
#define VRAM_PLAN_VERSION 1

/* One component (a --model plan has one, named "model"). */
typedef struct vram_plan_component {
    char name[64];
    char model_arg[512];    /* the model as given */
    char setting_text[32];  /* the device setting as given; "" when inherited */
    char setting_from[128]; /* "command line", "saved plan", "VRAMKIT_<NAME>_DEVICE",
                               "VRAMKIT_DEVICE" or "default" */
    vram_device_setting setting;
    vram_model_ref m;
    vram_estimate gpu_est, cpu_est; /* components: on a GPU and on the host */
    vram_dtype gpu_format;          /* components: the format on a GPU */
} vram_plan_component;

/* What a saved plan said it decided: vram_plan_changes_since compares the new plan with it. */
typedef struct vram_plan_saved {
    int present;                          /* the plan came from a file (--load) */
    int chosen_given;                     /* a --model plan named a chosen strategy */
    char chosen[VRAM_PLAN_NAME_MAX + 1];  /* that name */
    size_t placed;                        /* placement entries of current components */
    vram_outcome place[VRAM_PLACE_MAX];   /* in the file's order, indexed by component */
} vram_plan_saved;

/* A plan: its inputs (filled by the caller or by plan_doc.h's reader), then what
 * vram_plan_make decided. Zero-initialise, then fill the inputs. */
typedef struct vram_plan {
    /* inputs */
    int single; /* one model (--model), else components */
    int ncomp;
    vram_plan_component comps[VRAM_PLACE_MAX];
    vram_workload w;
    vram_machine mach;  /* the GPUs, host and margin given; the rest vram_plan_make reads */
    vram_plan_saved saved;
    /* decided by vram_plan_make */
    char global_text[32];
    vram_device_setting global; /* VRAMKIT_DEVICE, default auto */
    vram_chain chain;                     /* single */
    vram_placement placed[VRAM_PLACE_MAX]; /* components */
    vram_place_summary sum;
    /* components: what a GPU holding any of them pays once, besides them (the estimator's
       expected cuda_context and workspace terms; sum.fixed_bytes is their sum) */
    uint64_t fixed_context, fixed_workspace;
} vram_plan;

/* What one GPU of a component plan holds, item by item, so that a reader can check the sum:
 * used = components_bytes + cuda_context + workspace (the last two 0 on a GPU that holds no
 * component). */
typedef struct vram_plan_gpu_use {
    uint64_t budget;           /* free - margin */
    uint64_t used;             /* the placement's own total (vram_place_summary) */
    int components;            /* how many components it holds */
    uint64_t components_bytes; /* their bytes (each placement's bytes) */
    uint64_t cuda_context;     /* the CUDA context, once per GPU in use */
    uint64_t workspace;        /* the libraries' workspace (cuBLAS, ...), once per GPU in use */
} vram_plan_gpu_use;

/* The one model of a --model plan. VRAM_E_INVALID (err says why) for an empty or too long
 * name, or a plan that already has a model or components. */
vram_status vram_plan_set_model(vram_plan *p, const char *model, char *err, size_t cap);

/* One more component from "NAME=MODEL[@DEVICE]" (setting_from "command line", or "saved
 * plan" when p->saved.present). VRAM_E_INVALID (err says why, naming --component) for a
 * malformed spec, a bad or repeated name, too many components, or a --model plan. */
vram_status vram_plan_add_component(vram_plan *p, const char *spec, char *err, size_t cap);

/* Makes the plan from its inputs: reads this machine's GPUs unless given (none given and
 * none in a saved plan), the host's memory unless given, every component's device setting
 * (@DEVICE, VRAMKIT_<NAME>_DEVICE, VRAMKIT_DEVICE), the models; then the chain of a single
 * model or the placement of the components. Returns VRAM_OK, or with err one line:
 * VRAM_E_INVALID for bad input (a device setting, a model, a workload the estimator
 * refuses), VRAM_E_IO / VRAM_E_NOMEM when a model file cannot be read. */
vram_status vram_plan_make(vram_plan *p, char *err, size_t cap);

/* GPU g (0 <= g < p->sum.gpus) of a made component plan, itemised. VRAM_E_INVALID for a
 * --model plan or a GPU the plan does not have. */
vram_status vram_plan_gpu_use_of(const vram_plan *p, int g, vram_plan_gpu_use *out);

/* What changed since the saved plan (p->saved): a --model plan's chosen strategy, each
 * component's placement. At most cap into out; *count = how many (VRAM_E_BUFFER beyond cap),
 * 0 when the plan was not loaded. */
vram_status vram_plan_changes_since(const vram_plan *p, vram_change *out, size_t cap,
                                    size_t *count);

/* The device of a placement or a strategy's device index as the plan document names it:
 * "cpu", "gpuN", or NULL for none. buf holds "gpuN". */
const char *vram_plan_device_name(int device, char *buf, size_t cap);

/* A strategy's or a component's strategy name: a candidate's own (bf16, fp16, int8, ...),
 * a component's GPU format as the chain names it (fp16, int4 for NF4, else the format's
 * name), "cpu" on the host. */
const char *vram_plan_format_strategy(vram_dtype gpu_format);

/* Why a candidate fits or not, and how a component was placed, in words ("fits: needs
 * 1.75 GiB, 3.37 GiB free after the margin on GPU 0"), into buf. Returns buf. */
const char *vram_plan_candidate_text(const vram_candidate *c, char *buf, size_t cap);
const char *vram_plan_placement_text(const vram_placement *pl, char *buf, size_t cap);

/* A device setting in words: "cpu", "cuda:N", "auto", "inherit". Returns buf. */
const char *vram_plan_setting_text(vram_device_setting s, char *buf, size_t cap);

#endif /* VRAMKIT_DRIVER_PLANNER_H */
