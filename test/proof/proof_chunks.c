/* Frama-C WP proof of vramkit/chunks.h: no runtime error in any function, with unsigned
 * overflow checked (the size arithmetic provably never wraps), and the ACSL contracts of the
 * header. The generator it calls is proved in proof_rng.c; see proof_chunks.opts. */
#include <vramkit/chunks.h>
