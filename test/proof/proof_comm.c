/* Frama-C WP proof of vramkit/comm.h: the table's check, and an all-reduce's or a
 * broadcast's buffer size as count * element bytes without a wrap. See proof_comm.opts. */
#include <vramkit/comm.h>
