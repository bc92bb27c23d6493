/* driver/comm/ranks_env.h — the core's rank resolution (vramkit/ranks.h) over this process's
 * environment: what a training program calls to learn its rank, world size, local rank and
 * GPU from torchrun, Open MPI, MPICH/PMI or Slurm. */
#ifndef VRAMKIT_RANKS_ENV_H
#define VRAMKIT_RANKS_ENV_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/ranks.h>

/* vram_ranks_lookup over getenv (ctx unused). */
const char *vram_ranks_getenv(void *ctx, const char *name);

/* vram_ranks_from_vars(vram_ranks_getenv, NULL, out): see ranks.h for the results. */
VRAM_NODISCARD vram_status vram_ranks_from_env(vram_ranks *out);

/* One line (no newline) that says what is wrong with a failed resolution, naming the
 * variables and their values ("RANK=4 is not below WORLD_SIZE=4 (torchrun)"), into buf;
 * `get`/`ctx` as given to vram_ranks_from_vars (NULL for the environment). Returns buf. */
const char *vram_ranks_explain(const vram_ranks *r, vram_status st, vram_ranks_lookup get,
                               void *ctx, char *buf, size_t cap);

/* ---- --world auto|W and --rank R -------------------------------------------------------
 * A number given to --world wins: the ranks are the options' (rank 0 unless --rank), and the
 * launcher's variables are not read. Otherwise (--world auto, or no --world) they come from
 * the launcher's variables (torchrun, Open MPI, MPICH/PMI, Slurm), world 1 when none is set,
 * and --rank R, when given, wins over the launcher's rank. */
typedef struct vram_world_opts {
    int have_world; /* --world W (a number) */
    uint32_t world;
    int have_rank;  /* --rank R */
    uint32_t rank;
} vram_world_opts;

/* Applies "world" ("auto" or a count from 1) or "rank" (0 to 2^32 - 2). VRAM_OK;
 * VRAM_E_INVALID with err one line; VRAM_E_UNHANDLED for another name. */
vram_status vram_world_set(vram_world_opts *w, const char *name, const char *text, char *err,
                           size_t cap);

/* Resolves. VRAM_OK with *out, or VRAM_E_INVALID with err one line naming the variables
 * ("RANK=4 is not below WORLD_SIZE=4 (torchrun)", "--rank 5 is not below --world 4"). */
vram_status vram_world_resolve(const vram_world_opts *w, vram_ranks *out, char *err, size_t cap);

#endif /* VRAMKIT_RANKS_ENV_H */
