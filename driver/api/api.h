/* driver/api/api.h — the C API the Python package (python/vramkit) loads with ctypes from the
 * shared library libvramkit_py.so: plain types and flat structs only, each struct carrying
 * its size so that a mismatched package and library are refused instead of misread. Nothing
 * here decides anything: the driver's operations do, the same functions the vramkit command
 * calls; this file only translates their options and results. */
#ifndef VRAMKIT_DRIVER_API_H
#define VRAMKIT_DRIVER_API_H

#include <stddef.h>
#include <stdint.h>

/* Raised whenever a function or struct below changes. */
#define VRAM_API_VERSION 4

int vram_api_version(void);
/* vram_status names and one-line texts ("VRAM_E_OOM", "out of device memory"). */
const char *vram_api_status_name(int status);
const char *vram_api_status_str(int status);

/* ---- the operations, JSON in and JSON out ------------------------------------------------
 * `options` is a JSON object: each key an option of the operation as the command spells it
 * ("assume-gpu", or "assume_gpu"), each value a string, a number, true (a flag; false and null
 * leave it out) or an array (the option given once per element). estimate takes its model as
 * "model", chunks its file as "file". Each runs the operation in this process (the typed driver
 * API: plan/estimating.h, plan/plan_run.h, stream/chunking.h, doctor/doctor_run.h) and returns
 * its exit code (0, 1 the answer is "no", 2 bad input, 3 the environment's), with *out the
 * operation's JSON document (what --json prints) or NULL, and *err NULL or text: the error
 * line "vramkit: OP: ..." or notes, one a line. Both are freed with vram_api_free. -1 (nothing
 * set) without memory. Any number of calls may run at once: no state is shared. */
int vram_api_estimate(const char *options, char **out, char **err);
int vram_api_plan(const char *options, char **out, char **err);
int vram_api_chunks(const char *options, char **out, char **err);
int vram_api_doctor(const char *options, char **out, char **err);
/* try: the chain's options (strategies, plan, model, assume_gpu), timeout and grace, with
 * "command": [PROGRAM, ARGS...] (placeholders {strategy}, {device}, {dtype}) and "env":
 * ["NAME=VALUE", ...] added to each attempt's environment. Each attempt is a child process
 * of this one (spawned, never forked): what an attempt leaves outside its process group is
 * not hunted down here (that takes a subreaper, which a process with other children cannot
 * be). Exit 0 an attempt succeeded, 1 none did. */
int vram_api_try(const char *options, char **out, char **err);
void vram_api_free(void *p);

/* ---- watch: rounds of samples, in this process ------------------------------------------- */

typedef struct vram_api_watch vram_api_watch;

/* Opens the GPUs (or the host, "host": true) as `vramkit watch` does, options as for the
 * operations above (interval, count is the caller's to keep, epoch_every, device, host,
 * processes, limit, leak_threshold). Returns the exit code (0 ok) with *w, and *err as above
 * (a note when NVML is not used, or the error line). */
int vram_api_watch_open(const char *options, vram_api_watch **w, char **err);
/* One round: every device sampled, its processes, the warnings raised, as JSON lines (the
 * objects of `vramkit watch --json`) in *out. Returns 0, or the exit code with *err. */
int vram_api_watch_round(vram_api_watch *w, char **out, char **err);
/* The interval the rounds are meant to be apart (ms). */
uint64_t vram_api_watch_interval_ms(const vram_api_watch *w);
void vram_api_watch_close(vram_api_watch *w);

/* A size as the command line takes it ("256MiB", "7.5GB", "4096"): 0 and *out, or
 * VRAM_E_INVALID (not a size) / VRAM_E_OVERFLOW. */
int vram_api_parse_size(const char *text, uint64_t *out);

/* The world and this process's rank as the launcher's variables give them (torchrun, Open MPI,
 * MPICH/PMI, Slurm; 1 and 0 without a launcher): 0, or a vram_status with err. */
int vram_api_world(uint32_t *world, uint32_t *rank, char *err, size_t cap);

/* The GPU of this process's local rank (the launcher's variables, vramkit/ranks.h: the local
 * rank modulo the GPUs; cuda:0 without a launcher): >= 0, or a vram_status with err. */
int vram_api_local_gpu(char *err, size_t cap);

/* ---- the streamer over an HDF5 file ------------------------------------------------------ */

typedef struct vram_api_stream vram_api_stream;

