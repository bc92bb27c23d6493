/* driver/cli/cli_chain.h — what the command lines of `vramkit try` and `vramkit run` share: the
 * options end at "--", and the command after it. The strategies themselves are
 * isolate/chain.h's. Errors are printed as one line naming the command. */
#ifndef VRAMKIT_CLI_CHAIN_H
#define VRAMKIT_CLI_CHAIN_H

#include "cli.h"
#include "isolate/chain.h"
#include "isolate/peak.h"

/* The index of "--" in argv (argc when there is none): the options end there. */
int cli_chain_dashes(int argc, char **argv);
/* After getopt stopped at `first`: an argument before "--" (dd) is an error naming it. */
int cli_chain_stray(const char *cmd, char **argv, int dd, int first);
/* The command after "--": there is one and its program is not empty. Sets *command and *n. */
int cli_chain_command(const char *cmd, int argc, char **argv, int dd, char *const **command, int *n);

/* The vramkit executable that each child starts through (isolate/exec_shim.h), so it dies with
 * vramkit, even one killed with SIGKILL: /proc/self/exe (in the spawned child it names the
 * image it shares with us, even when the file was replaced since). NULL, with a warning on
 * stderr, where it cannot be run. */
const char *cli_chain_self_exe(const char *cmd);

/* --calibration FILE|none, as try and run take it: the option, then the calibration file
 * (plan/calibration.h) it names. */
typedef struct cli_calib {
    const char *arg; /* --calibration (NULL: the default; "none": none) */
    char path[4096]; /* the file ("": none), once cli_chain_plan has found it */
    int is_default;
} cli_calib;

/* An option setter's first step: 1 when name is "calibration" (taken into k), else 0. */
int cli_calib_option(cli_calib *k, const char *name, const char *arg);
/* After the options: with --plan or --model, the calibration file into k, then the strategies
 * from the plan (vram_plan_chain). -1 when both are done, else the exit code after the error
 * line. */
int cli_chain_plan(const char *cmd, vram_try_chain *c, cli_calib *k);
/* Appends the record of an attempt of `strategy` under chain c (nothing when c is not from a
 * plan or there is no file); a failure is a warning on stderr: the attempt ran all the same. */
void cli_calib_record(const char *cmd, const cli_calib *k, const vram_try_chain *c,
                      const char *strategy, const char *outcome, const vram_peak *m);
/* The attempt's measured line ("measured peak: ...") into buf when there is something to say
 * (NVML is there, or the child reported); 0 when not. */
int cli_measured_line(const vram_peak *m, char *buf, size_t cap);

#endif
