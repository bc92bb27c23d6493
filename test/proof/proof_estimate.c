/* proof_estimate.c — Frama-C WP over estimate.h's names, checks, the resolution of the
 * workload's defaults, the driver of the counting steps and the recommendation: term and
 * preset tables read in bounds, the refusal reasons, the recommendation loop keeping its
 * chosen preset one that fits (a loop invariant), and vram_estimate_model returning
 * VRAM_E_OVERFLOW, never a wrapped total (run by ctest -L proof). The counting steps are
 * proof_estimate_steps.c's, model.h is proof_model.c's (README.md, "Splitting a proof"). */
#include <vramkit/estimate.h>
