/* Frama-C WP proof of vramkit/ranks.h: reading a launcher's number never wraps and stays
 * within its bound, and the GPU chosen is one of the devices. See proof_ranks.opts. */
#include <vramkit/ranks.h>
