/* driver/plan/parallel.h — the parallel layout of an estimate or a plan (--nodes,
 * --gpus-per-node, --zero, --tp, --pp, --micro-batches, --offload): read the options, check
 * them against the workload, run vramkit/layout.h (the given layout, or the proposal) and
 * write the result as JSON. No arithmetic of its own; prints nothing. */
#ifndef VRAMKIT_DRIVER_PARALLEL_H
#define VRAMKIT_DRIVER_PARALLEL_H

#include <stddef.h>

#include <vramkit/layout.h>

#include "util/json.h"

/* Without --nodes a proposal looks at up to this many nodes; without --gpus-per-node, nodes
 * of this many GPUs. */
#define VRAM_PARALLEL_DEFAULT_NODES 64u
#define VRAM_PARALLEL_DEFAULT_GPUS 8u

typedef struct vram_parallel_opts {
    vram_layout l;      /* as given; zeros are defaults */
    int layout;         /* --zero, --tp, --pp, --micro-batches or --offload given: this layout */
    int cluster;        /* --nodes or --gpus-per-node given */
    const char *first;  /* the first layout option given ("--zero"), for error lines */
} vram_parallel_opts;

/* Applies option `name` ("nodes", "gpus-per-node", "zero", "tp", "pp", "micro-batches",
 * "offload") with its value. VRAM_OK; VRAM_E_INVALID with err one line naming the option and
 * the value; VRAM_E_UNHANDLED for a name that is not a layout option. */
vram_status vram_parallel_set(vram_parallel_opts *o, const char *name, const char *arg,
                              char *err, size_t cap);

/* Any layout option given? */
int vram_parallel_any(const vram_parallel_opts *o);

/* What was made: nothing (mode 0), the given layout (1) or a proposal (2). */
typedef struct vram_parallel_report {
    int mode;
    int auto_proposed;   /* a proposal without layout options: training does not fit one GPU */
    uint64_t budget;     /* per GPU (0: no GPU known) */
    uint64_t one_gpu;    /* the workload's expected bytes on one GPU */
    uint64_t max_nodes, gpus_per_node; /* the proposal's search */
    vram_layout_result r; /* mode 1, and mode 2 when found */
    vram_layout_proposal p;
} vram_parallel_report;

/* Checks the options against the workload and model (training for --zero and --offload, the
 * layout's divisibility, the blocks for --pp), then runs the given layout or, with --nodes /
 * --gpus-per-node alone or (auto_ok) a training workload whose estimate e exceeds one GPU's
 * budget, the proposal. VRAM_OK with *out filled (mode 0: nothing to show), or VRAM_E_INVALID
 * with err one line naming the input. */
vram_status vram_parallel_make(const vram_parallel_opts *o, const vram_model *m,
                               const vram_workload *w, const vram_estimate *e, uint64_t budget,
                               int auto_ok, vram_parallel_report *out, char *err, size_t cap);

/* Does the report's layout fit (the given one within the budget, or a proposal found)? */
int vram_parallel_fits(const vram_parallel_report *r);

/* "layout": the report as a member of the open JSON object (nothing for mode 0). */
void vram_parallel_json(vram_json *j, const vram_parallel_report *r);

/* Words the text and the JSON share: the offload kinds ("optimizer,params", "none") and a
 * layout ("2 nodes x 8 GPUs (16), ZeRO-3, TP 2, PP 1, data-parallel 8"). */
const char *vram_parallel_offload_text(uint32_t bits);
void vram_parallel_words(const vram_layout *l, uint64_t dp, char *buf, size_t cap);

/* What an estimate's terms and a layout's terms write alike: a term's first members in its
 * open object (name, bytes: the expected, low, high), and the "total" member of the open
 * object ({"low", "expected", "high"}). */
void vram_term_range_json(vram_json *j, const char *name, uint64_t expected, uint64_t low,
                          uint64_t high);
void vram_total_json(vram_json *j, uint64_t low, uint64_t expected, uint64_t high);

#endif /* VRAMKIT_DRIVER_PARALLEL_H */
