/* Frama-C WP proof of vramkit/perm.h: no runtime error (unsigned overflow checked: the
 * round functions' arithmetic modulo 2^64 is rng.h's vram_rng_draw, proved in proof_rng.c),
 * every result below n, the cycle-walk bounded. See proof_perm.opts. */
#include <vramkit/perm.h>
