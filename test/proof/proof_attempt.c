/* proof_attempt.c — Frama-C WP over attempt.h: classifying how an attempt ended never reads
 * outside the error-output tail it is given (pointer + length, not NUL-terminated), always
 * yields a valid outcome and rule, and keeps the precedence its contract states (could not
 * start, timeout, exit 0) (run by ctest -L proof). */
#include <vramkit/attempt.h>
