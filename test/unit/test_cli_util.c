/* test_cli_util.c — the CLI's shared parsing and JSON writing.
 * Sizes are the input most often mistyped in a deployment, so every accepted form and
 * every rejected one is pinned here; the JSON writer must produce valid documents. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/json.h"

#include <cjson/cJSON.h>

/* The option values (util/text.h's vram_opt_*) as a command reports them: the line on stderr
 * and the exit code (cli_set). */
#define CLI_OPT_NEGATIVE VRAM_OPT_NEGATIVE
#define CLI_OPT_AT_LEAST VRAM_OPT_AT_LEAST
#define CLI_OPT_BRIEF VRAM_OPT_BRIEF
static int cli_opt_count(const char *cmd, const char *name, const char *text, uint64_t min,
                         uint64_t max, unsigned flags, uint64_t *out) {
    char err[512];
    return cli_set(cmd, vram_opt_count(name, text, min, max, flags, out, err, sizeof err), err);
}
static int cli_opt_size(const char *cmd, const char *name, const char *text, int allow_zero,
                        unsigned flags, uint64_t *out) {
    char err[512];
    return cli_set(cmd, vram_opt_size(name, text, allow_zero, flags, out, err, sizeof err), err);
}
static int cli_opt_fraction(const char *cmd, const char *name, const char *text, double *out) {
    char err[512];
    return cli_set(cmd, vram_opt_fraction(name, text, out, err, sizeof err), err);
}
static int cli_opt_percent(const char *cmd, const char *name, const char *text, double *out) {
    char err[512];
    return cli_set(cmd, vram_opt_percent(name, text, out, err, sizeof err), err);
}

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
    int rc = vram_parse_size(c->text, &v);
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
    cr_assert_eq(vram_parse_size(NULL, &v), -1);
}

