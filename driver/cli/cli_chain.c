/* driver/cli/cli_chain.c — the strategy chain of `try` and `run` (see cli_chain.h). */
#include "cli_chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_model.h"


/* What a strategy name means for {device} and {dtype}. Names not listed run on cuda:0 with
 * the name itself as the dtype, so engine-specific names (q4_k_m, awq) pass through. */
static const struct {
    const char *name, *device, *dtype;
} strategy_map[] = {
    {"fp32", "cuda:0", "float32"},  {"fp16", "cuda:0", "float16"},
    {"bf16", "cuda:0", "bfloat16"}, {"fp8", "cuda:0", "float8_e4m3fn"},
    {"int8", "cuda:0", "int8"},     {"int4", "cuda:0", "int4"},
    {"nf4", "cuda:0", "nf4"},       {"gpu+cpu", "auto", "float16"},
    {"split", "auto", "float16"},   {"cpu", "cpu", "float32"},
};
#define N_STRATEGY_MAP (sizeof strategy_map / sizeof strategy_map[0])

int cli_opt_seconds(const char *cmd, const char *name, const char *text, double *out) {
    const char *p = text;
    int digits = 0, dot = 0, frac = 0;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            digits++;
            if (dot) frac++;
        } else if (*p == '.' && !dot && digits > 0) {
            dot = 1;
        } else {
            break;
        }
    }
    if (*p != '\0' || digits == 0 || (dot && frac == 0)) {
        if (text[0] == '-') return cli_usage_error(cmd, "--%s: '%s' is negative", name, text);
        return cli_usage_error(cmd, "--%s: '%s' is not a number of seconds (like 30 or 2.5)", name,
                               text);
    }
    double v = strtod(text, NULL);
    if (!(v > 0.0)) return cli_usage_error(cmd, "--%s: must be more than 0 seconds", name);
    if (v > CLI_MAX_SECONDS)
        return cli_usage_error(cmd, "--%s: '%s' is more than %.0f seconds", name, text, CLI_MAX_SECONDS);
    *out = v;
    return 0;
}

int cli_chain_strategies(const char *cmd, const char *text, cli_chain *o) {
    if (o->strategy_text)
        return cli_usage_error(cmd, "--strategies is given twice (give one list)");
    if (text[0] == '\0') return cli_usage_error(cmd, "--strategies: the list is empty");
    o->strategy_text = strdup(text);
    o->strategy_text_orig = text;
    if (!o->strategy_text) return cli_error(VRAM_EXIT_ENV, cmd, "out of memory");
    char *item = o->strategy_text;
    for (int k = 1;; k++) {
        char *comma = strchr(item, ',');
        if (comma) *comma = '\0';
        size_t n = strlen(item);
        if (n == 0)
            return cli_usage_error(cmd, "--strategies: item %d of '%s' is empty", k, text);
        if (n > CLI_CHAIN_NAME_MAX)
            return cli_usage_error(cmd, "--strategies: '%.*s...' is longer than %d characters",
                                   CLI_CHAIN_NAME_MAX, item, CLI_CHAIN_NAME_MAX);
        for (const char *c = item; *c; c++)
            if ((unsigned char)*c <= ' ' || *c == 0x7f)
                return cli_usage_error(cmd, "--strategies: item %d of '%s' contains a blank or "
                                            "control character", k, text);
        if (o->n == CLI_CHAIN_MAX)
            return cli_usage_error(cmd, "--strategies: more than %d strategies in '%s'",
                                   CLI_CHAIN_MAX, text);
        o->strategies[o->n++] = item;
        if (!comma) break;
        item = comma + 1;
    }
    return 0;
}


/* The dtype a plan's format stands for; NULL for a format not listed. */
static const char *format_dtype(vram_dtype f) {
    switch (f) {
    case VRAM_DTYPE_F32: return "float32";
    case VRAM_DTYPE_F16: return "float16";
    case VRAM_DTYPE_BF16: return "bfloat16";
    case VRAM_DTYPE_INT8: return "int8";
    case VRAM_DTYPE_NF4: return "nf4";
    default: return NULL;
    }
}

