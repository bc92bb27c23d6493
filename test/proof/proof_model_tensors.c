/* proof_model_tensors.c — Frama-C WP over model.h's names and tensors: the tensor-name
 * scanner reads within the name, and tensor statistics add up exactly or report overflow
 * with the statistics untouched (run by ctest -L proof). model.h's architectures are
 * proof_model.c's; the two run side by side (README.md, "Splitting a proof"). */
#include <vramkit/model.h>
