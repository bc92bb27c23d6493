/* test_model_util.c — what the model readers share (driver/models/model_util.h): the names of JSON
 * value types that their messages use, quoting of untrusted names, one-line errors. */
#include <criterion/criterion.h>
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
