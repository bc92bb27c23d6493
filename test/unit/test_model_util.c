/* test_model_util.c — what the model readers share (driver/models/model_util.h): the names of JSON
 * value types that their messages use, quoting of untrusted names, one-line errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/model_util.h"

Test(model_util, json_type_names_every_kind_of_value) {
    static const struct {
        const char *json, *name;
    } cases[] = {
        {"{}", "an object"}, {"[1]", "an array"}, {"\"x\"", "a string"}, {"-2.5", "a number"},
        {"true", "a boolean"}, {"false", "a boolean"}, {"null", "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *j = cJSON_Parse(cases[i].json);
        cr_assert_not_null(j, "%s", cases[i].json);
        cr_expect_str_eq(vram__json_type(j), cases[i].name, "%s", cases[i].json);
        cJSON_Delete(j);
    }
}

Test(model_util, json_type_of_no_value_is_never_null) {
    cr_expect_str_eq(vram__json_type(NULL), "an invalid value");
    cJSON invalid;
    memset(&invalid, 0, sizeof invalid); /* type cJSON_Invalid: made, never parsed */
    cr_expect_str_eq(vram__json_type(&invalid), "an invalid value");
}

Test(model_util, quote_shows_printable_ascii_and_cuts_long_names) {
    char q[VRAM__QUOTE_CAP];
    cr_expect_str_eq(vram__quote("a\nb\x7f" "c", 5, q), "'a?b?c'");
    cr_expect_str_eq(vram__quote("", 0, q), "''");
    char longname[200];
    memset(longname, 'x', sizeof longname);
    vram__quote(longname, sizeof longname, q);
    cr_expect_eq(strlen(q), 1 + 80 + 3 + 1);
    cr_expect(strcmp(q + 81, "...'") == 0, "%s", q);
}

Test(model_util, fail_writes_one_line_and_returns_the_status) {
    char err[64];
    cr_expect_eq(vram__fail(err, sizeof err, VRAM_E_FORMAT, "f.json", "a\nb%cc", '\r'),
                 VRAM_E_FORMAT);
    cr_expect_str_eq(err, "f.json: a b c");
    cr_expect_eq(vram__fail(err, sizeof err, VRAM_E_IO, NULL, "x"), VRAM_E_IO);
    cr_expect_str_eq(err, "(input): x");
    char tiny[4];
    cr_expect_eq(vram__fail(tiny, sizeof tiny, VRAM_E_IO, "long label", "x"), VRAM_E_IO);
    cr_expect_str_eq(tiny, "lon");
    cr_expect_eq(vram__fail(NULL, 0, VRAM_E_OOM, "l", "x"), VRAM_E_OOM);
}

/* The accumulator counts each (stack, block index) pair once, whether the pair is kept as a
 * bit (the first stacks, short ones, indices below VRAM__ACC_BITS) or in the set (more stacks
 * than are kept, a long stack, a large index): checked against a count by brute force over
 * the same names, in an order that moves between stacks. */
Test(model_util, acc_counts_each_block_once_wherever_it_is_kept) {
    enum { MAXN = 400 };
    static char names[MAXN][160];
    static char stacks[MAXN][160];
    static uint64_t blocks[MAXN];
    size_t n = 0;
    char longstack[100];
    memset(longstack, 'x', 70);
    longstack[70] = '\0';
    /* 12 stacks (more than are kept), 3 blocks each, two tensors a block, interleaved */
    for (int rep = 0; rep < 2; rep++)
        for (int b = 0; b < 3; b++)
            for (int s = 0; s < 12; s++)
                snprintf(names[n++], sizeof names[0], "s%d.layers.%d.%s.weight", s, b,
                         rep ? "b" : "a");
    /* a stack longer than is kept; the empty stack; large indices; a block seen again */
    static const char *const more[] = {
        "%s.layers.0.w", "%s.layers.1.w", "%s.layers.0.v",
        "h.5.w",         "h.5.v",         "h.65535.w",
        "model.layers.65535.w", "model.layers.65536.w", "model.layers.70000.w",
        "model.layers.70000.v", "model.layers.3.w",     "model.layers.65535.v",
        "blk.123456789012.w",   "model.layers.0.w",     "model.layers.3.v",
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        snprintf(names[n++], sizeof names[0], more[i], longstack);
    /* the distinct pairs, by brute force over what the core says of each name */
    uint64_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        vram_tensor_class c;
        cr_assert_eq(vram_tensor_classify(names[i], strlen(names[i]), 0, NULL, &c), VRAM_OK);
        cr_assert(c.in_block, "%s", names[i]);
        snprintf(stacks[i], sizeof stacks[0], "%.*s", (int)c.stack_len, names[i]);
        blocks[i] = c.block;
        size_t j = 0;
        while (j < i && !(blocks[j] == blocks[i] && strcmp(stacks[j], stacks[i]) == 0))
            j++;
        distinct += j == i;
    }
    cr_assert_eq(distinct, 12 * 3 + 2 + 2 + 5 + 1);
    vram__tensor_acc acc;
    memset(&acc, 0, sizeof acc);
    char err[256];
    for (int round = 0; round < 2; round++) { /* freed, then used again */
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(vram__acc_add(&acc, names[i], strlen(names[i]), 0, NULL, 1, 2,
                                       VRAM_DTYPE_F16, "t", err, sizeof err),
                         VRAM_OK, "%s", err);
        cr_expect_eq(vram__acc_blocks(&acc), distinct, "round %d", round);
        cr_expect_eq(acc.stats.tensors, (uint64_t)n * (uint64_t)(round + 1));
        cr_expect_gt(acc.block_set.count, 0, "some pairs went to the set");
        cr_expect_gt(acc.block_bits, 0, "some pairs were kept as bits");
        vram__acc_free(&acc);
        cr_expect_eq(vram__acc_blocks(&acc), 0);
    }
}
