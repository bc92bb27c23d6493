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

/* ---- reading a command's options ----------------------------------------------------- */

#define CLI_MAX_OPTIONS 64

/* The words of a list appended to o[n ..] as struct options (names cut into buf): each one's
 * val is `val`, or, when val is 0, first, first + 1, ... in order. Returns the new count. */
static int add_words(const char *list, int val, int first, struct option *o, int n, char *buf,
                     size_t cap, size_t *used) {
    for (const char *p = list; p && *p && n < CLI_MAX_OPTIONS - 2;) {
        size_t len = strcspn(p, " ");
        if (len > 0 && *used + len + 1 <= cap) {
            int takes = p[len - 1] == '=';
            char *name = buf + *used;
            memcpy(name, p, len - (size_t)takes);
            name[len - (size_t)takes] = '\0';
            *used += len + 1;
            o[n].name = name;
            o[n].has_arg = takes ? required_argument : no_argument;
            o[n].flag = NULL;
            o[n].val = val ? val : first++;
            n++;
        }
        p += len;
        while (*p == ' ') p++;
    }
    return n;
}

int cli_parse(const cli_spec *s, int argc, char **argv, unsigned *flags) {
    struct option o[CLI_MAX_OPTIONS];
    char names[2048], err[4400];
    size_t used = 0;
    int n = 0, c, idx = 0, rc, end = s->argc_end ? s->argc_end : argc;
    n = add_words(s->options, CLI_BY_NAME, 0, o, n, names, sizeof names, &used);
    n = add_words(s->flags, 0, 1, o, n, names, sizeof names, &used);
    o[n].name = "help";
    o[n].has_arg = no_argument;
    o[n].flag = NULL;
    o[n].val = 'h';
    memset(&o[n + 1], 0, sizeof o[n + 1]);
    *flags = 0;
    cli_getopt_reset();
    while ((c = getopt_long(end, argv, ":h", o, &idx)) != -1) {
        if (c == 'h') {
            s->usage(s->help_out ? s->help_out : stdout);
            return VRAM_EXIT_OK;
        }
        if (c == CLI_BY_NAME) {
            if ((rc = cli_set(s->cmd, s->set(s->ctx, o[idx].name, optarg, err, sizeof err), err))) return rc;
        } else if (c >= 1 && c < 32) {
            *flags |= 1u << (c - 1);
        } else if (c == ':') {
            return cli_usage_error(s->cmd, s->quoted ? "option '%s' needs a value" : "%s needs a value",
                                   argv[optind - 1]);
        } else {
            return cli_usage_error(s->cmd, s->quoted ? "unknown option '%s' (see 'vramkit %s --help')"
                                                     : "unknown option '%s' (see vramkit %s --help)",
                                   argv[optind - 1], s->cmd);
        }
    }
    return -1;
}

void cli_getopt_reset(void) {
    optind = 0;
    opterr = 0;
}
