/* driver/cli/cmd_chunks.c — `vramkit chunks`: how a dataset is cut into GPU-resident chunks.
 * Parses the options into a vram_chunks_config, asks the core (vramkit/chunks.h) for the
 * plan, and prints it as a bounded text summary or as complete JSON. The FILE form takes
 * the sizes from the datasets of an HDF5 file, plans as `vramkit stream` will, and says
 * which read path each dataset takes. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/chunks.h>

#include "cli.h"
#include "cli_model.h"
#include "cli_stream.h"
#include "stream/stream.h"

#define CMD "chunks"

/* Text mode shows this many chunks (the first and last half) and says how many it left out. */
#define TEXT_CHUNKS 16u
/* Batches listed per chunk in text mode before eliding the middle ones. */
#define TEXT_BATCHES 4u
/* Orders shown per chunk in text mode. */
#define TEXT_ORDER 8u
/* A shuffled plan materialises one order array of this many entries at most (1 GiB). */
#define MAX_ORDER (UINT64_C(1) << 27)

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit chunks --samples N --sample-bytes SIZE --batch K\n"
        "                      (--budget SIZE | --free SIZE [--fraction F] [--reserve SIZE]\n"
        "                       | --assume-gpu SPEC) [--buffers M] [--drop-last]\n"
        "                      [--world auto|W [--rank R]] [--pad|--no-pad]\n"
        "                      [--shuffle [--seed S] [--epoch E]] [--json]\n"
        "       vramkit chunks FILE --dataset PATH [--dataset PATH]... [--batch K]\n"
        "                      (--budget SIZE | --assume-gpu SPEC | --free SIZE) [the options above]\n"
        "\n"
        "Plans how N samples of SIZE bytes are cut into chunks that live in GPU memory, and\n"
        "how each chunk is cut into batches: every chunk fits one device buffer and holds whole\n"
        "batches, so no batch straddles two chunks (only the final batch may be short).\n"
        "\n"
        "The FILE form reads N and SIZE from the datasets of an HDF5 file (they must share their\n"
        "first dimension; SIZE is the sum of their bytes per sample), plans exactly as `vramkit\n"
        "stream` will, and says how each dataset will be read: 'contiguous' or 'chunked' (pread\n"
        "by several threads, straight into pinned memory), or 'hdf5' (through HDF5, with the\n"
        "reason: a filter such as deflate, a type conversion, unwritten data). --batch defaults\n"
        "to 128 there.\n"
        "\n"
        "required:\n"
        "  --samples N         samples in the dataset\n"
        "  --sample-bytes SIZE device bytes of one sample (features + targets)\n"
        "  --batch K           samples per batch\n"
        "  and one budget:\n"
        "  --budget SIZE       device bytes for all chunk buffers together\n"
        "  --free SIZE         free device memory; the budget is F x (free - reserve)\n"
        "  --fraction F        of free memory, in (0, 1], as 0.75 or 75%% (default 0.75)\n"
        "  --reserve SIZE      memory kept for the model, activations, workspace (default 0)\n"
        "  --assume-gpu SPEC   a GPU that is not here: SIZE[,used=SIZE|,free=SIZE][,cc=M.m], e.g.\n"
        "                      16GiB,used=2GiB; plans with its free memory, as --free does\n"
        "\n"
        "FILE form:\n"
        "  FILE                an HDF5 file\n"
        "  --dataset PATH      a dataset to plan for (repeat for several: /features, /targets)\n"
        "\n"
        "options:\n"
        "  --buffers M         chunk buffers on the device at once (default 2: the next chunk\n"
        "                      loads while one is used); one chunk may use budget / M\n"
        "  --drop-last         drop each rank's final partial batch (PyTorch's drop_last)\n"
        "  --world auto|W      ranks that share the dataset (default auto: the launcher's\n"
        "                      variables when one set them, else 1; see below)\n"
        "  --rank R            this rank, 0 <= R < W (default 0, or the launcher's)\n"
        "  --pad               (default) every rank gets ceil(N/W) samples: the ranges are\n"
        "                      contiguous and the positions past the data wrap around to samples\n"
        "                      0, 1, ... (sample = position mod N)\n"
        "  --no-pad            every rank gets floor(N/W) samples; the last N mod W samples are\n"
        "                      in no rank\n"
        "  --shuffle           visit chunks in a random order and the samples of each chunk in\n"
        "                      a random order, both fixed by (seed, epoch, rank)\n"
        "  --seed S            shuffle seed (default 0)\n"
        "  --epoch E           epoch (default 0)\n"
        "  --json              print the complete plan as JSON (text mode shows at most %u\n"
        "                      chunks and elides the middle batches of each)\n"
        "  -h, --help          this text\n",
        TEXT_CHUNKS);
    fprintf(out,
        "\n"
        "Sizes are bytes or a number with a unit: 512MiB, 8GiB, 7.5GB (KB/MB/GB/TB are powers\n"
        "of 1000, KiB/MiB/GiB/TiB powers of 1024). drop_last applies per rank after sharding,\n"
        "so every rank has the same number of batches.\n"
        "\n"
        "Ranks from the launcher (--world auto): torchrun's RANK, WORLD_SIZE, LOCAL_RANK; Open\n"
        "MPI's OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK; MPICH's PMI_RANK, PMI_SIZE,\n"
        "MPI_LOCALRANKID; Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, in that order of\n"
        "precedence (torchrun or mpirun inside a Slurm job wins over Slurm). --world W (a\n"
        "number) ignores them; --rank R wins over the launcher's rank. A rank without its world\n"
        "size, a value that is not a number, or a rank not below the world size is bad input\n"
        "(exit 2), named in the message.\n"
        "\n"
        "JSON (--json): one object. FILE form first: file, datasets: [{name, shape, type,\n"
        "layout, filters, row_bytes, read_path (\"contiguous\"|\"chunked\"|\"hdf5\"), reason,\n"
        "offset, chunk_rows, chunks}], extra_device_bytes (what `vramkit stream` adds on a GPU\n"
        "when shuffling: two gather buffers of a batch and each buffer's order, 8 bytes a row).\n"
        "Settings: samples, sample_bytes, batch, buffers, drop_last, world, rank, launcher\n"
        "(\"none\"|\"flags\"|\"torchrun\"|\"Open MPI\"|\"MPICH/PMI\"|\"Slurm\"), local_rank (null\n"
        "when not known), shard\n"
        "(\"pad\"|\"drop\"), shuffle, seed, epoch, and with\n"
        "--free: free_bytes, reserve_bytes, fraction. Totals: total_samples (N), total_bytes,\n"
        "budget_bytes, buffer_bytes (budget per buffer), batch_bytes, needed_bytes (the least\n"
        "budget that fits), samples_per_chunk, bytes_per_chunk, chunk_count, total_batches\n"
        "(this rank's, equal on every rank), last_batch_samples, dropped_last, positions (all\n"
        "ranks), padded_samples, dropped_samples, rank_samples, rank_start, rank_end.\n"
        "chunk_order: chunk indices in visiting order. chunks: in visiting order, each\n"
        "{index, start, end, rows, used, samples: [[first, end], ...] (sample ranges to load,\n"
        "two when padding wraps), batches: [[start, end], ...]}, positions as half-open\n"
        "ranges. A shuffled chunk adds order, its positions in visiting order; its batch\n"
        "[start, end) takes order[start - chunk.start .. end - chunk.start).\n"
        "\n"
        "exit codes: 0 planned, 1 a batch does not fit the budget (the message gives the bytes\n"
        "needed and the bytes available), 2 bad usage or input (FILE form: a missing file or\n"
        "dataset, not HDF5, an empty dataset, a variable-length type, datasets of different\n"
        "lengths), 3 environment error (out of host memory, an I/O error, built without HDF5)\n"
        "\n"
        "examples:\n"
        "  vramkit chunks --samples 51779 --sample-bytes 240624 --batch 128 --assume-gpu 16GiB\n"
        "  vramkit chunks train.h5 --dataset /features --dataset /targets --assume-gpu 16GiB\n");
}

