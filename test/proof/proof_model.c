/* proof_model.c — Frama-C WP over model.h: the tensor-name scanner reads within the name,
 * tensor statistics add up exactly or report overflow, vram_arch_check accepts only archs
 * within the documented limits (the vram_arch_ok predicate the estimate relies on), and the
 * parameter counts go through checked arithmetic (run by ctest -L proof). One of the three
 * parts that were proof_estimate (see README.md, "Splitting a proof"). */
#include <vramkit/model.h>