/* The strategies of a plan (driver/plan/plan_doc.h): those that fit, in the plan's order,
 * with the plan's device and format; the others in skipped[]. `what` names the plan in

 * errors. Returns 0, or the exit code after printing the error. */
static int strategies_from_rows(const char *cmd, const vram_plan_rows *rows, const char *what,
                                cli_chain *o) {
    for (int i = 0; i < rows->n; i++) {
        const vram_plan_row *r = &rows->row[i];
        int k = o->n;
        if (!r->fits) {
            o->skipped[o->n_skipped] = r->name;
            o->skipped_why[o->n_skipped++] = r->why[0] ? r->why : "it does not fit";
            continue;
        }
        if (r->device == VRAM_PLAN_CPU)
            o->device_of[k] = "cpu";
        else if (r->device >= 0)
            o->device_of[k] = (snprintf(o->device_buf[k], sizeof o->device_buf[k], "cuda:%d",
                                        r->device),
                               o->device_buf[k]);
        else
            o->device_of[k] = "auto";
        o->strategies[k] = r->name;
        o->dtype_of[k] = format_dtype(r->format);
        o->gpu_high[k] = o->row_high[i];
        o->n++;
    }
    if (o->n == 0)
        return cli_error(VRAM_EXIT_NO, cmd, "%s: none of the plan's %d strategies fits: nothing "
                                            "to try (see 'vramkit plan')", what, rows->n);
    return 0;
}


/* The plan of --model now (default workload), on the --assume-gpu GPUs or this machine's. */
static int plan_model(const char *cmd, cli_chain *o) {
    vram_plan *p = calloc(1, sizeof *p);
    char err[1200];
    vram_status st;
    int rc = 0;
    if (p == NULL) return cli_error(VRAM_EXIT_ENV, cmd, "out of memory");
    if ((st = vram_plan_set_model(p, o->model, err, sizeof err)) == VRAM_OK) {
        for (int g = 0; g < o->ngpu; g++) p->mach.gpus[g] = o->gpus[g];
        p->mach.ngpu = o->ngpu;
        p->mach.gpus_given = o->ngpu > 0;
        st = vram_plan_make(p, err, sizeof err);
    }
    if (st != VRAM_OK)
        rc = cli_error(cli_exit_code(st), cmd,
                       "%s", err);
    else
        vram_plan_rows_from_chain(p, o->rows);
    /* the rows follow the chain one to one; a saved document has no high (0: not known) */
    for (int i = 0; rc == 0 && i < o->rows->n && i < p->chain.count; i++) {
        const vram_candidate *c = &p->chain.cand[i];
        if (c->fits && c->status == VRAM_OK && o->rows->row[i].device >= 0)
            o->row_high[i] = c->estimate.high;
    }
    free(p);
    return rc;
}


