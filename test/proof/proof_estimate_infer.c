/* proof_estimate_infer.c — Frama-C WP over estimate.h's inference activations
 * (vram__est_ws_infer, vram__est_kv_infer, vram__est_act_infer): every byte count through
 * the saturating multiply/add, never a wrap, and low <= expected <= high for its terms (run
 * by ctest -L proof). A part of its own so that ctest runs it beside the other steps
 * (README.md, "Splitting a proof"). */
#include <vramkit/estimate.h>
