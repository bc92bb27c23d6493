/* driver/cli/cli_model.h — what `vramkit estimate` and `vramkit plan` share: finding a model
 * (built-in name, file or directory), the workload options, `--assume-gpu` specs, the
 * host's available memory, and printing an estimate. */
#ifndef VRAMKIT_CLI_MODEL_H
#define VRAMKIT_CLI_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include <vramkit/estimate.h>
#include <vramkit/strategy.h>

#include "cli.h"
#include "device/machine.h"
#include "models/model_find.h"
#include "plan/workload.h"

/* Find MODEL: a built-in name or Hugging Face id (see `vramkit plan --list-models`), else
 * a path (file or directory) read without loading weights. Returns 0, or an exit code
 * after printing one error line naming the input (2: unknown name, unreadable or malformed
 * file; 3: an I/O error other than a missing file). */
int cli_model_resolve(const char *cmd, const char *arg, vram_model_ref *out);

/* Print the built-in models, one per line. */
void cli_model_list(FILE *out);

/* The workload options' help text (one block, for --help). */
extern const char cli_workload_help[];

/* A GPU described on the command line: `--assume-gpu SIZE[,used=SIZE|,free=SIZE][,cc=M.m]`
 * e.g. "8GiB,used=4.7GB,cc=8.9". */

/* Parse one spec. Returns 0, or 2 after printing an error line naming the spec and what is
 * wrong with it (bad size, used > total, unknown key, bad cc). */
int cli_parse_gpu_spec(const char *cmd, const char *text, vram_gpu_budget *out);

/* Human text of a workload ("inference, batch 1, sequence 512, weights f16, compute f16"). */
void cli_workload_text(const vram_model *m, const vram_workload *w, const vram_estimate *e,
                       char *buf, size_t cap);

/* Print the terms of an estimate as a table. */
void cli_estimate_table(FILE *out, const vram_estimate *e);

/* How this machine's GPUs were read (NVML or the CUDA runtime, and why not NVML) and the
 * other processes holding memory on them, as text lines. For GPUs read here only. */
void cli_machine_text(FILE *out, const vram_machine_view *v);

#endif
