/* proof_plan.c — Frama-C WP over plan.h: comparing a saved plan with the plan made now reads
 * only what it is given (names up to VRAM_PLAN_NAME_MAX bytes, outcomes within their counts),
 * writes at most cap changes, and counts every difference (run by ctest -L proof). */
#include <vramkit/plan.h>
