/* test_cli_util.c — the CLI's shared parsing and JSON writing.
 * Sizes are the input most often mistyped in a deployment, so every accepted form and
 * every rejected one is pinned here; the JSON writer must produce valid documents. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

typedef struct size_case {
    char text[32]; /* inline: Criterion copies params into its worker process */
    int ok;
    uint64_t bytes;
} size_case;

ParameterizedTestParameters(cli_util, parse_size) {
    static size_case cases[] = {
        {"0", 1, 0},
        {"4096", 1, 4096},
        {"18446744073709551615", 1, UINT64_MAX},
        {"18446744073709551616", 0, 0},
        {"512MiB", 1, 512ull << 20},
        {"8GiB", 1, 8ull << 30},
        {"8gib", 1, 8ull << 30},
        {"8 GiB", 1, 8ull << 30},
        {"7.5GB", 1, 7500000000ull},
        {"1.5GiB", 1, 3ull << 29},
        {"2TB", 1, 2000000000000ull},
        {"1TiB", 1, 1ull << 40},
        {"10KB", 1, 10000},
        {"10KiB", 1, 10240},
        {"3k", 1, 3000},
        {"100B", 1, 100},
        {"1.0B", 1, 1},
        {"0.5B", 0, 0},
        {"1.5", 0, 0},
        {"", 0, 0},
        {"GiB", 0, 0},
        {"-1", 0, 0},
        {"-1GiB", 0, 0},
        {"+5", 0, 0},
        {" 5", 0, 0},
        {"12XB", 0, 0},
        {"5GiBs", 0, 0},
        {"1.", 0, 0},
        {".5GiB", 0, 0},
        {"1e9", 0, 0},
        {"0x10", 0, 0},
        {"16777216TiB", 0, 0},
        {"17179869184GiB", 0, 0},
    };
    return cr_make_param_array(size_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(size_case *c, cli_util, parse_size) {
    uint64_t v = 12345;
    int rc = cli_parse_size(c->text, &v);
    if (c->ok) {
        cr_assert_eq(rc, 0, "'%s' should parse", c->text);
        cr_assert_eq(v, c->bytes, "'%s' -> %llu, expected %llu", c->text, (unsigned long long)v,
                     (unsigned long long)c->bytes);
    } else {
        cr_assert_eq(rc, -1, "'%s' should be rejected", c->text);
        cr_assert_eq(v, 12345, "a rejected size must not write the output");
    }
}

Test(cli_util, parse_size_null) {
    uint64_t v = 0;
    cr_assert_eq(cli_parse_size(NULL, &v), -1);
}

Test(cli_util, parse_fraction) {
    double f = 0;
    cr_assert_eq(cli_parse_fraction("0.75", &f), 0);
    cr_assert_float_eq(f, 0.75, 1e-12);
    cr_assert_eq(cli_parse_fraction("75%", &f), 0);
    cr_assert_float_eq(f, 0.75, 1e-12);
    cr_assert_eq(cli_parse_fraction("1", &f), 0);
    cr_assert_float_eq(f, 1.0, 0);
    cr_assert_eq(cli_parse_fraction(".5", &f), 0);
    cr_assert_float_eq(f, 0.5, 0);
    const char *bad[] = {"0", "0%", "1.01", "101%", "-0.5", "abc", "", "0.5x", "nan", "inf", "1e999", "%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(cli_parse_fraction(bad[i], &f), -1, "'%s' should be rejected", bad[i]);
    cr_assert_eq(cli_parse_fraction(NULL, &f), -1);
}

Test(cli_util, parse_u64) {
    uint64_t v = 0;
    cr_assert_eq(cli_parse_u64("42", 100, &v), 0);
    cr_assert_eq(v, 42);
    cr_assert_eq(cli_parse_u64("100", 100, &v), 0);
    cr_assert_eq(cli_parse_u64("101", 100, &v), -1);
    cr_assert_eq(cli_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
    cr_assert_eq(v, UINT64_MAX);
    cr_assert_eq(cli_parse_u64("18446744073709551616", UINT64_MAX, &v), -1);
    const char *bad[] = {"", "-1", "+1", "1.0", "1k", " 1", "0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(cli_parse_u64(bad[i], UINT64_MAX, &v), -1, "'%s' should be rejected", bad[i]);
    cr_assert_eq(cli_parse_u64(NULL, 1, &v), -1);
}

Test(cli_util, format_size) {
    char buf[32];
    cr_assert_str_eq(cli_format_size(0, buf, sizeof buf), "0 B");
    cr_assert_str_eq(cli_format_size(1023, buf, sizeof buf), "1023 B");
    cr_assert_str_eq(cli_format_size(1024, buf, sizeof buf), "1.00 KiB");
    cr_assert_str_eq(cli_format_size(3ull << 29, buf, sizeof buf), "1.50 GiB");
    cr_assert_str_eq(cli_format_size(UINT64_MAX, buf, sizeof buf), "16.00 EiB");
}

static char *json_of(void (*build)(cli_json *)) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    cli_json j;
    cli_json_init(&j, f);
    build(&j);
    cli_json_finish(&j);
    fclose(f);
    return text;
}

static void build_doc(cli_json *j) {
    cli_json_begin_object(j);
    cli_json_key(j, "name");
    cli_json_string(j, "a \"quoted\"\\ line\n\twith\x01 control");
    cli_json_key(j, "n");
    cli_json_u64(j, UINT64_MAX);
    cli_json_key(j, "neg");
    cli_json_i64(j, -5);
    cli_json_key(j, "x");
    cli_json_double(j, 0.5);
    cli_json_key(j, "inf");
    cli_json_double(j, 1.0 / 0.0);
    cli_json_key(j, "list");
    cli_json_begin_array(j);
    cli_json_bool(j, 1);
    cli_json_bool(j, 0);
    cli_json_null(j);
    cli_json_begin_array(j);
    cli_json_end_array(j);
    cli_json_begin_object(j);
    cli_json_end_object(j);
    cli_json_string(j, NULL);
    cli_json_end_array(j);
    cli_json_end_object(j);
}

Test(cli_util, json_writer_output) {
    char *text = json_of(build_doc);
    cr_assert_str_eq(text,
                     "{\"name\":\"a \\\"quoted\\\"\\\\ line\\n\\twith\\u0001 control\","
                     "\"n\":18446744073709551615,\"neg\":-5,\"x\":0.5,\"inf\":null,"
                     "\"list\":[true,false,null,[],{},null]}\n");
    free(text);
}

/* The writer's output is accepted by a real JSON parser (python3's), when one is here. */
Test(cli_util, json_writer_is_valid_json) {
    if (system("python3 -c 'pass' >/dev/null 2>&1") != 0) cr_skip_test("python3 not available");
    char *text = json_of(build_doc);
    char path[] = "/tmp/vramkit-json-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", path);
    int rc = system(cmd);
    unlink(path);
    free(text);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "python3 rejected the JSON");
}
