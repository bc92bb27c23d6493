/* driver/loader/verify.h — `vramkit stream --verify`: every delivered sample checked, byte for
 * byte, against a plain HDF5 read, the order against the plan (vramkit/chunks.h), and each
 * epoch's exactly-once property. Prints nothing. */
#ifndef VRAMKIT_DRIVER_STREAM_VERIFY_H
#define VRAMKIT_DRIVER_STREAM_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

typedef struct vram_stream_verifier {
    vram_h5_file *f;
    const vram_chunks_plan *p;
    uint64_t first_epoch;
    const vram_stream_backend *be;
    uint64_t *corder, *rows;
    uint64_t e, k, j; /* epoch index, visit, batch of the chunk expected next */
    int have_chunk;
    vram_chunk ch;
    uint64_t region_off[VRAM_STREAM_MAX_DATASETS];
    uint8_t *ref;                              /* the chunk, as HDF5 reads it */
    uint8_t *host[VRAM_STREAM_MAX_DATASETS];   /* a batch copied back from a GPU */
    uint8_t *seen;                             /* this epoch's delivered samples (bits) */
    uint64_t seen_count, checked, epochs_checked;
    int failed;                                /* the stream differs: the answer "no" */
} vram_stream_verifier;

/* Prepares the check of session s. VRAM_OK, or VRAM_E_NOMEM with err. */
vram_status vram_stream_verify_init(vram_stream_verifier *v, const vram_stream_session *s,
                                    char *err, size_t cap);
/* Checks the next batch delivered. VRAM_OK; with v->failed set, VRAM_E_STATE and err saying
 * where the stream differs; else a status with err saying why the check could not go on. */
vram_status vram_stream_verify_batch(vram_stream_verifier *v, const vram_batch *b, char *err,
                                     size_t cap);
/* After the last batch: the last epoch complete, `epochs` of them. As verify_batch. */
vram_status vram_stream_verify_end(vram_stream_verifier *v, uint64_t epochs, char *err, size_t cap);
void vram_stream_verify_free(vram_stream_verifier *v);

#endif /* VRAMKIT_DRIVER_STREAM_VERIFY_H */
