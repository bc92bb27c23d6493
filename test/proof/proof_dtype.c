/* proof_dtype.c — Frama-C WP over dtype.h: byte counts never wrap (overflow is reported),
 * name lookups never read outside their text, and the contracts (run by ctest -L proof). */
#include <vramkit/dtype.h>