enum {
    OPT_SAMPLES = 256, OPT_SAMPLE_BYTES, OPT_BATCH, OPT_BUDGET, OPT_FREE, OPT_FRACTION,
    OPT_RESERVE, OPT_BUFFERS, OPT_DROP_LAST, OPT_WORLD, OPT_RANK, OPT_PAD, OPT_NO_PAD,
    OPT_SHUFFLE, OPT_SEED, OPT_EPOCH, OPT_JSON, OPT_DATASET, OPT_ASSUME_GPU
};

static const struct option long_options[] = {
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"budget", required_argument, NULL, OPT_BUDGET},
    {"free", required_argument, NULL, OPT_FREE},
    {"fraction", required_argument, NULL, OPT_FRACTION},
    {"reserve", required_argument, NULL, OPT_RESERVE},
    {"buffers", required_argument, NULL, OPT_BUFFERS},
    {"drop-last", no_argument, NULL, OPT_DROP_LAST},
    {"world", required_argument, NULL, OPT_WORLD},
    {"rank", required_argument, NULL, OPT_RANK},
    {"pad", no_argument, NULL, OPT_PAD},
    {"no-pad", no_argument, NULL, OPT_NO_PAD},
    {"shuffle", no_argument, NULL, OPT_SHUFFLE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"epoch", required_argument, NULL, OPT_EPOCH},
    {"json", no_argument, NULL, OPT_JSON},
    {"dataset", required_argument, NULL, OPT_DATASET},
    {"assume-gpu", required_argument, NULL, OPT_ASSUME_GPU},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct opts {
    vram_chunks_config cfg;
    uint64_t epoch;
    int have_samples, have_bytes, have_batch, have_budget, have_free, have_fraction,
        have_reserve, json, have_gpu;
    cli_world world;  /* --world, --rank */
    vram_ranks ranks; /* resolved: the flags', or the launcher's */
    const char *file;                             /* the FILE form */
    const char *names[VRAM_STREAM_MAX_DATASETS];  /* its --dataset paths */
    uint32_t n_names;
    vram_gpu_budget gpu;                                  /* --assume-gpu */
    const vram_h5_file *h5;                       /* the FILE form's datasets */
    uint64_t extra_device_bytes;
} opts;

