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

/* ---- reading a command's options ------------------------------------------------------
 * The options a command hands to its operation's setter by name (vram_estimate_set, ...) and
 * its own flags, each a word list: "batch= seq= checkpointing" ('=': it takes a value). */
#define CLI_WORKLOAD_OPTIONS                                                                 \
    "mode= format= compute= batch= seq= src-len= tgt-len= optimizer= checkpointing "        \
    "flash-attention grad-accum= lora-rank= lora-targets= images= image-tokens= logits= "
#define CLI_LAYOUT_OPTIONS "nodes= gpus-per-node= zero= tp= pp= micro-batches= offload= "

/* getopt_long's value for the options handed to the setter: the name says which. */
#define CLI_BY_NAME 4096

typedef vram_status (*cli_setter)(void *ctx, const char *name, const char *arg, char *err,
                                  size_t cap);

typedef struct cli_spec {
    const char *cmd;       /* "plan" */
    const char *options;   /* handed to set by name */
    const char *flags;     /* the command's own: "json list-models" (bit k for word k) */
    cli_setter set;
    void *ctx;
    void (*usage)(FILE *out);
    FILE *help_out;        /* where --help goes (NULL: stdout) */
    int quoted;            /* error words: "option 'X' needs a value", "(see 'vramkit CMD
                              --help')" (else "X needs a value", "(see vramkit CMD --help)") */
    int argc_end;          /* options end here (try, run: at "--"); 0: argc */
} cli_spec;

/* Reads the options of argv[0 .. argc) (argv[0] is the command). Returns -1 with *flags set
 * and optind at the first argument, or the exit code: 0 after --help, 2 after the error line
 * (an unknown option, a missing value, a value the setter refuses). */
int cli_parse(const cli_spec *s, int argc, char **argv, unsigned *flags);

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
