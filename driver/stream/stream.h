/* driver/stream/stream.h — the streamer: samples of one or more datasets, chunk by chunk, into
 * device memory, epoch after epoch, in the order the chunk planner (vramkit/chunks.h) gives.
 * Reader threads fill pinned slabs, a copy stream moves them to device buffers, events order
 * the three; it runs on any vram_device_ops (CUDA, the host backend, the mock). */
#ifndef VRAMKIT_DRIVER_STREAM_H
#define VRAMKIT_DRIVER_STREAM_H

#include <stdint.h>

#include <vramkit/chunks.h>
#include <vramkit/device.h>

/* ---- terms ---------------------------------------------------------------------------
 * A source holds `samples` samples of each of its datasets (they share the first dimension);
 * row d of a sample is row_bytes[d] bytes. A device buffer holds one chunk of the plan: per
 * dataset d a region of samples_per_chunk rows, one after the other (so the plan's sample
 * bytes are the sum of the row bytes). Chunk q of the stream (q = 0, 1, ... over all epochs)
 * is the chunk visited (q mod chunk_count)-th in epoch q / chunk_count; it goes to device
 * buffer q mod buffers. Nothing is allocated after vram_streamer_open but the buffer that
 * vram_streamer_detach puts in place of one it hands over. */

#define VRAM_STREAM_MAX_DATASETS 16u
#define VRAM_STREAM_ERR_MAX 512u /* the longest error message kept */

/* Defaults of the zero fields of vram_stream_config. */
#define VRAM_STREAM_DEFAULT_SLABS 4u                        /* pinned slabs in the ring */
#define VRAM_STREAM_DEFAULT_SLAB_BYTES (UINT64_C(64) << 20)  /* 64 MiB */
#define VRAM_STREAM_DEFAULT_PIECE_BYTES (UINT64_C(4) << 20)  /* one read call: 4 MiB */
#define VRAM_STREAM_MAX_READERS 64u
#define VRAM_STREAM_MAX_SLABS 64u
#define VRAM_STREAM_MAX_EPOCHS UINT64_C(1000000) /* counters are kept per epoch */

/* Where the bytes come from (an HDF5 file: driver/hdf5/h5source.h; memory: below).
 * `read` writes rows [first, first + count) of dataset d (count * row_bytes[d] bytes) to
 * dst, or returns an error with one line in err (the input and, for a file, the offset).
 * It is called by several threads at once, each with its own rows; a dataset whose
 * parallel[d] is 0 is read in one call per range (the source serialises those itself).
 * `check`, when set, is called after each slab or chunk is read and before its data is
 * published: it reports a source changed under the reader (VRAM_E_IO). */
typedef struct vram_source {
    void *ctx;
    uint64_t samples;
    uint32_t datasets; /* 1 .. VRAM_STREAM_MAX_DATASETS */
    uint64_t row_bytes[VRAM_STREAM_MAX_DATASETS];
    int parallel[VRAM_STREAM_MAX_DATASETS];
    vram_status (*read)(void *ctx, uint32_t d, uint64_t first, uint64_t count, void *dst,
                        char *err, size_t cap);
    vram_status (*check)(void *ctx, char *err, size_t cap);
} vram_source;

/* How the bytes reach device memory. */
typedef enum vram_stream_staging {
    VRAM_STAGE_AUTO = 0,  /* DIRECT where device memory is host memory (the table's flag
                             VRAM_DEVICE_HOST_MEMORY: the host backend), SLABS elsewhere */
    VRAM_STAGE_SLABS = 1, /* readers fill pinned slabs; the copy stream moves them */
    VRAM_STAGE_DIRECT = 2 /* readers write device buffers themselves (VRAM_DEVICE_HOST_MEMORY
                             only) */
} vram_stream_staging;

/* dst[i] = src[index[i]] for i < rows, rows of row_bytes bytes, asynchronous on `stream`:
 * the shape of vram_k_gather_rows (kernels/vramkit_kernels.h). index lives where src does. */
typedef vram_status (*vram_gather_fn)(void *dst, const void *src, uint64_t src_rows,
                                      const uint64_t *index, uint64_t rows, uint64_t row_bytes,
                                      int *bad_index_flag, void *stream);

/* What to stream. Zero-initialise; set plan.batch and a budget (plan.budget_bytes, or
 * plan.free_bytes with fraction/reserve: see vram_chunks_config); plan.samples and
 * plan.sample_bytes are taken from the source (any value given there is replaced). Every
 * other zero field means its documented default. */
