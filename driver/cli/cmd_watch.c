/* driver/cli/cmd_watch.c — `vramkit watch`: device memory every interval, warnings inline.
 * Samples go through driver/gpustats/gpustats.h (and so through vramkit/monitor.h's rules); each
 * round prints one line per device, then the warnings it raised, as text, CSV or JSON lines,
 * and is flushed at once, so `vramkit watch ... > log` can be read while it runs. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vramkit/monitor.h>

#include "cli.h"
#include "gpustats/gpustats.h"
#include "device/host_device.h"
#include "nvml/nvml.h"

#define CMD "watch"
#define DEFAULT_INTERVAL_MS 1000u
#define MAX_INTERVAL_MS 86400000u /* a day */
#define NO_GPU_HINT "nothing to watch; --host watches the host's memory"

static void usage(FILE *out) {
    fputs(
        "usage: vramkit watch [--interval MS] [--count N] [--csv | --json] [--limit PCT]\n"
        "                     [--leak-threshold SIZE] [--epoch-every N] [--device N] [--host]\n"
        "                     [--processes]\n"
        "\n"
        "Samples the memory of every GPU (or one, --device) every MS milliseconds, like\n"
        "`nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l`, and prints each\n"
        "sample with the warnings it raises, each with a recommendation:\n"
        "  near_limit    used reached --limit percent of the total (warns once, then again\n"
        "                only after used fell 5 points below the limit)\n"
        "  leak          used grew by more than --leak-threshold over one epoch\n"
        "  rising_floor  the least memory in use rose in 3 epochs in a row (a slow leak)\n"
        "Used is total - free: every process's memory on the device, not only one program's.\n"
        "\n"
        "Memory is read through NVML (libnvidia-ml.so.1, the library nvidia-smi uses), which\n"
        "creates no CUDA context, so watching takes no GPU memory; NVML numbers GPUs as\n"
        "nvidia-smi does (PCI order, CUDA_VISIBLE_DEVICES not applied). Where NVML is missing\n"
        "or unusable, the CUDA runtime is used instead (it holds a context of a few hundred\n"
        "MiB on each GPU while watch runs): the header names the backend (nvml or cuda) and a\n"
        "line on stderr says why NVML was not used. VRAMKIT_NVML_LIBRARY=PATH loads another\n"
        "NVML library; an empty value rules NVML out.\n"
        "\n",
        out);
    fprintf(out,
        "options:\n"
        "  --interval MS         time between samples, 1 to %u ms (default %u)\n"
        "  --count N             stop after N samples of each device (default: run until\n"
        "                        Ctrl-C; SIGINT or SIGTERM ends cleanly with exit code 0)\n"
        "  --csv                 CSV: one header line, then rows whose first column, type, is\n"
        "                        \"sample\" or \"warning\"\n"
        "  --json                JSON lines: one object per sample or warning, with \"type\"\n"
        "  --limit PCT           near-limit level in percent of total, (0, 100], like 90 or\n"
        "                        92.5%% (default 90)\n"
        "  --leak-threshold SIZE epoch growth that is a suspected leak (default 100MB =\n"
        "                        100,000,000 bytes)\n"
        "  --epoch-every N       every N samples of a device make one epoch for the leak and\n"
        "                        rising-floor rules: the 1st sample opens epoch 1, sample\n"
        "                        1+N closes it (default: no epochs, so only near_limit fires;\n"
        "                        a training loop marks real epochs with the in-process API,\n"
        "                        driver/gpustats/gpustats.h)\n"
        "  --device N            watch GPU N only (default: every GPU)\n"
        "  --host                watch the host's RAM instead (total = physical memory, free =\n"
        "                        MemAvailable): works on a machine without a GPU\n"
        "  --processes           after each sample, the processes using that GPU and their\n"
        "                        memory (from NVML; text and --json only; exit 3 without NVML)\n"
        "  -h, --help            this text\n"
        "\n"
        "Sizes are bytes or a number with a unit: 512MiB, 8GiB, 100MB (KB/MB/GB/TB are\n"
        "powers of 1000, KiB/MiB/GiB/TiB powers of 1024).\n"
        "\n"
        "Text: a header line, then per sample \"SECONDS  gpuN used U / T (P%%), free F\", and\n"
        "per warning \"SECONDS  gpuN SEVERITY NAME: what; recommendation: what to do\".\n"
        "CSV columns: type, elapsed_ms, timestamp, device, name, used_bytes, free_bytes,\n"
        "total_bytes, used_percent, epoch, epoch_mark, warning, severity, message,\n"
        "recommendation (sample rows leave the last four empty).\n"
        "JSON lines: {\"type\":\"sample\", elapsed_ms, timestamp, device, name, used_bytes,\n"
        "free_bytes, total_bytes, used_percent, epoch, epoch_mark} and {\"type\":\"warning\",\n"
        "elapsed_ms, timestamp, device, name, id, severity, message, recommendation,\n"
        "used_bytes, free_bytes, total_bytes, epoch, threshold_bytes, and limit_percent\n"
        "(near_limit), growth_bytes, from_bytes, to_bytes (leak, rising_floor), epochs\n"
        "(rising_floor)}, and with --processes {\"type\":\"process\", elapsed_ms, timestamp,\n"
        "device, pid, command (from /proc, null when not visible), kind (compute or\n"
        "graphics), used_bytes (null when NVML cannot say)}. Text lists them under the sample:\n"
        "\"  pid PID COMMAND KIND used U\". elapsed_ms counts from the start; timestamp is UTC.\n"
        "\n"
        "example:\n"
        "  vramkit watch --interval 500 --csv > gpu_log.csv      # until Ctrl-C\n"
        "  vramkit watch --host --count 3 --interval 100\n"
        "\n"
        "exit codes: 0 done (count reached, or interrupted), 2 bad usage or input,\n"
        "            3 environment error (no NVIDIA driver or no GPU without --host, a sample\n"
        "            failed, output cannot be written)\n",
        MAX_INTERVAL_MS, DEFAULT_INTERVAL_MS);
}