/* Counts and sizes: a value starting with '-' is called negative, one below the minimum
 * has its own line (cli.h). */
#define OPT_WORDS (CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST)

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, opts *o) {
    uint64_t v = 0;
    int rc, c;
    memset(o, 0, sizeof *o);
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        const char *a = optarg;
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_SAMPLES:
            if ((rc = cli_opt_count(CMD, "samples", a, 1, UINT64_MAX, OPT_WORDS, &o->cfg.samples))) return rc;
            o->have_samples = 1;
            break;
        case OPT_SAMPLE_BYTES:
            if ((rc = cli_opt_size(CMD, "sample-bytes", a, 0, OPT_WORDS, &o->cfg.sample_bytes))) return rc;
            o->have_bytes = 1;
            break;
        case OPT_BATCH:
            if ((rc = cli_opt_count(CMD, "batch", a, 1, UINT64_MAX, OPT_WORDS, &o->cfg.batch))) return rc;
            o->have_batch = 1;
            break;
        case OPT_BUDGET:
            if ((rc = cli_opt_size(CMD, "budget", a, 0, OPT_WORDS, &o->cfg.budget_bytes))) return rc;
            o->have_budget = 1;
            break;
        case OPT_FREE:
            if ((rc = cli_opt_size(CMD, "free", a, 0, OPT_WORDS, &o->cfg.free_bytes))) return rc;
            o->have_free = 1;
            break;
        case OPT_RESERVE:
            if ((rc = cli_opt_size(CMD, "reserve", a, 1, OPT_WORDS, &o->cfg.reserve_bytes))) return rc;
            o->have_reserve = 1;
            break;
        case OPT_FRACTION:
            if ((rc = cli_opt_fraction(CMD, "fraction", a, &o->cfg.fraction))) return rc;
            o->have_fraction = 1;
            break;
        case OPT_BUFFERS:
            if ((rc = cli_opt_count(CMD, "buffers", a, 1, UINT32_MAX, OPT_WORDS, &v))) return rc;
            o->cfg.buffers = (uint32_t)v;
            break;
        case OPT_DROP_LAST: o->cfg.drop_last = 1; break;
        case OPT_WORLD:
            if ((rc = cli_opt_world(CMD, a, &o->world))) return rc;
            break;
        case OPT_RANK:
            if ((rc = cli_opt_count(CMD, "rank", a, 0, UINT32_MAX - 1u, OPT_WORDS, &v))) return rc;
            o->world.rank = (uint32_t)v;
            o->world.have_rank = 1;
            break;
        case OPT_PAD: o->cfg.shard = VRAM_SHARD_PAD; break;
        case OPT_NO_PAD: o->cfg.shard = VRAM_SHARD_DROP; break;
        case OPT_SHUFFLE: o->cfg.shuffle = 1; break;
        case OPT_SEED:
            if ((rc = cli_opt_count(CMD, "seed", a, 0, UINT64_MAX, OPT_WORDS, &o->cfg.seed))) return rc;
            break;
        case OPT_EPOCH:
            if ((rc = cli_opt_count(CMD, "epoch", a, 0, UINT64_MAX, OPT_WORDS, &o->epoch))) return rc;
            break;
        case OPT_JSON: o->json = 1; break;
        case OPT_DATASET:
            if (o->n_names == VRAM_STREAM_MAX_DATASETS)
                return cli_usage_error(CMD, "--dataset: at most %u datasets", VRAM_STREAM_MAX_DATASETS);
            o->names[o->n_names++] = a;
            break;
        case OPT_ASSUME_GPU:
            if ((rc = cli_parse_gpu_spec(CMD, a, &o->gpu)) != 0) return rc;
            o->have_gpu = 1;
            break;
        case ':':
            return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit chunks --help')",
                                   argv[optind - 1]);
        }
    }
    if (optind < argc) {
        if (o->have_samples || o->have_bytes)
            return cli_usage_error(CMD, "unexpected argument '%s': --samples and --sample-bytes "
                                        "plan from numbers, FILE from its datasets (see 'vramkit "
                                        "chunks --help')",
                                   argv[optind]);
        if (argc - optind > 1)
            return cli_usage_error(CMD, "unexpected argument '%s': one FILE only", argv[optind + 1]);
        o->file = argv[optind];
        if (o->n_names == 0)
            return cli_usage_error(CMD, "FILE '%s' needs --dataset PATH (e.g. --dataset /features)",
                                   o->file);
    }
    if (o->n_names > 0 && o->file == NULL)
        return cli_usage_error(CMD, "--dataset needs FILE: vramkit chunks FILE --dataset PATH");
    if (o->file == NULL) {
        if (!o->have_samples) return cli_usage_error(CMD, "--samples is required (or FILE --dataset PATH)");
        if (!o->have_bytes) return cli_usage_error(CMD, "--sample-bytes is required");
        if (!o->have_batch) return cli_usage_error(CMD, "--batch is required");
    } else if (!o->have_batch) {
        o->cfg.batch = 128; /* stream's default */
    }
    if (o->have_gpu) {
        if (o->have_free || o->have_budget)
            return cli_usage_error(CMD, "give one of --budget, --free, --assume-gpu");
        o->cfg.free_bytes = o->gpu.free;
        o->have_free = 1;
    }
    if (o->have_budget && o->have_free)
        return cli_usage_error(CMD, "give either --budget or --free, not both");
    if (!o->have_budget && !o->have_free)
        return cli_usage_error(CMD, "a budget is required: --budget SIZE, --free SIZE (with "
                                    "--fraction, --reserve), or --assume-gpu SPEC");
    if (o->have_fraction && !o->have_free)
        return cli_usage_error(CMD, "--fraction applies to --free, which is missing");
    if (o->have_reserve && !o->have_free)
        return cli_usage_error(CMD, "--reserve applies to --free, which is missing");
    if ((rc = cli_ranks(CMD, &o->world, &o->ranks)) >= 0) return rc;
    o->cfg.world = o->ranks.world;
    o->cfg.rank = o->ranks.rank;
    return -1;
}

