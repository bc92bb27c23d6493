/* vramkit/ranks.h — this process's rank, the world size and the local rank, from the variables
 * a launcher sets (torchrun, Open MPI, MPICH/PMI, Slurm), and the GPU a rank uses.
 * Pure: the caller passes a lookup of variable values (getenv in the driver, a table in tests);
 * the core never reads the environment itself. */
#ifndef VRAMKIT_RANKS_H
#define VRAMKIT_RANKS_H

#include "base.h"

/* Launchers in order of precedence: when several are present the first wins, because the
 * later ones are also set around the earlier (torchrun or mpirun inside a Slurm allocation
 * leave Slurm's variables in place, and they describe Slurm's tasks, not these processes). */
#define VRAM_LAUNCHER_LIST(X)                                                                  \
    X(VRAM_LAUNCHER_TORCHRUN, 1, "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK")               \
    X(VRAM_LAUNCHER_OPENMPI, 2, "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",     \
      "OMPI_COMM_WORLD_LOCAL_RANK")                                                            \
    X(VRAM_LAUNCHER_PMI, 3, "MPICH/PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID")             \
    X(VRAM_LAUNCHER_SLURM, 4, "Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")

typedef enum vram_launcher {
    VRAM_LAUNCHER_NONE = 0, /* no launcher variable set: one process */
#define VRAM__LAUNCHER_ENUM(id, value, name, rank, size, local) id = value,
    VRAM_LAUNCHER_LIST(VRAM__LAUNCHER_ENUM)
#undef VRAM__LAUNCHER_ENUM
    VRAM_LAUNCHER_FLAGS = 5 /* the command line (--world W --rank R) */
} vram_launcher;

#define VRAM_LAUNCHER_COUNT 4
/* The largest world (and so rank + 1) accepted: ranks are int in MPI and NCCL. */
#define VRAM_RANKS_MAX_WORLD 2147483647u

/* The value of a variable, or NULL when it is not set; the text must stay valid while the
 * resolution runs (getenv's does, unless the environment is changed meanwhile). */
typedef const char *(*vram_ranks_lookup)(void *ctx, const char *name);

/* Why a resolution failed, beside its status. */
typedef enum vram_ranks_fault {
    VRAM_RANKS_FAULT_NONE = 0,
    VRAM_RANKS_FAULT_MISSING = 1,   /* var_a is set, var_b (same launcher) is not: VRAM_E_INVALID */
    VRAM_RANKS_FAULT_NUMBER = 2,    /* var_a is not a whole number in range: VRAM_E_FORMAT */
    VRAM_RANKS_FAULT_NOT_BELOW = 3, /* var_a's value is not below var_b's: VRAM_E_RANGE */
    VRAM_RANKS_FAULT_FLAG_RANK = 4  /* the --rank flag is not below the launcher's var_b */
} vram_ranks_fault;

/* Where this process stands among the ranks. */
typedef struct vram_ranks {
    vram_launcher launcher; /* who said so (NONE: one process, rank 0 of 1) */
    uint32_t rank;          /* 0 <= rank < world */
    uint32_t world;         /* >= 1 */
    int64_t local_rank;     /* rank on this node, < world; -1 when the launcher does not say */
    uint32_t outranked;     /* bit (1 << launcher) of each launcher present but outranked */
    /* on an error: what is wrong, and the variables involved (static names, or NULL) */
    vram_ranks_fault fault;
    const char *var_a, *var_b;
} vram_ranks;

/* ---- functions, in the order a caller uses them --------------------------------------- */

VRAM_DEF const char *vram_launcher_name(vram_launcher l);
VRAM_DEF VRAM_NODISCARD vram_status vram_launcher_vars(vram_launcher l, const char **rank,
                                                       const char **size, const char **local);
VRAM_DEF VRAM_NODISCARD vram_status vram__ranks_number(const char *text, uint32_t max, uint32_t *out);
VRAM_DEF VRAM_NODISCARD vram_status vram_ranks_from_vars(vram_ranks_lookup get, void *ctx, vram_ranks *out);
VRAM_DEF VRAM_NODISCARD vram_status vram_ranks_with_rank(vram_ranks *r, uint32_t rank);
VRAM_DEF VRAM_NODISCARD vram_status vram_ranks_gpu(const vram_ranks *r, int device_count, int *gpu);