enum { OPT_INTERVAL = 256, OPT_COUNT, OPT_CSV, OPT_JSON, OPT_LIMIT, OPT_LEAK, OPT_EPOCH_EVERY,
       OPT_DEVICE, OPT_HOST, OPT_PROCESSES };

static const struct option long_options[] = {
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"count", required_argument, NULL, OPT_COUNT},
    {"csv", no_argument, NULL, OPT_CSV},
    {"json", no_argument, NULL, OPT_JSON},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"leak-threshold", required_argument, NULL, OPT_LEAK},
    {"epoch-every", required_argument, NULL, OPT_EPOCH_EVERY},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"host", no_argument, NULL, OPT_HOST},
    {"processes", no_argument, NULL, OPT_PROCESSES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef enum { FMT_TEXT, FMT_CSV, FMT_JSON } out_format;

typedef struct opts {
    uint64_t interval_ms, count, epoch_every;
    int device; /* -1: every device */
    int host;
    int processes;
    out_format format;
    int have_csv, have_json;
    vram_monitor_config mon;
} opts;

/* Counts and sizes: a value starting with '-' is called negative; a count below the
 * minimum is out of range like any other, a size of 0 has its own line (cli.h). */
#define COUNT_WORDS CLI_OPT_NEGATIVE
#define SIZE_WORDS (CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST)

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, opts *o) {
    uint64_t v = 0;
    double pct = 0.0;
    int rc, c;
    memset(o, 0, sizeof *o);
    o->interval_ms = DEFAULT_INTERVAL_MS;
    o->device = -1;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        const char *a = optarg;
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_INTERVAL:
            if ((rc = cli_opt_count(CMD, "interval", a, 1, MAX_INTERVAL_MS, COUNT_WORDS, &o->interval_ms))) return rc;
            break;
        case OPT_COUNT:
            if ((rc = cli_opt_count(CMD, "count", a, 1, UINT64_MAX, COUNT_WORDS, &o->count))) return rc;
            break;
        case OPT_EPOCH_EVERY:
            if ((rc = cli_opt_count(CMD, "epoch-every", a, 1, UINT32_MAX, COUNT_WORDS, &o->epoch_every))) return rc;
            break;
        case OPT_DEVICE:
            if ((rc = cli_opt_count(CMD, "device", a, 0, VRAM_MONITOR_MAX_DEVICES - 1, COUNT_WORDS, &v))) return rc;
            o->device = (int)v;
            break;
        case OPT_CSV: o->have_csv = 1; o->format = FMT_CSV; break;
        case OPT_JSON: o->have_json = 1; o->format = FMT_JSON; break;
        case OPT_HOST: o->host = 1; break;
        case OPT_PROCESSES: o->processes = 1; break;
        case OPT_LIMIT:
            if ((rc = cli_opt_percent(CMD, "limit", a, &pct))) return rc;
            o->mon.limit = pct / 100.0;
            break;
        case OPT_LEAK:
            if ((rc = cli_opt_size(CMD, "leak-threshold", a, 0, SIZE_WORDS, &o->mon.leak_bytes))) return rc;
            break;
        case ':':
            return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit watch --help')",
                                   argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error(CMD, "unexpected argument '%s' (see 'vramkit watch --help')",
                               argv[optind]);
    if (o->have_csv && o->have_json) return cli_usage_error(CMD, "give --csv or --json, not both");
    if (o->processes && o->host)
        return cli_usage_error(CMD, "--processes lists GPU processes: it does not go with --host");
    if (o->processes && o->have_csv)
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

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* "2024-05-01T12:00:00.123Z" */
static void utc_stamp(char *buf, size_t cap) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, cap - n, ".%03ldZ", ts.tv_nsec / 1000000L);
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