/* A core error other than "does not fit", as one line naming the inputs. */
static int plan_error(vram_status st, const opts *o, const vram_chunks_plan *p) {
    const vram_chunks_config *c = &p->config;
    char a[32], b[32];
    switch (st) {
    case VRAM_E_OVERFLOW:
        if (p->total_bytes == 0)
            return cli_usage_error(CMD, "--samples %llu x --sample-bytes %llu overflows 64 bits",
                                   (unsigned long long)c->samples,
                                   (unsigned long long)c->sample_bytes);
        if (p->batch_bytes == 0)
            return cli_usage_error(CMD, "--batch %llu x --sample-bytes %llu overflows 64 bits",
                                   (unsigned long long)c->batch,
                                   (unsigned long long)c->sample_bytes);
        if (p->needed_bytes == 0)
            return cli_usage_error(CMD, "--buffers %u x one batch (%llu bytes) overflows 64 bits",
                                   c->buffers, (unsigned long long)p->batch_bytes);
        return cli_usage_error(CMD, "--samples %llu padded to a multiple of --world %u overflows "
                                    "64 bits (try --no-pad)",
                               (unsigned long long)c->samples, c->world);
    case VRAM_E_RANGE:
        if (o->have_free && c->reserve_bytes > c->free_bytes)
            return cli_usage_error(CMD, "--reserve %s is more than --free %s",
                                   vram_fmt_size(c->reserve_bytes, a, sizeof a),
                                   vram_fmt_size(c->free_bytes, b, sizeof b));
        if (p->rank_samples == 0)
            return cli_usage_error(CMD, "--no-pad: %llu samples leave nothing for each of %u ranks",
                                   (unsigned long long)c->samples, c->world);
        return cli_usage_error(CMD, "--drop-last: each rank has %llu samples, less than one "
                                    "batch of %llu: no batch is left",
                               (unsigned long long)p->rank_samples, (unsigned long long)c->batch);
    default:
        return cli_usage_error(CMD, "cannot plan: %s", vram_status_str(st));
    }
}

