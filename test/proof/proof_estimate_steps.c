/* proof_estimate_steps.c — Frama-C WP over estimate.h's counting steps: every byte count of
 * the estimate goes through the saturating multiply/add that flags overflow (never a wrapped
 * total), in-range float->int conversion in vram__muldiv, terms with low <= expected <= high
 * (run by ctest -L proof). One of the parts of estimate.h and model.h
 * (README.md, "Splitting a proof"); vram__est_act_infer is proof_estimate_infer.c's. */
#include <vramkit/estimate.h>