typedef struct watch {
    const opts *o;
    vram_gpustats *g;
    const vram_gpumem_ops *mem; /* NVML when it is the source, else NULL */
    FILE *out;
    char line[2048];
} watch;

static double used_percent(uint64_t used, uint64_t total) {
    return total ? (double)used * 100.0 / (double)total : 0.0;
}

static void print_header(watch *w, int first, int n) {
    const opts *o = w->o;
    if (o->format == FMT_CSV) {
        fprintf(w->out, "type,elapsed_ms,timestamp,device,name,used_bytes,free_bytes,total_bytes,"
                        "used_percent,epoch,epoch_mark,warning,severity,message,recommendation\n");
        return;
    }
    if (o->format != FMT_TEXT) return;
    vram_monitor_config c = vram_monitor_defaults(&o->mon);
    char leak[32];
    if (c.leak_bytes % UINT64_C(1000000) == 0 && c.leak_bytes % (UINT64_C(1) << 20) != 0)
        snprintf(leak, sizeof leak, "%llu MB", (unsigned long long)(c.leak_bytes / 1000000u));
    else
        vram_fmt_size(c.leak_bytes, leak, sizeof leak);
    fprintf(w->out, "vramkit watch: %d device%s (%s backend", n, n == 1 ? "" : "s",
            vram_gpustats_backend(w->g));
    if (n == 1) fprintf(w->out, ": %s%d %s", vram_gpustats_label(w->g), first,
                        vram_gpustats_device_name(w->g, first));
    fprintf(w->out, "), every %llu ms, limit %g%%", (unsigned long long)o->interval_ms,
            c.limit * 100.0);
    if (o->epoch_every)
        fprintf(w->out, ", an epoch every %llu samples, leak threshold %s per epoch",
                (unsigned long long)o->epoch_every, leak);
    fprintf(w->out, "; %s\n", o->count ? "stops after the count" : "Ctrl-C stops");
}

