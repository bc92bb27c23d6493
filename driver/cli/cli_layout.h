/* driver/cli/cli_layout.h — the parallel layout of `vramkit estimate` and `vramkit plan` as
 * text (plan/parallel.h reads the options and makes it), and the options' help. */
#ifndef VRAMKIT_CLI_LAYOUT_H
#define VRAMKIT_CLI_LAYOUT_H

#include <stdio.h>

#include "cli.h"
#include "plan/parallel.h"

/* The options' help text (one block, for --help of estimate and plan). */
extern const char cli_layout_help[];

/* The report as text (nothing for mode 0). */
void cli_layout_text(FILE *out, const vram_parallel_report *r);

#endif
