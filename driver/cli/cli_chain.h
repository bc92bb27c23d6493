/* driver/cli/cli_chain.h — the strategy chain that `vramkit try` and `vramkit run` walk:
 * --strategies LIST, --plan FILE or --model MODEL [--assume-gpu SPEC], what each strategy
 * means for {device} and {dtype}, the substitution of COMMAND's placeholders, and the text
 * a child wrote made printable. Errors are printed as one line naming the command. */
#ifndef VRAMKIT_CLI_CHAIN_H
#define VRAMKIT_CLI_CHAIN_H

#include <stddef.h>

#include "isolate/isolate.h"
#include "plan/plan_doc.h"
#include "plan/planner.h"

#define CLI_CHAIN_MAX 64      /* strategies in a chain */
#define CLI_CHAIN_NAME_MAX 64 /* characters of a strategy name */
#define CLI_MAX_SECONDS 1000000.0

typedef struct cli_chain {
    char *strategy_text;            /* owned copy of the list, cut at the commas */
    const char *strategy_text_orig; /* the list as given */
    const char *strategies[CLI_CHAIN_MAX];
    int n;
    /* From a plan (--plan, --model): each strategy's device and dtype (NULL: by name), the
     * ones skipped and why; strings point into rows or the buffers here. */
    const char *plan_file, *model;
    vram_gpu_budget gpus[VRAM_PLAN_MAX_GPUS];
    int ngpu;
    vram_plan_rows *rows;
    const char *device_of[CLI_CHAIN_MAX], *dtype_of[CLI_CHAIN_MAX];
    uint64_t gpu_high[CLI_CHAIN_MAX]; /* the estimate's high on its GPU when a plan made now
                                         (--model) runs it whole on one GPU; 0: not known */
    uint64_t row_high[VRAM_PLAN_MAX_ROWS]; /* the same by row of the plan (private) */
    char device_buf[CLI_CHAIN_MAX][24];
    const char *skipped[CLI_CHAIN_MAX], *skipped_why[CLI_CHAIN_MAX];
    int n_skipped;
} cli_chain;

/* Option values; each returns 0, or the exit code after printing the error. */
int cli_chain_strategies(const char *cmd, const char *text, cli_chain *c);
int cli_chain_plan(const char *cmd, const char *file, cli_chain *c);
int cli_chain_model(const char *cmd, const char *model, cli_chain *c);
int cli_chain_gpu(const char *cmd, const char *spec, cli_chain *c);
/* After the options: exactly one source, --assume-gpu only with --model. */
int cli_chain_check(const char *cmd, const cli_chain *c);
/* Reads the plan (--plan) or makes it (--model), keeping the strategies that fit. */
int cli_chain_load(const char *cmd, cli_chain *c);
/* "plan", "model" or "strategies", and the value given. */
const char *cli_chain_kind(const cli_chain *c);
const char *cli_chain_value(const cli_chain *c);
/* Strategy k's device and dtype. */
void cli_chain_strategy(const cli_chain *c, int k, const char **device, const char **dtype);
/* `text` with every {strategy}, {device}, {dtype} replaced. NULL without memory. */
char *cli_chain_substitute(const char *text, const char *strategy, const char *device,
                           const char *dtype);
void cli_chain_free(cli_chain *c);

/* ---- the command after "--" and its attempts -------------------------------------------- */

/* The index of "--" in argv (argc when there is none): the options end there. */
int cli_chain_dashes(int argc, char **argv);
/* After getopt stopped at `first`: an argument before "--" (dd) is an error naming it. */
int cli_chain_stray(const char *cmd, char **argv, int dd, int first);
/* The command after "--": there is one and its program is not empty. Sets *command and *n. */
int cli_chain_command(const char *cmd, int argc, char **argv, int dd, char ***command, int *n);
/* Strategy k's argv: command[0 .. n) with the placeholders substituted, NULL-terminated (free
 * with cli_chain_argv_free). NULL without memory. */
char **cli_chain_argv(const cli_chain *c, int k, char *const *command, int n);
void cli_chain_argv_free(char **argv);
/* Strategy k's environment for attempt number `attempt`: VRAMKIT_STRATEGY, _DEVICE, _DTYPE,
 * _ATTEMPT (env, NULL-terminated, points into buf). */
typedef struct cli_chain_attempt_env {
    char buf[4][160];
    const char *env[5];
} cli_chain_attempt_env;
void cli_chain_env(const cli_chain *c, int k, int attempt, cli_chain_attempt_env *e);
/* vram_isolate_run with reap_descendants on, again without where the system has no subreaper. */
vram_status cli_chain_isolate(vram_isolate_opts *io, vram_isolate_result *res);

/* Seconds: digits with at most one '.' between digits, > 0 and <= CLI_MAX_SECONDS. */
int cli_opt_seconds(const char *cmd, const char *name, const char *text, double *out);

/* p[0, n) as a NUL-terminated string of valid UTF-8 of at most max bytes: NULs, invalid
 * bytes and (unless keep_lines) control characters become '?'. NULL without memory. */
char *cli_clean_text(const char *p, size_t n, size_t max, int keep_lines);
/* The last line of data[0, len) with something other than blanks on it. */
void cli_last_line(const char *data, size_t len, const char **start, size_t *n);

#endif
