/* proof_estimate.c — Frama-C WP over model.h and estimate.h: the parameter counts and every
 * byte count of the estimate either are exact or report overflow (no silent wrap), no
 * out-of-bounds access in the tensor-name scanner or the term tables, in-range float->int
 * conversion, and the contracts (run by ctest -L proof). */
#include <vramkit/estimate.h>
