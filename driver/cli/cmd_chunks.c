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
#include "cli_stream.h"
#include "loader/chunking.h"

#define CMD "chunks"

/* Text mode shows this many chunks (the first and last half) and says how many it left out. */
#define TEXT_CHUNKS 16u
/* Batches listed per chunk in text mode before eliding the middle ones. */
#define TEXT_BATCHES 4u
/* Orders shown per chunk in text mode. */
#define TEXT_ORDER 8u

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

enum { OPT_JSON = 1 };

static const struct option long_options[] = {
    {"samples", required_argument, NULL, CLI_BY_NAME},
    {"sample-bytes", required_argument, NULL, CLI_BY_NAME},
    {"batch", required_argument, NULL, CLI_BY_NAME},
    {"budget", required_argument, NULL, CLI_BY_NAME},
    {"free", required_argument, NULL, CLI_BY_NAME},
    {"fraction", required_argument, NULL, CLI_BY_NAME},
    {"reserve", required_argument, NULL, CLI_BY_NAME},
    {"buffers", required_argument, NULL, CLI_BY_NAME},
    {"drop-last", no_argument, NULL, CLI_BY_NAME},
    {"world", required_argument, NULL, CLI_BY_NAME},
    {"rank", required_argument, NULL, CLI_BY_NAME},
    {"pad", no_argument, NULL, CLI_BY_NAME},
    {"no-pad", no_argument, NULL, CLI_BY_NAME},
    {"shuffle", no_argument, NULL, CLI_BY_NAME},
    {"seed", required_argument, NULL, CLI_BY_NAME},
    {"epoch", required_argument, NULL, CLI_BY_NAME},
    {"json", no_argument, NULL, OPT_JSON},
    {"dataset", required_argument, NULL, CLI_BY_NAME},
    {"assume-gpu", required_argument, NULL, CLI_BY_NAME},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, vram_chunking_opts *o, vram_ranks *ranks, int *json) {
    char err[512];
    int rc, c, idx = 0;
    memset(o, 0, sizeof *o);
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, &idx)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_JSON: *json = 1; break;
        case CLI_BY_NAME:
            if ((rc = cli_set(CMD, vram_chunking_set(o, long_options[idx].name, optarg, err, sizeof err), err)))
                return rc;
            break;
        case ':':
            return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit chunks --help')",
                                   argv[optind - 1]);
        }
    }
    if (optind < argc) o->file = argv[optind];
    rc = cli_set(CMD, vram_chunking_check(o, optind + 1 < argc ? argv[optind + 1] : NULL, ranks, err, sizeof err), err);
    return rc ? rc : -1;
}

static int print_chunk_text(const vram_chunking_report *o, uint64_t k, uint64_t i) {
    const vram_chunks_plan *p = &o->plan;
    uint64_t *rows = o->rows;
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

static int print_text(const vram_chunking_report *o) {
    const vram_chunks_plan *p = &o->plan;
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
        if (print_chunk_text(o, k, vram_chunking_visit(o, k)) != 0) return -1;
    }
    return 0;
}

int cmd_chunks(int argc, char **argv) {
    vram_chunking_opts o;
    vram_chunking_report r;
    vram_ranks ranks;
    char err[1024];
    int json = 0, rc = parse(argc, argv, &o, &ranks, &json);
    vram_status st;
    if (rc >= 0) return rc;
    if ((st = vram_chunking_run(&o, &ranks, &r, err, sizeof err)) != VRAM_OK) {
        rc = st == VRAM_E_NOSPACE ? cli_error(VRAM_EXIT_NO, CMD, "%s", err) : cli_fail(CMD, st, err);
    } else if (json) {
        vram_json j;
        vram_json_init(&j, stdout);
        rc = vram_chunking_json(&j, &r) == VRAM_OK ? 0 : -1;
        vram_json_finish(&j);
    } else {
        rc = print_text(&r);
    }
    vram_chunking_free(&r);
    if (rc < 0) return cli_error(VRAM_EXIT_ENV, CMD, "internal error: inconsistent plan");
    if (rc > 0) return rc;
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_error(VRAM_EXIT_ENV, CMD, "cannot write the plan to standard output");
    return VRAM_EXIT_OK;
}
