/* driver/cli/cli_layout.h — the parallel-layout options of `vramkit estimate` and `vramkit
 * plan` (--nodes, --gpus-per-node, --zero, --tp, --pp, --micro-batches, --offload): read
 * them, check them against the workload, run vramkit/layout.h (the given layout, or the
 * proposal), and print the result as text or JSON. No arithmetic of its own. */
#ifndef VRAMKIT_CLI_LAYOUT_H
#define VRAMKIT_CLI_LAYOUT_H

#include <stdio.h>

#include <vramkit/layout.h>

#include "cli.h"

/* Option codes, below the workload options' (plan/workload.h, from 1000). */
enum {
    CLI_LAYOUT_NODES = 900,
    CLI_LAYOUT_GPUS,
    CLI_LAYOUT_ZERO,
    CLI_LAYOUT_TP,
    CLI_LAYOUT_PP,
    CLI_LAYOUT_MICRO,
    CLI_LAYOUT_OFFLOAD,
    CLI_LAYOUT_END
};

#define CLI_LAYOUT_LONG_OPTIONS                                      \
    {"nodes", required_argument, NULL, CLI_LAYOUT_NODES},            \
    {"gpus-per-node", required_argument, NULL, CLI_LAYOUT_GPUS},     \
    {"zero", required_argument, NULL, CLI_LAYOUT_ZERO},              \
    {"tp", required_argument, NULL, CLI_LAYOUT_TP},                  \
    {"pp", required_argument, NULL, CLI_LAYOUT_PP},                  \
    {"micro-batches", required_argument, NULL, CLI_LAYOUT_MICRO},    \
    {"offload", required_argument, NULL, CLI_LAYOUT_OFFLOAD}

/* Without --nodes a proposal looks at up to this many nodes; without --gpus-per-node, nodes
 * of this many GPUs. */
#define CLI_LAYOUT_DEFAULT_NODES 64u
#define CLI_LAYOUT_DEFAULT_GPUS 8u

/* The options' help text (one block, for --help of estimate and plan). */
extern const char cli_layout_help[];

typedef struct cli_layout_opts {
    vram_layout l;   /* as given; zeros are defaults */
    int layout;      /* --zero, --tp, --pp, --micro-batches or --offload given: this layout */
    int cluster;     /* --nodes or --gpus-per-node given */
    const char *first; /* the first layout option given ("--zero"), for error lines */
} cli_layout_opts;

/* Apply one option (code from the list above). Returns 0, or 2 after one error line naming
 * the option and its value. */
int cli_layout_option(const char *cmd, int code, const char *arg, cli_layout_opts *o);

/* Any layout option given? */
int cli_layout_any(const cli_layout_opts *o);

/* What was made: nothing (mode 0), the given layout (1) or a proposal (2). */
typedef struct cli_layout_report {
    int mode;
    int auto_proposed;   /* a proposal without layout options: training does not fit one GPU */
    uint64_t budget;     /* per GPU (0: no GPU known) */
    uint64_t one_gpu;    /* the workload's expected bytes on one GPU */
    uint64_t max_nodes, gpus_per_node; /* the proposal's search */
    vram_layout_result r; /* mode 1, and mode 2 when found */
    vram_layout_proposal p;
} cli_layout_report;

/* Check the options against the workload and model (training for --zero and --offload, the
 * layout's divisibility, the blocks for --pp), then run the given layout or, with --nodes /
 * --gpus-per-node alone or (auto_ok) a training workload whose estimate e exceeds one GPU's
 * budget, the proposal. Returns 0 with *out filled (mode 0: nothing to show), or 2 after one
 * error line naming the input. */
int cli_layout_make(const char *cmd, const cli_layout_opts *o, const vram_model *m,
                    const vram_workload *w, const vram_estimate *e, uint64_t budget, int auto_ok,
                    cli_layout_report *out);

/* Does the report's layout fit (the given one within the budget, or a proposal found)? */
int cli_layout_fits(const cli_layout_report *r);

/* The report as text, or as the "layout" member of an open JSON object. */
void cli_layout_text(FILE *out, const cli_layout_report *r);
void cli_layout_json(vram_json *j, const cli_layout_report *r);

#endif
