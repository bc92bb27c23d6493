/* driver/cli/cmd_stream.c — `vramkit stream FILE --dataset PATH...`: streams the datasets of an
 * HDF5 file into device memory with the streamer (stream.h), epoch after epoch, and reports
 * the rate end to end and per stage; --verify checks every sample against a plain HDF5 read
 * and each epoch's exactly-once property. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vramkit/chunks.h>

#include "cli.h"
#include "cli_stream.h"
#include "cuda/cuda_device.h"
#include "device/host_device.h"
#include "stream/stream.h"

/* The device gather for --shuffle on a GPU: the kernels library's, when the driver is built
 * against it (its header is then on the include path); without it, a shuffled stream on a
 * GPU is refused with a message that says why. */
#if defined(VRAMKIT_HAVE_CUDA) && defined(__has_include)
#if __has_include(<vramkit_kernels.h>)
#include <vramkit_kernels.h>
#define STREAM_DEVICE_GATHER vram_k_gather_rows
#endif
#endif
#ifndef STREAM_DEVICE_GATHER
#define STREAM_DEVICE_GATHER NULL
#endif

#define CMD "stream"
#define DEFAULT_BATCH 128u

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

enum {
    OPT_DATASET = 256, OPT_BATCH, OPT_EPOCHS, OPT_SHUFFLE, OPT_SEED, OPT_DROP_LAST, OPT_WORLD,
    OPT_RANK, OPT_NO_PAD, OPT_BUDGET, OPT_FRACTION, OPT_RESERVE, OPT_BUFFERS, OPT_DEVICE,
    OPT_READERS, OPT_SLAB, OPT_VERIFY, OPT_JSON
};

static const struct option long_options[] = {
    {"dataset", required_argument, NULL, OPT_DATASET},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"epochs", required_argument, NULL, OPT_EPOCHS},
    {"shuffle", no_argument, NULL, OPT_SHUFFLE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"drop-last", no_argument, NULL, OPT_DROP_LAST},
    {"world", required_argument, NULL, OPT_WORLD},
    {"rank", required_argument, NULL, OPT_RANK},
    {"no-pad", no_argument, NULL, OPT_NO_PAD},
    {"budget", required_argument, NULL, OPT_BUDGET},
    {"fraction", required_argument, NULL, OPT_FRACTION},
    {"reserve", required_argument, NULL, OPT_RESERVE},
    {"buffers", required_argument, NULL, OPT_BUFFERS},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"readers", required_argument, NULL, OPT_READERS},
    {"slab", required_argument, NULL, OPT_SLAB},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

enum { DEV_AUTO = 0, DEV_CPU = 1, DEV_CUDA = 2 };

typedef struct opts {
    const char *file;
    const char *names[VRAM_STREAM_MAX_DATASETS];
    uint32_t n_names;
    vram_stream_config cfg;
    int have_budget, have_fraction, have_reserve, have_seed;
    int device_kind, device;
    int verify, json;
    cli_world world;  /* --world, --rank */
    vram_ranks ranks; /* resolved: the flags', or the launcher's */
} opts;

/* Counts: a value starting with '-' is called negative, one below the minimum has its own
 * line; sizes: only zero has its own line (cli.h). */
#define COUNT_WORDS (CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST)
#define SIZE_WORDS CLI_OPT_AT_LEAST

/* -1 when it is a device, else the exit code. */
static int parse_device(const char *text, opts *o) {
    uint64_t n = 0;
    if (strcmp(text, "cpu") == 0) {
        o->device_kind = DEV_CPU;
        return -1;
    }
    if (strcmp(text, "cuda") == 0) {
        o->device_kind = DEV_CUDA;
        o->device = 0;
        return -1;
    }
    if (strncmp(text, "cuda:", 5) == 0 && vram_parse_u64(text + 5, VRAM_MAX_DEVICES - 1u, &n) == 0) {
        o->device_kind = DEV_CUDA;
        o->device = (int)n;
        return -1;
    }
    return cli_usage_error(CMD, "--device: '%s' is not cpu or cuda:N (N from 0 to %d)", text,
                           VRAM_MAX_DEVICES - 1);
}