/* Zero means default in every field but size. */
typedef struct vram_api_stream_opts {
    uint64_t size;          /* sizeof(vram_api_stream_opts) */
    uint64_t batch;         /* samples per batch; 0: 128 (VRAM_STREAM_DEFAULT_BATCH, as the CLI) */
    uint64_t budget_bytes;  /* device bytes for the chunk buffers; 0: fraction of free on a
                               GPU; on the host (device -1, no fraction or reserve either)
                               vram_api_host_budget() */
    double fraction;        /* of the device's free memory; 0: 0.75 */
    uint64_t reserve_bytes; /* kept free before the fraction */
    uint64_t epochs;        /* 0: 1 */
    uint64_t first_epoch;   /* the first epoch's number (the shuffle's key), to resume */
    uint64_t seed;
    uint32_t world;         /* 0: 1 */
    uint32_t rank;
    uint32_t buffers;       /* 0: 2 */
    uint32_t readers;       /* 0: the CPUs, 2 to 8 */
    int32_t shuffle, drop_last, no_pad;
    int32_t device;         /* -1: host memory (the CPU); N: cuda:N; -2: the GPU of this
                               process's local rank (the launcher's; cuda:0 without one) */
    void *consumer;         /* CUDA: the consumer's stream (cudaStream_t; NULL: the legacy
                               default stream); ignored on the CPU */
    int32_t world_auto;     /* 1: world and rank from the launcher's variables (torchrun,
                               Open MPI, MPICH/PMI, Slurm; vramkit/ranks.h), when world is 0;
                               a rank given (rank_given) wins over the launcher's */
    int32_t rank_given;
} vram_api_stream_opts;

/* One batch. The data of dataset d are count rows of row_bytes(d) bytes at data[d], in host
 * memory (device -1) or device memory; valid until the batch is released. */
typedef struct vram_api_batch {
    uint64_t size;          /* sizeof(vram_api_batch), set by the caller */
    uint64_t count;         /* samples in the batch (0 when done) */
    uint64_t epoch;         /* first_epoch + epoch_index */
    uint64_t epoch_index;
    uint64_t index;         /* batch index within its epoch */
    int32_t epoch_begin, epoch_end, done, held;
    const uint64_t *samples; /* the sample index of each row (host memory) */
    void *data[16];
} vram_api_batch;

/* The host's default budget: an eighth of the memory available now, at least
 * VRAM_API_HOST_BUDGET_MIN and at most VRAM_API_HOST_BUDGET_MAX (the plan never takes more
 * than the data set needs), so that opening costs the same for any size of file. */
#define VRAM_API_HOST_BUDGET_MIN (UINT64_C(16) << 20)
#define VRAM_API_HOST_BUDGET_MAX (UINT64_C(256) << 20)
uint64_t vram_api_host_budget(void);

/* Opens datasets[0 .. n) of the HDF5 file at `path` and starts streaming. Returns 0 and *out,
 * or a vram_status with one line in err (the file, dataset or option, and what is wrong). */
int vram_api_stream_open(const char *path, const char *const *datasets, uint32_t n,
                         const vram_api_stream_opts *opts, vram_api_stream **out, char *err,
                         size_t cap);
/* The datasets as opened: how many, each one's row bytes, element type ("float32", "int64",
 * ..., see driver/hdf5/h5source.h), rank and dimensions (dim 0 is the samples). */
uint32_t vram_api_stream_datasets(const vram_api_stream *s);
uint64_t vram_api_stream_row_bytes(const vram_api_stream *s, uint32_t d);
const char *vram_api_stream_type(const vram_api_stream *s, uint32_t d);
int vram_api_stream_rank(const vram_api_stream *s, uint32_t d);
uint64_t vram_api_stream_dim(const vram_api_stream *s, uint32_t d, int k);
/* The plan: samples of this rank per epoch (less drop-last's) and batches per epoch. */
uint64_t vram_api_stream_rank_samples(const vram_api_stream *s);
uint64_t vram_api_stream_batches_per_epoch(const vram_api_stream *s);
/* -1 host memory, else the CUDA ordinal the data live on. */
int vram_api_stream_device(const vram_api_stream *s);
/* The sharding the stream follows: this rank, the world, and who said so ("torchrun",
 * "Open MPI", ..., as vram_launcher_name; "" when given or single). */
uint32_t vram_api_stream_rank_of(const vram_api_stream *s);
uint32_t vram_api_stream_world(const vram_api_stream *s);
const char *vram_api_stream_launcher(const vram_api_stream *s);

