/* driver/comm/ranks_env.h — the core's rank resolution (vramkit/ranks.h) over this process's
 * environment: what a training program calls to learn its rank, world size, local rank and
 * GPU from torchrun, Open MPI, MPICH/PMI or Slurm. */
#ifndef VRAMKIT_RANKS_ENV_H
#define VRAMKIT_RANKS_ENV_H

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

#endif /* VRAMKIT_RANKS_ENV_H */