/* Returns -1 when parsing succeeded, else the exit code. */
static int parse(int argc, char **argv, opts *o) {
    uint64_t v = 0;
    int rc, c;
    memset(o, 0, sizeof *o);
    o->cfg.plan.batch = DEFAULT_BATCH;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        const char *a = optarg;
        switch (c) {
        case 'h': usage(stdout); return VRAM_EXIT_OK;
        case OPT_DATASET:
            if (o->n_names == VRAM_STREAM_MAX_DATASETS)
                return cli_usage_error(CMD, "--dataset: at most %u datasets", VRAM_STREAM_MAX_DATASETS);
            o->names[o->n_names++] = a;
            break;
        case OPT_BATCH:
            if ((rc = cli_opt_count(CMD, "batch", a, 1, UINT64_MAX, COUNT_WORDS, &o->cfg.plan.batch))) return rc;
            break;
        case OPT_EPOCHS:
            if ((rc = cli_opt_count(CMD, "epochs", a, 1, VRAM_STREAM_MAX_EPOCHS, COUNT_WORDS, &o->cfg.epochs))) return rc;
            break;
        case OPT_SHUFFLE: o->cfg.plan.shuffle = 1; break;
        case OPT_SEED:
            if ((rc = cli_opt_count(CMD, "seed", a, 0, UINT64_MAX, COUNT_WORDS, &o->cfg.plan.seed))) return rc;
            o->have_seed = 1;
            break;
        case OPT_DROP_LAST: o->cfg.plan.drop_last = 1; break;
        case OPT_WORLD:
            if ((rc = cli_opt_world(CMD, a, &o->world))) return rc;
            break;
        case OPT_RANK:
            if ((rc = cli_opt_count(CMD, "rank", a, 0, UINT32_MAX - 1u, COUNT_WORDS, &v))) return rc;
            o->world.rank = (uint32_t)v;
            o->world.have_rank = 1;
            break;
        case OPT_NO_PAD: o->cfg.plan.shard = VRAM_SHARD_DROP; break;
        case OPT_BUDGET:
            if ((rc = cli_opt_size(CMD, "budget", a, 0, SIZE_WORDS, &o->cfg.plan.budget_bytes))) return rc;
            o->have_budget = 1;
            break;
        case OPT_FRACTION:
            if ((rc = cli_opt_fraction(CMD, "fraction", a, &o->cfg.plan.fraction))) return rc;
            o->have_fraction = 1;
            break;
        case OPT_RESERVE:
            if ((rc = cli_opt_size(CMD, "reserve", a, 1, SIZE_WORDS, &o->cfg.plan.reserve_bytes))) return rc;
            o->have_reserve = 1;
            break;
        case OPT_BUFFERS:
            if ((rc = cli_opt_count(CMD, "buffers", a, 1, 64, COUNT_WORDS, &v))) return rc;
            o->cfg.plan.buffers = (uint32_t)v;
            break;
        case OPT_DEVICE:
            if ((rc = parse_device(a, o)) >= 0) return rc;
            break;
        case OPT_READERS:
            if ((rc = cli_opt_count(CMD, "readers", a, 1, VRAM_STREAM_MAX_READERS, COUNT_WORDS, &v))) return rc;
            o->cfg.readers = (uint32_t)v;
            break;
        case OPT_SLAB:
            if ((rc = cli_opt_size(CMD, "slab", a, 0, SIZE_WORDS, &o->cfg.slab_bytes))) return rc;
            break;
        case OPT_VERIFY: o->verify = 1; break;
        case OPT_JSON: o->json = 1; break;
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
    if (o->n_names == 0) return cli_usage_error(CMD, "--dataset is required (e.g. --dataset /features)");
    if (o->have_budget && (o->have_fraction || o->have_reserve))
        return cli_usage_error(CMD, "--budget is a fixed size: --fraction and --reserve apply to "
                                    "the device's free memory instead");
    if (o->have_seed && !o->cfg.plan.shuffle)
        return cli_usage_error(CMD, "--seed applies to --shuffle, which is missing");
    if ((rc = cli_ranks(CMD, &o->world, &o->ranks)) >= 0) return rc;
    o->cfg.plan.world = o->ranks.world;
    o->cfg.plan.rank = o->ranks.rank;
    return -1;
}

/* ---- the device ---------------------------------------------------------------------- */

typedef struct device {
    vram_device_ops ops;
    char label[64]; /* "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)" */
    int cuda;
} device;

static int open_device(opts *o, device *dv) {
    memset(dv, 0, sizeof *dv);
    if (o->device_kind != DEV_CPU) {
        int count = 0;
        vram_status st = vram_cuda_ops(&dv->ops);
        if (st == VRAM_OK) st = dv->ops.device_count(dv->ops.ctx, &count);
        if (st == VRAM_OK && count > 0) {
            /* no --device: one GPU a process, by the launcher's local rank */
            if (o->device_kind == DEV_AUTO && o->ranks.launcher != VRAM_LAUNCHER_NONE &&
                o->ranks.launcher != VRAM_LAUNCHER_FLAGS &&
                vram_ranks_gpu(&o->ranks, count, &o->device) != VRAM_OK)
                o->device = 0;
            if (o->device >= count) {
                return cli_error(VRAM_EXIT_ENV, CMD, "--device cuda:%d: this machine has %d GPU%s",
                                 o->device, count, count == 1 ? "" : "s");
            }
            vram_device_info info;
            dv->cuda = 1;
            o->cfg.device = o->device;
            if (dv->ops.device_info(dv->ops.ctx, o->device, &info) == VRAM_OK)
                snprintf(dv->label, sizeof dv->label, "cuda:%d (%.40s)", o->device, info.name);
            else
                snprintf(dv->label, sizeof dv->label, "cuda:%d", o->device);
            return -1;
        }
        if (o->device_kind == DEV_CUDA) {
            if (st == VRAM_E_NOT_BUILT)
                return cli_error(VRAM_EXIT_ENV, CMD, "--device cuda:%d: this vramkit was built "
                                                     "without CUDA", o->device);
            return cli_error(VRAM_EXIT_ENV, CMD, "--device cuda:%d: no usable GPU (%s)", o->device,
                             st == VRAM_OK ? "no device" : vram_status_str(st));
        }
    }
    dv->ops = vram_host_ops();
    o->cfg.device = 0;
    snprintf(dv->label, sizeof dv->label, "cpu (host memory)");
    return -1;
}

/* ---- verify: the plan's order, HDF5's bytes, exactly once per epoch ------------------- */

typedef struct verifier {
    vram_h5_file *f;
    const vram_chunks_plan *p;
    uint64_t first_epoch;
    const device *dv;
    vram_stream consumer;
    uint64_t *corder, *rows;
    uint64_t e, k, j; /* epoch index, visit, batch of the chunk expected next */
    int have_chunk;
    vram_chunk ch;
    uint64_t region_off[VRAM_STREAM_MAX_DATASETS];
    uint8_t *ref;                              /* the chunk, as HDF5 reads it */
    uint8_t *host[VRAM_STREAM_MAX_DATASETS];   /* a batch copied back from a GPU */
    uint8_t *seen;                             /* this epoch's delivered samples (bits) */
    uint64_t seen_count, checked, epochs_checked;
} verifier;

static void verifier_free(verifier *v) {
    free(v->corder);
    free(v->rows);
    free(v->ref);
    free(v->seen);
    for (uint32_t d = 0; d < VRAM_STREAM_MAX_DATASETS; d++) free(v->host[d]);
}

static int verifier_init(verifier *v, vram_h5_file *f, const vram_chunks_plan *p, uint64_t first_epoch,
                         const device *dv, vram_stream consumer) {
    char sz[32];
    memset(v, 0, sizeof *v);
    v->f = f;
    v->p = p;
    v->first_epoch = first_epoch;
    v->dv = dv;
    v->consumer = consumer;
    v->corder = (uint64_t *)malloc((size_t)p->chunk_count * sizeof(uint64_t));
    v->rows = (uint64_t *)malloc((size_t)p->samples_per_chunk * sizeof(uint64_t));
    v->ref = (uint8_t *)malloc((size_t)p->bytes_per_chunk);
    v->seen = (uint8_t *)calloc((size_t)(p->config.samples / 8u + 1u), 1);
    int ok = v->corder && v->rows && v->ref && v->seen;
    uint64_t off = 0;
    for (uint32_t d = 0; d < f->datasets && ok; d++) {
        v->region_off[d] = off;
        off += p->samples_per_chunk * f->ds[d].row_bytes;
        if (dv->cuda) {
            v->host[d] = (uint8_t *)malloc((size_t)(p->config.batch * f->ds[d].row_bytes));
            ok = v->host[d] != NULL;
        }
    }
    if (!ok) {
        verifier_free(v);
        return cli_error(VRAM_EXIT_ENV, CMD, "--verify: not enough host memory to check a chunk of %s",
                         vram_fmt_size(p->bytes_per_chunk, sz, sizeof sz));
    }
    v->e = UINT64_MAX;
    return -1;
}

static int vfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int vfail(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "vramkit: %s: verify FAILED: ", CMD);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return VRAM_EXIT_NO;
}

