/* proof_base.c — Frama-C WP over base.h: the checked arithmetic every size computation
 * goes through never wraps and does what its contract says (run by ctest -L proof). */
#include <vramkit/base.h>
