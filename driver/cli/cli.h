/* driver/cli/cli.h — what every `vramkit` command shares: exit codes, sizes, errors, JSON.
 * Commands are `int cmd_NAME(int argc, char **argv)` returning an exit code; main.c
 * dispatches to them. Errors go to stderr as one line naming the input. */
#ifndef VRAMKIT_CLI_H
#define VRAMKIT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include <vramkit/base.h>

#include "util/json.h"
#include "util/text.h"

/* Exit codes (documented in the README and every --help). */
enum {
    VRAM_EXIT_OK = 0,    /* success */
    VRAM_EXIT_NO = 1,    /* the answer is "no": does not fit, check failed */
    VRAM_EXIT_USAGE = 2, /* bad usage or input */
    VRAM_EXIT_ENV = 3    /* environment error (no GPU, I/O failure, ...) */
};

/* `vramkit: CMD: message` on stderr, one line. Returns VRAM_EXIT_USAGE for convenience. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with the code the caller wants returned. */
int cli_error(int code, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The exit code of a failure whose status says whose fault it is (util/text.h's
 * vram_exit_code: 1 does not fit, 3 the environment's, 2 the input's). */
int cli_exit_code(vram_status st);

/* Numbers, sizes and fractions from text, and sizes as text: util/text.h (vram_parse_u64,
 * vram_parse_size, vram_parse_fraction, vram_parse_percent, vram_fmt_size). */

/* ---- option values: util/text.h's vram_opt_*, the error printed ------------------------
 * Each returns 0 with *out set, or prints one line ("vramkit: CMD: --NAME: ...") and returns
 * VRAM_EXIT_USAGE. The flags are util/text.h's: */
#define CLI_OPT_NEGATIVE VRAM_OPT_NEGATIVE
#define CLI_OPT_AT_LEAST VRAM_OPT_AT_LEAST
#define CLI_OPT_BRIEF VRAM_OPT_BRIEF
/* A whole number in [min, max]; malformed: "'TEXT' is not a whole number from MIN to MAX". */
int cli_opt_count(const char *cmd, const char *name, const char *text, uint64_t min, uint64_t max,
                  unsigned flags, uint64_t *out);
/* A size (vram_parse_size), 0 only when allow_zero; malformed: "'TEXT' is not a size (bytes,
 * or a number with B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)". */
int cli_opt_size(const char *cmd, const char *name, const char *text, int allow_zero,
                 unsigned flags, uint64_t *out);
/* A fraction in (0, 1] (vram_parse_fraction). */
int cli_opt_fraction(const char *cmd, const char *name, const char *text, double *out);
/* A percentage in (0, 100] (vram_parse_percent); *out is the percentage (90 for "90%"). */
int cli_opt_percent(const char *cmd, const char *name, const char *text, double *out);

/* The getopt_long value of the options a command hands to its operation's setter by name
 * (vram_estimate_set, ...): the name is long_options[longindex].name. */
#define CLI_BY_NAME 4096

/* A setter's answer: 0, or the usage error printed ("vramkit: CMD: ERR") and its code. An
 * unknown name (VRAM_E_UNHANDLED) is a defect of the command's option table. */
int cli_set(const char *cmd, vram_status st, const char *err);
/* A failed operation: its one line, and the exit code its status says (cli_exit_code). */
int cli_fail(const char *cmd, vram_status st, const char *err);

/* Before a command's getopt_long loop: a full GNU reset (optind = 0, which also clears
 * getopt's state inside a half-scanned argv), so a command parses correctly however often
 * one process runs it (the in-process tests run many), and no getopt message of its own
 * (opterr = 0: the command words its errors). */
void cli_getopt_reset(void);

/* The commands. */
int cmd_chunks(int argc, char **argv);
int cmd_try(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_watch(int argc, char **argv);
/* cmd_doctor with the machine's sources injected (doctor/doctor.h; NULL: the real machine),
 * printing to `out` (NULL: stdout): the tests run the whole command over the mock. */
struct vram_doctor_config;
int cli_doctor_with(int argc, char **argv, const struct vram_doctor_config *base, FILE *out);
/* cmd_watch over a given device table, printing to `out` (the tests script the mock). */
struct vram_device_ops;
int cmd_watch_ops(int argc, char **argv, const struct vram_device_ops *ops, FILE *out);

#endif