/* Is sample s one of this rank's (positions [rank_start, rank_end) mod n)? */
static int in_rank(const vram_chunks_plan *p, uint64_t s) {
    uint64_t n = p->config.samples, a = p->rank_start % n, len = p->rank_samples;
    uint64_t d = s >= a ? s - a : s + n - a;
    return d < len;
}

static int end_epoch(verifier *v) {
    uint64_t want = v->p->rank_samples - v->p->dropped_last;
    if (v->seen_count != want)
        return vfail("epoch %llu delivered %llu samples, the plan says %llu",
                     (unsigned long long)(v->first_epoch + v->e), (unsigned long long)v->seen_count,
                     (unsigned long long)want);
    memset(v->seen, 0, (size_t)(v->p->config.samples / 8u + 1u));
    v->seen_count = 0;
    v->epochs_checked++;
    return -1;
}

/* The next chunk the plan visits; reads it with HDF5. */
static int next_chunk(verifier *v) {
    char err[VRAM_STREAM_ERR_MAX];
    const vram_chunks_plan *p = v->p;
    if (v->e == UINT64_MAX || v->k + 1u == p->chunk_count) {
        if (v->e != UINT64_MAX) {
            int rc = end_epoch(v);
            if (rc >= 0) return rc;
        }
        v->e = v->e == UINT64_MAX ? 0 : v->e + 1u;
        v->k = 0;
        if (vram_chunks_chunk_order(p, v->first_epoch + v->e, v->corder, p->chunk_count) != VRAM_OK)
            return cli_error(VRAM_EXIT_ENV, CMD, "--verify: internal error: chunk order");
    } else {
        v->k++;
    }
    v->j = 0;
    uint64_t i = v->corder[v->k];
    if (vram_chunks_chunk(p, i, &v->ch) != VRAM_OK ||
        vram_chunks_sample_order(p, i, v->first_epoch + v->e, v->rows, p->samples_per_chunk) != VRAM_OK)
        return cli_error(VRAM_EXIT_ENV, CMD, "--verify: internal error: chunk %llu", (unsigned long long)i);
    for (uint32_t d = 0; d < v->f->datasets; d++) {
        uint64_t row = 0, rb = v->f->ds[d].row_bytes;
        for (int r = 0; r < 2; r++) {
            uint64_t a = v->ch.samples[r].start, len = v->ch.samples[r].end - a;
            if (len == 0) continue;
            if (cli_h5_read_plain(v->f, d, a, len, v->ref + v->region_off[d] + row * rb, err,
                                   sizeof err) != VRAM_OK)
                return cli_error(VRAM_EXIT_ENV, CMD, "--verify: %s", err);
            row += len;
        }
    }
    v->have_chunk = 1;
    return -1;
}

