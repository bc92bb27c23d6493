/* driver/cli/cli_stream.h — what `vramkit chunks FILE` and `vramkit stream` share: opening the
 * datasets of an HDF5 file with one error line and the documented exit code, and describing
 * each dataset and its read path as text or JSON. Works in a build without HDF5 (it says so). */
#ifndef VRAMKIT_CLI_STREAM_H
#define VRAMKIT_CLI_STREAM_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "hdf5/h5source.h"
#include <vramkit/ranks.h>

/* 1 when this build reads HDF5 files (VRAMKIT_HAVE_HDF5). */
int cli_h5_built(void);

/* Opens the datasets. Returns -1 with *out set, or an exit code after one error line
 * "vramkit: CMD: ..." naming the file and dataset: 2 for a missing or bad file or dataset
 * (missing, not HDF5, not a dataset, empty, unmovable type, sample counts that differ),
 * 3 for an I/O error and in a build without HDF5. */
int cli_h5_open(const char *cmd, const char *path, const char *const *names, uint32_t n,
                vram_h5_file **out);
void cli_h5_close(vram_h5_file *f);
/* vram_h5_source and vram_h5_read_plain, callable (never reached) in a build without HDF5. */
vram_source cli_h5_source(vram_h5_file *f);
vram_status cli_h5_read_plain(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                              void *dst, char *err, size_t cap);

/* "1003 x 36 x 7" into buf. */
const char *cli_h5_shape(const vram_h5_dataset *ds, char *buf, size_t cap);
/* One line per dataset: name, shape, type, bytes per sample, read path and why. */
void cli_h5_text(FILE *out, const vram_h5_file *f);
/* The members "file" and "datasets" (an array of {name, shape, type, layout, filters,
 * row_bytes, read_path, reason, offset, chunk_rows, chunks}) of an open JSON object. */
void cli_h5_json(vram_json *j, const vram_h5_file *f);

/* ---- --world auto|W and --rank R ------------------------------------------------------
 * A number given to --world wins: the ranks are the flags' (rank 0 unless --rank), and the
 * launcher's variables are not read. Otherwise (--world auto, or no --world) they come from
 * the launcher's variables (ranks.h: torchrun, Open MPI, MPICH/PMI, Slurm), world 1 when none
 * is set, and --rank R, when given, wins over the launcher's rank. */
typedef struct cli_world {
    int have_world; /* --world W (a number) */
    uint32_t world;
    int have_rank; /* --rank R */
    uint32_t rank;
} cli_world;
/* --world's value: "auto" or a count from 1. Returns 0, or the exit code after one line. */
int cli_opt_world(const char *cmd, const char *text, cli_world *w);
/* Resolves. Returns -1 with *out set, or 2 after one line naming the variables ("RANK=4 is
 * not below WORLD_SIZE=4 (torchrun)", "--rank 5 is not below --world 4"). */
int cli_ranks(const char *cmd, const cli_world *w, vram_ranks *out);
/* "launcher        torchrun: RANK, WORLD_SIZE, local rank 1 (LOCAL_RANK)" on stdout when the
 * ranks came from a launcher's variables; nothing otherwise. */
void cli_print_launcher(const vram_ranks *r);

#endif /* VRAMKIT_CLI_STREAM_H */
