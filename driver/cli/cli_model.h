/* driver/cli/cli_model.h — what `vramkit estimate` and `vramkit plan` share: finding a model
 * (built-in name, file or directory), the workload options, `--assume-gpu` specs, the
 * host's available memory, and printing an estimate. */
#ifndef VRAMKIT_CLI_MODEL_H
#define VRAMKIT_CLI_MODEL_H

#include <getopt.h>
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

/* The workload options, shared by estimate and plan (long options only; their codes are
 * plan/workload.h's, from VRAM_WL_BASE, so commands can add their own below it). */
#define CLI_WORKLOAD_LONG_OPTIONS                                       \
    {"mode", required_argument, NULL, VRAM_WL_MODE}, \
    {"format", required_argument, NULL, VRAM_WL_FORMAT}, \
    {"compute", required_argument, NULL, VRAM_WL_COMPUTE}, \
    {"batch", required_argument, NULL, VRAM_WL_BATCH}, \
    {"seq", required_argument, NULL, VRAM_WL_SEQ}, \
    {"src-len", required_argument, NULL, VRAM_WL_SRC}, \
    {"tgt-len", required_argument, NULL, VRAM_WL_TGT}, \
    {"optimizer", required_argument, NULL, VRAM_WL_OPTIMIZER}, \
    {"checkpointing", no_argument, NULL, VRAM_WL_CHECKPOINTING}, \
    {"flash-attention", no_argument, NULL, VRAM_WL_FLASH}, \
    {"grad-accum", required_argument, NULL, VRAM_WL_GRAD_ACCUM}, \
    {"lora-rank", required_argument, NULL, VRAM_WL_LORA_RANK}, \
    {"lora-targets", required_argument, NULL, VRAM_WL_LORA_TARGETS}, \
    {"images", required_argument, NULL, VRAM_WL_IMAGES}, \
    {"image-tokens", required_argument, NULL, VRAM_WL_IMAGE_TOKENS}

/* The workload options' help text (one block, for --help). */
extern const char cli_workload_help[];

/* Apply one workload option (code from the list above) to w. Returns 0, or 2 after
 * printing an error line naming the option and the text. */
int cli_workload_option(const char *cmd, int code, const char *arg, vram_workload *w);

/* A GPU described on the command line: `--assume-gpu SIZE[,used=SIZE|,free=SIZE][,cc=M.m]`
 * e.g. "8GiB,used=4.7GB,cc=8.9". */

/* Parse one spec. Returns 0, or 2 after printing an error line naming the spec and what is
 * wrong with it (bad size, used > total, unknown key, bad cc). */
int cli_parse_gpu_spec(const char *cmd, const char *text, vram_gpu_budget *out);

/* Human text of a workload ("inference, batch 1, sequence 512, weights f16, compute f16"). */
void cli_workload_text(const vram_model *m, const vram_workload *w, const vram_estimate *e,
                       char *buf, size_t cap);

/* Print the terms of an estimate as a table (text) or the "terms" and "total" members of
 * an open JSON object. */
void cli_estimate_table(FILE *out, const vram_estimate *e);
void cli_estimate_json(vram_json *j, const vram_estimate *e);
/* The model's description as a JSON object under the current key. */
void cli_model_json(vram_json *j, const vram_model_ref *m, const vram_estimate *e);
/* What a guessed architecture was read as, in words: "decoder, gated MLP, RMS norm, no
 * biases, untied head". */
void cli_arch_reading(const vram_arch *a, char *buf, size_t cap);
/* The workload as a JSON object under the current key. */
void cli_workload_json(vram_json *j, const vram_workload *w, const vram_estimate *e);

/* How this machine's GPUs were read (NVML or the CUDA runtime, and why not NVML) and the
 * other processes holding memory on them: text lines, or the keys gpu_source,
 * gpu_source_note, tenants ([{gpu, pid, name, bytes}] or null when not known) and
 * tenants_more inside the JSON object being written. For GPUs read here only. */
void cli_machine_text(FILE *out, const vram_machine_view *v);
void cli_machine_json(vram_json *j, const vram_machine_view *v);

#endif
