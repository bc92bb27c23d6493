/* driver/cli/cli_chain.c — the command line of `try` and `run` (see cli_chain.h). */
#include "cli_chain.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plan/calibration.h"
#include "plan/plan_run.h"

int cli_chain_dashes(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) return i;
    return argc;
}

int cli_chain_stray(const char *cmd, char **argv, int dd, int first) {
    if (first < dd)
        return cli_usage_error(cmd, "unexpected argument '%s': the command goes after '--' "
                                    "(vramkit %s --strategies LIST -- COMMAND ARGS...)",
                               argv[first], cmd);
    return 0;
}

int cli_chain_command(const char *cmd, int argc, char **argv, int dd, char *const **command, int *n) {
    if (dd == argc)
        return cli_usage_error(cmd, "missing '--' before the command (vramkit %s --strategies "
                                    "LIST -- COMMAND ARGS...)", cmd);
    *command = argv + dd + 1;
    *n = argc - dd - 1;
    if (*n == 0) return cli_usage_error(cmd, "no command after '--'");
    if ((*command)[0][0] == '\0') return cli_usage_error(cmd, "the command after '--' is empty ('')");
    return 0;
}


const char *cli_chain_self_exe(const char *cmd) {
    static const char self[] = "/proc/self/exe";
    if (access(self, X_OK) == 0) return self;
    fprintf(stderr, "vramkit: %s: warning: /proc/self/exe cannot be run: what it starts will not "
                    "be killed if vramkit is killed with SIGKILL\n", cmd);
    return NULL;
}

int cli_calib_option(cli_calib *k, const char *name, const char *arg) {
    if (strcmp(name, "calibration") != 0) return 0;
    k->arg = arg;
    return 1;
}

int cli_chain_plan(const char *cmd, vram_try_chain *c, cli_calib *k) {
    char err[4400];
    vram_status st = VRAM_OK;
    if (c->plan_file || c->model)
        st = vram_calib_path(k->arg, k->path, sizeof k->path, &k->is_default, err, sizeof err);
    if (st == VRAM_OK) st = vram_plan_chain(c, err, sizeof err);
    return st == VRAM_OK ? -1 : cli_fail(cmd, st, err);
}

void cli_calib_record(const char *cmd, const cli_calib *cal, const vram_try_chain *c,
                      const char *strategy, const char *outcome, const vram_peak *m) {
    char err[4400];
    for (int k = 0; k < c->n; k++) {
        if (strcmp(c->strategies[k], strategy) != 0) continue;
        if (vram_calib_append(cal->path, cal->is_default, cmd, c, k, outcome, m, err, sizeof err) != VRAM_OK)
            fprintf(stderr, "vramkit: %s: warning: the measured peak was not recorded: %s\n", cmd, err);
        return;
    }
}

int cli_measured_line(const vram_peak *m, char *buf, size_t cap) {
    if (m->mem == NULL && !m->reported) return 0;
    vram_peak_text(m, buf, cap);
    return 1;
}