static int does_not_fit(const opts *o, const vram_chunks_plan *p) {
    char need[32], batch[32], have[32], per[32], fr[32], rs[32];
    const vram_chunks_config *c = &p->config;
    char source[160] = "";
    if (o->have_free)
        snprintf(source, sizeof source, " (%.4g%% of %s free after a %s reserve)",
                 c->fraction * 100.0, vram_fmt_size(c->free_bytes, fr, sizeof fr),
                 vram_fmt_size(c->reserve_bytes, rs, sizeof rs));
    return cli_error(VRAM_EXIT_NO, CMD,
                     "does not fit: one batch per buffer needs %u x %s = %s (%llu bytes), the "
                     "budget is %s (%llu bytes)%s, %s per buffer",
                     c->buffers, vram_fmt_size(p->batch_bytes, batch, sizeof batch),
                     vram_fmt_size(p->needed_bytes, need, sizeof need),
                     (unsigned long long)p->needed_bytes,
                     vram_fmt_size(p->budget_bytes, have, sizeof have),
                     (unsigned long long)p->budget_bytes, source,
                     vram_fmt_size(p->buffer_bytes, per, sizeof per));
}

/* The storage index of the chunk visited k-th. */
static uint64_t visit(const uint64_t *chunk_order, uint64_t k) {
    return chunk_order ? chunk_order[k] : k;
}

static int alloc_orders(const opts *o, const vram_chunks_plan *p, uint64_t **chunk_order,
                        uint64_t **rows) {
    *chunk_order = *rows = NULL;
    if (!p->config.shuffle) return -1;
    if (p->chunk_count > MAX_ORDER || p->samples_per_chunk > MAX_ORDER)
        return cli_usage_error(CMD, "--shuffle: %llu chunks of %llu samples are too many to "
                                    "list an order for (at most %llu each)",
                               (unsigned long long)p->chunk_count,
                               (unsigned long long)p->samples_per_chunk,
                               (unsigned long long)MAX_ORDER);
    *chunk_order = (uint64_t *)malloc((size_t)p->chunk_count * sizeof **chunk_order);
    *rows = (uint64_t *)malloc((size_t)p->samples_per_chunk * sizeof **rows);
    if (!*chunk_order || !*rows) {
        free(*chunk_order);
        free(*rows);
        *chunk_order = *rows = NULL;
        return cli_error(VRAM_EXIT_ENV, CMD, "out of host memory for the shuffled order");
    }
    if (vram_chunks_chunk_order(p, o->epoch, *chunk_order, p->chunk_count) != VRAM_OK) {
        free(*chunk_order);
        free(*rows);
        return cli_error(VRAM_EXIT_ENV, CMD, "internal error: chunk order");
    }
    return -1;
}

static void json_range(vram_json *j, uint64_t a, uint64_t b) {
    vram_json_begin_array(j);
    vram_json_u64(j, a);
    vram_json_u64(j, b);
    vram_json_end_array(j);
}