typedef struct vram_stream_config {
    vram_chunks_config plan; /* batch, budget, buffers, world/rank/shard, drop_last, shuffle, seed */
    uint64_t epochs;         /* epochs to stream; 0: 1 */
    uint64_t first_epoch;    /* the epoch number of the first epoch (the shuffle's key), to resume */
    int device;              /* ordinal on the ops table */
    uint32_t readers;        /* reader threads; 0: the online CPUs, from 2 to 16 */
    uint32_t slabs;          /* pinned slabs (SLABS staging); 0: 4; at least 2 */
    uint64_t slab_bytes;     /* bytes of one slab; 0: 64 MiB, never more than a chunk needs,
                                never less than one row of the widest dataset */
    uint64_t piece_bytes;    /* bytes per read call; 0: 4 MiB */
    vram_stream_staging staging;
    vram_gather_fn gather;   /* the in-chunk shuffle; NULL: vram_stream_host_gather, which
                                only a table with VRAM_DEVICE_HOST_MEMORY can use (device
                                memory that is host memory). Unused without shuffle. */
    vram_stream consumer;    /* the consumer's stream: each batch is ready in its order */
} vram_stream_config;

/* One batch, valid until released. */
typedef struct vram_batch {
    void *data[VRAM_STREAM_MAX_DATASETS]; /* device: count rows of row_bytes[d], contiguous */
    uint64_t count;          /* samples in the batch (0 only when done) */
    const uint64_t *samples; /* host: the sample index of each row */
    uint64_t epoch;          /* the epoch number (first_epoch + epoch_index) */
    uint64_t epoch_index;    /* 0 .. epochs-1 */
    uint64_t index;          /* batch index within its epoch */
    uint64_t chunk;          /* storage index of its chunk (vram_chunks_chunk) */
    uint64_t chunk_seq;      /* q: chunks before this one's, over all epochs */
    uint64_t slot_start;     /* its slots in the chunk: [slot_start, slot_start + count) */
    int epoch_begin;         /* the first batch of its epoch */
    int epoch_end;           /* the last batch of its epoch */
    int done;                /* no batch: every epoch was delivered */
    vram_event ready;        /* recorded on the consumer stream once the data is in place */
    uint64_t serial_;        /* private: checks that batches are released in order */
} vram_batch;

/* Counters of one epoch (or of all). Seconds of reading are summed over the reader threads. */
typedef struct vram_stream_stats {
    uint64_t batches, samples;
    uint64_t bytes_delivered; /* samples * sample bytes */
    uint64_t bytes_read;      /* from the source into slabs or buffers */
    uint64_t bytes_copied;    /* host to device on the copy stream (0 in DIRECT staging) */
    uint64_t bytes_gathered;  /* moved by the shuffle's gather */
    uint64_t chunks;          /* chunks loaded */
    double read_seconds;      /* reader threads inside source reads, summed over threads */
    double copy_seconds;      /* the producer issuing copies and waiting for them */
    double wait_seconds;      /* the consumer blocked in vram_streamer_next */
    double seconds;           /* wall clock of the epoch: from the end of open (epoch 0) or the
                                 release of the last epoch's last batch, to the release of its
                                 own last batch */
} vram_stream_stats;

typedef struct vram_streamer vram_streamer;

/* ---- functions, in the order a user calls them -------------------------------------- */

/* The config with the zero defaults resolved for this source (readers from the CPUs,
 * slab size from the chunk size). Requires: cfg, src valid. */
vram_stream_config vram_stream_defaults(const vram_stream_config *cfg, const vram_source *src);

/* The plan the streamer will follow for `src` (plan.samples and plan.sample_bytes from the
 * source). Requires: all valid. Guarantees: vram_chunks_make's status; VRAM_E_INVALID with
 * no dataset, VRAM_E_RANGE with more than VRAM_STREAM_MAX_DATASETS, VRAM_E_OVERFLOW when
 * the row bytes do not add up in 64 bits. */
vram_status vram_stream_plan(const vram_source *src, const vram_stream_config *cfg,
                             vram_chunks_plan *plan);

/* Device bytes the streamer allocates beyond the plan's chunk buffers when shuffling: two
 * gather buffers of one batch, and (SLABS staging) each buffer's order, 8 bytes a row.
 * ops NULL stands for a GPU that is not here. UINT64_MAX when it overflows. */
uint64_t vram_stream_extra_device_bytes(const vram_chunks_plan *plan, const vram_stream_config *cfg,
                                        const vram_device_ops *ops);

/* Plans, allocates everything (device buffers, pinned slabs, streams, events, threads) and
 * starts reading. Requires: ops passes vram_device_ops_check; src and cfg valid; *out set
 * on VRAM_OK only. On failure err holds one line (input and reason) and nothing is left
 * allocated. Statuses: vram_stream_plan's (VRAM_E_NOSPACE: a batch does not fit one
 * buffer), VRAM_E_INVALID (bad config: epochs, staging, ops), VRAM_E_NOT_SUPPORTED (DIRECT
 * staging or the host gather on a device whose memory is not host memory), the device's
 * allocation errors (VRAM_E_OOM), VRAM_E_STATE (a thread could not start). */