/* ---- text that came from a child ------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p, size_t n) {
    unsigned char c = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) len = 3;
    else if (c >= 0xf0 && c <= 0xf4) len = 4;
    else return 0;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
    if (n < len) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t k = 2; k < len; k++)
        if (p[k] < 0x80 || p[k] > 0xbf) return 0;
    return len;
}

char *cli_clean_text(const char *p, size_t n, size_t max, int keep_lines) {
    size_t cap = n < max ? n : max;
    char *out = (char *)malloc(cap + 1);
    size_t k = 0, i = 0;
    if (!out) return NULL;
    while (i < n) {
        const unsigned char *u = (const unsigned char *)p + i;
        size_t l = utf8_len(u, n - i);
        if (l == 0 || (l == 1 && (u[0] < 0x20 || u[0] == 0x7f) &&
                       !(keep_lines && (u[0] == '\n' || u[0] == '\t' || u[0] == '\r')))) {
            if (l == 1 && u[0] == '\t') {
                if (k + 1 > cap) break;
                out[k++] = ' ';
            } else {
                if (k + 1 > cap) break;
                out[k++] = '?';
            }
            i += l ? l : 1;
            continue;
        }
        if (k + l > cap) break;
        memcpy(out + k, u, l);
        k += l;
        i += l;
    }
    out[k] = '\0';
    return out;
}

void cli_last_line(const char *data, size_t len, const char **start, size_t *n) {
    size_t end = len;
    *start = data;
    *n = 0;
    while (end > 0) {
        size_t b = end;
        while (b > 0 && data[b - 1] != '\n') b--;
        for (size_t i = b; i < end; i++)
            if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r') {
                size_t e = end;
                while (e > b && (data[e - 1] == ' ' || data[e - 1] == '\t' || data[e - 1] == '\r')) e--;
                *start = data + b;
                *n = e - b;
                return;
            }
        end = b > 0 ? b - 1 : 0;
    }
}

static void map_strategy(const char *s, const char **device, const char **dtype) {
    for (size_t i = 0; i < N_STRATEGY_MAP; i++)
        if (strcmp(s, strategy_map[i].name) == 0) {
            *device = strategy_map[i].device;
            *dtype = strategy_map[i].dtype;
            return;
        }
    *device = "cuda:0";
    *dtype = s;
}


int cli_chain_plan(const char *cmd, const char *file, cli_chain *c) {
    if (c->plan_file) return cli_usage_error(cmd, "--plan is given twice (give one plan)");
    c->plan_file = file;
    return 0;
}

int cli_chain_model(const char *cmd, const char *model, cli_chain *c) {
    if (c->model) return cli_usage_error(cmd, "--model is given twice (give one model)");
    c->model = model;
    return 0;
}

int cli_chain_gpu(const char *cmd, const char *spec, cli_chain *c) {
    int rc;
    if (c->ngpu == VRAM_PLAN_MAX_GPUS)
        return cli_usage_error(cmd, "--assume-gpu: at most %d GPUs", VRAM_PLAN_MAX_GPUS);
    if ((rc = cli_parse_gpu_spec(cmd, spec, &c->gpus[c->ngpu]))) return rc;
    c->ngpu++;
    return 0;
}

int cli_chain_check(const char *cmd, const cli_chain *c) {
    if ((c->strategy_text != NULL) + (c->plan_file != NULL) + (c->model != NULL) != 1)
        return cli_usage_error(cmd, c->strategy_text || c->plan_file || c->model
                                        ? "give one of --strategies, --plan and --model"
                                        : "--strategies, --plan or --model is required (e.g. "
                                          "--strategies fp16,int8,cpu)");
    if (c->ngpu > 0 && !c->model)
        return cli_usage_error(cmd, "--assume-gpu goes with --model (a saved plan has its GPUs)");
    return 0;
}

int cli_chain_load(const char *cmd, cli_chain *c) {
    char what[4200];
    int rc;
    if (!c->plan_file && !c->model) return 0;
    c->rows = calloc(1, sizeof *c->rows);
    if (c->rows == NULL) return cli_error(VRAM_EXIT_ENV, cmd, "out of memory");
    if (c->plan_file) {
        char err[4400];
        vram_status st;
        snprintf(what, sizeof what, "--plan %s", c->plan_file);
        st = vram_plan_doc_strategies(c->plan_file, what, c->rows, err, sizeof err);
        if (st != VRAM_OK) return cli_error(cli_exit_code(st), cmd, "%s", err);
    } else {
        snprintf(what, sizeof what, "the plan of %s", c->model);
        if ((rc = plan_model(cmd, c))) return rc;
    }
    return strategies_from_rows(cmd, c->rows, what, c);
}

const char *cli_chain_kind(const cli_chain *c) {
    return c->plan_file ? "plan" : c->model ? "model" : "strategies";
}

const char *cli_chain_value(const cli_chain *c) {
    return c->plan_file ? c->plan_file : c->model ? c->model : c->strategy_text_orig;
}

void cli_chain_strategy(const cli_chain *c, int k, const char **device, const char **dtype) {
    map_strategy(c->strategies[k], device, dtype);
    if (c->device_of[k]) *device = c->device_of[k];
    if (c->dtype_of[k]) *dtype = c->dtype_of[k];
}

typedef struct chain_values {
    const char *strategy, *device, *dtype;
} chain_values;

/* {strategy}, {device}, {dtype} of an attempt. */
static int chain_value(void *ctx, const char *key, size_t klen, char *val, size_t cap) {
    const chain_values *a = ctx;
    const char *v = NULL;
    if (klen == 8 && strncmp(key, "strategy", 8) == 0) v = a->strategy;
    else if (klen == 6 && strncmp(key, "device", 6) == 0) v = a->device;
    else if (klen == 5 && strncmp(key, "dtype", 5) == 0) v = a->dtype;
    if (v == NULL) return 0;
    snprintf(val, cap, "%s", v);
    return 1;
}