static int verify_batch(verifier *v, const vram_batch *b) {
    const vram_chunks_plan *p = v->p;
    vram_range slots;
    int rc;
    if (!v->have_chunk || v->j == v->ch.batches) {
        if ((rc = next_chunk(v)) >= 0) return rc;
    }
    uint64_t i = v->corder[v->k], epoch = v->first_epoch + v->e;
    if (vram_chunks_batch(p, i, v->j, &slots) != VRAM_OK)
        return cli_error(VRAM_EXIT_ENV, CMD, "--verify: internal error: batch %llu of chunk %llu",
                         (unsigned long long)v->j, (unsigned long long)i);
    if (b->epoch != epoch || b->chunk != i || b->count != slots.end - slots.start)
        return vfail("epoch %llu: got batch of %llu samples of chunk %llu in epoch %llu, the plan "
                     "says batch %llu of chunk %llu (%llu samples)",
                     (unsigned long long)epoch, (unsigned long long)b->count,
                     (unsigned long long)b->chunk, (unsigned long long)b->epoch,
                     (unsigned long long)v->j, (unsigned long long)i,
                     (unsigned long long)(slots.end - slots.start));
    if (v->dv->cuda) {
        for (uint32_t d = 0; d < v->f->datasets; d++) {
            vram_status st = v->dv->ops.memcpy_async(v->dv->ops.ctx, v->host[d], b->data[d],
                                                     b->count * v->f->ds[d].row_bytes, VRAM_COPY_D2H,
                                                     v->consumer);
            if (st != VRAM_OK)
                return cli_error(VRAM_EXIT_ENV, CMD, "--verify: copying a batch back: %s", vram_status_str(st));
        }
        vram_status st = v->dv->ops.stream_sync(v->dv->ops.ctx, v->consumer);
        if (st != VRAM_OK)
            return cli_error(VRAM_EXIT_ENV, CMD, "--verify: waiting for the device: %s", vram_status_str(st));
    }
    for (uint64_t k = 0; k < b->count; k++) {
        uint64_t row = p->config.shuffle ? v->rows[slots.start + k] : slots.start + k;
        uint64_t want = (v->ch.start + row) % p->config.samples;
        if (b->samples[k] != want)
            return vfail("epoch %llu, chunk %llu, batch %llu, row %llu: sample %llu, the plan says %llu",
                         (unsigned long long)epoch, (unsigned long long)i, (unsigned long long)v->j,
                         (unsigned long long)k, (unsigned long long)b->samples[k], (unsigned long long)want);
        if (!in_rank(p, want))
            return vfail("epoch %llu: sample %llu is not one of rank %u's", (unsigned long long)epoch,
                         (unsigned long long)want, p->config.rank);
        if (v->seen[want / 8u] & (1u << (want % 8u)))
            return vfail("epoch %llu: sample %llu delivered twice", (unsigned long long)epoch,
                         (unsigned long long)want);
        v->seen[want / 8u] |= (uint8_t)(1u << (want % 8u));
        v->seen_count++;
        for (uint32_t d = 0; d < v->f->datasets; d++) {
            uint64_t rb = v->f->ds[d].row_bytes;
            const uint8_t *got = (v->dv->cuda ? v->host[d] : (const uint8_t *)b->data[d]) + k * rb;
            const uint8_t *ref = v->ref + v->region_off[d] + row * rb;
            if (memcmp(got, ref, (size_t)rb) != 0) {
                uint64_t at = 0;
                while (at < rb && got[at] == ref[at]) at++;
                return vfail("epoch %llu, batch %llu, row %llu: %s of sample %llu differs from HDF5's "
                             "bytes at byte %llu of %llu",
                             (unsigned long long)epoch, (unsigned long long)b->index,
                             (unsigned long long)k, v->f->ds[d].name, (unsigned long long)want,
                             (unsigned long long)at, (unsigned long long)rb);
            }
        }
        v->checked++;
    }
    v->j++;
    return -1;
}

