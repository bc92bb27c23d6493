/* driver/cli_util.c — helpers every `vramkit` command shares.
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

int cli_parse_u64(const char *text, uint64_t max, uint64_t *out) {
    if (text == NULL || *text == '\0') return -1;
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (v > max) return -1;
    *out = v;
    return 0;
}

/* Units: decimal ones are powers of 1000 (as disks and `7.5GB` in a spec mean), binary
 * ones powers of 1024 (as GPU memory is reported). */
static const struct {
    const char *name;
    uint64_t factor;
} cli_units[] = {
    {"b", 1ull},
    {"k", 1000ull},
    {"kb", 1000ull},
    {"m", 1000000ull},
    {"mb", 1000000ull},
    {"g", 1000000000ull},
    {"gb", 1000000000ull},
    {"t", 1000000000000ull},
    {"tb", 1000000000000ull},
    {"kib", 1ull << 10},
    {"mib", 1ull << 20},
    {"gib", 1ull << 30},
    {"tib", 1ull << 40},
};

int cli_parse_size(const char *text, uint64_t *out) {
    if (text == NULL) return -1;
    const char *p = text;
    /* digits, optionally one '.' followed by digits */
    uint64_t whole = 0;
    int ndig = 0;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10) return -1;
        whole = whole * 10 + d;
        p++;
        ndig++;
    }
    /* fraction digits kept exactly as a ratio frac_num / frac_den (up to 18 digits) */
    uint64_t frac_num = 0, frac_den = 1;
    int has_dot = 0;
    if (*p == '.') {
        has_dot = 1;
        p++;
        int fdig = 0;
        while (*p >= '0' && *p <= '9') {
            if (fdig < 18) {
                frac_num = frac_num * 10 + (uint64_t)(*p - '0');
                frac_den *= 10;
            }
            p++;
            fdig++;
        }
        if (fdig == 0) return -1;
    }
    if (ndig == 0) return -1;
    while (*p == ' ') p++;
    char unit[8];
    size_t ulen = strlen(p);
    if (ulen >= sizeof unit) return -1;
    for (size_t i = 0; i <= ulen; i++) unit[i] = (char)tolower((unsigned char)p[i]);
    uint64_t factor = 1;
    if (ulen > 0) {
        size_t i, n = sizeof cli_units / sizeof cli_units[0];
        for (i = 0; i < n; i++)
            if (strcmp(unit, cli_units[i].name) == 0) break;
        if (i == n) return -1;
        factor = cli_units[i].factor;
    } else if (has_dot) {
        return -1; /* "1.5" bytes makes no sense */
    }
    uint64_t bytes;
    if (whole != 0 && factor > UINT64_MAX / whole) return -1;
    bytes = whole * factor;
    if (frac_num != 0) {
        /* factor * frac_num / frac_den, without overflow: factor <= 2^40, frac_num < 10^18 */
        long double part = (long double)factor * (long double)frac_num / (long double)frac_den;
        uint64_t ipart = (uint64_t)part;
        if (ipart != part) {
            if (factor == 1) return -1; /* fractional bytes */
        }
        if (bytes > UINT64_MAX - ipart) return -1;
        bytes += ipart;
    }
    *out = bytes;
    return 0;
}

/* A number in (0, max] with an optional '%' after it (which divides by `percent`: 100 for
 * a fraction, 1 for a percentage). The callers decide what may start the text. */
static int cli_parse_share(const char *text, double percent, double max, double *out) {
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno != 0 || end == text) return -1;
    if (*end == '%') {
        v /= percent;
        end++;
    }
    if (*end != '\0') return -1;
    if (!isfinite(v) || !(v > 0.0) || v > max) return -1;
    *out = v;
    return 0;
}

int cli_parse_fraction(const char *text, double *out) {
    if (text == NULL || *text == '\0') return -1;
    if (!(isdigit((unsigned char)text[0]) || text[0] == '.')) return -1;
    return cli_parse_share(text, 100.0, 1.0, out);
}

int cli_parse_percent(const char *text, double *out) {
    if (text == NULL || text[0] == '\0' || text[0] == '-' || text[0] == '+' || text[0] == ' ')
        return -1;
    return cli_parse_share(text, 1.0, 100.0, out);
}

/* ---- option values -------------------------------------------------------------------- */

int cli_opt_count(const char *cmd, const char *name, const char *text, uint64_t min, uint64_t max,
                  unsigned flags, uint64_t *out) {
    uint64_t v = 0;
    int parsed = cli_parse_u64(text, max, &v) == 0;
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
    int parsed = cli_parse_size(text, &v) == 0;
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
    if (cli_parse_fraction(text, out) == 0) return 0;
    return cli_usage_error(cmd, "--%s: '%s' is not a fraction in (0, 1] (like 0.75 or 75%%)",
                           name, text ? text : "");
}

int cli_opt_percent(const char *cmd, const char *name, const char *text, double *out) {
    if (cli_parse_percent(text, out) == 0) return 0;
    return cli_usage_error(cmd, "--%s: '%s' is not a percentage in (0, 100] (like 90 or 92.5%%)",
                           name, text ? text : "");
}

void cli_getopt_reset(void) {
    optind = 0;
    opterr = 0;
}

const char *cli_format_size(uint64_t bytes, char *buf, size_t cap) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, cap, "%.2f %s", v, units[u]);
    return buf;
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

int cli_read_json_file(const char *cmd, const char *opt, const char *path, size_t max,
                       struct cJSON **doc) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long len;
    *doc = NULL;
    if (f == NULL) {
        if (errno == ENOENT) return cli_usage_error(cmd, "%s %s: no such file", opt, path);
        return cli_error(VRAM_EXIT_ENV, cmd, "%s %s: %s", opt, path, strerror(errno));
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return cli_error(VRAM_EXIT_ENV, cmd, "%s %s: cannot read it (not a regular file?)", opt,
                         path);
    }
    if ((unsigned long)len > max) {
        fclose(f);
        return cli_usage_error(cmd, "%s %s: %ld bytes, over the limit of %zu", opt,
                               path, len, max);
    }
    text = malloc((size_t)len + 1);
    if (text == NULL || fread(text, 1, (size_t)len, f) != (size_t)len) {
        free(text);
        fclose(f);
        return cli_error(VRAM_EXIT_ENV, cmd, "%s %s: cannot read it", opt, path);
    }
    fclose(f);
    text[len] = '\0';
    *doc = cJSON_ParseWithLength(text, (size_t)len);
    if (*doc == NULL) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
        free(text);
        if (off >= 0) return cli_usage_error(cmd, "%s %s: not valid JSON (at byte %ld)", opt, path, off);
        return cli_usage_error(cmd, "%s %s: not valid JSON", opt, path);
    }
    free(text);
    return 0;
}
