/* driver/cli/cmd_stream.c — `vramkit stream FILE --dataset PATH...`: streams the datasets of an
 * HDF5 file into device memory (stream/session.h), epoch after epoch, and reports the rate end
 * to end and per stage; --verify checks every sample (stream/verify.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_stream.h"
#include "loader/session.h"
#include "loader/verify.h"

#define CMD "stream"
#define DEFAULT_BATCH VRAM_STREAM_DEFAULT_BATCH

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit stream FILE --dataset PATH [--dataset PATH]... [--batch N] [--epochs N]\n"
        "                      [--shuffle [--seed S]] [--drop-last] [--world auto|W [--rank R]] [--no-pad]\n"
        "                      [--budget SIZE | --fraction F [--reserve SIZE]] [--buffers M]\n"
        "                      [--device cpu|cuda:N] [--readers N] [--slab SIZE] [--verify] [--json]\n"
        "\n"
        "Streams the samples of one or more datasets of an HDF5 file into device memory, chunk\n"
        "by chunk, in the order `vramkit chunks` plans, and reports how fast: end to end, and per\n"
        "stage (reading the file, copying to the device, the consumer waiting). The datasets\n"
        "must share their first dimension (the samples) and hold fixed-size types.\n"
        "\n"
        "How the bytes are read, per dataset (the report says which): unfiltered data in the\n"
        "file's own layout is read with pread by several threads straight into pinned memory;\n"
        "compressed or type-converted data through HDF5, one large read per range.\n"
        "\n"
        "options:\n"
        "  --dataset PATH      a dataset to stream (repeat for several, e.g. /features /targets)\n"
        "  --batch N           samples per batch (default %u)\n"
        "  --epochs N          epochs to stream (default 1)\n"
        "  --shuffle           random chunk order and random order within each chunk, fixed by\n"
        "                      (seed, epoch, rank); the rows are gathered on the device\n"
        "  --seed S            shuffle seed (default 0)\n"
        "  --drop-last         drop each rank's final partial batch\n"
        "  --world auto|W      ranks that share the dataset (default auto: the launcher's\n"
        "                      variables when one set them, else 1; see below)\n"
        "  --rank R            this rank, 0 <= R < W (default 0, or the launcher's)\n"
        "  --no-pad            give every rank floor(N/W) samples (default: ceil(N/W), padded\n"
        "                      by repeating samples 0, 1, ...)\n"
        "  --budget SIZE       device bytes for the chunk buffers (default: F of the device's\n"
        "                      free memory less the reserve)\n"
        "  --fraction F        of free device memory, in (0, 1], as 0.75 or 75%% (default 0.75)\n"
        "  --reserve SIZE      device memory kept for the model (default 0)\n"
        "  --buffers M         chunk buffers on the device (default 2: one loads while one is used)\n"
        "  --device DEV        cpu (host memory), or cuda:N (default: a GPU when one can be\n"
        "                      used, else cpu; the GPU is cuda:0, or with a launcher's ranks\n"
        "                      its local rank modulo the GPUs)\n"
        "  --readers N         reader threads (default: the CPUs, from 2 to 8)\n"
        "  --slab SIZE         pinned staging slab size (default 64MiB; 4 slabs)\n"
        "  --verify            check every delivered sample, byte for byte, against a plain HDF5\n"
        "                      read, the order against the plan, and that each epoch delivers\n"
        "                      each of the rank's samples exactly once (less drop-last's)\n"
        "  --json              print the report as JSON\n"
        "  -h, --help          this text\n",
        DEFAULT_BATCH);
    fprintf(out,
        "\n"
        "Rates are GB/s (10^9 bytes per second) of sample bytes: end to end (from the start,\n"
        "setup included, to the last batch), read (bytes read over the readers' busy time\n"
        "divided by the readers), copy (bytes copied to the device over the copy time). A\n"
        "progress bar is shown on a terminal only.\n"

        "\n"
        "JSON (--json): {file, datasets: [{name, shape, type, layout, filters, row_bytes,\n"
        "read_path, reason, offset, chunk_rows, chunks}], device, backend, staging, readers,\n"
        "plan: {samples, sample_bytes, batch, buffers, budget_bytes, samples_per_chunk,\n"
        "bytes_per_chunk, chunk_count, batches_per_epoch, rank_samples, dropped_last, world, rank,\n"
        "launcher, local_rank (null when not known), shuffle, seed, drop_last}, epochs: [{epoch,\n"
        "batches, samples, bytes_delivered, bytes_read, bytes_copied, bytes_gathered, chunks,\n"
        "read_seconds, copy_seconds, wait_seconds, seconds}], total: {the same summed}, setup_seconds, seconds, gbps:\n"
        "{end_to_end, read, copy}, verify: null or {ok, samples_checked, epochs_checked}}.\n"
        "\n"
        "exit codes: 0 streamed (and verified), 1 --verify found a difference, or a batch does\n"
        "not fit the budget, 2 bad usage or input (missing file or dataset, unmovable type,\n"
        "datasets of different lengths, empty dataset), 3 environment (I/O error while\n"
        "streaming, e.g. a file truncated under the reader; no GPU; built without HDF5)\n"
        "\n"
        "example:\n"
        "  vramkit stream train.h5 --dataset /features --dataset /targets --batch 128 \\\n"
        "      --epochs 3 --shuffle --seed 1 --verify\n");
    fprintf(out,
        "\n"
        "Ranks from the launcher (--world auto): torchrun's RANK, WORLD_SIZE, LOCAL_RANK; Open\n"
        "MPI's OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK; MPICH's PMI_RANK, PMI_SIZE,\n"
        "MPI_LOCALRANKID; Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, in that order of\n"
        "precedence. --world W (a number) ignores them; --rank R wins over the launcher's rank.\n"
        "A rank without its world size, a value that is not a number, or a rank not below the\n"
        "world size is bad input (exit 2), named in the message.\n");
}

enum { OPT_VERIFY = 1, OPT_JSON };

static const struct option long_options[] = {
    {"dataset", required_argument, NULL, CLI_BY_NAME},
    {"batch", required_argument, NULL, CLI_BY_NAME},
    {"epochs", required_argument, NULL, CLI_BY_NAME},
    {"shuffle", no_argument, NULL, CLI_BY_NAME},
    {"seed", required_argument, NULL, CLI_BY_NAME},
    {"drop-last", no_argument, NULL, CLI_BY_NAME},
    {"world", required_argument, NULL, CLI_BY_NAME},
    {"rank", required_argument, NULL, CLI_BY_NAME},
    {"no-pad", no_argument, NULL, CLI_BY_NAME},
    {"budget", required_argument, NULL, CLI_BY_NAME},
    {"fraction", required_argument, NULL, CLI_BY_NAME},
    {"reserve", required_argument, NULL, CLI_BY_NAME},
    {"buffers", required_argument, NULL, CLI_BY_NAME},
    {"device", required_argument, NULL, CLI_BY_NAME},
    {"readers", required_argument, NULL, CLI_BY_NAME},
    {"slab", required_argument, NULL, CLI_BY_NAME},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Returns -1 when parsing succeeded, else the exit code. */
