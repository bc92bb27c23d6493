/* driver/cli/cli_chain.c — the command line of `try` and `run` (see cli_chain.h). */
#include "cli_chain.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
