/* driver/plan/accel.h — a plan's split as accelerate carries it out: the model's modules in
 * the order accelerate's infer_auto_device_map walks them (embeddings, the blocks of each
 * stack, the final norms, the head), each with its device and its weight bytes, and the
 * max_memory under which accelerate's own walk lands every module where this map puts it.
 * Module names come from the safetensors tensor names where the model has them, else from the
 * transformers class the config's model_type builds (a table here: which names, which block
 * class is never split). What `plan --emit accelerate` writes (emit.c). */
#ifndef VRAMKIT_DRIVER_PLAN_ACCEL_H
#define VRAMKIT_DRIVER_PLAN_ACCEL_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/emit.h>

#include "planner.h"

/* What a module is, for its place in accelerate's order and its size. */
typedef enum vram_acc_kind {
    VRAM_ACC_EMBED = 0, /* a token embedding (the first one holds vocab x hidden) */
    VRAM_ACC_POS,       /* a learned position embedding */
    VRAM_ACC_TIED,      /* shares the first embedding's weight (no bytes; placed with it) */
    VRAM_ACC_BLOCK,     /* one block of a stack (a class accelerate never splits) */
    VRAM_ACC_NORM,      /* a final norm, or another small module after the blocks */
    VRAM_ACC_HEAD       /* the vocabulary head */
} vram_acc_kind;

typedef struct vram_acc_module {
    char *name;
    vram_acc_kind kind;
    int group;      /* 0 before every stack, 1 an encoder's, 2 a decoder's (or the only)
                       stack, 3 after every stack: the order accelerate walks */
    uint64_t block; /* a block's index over all stacks, in running order */
    uint64_t bytes; /* its weights at the plan's dtype, as accelerate counts them */
    int device;     /* a GPU index or VRAM_PLAN_CPU */
} vram_acc_module;

/* A plan's split in accelerate's terms. */
typedef struct vram_acc_map {
    vram_acc_module *mod; /* accelerate's order */
    size_t n;
    char no_split[2][64];      /* the block classes (""), from the model type's row */
    char model_type[64];       /* config.json's model_type, or the built-in's ("" unknown) */
    int names_from;            /* 1 the safetensors tensor names, 2 the model type's row */
    vram_emit_memory mem;      /* max_memory */
    vram_emit_memory weights;  /* the weight bytes this map puts on each device */
    uint64_t moved;            /* bytes after the last block that accelerate keeps on the last
                                  block's device, where the plan counted them on its base */
    int moved_to;              /* that device; VRAM_PLAN_NONE when none moved */
    int exact;                 /* 1 when every device's max_memory lies strictly inside the
                                  range that reproduces the map; 0: a device's range is empty */
} vram_acc_map;

/* The map of fitting candidate c of single-model plan p. VRAM_OK with *out (free with
 * vram_acc_map_free); VRAM_E_UNHANDLED (err says why) when neither tensor names nor a known
 * model type name the modules; VRAM_E_INVALID when the names hold other blocks than the plan
 * (err says so); VRAM_E_NOMEM, VRAM_E_IO, VRAM_E_FORMAT from reading the names. */
vram_status vram_acc_map_make(const vram_plan *p, const vram_candidate *c, vram_acc_map *out,
                              char *err, size_t cap);
void vram_acc_map_free(vram_acc_map *m);

/* The device of block b under accelerate's order of devices: gpu_cpu the first
 * gpu_blocks[base] on the base GPU, the rest on the host; multi_gpu the GPUs' blocks by
 * ascending GPU index (accelerate fills GPUs in that order); one-GPU kinds their GPU; cpu
 * the host. VRAM_E_INVALID for b out of range or counts that do not add up. */
vram_status vram_acc_block_device(const vram_candidate *c, uint64_t b, int *device);

#endif /* VRAMKIT_DRIVER_PLAN_ACCEL_H */