/* The launcher's name as users know it ("torchrun", "Slurm"; "none", "flags"). */
VRAM_DEF const char *vram_launcher_name(vram_launcher l) {
    switch (l) {
    case VRAM_LAUNCHER_NONE: return "none";
    case VRAM_LAUNCHER_FLAGS: return "flags";
#define VRAM__LAUNCHER_NAME(id, value, name, rank, size, local) \
    case id:                                                    \
        return name;
        VRAM_LAUNCHER_LIST(VRAM__LAUNCHER_NAME)
#undef VRAM__LAUNCHER_NAME
    }
    return "unknown";
}

/* The three variables of a launcher (rank, size, local rank). Requires: valid out pointers.
 * Guarantees: VRAM_OK with three static names for a launcher of the list, else
 * VRAM_E_INVALID with the outputs untouched. */
VRAM_DEF VRAM_NODISCARD vram_status vram_launcher_vars(vram_launcher l, const char **rank,
                                                       const char **size, const char **local) {
    switch (l) {
#define VRAM__LAUNCHER_VARS(id, value, name, r, s, lo) \
    case id:                                           \
        *rank = r;                                     \
        *size = s;                                     \
        *local = lo;                                   \
        return VRAM_OK;
        VRAM_LAUNCHER_LIST(VRAM__LAUNCHER_VARS)
#undef VRAM__LAUNCHER_VARS
    default: break;
    }
    return VRAM_E_INVALID;
}

/* A variable's value as a whole number in [0, max]: decimal digits only (no sign, no space,
 * no suffix, at most 10 digits), as every launcher writes them. Requires: text a string.
 * Guarantees: VRAM_OK with *out <= max, else VRAM_E_FORMAT and *out untouched; a digit more
 * never passes the bound (the value is checked before it is extended). */
/*@ requires valid_string: \valid_read(text + (0 .. 10));
    requires \valid(out);
    assigns *out;
    ensures \result == VRAM_OK ==> *out <= max;
    ensures \result == VRAM_OK || \result == VRAM_E_FORMAT; */
VRAM_DEF VRAM_NODISCARD vram_status vram__ranks_number(const char *text, uint32_t max, uint32_t *out) {
    uint64_t v = 0;
    int i = 0;
    if (text[0] == '\0') return VRAM_E_FORMAT;
    /*@ loop invariant 0 <= i <= 10;
        loop invariant v <= max;
        loop assigns i, v;
        loop variant 10 - i; */
    while (text[i] != '\0') {
        char c = text[i];
        if (i == 10 || c < '0' || c > '9') return VRAM_E_FORMAT; /* 11 digits: too many */
        v = v * 10u + (uint64_t)(c - '0');
        if (v > max) return VRAM_E_FORMAT;
        i++;
    }
    *out = (uint32_t)v;
    return VRAM_OK;
}

/* Where this process stands, from the launcher variables `get` returns. Requires: get a
 * function, out valid. Guarantees: VRAM_OK with, for the first launcher of the list whose rank,
 * size or local rank variable is set: world = its size (>= 1), rank < world, local_rank < world
 * or -1 when its local variable is unset; with no launcher variable set: launcher NONE, rank 0
 * of 1, local_rank -1. Errors name the variables (out->fault, var_a, var_b): a launcher with a
 * variable set but its rank or size unset (VRAM_E_INVALID), a value that is not a whole number
 * within VRAM_RANKS_MAX_WORLD (VRAM_E_FORMAT; a size of 0 too), a rank or a local rank not
 * below the size (VRAM_E_RANGE). Later launchers present are only noted in out->outranked. */