static void json_field(vram_json *j, const char *k, uint64_t v) {
    vram_json_key(j, k);
    vram_json_u64(j, v);
}

static int print_json(const opts *o, const vram_chunks_plan *p, const uint64_t *chunk_order,
                      uint64_t *rows) {
    const vram_chunks_config *c = &p->config;
    vram_json j;
    vram_json_init(&j, stdout);
    vram_json_begin_object(&j);
    if (o->h5) {
        cli_h5_json(&j, o->h5);
        json_field(&j, "extra_device_bytes", o->extra_device_bytes);
    }
    json_field(&j, "samples", c->samples);
    json_field(&j, "sample_bytes", c->sample_bytes);
    json_field(&j, "batch", c->batch);
    json_field(&j, "buffers", c->buffers);
    vram_json_key(&j, "drop_last");
    vram_json_bool(&j, c->drop_last);
    json_field(&j, "world", c->world);
    json_field(&j, "rank", c->rank);
    vram_json_key(&j, "launcher");
    vram_json_string(&j, vram_launcher_name(o->ranks.launcher));
    vram_json_key(&j, "local_rank");
    if (o->ranks.local_rank >= 0)
        vram_json_i64(&j, o->ranks.local_rank);
    else
        vram_json_null(&j);
    vram_json_key(&j, "shard");
    vram_json_string(&j, c->shard == VRAM_SHARD_DROP ? "drop" : "pad");
    vram_json_key(&j, "shuffle");
    vram_json_bool(&j, c->shuffle);
    json_field(&j, "seed", c->seed);
    json_field(&j, "epoch", o->epoch);
    if (o->have_free) {
        json_field(&j, "free_bytes", c->free_bytes);
        json_field(&j, "reserve_bytes", c->reserve_bytes);
        vram_json_key(&j, "fraction");
        vram_json_double(&j, c->fraction);
    }
    json_field(&j, "total_samples", c->samples);
    json_field(&j, "total_bytes", p->total_bytes);
    json_field(&j, "budget_bytes", p->budget_bytes);
    json_field(&j, "buffer_bytes", p->buffer_bytes);
    json_field(&j, "batch_bytes", p->batch_bytes);
    json_field(&j, "needed_bytes", p->needed_bytes);
    json_field(&j, "samples_per_chunk", p->samples_per_chunk);
    json_field(&j, "bytes_per_chunk", p->bytes_per_chunk);
    json_field(&j, "chunk_count", p->chunk_count);
    json_field(&j, "total_batches", p->batch_count);
    json_field(&j, "last_batch_samples", p->last_batch_samples);
    json_field(&j, "dropped_last", p->dropped_last);
    json_field(&j, "positions", p->positions);
    json_field(&j, "padded_samples", p->padded_samples);
    json_field(&j, "dropped_samples", p->dropped_samples);
    json_field(&j, "rank_samples", p->rank_samples);
    json_field(&j, "rank_start", p->rank_start);
    json_field(&j, "rank_end", p->rank_end);
    vram_json_key(&j, "chunk_order");
    vram_json_begin_array(&j);
    for (uint64_t k = 0; k < p->chunk_count; k++) vram_json_u64(&j, visit(chunk_order, k));
    vram_json_end_array(&j);
    vram_json_key(&j, "chunks");
    vram_json_begin_array(&j);
    for (uint64_t k = 0; k < p->chunk_count; k++) {
        vram_chunk ch;
        vram_range b;
        uint64_t i = visit(chunk_order, k);
        if (vram_chunks_chunk(p, i, &ch) != VRAM_OK) return -1;
        vram_json_begin_object(&j);
        json_field(&j, "index", i);
        json_field(&j, "start", ch.start);
        json_field(&j, "end", ch.end);
        json_field(&j, "rows", ch.rows);
        json_field(&j, "used", ch.used);
        vram_json_key(&j, "samples");
        vram_json_begin_array(&j);
        json_range(&j, ch.samples[0].start, ch.samples[0].end);
        if (ch.samples[1].end > 0) json_range(&j, ch.samples[1].start, ch.samples[1].end);
        vram_json_end_array(&j);
        vram_json_key(&j, "batches");
        vram_json_begin_array(&j);
        for (uint64_t bj = 0; bj < ch.batches; bj++) {
            if (vram_chunks_batch(p, i, bj, &b) != VRAM_OK) return -1;
            json_range(&j, ch.start + b.start, ch.start + b.end);
        }
        vram_json_end_array(&j);
        if (rows) {
            if (vram_chunks_sample_order(p, i, o->epoch, rows, p->samples_per_chunk) != VRAM_OK)
                return -1;
            vram_json_key(&j, "order");
            vram_json_begin_array(&j);
            for (uint64_t r = 0; r < ch.rows; r++) vram_json_u64(&j, ch.start + rows[r]);
            vram_json_end_array(&j);
        }
        vram_json_end_object(&j);
    }
    vram_json_end_array(&j);
    vram_json_end_object(&j);
    vram_json_finish(&j);
    return 0;
}