char *cli_chain_substitute(const char *text, const char *strategy, const char *device,
                           const char *dtype) {
    chain_values a = {strategy, device, dtype};
    size_t n = vram_expand(text, chain_value, &a, NULL, 0);
    char *out = (char *)malloc(n + 1);
    if (out != NULL) vram_expand(text, chain_value, &a, out, n + 1);
    return out;
}

int cli_chain_dashes(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) return i;
    return argc;
}

int cli_chain_stray(const char *cmd, char **argv, int dd, int first) {
    if (first < dd)
        return cli_usage_error(cmd, "unexpected argument '%s': the command goes after '--' "
                                    "(vramkit %s --strategies LIST -- COMMAND ARGS...)",
                               argv[first], cmd);
    return 0;
}

int cli_chain_command(const char *cmd, int argc, char **argv, int dd, char ***command, int *n) {
    if (dd == argc)
        return cli_usage_error(cmd, "missing '--' before the command (vramkit %s --strategies "
                                    "LIST -- COMMAND ARGS...)", cmd);
    *command = argv + dd + 1;
    *n = argc - dd - 1;
    if (*n == 0) return cli_usage_error(cmd, "no command after '--'");
    if ((*command)[0][0] == '\0') return cli_usage_error(cmd, "the command after '--' is empty ('')");
    return 0;
}

char **cli_chain_argv(const cli_chain *c, int k, char *const *command, int n) {
    const char *device, *dtype;
    char **argv = (char **)calloc((size_t)n + 1, sizeof *argv);
    if (argv == NULL) return NULL;
    cli_chain_strategy(c, k, &device, &dtype);
    for (int i = 0; i < n; i++)
        if (!(argv[i] = cli_chain_substitute(command[i], c->strategies[k], device, dtype))) {
            cli_chain_argv_free(argv);
            return NULL;
        }
    return argv;
}

void cli_chain_argv_free(char **argv) {
    if (argv)
        for (char **p = argv; *p; p++) free(*p);
    free(argv);
}

void cli_chain_env(const cli_chain *c, int k, int attempt, cli_chain_attempt_env *e) {
    const char *device, *dtype;
    cli_chain_strategy(c, k, &device, &dtype);
    snprintf(e->buf[0], sizeof e->buf[0], "VRAMKIT_STRATEGY=%s", c->strategies[k]);
    snprintf(e->buf[1], sizeof e->buf[1], "VRAMKIT_DEVICE=%s", device);
    snprintf(e->buf[2], sizeof e->buf[2], "VRAMKIT_DTYPE=%s", dtype);
    snprintf(e->buf[3], sizeof e->buf[3], "VRAMKIT_ATTEMPT=%d", attempt);
    for (int i = 0; i < 4; i++) e->env[i] = e->buf[i];
    e->env[4] = NULL;
}

vram_status cli_chain_isolate(vram_isolate_opts *io, vram_isolate_result *res) {
    /* what an attempt leaves outside its group (daemons, setsid) would keep GPU memory from the
       next attempt: adopt and end it (these commands have no other children) */
    io->reap_descendants = 1;
    vram_status st = vram_isolate_run(io, res);
    if (st == VRAM_E_NOT_SUPPORTED) { /* no subreaper on this system: the group kill only */
        io->reap_descendants = 0;
        st = vram_isolate_run(io, res);
    }
    return st;
}

void cli_chain_free(cli_chain *c) {
    free(c->strategy_text);
    free(c->rows);
    c->strategy_text = NULL;
    c->rows = NULL;
}
