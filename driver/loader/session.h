/* driver/loader/session.h — `stream` as a function: the datasets of an HDF5 file streamed
 * into device memory (stream.h over hdf5/h5source.h, on the device backend.h opens), batch
 * after batch, with the statistics and their JSON report. What `vramkit stream` loops over
 * and the Python streamer hands out. Prints nothing. */
#ifndef VRAMKIT_DRIVER_STREAM_SESSION_H
#define VRAMKIT_DRIVER_STREAM_SESSION_H

#include <stddef.h>

#include "stream/backend.h"
#include "comm/ranks_env.h"
#include "hdf5/h5source.h"
#include "stream/stream.h"
#include "util/json.h"

/* Samples per batch without --batch. */
#define VRAM_STREAM_DEFAULT_BATCH 128u

/* Zero means default in every field; file and at least one dataset are required. */
typedef struct vram_stream_opts {
    const char *file;
    const char *names[VRAM_STREAM_MAX_DATASETS];
    uint32_t n_names;
    vram_stream_config cfg;  /* cfg.plan.batch 0: VRAM_STREAM_DEFAULT_BATCH; epochs 0: 1 */
    int have_budget, have_fraction, have_reserve, have_seed;
    vram_stream_device device;
    int ordinal;             /* cuda:N */
    vram_world_opts world;   /* --world, --rank */
    vram_stream consumer;    /* the consumer's CUDA stream; NULL: one is made */
} vram_stream_opts;

/* Applies option `name` ("dataset", "batch", "epochs", "first-epoch", "shuffle", "seed",
 * "drop-last", "world", "rank", "no-pad", "budget", "fraction", "reserve", "buffers",
 * "device", "readers", "slab") with its value. VRAM_OK; VRAM_E_INVALID with err one line
 * naming the option; VRAM_E_UNHANDLED for another name. */
vram_status vram_stream_set(vram_stream_opts *o, const char *name, const char *arg, char *err,
                            size_t cap);

/* After the options: a dataset, --budget alone or --fraction/--reserve, --seed only with
 * --shuffle; the ranks resolved (*ranks) into the config. VRAM_OK or VRAM_E_INVALID. */
vram_status vram_stream_check(vram_stream_opts *o, vram_ranks *ranks, char *err, size_t cap);

typedef struct vram_stream_session {
    vram_h5_file *f;
    vram_stream_backend be;
    vram_streamer *s;
    vram_ranks ranks;
    double started;       /* when the streamer began to open (CLOCK_MONOTONIC seconds) */
    double setup_seconds; /* opening the streamer */
} vram_stream_session;

/* Opens the file, the device and the streamer. VRAM_OK with *out (close it); else a status
 * and err one line naming the input: the file's errors (hdf5/h5source.h), the device's
 * (backend.h), VRAM_E_NO_DEVICE when free memory cannot be read (give a budget),
 * VRAM_E_INVALID (a reserve above free memory, bad settings), VRAM_E_NOSPACE ("does not
 * fit: ...", the answer "no"). */
vram_status vram_stream_session_open(const vram_stream_opts *o, const vram_ranks *ranks,
                                     vram_stream_session **out, char *err, size_t cap);
/* Stops the stream and frees everything (NULL is fine). VRAM_OK or the first teardown error. */
vram_status vram_stream_session_close(vram_stream_session *s);

/* The statistics of a finished stream. */
typedef struct vram_stream_report {
    vram_stream_stats total;
    vram_stream_stats *epochs; /* one per epoch (owned) */
    uint64_t nepochs;
    double setup, seconds;     /* opening; from the start to the last batch */
    uint32_t readers;
    const char *staging;
    int verified;              /* --verify ran and found the stream right */
    uint64_t samples_checked, epochs_checked;
} vram_stream_report;

/* Fills *r from the streamer (seconds is the caller's). VRAM_OK or VRAM_E_NOMEM. */
vram_status vram_stream_report_make(const vram_stream_session *s, double seconds,
                                    vram_stream_report *r);
void vram_stream_report_free(vram_stream_report *r);

/* GB/s of bytes over seconds (0 for no time), and the readers' rate. */
double vram_stream_rate(uint64_t bytes, double seconds);
double vram_stream_read_rate(const vram_stream_report *r);

/* The report as one JSON object: file, datasets, device, backend, staging, readers, plan,
 * epochs, total, setup_seconds, seconds, gbps, verify. */
void vram_stream_report_json(vram_json *j, const vram_stream_session *s,
                             const vram_stream_report *r);

#endif /* VRAMKIT_DRIVER_STREAM_SESSION_H */