/* The next batch (the previous one must have been released: one is held at a time). Returns
 * 0 with *b filled (b->done at the end), or a vram_status with one line in err. */
int vram_api_stream_next(vram_api_stream *s, vram_api_batch *b, char *err, size_t cap);
/* Gives the held batch back (its memory is reused after the consumer's work queued so far).
 * 0, or a vram_status with err. Releasing with none held is VRAM_E_STATE. */
int vram_api_stream_release(vram_api_stream *s, char *err, size_t cap);
/* Skips the next n batches (each read and released, so that the stream is where it would
 * be had they been consumed: what a resume mid-epoch needs). *skipped (may be NULL) says how
 * many were (fewer at the end). 0 or a vram_status with err. */
int vram_api_stream_skip(vram_api_stream *s, uint64_t n, uint64_t *skipped, char *err, size_t cap);
/* The plan's budget (bytes of the chunk buffers). */
uint64_t vram_api_stream_budget(const vram_api_stream *s);
/* On a GPU, orders the held batch between the stream's consumer and another CUDA stream
 * (cudaStream_t): consumer_waits 0: work queued on `stream` from now on sees the batch
 * (DLPack's __dlpack__(stream=...)); 1: the consumer stream (and so the batch's release)
 * waits for the work queued on `stream` so far. Nothing on the host or for the consumer
 * itself. 0 or a vram_status with err. */
int vram_api_stream_order(vram_api_stream *s, void *stream, int consumer_waits, char *err, size_t cap);
/* Stops the stream and frees everything (NULL is fine) but the chunks still kept (below):
 * their memory goes with their keeps. 0 or the first teardown error. */
int vram_api_stream_close(vram_api_stream *s);

/* ---- taking batches: one call a batch -------------------------------------------------------
 * vram_api_stream_take gets the next batch and releases it in the same call, its rows either
 * copied out (VRAM_API_TAKE_COPY: to dst[d], count * row_bytes(d) bytes each; a dst of 0 is
 * skipped) or left in place in their chunk, which is then kept (VRAM_API_TAKE_KEEP: host
 * memory without shuffle only, else VRAM_E_NOT_SUPPORTED): the first batch taken of each
 * chunk comes with a keep, and that chunk's memory is not reused until
 * vram_api_keep_release(keep), which may be called from any thread, also after the stream was
 * closed (the chunk's memory then belongs to the keep). When the stream needs the buffer of a
 * chunk still kept, take answers VRAM_E_STATE with blocked set (may_detach 0), or (1) gives
 * the kept memory to its keep and allocates a new buffer in its place (detached counts them).
 * Fields are 64-bit: pointers as integers, so that the struct reads as one array. */
#define VRAM_API_TAKE_KEEP 1
#define VRAM_API_TAKE_COPY 2
typedef struct vram_api_keep vram_api_keep;
typedef struct vram_api_take {
    uint64_t size;        /* sizeof(vram_api_take), set by the caller */
    /* in */
    uint64_t mode;        /* VRAM_API_TAKE_KEEP or VRAM_API_TAKE_COPY */
    uint64_t may_detach;
    uint64_t samples_out; /* (uint64_t *) where the sample indices go (count of them), or 0 */
    uint64_t dst[16];     /* COPY: where dataset d's rows go */
    /* out (zeroed by each call) */
    uint64_t count, epoch, epoch_index, index, epoch_begin, epoch_end, done;
    uint64_t keep;        /* (vram_api_keep *) a keep of this batch's chunk (its first batch), or 0 */
    uint64_t slot;        /* KEEP: the batch's first row within its chunk's region */
    uint64_t blocked;     /* 1: VRAM_E_STATE because a kept chunk is in the way */
    uint64_t detached;    /* kept chunks detached so far by this stream */
    uint64_t data[16];    /* dataset d's rows: in the chunk (KEEP), dst[d] (COPY) */
    char err[512];        /* the error's one line (two arguments a call: a batch's cost) */
} vram_api_take;
int vram_api_stream_take(vram_api_stream *s, vram_api_take *t);
void vram_api_keep_release(vram_api_keep *k);
/* Rows of each dataset's region in a chunk (a kept batch's region starts slot rows before
 * its data). */
uint64_t vram_api_stream_chunk_rows(const vram_api_stream *s);

#endif /* VRAMKIT_DRIVER_API_H */
