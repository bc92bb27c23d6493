/* driver/cli/cli_stream.h — what `vramkit chunks FILE` and `vramkit stream` print alike: the
 * datasets of an HDF5 file and their read paths, and where the ranks came from. */
#ifndef VRAMKIT_CLI_STREAM_H
#define VRAMKIT_CLI_STREAM_H

#include <stdio.h>

#include <vramkit/ranks.h>

#include "cli.h"
#include "hdf5/h5source.h"

/* One line per dataset: name, shape, type, bytes per sample, read path and why. */
void cli_h5_text(FILE *out, const vram_h5_file *f);
/* "launcher        torchrun: RANK, WORLD_SIZE, local rank 1 (LOCAL_RANK)" on stdout when the
 * ranks came from a launcher's variables; nothing otherwise. */
void cli_print_launcher(const vram_ranks *r);

#endif /* VRAMKIT_CLI_STREAM_H */
