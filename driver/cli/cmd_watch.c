/* driver/cli/cmd_watch.c — `vramkit watch`: device memory every interval, warnings inline.
 * The samples, warnings and processes come from gpustats/watch.h (vramkit/monitor.h's rules);
 * each round prints one line per device, then the warnings it raised, as text, CSV or JSON
 * lines, and is flushed at once, so `vramkit watch ... > log` can be read while it runs. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vramkit/monitor.h>

#include "cli.h"
#include "gpustats/watch.h"
#include "util/clock.h"

#define CMD "watch"

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit watch [--interval MS] [--count N] [--csv | --json] [--limit PCT]\n"
        "                     [--leak-threshold SIZE] [--epoch-every N] [--device N] [--host]\n"
        "                     [--processes]\n"
        "\n"
        "The memory of every GPU (or one) every MS milliseconds, like nvidia-smi -l, with the\n"
        "warnings it raises: near_limit (used reached --limit), leak (used grew by more than\n"
        "--leak-threshold over an epoch), rising_floor (the least in use rose 3 epochs in a\n"
        "row). Used is total - free: every process's memory. Read through NVML (no CUDA\n"
        "context), else the CUDA runtime (a context on each GPU; stderr says why).\n"
        "\n"
        "options:\n"
        "  --interval MS         between samples, 1 to %u (default %u)\n"
        "  --count N             stop after N samples of each device (default: until Ctrl-C;\n"
        "                        SIGINT or SIGTERM end cleanly, exit 0)\n"
        "  --csv | --json        CSV rows, or JSON lines, instead of text\n"
        "  --limit PCT           near-limit level, (0, 100] (default 90)\n"
        "  --leak-threshold SIZE growth over an epoch that is a leak (default 100MB)\n"
        "  --epoch-every N       N samples make an epoch (default: no epochs)\n"
        "  --device N            GPU N only\n"
        "  --host                the host's RAM instead (no GPU needed)\n"
        "  --processes           the processes on each GPU after its sample (NVML)\n"
        "\n"
        "exit codes: 0 done (count reached, or stopped), 2 bad usage or input, 3 environment\n"
        "            error (no GPU without --host, a sample failed, output cannot be written)\n"
        "example:\n"
        "  vramkit watch --interval 500 --csv > gpu_log.csv      # until Ctrl-C\n"
        "Manual, with the CSV columns and the JSON fields: docs/watch.md\n",
        VRAM_WATCH_MAX_INTERVAL_MS, VRAM_WATCH_DEFAULT_INTERVAL_MS);
}

enum { FLAG_CSV = 1u << 0, FLAG_JSON = 1u << 1 };

static vram_status set(void *o, const char *name, const char *arg, char *err, size_t cap) {
    return vram_watch_set(o, name, arg, err, cap);
}

typedef enum { FMT_TEXT, FMT_CSV, FMT_JSON } out_format;

typedef struct out_opts {
    vram_watch_opts w;
    out_format format;
    FILE *out;
    char line[2048];
} out_opts;

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, out_opts *o) {
    unsigned flags = 0;
    const cli_spec spec = {CMD, "interval= count= limit= leak-threshold= epoch-every= device= host processes",
                           "csv json", set, &o->w, usage, NULL, 1, 0};
    int rc = cli_parse(&spec, argc, argv, &flags), csv = (flags & FLAG_CSV) != 0, json = (flags & FLAG_JSON) != 0;
    if (rc >= 0) return rc;
    o->format = json ? FMT_JSON : csv ? FMT_CSV : FMT_TEXT;
    if (optind < argc)
        return cli_usage_error(CMD, "unexpected argument '%s' (see 'vramkit watch --help')",
                               argv[optind]);
    if (csv && json) return cli_usage_error(CMD, "give --csv or --json, not both");
    if (o->w.processes && o->w.host)
        return cli_usage_error(CMD, "--processes lists GPU processes: it does not go with --host");
    if (o->w.processes && csv)
        return cli_usage_error(CMD, "--processes goes with text or --json output, not --csv");
    return -1;
}

/* ---- stopping --------------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
    (void)sig;
    stop_requested = 1;
}

/* Sleeps until `deadline_ns` on CLOCK_MONOTONIC, or until a stop signal arrives. */
static void sleep_until(uint64_t deadline_ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / UINT64_C(1000000000));
    ts.tv_nsec = (long)(deadline_ns % UINT64_C(1000000000));
    while (!stop_requested) {
        int e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (e == 0 || e != EINTR) break;
    }
}