static int verify_end(verifier *v, uint64_t epochs) {
    if (v->have_chunk) {
        if (v->j != v->ch.batches || v->k + 1u != v->p->chunk_count)
            return vfail("the stream ended inside epoch %llu", (unsigned long long)(v->first_epoch + v->e));
        int rc = end_epoch(v);
        if (rc >= 0) return rc;
    }
    if (v->epochs_checked != epochs)
        return vfail("%llu epochs delivered, %llu asked for", (unsigned long long)v->epochs_checked,
                     (unsigned long long)epochs);
    return -1;
}

/* ---- progress and the report --------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(double frac, uint64_t epoch, uint64_t epochs, double gbps) {
    char bar[41];
    int fill = (int)(frac * 40.0);
    for (int i = 0; i < 40; i++) bar[i] = i < fill ? '#' : '.';
    bar[40] = '\0';
    fprintf(stderr, "\r  [%s] %3.0f%%  epoch %llu/%llu  %.2f GB/s", bar, frac * 100.0,
            (unsigned long long)epoch, (unsigned long long)epochs, gbps);
    fflush(stderr);
}

static double rate(uint64_t bytes, double seconds) { return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0; }

typedef struct result {
    vram_stream_stats total;
    vram_stream_stats *epochs;
    double setup, seconds;
    uint32_t readers;
    const char *staging;
} result;

static double read_rate(const result *r) {
    return r->total.read_seconds > 0 ? rate(r->total.bytes_read, r->total.read_seconds / r->readers) : 0.0;
}

static void stats_json(vram_json *j, const vram_stream_stats *x) {
    vram_json_key(j, "batches"); vram_json_u64(j, x->batches);
    vram_json_key(j, "samples"); vram_json_u64(j, x->samples);
    vram_json_key(j, "bytes_delivered"); vram_json_u64(j, x->bytes_delivered);
    vram_json_key(j, "bytes_read"); vram_json_u64(j, x->bytes_read);
    vram_json_key(j, "bytes_copied"); vram_json_u64(j, x->bytes_copied);
    vram_json_key(j, "bytes_gathered"); vram_json_u64(j, x->bytes_gathered);
    vram_json_key(j, "chunks"); vram_json_u64(j, x->chunks);
    vram_json_key(j, "read_seconds"); vram_json_double(j, x->read_seconds);
    vram_json_key(j, "copy_seconds"); vram_json_double(j, x->copy_seconds);
    vram_json_key(j, "wait_seconds"); vram_json_double(j, x->wait_seconds);
    vram_json_key(j, "seconds"); vram_json_double(j, x->seconds);
}

static void print_json(const opts *o, const vram_h5_file *f, const device *dv, const vram_chunks_plan *p,
                       const result *r, const verifier *v) {
    vram_json j;
    const vram_chunks_config *c = &p->config;
    vram_json_init(&j, stdout);
    vram_json_begin_object(&j);
    cli_h5_json(&j, f);
    vram_json_key(&j, "device"); vram_json_string(&j, dv->label);
    vram_json_key(&j, "backend"); vram_json_string(&j, dv->ops.backend);
    vram_json_key(&j, "staging"); vram_json_string(&j, r->staging);
    vram_json_key(&j, "readers"); vram_json_u64(&j, r->readers);
    vram_json_key(&j, "plan");
    vram_json_begin_object(&j);
    vram_json_key(&j, "samples"); vram_json_u64(&j, c->samples);
    vram_json_key(&j, "sample_bytes"); vram_json_u64(&j, c->sample_bytes);
    vram_json_key(&j, "batch"); vram_json_u64(&j, c->batch);
    vram_json_key(&j, "buffers"); vram_json_u64(&j, c->buffers);
    vram_json_key(&j, "budget_bytes"); vram_json_u64(&j, p->budget_bytes);
    vram_json_key(&j, "samples_per_chunk"); vram_json_u64(&j, p->samples_per_chunk);
    vram_json_key(&j, "bytes_per_chunk"); vram_json_u64(&j, p->bytes_per_chunk);
    vram_json_key(&j, "chunk_count"); vram_json_u64(&j, p->chunk_count);
    vram_json_key(&j, "batches_per_epoch"); vram_json_u64(&j, p->batch_count);
    vram_json_key(&j, "rank_samples"); vram_json_u64(&j, p->rank_samples);
    vram_json_key(&j, "dropped_last"); vram_json_u64(&j, p->dropped_last);
    vram_json_key(&j, "world"); vram_json_u64(&j, c->world);
    vram_json_key(&j, "rank"); vram_json_u64(&j, c->rank);
    vram_json_key(&j, "launcher"); vram_json_string(&j, vram_launcher_name(o->ranks.launcher));
    vram_json_key(&j, "local_rank");
    if (o->ranks.local_rank >= 0) vram_json_i64(&j, o->ranks.local_rank); else vram_json_null(&j);
    vram_json_key(&j, "shuffle"); vram_json_bool(&j, c->shuffle);
    vram_json_key(&j, "seed"); vram_json_u64(&j, c->seed);
    vram_json_key(&j, "drop_last"); vram_json_bool(&j, c->drop_last);
    vram_json_end_object(&j);
    vram_json_key(&j, "epochs");
    vram_json_begin_array(&j);
    for (uint64_t e = 0; e < o->cfg.epochs; e++) {
        vram_json_begin_object(&j);
        vram_json_key(&j, "epoch"); vram_json_u64(&j, e);
        stats_json(&j, &r->epochs[e]);
        vram_json_end_object(&j);
    }
    vram_json_end_array(&j);
    vram_json_key(&j, "total");
    vram_json_begin_object(&j);
    stats_json(&j, &r->total);
    vram_json_end_object(&j);
    vram_json_key(&j, "setup_seconds"); vram_json_double(&j, r->setup);
    vram_json_key(&j, "seconds"); vram_json_double(&j, r->seconds);
    vram_json_key(&j, "gbps");
    vram_json_begin_object(&j);
    vram_json_key(&j, "end_to_end"); vram_json_double(&j, rate(r->total.bytes_delivered, r->seconds));
    vram_json_key(&j, "read"); vram_json_double(&j, read_rate(r));
    vram_json_key(&j, "copy");
    if (r->total.bytes_copied && r->total.copy_seconds > 0)
        vram_json_double(&j, rate(r->total.bytes_copied, r->total.copy_seconds));
    else
        vram_json_null(&j);
    vram_json_end_object(&j);
    vram_json_key(&j, "verify");
    if (v) {
        vram_json_begin_object(&j);
        vram_json_key(&j, "ok"); vram_json_bool(&j, 1);
        vram_json_key(&j, "samples_checked"); vram_json_u64(&j, v->checked);
        vram_json_key(&j, "epochs_checked"); vram_json_u64(&j, v->epochs_checked);
        vram_json_end_object(&j);
    } else {
        vram_json_null(&j);
    }
    vram_json_end_object(&j);
    vram_json_finish(&j);
}

static void print_text(const opts *o, const vram_h5_file *f, const device *dv, const vram_chunks_plan *p,
                       const result *r, const verifier *v) {
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
    if (o->ranks.launcher != VRAM_LAUNCHER_NONE && o->ranks.launcher != VRAM_LAUNCHER_FLAGS)
        printf(" (%s)", vram_launcher_name(o->ranks.launcher));
    if (c->shuffle) printf("; shuffled, seed %llu", (unsigned long long)c->seed);
    if (c->drop_last) printf("; drop-last");
    printf("\n");
    printf("device    %s, %s staging, %u reader%s\n", dv->label, r->staging, r->readers,
           r->readers == 1 ? "" : "s");
    for (uint64_t e = 0; e < o->cfg.epochs && o->cfg.epochs <= 20; e++) {
        const vram_stream_stats *x = &r->epochs[e];
        printf("epoch %-3llu %llu batches, %s in %.3f s: %.2f GB/s, consumer waited %.3f s\n",
               (unsigned long long)e, (unsigned long long)x->batches,
               vram_fmt_size(x->bytes_delivered, a, sizeof a), x->seconds,
               rate(x->bytes_delivered, x->seconds), x->wait_seconds);
    }
    printf("total     %llu epoch%s, %llu batches, %llu samples, %s in %.3f s (setup %.3f s)\n",
           (unsigned long long)o->cfg.epochs, o->cfg.epochs == 1 ? "" : "s",
           (unsigned long long)r->total.batches, (unsigned long long)r->total.samples,
           vram_fmt_size(r->total.bytes_delivered, a, sizeof a), r->seconds, r->setup);
    printf("rate      end to end %.2f GB/s; read %.2f GB/s (%s read, %.3f s over %u readers)",
           rate(r->total.bytes_delivered, r->seconds), read_rate(r),
           vram_fmt_size(r->total.bytes_read, b, sizeof b), r->total.read_seconds, r->readers);
    if (r->total.bytes_copied)
        printf("; copy %.2f GB/s (%s)", rate(r->total.bytes_copied, r->total.copy_seconds),
               vram_fmt_size(r->total.bytes_copied, d, sizeof d));
    printf("\n");
    printf("consumer  waited %.3f s of %.3f s (%.0f%%)%s\n", r->total.wait_seconds, r->seconds,
           r->seconds > 0 ? 100.0 * r->total.wait_seconds / r->seconds : 0.0,
           r->total.wait_seconds > 0.5 * r->seconds ? ": loading is the bottleneck" : "");
    if (v)
        printf("verify    ok: %llu samples equal HDF5's bytes, in the planned order; each of %llu "
               "epoch%s delivered each of the rank's samples once (%llu%s)\n",
               (unsigned long long)v->checked, (unsigned long long)v->epochs_checked,
               v->epochs_checked == 1 ? "" : "s", (unsigned long long)(p->rank_samples - p->dropped_last),
               p->dropped_last ? ", after drop-last" : "");
}

/* ---- the command -------------------------------------------------------------------- */

