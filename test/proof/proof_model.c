/* proof_model.c — Frama-C WP over model.h's architectures: vram_arch_check accepts only
 * archs within the documented limits (the vram_arch_ok predicate the estimate relies on),
 * and the parameter counts go through the saturating arithmetic (run by ctest -L proof).
 * The names and tensors of model.h are proof_model_tensors.c's (README.md, "Splitting a
 * proof"). */
#include <vramkit/model.h>