/* ---- output ----------------------------------------------------------------------- */

static void csv_field(FILE *out, const char *s) {
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void print_header(const out_opts *o, const vram_watch *w, int first, int n) {
    if (o->format == FMT_CSV) {
        fprintf(o->out, "type,elapsed_ms,timestamp,device,name,used_bytes,free_bytes,total_bytes,"
                        "used_percent,epoch,epoch_mark,warning,severity,message,recommendation\n");
        return;
    }
    if (o->format != FMT_TEXT) return;
    vram_monitor_config c = vram_monitor_defaults(&o->w.mon);
    char leak[32];
    if (c.leak_bytes % UINT64_C(1000000) == 0 && c.leak_bytes % (UINT64_C(1) << 20) != 0)
        snprintf(leak, sizeof leak, "%llu MB", (unsigned long long)(c.leak_bytes / 1000000u));
    else
        vram_fmt_size(c.leak_bytes, leak, sizeof leak);
    fprintf(o->out, "vramkit watch: %d device%s (%s backend", n, n == 1 ? "" : "s",
            vram_gpustats_backend(w->g));
    if (n == 1) fprintf(o->out, ": %s%d %s", vram_gpustats_label(w->g), first,
                        vram_gpustats_device_name(w->g, first));
    fprintf(o->out, "), every %llu ms, limit %g%%", (unsigned long long)w->interval_ms,
            c.limit * 100.0);
    if (w->epoch_every)
        fprintf(o->out, ", an epoch every %llu samples, leak threshold %s per epoch",
                (unsigned long long)w->epoch_every, leak);
    fprintf(o->out, "; %s\n", o->w.count ? "stops after the count" : "Ctrl-C stops");
}

static void print_sample(void *ctx, const vram_watch *w, const vram_monitor_sample *s,
                         uint64_t epoch, const char *stamp) {
    out_opts *o = ctx;
    const char *name = vram_gpustats_device_name(w->g, s->device);
    vram_json j;
    switch (o->format) {
    case FMT_TEXT:
        vram_gpustats_format_sample(vram_gpustats_label(w->g), s, 0, 0, o->line, sizeof o->line);
        fprintf(o->out, "%9.3fs  %s", (double)s->time_ms / 1000.0, o->line);
        if (s->epoch_mark && epoch == 0) fprintf(o->out, "  | epoch 1 starts");
        else if (s->epoch_mark) fprintf(o->out, "  | epoch %llu ends", (unsigned long long)epoch);
        fputc('\n', o->out);
        break;
    case FMT_CSV:
        fprintf(o->out, "sample,%llu,%s,%d,", (unsigned long long)s->time_ms, stamp, s->device);
        csv_field(o->out, name);
        fprintf(o->out, ",%llu,%llu,%llu,%.2f,%llu,%d,,,,\n", (unsigned long long)s->used_bytes,
                (unsigned long long)s->free_bytes, (unsigned long long)s->total_bytes,
                vram_watch_used_percent(s->used_bytes, s->total_bytes), (unsigned long long)epoch,
                s->epoch_mark ? 1 : 0);
        break;
    case FMT_JSON:
        vram_json_init(&j, o->out);
        vram_watch_sample_json(&j, w, s, epoch, stamp);
        vram_json_finish(&j);
        break;
    }
}

static void print_warning(void *ctx, const vram_watch *w, const vram_monitor_warning *x,
                          const char *stamp) {
    out_opts *o = ctx;
    vram_json j;
    switch (o->format) {
    case FMT_TEXT:
        vram_gpustats_format_warning(vram_gpustats_label(w->g), x, 1, o->line, sizeof o->line);
        fprintf(o->out, "%9.3fs  %s\n", (double)x->time_ms / 1000.0, o->line);
        break;
    case FMT_CSV:
        vram_gpustats_format_summary(x, o->line, sizeof o->line);
        fprintf(o->out, "warning,%llu,%s,%d,", (unsigned long long)x->time_ms, stamp, x->device);
        csv_field(o->out, vram_gpustats_device_name(w->g, x->device));
        fprintf(o->out, ",%llu,%llu,%llu,%.2f,%llu,,%s,%s,", (unsigned long long)x->used,
                (unsigned long long)x->free, (unsigned long long)x->total,
                vram_watch_used_percent(x->used, x->total), (unsigned long long)x->epoch,
                vram_monitor_warning_name(x->id), vram_monitor_severity_name(x->severity));
        csv_field(o->out, o->line);
        fputc(',', o->out);
        csv_field(o->out, vram_monitor_warning_recommendation(x->id));
        fputc('\n', o->out);
        break;
    case FMT_JSON:
        vram_json_init(&j, o->out);
        vram_watch_warning_json(&j, w, x, stamp);
        vram_json_finish(&j);
        break;
    }
}

/* The processes on GPU d after its sample. */
static void print_processes(void *ctx, int d, const vram_gpumem_proc *procs, int n,
                            uint64_t time_ms, const char *stamp) {
    out_opts *o = ctx;
    for (int i = 0; i < n; i++) {
        char cmd[64], size[32];
        vram_json j;
        if (o->format == FMT_JSON) {
            vram_json_init(&j, o->out);
            vram_watch_process_json(&j, d, &procs[i], time_ms, stamp);
            vram_json_finish(&j);
            continue;
        }
        int have = vram_watch_command(procs[i].pid, cmd, sizeof cmd);
        int known = procs[i].used_bytes != VRAM_GPUMEM_UNKNOWN;
        if (known) vram_fmt_size(procs[i].used_bytes, size, sizeof size);
        fprintf(o->out, "            pid %u %s %s used %s\n", procs[i].pid, have ? cmd : "?",
                procs[i].graphics ? "graphics" : "compute", known ? size : "unknown");
    }
    if (n == 0 && o->format == FMT_TEXT) fprintf(o->out, "            no process\n");
}

/* One round (gpustats/watch.h) written down. Returns -1, or the exit code after the error. */
static int round_of(out_opts *o, vram_watch *w) {
    const vram_watch_sink sink = {print_sample, print_processes, print_warning, o};
    char err[512];
    if (vram_watch_round(w, o->w.processes, &sink, err, sizeof err) != VRAM_OK) {
        fflush(o->out);
        return cli_error(VRAM_EXIT_ENV, CMD, "%s", err);
    }
    if (fflush(o->out) != 0 || ferror(o->out))
        return cli_error(VRAM_EXIT_ENV, CMD, "cannot write the samples: %s", strerror(errno));
    return -1;
}

static int run(out_opts *o) {
    vram_watch w;
    char note[512], err[512];
    int rc;
    vram_status st = vram_watch_open(&o->w, &w, note, sizeof note, err, sizeof err);
    if (st != VRAM_OK) return cli_fail(CMD, st, err);
    if (note[0]) fprintf(stderr, "vramkit: watch: %s\n", note);

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: the sleep wakes up */
    stop_requested = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    print_header(o, &w, w.first, w.last - w.first + 1);
    fflush(o->out);
    uint64_t start = vram_now_ns();
    rc = VRAM_EXIT_OK;
    for (uint64_t i = 0; (o->w.count == 0 || i < o->w.count) && !stop_requested; i++) {
        if (i > 0) {
            sleep_until(start + i * w.interval_ms * UINT64_C(1000000));
            if (stop_requested) break;
        }
        int r = round_of(o, &w);
        if (r >= 0) {
            rc = r;
            break;
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    vram_watch_close(&w);
    if (fflush(o->out) != 0 || ferror(o->out))
        if (rc == VRAM_EXIT_OK) rc = cli_error(VRAM_EXIT_ENV, CMD, "cannot write the samples");
    return rc;
}

int cmd_watch_ops(int argc, char **argv, const struct vram_device_ops *ops, FILE *out) {
    out_opts o;
    int rc;
    memset(&o, 0, sizeof o);
    if ((rc = parse(argc, argv, &o)) >= 0) return rc;
    o.w.ops = ops;
    o.out = out ? out : stdout;
    return run(&o);
}

int cmd_watch(int argc, char **argv) { return cmd_watch_ops(argc, argv, NULL, stdout); }
