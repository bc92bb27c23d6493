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

int cli_exit_code(vram_status st) { return vram_exit_code(st); }

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
    char err[512];
    return cli_set(cmd, vram_opt_count(name, text, min, max, flags, out, err, sizeof err), err);
}

int cli_opt_size(const char *cmd, const char *name, const char *text, int allow_zero,
                 unsigned flags, uint64_t *out) {
    char err[512];
    return cli_set(cmd, vram_opt_size(name, text, allow_zero, flags, out, err, sizeof err), err);
}

int cli_opt_fraction(const char *cmd, const char *name, const char *text, double *out) {
    char err[512];
    return cli_set(cmd, vram_opt_fraction(name, text, out, err, sizeof err), err);
}

int cli_opt_percent(const char *cmd, const char *name, const char *text, double *out) {
    char err[512];
    return cli_set(cmd, vram_opt_percent(name, text, out, err, sizeof err), err);
}

void cli_getopt_reset(void) {
    optind = 0;
    opterr = 0;
}
