/* vramkit/ranks.h and driver/comm/ranks_env.h: rank, world size and local rank from each
 * launcher's variables (torchrun, Open MPI, MPICH/PMI, Slurm), the precedence between
 * launchers and over the flags, every inconsistent case with the variables it names, the GPU
 * chosen by local rank, and the environment wrapper. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/ranks.h>

#include "comm/ranks_env.h"

/* A fake environment: "NAME=value" strings, NULL-terminated. */
static const char *lookup(void *ctx, const char *name) {
    const char *const *env = (const char *const *)ctx;
    size_t n = strlen(name);
    for (; env != NULL && *env != NULL; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') return *env + n + 1;
    return NULL;
}

static vram_status resolve(const char *const *env, vram_ranks *r) {
    return vram_ranks_from_vars(lookup, (void *)env, r);
}

/* Parameters hold their text inline (Criterion may run a case in a new process, where the
 * table's pointers would not point at the strings): up to 4 variables, "" ends the list. */
#define VARS 4
typedef char var_text[48];
static void as_env(var_text *vars, const char **env) {
    int i = 0;
    for (; i < VARS && vars[i][0] != '\0'; i++) env[i] = vars[i];
    env[i] = NULL;
}

/* ---- each launcher ------------------------------------------------------------------ */

typedef struct launcher_case {
    var_text env[VARS];
    vram_launcher launcher;
    uint32_t rank, world;
    int64_t local;
} launcher_case;

ParameterizedTestParameters(ranks, each_launcher) {
    static launcher_case cases[] = {
        {{"RANK=3", "WORLD_SIZE=8", "LOCAL_RANK=1"}, VRAM_LAUNCHER_TORCHRUN, 3, 8, 1},
        {{"SLURM_PROCID=5", "SLURM_NTASKS=6", "SLURM_LOCALID=2"}, VRAM_LAUNCHER_SLURM, 5, 6, 2},
        {{"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=0"},
         VRAM_LAUNCHER_OPENMPI, 2, 4, 0},
        {{"PMI_RANK=7", "PMI_SIZE=16"}, VRAM_LAUNCHER_PMI, 7, 16, -1},
        {{"PMI_RANK=7", "PMI_SIZE=16", "MPI_LOCALRANKID=3"}, VRAM_LAUNCHER_PMI, 7, 16, 3},
        /* the local rank is optional for every launcher */
        {{"RANK=0", "WORLD_SIZE=1"}, VRAM_LAUNCHER_TORCHRUN, 0, 1, -1},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=2"}, VRAM_LAUNCHER_SLURM, 0, 2, -1},
        /* the largest world and rank */
        {{"RANK=2147483646", "WORLD_SIZE=2147483647"}, VRAM_LAUNCHER_TORCHRUN,
         2147483646u, 2147483647u, -1},
        /* leading zeros are digits like any other */
        {{"RANK=007", "WORLD_SIZE=010"}, VRAM_LAUNCHER_TORCHRUN, 7, 10, -1},
    };
    return cr_make_param_array(launcher_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(launcher_case *c, ranks, each_launcher) {
    vram_ranks r;
    const char *env[VARS + 1];
    as_env(c->env, env);
    cr_assert_eq(resolve(env, &r), VRAM_OK);
    cr_assert_eq(r.launcher, c->launcher);
    cr_assert_eq(r.rank, c->rank);
    cr_assert_eq(r.world, c->world);
    cr_assert_eq(r.local_rank, c->local);
    cr_assert_eq(r.fault, VRAM_RANKS_FAULT_NONE);
    cr_assert_eq(r.outranked, 0u);
}

Test(ranks, no_launcher_is_one_process) {
    const char *env[] = {"HOME=/root", "LOCAL_WORLD_SIZE=2", "SLURM_JOB_ID=77", NULL};
    vram_ranks r;
    cr_assert_eq(resolve(env, &r), VRAM_OK);
    cr_assert_eq(r.launcher, VRAM_LAUNCHER_NONE);
    cr_assert_eq(r.rank, 0u);
    cr_assert_eq(r.world, 1u);
    cr_assert_eq(r.local_rank, -1);
}

/* ---- precedence ---------------------------------------------------------------------- */

Test(ranks, torchrun_inside_slurm_wins) {
    /* torchrun started by srun on node 1 of 2: Slurm's task is the node, torchrun's the GPU */
    const char *env[] = {"SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_LOCALID=0",
                         "RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", NULL};
    vram_ranks r;
    cr_assert_eq(resolve(env, &r), VRAM_OK);
    cr_assert_eq(r.launcher, VRAM_LAUNCHER_TORCHRUN);
    cr_assert_eq(r.rank, 5u);
    cr_assert_eq(r.world, 8u);
    cr_assert_eq(r.local_rank, 1);
    cr_assert_eq(r.outranked, 1u << VRAM_LAUNCHER_SLURM);
}

Test(ranks, mpirun_wins_over_pmi_and_slurm) {
    const char *env[] = {"SLURM_PROCID=0", "SLURM_NTASKS=1", "PMI_RANK=0", "PMI_SIZE=1",
                         "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", NULL};
    vram_ranks r;
    cr_assert_eq(resolve(env, &r), VRAM_OK);
    cr_assert_eq(r.launcher, VRAM_LAUNCHER_OPENMPI);
    cr_assert_eq(r.rank, 3u);
    cr_assert_eq(r.world, 4u);
    cr_assert_eq(r.outranked, (1u << VRAM_LAUNCHER_SLURM) | (1u << VRAM_LAUNCHER_PMI));
}

Test(ranks, outranked_garbage_is_ignored) {
    /* Slurm's values do not matter when torchrun's are used */
    const char *env[] = {"RANK=1", "WORLD_SIZE=2", "SLURM_PROCID=x", "SLURM_NTASKS=0", NULL};
    vram_ranks r;
    cr_assert_eq(resolve(env, &r), VRAM_OK);
    cr_assert_eq(r.launcher, VRAM_LAUNCHER_TORCHRUN);
    cr_assert_eq(r.rank, 1u);
}

Test(ranks, flag_rank_wins_over_the_launchers) {
    const char *env[] = {"RANK=1", "WORLD_SIZE=4", "LOCAL_RANK=1", NULL};
    vram_ranks r;
    cr_assert_eq(resolve(env, &r), VRAM_OK);
    cr_assert_eq(vram_ranks_with_rank(&r, 3), VRAM_OK);
    cr_assert_eq(r.rank, 3u);
    cr_assert_eq(r.world, 4u);
    cr_assert_eq(r.local_rank, 1);
}

Test(ranks, flag_rank_not_below_the_launchers_world) {
    const char *env[] = {"SLURM_PROCID=1", "SLURM_NTASKS=4", NULL};
    vram_ranks r;
    cr_assert_eq(resolve(env, &r), VRAM_OK);
    cr_assert_eq(vram_ranks_with_rank(&r, 4), VRAM_E_RANGE);
    cr_assert_eq(r.rank, 1u, "the rank is untouched on an error");
    cr_assert_eq(r.fault, VRAM_RANKS_FAULT_FLAG_RANK);
    cr_assert_str_eq(r.var_b, "SLURM_NTASKS");
    /* without a launcher the world is 1 and nothing is named */
    const char *none[] = {NULL};
    cr_assert_eq(resolve(none, &r), VRAM_OK);
    cr_assert_eq(vram_ranks_with_rank(&r, 0), VRAM_OK);
    cr_assert_eq(vram_ranks_with_rank(&r, 1), VRAM_E_RANGE);
    cr_assert_null(r.var_b);
    cr_assert_eq(vram_ranks_with_rank(NULL, 0), VRAM_E_INVALID);
}

/* ---- inconsistent variables ------------------------------------------------------------ */

typedef struct bad_case {
    var_text env[VARS];
    vram_status st;
    vram_ranks_fault fault;
    vram_launcher launcher;
    char a[32], b[32]; /* the variables named ("": none) */
    char words[96];    /* in vram_ranks_explain's line */
} bad_case;

ParameterizedTestParameters(ranks, inconsistent) {
    static bad_case cases[] = {
        {{"RANK=1"}, VRAM_E_INVALID, VRAM_RANKS_FAULT_MISSING, VRAM_LAUNCHER_TORCHRUN,
         "RANK", "WORLD_SIZE", "RANK is set but WORLD_SIZE is not (torchrun sets both)"},
        {{"WORLD_SIZE=2"}, VRAM_E_INVALID, VRAM_RANKS_FAULT_MISSING, VRAM_LAUNCHER_TORCHRUN,
         "WORLD_SIZE", "RANK", "WORLD_SIZE is set but RANK is not"},
        {{"LOCAL_RANK=0"}, VRAM_E_INVALID, VRAM_RANKS_FAULT_MISSING, VRAM_LAUNCHER_TORCHRUN,
         "LOCAL_RANK", "RANK", "LOCAL_RANK is set but RANK is not"},
        {{"SLURM_LOCALID=0", "SLURM_PROCID=0"}, VRAM_E_INVALID, VRAM_RANKS_FAULT_MISSING,
         VRAM_LAUNCHER_SLURM, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_PROCID is set but SLURM_NTASKS is not (Slurm"},
        {{"OMPI_COMM_WORLD_SIZE=4"}, VRAM_E_INVALID, VRAM_RANKS_FAULT_MISSING,
         VRAM_LAUNCHER_OPENMPI, "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "(Open MPI sets both)"},
        {{"PMI_RANK=0"}, VRAM_E_INVALID, VRAM_RANKS_FAULT_MISSING, VRAM_LAUNCHER_PMI,
         "PMI_RANK", "PMI_SIZE", "PMI_RANK is set but PMI_SIZE is not (MPICH/PMI sets both)"},
        {{"RANK=4", "WORLD_SIZE=4"}, VRAM_E_RANGE, VRAM_RANKS_FAULT_NOT_BELOW,
         VRAM_LAUNCHER_TORCHRUN, "RANK", "WORLD_SIZE", "RANK=4 is not below WORLD_SIZE=4 (torchrun)"},
        {{"RANK=0", "WORLD_SIZE=4", "LOCAL_RANK=4"}, VRAM_E_RANGE, VRAM_RANKS_FAULT_NOT_BELOW,
         VRAM_LAUNCHER_TORCHRUN, "LOCAL_RANK", "WORLD_SIZE", "LOCAL_RANK=4 is not below WORLD_SIZE=4"},
        {{"SLURM_PROCID=9", "SLURM_NTASKS=2"}, VRAM_E_RANGE, VRAM_RANKS_FAULT_NOT_BELOW,
         VRAM_LAUNCHER_SLURM, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_PROCID=9 is not below SLURM_NTASKS=2 (Slurm)"},
        {{"RANK=0", "WORLD_SIZE=0"}, VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER,
         VRAM_LAUNCHER_TORCHRUN, "WORLD_SIZE", "", "WORLD_SIZE=0 (torchrun) is not a whole number from 1 to 2147483647"},
        {{"RANK=-1", "WORLD_SIZE=2"}, VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER,
         VRAM_LAUNCHER_TORCHRUN, "RANK", "", "RANK='-1' (torchrun) is not a whole number from 0 to 2147483646"},
        {{"RANK=1 ", "WORLD_SIZE=2"}, VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER,
         VRAM_LAUNCHER_TORCHRUN, "RANK", "", "RANK='1 '"},
        {{"RANK=", "WORLD_SIZE=2"}, VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER,
         VRAM_LAUNCHER_TORCHRUN, "RANK", "", "RANK=''"},
        {{"RANK=0", "WORLD_SIZE=2147483648"}, VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER,
         VRAM_LAUNCHER_TORCHRUN, "WORLD_SIZE", "", "WORLD_SIZE=2147483648"},
        {{"RANK=0", "WORLD_SIZE=99999999999"}, VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER,
         VRAM_LAUNCHER_TORCHRUN, "WORLD_SIZE", "", "WORLD_SIZE='99999999999'"},
        {{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_RANK=x"},
         VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER, VRAM_LAUNCHER_OPENMPI, "OMPI_COMM_WORLD_LOCAL_RANK",
         "", "OMPI_COMM_WORLD_LOCAL_RANK='x' (Open MPI)"},
        {{"PMI_RANK=0x1", "PMI_SIZE=2"}, VRAM_E_FORMAT, VRAM_RANKS_FAULT_NUMBER,
         VRAM_LAUNCHER_PMI, "PMI_RANK", "", "PMI_RANK='0x1' (MPICH/PMI)"},
        /* the winning launcher's error counts even when a later one is fine */
        {{"RANK=2", "WORLD_SIZE=2", "SLURM_PROCID=0"}, VRAM_E_RANGE, VRAM_RANKS_FAULT_NOT_BELOW,
         VRAM_LAUNCHER_TORCHRUN, "RANK", "WORLD_SIZE", "RANK=2 is not below WORLD_SIZE=2"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, ranks, inconsistent) {
    vram_ranks r;
    char line[256];
    const char *env[VARS + 1];
    as_env(c->env, env);
    vram_status st = resolve(env, &r);
    cr_assert_eq(st, c->st, "%s: status %d", c->env[0], (int)st);
    cr_assert_eq(r.fault, c->fault);
    cr_assert_eq(r.launcher, c->launcher);
    cr_assert_str_eq(r.var_a, c->a);
    if (c->b[0] != '\0')
        cr_assert_str_eq(r.var_b, c->b);
    else
        cr_assert_null(r.var_b);
    vram_ranks_explain(&r, st, lookup, (void *)env, line, sizeof line);
    cr_assert(strstr(line, c->words), "'%s' does not contain '%s'", line, c->words);
    cr_assert_null(strchr(line, '\n'), "one line");
}

Test(ranks, refuses_missing_arguments) {
    vram_ranks r;
    cr_assert_eq(vram_ranks_from_vars(NULL, NULL, &r), VRAM_E_INVALID);
    cr_assert_eq(vram_ranks_from_vars(lookup, NULL, NULL), VRAM_E_INVALID);
}

Test(ranks, explain_bounds_odd_values) {
    /* a long value with control bytes is cut and made printable */
    static char big[200];
    memset(big, 'x', sizeof big - 1);
    big[0] = '\x1b';
    static char var[220];
    snprintf(var, sizeof var, "RANK=%s", big);
    const char *env[] = {var, "WORLD_SIZE=2", NULL};
    vram_ranks r;
    char line[256];
    cr_assert_eq(resolve(env, &r), VRAM_E_FORMAT);
    vram_ranks_explain(&r, VRAM_E_FORMAT, lookup, (void *)env, line, sizeof line);
    cr_assert(strstr(line, "RANK='?xxx"), "%s", line);
    cr_assert(strstr(line, "...'"), "%s", line);
    cr_assert_null(strchr(line, '\x1b'));
}

/* ---- numbers ------------------------------------------------------------------------- */

Test(ranks, numbers_stop_at_the_bound) {
    uint32_t v = 77;
    cr_assert_eq(vram__ranks_number("0", 0, &v), VRAM_OK);
    cr_assert_eq(v, 0u);
    cr_assert_eq(vram__ranks_number("4294967295", UINT32_MAX, &v), VRAM_OK);
    cr_assert_eq(v, UINT32_MAX);
    v = 77;
    cr_assert_eq(vram__ranks_number("4294967296", UINT32_MAX, &v), VRAM_E_FORMAT);
    cr_assert_eq(vram__ranks_number("00000000001", UINT32_MAX, &v), VRAM_E_FORMAT, "11 digits");
    cr_assert_eq(vram__ranks_number("10", 9, &v), VRAM_E_FORMAT);
    cr_assert_eq(vram__ranks_number("+1", 9, &v), VRAM_E_FORMAT);
    cr_assert_eq(vram__ranks_number("", 9, &v), VRAM_E_FORMAT);
    cr_assert_eq(v, 77u, "untouched on errors");
}

Test(ranks, names_and_variables) {
    const char *a, *b, *c;
    cr_assert_str_eq(vram_launcher_name(VRAM_LAUNCHER_TORCHRUN), "torchrun");
    cr_assert_str_eq(vram_launcher_name(VRAM_LAUNCHER_SLURM), "Slurm");
    cr_assert_str_eq(vram_launcher_name(VRAM_LAUNCHER_OPENMPI), "Open MPI");
    cr_assert_str_eq(vram_launcher_name(VRAM_LAUNCHER_PMI), "MPICH/PMI");
    cr_assert_str_eq(vram_launcher_name(VRAM_LAUNCHER_NONE), "none");
    cr_assert_str_eq(vram_launcher_name(VRAM_LAUNCHER_FLAGS), "flags");
    cr_assert_str_eq(vram_launcher_name((vram_launcher)42), "unknown");
    cr_assert_eq(vram_launcher_vars(VRAM_LAUNCHER_OPENMPI, &a, &b, &c), VRAM_OK);
    cr_assert_str_eq(a, "OMPI_COMM_WORLD_RANK");
    cr_assert_str_eq(b, "OMPI_COMM_WORLD_SIZE");
    cr_assert_str_eq(c, "OMPI_COMM_WORLD_LOCAL_RANK");
    a = "keep";
    cr_assert_eq(vram_launcher_vars(VRAM_LAUNCHER_NONE, &a, &b, &c), VRAM_E_INVALID);
    cr_assert_str_eq(a, "keep");
}

/* ---- the GPU by local rank ------------------------------------------------------------ */

Test(ranks, gpu_by_local_rank) {
    vram_ranks r = {0};
    int gpu = -5;
    r.world = 16;
    r.rank = 13;
    r.local_rank = 5;
    cr_assert_eq(vram_ranks_gpu(&r, 8, &gpu), VRAM_OK);
    cr_assert_eq(gpu, 5);
    cr_assert_eq(vram_ranks_gpu(&r, 4, &gpu), VRAM_OK);
    cr_assert_eq(gpu, 1, "local rank modulo the devices");
    r.local_rank = -1; /* no local rank: the rank */
    cr_assert_eq(vram_ranks_gpu(&r, 8, &gpu), VRAM_OK);
    cr_assert_eq(gpu, 5);
    cr_assert_eq(vram_ranks_gpu(&r, 1, &gpu), VRAM_OK);
    cr_assert_eq(gpu, 0);
    gpu = -5;
    cr_assert_eq(vram_ranks_gpu(&r, 0, &gpu), VRAM_E_NO_DEVICE);
    cr_assert_eq(vram_ranks_gpu(&r, -3, &gpu), VRAM_E_NO_DEVICE);
    cr_assert_eq(gpu, -5);
}

/* ---- the environment ------------------------------------------------------------------- */

Test(ranks, from_the_environment) {
    static const char *const vars[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
                                       "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "SLURM_PROCID",
                                       "SLURM_NTASKS", "SLURM_LOCALID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
    vram_ranks r;
    cr_assert_eq(vram_ranks_from_env(&r), VRAM_OK);
    cr_assert_eq(r.launcher, VRAM_LAUNCHER_NONE);
    setenv("SLURM_PROCID", "3", 1);
    setenv("SLURM_NTASKS", "4", 1);
    setenv("SLURM_LOCALID", "1", 1);
    cr_assert_eq(vram_ranks_from_env(&r), VRAM_OK);
    cr_assert_eq(r.launcher, VRAM_LAUNCHER_SLURM);
    cr_assert_eq(r.rank, 3u);
    cr_assert_eq(r.local_rank, 1);
    setenv("SLURM_NTASKS", "3", 1);
    char line[256];
    vram_status st = vram_ranks_from_env(&r);
    cr_assert_eq(st, VRAM_E_RANGE);
    vram_ranks_explain(&r, st, NULL, NULL, line, sizeof line);
    cr_assert_str_eq(line, "SLURM_PROCID=3 is not below SLURM_NTASKS=3 (Slurm)");
}