static int print_chunk_text(const opts *o, const vram_chunks_plan *p, uint64_t k, uint64_t i,
                            uint64_t *rows) {
    vram_chunk ch;
    vram_range b;
    char pos[64];
    if (vram_chunks_chunk(p, i, &ch) != VRAM_OK) return -1;
    snprintf(pos, sizeof pos, "[%llu, %llu)", (unsigned long long)ch.start,
             (unsigned long long)ch.end);
    if (p->config.shuffle) printf("%7llu  ", (unsigned long long)k);
    printf("%5llu  %-24s %10llu  %llu:", (unsigned long long)i, pos, (unsigned long long)ch.rows,
           (unsigned long long)ch.batches);
    for (uint64_t bj = 0; bj < ch.batches; bj++) {
        if (ch.batches > TEXT_BATCHES && bj == TEXT_BATCHES / 2) {
            printf(" ...");
            bj = ch.batches - 1;
        }
        if (vram_chunks_batch(p, i, bj, &b) != VRAM_OK) return -1;
        printf(" [%llu, %llu)", (unsigned long long)(ch.start + b.start),
               (unsigned long long)(ch.start + b.end));
    }
    if (ch.used < ch.rows)
        printf("  (%llu rows in no batch)", (unsigned long long)(ch.rows - ch.used));
    printf("\n");
    if (rows) {
        if (vram_chunks_sample_order(p, i, o->epoch, rows, p->samples_per_chunk) != VRAM_OK)
            return -1;
        printf("%7s  %5s  order:", "", "");
        for (uint64_t r = 0; r < ch.rows && r < TEXT_ORDER; r++)
            printf(" %llu", (unsigned long long)(ch.start + rows[r]));
        if (ch.rows > TEXT_ORDER) printf(" ... (%llu in all)", (unsigned long long)ch.rows);
        printf("\n");
    }
    return 0;
}

