/* driver/isolate/chain.c — see chain.h. */
#include "chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/machine.h"
#include "util/text.h"

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

/* ---- the options -------------------------------------------------------------------------- */

static vram_status set_strategies(vram_try_chain *o, const char *text, char *err, size_t cap) {
    if (o->strategy_text)
        FAIL("--strategies is given twice (give one list)");
    if (text[0] == '\0') FAIL("--strategies: the list is empty");
    o->strategy_text = strdup(text);
    o->strategy_text_orig = text;
    if (!o->strategy_text) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    char *item = o->strategy_text;
    for (int k = 1;; k++) {
        char *comma = strchr(item, ',');
        if (comma) *comma = '\0';
        size_t n = strlen(item);
        if (n == 0)
            FAIL("--strategies: item %d of '%s' is empty", k, text);
        if (n > VRAM_TRY_NAME_MAX)
            FAIL("--strategies: '%.*s...' is longer than %d characters",
                                   VRAM_TRY_NAME_MAX, item, VRAM_TRY_NAME_MAX);
        for (const char *c = item; *c; c++)
            if (!vram_strategy_char_ok(*c)) {
                char *t = vram_clean_text(item, n, VRAM_TRY_NAME_MAX, 0);
                vram_status st = vram_errorf(err, cap, VRAM_E_INVALID,
                                             "--strategies: '%s' (item %d) has a character other "
                                             "than letters, digits and _ . + - :",
                                             t ? t : "?", k);
                free(t);
                return st;
            }
        if (o->n == VRAM_TRY_MAX_STRATEGIES)
            FAIL("--strategies: more than %d strategies in '%s'",
                                   VRAM_TRY_MAX_STRATEGIES, text);
        o->strategies[o->n++] = item;
        if (!comma) break;
        item = comma + 1;
    }
    return VRAM_OK;
}


vram_status vram_try_chain_set(vram_try_chain *c, const char *name, const char *arg, char *err,
                               size_t cap) {
    if (strcmp(name, "strategies") == 0) return set_strategies(c, arg, err, cap);
    if (strcmp(name, "plan") == 0) {
        if (c->plan_file) FAIL("--plan is given twice (give one plan)");
        c->plan_file = arg;
        return VRAM_OK;
    }
    if (strcmp(name, "model") == 0) {
        if (c->model) FAIL("--model is given twice (give one model)");
        c->model = arg;
        return VRAM_OK;
    }
    if (strcmp(name, "assume-gpu") == 0) {
        vram_status st;
        if (c->ngpu == VRAM_PLAN_MAX_GPUS) FAIL("--assume-gpu: at most %d GPUs", VRAM_PLAN_MAX_GPUS);
        if ((st = vram_gpu_spec_parse(arg, &c->gpus[c->ngpu], err, cap)) != VRAM_OK) return st;
        c->ngpu++;
        return VRAM_OK;
    }
    return VRAM_E_UNHANDLED;
}

vram_status vram_try_chain_check(const vram_try_chain *c, char *err, size_t cap) {
    if ((c->strategy_text != NULL) + (c->plan_file != NULL) + (c->model != NULL) != 1)
        FAIL("%s", c->strategy_text || c->plan_file || c->model
                       ? "give one of --strategies, --plan and --model"
                       : "--strategies, --plan or --model is required (e.g. --strategies fp16,int8,cpu)");
    if (c->ngpu > 0 && !c->model) FAIL("--assume-gpu goes with --model (a saved plan has its GPUs)");
    return VRAM_OK;
}

void vram_try_chain_free(vram_try_chain *c) {
    free(c->strategy_text);
    c->strategy_text = NULL;
}

/* ---- what a strategy means ---------------------------------------------------------------- */

/* vramkit/strategy.h's VRAM_STRATEGY_NAMES: {device} and {dtype} of a name; a name not listed
 * runs on cuda:0 with the name itself as the dtype. */
const char *vram_try_where_device(vram_strategy_where where) {
    switch (where) {
    case VRAM_WHERE_SPLIT: return "auto";
    case VRAM_WHERE_HOST: return "cpu";
    default: return "cuda:0";
    }
}

int vram_strategy_char_ok(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '+' || c == '-' || c == ':';
}

int vram_strategy_known(const char *s) {
#define VRAM__NAME_KNOWN(name, where, dt) \
    if (strcmp(s, name) == 0) return 1;
    VRAM_STRATEGY_NAMES(VRAM__NAME_KNOWN)
#undef VRAM__NAME_KNOWN
    return 0;
}

static void map_strategy(const char *s, const char **device, const char **dtype) {
#define VRAM__NAME_MEANS(name, where, dt)                \
    if (strcmp(s, name) == 0) {                          \
        *device = vram_try_where_device(where);          \
        *dtype = dt;                                     \
        return;                                          \
    }
    VRAM_STRATEGY_NAMES(VRAM__NAME_MEANS)
#undef VRAM__NAME_MEANS
    *device = "cuda:0";
    *dtype = s;
}

const char *vram_try_chain_kind(const vram_try_chain *c) {
    return c->plan_file ? "plan" : c->model ? "model" : "strategies";
}

const char *vram_try_chain_value(const vram_try_chain *c) {
    return c->plan_file ? c->plan_file : c->model ? c->model : c->strategy_text_orig;
}

void vram_try_chain_strategy(const vram_try_chain *c, int k, const char **device,
                             const char **dtype) {
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

static char *substitute(const char *text, const char *strategy, const char *device,
                           const char *dtype) {
    chain_values a = {strategy, device, dtype};
    size_t n = vram_expand(text, chain_value, &a, NULL, 0);
    char *out = (char *)malloc(n + 1);
    if (out != NULL) vram_expand(text, chain_value, &a, out, n + 1);
    return out;
}

char **vram_try_argv(const vram_try_chain *c, int k, char *const *command, int n) {
    const char *device, *dtype;
    char **argv = (char **)calloc((size_t)n + 1, sizeof *argv);
    if (argv == NULL) return NULL;
    vram_try_chain_strategy(c, k, &device, &dtype);
    for (int i = 0; i < n; i++)
        if (!(argv[i] = substitute(command[i], c->strategies[k], device, dtype))) {
            vram_try_argv_free(argv);
            return NULL;
        }
    return argv;
}

void vram_try_argv_free(char **argv) {
    if (argv)
        for (char **p = argv; *p; p++) free(*p);
    free(argv);
}

void vram_try_chain_env(const vram_try_chain *c, int k, int attempt, vram_try_env *e) {
    const char *device, *dtype;
    vram_try_chain_strategy(c, k, &device, &dtype);
    snprintf(e->buf[0], sizeof e->buf[0], "VRAMKIT_STRATEGY=%s", c->strategies[k]);
    snprintf(e->buf[1], sizeof e->buf[1], "VRAMKIT_DEVICE=%s", device);
    snprintf(e->buf[2], sizeof e->buf[2], "VRAMKIT_DTYPE=%s", dtype);
    snprintf(e->buf[3], sizeof e->buf[3], "VRAMKIT_ATTEMPT=%d", attempt);
    for (int i = 0; i < 4; i++) e->env[i] = e->buf[i];
    e->env[4] = NULL;
}

vram_status vram_try_isolate(vram_isolate_opts *io, vram_isolate_result *res) {
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

/* ---- text that came from a child --------------------------------------------------------- */

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

char *vram_clean_text(const char *p, size_t n, size_t max, int keep_lines) {
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

void vram_last_line(const char *data, size_t len, const char **start, size_t *n) {
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

