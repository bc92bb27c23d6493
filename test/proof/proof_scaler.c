/* proof_scaler.c — Frama-C WP over scaler.h: the loss scaler's counters never wrap, its
 * optimizer arrays are never indexed out of bounds, and every function keeps its contract
 * (the state stays sound, a skip is reported iff an overflow was) (run by ctest -L proof). */
#include <vramkit/scaler.h>
