/* driver/plan/plan_doc.h — the plan document: a plan (planner.h) as JSON and back, the one
 * place that knows the schema. Written by `vramkit plan --json/--save`, read by `plan --load`
 * (the inputs, to plan again, and what was decided, to say what changed) and by `try --plan`
 * (the strategies to try). Prints nothing: failures come back as a status and one line. */
#ifndef VRAMKIT_DRIVER_PLAN_DOC_H
#define VRAMKIT_DRIVER_PLAN_DOC_H

#include <stddef.h>

#include "planner.h"
#include "util/json.h"

/* Longest plan file read (plans are a few KiB; a service of 64 components some 100 KiB). */
#define VRAM_PLAN_FILE_MAX ((size_t)1 << 24)

/* Strategies of one plan, as `try` runs them. */
#define VRAM_PLAN_MAX_ROWS 64
typedef struct vram_plan_row {
    char name[VRAM_PLAN_NAME_MAX + 1]; /* 1 to 64 bytes, no blank or control byte */
    int fits;
    int device;          /* a fitting strategy's device: a GPU index or VRAM_PLAN_CPU, or
                            VRAM_PLAN_NONE when it spans several (and for one that does not
                            fit) */
    vram_dtype format;   /* VRAM_DTYPE_NONE when the document names none it knows */
    char why[512];       /* why it does not fit ("" when the document says nothing) */
} vram_plan_row;

typedef struct vram_plan_rows {
    int n;
    vram_plan_row row[VRAM_PLAN_MAX_ROWS];
} vram_plan_rows;

/* The document of a made plan as the members of the open JSON object (version, inputs,
 * strategies, chosen, placement, gpu_use, notes), with the changes since the saved plan when
 * the plan was loaded (changes[0 .. n)): a caller may add members of its own after them. */
void vram_plan_doc_members(vram_json *j, const vram_plan *p, const vram_change *changes, size_t n);

/* The same document alone, as one line of JSON with a newline, in a string the caller frees
 * (what --save writes). NULL without memory. */
char *vram_plan_doc_json(const vram_plan *p, const vram_change *changes, size_t n);

/* A change in words: "chosen: bf16 -> int8", "embed: gpu0 -> cpu (not placed)". Returns buf. */
const char *vram_plan_change_text(const vram_plan *p, const vram_change *c, char *buf,
                                  size_t cap);

/* Writes text to path atomically (util/file.h: a fresh O_EXCL|O_NOFOLLOW temporary beside it,
 * synced, then a rename). VRAM_OK, or with err
 * one line naming --save and the path: VRAM_E_INVALID for a path too long, VRAM_E_IO. */
vram_status vram_plan_doc_save(const char *path, const char *text, char *err, size_t cap);

/* Reads a saved plan's inputs into p, to make it again: its model or components, workload,
 * GPUs (unless p->gpus_given), host memory and margin (unless given), and what it decided
 * (p->saved). `what` names the document in errors ("--load plan.json"). VRAM_OK, or with err
 * one line: VRAM_E_INVALID for a file that is missing, too large, not JSON or not a plan,
 * VRAM_E_IO when it cannot be read. */
vram_status vram_plan_doc_load(const char *path, const char *what, vram_plan *p, char *err,
                               size_t cap);

/* Reads the strategy chain of a saved --model plan, in its order. Errors as for
 * vram_plan_doc_load, and VRAM_E_INVALID for a plan of components (it has no chain), a
 * strategy without a valid name or "fits", a fitting one without devices or with a device
 * that is not cpu or gpu0..gpu15, more than VRAM_PLAN_MAX_ROWS strategies. */
vram_status vram_plan_doc_strategies(const char *path, const char *what, vram_plan_rows *rows,
                                     char *err, size_t cap);

/* The same rows from a plan made here. */
void vram_plan_rows_from_chain(const vram_plan *p, vram_plan_rows *rows);

/* A JSON file of at most VRAM_PLAN_FILE_MAX bytes (a saved plan, a model's config.json),
 * parsed into *doc (the caller deletes it). VRAM_E_INVALID naming `what` for a missing file, one too large or not
 * JSON; VRAM_E_IO when it cannot be read. */
struct cJSON;
vram_status vram_plan_read_json(const char *path, const char *what, struct cJSON **doc,
                                char *err, size_t cap);

#endif /* VRAMKIT_DRIVER_PLAN_DOC_H */
