/* Frama-C WP proof of vramkit/layout.h: the memory of a parallel layout and the proposal never
 * wrap a byte count (every product and sum is checked, every division has a divisor above 0),
 * index no array out of bounds, and keep each term's low <= expected <= high. See
 * proof_layout.opts. */
#include <vramkit/layout.h>