static int print_text(const opts *o, const vram_chunks_plan *p, const uint64_t *chunk_order,
                      uint64_t *rows) {
    const vram_chunks_config *c = &p->config;
    char s1[32], s2[32], s3[32], s4[32];
    printf("vramkit chunks: %llu samples of %s (%s), batch %llu (%s)\n",
           (unsigned long long)c->samples, vram_fmt_size(c->sample_bytes, s1, sizeof s1),
           vram_fmt_size(p->total_bytes, s2, sizeof s2), (unsigned long long)c->batch,
           vram_fmt_size(p->batch_bytes, s3, sizeof s3));
    if (o->h5) {
        printf("file            %s: %u dataset%s\n", o->h5->path, o->h5->datasets,
               o->h5->datasets == 1 ? "" : "s");
        cli_h5_text(stdout, o->h5);
    }
    printf("budget          %s", vram_fmt_size(p->budget_bytes, s1, sizeof s1));
    if (o->have_free)
        printf(" (%.4g%% of %s free after a %s reserve)", c->fraction * 100.0,
               vram_fmt_size(c->free_bytes, s2, sizeof s2),
               vram_fmt_size(c->reserve_bytes, s3, sizeof s3));
    printf(" in %u buffer%s: %s per buffer\n", c->buffers, c->buffers == 1 ? "" : "s",
           vram_fmt_size(p->buffer_bytes, s4, sizeof s4));
    printf("chunks          %llu of up to %llu samples (%s)\n", (unsigned long long)p->chunk_count,
           (unsigned long long)p->samples_per_chunk,
           vram_fmt_size(p->bytes_per_chunk, s1, sizeof s1));
    printf("batches         %llu, the last of %llu sample%s", (unsigned long long)p->batch_count,
           (unsigned long long)p->last_batch_samples, p->last_batch_samples == 1 ? "" : "s");
    if (c->drop_last)
        printf("; drop-last leaves %llu sample%s out", (unsigned long long)p->dropped_last,
               p->dropped_last == 1 ? "" : "s");
    printf("\n");
    printf("rank            %u of %u: positions [%llu, %llu), %llu samples", c->rank, c->world,
           (unsigned long long)p->rank_start, (unsigned long long)p->rank_end,
           (unsigned long long)p->rank_samples);
    if (p->padded_samples)
        printf("; %llu padded positions (>= %llu) repeat samples 0, 1, ...",
               (unsigned long long)p->padded_samples, (unsigned long long)c->samples);
    if (p->dropped_samples)
        printf("; the last %llu samples are in no rank", (unsigned long long)p->dropped_samples);
    printf("\n");
    cli_print_launcher(&o->ranks);
    if (c->shuffle)
        printf("shuffle         seed %llu, epoch %llu: chunks in visiting order, rows gathered "
               "in the order shown\n",
               (unsigned long long)c->seed, (unsigned long long)o->epoch);
    else
        printf("shuffle         off\n");
    if (o->h5 && c->shuffle)
        printf("gather          %s more device memory on a GPU: two gather buffers of a batch and "
               "each buffer's order\n",
               vram_fmt_size(o->extra_device_bytes, s1, sizeof s1));
    printf("\n");
    if (c->shuffle) printf("%7s  ", "visit");
    printf("%5s  %-24s %10s  %s\n", "chunk", "positions", "samples", "batches");
    for (uint64_t k = 0; k < p->chunk_count; k++) {
        if (p->chunk_count > TEXT_CHUNKS && k == TEXT_CHUNKS / 2) {
            uint64_t skip = p->chunk_count - TEXT_CHUNKS;
            printf("... %llu chunk%s not shown (--json lists all)\n", (unsigned long long)skip,
                   skip == 1 ? "" : "s");
            k += skip;
        }
        if (print_chunk_text(o, p, k, visit(chunk_order, k), rows) != 0) return -1;
    }
    return 0;
}

static int chunks_report(opts *o, vram_status st, vram_chunks_plan *plan);

int cmd_chunks(int argc, char **argv) {
    opts o;
    vram_chunks_plan plan;
    vram_h5_file *h5 = NULL;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;

    vram_status st;
    if (o.file) {
        vram_stream_config sc;
        rc = cli_h5_open(CMD, o.file, o.names, o.n_names, &h5);
        if (rc >= 0) return rc;
        /* the plan vramkit stream makes: sizes from the datasets */
        vram_source src = cli_h5_source(h5);
        memset(&sc, 0, sizeof sc);
        sc.plan = o.cfg;
        st = vram_stream_plan(&src, &sc, &plan);
        o.cfg.samples = plan.config.samples;
        o.cfg.sample_bytes = plan.config.sample_bytes;
        o.h5 = h5;
        o.extra_device_bytes = vram_stream_extra_device_bytes(&plan, &sc, NULL);
        rc = chunks_report(&o, st, &plan);
        cli_h5_close(h5);
        return rc;
    }
    st = vram_chunks_make(&o.cfg, &plan);
    return chunks_report(&o, st, &plan);
}

/* Prints the plan (or the reason there is none); returns the exit code. */
static int chunks_report(opts *o_, vram_status st, vram_chunks_plan *plan_) {
    opts o = *o_;
    vram_chunks_plan plan = *plan_;
    uint64_t *chunk_order = NULL, *rows = NULL;
    int rc;
    if (st == VRAM_E_NOSPACE) return does_not_fit(&o, &plan);
    if (st != VRAM_OK) return plan_error(st, &o, &plan);

    rc = alloc_orders(&o, &plan, &chunk_order, &rows);
    if (rc >= 0) return rc;
    rc = o.json ? print_json(&o, &plan, chunk_order, rows)
                : print_text(&o, &plan, chunk_order, rows);
    free(chunk_order);
    free(rows);
    if (rc != 0) return cli_error(VRAM_EXIT_ENV, CMD, "internal error: inconsistent plan");
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_error(VRAM_EXIT_ENV, CMD, "cannot write the plan to standard output");
    return VRAM_EXIT_OK;
}
