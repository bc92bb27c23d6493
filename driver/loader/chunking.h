/* driver/loader/chunking.h — `chunks` as a function: how a dataset is cut into GPU-resident
 * chunks and batches (vramkit/chunks.h), from numbers or from the datasets of an HDF5 file
 * (sized as the streamer will), for this process's rank. Its JSON document is written here,
 * for the CLI and Python alike. Prints nothing. */
#ifndef VRAMKIT_DRIVER_CHUNKING_H
#define VRAMKIT_DRIVER_CHUNKING_H

#include <stddef.h>

#include <vramkit/chunks.h>
#include <vramkit/strategy.h>

#include "comm/ranks_env.h"
#include "hdf5/h5source.h"
#include "util/json.h"

/* The most entries the JSON document lists (chunks, batches and, shuffled, each position of
 * the order) before it is refused rather than written: about 130 MB of JSON. */
#define VRAM_CHUNKS_JSON_MAX_ITEMS UINT64_C(1000000)
/* The FILE form's batch without --batch: the streamer's default. */
#define VRAM_CHUNKS_FILE_BATCH 128u

typedef struct vram_chunking_opts {
    vram_chunks_config cfg;  /* zero means default (vramkit/chunks.h) */
    uint64_t epoch;
    int have_samples, have_bytes, have_batch, have_budget, have_free, have_fraction,
        have_reserve, have_gpu;
    vram_world_opts world;   /* --world, --rank */
    const char *file;        /* the FILE form */
    const char *names[VRAM_STREAM_MAX_DATASETS]; /* its --dataset paths */
    uint32_t n_names;
    vram_gpu_budget gpu;     /* --assume-gpu */
} vram_chunking_opts;

/* Applies option `name` ("samples", "sample-bytes", "batch", "budget", "free", "fraction",
 * "reserve", "buffers", "drop-last", "world", "rank", "pad", "no-pad", "shuffle", "seed",
 * "epoch", "dataset", "assume-gpu") with its value. VRAM_OK; VRAM_E_INVALID with err one line
 * naming the option; VRAM_E_UNHANDLED for another name. */
vram_status vram_chunking_set(vram_chunking_opts *o, const char *name, const char *arg,
                              char *err, size_t cap);

/* After the options (and FILE): the numbers or the file, one budget, the ranks resolved into
 * the config. `extra` is an argument after FILE (NULL when none). VRAM_OK or VRAM_E_INVALID
 * with err one line. */
vram_status vram_chunking_check(vram_chunking_opts *o, const char *extra, vram_ranks *ranks,
                                char *err, size_t cap);

typedef struct vram_chunking_report {
    vram_chunks_plan plan;
    vram_ranks ranks;
    uint64_t epoch;
    int have_free;                /* the budget is a fraction of free memory */
    vram_h5_file *h5;             /* the FILE form's datasets (owned) */
    uint64_t extra_device_bytes;  /* the FILE form: the gather buffers of a shuffle on a GPU */
    vram_perm visit;              /* this epoch's chunk visiting order (vramkit/perm.h): no
                                     order is ever materialised, each position costs O(1) */
} vram_chunking_report;

/* Plans. VRAM_OK with *r (free with vram_chunking_free); VRAM_E_NOSPACE with err one line
 * ("does not fit: one batch per buffer needs ...", the answer "no"); else a status with err
 * one line naming the input (VRAM_E_INVALID: numbers that overflow or leave nothing; the
 * file's errors; VRAM_E_NOMEM). */
vram_status vram_chunking_run(const vram_chunking_opts *o, const vram_ranks *ranks,
                              vram_chunking_report *r, char *err, size_t cap);
void vram_chunking_free(vram_chunking_report *r);

/* The chunk visited k-th (its storage index). */
uint64_t vram_chunking_visit(const vram_chunking_report *r, uint64_t k);

/* Whether the plan's JSON stays within VRAM_CHUNKS_JSON_MAX_ITEMS. VRAM_OK, or VRAM_E_RANGE
 * with err one line giving the counts and what to change. */
vram_status vram_chunking_json_check(const vram_chunking_report *r, char *err, size_t cap);

/* The whole plan as one JSON object. VRAM_OK; VRAM_E_RANGE (nothing written) for a plan over
 * vram_chunking_json_check's bound; VRAM_E_STATE for a plan the core calls inconsistent
 * (nothing useful written). */
vram_status vram_chunking_json(vram_json *j, const vram_chunking_report *r);

#endif /* VRAMKIT_DRIVER_CHUNKING_H */
