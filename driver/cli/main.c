/* driver/cli/main.c — `vramkit <command> [options]`: finds the command and hands over.
 * Each command lives in driver/cli/cmd_<name>.c and answers --help itself; this file only
 * knows the list, the version and the top-level help. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "probe/probe.h"
#include "isolate/exec_shim.h"
#include "stream/h5desc.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary; /* NULL: an internal command, left out of --help */
} cli_command;

static const cli_command commands[] = {
    {"plan", cmd_plan, "which load strategy fits, and where each component of a service lives"},
    {"estimate", cmd_estimate, "how much memory a model needs, term by term, and the preset to use"},
    {"chunks", cmd_chunks, "plan how a dataset is cut into GPU-resident chunks and batches"},
    {"stream", cmd_stream, "stream HDF5 datasets into device memory, chunk by chunk, and time it"},
    {"try", cmd_try, "run a load under each strategy in a child process until one works"},
    {"run", cmd_run, "start a service under the strategy chain and supervise it once it is ready"},
    {"doctor", cmd_doctor, "is this machine fit for CUDA work: what is wrong, and the fix"},
    {"__probe", vram_probe_child_main, NULL}, /* the child of doctor --probe (doctor/probe.h) */
    /* the first step of each child of try and run (isolate/exec_shim.h) */
    {VRAM_EXEC_SHIM_COMMAND, vram_exec_shim_main, NULL},
    {VRAM_H5_CHILD_COMMAND, vram_h5_child_main, NULL}, /* where HDF5 runs (stream/h5desc.h) */
    /* beside each child of try and run: its group dies with vramkit (isolate/exec_shim.h) */
    {VRAM_GUARD_COMMAND, vram_guard_main, NULL},
    {"watch", cmd_watch, "device memory every interval, with warnings: near the limit, leaks"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out) {
    fprintf(out,
            "usage: vramkit <command> [options]\n"
            "       vramkit <command> --help\n"
            "\n"
            "vramkit keeps machine-learning workloads inside GPU memory.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (commands[i].summary != NULL) fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "options:\n"
            "  -h, --help     this text\n"
            "  --version      print the version\n"
            "\n"
            "Sizes are accepted as bytes or with a unit: 512MiB, 8GiB, 7.5GB (KB/MB/GB/TB are\n"
            "powers of 1000, KiB/MiB/GiB/TiB powers of 1024).\n"
            "\n"
            "exit codes: 0 success, 1 the answer is \"no\" (does not fit, check failed),\n"
            "            2 bad usage or input, 3 environment error\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return VRAM_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return VRAM_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("vramkit %s\n", VRAM_VERSION_STRING);
        return VRAM_EXIT_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(name, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    }
    return cli_usage_error(name, "unknown command (run 'vramkit --help' for the list)");
}
