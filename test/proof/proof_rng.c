/* Frama-C WP proof of vramkit/rng.h: no runtime errors, and the contracts (a bounded draw
 * is below its bound) that proof_chunks.c relies on. See proof_rng.opts. */
#include <vramkit/rng.h>