static int open_error(vram_status st, const char *err) {
    switch (st) {
    case VRAM_E_NOSPACE: return cli_error(VRAM_EXIT_NO, CMD, "does not fit: %s", err);
    case VRAM_E_INVALID:
    case VRAM_E_RANGE:
    case VRAM_E_OVERFLOW: return cli_usage_error(CMD, "%s", err);
    default: return cli_error(VRAM_EXIT_ENV, CMD, "%s", err);
    }
}

int cmd_stream(int argc, char **argv) {
    opts o;
    device dv;
    vram_h5_file *f = NULL;
    vram_streamer *s = NULL;
    verifier v;
    int have_v = 0, rc;
    vram_stream consumer = NULL;
    int consumer_made = 0;
    char err[VRAM_STREAM_ERR_MAX];
    result r;
    memset(&r, 0, sizeof r);

    rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    rc = cli_h5_open(CMD, o.file, o.names, o.n_names, &f);
    if (rc >= 0) return rc;
    rc = open_device(&o, &dv);
    if (rc >= 0) goto out;
    if (!o.have_budget) {
        uint64_t freeb = 0, total = 0;
        vram_status st = dv.ops.mem_info(dv.ops.ctx, o.cfg.device, &freeb, &total);
        if (st != VRAM_OK || freeb == 0) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "%s: cannot read free memory (%s): give --budget SIZE",
                           dv.label, vram_status_str(st));
            goto out;
        }
        o.cfg.plan.free_bytes = freeb;
        if (o.cfg.plan.reserve_bytes > freeb) {
            char a[32], b[32];
            rc = cli_usage_error(CMD, "--reserve %s is more than the %s free on %s",
                                 vram_fmt_size(o.cfg.plan.reserve_bytes, a, sizeof a),
                                 vram_fmt_size(freeb, b, sizeof b), dv.label);
            goto out;
        }
    }
    if (dv.cuda) {
        o.cfg.gather = STREAM_DEVICE_GATHER;
        vram_status st = dv.ops.stream_create(dv.ops.ctx, o.cfg.device, &consumer);
        if (st != VRAM_OK) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "%s: cannot create a stream: %s", dv.label, vram_status_str(st));
            goto out;
        }
        consumer_made = 1;
        o.cfg.consumer = consumer;
    }
    if (o.cfg.epochs == 0) o.cfg.epochs = 1;

    vram_source src = cli_h5_source(f);
    double t0 = now_s();
    vram_status st = vram_streamer_open(&dv.ops, &src, &o.cfg, &s, err, sizeof err);
    if (st != VRAM_OK) {
        rc = open_error(st, err);
        goto out;
    }
    r.setup = now_s() - t0;
    const vram_chunks_plan *plan = vram_streamer_plan(s);
    r.readers = vram_streamer_config(s)->readers;
    r.staging = vram_streamer_staging(s);
    if (o.verify) {
        rc = verifier_init(&v, f, plan, o.cfg.first_epoch, &dv, consumer);
        if (rc >= 0) goto out;
        have_v = 1;
    }

    /* Test hook (test_cli_stream.c): VRAMKIT_STREAM_TEST_FLIP=B:K flips byte K of the first
     * dataset's rows in the B-th batch delivered (host memory only), so that --verify's
     * failure path can be tested from outside. */
    unsigned long long flip_b = 0, flip_k = 0;
    const char *flip = getenv("VRAMKIT_STREAM_TEST_FLIP");
    int flipping = flip != NULL && !dv.cuda && sscanf(flip, "%llu:%llu", &flip_b, &flip_k) == 2;

    int show = !o.json && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
    uint64_t total_batches = plan->batch_count * o.cfg.epochs, seen = 0, bytes = 0;
    double last_draw = 0;
    for (;;) {
        vram_batch b;
        st = vram_streamer_next(s, &b);
        if (st != VRAM_OK) {
            if (show) fprintf(stderr, "\r\033[K");
            rc = cli_error(VRAM_EXIT_ENV, CMD, "%s", vram_streamer_error(s)[0] ? vram_streamer_error(s)
                                                                                : vram_status_str(st));
            goto out;
        }
        if (b.done) break;
        if (flipping && seen == flip_b && flip_k < b.count * f->ds[0].row_bytes)
            ((unsigned char *)b.data[0])[flip_k] ^= 0xffu;
        if (have_v && (rc = verify_batch(&v, &b)) >= 0) {
            if (show) fprintf(stderr, "\r\033[K");
            goto out;
        }
        seen++;
        bytes += b.count * plan->config.sample_bytes;
        st = vram_streamer_release(s, &b);
        if (st != VRAM_OK) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "releasing a batch: %s", vram_status_str(st));
            goto out;
        }
        if (show) {
            double t = now_s();
            if (t - last_draw > 0.1 || seen == total_batches) {
                progress((double)seen / (double)total_batches, b.epoch_index + 1u, o.cfg.epochs,
                         rate(bytes, t - t0));
                last_draw = t;
            }
        }
    }
    if (show) fprintf(stderr, "\r\033[K");
    if (consumer_made) {
        st = dv.ops.stream_sync(dv.ops.ctx, consumer);
        if (st != VRAM_OK) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "%s: waiting for the device: %s", dv.label, vram_status_str(st));
            goto out;
        }
    }
    r.seconds = now_s() - t0;
    if (have_v && (rc = verify_end(&v, o.cfg.epochs)) >= 0) goto out;
    r.epochs = (vram_stream_stats *)calloc((size_t)o.cfg.epochs, sizeof *r.epochs);
    if (r.epochs == NULL) {
        rc = cli_error(VRAM_EXIT_ENV, CMD, "out of host memory");
        goto out;
    }
    for (uint64_t e = 0; e < o.cfg.epochs; e++) (void)vram_streamer_stats(s, e, &r.epochs[e]);
    (void)vram_streamer_stats(s, UINT64_MAX, &r.total);
    if (o.json)
        print_json(&o, f, &dv, plan, &r, have_v ? &v : NULL);
    else
        print_text(&o, f, &dv, plan, &r, have_v ? &v : NULL);
    rc = VRAM_EXIT_OK;
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = cli_error(VRAM_EXIT_ENV, CMD, "cannot write the report to standard output");
out:
    if (s) {
        st = vram_streamer_close(s);
        if (st != VRAM_OK && rc == VRAM_EXIT_OK)
            rc = cli_error(VRAM_EXIT_ENV, CMD, "closing the stream: %s", vram_status_str(st));
    }
    if (consumer_made) (void)dv.ops.stream_destroy(dv.ops.ctx, consumer);
    if (have_v) verifier_free(&v);
    free(r.epochs);
    cli_h5_close(f);
    return rc;
}