static void print_sample(watch *w, const vram_monitor_sample *s, uint64_t epoch,
                         const char *stamp) {
    const char *name = vram_gpustats_device_name(w->g, s->device);
    double pct = used_percent(s->used_bytes, s->total_bytes);
    switch (w->o->format) {
    case FMT_TEXT:
        vram_gpustats_format_sample(vram_gpustats_label(w->g), s, 0, 0, w->line, sizeof w->line);
        fprintf(w->out, "%9.3fs  %s", (double)s->time_ms / 1000.0, w->line);
        if (s->epoch_mark && epoch == 0) fprintf(w->out, "  | epoch 1 starts");
        else if (s->epoch_mark) fprintf(w->out, "  | epoch %llu ends", (unsigned long long)epoch);
        fputc('\n', w->out);
        break;
    case FMT_CSV:
        fprintf(w->out, "sample,%llu,%s,%d,", (unsigned long long)s->time_ms, stamp, s->device);
        csv_field(w->out, name);
        fprintf(w->out, ",%llu,%llu,%llu,%.2f,%llu,%d,,,,\n", (unsigned long long)s->used_bytes,
                (unsigned long long)s->free_bytes, (unsigned long long)s->total_bytes, pct,
                (unsigned long long)epoch, s->epoch_mark ? 1 : 0);
        break;
    case FMT_JSON: {
        vram_json j;
        vram_json_init(&j, w->out);
        vram_json_begin_object(&j);
        vram_json_key(&j, "type");
        vram_json_string(&j, "sample");
        vram_json_key(&j, "elapsed_ms");
        vram_json_u64(&j, s->time_ms);
        vram_json_key(&j, "timestamp");
        vram_json_string(&j, stamp);
        vram_json_key(&j, "device");
        vram_json_i64(&j, s->device);
        vram_json_key(&j, "name");
        vram_json_string(&j, name);
        vram_json_key(&j, "used_bytes");
        vram_json_u64(&j, s->used_bytes);
        vram_json_key(&j, "free_bytes");
        vram_json_u64(&j, s->free_bytes);
        vram_json_key(&j, "total_bytes");
        vram_json_u64(&j, s->total_bytes);
        vram_json_key(&j, "used_percent");
        vram_json_double(&j, pct);
        vram_json_key(&j, "epoch");
        vram_json_u64(&j, epoch);
        vram_json_key(&j, "epoch_mark");
        vram_json_bool(&j, s->epoch_mark);
        vram_json_end_object(&j);
        vram_json_finish(&j);
        break;
    }
    }
}

