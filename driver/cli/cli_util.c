/* driver/cli/cli_util.c — helpers every `vramkit` command shares.
 * Parsing of sizes, fractions and integers that rejects anything doubtful (a wrong size
 * silently accepted is a wrong plan), one-line errors, and a streaming JSON writer. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static int cli_verror(int code, const char *cmd, const char *fmt, va_list ap) {
    fprintf(stderr, "vramkit: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return code;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_verror(VRAM_EXIT_USAGE, cmd, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_error(int code, const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_verror(code, cmd, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_exit_code(vram_status st) {
    return st == VRAM_E_IO || st == VRAM_E_NOMEM || st == VRAM_E_OOM || st == VRAM_E_NOT_BUILT ||
                   st == VRAM_E_COMM || st == VRAM_E_TIMEOUT
               ? VRAM_EXIT_ENV
               : VRAM_EXIT_USAGE;
}

/* ---- option values -------------------------------------------------------------------- */

int cli_opt_count(const char *cmd, const char *name, const char *text, uint64_t min, uint64_t max,
                  unsigned flags, uint64_t *out) {
    uint64_t v = 0;
    int parsed = vram_parse_u64(text, max, &v) == 0;
    if (text == NULL) text = "";
    if (parsed && v < min && (flags & CLI_OPT_AT_LEAST))
        return cli_usage_error(cmd, "--%s: must be at least %llu", name, (unsigned long long)min);
    if (!parsed || v < min) {
        if ((flags & CLI_OPT_NEGATIVE) && text[0] == '-')
            return cli_usage_error(cmd, "--%s: '%s' is negative", name, text);
        return cli_usage_error(cmd, "--%s: '%s' is not a whole number from %llu to %llu", name,
                               text, (unsigned long long)min, (unsigned long long)max);
    }
    *out = v;
    return 0;
}

int cli_opt_size(const char *cmd, const char *name, const char *text, int allow_zero,
                 unsigned flags, uint64_t *out) {
    uint64_t v = 0;
    int parsed = vram_parse_size(text, &v) == 0;
    if (text == NULL) text = "";
    if (parsed && v == 0 && !allow_zero && (flags & CLI_OPT_AT_LEAST))
        return cli_usage_error(cmd, "--%s: must be more than 0 bytes", name);
    if (!parsed || (v == 0 && !allow_zero)) {
        if ((flags & CLI_OPT_NEGATIVE) && text[0] == '-')
            return cli_usage_error(cmd, "--%s: '%s' is negative", name, text);
        if (flags & CLI_OPT_BRIEF)
            return cli_usage_error(cmd, "--%s: '%s' is not a size%s", name, text,
                                   allow_zero ? "" : " above 0");
        return cli_usage_error(cmd,
                               "--%s: '%s' is not a size (bytes, or a number with B, KB, MB, "
                               "GB, TB, KiB, MiB, GiB, TiB)",
                               name, text);
    }
    *out = v;
    return 0;
}

int cli_opt_fraction(const char *cmd, const char *name, const char *text, double *out) {
    if (vram_parse_fraction(text, out) == 0) return 0;
    return cli_usage_error(cmd, "--%s: '%s' is not a fraction in (0, 1] (like 0.75 or 75%%)",
                           name, text ? text : "");
}

int cli_opt_percent(const char *cmd, const char *name, const char *text, double *out) {
    if (vram_parse_percent(text, out) == 0) return 0;
    return cli_usage_error(cmd, "--%s: '%s' is not a percentage in (0, 100] (like 90 or 92.5%%)",
                           name, text ? text : "");
}

void cli_getopt_reset(void) {
    optind = 0;
    opterr = 0;
}

/* ---- JSON writer --------------------------------------------------------------- */

void cli_json_init(cli_json *j, FILE *out) {
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Before any value: a comma when it is not the first in its container (keys handle
 * their own comma, so a value right after a key gets none). */
static void cli_json_pre_value(cli_json *j) {
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0 && j->depth < 64) {
        if (j->need_comma[j->depth]) fputc(',', j->out);
        j->need_comma[j->depth] = 1;
    }
}

static void cli_json_open(cli_json *j, char c) {
    cli_json_pre_value(j);
    fputc(c, j->out);
    j->depth++;
    if (j->depth < 64) j->need_comma[j->depth] = 0;
}

static void cli_json_close(cli_json *j, char c) {
    fputc(c, j->out);
    if (j->depth > 0) j->depth--;
}

void cli_json_begin_object(cli_json *j) { cli_json_open(j, '{'); }
void cli_json_end_object(cli_json *j) { cli_json_close(j, '}'); }
void cli_json_begin_array(cli_json *j) { cli_json_open(j, '['); }
void cli_json_end_array(cli_json *j) { cli_json_close(j, ']'); }

static void cli_json_raw_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void cli_json_key(cli_json *j, const char *key) {
    cli_json_pre_value(j);
    cli_json_raw_string(j->out, key);
    fputc(':', j->out);
    j->after_key = 1;
}

void cli_json_string(cli_json *j, const char *s) {
    cli_json_pre_value(j);
    if (s == NULL)
        fputs("null", j->out);
    else
        cli_json_raw_string(j->out, s);
}

void cli_json_u64(cli_json *j, uint64_t v) {
    cli_json_pre_value(j);
    fprintf(j->out, "%llu", (unsigned long long)v);
}

void cli_json_i64(cli_json *j, int64_t v) {
    cli_json_pre_value(j);
    fprintf(j->out, "%lld", (long long)v);
}

void cli_json_double(cli_json *j, double v) {
    cli_json_pre_value(j);
    if (isfinite(v))
        fprintf(j->out, "%.17g", v);
    else
        fputs("null", j->out);
}

void cli_json_bool(cli_json *j, int v) {
    cli_json_pre_value(j);
    fputs(v ? "true" : "false", j->out);
}

void cli_json_null(cli_json *j) {
    cli_json_pre_value(j);
    fputs("null", j->out);
}

void cli_json_finish(cli_json *j) {
    fputc('\n', j->out);
    fflush(j->out);
}

