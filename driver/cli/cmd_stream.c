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
#include "util/clock.h"

#define CMD "stream"
#define DEFAULT_BATCH VRAM_STREAM_DEFAULT_BATCH

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit stream FILE --dataset PATH [--dataset PATH]... [options]\n"
        "\n"
        "Streams the samples of datasets of an HDF5 file into device memory, chunk by chunk, in\n"
        "the order `vramkit chunks` plans, and says how fast: end to end, reading, copying.\n"
        "Unfiltered data is read with pread by several threads straight into pinned memory;\n"
        "compressed or converted data through HDF5.\n"
        "\n"
        "options:\n"
        "  --dataset PATH      a dataset (repeat; they share their first dimension)\n"
        "  --batch N           samples per batch (default %u)\n"
        "  --epochs N          epochs (default 1)\n"
        "  --shuffle [--seed S]  random chunk and sample order, fixed by (seed, epoch, rank)\n"
        "  --drop-last         drop each rank's final partial batch\n"
        "  --world auto|W      ranks sharing the data (default auto: the launcher's, else 1)\n"
        "  --rank R            this rank (default 0, or the launcher's); --no-pad: floor(N/W) each\n"
        "  --budget SIZE       device bytes for the chunk buffers (default: a fraction of free)\n"
        "  --fraction F        of free device memory (default 0.75); --reserve SIZE kept (0)\n"
        "  --buffers M         chunk buffers on the device (default 2)\n"
        "  --device DEV        cpu or cuda:N (default: a GPU when there is one; under a launcher\n"
        "                      its local rank's)\n"
        "  --readers N         reader threads (default: the CPUs, 2 to 16); --slab SIZE (64MiB)\n"
        "  --verify            check every sample against a plain HDF5 read, the order against\n"
        "                      the plan, and each epoch's exactly-once\n"
        "  --json              the report as JSON\n"
        "\n"
        "exit codes: 0 streamed (and verified), 1 --verify found a difference or a batch does not\n"
        "            fit, 2 bad usage or input (a file HDF5 crashes on or outgrows VRAMKIT_H5_MEMORY\n"
        "            with when opened), 3 environment error (I/O, e.g. a file truncated while\n"
        "            read; HDF5 past VRAMKIT_H5_TIMEOUT; no GPU; no HDF5)\n"
        "example:\n"
        "  vramkit stream train.h5 --dataset /features --dataset /targets --shuffle --verify\n"
        "Manual, with the JSON fields and the launchers' variables: docs/stream.md\n",
        DEFAULT_BATCH);
}

enum { FLAG_VERIFY = 1u << 0, FLAG_JSON = 1u << 1 };

static vram_status set(void *o, const char *name, const char *arg, char *err, size_t cap) {
    return vram_stream_set(o, name, arg, err, cap);
}

/* Returns -1 when parsing succeeded, else the exit code. */
static int parse(int argc, char **argv, vram_stream_opts *o, vram_ranks *ranks, int *verify, int *json) {
    char err[512];
    unsigned flags = 0;
    const cli_spec spec = {CMD,
                           "dataset= batch= epochs= shuffle seed= drop-last world= rank= no-pad "
                           "budget= fraction= reserve= buffers= device= readers= slab=",
                           "verify json", set, o, usage, NULL, 1, 0};
    int rc;
    memset(o, 0, sizeof *o);
    o->cfg.plan.batch = DEFAULT_BATCH;
    if ((rc = cli_parse(&spec, argc, argv, &flags)) >= 0) return rc;
    *verify = (flags & FLAG_VERIFY) != 0;
    *json = (flags & FLAG_JSON) != 0;
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
            double t = vram_now_s();
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
    if (vram_stream_report_make(s, vram_now_s() - s->started, &r) != VRAM_OK) {
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
