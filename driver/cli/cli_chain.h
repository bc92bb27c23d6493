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

#endif