static void print_warning(watch *w, const vram_monitor_warning *x, const char *stamp) {
    const char *name = vram_gpustats_device_name(w->g, x->device);
    const char *id = vram_monitor_warning_name(x->id);
    const char *sev = vram_monitor_severity_name(x->severity);
    const char *rec = vram_monitor_warning_recommendation(x->id);
    switch (w->o->format) {
    case FMT_TEXT:
        vram_gpustats_format_warning(vram_gpustats_label(w->g), x, 1, w->line, sizeof w->line);
        fprintf(w->out, "%9.3fs  %s\n", (double)x->time_ms / 1000.0, w->line);
        break;
    case FMT_CSV:
        vram_gpustats_format_summary(x, w->line, sizeof w->line);
        fprintf(w->out, "warning,%llu,%s,%d,", (unsigned long long)x->time_ms, stamp, x->device);
        csv_field(w->out, name);
        fprintf(w->out, ",%llu,%llu,%llu,%.2f,%llu,,%s,%s,", (unsigned long long)x->used,
                (unsigned long long)x->free, (unsigned long long)x->total,
                used_percent(x->used, x->total), (unsigned long long)x->epoch, id, sev);
        csv_field(w->out, w->line);
        fputc(',', w->out);
        csv_field(w->out, rec);
        fputc('\n', w->out);
        break;
    case FMT_JSON: {
        vram_json j;
        vram_gpustats_format_summary(x, w->line, sizeof w->line);
        vram_json_init(&j, w->out);
        vram_json_begin_object(&j);
        vram_json_key(&j, "type");
        vram_json_string(&j, "warning");
        vram_json_key(&j, "elapsed_ms");
        vram_json_u64(&j, x->time_ms);
        vram_json_key(&j, "timestamp");
        vram_json_string(&j, stamp);
        vram_json_key(&j, "device");
        vram_json_i64(&j, x->device);
        vram_json_key(&j, "name");
        vram_json_string(&j, name);
        vram_json_key(&j, "id");
        vram_json_string(&j, id);
        vram_json_key(&j, "severity");
        vram_json_string(&j, sev);
        vram_json_key(&j, "message");
        vram_json_string(&j, w->line);
        vram_json_key(&j, "recommendation");
        vram_json_string(&j, rec);
        vram_json_key(&j, "used_bytes");
        vram_json_u64(&j, x->used);
        vram_json_key(&j, "free_bytes");
        vram_json_u64(&j, x->free);
        vram_json_key(&j, "total_bytes");
        vram_json_u64(&j, x->total);
        vram_json_key(&j, "epoch");
        vram_json_u64(&j, x->epoch);
        vram_json_key(&j, "threshold_bytes");
        vram_json_u64(&j, x->threshold);
        if (x->id == VRAM_MONITOR_NEAR_LIMIT) {
            vram_json_key(&j, "limit_percent");
            vram_json_double(&j, (double)x->limit_ppm / 1e4);
        } else {
            vram_json_key(&j, "growth_bytes");
            vram_json_u64(&j, x->growth);
            vram_json_key(&j, "from_bytes");
            vram_json_u64(&j, x->from);
            vram_json_key(&j, "to_bytes");
            vram_json_u64(&j, x->to);
        }
        if (x->id == VRAM_MONITOR_RISING_FLOOR) {
            vram_json_key(&j, "epochs");
            vram_json_u64(&j, x->epochs);
        }
        vram_json_end_object(&j);
        vram_json_finish(&j);
        break;
    }
    }
}

/* NVML, and the device table over it, while watch runs (gpustats keeps a pointer). */
static vram_gpumem_ops nvml;
static vram_device_ops nvml_dev;

/* The command of a process as /proc shows it to us; 0 when not visible (another pid
 * namespace, a process gone). */
