/* driver/isolate/chain.h — the strategies that `try` and `run` walk: a list given
 * (--strategies) or a plan's (--plan FILE, --model MODEL: plan/plan_run.h fills them in), what
 * each means for the program started under it ({device} and {dtype}: vramkit/strategy.h's
 * VRAM_STRATEGY_NAMES, or the plan's), the command's placeholders replaced, its environment,
 * and the text a child wrote made printable. Prints nothing. */
#ifndef VRAMKIT_DRIVER_ISOLATE_CHAIN_H
#define VRAMKIT_DRIVER_ISOLATE_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/strategy.h>

#include "isolate.h"

#define VRAM_TRY_MAX_STRATEGIES 64 /* strategies in a chain */
#define VRAM_TRY_NAME_MAX 64       /* characters of a strategy name */

typedef struct vram_try_chain {
    char *strategy_text;            /* owned copy of the list, cut at the commas */
    const char *strategy_text_orig; /* the list as given */
    const char *strategies[VRAM_TRY_MAX_STRATEGIES];
    int n;
    /* From a plan (--plan, --model): each strategy's device and dtype (NULL: by name), the
     * ones skipped and why; strings point into the buffers here. */
    const char *plan_file, *model;
    vram_gpu_budget gpus[VRAM_PLAN_MAX_GPUS]; /* --assume-gpu, for --model */
    int ngpu;
    const char *device_of[VRAM_TRY_MAX_STRATEGIES], *dtype_of[VRAM_TRY_MAX_STRATEGIES];
    uint64_t gpu_high[VRAM_TRY_MAX_STRATEGIES]; /* the estimate's high on its GPU when a plan made
                                                   now (--model) runs it whole on one GPU; 0:
                                                   not known */
    char device_buf[VRAM_TRY_MAX_STRATEGIES][24];
    char name_buf[VRAM_TRY_MAX_STRATEGIES][VRAM_TRY_NAME_MAX + 1];
    char skip_buf[VRAM_TRY_MAX_STRATEGIES][VRAM_TRY_NAME_MAX + 1];
    char why_buf[VRAM_TRY_MAX_STRATEGIES][512];
    const char *skipped[VRAM_TRY_MAX_STRATEGIES], *skipped_why[VRAM_TRY_MAX_STRATEGIES];
    int n_skipped;
    /* From a plan, for the calibration file (plan/calibration.h): the model as the plan names
       it ("" when not known), the workload's key, each strategy's expected bytes on its GPU
       (0: not known) */
    char calib_model[512], calib_workload[320];
    uint64_t expected[VRAM_TRY_MAX_STRATEGIES];
} vram_try_chain;

/* Applies "strategies" (a comma list), "plan" (a saved plan's file), "model" or "assume-gpu"
 * (a GPU for --model). VRAM_OK; VRAM_E_INVALID with err one line; VRAM_E_NOMEM;
 * VRAM_E_UNHANDLED for another name. */
vram_status vram_try_chain_set(vram_try_chain *c, const char *name, const char *arg, char *err,
                               size_t cap);
/* After the options: exactly one source, --assume-gpu only with --model. */
vram_status vram_try_chain_check(const vram_try_chain *c, char *err, size_t cap);
/* "plan", "model" or "strategies", and the value given. */
const char *vram_try_chain_kind(const vram_try_chain *c);
const char *vram_try_chain_value(const vram_try_chain *c);
/* What {strategy} may hold, so that its substitution is one plain word to any shell (no
 * quote, blank, $, `, ;, |, &, <, >, (, ), {, }, *, ?, [, ~, #, !, =, /, \\): letters, digits and
 * _ . + - : (a --strategies name; every name of VRAM_STRATEGY_NAMES is made of them). */
int vram_strategy_char_ok(char c);
/* Is s one of vramkit/strategy.h's VRAM_STRATEGY_NAMES (the only names a plan file may hold)? */
int vram_strategy_known(const char *s);
/* The {device} a strategy name's place means: "cuda:0", "auto" (split) or "cpu". */
const char *vram_try_where_device(vram_strategy_where where);
/* Strategy k's device and dtype. */
void vram_try_chain_strategy(const vram_try_chain *c, int k, const char **device,
                             const char **dtype);
/* Strategy k's argv: command[0 .. n) with {strategy}, {device}, {dtype} replaced,
 * NULL-terminated (free with vram_try_argv_free). NULL without memory. */
char **vram_try_argv(const vram_try_chain *c, int k, char *const *command, int n);
void vram_try_argv_free(char **argv);
/* Strategy k's environment for attempt number `attempt`: VRAMKIT_STRATEGY, _DEVICE, _DTYPE,
 * _ATTEMPT (env, NULL-terminated, points into buf). */
typedef struct vram_try_env {
    char buf[4][160];
    const char *env[5];
} vram_try_env;
void vram_try_chain_env(const vram_try_chain *c, int k, int attempt, vram_try_env *e);
void vram_try_chain_free(vram_try_chain *c);

/* vram_isolate_run with reap_descendants on, again without where the system has no
 * subreaper (a process that has no other children: the vramkit command). */
vram_status vram_try_isolate(vram_isolate_opts *io, vram_isolate_result *res);

/* p[0, n) as a NUL-terminated string of valid UTF-8 of at most max bytes: NULs, invalid bytes
 * and (unless keep_lines) control characters become '?'. NULL without memory. */
char *vram_clean_text(const char *p, size_t n, size_t max, int keep_lines);
/* The last line of data[0, len) with something other than blanks on it. */
void vram_last_line(const char *data, size_t len, const char **start, size_t *n);

#endif /* VRAMKIT_DRIVER_ISOLATE_CHAIN_H */