VRAM_DEF VRAM_NODISCARD vram_status vram_ranks_from_vars(vram_ranks_lookup get, void *ctx, vram_ranks *out) {
    static const vram_launcher order[VRAM_LAUNCHER_COUNT] = {
        VRAM_LAUNCHER_TORCHRUN, VRAM_LAUNCHER_OPENMPI, VRAM_LAUNCHER_PMI, VRAM_LAUNCHER_SLURM};
    vram_ranks r;
    int i;
    if (get == NULL || out == NULL) return VRAM_E_INVALID;
    r.launcher = VRAM_LAUNCHER_NONE;
    r.rank = 0;
    r.world = 1;
    r.local_rank = -1;
    r.outranked = 0;
    r.fault = VRAM_RANKS_FAULT_NONE;
    r.var_a = NULL;
    r.var_b = NULL;
    for (i = 0; i < VRAM_LAUNCHER_COUNT; i++) {
        const char *nr = NULL, *ns = NULL, *nl = NULL, *vr, *vs, *vl, *bad = NULL;
        uint32_t rank = 0, world = 0, local = 0;
        if (vram_launcher_vars(order[i], &nr, &ns, &nl) != VRAM_OK) return VRAM_E_INVALID;
        vr = get(ctx, nr);
        vs = get(ctx, ns);
        vl = get(ctx, nl);
        if (vr == NULL && vs == NULL && vl == NULL) continue;
        if (r.launcher != VRAM_LAUNCHER_NONE) { /* present, outranked: its values do not matter */
            r.outranked |= 1u << (unsigned)order[i];
            continue;
        }
        r.launcher = order[i];
        if (vr == NULL || vs == NULL) {
            r.fault = VRAM_RANKS_FAULT_MISSING;
            r.var_a = vr != NULL ? nr : vs != NULL ? ns : nl;
            r.var_b = vr == NULL ? nr : ns;
            *out = r;
            return VRAM_E_INVALID;
        }
        if (vram__ranks_number(vr, VRAM_RANKS_MAX_WORLD - 1u, &rank) != VRAM_OK)
            bad = nr;
        else if (vram__ranks_number(vs, VRAM_RANKS_MAX_WORLD, &world) != VRAM_OK || world == 0)
            bad = ns;
        else if (vl != NULL && vram__ranks_number(vl, VRAM_RANKS_MAX_WORLD - 1u, &local) != VRAM_OK)
            bad = nl;
        if (bad != NULL) {
            r.fault = VRAM_RANKS_FAULT_NUMBER;
            r.var_a = bad;
            *out = r;
            return VRAM_E_FORMAT;
        }
        if (rank >= world || (vl != NULL && local >= world)) {
            r.fault = VRAM_RANKS_FAULT_NOT_BELOW;
            r.var_a = rank >= world ? nr : nl;
            r.var_b = ns;
            *out = r;
            return VRAM_E_RANGE;
        }
        r.rank = rank;
        r.world = world;
        r.local_rank = vl != NULL ? (int64_t)local : -1;
    }
    *out = r;
    return VRAM_OK;
}

/* An explicit rank (--rank R) over a world the launcher gave. Requires: r from
 * vram_ranks_from_vars. Guarantees: VRAM_OK with r->rank = rank when rank < r->world (the
 * local rank is kept); else VRAM_E_RANGE, r->fault FLAG_RANK and r->var_b the launcher's size
 * variable (NULL for NONE), the rank untouched. */
VRAM_DEF VRAM_NODISCARD vram_status vram_ranks_with_rank(vram_ranks *r, uint32_t rank) {
    const char *nr = NULL, *ns = NULL, *nl = NULL;
    if (r == NULL) return VRAM_E_INVALID;
    if (rank < r->world) {
        r->rank = rank;
        return VRAM_OK;
    }
    r->fault = VRAM_RANKS_FAULT_FLAG_RANK;
    r->var_a = NULL;
    r->var_b = vram_launcher_vars(r->launcher, &nr, &ns, &nl) == VRAM_OK ? ns : NULL;
    return VRAM_E_RANGE;
}

/* The GPU this rank uses among device_count: local_rank mod device_count (one process per
 * GPU on each node, as torchrun and `srun --gpus-per-task` lay them out), or rank mod
 * device_count when the launcher gives no local rank. Requires: r valid, gpu valid.
 * Guarantees: VRAM_OK with 0 <= *gpu < device_count; VRAM_E_NO_DEVICE when device_count < 1,
 * *gpu untouched. */
/*@ requires \valid_read(r) && \valid(gpu);
    requires r->local_rank >= -1;
    assigns *gpu;
    ensures \result == VRAM_OK ==> 0 <= *gpu < device_count;
    ensures device_count < 1 ==> \result == VRAM_E_NO_DEVICE; */
VRAM_DEF VRAM_NODISCARD vram_status vram_ranks_gpu(const vram_ranks *r, int device_count, int *gpu) {
    uint64_t who;
    if (device_count < 1) return VRAM_E_NO_DEVICE;
    who = r->local_rank >= 0 ? (uint64_t)r->local_rank : (uint64_t)r->rank;
    *gpu = (int)(who % (uint64_t)device_count);
    return VRAM_OK;
}

#endif /* VRAMKIT_RANKS_H */