Test(cli_util, parse_fraction) {
    double f = 0;
    cr_assert_eq(vram_parse_fraction("0.75", &f), 0);
    cr_assert_float_eq(f, 0.75, 1e-12);
    cr_assert_eq(vram_parse_fraction("75%", &f), 0);
    cr_assert_float_eq(f, 0.75, 1e-12);
    cr_assert_eq(vram_parse_fraction("1", &f), 0);
    cr_assert_float_eq(f, 1.0, 0);
    cr_assert_eq(vram_parse_fraction(".5", &f), 0);
    cr_assert_float_eq(f, 0.5, 0);
    const char *bad[] = {"0", "0%", "1.01", "101%", "-0.5", "abc", "", "0.5x", "nan", "inf", "1e999", "%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(vram_parse_fraction(bad[i], &f), -1, "'%s' should be rejected", bad[i]);
    cr_assert_eq(vram_parse_fraction(NULL, &f), -1);
}

Test(cli_util, parse_u64) {
    uint64_t v = 0;
    cr_assert_eq(vram_parse_u64("42", 100, &v), 0);
    cr_assert_eq(v, 42);
    cr_assert_eq(vram_parse_u64("100", 100, &v), 0);
    cr_assert_eq(vram_parse_u64("101", 100, &v), -1);
    cr_assert_eq(vram_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
    cr_assert_eq(v, UINT64_MAX);
    cr_assert_eq(vram_parse_u64("18446744073709551616", UINT64_MAX, &v), -1);
    const char *bad[] = {"", "-1", "+1", "1.0", "1k", " 1", "0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(vram_parse_u64(bad[i], UINT64_MAX, &v), -1, "'%s' should be rejected", bad[i]);
    cr_assert_eq(vram_parse_u64(NULL, 1, &v), -1);
}

Test(cli_util, parse_percent) {
    double f = 0;
    cr_assert_eq(vram_parse_percent("90", &f), 0);
    cr_assert_float_eq(f, 90.0, 0);
    cr_assert_eq(vram_parse_percent("92.5%", &f), 0);
    cr_assert_float_eq(f, 92.5, 1e-12);
    cr_assert_eq(vram_parse_percent("100", &f), 0);
    cr_assert_float_eq(f, 100.0, 0);
    cr_assert_eq(vram_parse_percent(".5", &f), 0);
    cr_assert_float_eq(f, 0.5, 0);
    f = 7;
    const char *bad[] = {"", "0", "0%", "100.01", "101%", "-5", "+5", " 5", "abc", "5x", "5%%",
                         "nan", "inf", "1e999", "%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(vram_parse_percent(bad[i], &f), -1, "'%s' should be rejected", bad[i]);
    cr_assert_eq(vram_parse_percent(NULL, &f), -1);
    cr_assert_float_eq(f, 7.0, 0, "a rejected percentage must not write the output");
}

/* ---- option values: the value or one line on stderr ------------------------------------ */

/* stderr goes to a temporary file while a parser runs; what it wrote comes back. */
static int captured_fd = -1;
static FILE *captured;

static void capture_stderr(void) {
    fflush(stderr);
    captured = tmpfile();
    cr_assert_not_null(captured);
    captured_fd = dup(2);
    cr_assert(captured_fd >= 0);
    cr_assert(dup2(fileno(captured), 2) >= 0);
}

static void captured_text(char *buf, size_t cap) {
    fflush(stderr);
    dup2(captured_fd, 2);
    close(captured_fd);
    rewind(captured);
    size_t n = fread(buf, 1, cap - 1, captured);
    buf[n] = '\0';
    fclose(captured);
}

typedef struct count_case {
    char text[32];
    uint64_t min, max;
    unsigned flags;
    int rc;
    uint64_t value; /* when rc == 0 */
    char err[128];  /* the whole of stderr */
} count_case;

#define U64MAX_TEXT "18446744073709551615"

ParameterizedTestParameters(cli_util, opt_count) {
    static count_case cases[] = {
        {"42", 1, 100, 0, 0, 42, ""},
        {"1", 1, 100, 0, 0, 1, ""},
        {"100", 1, 100, 0, 0, 100, ""},
        {"0", 0, 100, CLI_OPT_AT_LEAST, 0, 0, ""},
        {U64MAX_TEXT, 0, UINT64_MAX, 0, 0, UINT64_MAX, ""},
        /* empty */
        {"", 1, 100, 0, 2, 0, "vramkit: t: --n: '' is not a whole number from 1 to 100\n"},
        /* sign: negative is named only when asked for; '+' never is */
        {"-5", 1, 100, 0, 2, 0, "vramkit: t: --n: '-5' is not a whole number from 1 to 100\n"},
        {"-5", 1, 100, CLI_OPT_NEGATIVE, 2, 0, "vramkit: t: --n: '-5' is negative\n"},
        {"-0", 0, 100, CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST, 2, 0, "vramkit: t: --n: '-0' is negative\n"},
        {"+5", 1, 100, CLI_OPT_NEGATIVE, 2, 0, "vramkit: t: --n: '+5' is not a whole number from 1 to 100\n"},
        /* junk */
        {"5x", 1, 100, CLI_OPT_NEGATIVE, 2, 0, "vramkit: t: --n: '5x' is not a whole number from 1 to 100\n"},
        {" 5", 1, 100, 0, 2, 0, "vramkit: t: --n: ' 5' is not a whole number from 1 to 100\n"},
        {"1.0", 1, 100, 0, 2, 0, "vramkit: t: --n: '1.0' is not a whole number from 1 to 100\n"},
        {"0x10", 0, 100, 0, 2, 0, "vramkit: t: --n: '0x10' is not a whole number from 0 to 100\n"},
        /* overflow */
        {"18446744073709551616", 1, UINT64_MAX, CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST, 2, 0,
         "vramkit: t: --n: '18446744073709551616' is not a whole number from 1 to " U64MAX_TEXT "\n"},
        /* above max */
        {"101", 1, 100, CLI_OPT_AT_LEAST, 2, 0, "vramkit: t: --n: '101' is not a whole number from 1 to 100\n"},
        /* below min: its own line only when asked for */
        {"0", 1, 100, 0, 2, 0, "vramkit: t: --n: '0' is not a whole number from 1 to 100\n"},
        {"0", 1, 100, CLI_OPT_NEGATIVE, 2, 0, "vramkit: t: --n: '0' is not a whole number from 1 to 100\n"},
        {"0", 1, 100, CLI_OPT_AT_LEAST, 2, 0, "vramkit: t: --n: must be at least 1\n"},
        {"2", 3, 100, CLI_OPT_AT_LEAST, 2, 0, "vramkit: t: --n: must be at least 3\n"},
    };
    return cr_make_param_array(count_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(count_case *c, cli_util, opt_count) {
    uint64_t v = 12345;
    char err[256];
    capture_stderr();
    int rc = cli_opt_count("t", "n", c->text, c->min, c->max, c->flags, &v);
    captured_text(err, sizeof err);
    cr_assert_eq(rc, c->rc, "'%s': rc %d, expected %d", c->text, rc, c->rc);
    cr_assert_str_eq(err, c->err, "'%s'", c->text);
    cr_assert_eq(v, c->rc == 0 ? c->value : 12345, "'%s' -> %llu", c->text, (unsigned long long)v);
}

Test(cli_util, opt_count_null_text) {
    uint64_t v = 7;
    char err[256];
    capture_stderr();
    int rc = cli_opt_count("t", "n", NULL, 1, 9, CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST, &v);
    captured_text(err, sizeof err);
    cr_assert_eq(rc, VRAM_EXIT_USAGE);
    cr_assert_str_eq(err, "vramkit: t: --n: '' is not a whole number from 1 to 9\n");
    cr_assert_eq(v, 7);
}

typedef struct size_opt_case {
    char text[32];
    int allow_zero;
    unsigned flags;
    int rc;
    uint64_t value;
    char err[160];
} size_opt_case;

#define NOT_A_SIZE(t) \
    "vramkit: t: --s: '" t "' is not a size (bytes, or a number with B, KB, MB, GB, TB, KiB, " \
    "MiB, GiB, TiB)\n"

ParameterizedTestParameters(cli_util, opt_size) {
    static size_opt_case cases[] = {
        {"8GiB", 0, 0, 0, 8ull << 30, ""},
        {"7.5GB", 0, CLI_OPT_BRIEF, 0, 7500000000ull, ""},
        {"0", 1, 0, 0, 0, ""},
        {"0", 1, CLI_OPT_BRIEF, 0, 0, ""},
        /* empty */
        {"", 1, 0, 2, 0, NOT_A_SIZE("")},
        {"", 1, CLI_OPT_BRIEF, 2, 0, "vramkit: t: --s: '' is not a size\n"},
        /* sign */
        {"-1GiB", 0, 0, 2, 0, NOT_A_SIZE("-1GiB")},
        {"-1GiB", 0, CLI_OPT_NEGATIVE, 2, 0, "vramkit: t: --s: '-1GiB' is negative\n"},
        {"+1GiB", 0, CLI_OPT_NEGATIVE, 2, 0, NOT_A_SIZE("+1GiB")},
        /* junk */
        {"12XB", 0, CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST, 2, 0, NOT_A_SIZE("12XB")},
        {"1.5", 0, 0, 2, 0, NOT_A_SIZE("1.5")},
        {"5GiB!", 0, CLI_OPT_BRIEF, 2, 0, "vramkit: t: --s: '5GiB!' is not a size above 0\n"},
        /* overflow */
        {"16777216TiB", 1, 0, 2, 0, NOT_A_SIZE("16777216TiB")},
        {"18446744073709551616", 1, CLI_OPT_BRIEF, 2, 0,
         "vramkit: t: --s: '18446744073709551616' is not a size\n"},
        /* zero where it is not allowed */
        {"0", 0, 0, 2, 0, NOT_A_SIZE("0")},
        {"0GiB", 0, CLI_OPT_AT_LEAST, 2, 0, "vramkit: t: --s: must be more than 0 bytes\n"},
        {"0", 0, CLI_OPT_BRIEF, 2, 0, "vramkit: t: --s: '0' is not a size above 0\n"},
        {"0", 0, CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST, 2, 0, "vramkit: t: --s: must be more than 0 bytes\n"},
    };
    return cr_make_param_array(size_opt_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(size_opt_case *c, cli_util, opt_size) {
    uint64_t v = 12345;
    char err[256];
    capture_stderr();
    int rc = cli_opt_size("t", "s", c->text, c->allow_zero, c->flags, &v);
    captured_text(err, sizeof err);
    cr_assert_eq(rc, c->rc, "'%s': rc %d, expected %d", c->text, rc, c->rc);
    cr_assert_str_eq(err, c->err, "'%s'", c->text);
    cr_assert_eq(v, c->rc == 0 ? c->value : 12345, "'%s' -> %llu", c->text, (unsigned long long)v);
}

Test(cli_util, opt_fraction_and_percent) {
    double f = 3.0;
    char err[256];
    capture_stderr();
    cr_assert_eq(cli_opt_fraction("t", "fraction", "75%", &f), 0);
    captured_text(err, sizeof err);
    cr_assert_str_empty(err);
    cr_assert_float_eq(f, 0.75, 1e-12);
    capture_stderr();
    cr_assert_eq(cli_opt_percent("t", "limit", "92.5%", &f), 0);
    captured_text(err, sizeof err);
    cr_assert_str_empty(err);
    cr_assert_float_eq(f, 92.5, 1e-12);

    const char *bad[] = {"", "-0.5", "+0.5", "0", "abc", "0.5x", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[160];
        f = 3.0;
        capture_stderr();
        cr_assert_eq(cli_opt_fraction("t", "fraction", bad[i], &f), VRAM_EXIT_USAGE);
        captured_text(err, sizeof err);
        snprintf(want, sizeof want,
                 "vramkit: t: --fraction: '%s' is not a fraction in (0, 1] (like 0.75 or 75%%)\n",
                 bad[i]);
        cr_assert_str_eq(err, want);
        capture_stderr();
        cr_assert_eq(cli_opt_percent("t", "limit", bad[i], &f), VRAM_EXIT_USAGE);
        captured_text(err, sizeof err);
        snprintf(want, sizeof want,
                 "vramkit: t: --limit: '%s' is not a percentage in (0, 100] (like 90 or "
                 "92.5%%)\n",
                 bad[i]);
        cr_assert_str_eq(err, want);
        cr_assert_float_eq(f, 3.0, 0, "'%s' wrote the output", bad[i]);
    }
    /* above the top of each range */
    capture_stderr();
    cr_assert_eq(cli_opt_fraction("t", "fraction", "1.5", &f), VRAM_EXIT_USAGE);
    cr_assert_eq(cli_opt_percent("t", "limit", "100.5", &f), VRAM_EXIT_USAGE);
    captured_text(err, sizeof err);
    cr_assert_str_eq(err,
                     "vramkit: t: --fraction: '1.5' is not a fraction in (0, 1] (like 0.75 or 75%)\n"
                     "vramkit: t: --limit: '100.5' is not a percentage in (0, 100] (like 90 or "
                     "92.5%)\n");
    /* 50 is a percentage, not a fraction */
    capture_stderr();
    cr_assert_eq(cli_opt_fraction("t", "fraction", "50", &f), VRAM_EXIT_USAGE);
    captured_text(err, sizeof err);
    cr_assert_float_eq(f, 3.0, 0);
}

/* A command's parse starts from its own argv, even after another parse stopped inside a
 * group of short options (which a reset to 1 would not clear: getopt would go on with the
 * old argv's next letter). */
Test(cli_util, getopt_reset_is_a_full_reset) {
    char p[] = "prog", ab[] = "-ab", c[] = "-c", x[] = "rest";
    char *first[] = {p, ab, NULL};
    char *second[] = {p, c, x, NULL};
    opterr = 1;
    cli_getopt_reset();
    cr_assert_eq(getopt(2, first, "ab"), 'a'); /* stops between 'a' and 'b' */
    cli_getopt_reset();
    cr_assert_eq(opterr, 0);
    cr_assert_eq(getopt(3, second, "abc"), 'c');
    cr_assert_eq(getopt(3, second, "abc"), -1);
    cr_assert_eq(optind, 2);
    cr_assert_str_eq(second[optind], "rest");
}

Test(cli_util, format_size) {
    char buf[32];
    cr_assert_str_eq(vram_fmt_size(0, buf, sizeof buf), "0 B");
    cr_assert_str_eq(vram_fmt_size(1023, buf, sizeof buf), "1023 B");
    cr_assert_str_eq(vram_fmt_size(1024, buf, sizeof buf), "1.00 KiB");
    cr_assert_str_eq(vram_fmt_size(3ull << 29, buf, sizeof buf), "1.50 GiB");
    cr_assert_str_eq(vram_fmt_size(UINT64_MAX, buf, sizeof buf), "16.00 EiB");
}

static char *json_of(void (*build)(vram_json *)) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    vram_json j;
    vram_json_init(&j, f);
    build(&j);
    vram_json_finish(&j);
    fclose(f);
    return text;
}

static void build_doc(vram_json *j) {
    vram_json_begin_object(j);
    vram_json_key(j, "name");
    vram_json_string(j, "a \"quoted\"\\ line\n\twith\x01 control");
    vram_json_key(j, "n");
    vram_json_u64(j, UINT64_MAX);
    vram_json_key(j, "neg");
    vram_json_i64(j, -5);
    vram_json_key(j, "x");
    vram_json_double(j, 0.5);
    vram_json_key(j, "inf");
    vram_json_double(j, 1.0 / 0.0);
    vram_json_key(j, "list");
    vram_json_begin_array(j);
    vram_json_bool(j, 1);
    vram_json_bool(j, 0);
    vram_json_null(j);
    vram_json_begin_array(j);
    vram_json_end_array(j);
    vram_json_begin_object(j);
    vram_json_end_object(j);
    vram_json_string(j, NULL);
    vram_json_end_array(j);
    vram_json_end_object(j);
}

Test(cli_util, json_writer_output) {
    char *text = json_of(build_doc);
    cr_assert_str_eq(text,
                     "{\"name\":\"a \\\"quoted\\\"\\\\ line\\n\\twith\\u0001 control\","
                     "\"n\":18446744073709551615,\"neg\":-5,\"x\":0.5,\"inf\":null,"
                     "\"list\":[true,false,null,[],{},null]}\n");
    free(text);
}

/* The keyed shorthands write what the key and the value written apart would; the _or_null ones
 * write null without a value, whatever the value (a 64-bit one that is 0 in its low 32 bits
 * included). */
static void build_keyed(vram_json *j) {
    vram_json_begin_object(j);
    vram_json_key_u64(j, "u", UINT64_C(1) << 32);
    vram_json_key_i64(j, "i", -7);
    vram_json_key_string(j, "s", NULL);
    vram_json_key_bool(j, "b", 1);
    vram_json_key_double(j, "d", 0.25);
    vram_json_key_u64_or_null(j, "u1", 1, UINT64_C(1) << 32);
    vram_json_key_u64_or_null(j, "u0", 0, 5);
    vram_json_key_i64_or_null(j, "i1", 1, -3);
    vram_json_key_i64_or_null(j, "i0", 0, -3);
    vram_json_key_bool_or_null(j, "b1", 1, 0);
    vram_json_key_bool_or_null(j, "b0", 0, 1);
    vram_json_key_double_or_null(j, "d1", 1, 1.5);
    vram_json_key_double_or_null(j, "d0", 0, 1.5);
    vram_json_end_object(j);
}

Test(cli_util, json_writer_keyed) {
    char *text = json_of(build_keyed);
    cr_assert_str_eq(text,
                     "{\"u\":4294967296,\"i\":-7,\"s\":null,\"b\":true,\"d\":0.25,"
                     "\"u1\":4294967296,\"u0\":null,\"i1\":-3,\"i0\":null,\"b1\":false,\"b0\":null,"
                     "\"d1\":1.5,\"d0\":null}\n");
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

/* Keys given more than once read as Python's json reads them: one member, at the first
 * mention's place, with the last mention's value; at every depth, through arrays. Python
 * itself is the oracle (json.dumps of json.loads), for the sorting path and for the path
 * taken without memory. */
static const char *const dup_docs[] = {
    "{\"a\":1,\"b\":2,\"a\":3}",
    "{\"z\":1,\"y\":2,\"x\":3}",
    "{\"a\":1,\"a\":2,\"a\":3,\"b\":{\"x\":1,\"y\":2,\"x\":[1,{\"k\":1,\"k\":2,\"j\":0}]},"
    "\"c\":0,\"b\":{\"y\":5,\"y\":6,\"w\":7}}",
    "[{\"q\":1,\"p\":2,\"q\":\"s\"},{},{\"\":1,\"\":2}]",
    "{\"model.layers.1.w\":\"s1\",\"model.layers.0.w\":\"s2\",\"lm_head\":\"s1\","
    "\"model.layers.1.w\":\"s3\",\"model.layers.0.w\":\"s4\"}",
};

static void python_reads(const char *doc, char *out, size_t cap) {
    char path[] = "/tmp/vramkit-json-dup-XXXXXX", cmd[256];
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(doc, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])),"
             " separators=(\",\", \":\")), end=\"\")' %s",
             path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0);
    unlink(path);
}

Test(cli_util, json_duplicate_keys_read_as_python_reads_them) {
    if (system("python3 -c 'pass' >/dev/null 2>&1") != 0) cr_skip_test("python3 not available");
    for (size_t i = 0; i < sizeof dup_docs / sizeof dup_docs[0]; i++) {
        char want[512];
        python_reads(dup_docs[i], want, sizeof want);
        for (int pairwise = 0; pairwise < 2; pairwise++) {
            cJSON *doc = cJSON_Parse(dup_docs[i]);
            cr_assert_not_null(doc);
            if (pairwise) vram__json_last_wins_pairwise(doc);
            else vram_json_last_wins(doc);
            char *got = cJSON_PrintUnformatted(doc);
            cr_expect_str_eq(got, want, "%s (%s)", dup_docs[i], pairwise ? "pairwise" : "sorted");
            free(got);
            cJSON_Delete(doc);
        }
    }
}
