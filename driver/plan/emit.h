/* driver/plan/emit.h — a made plan (planner.h) as the settings of the tools that load the
 * model: accelerate's from_pretrained arguments (JSON), llama.cpp's and vLLM's flags, and the
 * environment (shell exports). The numbers come from the core (vramkit/emit.h); this file
 * writes them as each tool spells them, into a caller's FILE*. Prints nothing else: failures
 * come back as a status and one line. What `vramkit plan --emit` runs. */
#ifndef VRAMKIT_DRIVER_PLAN_EMIT_H
#define VRAMKIT_DRIVER_PLAN_EMIT_H

#include <stddef.h>
#include <stdio.h>

#include <vramkit/emit.h>

#include "planner.h"
#include "util/json.h"

/* The formats, X(id, name): the name is what --emit takes. */
#define VRAM_EMIT_FORMAT_LIST(X)              \
    X(VRAM_EMIT_ACCELERATE, "accelerate")     \
    X(VRAM_EMIT_LLAMACPP, "llama.cpp")        \
    X(VRAM_EMIT_VLLM, "vllm")                 \
    X(VRAM_EMIT_ENV, "env")

typedef enum vram_emit_format {
#define VRAM__EMIT_ENUM(id, name) id,
    VRAM_EMIT_FORMAT_LIST(VRAM__EMIT_ENUM)
#undef VRAM__EMIT_ENUM
    VRAM_EMIT_FORMATS
} vram_emit_format;

/* "accelerate, llama.cpp, vllm, env": for messages and help. */
extern const char vram_emit_format_names[];

/* A format's name; "unknown" out of range. */
const char *vram_emit_format_name(vram_emit_format f);
/* A format from its name (exact). VRAM_OK, or VRAM_E_INVALID with *out untouched. */
vram_status vram_emit_format_parse(const char *text, vram_emit_format *out);

/* The strategy to emit for: the one named (a candidate's name, bf16/fp16/int8/..., or its
 * kind's, 16bit) or the chosen one. VRAM_OK with *out; VRAM_E_INVALID with err one line for a
 * plan of components given a strategy, a name that is not in the chain, a strategy that does
 * not fit (its reason) or a plan where none fits. A component plan without a strategy is
 * VRAM_OK with *out NULL. */
vram_status vram_emit_pick(const vram_plan *p, const char *strategy, const vram_candidate **out,
                           char *err, size_t cap);

/* What the env format needs from this machine: each GPU's VMM probe, and why none ran; the
 * CUDA_VISIBLE_DEVICES this process ran under, when the plan read this machine's GPUs (its
 * GPU n is then the list's entry n, which is what a new CUDA_VISIBLE_DEVICES must name). */
typedef struct vram_emit_machine {
    vram_diag_probe vmm[VRAM_PLAN_MAX_GPUS];
    char no_probe[160]; /* why no probe ran ("" when they ran) */
    int visible_set;    /* CUDA_VISIBLE_DEVICES was set (GPUs read here only) */
    char visible[512];  /* its value */
} vram_emit_machine;

/* The GPUs an emission for c (NULL: the placed components of p) uses. */
uint32_t vram_emit_gpus(const vram_plan *p, const vram_candidate *c);

/* Writes format f of plan p for candidate c (from vram_emit_pick; NULL for components) to
 * out; mach is needed by env only (NULL elsewhere). Limitations the format states in its
 * own text (accelerate: "notes", env: comments); llama.cpp and vLLM are flags on one line,
 * so theirs come back in notes (lines ending in '\n'; "" for none). VRAM_OK, or VRAM_E_INVALID
 * with err one line naming the format when it cannot express the plan (a component plan
 * outside env, llama.cpp for an encoder-decoder, vLLM for an int8/split/CPU strategy, a
 * device_map whose tensor names do not match the plan's blocks, ...). On error nothing
 * useful is in out: write to a buffer (open_memstream) and print it only on VRAM_OK.
 * The VMM probes are the caller's to run (the plan operation, plan_run.h): this file writes. */
vram_status vram_emit_write(FILE *out, vram_emit_format f, const vram_plan *p,
                            const vram_candidate *c, const vram_emit_machine *mach, char *notes,
                            size_t ncap, char *err, size_t cap);

/* The same as the value of the current key of a JSON document: accelerate's object, the
 * other formats' text as a string. The same errors. */
vram_status vram_emit_json(vram_json *j, vram_emit_format f, const vram_plan *p,
                           const vram_candidate *c, const vram_emit_machine *mach, char *notes,
                           size_t ncap, char *err, size_t cap);

#endif /* VRAMKIT_DRIVER_PLAN_EMIT_H */
