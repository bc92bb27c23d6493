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

int cli_set(const char *cmd, vram_status st, const char *err) {
    if (st == VRAM_OK) return 0;
    if (st == VRAM_E_UNHANDLED) return cli_usage_error(cmd, "unknown option");
    return cli_usage_error(cmd, "%s", err);
}

int cli_fail(const char *cmd, vram_status st, const char *err) {
    return cli_error(cli_exit_code(st), cmd, "%s", err);
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