static int parse(int argc, char **argv, vram_stream_opts *o, vram_ranks *ranks, int *verify, int *json) {
    char err[512];
    int rc, c, idx = 0;
    memset(o, 0, sizeof *o);
    o->cfg.plan.batch = DEFAULT_BATCH;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, &idx)) != -1) {
        switch (c) {
        case 'h': usage(stdout); return VRAM_EXIT_OK;
        case OPT_VERIFY: *verify = 1; break;
        case OPT_JSON: *json = 1; break;
        case CLI_BY_NAME:
            if ((rc = cli_set(CMD, vram_stream_set(o, long_options[idx].name, optarg, err, sizeof err), err)))
                return rc;
            break;
        case ':': return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit stream --help')",
                                   argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error(CMD, "FILE is required (see 'vramkit stream --help')");
    if (argc - optind > 1)
        return cli_usage_error(CMD, "unexpected argument '%s': one FILE only", argv[optind + 1]);
    o->file = argv[optind];
    rc = cli_set(CMD, vram_stream_check(o, ranks, err, sizeof err), err);
    return rc ? rc : -1;
}

/* ---- progress and the report --------------------------------------------------------- */

static void progress(double frac, uint64_t epoch, uint64_t epochs, double gbps) {
    char bar[41];
    int fill = (int)(frac * 40.0);
    for (int i = 0; i < 40; i++) bar[i] = i < fill ? '#' : '.';
    bar[40] = '\0';
    fprintf(stderr, "\r  [%s] %3.0f%%  epoch %llu/%llu  %.2f GB/s", bar, frac * 100.0,
            (unsigned long long)epoch, (unsigned long long)epochs, gbps);
    fflush(stderr);
}

static void print_text(const vram_stream_session *s, const vram_stream_report *r) {
    const vram_h5_file *f = s->f;
    const vram_chunks_plan *p = vram_streamer_plan(s->s);
    const vram_chunks_config *c = &p->config;
    char a[32], b[32], d[32];
    printf("vramkit stream: %s, %llu samples of %s (%s)\n", f->path, (unsigned long long)c->samples,
           vram_fmt_size(c->sample_bytes, a, sizeof a), vram_fmt_size(c->samples * c->sample_bytes, b, sizeof b));
    cli_h5_text(stdout, f);
    printf("plan      %llu chunk%s of up to %llu samples (%s) in %u buffer%s of a %s budget; %llu "
           "batches of %llu per epoch",
           (unsigned long long)p->chunk_count, p->chunk_count == 1 ? "" : "s",
           (unsigned long long)p->samples_per_chunk, vram_fmt_size(p->bytes_per_chunk, a, sizeof a),
           c->buffers, c->buffers == 1 ? "" : "s", vram_fmt_size(p->budget_bytes, b, sizeof b),
           (unsigned long long)p->batch_count, (unsigned long long)c->batch);
    if (c->world > 1) printf("; rank %u of %u", c->rank, c->world);
    if (s->ranks.launcher != VRAM_LAUNCHER_NONE && s->ranks.launcher != VRAM_LAUNCHER_FLAGS)
        printf(" (%s)", vram_launcher_name(s->ranks.launcher));
    if (c->shuffle) printf("; shuffled, seed %llu", (unsigned long long)c->seed);
    if (c->drop_last) printf("; drop-last");
    printf("\n");
    printf("device    %s, %s staging, %u reader%s\n", s->be.label, r->staging, r->readers,
           r->readers == 1 ? "" : "s");
    for (uint64_t e = 0; e < r->nepochs && r->nepochs <= 20; e++) {
        const vram_stream_stats *x = &r->epochs[e];
        printf("epoch %-3llu %llu batches, %s in %.3f s: %.2f GB/s, consumer waited %.3f s\n",
               (unsigned long long)e, (unsigned long long)x->batches,
               vram_fmt_size(x->bytes_delivered, a, sizeof a), x->seconds,
               vram_stream_rate(x->bytes_delivered, x->seconds), x->wait_seconds);
    }
    printf("total     %llu epoch%s, %llu batches, %llu samples, %s in %.3f s (setup %.3f s)\n",
           (unsigned long long)r->nepochs, r->nepochs == 1 ? "" : "s",
           (unsigned long long)r->total.batches, (unsigned long long)r->total.samples,
           vram_fmt_size(r->total.bytes_delivered, a, sizeof a), r->seconds, r->setup);
    printf("rate      end to end %.2f GB/s; read %.2f GB/s (%s read, %.3f s over %u readers)",
           vram_stream_rate(r->total.bytes_delivered, r->seconds), vram_stream_read_rate(r),
           vram_fmt_size(r->total.bytes_read, b, sizeof b), r->total.read_seconds, r->readers);
    if (r->total.bytes_copied)
        printf("; copy %.2f GB/s (%s)", vram_stream_rate(r->total.bytes_copied, r->total.copy_seconds),
               vram_fmt_size(r->total.bytes_copied, d, sizeof d));
    printf("\n");
    printf("consumer  waited %.3f s of %.3f s (%.0f%%)%s\n", r->total.wait_seconds, r->seconds,
           r->seconds > 0 ? 100.0 * r->total.wait_seconds / r->seconds : 0.0,
           r->total.wait_seconds > 0.5 * r->seconds ? ": loading is the bottleneck" : "");
    if (r->verified)
        printf("verify    ok: %llu samples equal HDF5's bytes, in the planned order; each of %llu "
               "epoch%s delivered each of the rank's samples once (%llu%s)\n",
               (unsigned long long)r->samples_checked, (unsigned long long)r->epochs_checked,
               r->epochs_checked == 1 ? "" : "s", (unsigned long long)(p->rank_samples - p->dropped_last),
               p->dropped_last ? ", after drop-last" : "");
}

/* ---- the command -------------------------------------------------------------------- */

/* A failure while streaming or verifying: verify's "no" is exit 1, anything else the
 * environment's. */
static int stream_fail(const vram_stream_verifier *v, const char *err) {
    if (v != NULL && v->failed) return cli_error(VRAM_EXIT_NO, CMD, "verify FAILED: %s", err);
    return cli_error(VRAM_EXIT_ENV, CMD, "%s%s", v != NULL ? "--verify: " : "", err);
}

/* Streams every batch (checking each with v when given), with a progress bar on a terminal.
 * Returns -1, or the exit code after the error line. */
static int stream_all(vram_stream_session *s, vram_stream_verifier *v, int show) {
    const vram_chunks_plan *plan = vram_streamer_plan(s->s);
    const uint64_t epochs = vram_streamer_config(s->s)->epochs;
    uint64_t total_batches = plan->batch_count * epochs, seen = 0, bytes = 0;
    double last_draw = 0;
    char err[VRAM_STREAM_ERR_MAX];
    vram_status st;
    /* Test hook (test_cli_stream.c): VRAMKIT_STREAM_TEST_FLIP=B:K flips byte K of the first
     * dataset's rows in the B-th batch delivered (host memory only), so that --verify's
     * failure path can be tested from outside. */
    unsigned long long flip_b = 0, flip_k = 0;
    const char *flip = getenv("VRAMKIT_STREAM_TEST_FLIP");
    int flipping = flip != NULL && !s->be.cuda && sscanf(flip, "%llu:%llu", &flip_b, &flip_k) == 2;
    for (;;) {
        vram_batch b;
        int rc = -1;
        if ((st = vram_streamer_next(s->s, &b)) != VRAM_OK)
            rc = cli_error(VRAM_EXIT_ENV, CMD, "%s", vram_streamer_error(s->s)[0] ? vram_streamer_error(s->s)
                                                                                 : vram_status_str(st));
        else if (b.done)
            break;
        if (rc < 0 && flipping && seen == flip_b && flip_k < b.count * s->f->ds[0].row_bytes)
            ((unsigned char *)b.data[0])[flip_k] ^= 0xffu;
        if (rc < 0 && v != NULL && vram_stream_verify_batch(v, &b, err, sizeof err) != VRAM_OK)
            rc = stream_fail(v, err);
        if (rc >= 0) {
            if (show) fprintf(stderr, "\r\033[K");
            return rc;
        }
        seen++;
        bytes += b.count * plan->config.sample_bytes;
        if ((st = vram_streamer_release(s->s, &b)) != VRAM_OK)
            return cli_error(VRAM_EXIT_ENV, CMD, "releasing a batch: %s", vram_status_str(st));
        if (show) {
            double t = vram_stream_now();
            if (t - last_draw > 0.1 || seen == total_batches) {
                progress((double)seen / (double)total_batches, b.epoch_index + 1u, epochs,
                         vram_stream_rate(bytes, t - s->started));
                last_draw = t;
            }
        }
    }
    if (show) fprintf(stderr, "\r\033[K");
    if (s->be.consumer != NULL && (st = s->be.ops.stream_sync(s->be.ops.ctx, s->be.consumer)) != VRAM_OK)
        return cli_error(VRAM_EXIT_ENV, CMD, "%s: waiting for the device: %s", s->be.label, vram_status_str(st));
    if (v != NULL && vram_stream_verify_end(v, epochs, err, sizeof err) != VRAM_OK) return stream_fail(v, err);
    return -1;
}

int cmd_stream(int argc, char **argv) {
    vram_stream_opts o;
    vram_ranks ranks;
    vram_stream_session *s = NULL;
    vram_stream_verifier v;
    vram_stream_report r;
    char err[VRAM_STREAM_ERR_MAX];
    int verify = 0, json = 0, rc;
    vram_status st;
    memset(&r, 0, sizeof r);
    if ((rc = parse(argc, argv, &o, &ranks, &verify, &json)) >= 0) return rc;
    if ((st = vram_stream_session_open(&o, &ranks, &s, err, sizeof err)) != VRAM_OK) return cli_fail(CMD, st, err);
    if (verify && vram_stream_verify_init(&v, s, err, sizeof err) != VRAM_OK) {
        rc = cli_error(VRAM_EXIT_ENV, CMD, "--verify: %s", err);
        verify = 0;
        goto out;
    }
    if ((rc = stream_all(s, verify ? &v : NULL, !json && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO))) >= 0)
        goto out;
    if (vram_stream_report_make(s, vram_stream_now() - s->started, &r) != VRAM_OK) {
        rc = cli_error(VRAM_EXIT_ENV, CMD, "out of host memory");
        goto out;
    }
    if (verify) {
        r.verified = 1;
        r.samples_checked = v.checked;
        r.epochs_checked = v.epochs_checked;
    }
    if (json) {
        vram_json j;
        vram_json_init(&j, stdout);
        vram_stream_report_json(&j, s, &r);
        vram_json_finish(&j);
    } else {
        print_text(s, &r);
    }
    rc = VRAM_EXIT_OK;
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = cli_error(VRAM_EXIT_ENV, CMD, "cannot write the report to standard output");
out:
    if (verify) vram_stream_verify_free(&v);
    vram_stream_report_free(&r);
    st = vram_stream_session_close(s);
    if (st != VRAM_OK && rc == VRAM_EXIT_OK)
        rc = cli_error(VRAM_EXIT_ENV, CMD, "closing the stream: %s", vram_status_str(st));
    return rc;
}
