/* driver/plan/plan_run.h — `plan` as a function: the plan's inputs (planner.h) and what is
 * asked of it (plan again from a saved plan, a layout, other tools' settings) in; the plan,
 * what changed since it was saved, the layout and the strategy to emit, out. Its JSON document
 * and the emitted settings are written here, for the CLI and Python alike. Prints nothing. */
#ifndef VRAMKIT_DRIVER_PLAN_RUN_H
#define VRAMKIT_DRIVER_PLAN_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "calibration.h"
#include "emit.h"
#include "isolate/chain.h"
#include "parallel.h"
#include "planner.h"
#include "util/json.h"

/* What is asked beyond the inputs. Zero means none. */
typedef struct vram_plan_request {
    const char *load;     /* plan again from this saved plan's inputs */
    const char *save;     /* where the caller will save the document (checked, not written) */
    const char *strategy; /* --emit another strategy of the chain than the chosen one */
    int nemit;
    vram_emit_format emit[VRAM_EMIT_FORMATS]; /* in the order given, each once */
    vram_parallel_opts layout;
    const char *calibration; /* plan with what try and run measured (calibration.h); "none" */
} vram_plan_request;

/* Applies option `name` with its value to the inputs p or the request o: "model",
 * "component", "assume-gpu", "host-memory", "margin", a workload option, a layout option,
 * "load", "save", "emit", "strategy", "calibration". VRAM_OK; VRAM_E_INVALID with err one line naming the
 * option; VRAM_E_UNHANDLED for another name. */
vram_status vram_plan_set(vram_plan *p, vram_plan_request *o, const char *name, const char *arg,
                          char *err, size_t cap);

/* What the options say together (after the last one): --strategy needs --emit, a layout goes
 * with --model only and not with --save, --load or --emit, --load brings its own models, one
 * of --model and --component is needed. VRAM_OK or VRAM_E_INVALID with err. */
vram_status vram_plan_check(const vram_plan *p, const vram_plan_request *o, char *err, size_t cap);

typedef struct vram_plan_result {
    vram_change changes[VRAM_PLACE_MAX + 1]; /* since the saved plan (--load) */
    size_t nch;
    vram_parallel_report layout;              /* a --model plan's, mode 0 when none */
    const vram_candidate *cand;               /* what --emit writes (NULL: components) */
    vram_emit_machine facts;                  /* the machine facts --emit env needs */
    vram_calib_plan calib;                    /* --calibration: estimate vs measured */
} vram_plan_result;

/* Loads (o->load), makes the plan (vram_plan_make), its layout, the changes, and for --emit
 * the strategy and, for env, the VMM probe of the GPUs it uses (in children: doctor's probes).
 * VRAM_OK with *r; else the status and err one line (plan_doc.h's and planner.h's errors). */
vram_status vram_plan_run(vram_plan *p, const vram_plan_request *o, vram_plan_result *r,
                          char *err, size_t cap);

/* The facts --emit env needs: the VMM probe (in a child) on each GPU of mask when p read this
 * machine's GPUs, and the CUDA_VISIBLE_DEVICES they were read under; else why no probe ran
 * (the GPUs are assumed). */
void vram_plan_probe_vmm(const vram_plan *p, uint32_t mask, vram_emit_machine *out);

/* The answer: 1 when the plan is a "yes" (a strategy fits, every component is placed, the
 * layout fits when one was asked for), else 0. */
int vram_plan_yes(const vram_plan *p, const vram_plan_request *o, const vram_plan_result *r);

/* The whole document as one JSON object: the plan document's members (plan_doc.h), then
 * layout (when there is one) and emit {FORMAT: value} (when asked), each format's notes into
 * notes[i] as vram_plan_emit_text does. VRAM_OK, or an emitter's error (nothing useful
 * written: write to memory and print on VRAM_OK). */
vram_status vram_plan_result_json(vram_json *j, const vram_plan *p, const vram_plan_request *o,
                                  const vram_plan_result *r, char notes[][2048], char *err,
                                  size_t cap);

/* Saves the plan document (plan_doc.h, with the changes) to path, atomically. VRAM_OK, or
 * VRAM_E_IO / VRAM_E_INVALID / VRAM_E_NOMEM with err naming --save and the path. */
vram_status vram_plan_save(const vram_plan *p, const vram_plan_result *r, const char *path,
                           char *err, size_t cap);

/* The asked formats as text, a "# --emit FORMAT" line before each when there are several;
 * each format's notes into notes[i] (lines). VRAM_OK or an emitter's error. */
vram_status vram_plan_emit_text(FILE *out, const vram_plan *p, const vram_plan_request *o,
                                const vram_plan_result *r, char notes[][2048], char *err,
                                size_t cap);

/* The strategies `try` and `run` walk when they come from a plan: the saved plan of c->plan_file,
 * or the plan of c->model made now (default workload) on c->gpus or this machine's GPUs. Those
 * that fit, in the plan's order, with the plan's device and dtype (and, made now, each one-GPU
 * strategy's high); the others in c->skipped with why. Nothing for a list (--strategies).
 * VRAM_OK; VRAM_E_NOSPACE with err when none fits (the answer "no"); the plan's errors. */
vram_status vram_plan_chain(vram_try_chain *c, char *err, size_t cap);

#endif /* VRAMKIT_DRIVER_PLAN_RUN_H */
