/* Shared by the fuzz harnesses: an invariant check that stops the run loudly. */
#ifndef VRAMKIT_FUZZ_COMMON_H
#define VRAMKIT_FUZZ_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                            \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

/* A little reader over the fuzz input: takes bytes from the front, zeros when empty. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t n;
} fuzz_in;

static inline uint64_t fuzz_u64(fuzz_in *in, unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++) {
        v <<= 8;
        if (in->n > 0) {
            v |= in->p[0];
            in->p++;
            in->n--;
        }
    }
    return v;
}
static inline int fuzz_bool(fuzz_in *in) { return (int)(fuzz_u64(in, 1) & 1u); }

#endif
