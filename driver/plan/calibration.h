/* driver/plan/calibration.h — the calibration file: what try and run measured (isolate/peak.h)
 * for a plan's strategy, one JSON line per attempt, and `plan --calibration` planning with it.
 * A record is keyed by the model as the plan names it, the strategy and the workload's key (the
 * workload fields that change memory); plan compares each candidate's estimate with the
 * largest measured peak of its key and plans with the larger of the two. Prints nothing. */
#ifndef VRAMKIT_DRIVER_PLAN_CALIBRATION_H
#define VRAMKIT_DRIVER_PLAN_CALIBRATION_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/estimate.h>
#include <vramkit/strategy.h>

#include "isolate/chain.h"
#include "isolate/peak.h"
#include "util/json.h"

#define VRAM_CALIB_VERSION 1
#define VRAM_CALIB_FILE "vramkit/calibration.jsonl" /* under $XDG_CACHE_HOME, else ~/.cache */
#define VRAM_CALIB_NONE "none"                       /* --calibration none: no file */
#define VRAM_CALIB_LINE_MAX (64u * 1024u)            /* a longer line is a bad line */

struct vram_plan;

/* The file try and run write: `arg` (--calibration; NULL: the default under the cache
 * directory, "none": none). VRAM_OK with path (empty: none) and *is_default; VRAM_E_INVALID
 * with err one line when the path is too long, or names something that is not a regular file;
 * and when the default has no home ($XDG_CACHE_HOME and $HOME unset). */
vram_status vram_calib_path(const char *arg, char *path, size_t cap, int *is_default, char *err,
                            size_t ecap);

/* The workload's key: its fields that change memory (not the weights' format, which is the
 * strategy's): "mode=infer batch=1 seq=1024 ...". Batch, lengths, image tokens and logits as
 * e (an estimate of the model with w) resolved them, so that a default and the value it
 * resolves to are one key; the compute format as given ("default": it resolves per strategy).
 * e NULL: every default written as such ("seq=default"). */
void vram_calib_workload_key(const vram_workload *w, const vram_estimate *e, char *buf,
                             size_t cap);

/* What try and run need to write records for a chain from a plan: the model and the workload's
 * key into c (calib_model, calib_workload), each row's expected bytes on its one GPU into
 * expected[row] (0: not one GPU). From a plan made now (rows follow p->chain one to one), or
 * from a saved plan's file (what it says; nothing when it cannot be read). */
void vram_calib_chain_from_plan(vram_try_chain *c, const struct vram_plan *p, uint64_t *expected);
void vram_calib_chain_from_doc(vram_try_chain *c, const char *path, uint64_t *expected, int nrows);

/* Appends the record of strategy k's attempt (command "try" or "run") to path: one line, one
 * write with O_APPEND (whole lines from concurrent writers), creating the file (0644) and, for
 * the default path, its directory. Nothing for a chain not from a plan. VRAM_OK; VRAM_E_IO /
 * VRAM_E_INVALID with err one line naming the file. */
vram_status vram_calib_append(const char *path, int is_default, const char *command,
                              const vram_try_chain *c, int k, const char *outcome,
                              const vram_peak *m, char *err, size_t cap);

/* One candidate's calibration in a plan. */
typedef struct vram_calib_cand {
    int records;             /* matching records with a measured peak (0: no calibration) */
    uint64_t expected;       /* the estimate on its GPU (before calibration) */
    uint64_t measured;       /* the largest measured peak of those records */
    uint64_t nvml, reported; /* that record's NVML and reported peaks (0: none) */
    int applied;             /* planned with max(expected, measured) (one-GPU candidates) */
    int fits_before;         /* its verdict on the estimate alone */
} vram_calib_cand;

typedef struct vram_calib_plan {
    int used;                 /* a file was read */
    char path[4096];
    int lines, bad;           /* lines read, lines skipped as bad */
    vram_calib_cand cand[VRAM_STRATEGY_COUNT];
} vram_calib_plan;

/* Reads path and plans the --model plan p again with what it measured: a one-GPU candidate
 * (16bit, int8, int4) with records of its model, name and workload key is planned with
 * max(expected, measured) on its GPU, against the same budget (its verdict may change, and so
 * the chosen one); other candidates show the figures only. Bad lines are counted, never fatal.
 * VRAM_OK with *out; VRAM_E_INVALID (not a regular file, "none" is not read) or VRAM_E_IO with
 * err one line naming --calibration and the path. */
vram_status vram_calib_plan_apply(struct vram_plan *p, const char *path, vram_calib_plan *out,
                                  char *err, size_t cap);

/* The plan's "calibration" member: {file, lines, bad_lines, strategies: [{name, records,
 * expected_bytes, measured_bytes, nvml_peak_bytes, reported_peak_bytes, applied, fits_before,
 * fits}]} (candidates with records only). */
void vram_calib_plan_json(vram_json *j, const struct vram_plan *p, const vram_calib_plan *c);

#endif /* VRAMKIT_DRIVER_PLAN_CALIBRATION_H */