static int proc_command(uint32_t pid, char *buf, size_t cap) {
    char path[64];
    FILE *f;
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    if ((f = fopen(path, "re")) == NULL) return 0;
    if (fgets(buf, (int)cap, f) == NULL) {
        fclose(f);
        return 0;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return 1;
}

/* The processes on GPU d after its sample. 0, or -1 when NVML failed. */
static int print_processes(watch *w, int d, uint64_t time_ms, const char *stamp) {
    vram_gpumem_proc procs[VRAM_GPUMEM_MAX_PROCS];
    int n = 0;
    if (w->mem->processes(w->mem->ctx, d, procs, VRAM_GPUMEM_MAX_PROCS, &n) != VRAM_OK) return -1;
    for (int i = 0; i < n; i++) {
        char cmd[64], size[32];
        int have = proc_command(procs[i].pid, cmd, sizeof cmd);
        const char *kind = procs[i].graphics ? "graphics" : "compute";
        int known = procs[i].used_bytes != VRAM_GPUMEM_UNKNOWN;
        if (w->o->format == FMT_JSON) {
            vram_json j;
            vram_json_init(&j, w->out);
            vram_json_begin_object(&j);
            vram_json_key(&j, "type");
            vram_json_string(&j, "process");
            vram_json_key(&j, "elapsed_ms");
            vram_json_u64(&j, time_ms);
            vram_json_key(&j, "timestamp");
            vram_json_string(&j, stamp);
            vram_json_key(&j, "device");
            vram_json_i64(&j, d);
            vram_json_key(&j, "pid");
            vram_json_u64(&j, procs[i].pid);
            vram_json_key(&j, "command");
            if (have) vram_json_string(&j, cmd);
            else vram_json_null(&j);
            vram_json_key(&j, "kind");
            vram_json_string(&j, kind);
            vram_json_key(&j, "used_bytes");
            if (known) vram_json_u64(&j, procs[i].used_bytes);
            else vram_json_null(&j);
            vram_json_end_object(&j);
            vram_json_finish(&j);
        } else {
            if (known) vram_fmt_size(procs[i].used_bytes, size, sizeof size);
            fprintf(w->out, "            pid %u %s %s used %s\n", procs[i].pid, have ? cmd : "?",
                    kind, known ? size : "unknown");
        }
    }
    if (n == 0 && w->o->format == FMT_TEXT) fprintf(w->out, "            no process\n");
    return 0;
}

/* Opens the backend; on failure prints the one line and returns the exit code. Without a
 * given table and --host: NVML when it opens (*mem set), else the CUDA runtime. */
static int open_backend(const opts *o, const vram_device_ops *given, vram_gpustats **g,
                        const vram_gpumem_ops **mem) {
    char err[256];
    vram_device_ops host;
    const vram_device_ops *ops = given;
    *mem = NULL;
    if (ops == NULL && o->host) {
        host = vram_host_ops();
        ops = &host;
    }
    if (ops == NULL) {
        nvml = vram_nvml_ops(NULL);
        vram_status ns = nvml.open(nvml.ctx);
        if (ns == VRAM_OK) {
            nvml_dev = vram_gpumem_device_ops(&nvml);
            if (vram_gpustats_open(&nvml_dev, &o->mon, g, err, sizeof err) == VRAM_OK) {
                *mem = &nvml;
                return -1;
            }
            nvml.close(nvml.ctx);
            if (o->processes)
                return cli_error(VRAM_EXIT_ENV, CMD, "--processes: NVML opened but cannot be read: %s", err);
            fprintf(stderr, "vramkit: watch: NVML opened but cannot be read (%s): using the CUDA "
                            "runtime, which holds a context on each GPU\n", err);
        } else if (o->processes) {
            return cli_error(VRAM_EXIT_ENV, CMD, "--processes needs NVML: %s", nvml.error(nvml.ctx));
        } else {
            /* said only once the CUDA runtime did open: without a driver, that error says it */
            snprintf(err, sizeof err, "%s", nvml.error(nvml.ctx));
            vram_status st = vram_gpustats_open(NULL, &o->mon, g, NULL, 0);
            if (st == VRAM_OK) {
                fprintf(stderr, "vramkit: watch: NVML not used (%s): reading memory through the "
                                "CUDA runtime, which holds a context on each GPU\n", err);
                return -1;
            }
            /* an NVML that is there but unusable is the news; a missing one is not */
            if (ns != VRAM_E_NOT_SUPPORTED)
                return cli_error(VRAM_EXIT_ENV, CMD, "NVML cannot be used (%s), nor the CUDA "
                                                     "runtime (%s): " NO_GPU_HINT,
                                 err, vram_status_str(st));
        }
    } else if (o->processes) {
        return cli_error(VRAM_EXIT_ENV, CMD, "--processes needs NVML: the %s backend has no "
                                             "process list", ops->backend);
    }
    vram_status st = vram_gpustats_open(ops, &o->mon, g, err, sizeof err);
    if (st == VRAM_OK) return -1;
    if (ops == NULL) {
        if (st == VRAM_E_NO_DRIVER)
            return cli_error(VRAM_EXIT_ENV, CMD, "no NVIDIA driver: " NO_GPU_HINT);
        if (st == VRAM_E_NOT_BUILT)
            return cli_error(VRAM_EXIT_ENV, CMD, "this vramkit was built without CUDA: " NO_GPU_HINT);
        if (st == VRAM_E_NO_DEVICE)
            return cli_error(VRAM_EXIT_ENV, CMD, "%s: " NO_GPU_HINT, err);
    }
    if (st == VRAM_E_INVALID && ops != NULL && vram_device_ops_check(ops) == VRAM_OK)
        return cli_usage_error(CMD, "%s", err); /* the settings */
    return cli_error(VRAM_EXIT_ENV, CMD, "cannot watch the %s backend: %s",
                     ops ? ops->backend : "cuda", err);
}

static int run(const opts *o, const vram_device_ops *given, FILE *out) {
    watch w;
    vram_gpustats *g = NULL;
    const vram_gpumem_ops *mem = NULL;
    int rc = open_backend(o, given, &g, &mem);
    if (rc >= 0) return rc;
    int n = vram_gpustats_device_count(g);
    if (o->device >= n) {
        const char *what = vram_gpustats_label(g);
        vram_gpustats_close(g);
        if (n == 1)
            return cli_usage_error(CMD, "--device %d: this machine has one %s device, 0",
                                   o->device, what);
        return cli_usage_error(CMD, "--device %d: this machine has %d %s devices, 0 to %d",
                               o->device, n, what, n - 1);
    }
    int first = o->device >= 0 ? o->device : 0;
    int last = o->device >= 0 ? o->device : n - 1;
    memset(&w, 0, sizeof w);
    w.o = o;
    w.g = g;
    w.mem = mem;
    w.out = out;

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: the sleep wakes up */
    stop_requested = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    print_header(&w, first, last - first + 1);
    fflush(out);
    uint64_t start = mono_ns();
    rc = VRAM_EXIT_OK;
    for (uint64_t i = 0; (o->count == 0 || i < o->count) && !stop_requested; i++) {
        char stamp[40];
        if (i > 0) {
            sleep_until(start + i * o->interval_ms * UINT64_C(1000000));
            if (stop_requested) break;
        }
        int mark = o->epoch_every != 0 && i % o->epoch_every == 0;
        for (int d = first; d <= last; d++) {
            vram_monitor_sample s;
            vram_status st = vram_gpustats_sample_device(g, d, mark);
            utc_stamp(stamp, sizeof stamp);
            if (st != VRAM_OK) {
                fflush(out);
                rc = cli_error(VRAM_EXIT_ENV, CMD, "sample %llu: %s", (unsigned long long)(i + 1),
                               vram_gpustats_error(g));
                goto done;
            }
            if (vram_gpustats_last(g, d, &s) != VRAM_OK) continue;
            const vram_monitor_device *state = vram_gpustats_state(g, d);
            uint64_t epoch = state->marks - (s.epoch_mark ? 1u : 0u);
            print_sample(&w, &s, epoch, stamp);
            if (o->processes && print_processes(&w, d, s.time_ms, stamp) != 0) {
                fflush(out);
                rc = cli_error(VRAM_EXIT_ENV, CMD, "sample %llu: processes of GPU %d: %s",
                               (unsigned long long)(i + 1), d, mem->error(mem->ctx));
                goto done;
            }
        }
        vram_monitor_warning warn[16];
        size_t k = 0;
        do {
            if (vram_gpustats_warnings(g, warn, 16, &k) != VRAM_OK) break;
            for (size_t q = 0; q < k; q++) print_warning(&w, &warn[q], stamp);
        } while (k == 16);
        if (fflush(out) != 0 || ferror(out)) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "cannot write the samples: %s", strerror(errno));
            goto done;
        }
    }
done:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    vram_gpustats_close(g);
    if (mem) mem->close(mem->ctx);
    if (fflush(out) != 0 || ferror(out))
        if (rc == VRAM_EXIT_OK) rc = cli_error(VRAM_EXIT_ENV, CMD, "cannot write the samples");
    return rc;
}

int cmd_watch_ops(int argc, char **argv, const struct vram_device_ops *ops, FILE *out) {
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    return run(&o, ops, out ? out : stdout);
}

int cmd_watch(int argc, char **argv) { return cmd_watch_ops(argc, argv, NULL, stdout); }
