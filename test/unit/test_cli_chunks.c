/* `vramkit chunks` as a user runs it: the built binary with good plans (text and JSON,
 * the JSON parsed and its numbers checked), every kind of bad input (exit 2, one line on
 * stderr naming the option, nothing on stdout), a budget too small (exit 1 with both
 * numbers), and --help. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"

/* ---- a small JSON reader: enough to validate a document and look at it ------------ */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
    int type;
    uint64_t num; /* J_NUM: the value when is_u64 */
    int is_u64;   /* a non-negative integer that fits 64 bits */
    int boolean;
    char *str;
    struct jv *items; /* J_ARR, J_OBJ values */
    char **keys;      /* J_OBJ */
    size_t n;
} jv;

typedef struct jp {
    const char *p;
    int depth;
} jp;

static void jv_free(jv *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        jv_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

static void j_ws(jp *s) {
    while (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r') s->p++;
}

static char *j_string(jp *s) {
    if (*s->p != '"') return NULL;
    s->p++;
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    while (*s->p && *s->p != '"') {
        char c = *s->p++;
        if ((unsigned char)c < 0x20) { free(out); return NULL; }
        if (c == '\\') {
            char e = *s->p++;
            if (e == 'u') {
                for (int i = 0; i < 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", *s->p++)) { free(out); return NULL; }
                c = '?';
            } else if (strchr("\"\\/bfnrt", e) && e) {
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            } else {
                free(out);
                return NULL;
            }
        }
        if (n + 2 > cap) out = realloc(out, cap *= 2);
        out[n++] = c;
    }
    if (*s->p != '"') { free(out); return NULL; }
    s->p++;
    out[n] = '\0';
    return out;
}

static int j_value(jp *s, jv *v);

static int j_push(jv *v, jv *item, char *key) {
    v->items = realloc(v->items, (v->n + 1) * sizeof *v->items);
    if (v->type == J_OBJ) v->keys = realloc(v->keys, (v->n + 1) * sizeof *v->keys);
    v->items[v->n] = *item;
    if (v->type == J_OBJ) v->keys[v->n] = key;
    v->n++;
    return 0;
}

static int j_value(jp *s, jv *v) {
    memset(v, 0, sizeof *v);
    j_ws(s);
    if (++s->depth > 64) return -1;
    int rc = 0;
    if (*s->p == '{' || *s->p == '[') {
        char close = *s->p == '{' ? '}' : ']';
        v->type = *s->p == '{' ? J_OBJ : J_ARR;
        s->p++;
        j_ws(s);
        if (*s->p == close) {
            s->p++;
        } else {
            for (;;) {
                char *key = NULL;
                jv item;
                j_ws(s);
                if (v->type == J_OBJ) {
                    if (!(key = j_string(s))) { rc = -1; break; }
                    j_ws(s);
                    if (*s->p++ != ':') { free(key); rc = -1; break; }
                }
                if (j_value(s, &item) != 0) { free(key); jv_free(&item); rc = -1; break; }
                j_push(v, &item, key);
                j_ws(s);
                if (*s->p == ',') { s->p++; continue; }
                if (*s->p == close) { s->p++; break; }
                rc = -1;
                break;
            }
        }
    } else if (*s->p == '"') {
        v->type = J_STR;
        if (!(v->str = j_string(s))) rc = -1;
    } else if (strncmp(s->p, "true", 4) == 0 || strncmp(s->p, "false", 5) == 0) {
        v->type = J_BOOL;
        v->boolean = *s->p == 't';
        s->p += v->boolean ? 4 : 5;
    } else if (strncmp(s->p, "null", 4) == 0) {
        v->type = J_NULL;
        s->p += 4;
    } else if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) {
        const char *start = s->p;
        int neg = *s->p == '-', frac = 0;
        if (neg) s->p++;
        if (!(*s->p >= '0' && *s->p <= '9')) return -1;
        if (*s->p == '0' && s->p[1] >= '0' && s->p[1] <= '9') return -1; /* no leading zeros */
        while (*s->p >= '0' && *s->p <= '9') s->p++;
        if (*s->p == '.') {
            frac = 1;
            s->p++;
            if (!(*s->p >= '0' && *s->p <= '9')) return -1;
            while (*s->p >= '0' && *s->p <= '9') s->p++;
        }
        if (*s->p == 'e' || *s->p == 'E') {
            frac = 1;
            s->p++;
            if (*s->p == '+' || *s->p == '-') s->p++;
            if (!(*s->p >= '0' && *s->p <= '9')) return -1;
            while (*s->p >= '0' && *s->p <= '9') s->p++;
        }
        v->type = J_NUM;
        if (!neg && !frac) {
            uint64_t x = 0;
            int ok = 1;
            for (const char *q = start; q < s->p; q++) {
                unsigned d = (unsigned)(*q - '0');
                if (x > (UINT64_MAX - d) / 10) ok = 0;
                x = x * 10 + d;
            }
            v->is_u64 = ok;
            v->num = x;
        }
    } else {
        rc = -1;
    }
    s->depth--;
    return rc;
}

/* Parses a whole document; 0 when it is valid JSON with nothing after it. */
static int json_parse(const char *text, jv *out) {
    jp s = {text, 0};
    if (j_value(&s, out) != 0) return -1;
    j_ws(&s);
    return *s.p == '\0' ? 0 : -1;
}

static const jv *jget(const jv *obj, const char *key) {
    if (!obj || obj->type != J_OBJ) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

static uint64_t jnum(const jv *obj, const char *key) {
    const jv *v = jget(obj, key);
    cr_assert(v && v->type == J_NUM && v->is_u64, "JSON key '%s' missing or not a count", key);
    return v->num;
}

static const jv *jarr(const jv *obj, const char *key) {
    const jv *v = jget(obj, key);
    cr_assert(v && v->type == J_ARR, "JSON key '%s' missing or not an array", key);
    return v;
}

/* ---- running the binary -------------------------------------------------------------- */

/* 004: 51,779 samples of 360 x 167 x 4 + 36 x 4 bytes, batch 128, 12 GiB in two buffers. */
#define ARGS_004 "--samples", "51779", "--sample-bytes", "240624", "--batch", "128", \
                 "--budget", "12GiB"

static void expect_clean_success(const cli_result *r) {
    cr_assert_eq(r->signal, 0);
    cr_assert_eq(r->exit_code, 0, "exit %d, stderr: %s", r->exit_code, r->err);
    cr_assert_str_empty(r->err);
    cr_assert_not_null(r->out);
}

Test(cli_chunks, help_explains_everything) {
    const char *args[] = {"chunks", "--help", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    const char *must[] = {"--samples", "--sample-bytes", "--batch", "--budget", "--free",
                          "--fraction", "--reserve", "--buffers", "--drop-last", "--world",
                          "--rank", "--pad", "--no-pad", "--shuffle", "--seed", "--epoch",
                          "--json", "default 0.75", "default 2", "exit codes", "0 planned",
                          "1 a batch does not fit", "2 bad usage", "3 environment",
                          "samples_per_chunk", "chunk_order", "total_batches", "order["};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_assert(strstr(r.out, must[i]), "--help does not mention '%s'", must[i]);
    cli_result_free(&r);
}

Test(cli_chunks, text_plan_of_report_004) {
    const char *args[] = {"chunks", ARGS_004, NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    const char *must[] = {"51779 samples", "batch 128", "12.00 GiB in 2 buffers",
                          "6.00 GiB per buffer", "2 of up to 26752 samples", "405",
                          "the last of 67 samples", "[0, 26752)", "[26752, 51779)",
                          "209: [0, 128) [128, 256) ... [26624, 26752)",
                          "196: [26752, 26880)", "[51712, 51779)", "shuffle         off"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_assert(strstr(r.out, must[i]), "text plan lacks '%s':\n%s", must[i], r.out);
    cli_result_free(&r);
}

Test(cli_chunks, json_plan_of_report_004) {
    const char *args[] = {"chunks", ARGS_004, "--json", NULL};
    cli_result r = cli_run(args);
    jv doc;
    expect_clean_success(&r);
    cr_assert_eq(json_parse(r.out, &doc), 0, "not JSON:\n%s", r.out);
    cr_assert_eq(cli_count_lines(r.out), 1);
    cr_assert_eq(jnum(&doc, "samples_per_chunk"), 26752);
    cr_assert_eq(jnum(&doc, "chunk_count"), 2);
    cr_assert_eq(jnum(&doc, "total_samples"), 51779);
    cr_assert_eq(jnum(&doc, "total_batches"), 405);
    cr_assert_eq(jnum(&doc, "budget_bytes"), UINT64_C(12884901888));
    cr_assert_eq(jnum(&doc, "bytes_per_chunk"), UINT64_C(6437173248));
    cr_assert_eq(jnum(&doc, "buffer_bytes"), UINT64_C(6442450944));
    cr_assert_eq(jnum(&doc, "needed_bytes"), 2 * 128 * UINT64_C(240624));
    cr_assert_eq(jnum(&doc, "total_bytes"), UINT64_C(12459270096));
    cr_assert_eq(jnum(&doc, "last_batch_samples"), 67);
    cr_assert_eq(jnum(&doc, "rank_start"), 0);
    cr_assert_eq(jnum(&doc, "rank_end"), 51779);
    const jv *shuffle = jget(&doc, "shuffle");
    cr_assert(shuffle && shuffle->type == J_BOOL && !shuffle->boolean);
    const jv *chunks = jarr(&doc, "chunks");
    cr_assert_eq(chunks->n, 2);
    uint64_t next = 0, batches = 0;
    for (size_t i = 0; i < chunks->n; i++) {
        const jv *ch = &chunks->items[i];
        cr_assert_eq(jnum(ch, "index"), i);
        cr_assert_eq(jnum(ch, "start"), next);
        const jv *bs = jarr(ch, "batches");
        uint64_t pos = next;
        for (size_t j = 0; j < bs->n; j++) {
            const jv *b = &bs->items[j];
            cr_assert(b->type == J_ARR && b->n == 2);
            cr_assert_eq(b->items[0].num, pos);
            cr_assert_leq(b->items[1].num - b->items[0].num, 128);
            pos = b->items[1].num;
        }
        cr_assert_eq(pos, jnum(ch, "end"));
        cr_assert_null(jget(ch, "order"));
        batches += bs->n;
        next = jnum(ch, "end");
    }
    cr_assert_eq(next, 51779);
    cr_assert_eq(batches, 405);
    jv_free(&doc);
    cli_result_free(&r);
}

Test(cli_chunks, json_shuffled_sharded_plan_has_orders) {
    const char *args[] = {"chunks", "--samples", "1000", "--sample-bytes", "1KiB", "--batch",
                          "16", "--free", "400KiB", "--reserve", "100KiB", "--fraction", "50%",
                          "--world", "3", "--rank", "2", "--shuffle", "--seed", "7", "--epoch",
                          "2", "--drop-last", "--json", NULL};
    cli_result r = cli_run(args);
    jv doc;
    static unsigned char seen[1002];
    expect_clean_success(&r);
    cr_assert_eq(json_parse(r.out, &doc), 0, "not JSON:\n%s", r.out);
    /* 0.5 x 300 KiB = 150 KiB in two buffers: 75 rows -> 64 per chunk; 334 per rank */
    cr_assert_eq(jnum(&doc, "budget_bytes"), 150 * 1024);
    cr_assert_eq(jnum(&doc, "samples_per_chunk"), 64);
    cr_assert_eq(jnum(&doc, "rank_samples"), 334);
    cr_assert_eq(jnum(&doc, "rank_start"), 668);
    cr_assert_eq(jnum(&doc, "rank_end"), 1002);
    cr_assert_eq(jnum(&doc, "padded_samples"), 2);
    cr_assert_eq(jnum(&doc, "total_batches"), 20);
    cr_assert_eq(jnum(&doc, "dropped_last"), 14);
    const jv *order = jarr(&doc, "chunk_order");
    const jv *chunks = jarr(&doc, "chunks");
    cr_assert_eq(order->n, jnum(&doc, "chunk_count"));
    cr_assert_eq(chunks->n, order->n);
    memset(seen, 0, sizeof seen);
    for (size_t k = 0; k < chunks->n; k++) {
        const jv *ch = &chunks->items[k];
        cr_assert_eq(jnum(ch, "index"), order->items[k].num, "chunks not in visiting order");
        uint64_t start = jnum(ch, "start"), end = jnum(ch, "end");
        const jv *o = jarr(ch, "order");
        cr_assert_eq(o->n, end - start);
        for (size_t q = 0; q < o->n; q++) {
            uint64_t p = o->items[q].num;
            cr_assert(p >= start && p < end && !seen[p], "order is not a permutation");
            seen[p] = 1;
        }
        const jv *samples = jarr(ch, "samples");
        cr_assert(samples->n == 1 || samples->n == 2);
    }
    jv_free(&doc);
    cli_result_free(&r);
}

Test(cli_chunks, text_elides_huge_plans) {
    const char *args[] = {"chunks", "--samples", "100000", "--sample-bytes", "4", "--batch",
                          "10", "--budget", "800", "--shuffle", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "chunks not shown (--json lists all)"), "%s", r.out);
    cr_assert(strstr(r.out, "984 chunks not shown"), "%s", r.out);
    cr_assert(strstr(r.out, "order:"), "%s", r.out);
    cr_assert_lt(cli_count_lines(r.out), 60);
    cli_result_free(&r);
}

/* ---- bad input ----------------------------------------------------------------------- */

/* Arrays, not pointers: Criterion hands parameters to a fresh worker process, where the
 * parent's pointers mean nothing. An empty string ends the argument list. */
struct bad_case {
    char args[16][40];
    int exit_code;
    char names[96]; /* text the one stderr line must contain */
};

ParameterizedTestParameters(cli_chunks, bad_input) {
    static struct bad_case cases[] = {
        {{"chunks", ""}, 2, "--samples"},
        {{"chunks", "--samples", "10", "--batch", "2", "--budget", "1GiB", ""}, 2,
         "--sample-bytes"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--budget", "1GiB", ""}, 2,
         "--batch"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", ""}, 2,
         "--budget"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--frobnicate", ""}, 2, "--frobnicate"},
        {{"chunks", "--samples", "10", "--sample-bytes", "12XB", "--batch", "2", "--budget",
          "1GiB", ""}, 2, "--sample-bytes: '12XB'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "12XB",
          ""}, 2, "--budget: '12XB'"},
        {{"chunks", "--samples", "-5", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--samples: '-5' is negative"},
        {{"chunks", "--samples", "10", "--sample-bytes", "-4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--sample-bytes: '-4' is negative"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "0", "--budget", "1GiB",
          ""}, 2, "--batch"},
        {{"chunks", "--samples", "0", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--samples"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "0",
          ""}, 2, "--budget"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--world", "2", "--rank", "2", ""}, 2, "--rank 2 is not below --world 2"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--rank", "1", ""}, 2, "--rank 1 is not below --world 1"},
        {{"chunks", "--samples", "ten", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--samples: 'ten'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2.5", "--budget",
          "1GiB", ""}, 2, "--batch: '2.5'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--world", "x", ""}, 2, "--world: 'x'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--buffers", "0", ""}, 2, "--buffers"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--seed", "-1", "--shuffle", ""}, 2, "--seed"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--free", "1GiB",
          "--fraction", "1.5", ""}, 2, "--fraction: '1.5'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--free", "1GiB",
          "--fraction", "0", ""}, 2, "--fraction: '0'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--fraction", "0.5", ""}, 2, "--fraction"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--reserve", "1MiB", ""}, 2, "--reserve"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--free", "2GiB", ""}, 2, "--budget or --free"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--free", "1GiB",
          "--reserve", "2GiB", ""}, 2, "--reserve"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "stray", ""}, 2, "'stray'"},
        {{"chunks", "--samples", ""}, 2, "'--samples' needs a value"},
        {{"chunks", "--samples", "18446744073709551615", "--sample-bytes", "2", "--batch", "1",
          "--budget", "1GiB", ""}, 2, "overflows"},
        {{"chunks", "--samples", "18446744073709551616", "--sample-bytes", "2", "--batch", "1",
          "--budget", "1GiB", ""}, 2, "--samples"},
        {{"chunks", "--samples", "3", "--sample-bytes", "4", "--batch", "1", "--budget", "1GiB",
          "--world", "4", "--no-pad", ""}, 2, "--no-pad"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "20", "--budget", "1GiB",
          "--drop-last", ""}, 2, "--drop-last"},
        /* does not fit: exit 1 with what is needed and what there is */
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "15",
          ""}, 1, "needs 2 x 8 B = 16 B (16 bytes), the budget is 15 B (15 bytes)"},
        {{"chunks", ARGS_004, "--budget", "50MiB", ""}, 1,
         "(61599744 bytes), the budget is 50.00 MiB (52428800 bytes)"},
        {{"chunks", "--samples", "10", "--sample-bytes", "1MiB", "--batch", "4", "--free",
          "8MiB", "--reserve", "2MiB", ""}, 1, "(8388608 bytes), the budget is 4.50 MiB"},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, cli_chunks, bad_input) {
    const char *args[17];
    int n = 0;
    while (n < 16 && c->args[n][0] != '\0') {
        args[n] = c->args[n];
        n++;
    }
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_assert_eq(r.signal, 0);
    cr_assert_eq(r.exit_code, c->exit_code, "%s %s: exit %d, stderr: %s", c->args[1],
                 c->args[2], r.exit_code, r.err);
    cr_assert_str_empty(r.out, "stdout must be empty on failure, got: %s", r.out);
    cr_assert_eq(cli_count_lines(r.err), 1, "want one line on stderr, got: %s", r.err);
    cr_assert(strncmp(r.err, "vramkit: chunks: ", 17) == 0, "%s", r.err);
    cr_assert(strstr(r.err, c->names), "stderr '%s' does not name '%s'", r.err, c->names);
    cli_result_free(&r);
}
