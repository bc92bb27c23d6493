/* driver/cli/cli_chain.h — what the command lines of `vramkit try` and `vramkit run` share: the
 * options end at "--", and the command after it. The strategies themselves are
 * isolate/chain.h's. Errors are printed as one line naming the command. */
#ifndef VRAMKIT_CLI_CHAIN_H
#define VRAMKIT_CLI_CHAIN_H

#include "cli.h"

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

#endif