vram_status vram_streamer_open(const vram_device_ops *ops, const vram_source *src,
                               const vram_stream_config *cfg, vram_streamer **out, char *err,
                               size_t cap);

/* The resolved plan, config and layout. */
const vram_chunks_plan *vram_streamer_plan(const vram_streamer *s);
const vram_stream_config *vram_streamer_config(const vram_streamer *s);
/* "slabs" or "direct". */
const char *vram_streamer_staging(const vram_streamer *s);

/* The next batch, in the planner's order: blocks until its chunk is loaded; with shuffle
 * its rows are gathered on the consumer stream. Requires: s, out valid. Guarantees:
 * VRAM_OK and a batch (out->done when every epoch was delivered: count 0, no data);
 * VRAM_E_STATE when two batches are held already, or when the chunk needs the buffer of a
 * chunk whose batches are still held (release them first) — nothing changes; an error of
 * reading (VRAM_E_IO, ...) or of the device once the stream reaches a chunk that could not
 * be loaded: every batch before it was delivered, none after, and vram_streamer_error says
 * what happened. */
vram_status vram_streamer_next(vram_streamer *s, vram_batch *out);

/* Gives a batch back (the oldest held one: batches are released in the order received).
 * Records on the consumer stream that the batch is done, so its memory is reused only after
 * the consumer's work on it: use the batch on the consumer stream, or, from another stream,
 * wait for `ready` there and make the consumer stream wait for that work before releasing.
 * Requires: b from vram_streamer_next. Guarantees: VRAM_OK; VRAM_E_INVALID for a batch that
 * is not the oldest held one; a device error. */
vram_status vram_streamer_release(vram_streamer *s, vram_batch *b);

/* Keeping a chunk: the batches of a chunk stay valid past their release (each batch's rows
 * in place, zero-copy, as long as a consumer uses them). DIRECT staging without shuffle only
 * (VRAM_E_NOT_SUPPORTED elsewhere: there a batch's rows are copied or gathered).
 * vram_streamer_keep: the buffer of held batch b's chunk (b->chunk_seq) is not reused until
 * as many vram_streamer_unkeep(chunk_seq) calls as keeps were made (each VRAM_OK, or
 * VRAM_E_INVALID for a chunk that is not kept). While the chunk vram_streamer_next needs has
 * its buffer kept, next answers VRAM_E_STATE without waiting; vram_streamer_kept_blocker then
 * names the kept chunk in the way (UINT64_MAX: none). vram_streamer_detach hands the kept
 * chunk's memory to the caller, who frees it with the ops' dev_free (its batches stay valid
 * there): replace 1 puts a new buffer of the same size in its place (an allocation; the
 * stream goes on), replace 0 none (only before close: the buffer is never loaded again). */
vram_status vram_streamer_keep(vram_streamer *s, const vram_batch *b);
vram_status vram_streamer_unkeep(vram_streamer *s, uint64_t chunk_seq);
uint64_t vram_streamer_kept_blocker(vram_streamer *s);
vram_status vram_streamer_detach(vram_streamer *s, uint64_t chunk_seq, int replace, void **mem);

/* Counters of epoch_index (0-based), or of every epoch together with UINT64_MAX.
 * VRAM_E_RANGE past the last epoch. */
vram_status vram_streamer_stats(vram_streamer *s, uint64_t epoch_index, vram_stream_stats *out);

/* The first error's one-line message ("" when none). Valid until close. */
const char *vram_streamer_error(vram_streamer *s);

/* Stops the threads, waits for the device, frees everything. NULL is a no-op. Returns the
 * first error met while tearing down (VRAM_OK normally). */
vram_status vram_streamer_close(vram_streamer *s);

/* ---- helpers ---------------------------------------------------------------------- */

/* The gather on host memory, with vram_gather_fn's contract (index values >= src_rows set
 * *bad_index_flag and copy nothing for that row); `stream` is ignored: it is done on return. */
vram_status vram_stream_host_gather(void *dst, const void *src, uint64_t src_rows,
                                    const uint64_t *index, uint64_t rows, uint64_t row_bytes,
                                    int *bad_index_flag, void *stream);

/* A source over memory: dataset d is data[d], samples * row_bytes[d] bytes. For tests,
 * fuzzing and benchmarks: fail_dataset/fail_at make a read covering one sample fail with
 * VRAM_E_IO. */
typedef struct vram_memsource {
    const void *data[VRAM_STREAM_MAX_DATASETS];
    uint64_t row_bytes[VRAM_STREAM_MAX_DATASETS];
    uint64_t samples;
    uint32_t datasets;
    uint32_t fail_dataset;
    uint64_t fail_at; /* 0: never; else reads covering sample fail_at - 1 fail */
} vram_memsource;

/* The source over m (m must outlive it). */
vram_source vram_memsource_source(vram_memsource *m);

#endif /* VRAMKIT_DRIVER_STREAM_H */
