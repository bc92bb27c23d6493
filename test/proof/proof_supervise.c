/* proof_supervise.c — Frama-C WP over supervise.h: the supervision policy never overflows
 * (backoff doubling saturates at its cap, counters saturate), keeps the current strategy
 * inside the chain, only moves down it, restarts the same strategy with a delay between the
 * first backoff and the cap and within the restart budget, and changes nothing on error
 * (run by ctest -L proof). */
#include <vramkit/supervise.h>
