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
        "usage: vramkit chunks --samples N --sample-bytes SIZE --batch K BUDGET [options]\n"
        "       vramkit chunks FILE --dataset PATH [--dataset PATH]... [--batch K] BUDGET [options]\n"
        "\n"
        "How N samples of SIZE bytes are cut into chunks that live in GPU memory and each chunk\n"
        "into batches: every chunk fits one device buffer and holds whole batches. The FILE\n"
        "form takes N and SIZE from the datasets of an HDF5 file, plans as `vramkit stream`\n"
        "will, and says how each dataset is read (pread, or through HDF5 and why).\n"
        "\n"
        "budget (one):\n"
        "  --budget SIZE       device bytes for all chunk buffers\n"
        "  --free SIZE         free device memory: F x (free - reserve)\n"
        "    --fraction F      of free memory, in (0, 1] (default 0.75)\n"
        "    --reserve SIZE    kept for the model (default 0)\n"
        "  --assume-gpu SPEC   a GPU's free memory, as --free: SIZE[,used=SIZE|,free=SIZE]\n"
        "options:\n"
        "  --samples N, --sample-bytes SIZE, --batch K   the dataset and the batch (FILE form:\n"
        "                      --dataset PATH instead, repeat for several; --batch default 128)\n"
        "  --buffers M         chunk buffers on the device (default 2)\n"
        "  --drop-last         drop each rank's final partial batch\n"
        "  --world auto|W      ranks sharing the data (default auto: the launcher's, else 1)\n"
        "  --rank R            this rank (default 0, or the launcher's)\n"
        "  --pad | --no-pad    every rank gets ceil(N/W) samples, wrapping (default) or floor(N/W)\n"
        "  --shuffle           chunks and samples in a random order fixed by (seed, epoch, rank)\n"
        "  --seed S, --epoch E the shuffle's (default 0)\n"
        "  --json              the whole plan as JSON (text shows at most %u chunks)\n"
        "\n"
        "exit codes: 0 planned, 1 a batch does not fit one buffer, 2 bad usage or input,\n"
        "            (also a file HDF5 crashes on or outgrows VRAMKIT_H5_MEMORY with), 3 environment\n"
        "            error (a file that cannot be read, HDF5 past VRAMKIT_H5_TIMEOUT)\n"
        "Manual, with the JSON fields and the launchers' variables: docs/chunks.md\n",
        TEXT_CHUNKS);
}

enum { FLAG_JSON = 1u << 0 };

static vram_status set(void *o, const char *name, const char *arg, char *err, size_t cap) {
    return vram_chunking_set(o, name, arg, err, cap);
}

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, vram_chunking_opts *o, vram_ranks *ranks, int *json) {
    char err[512];
    unsigned flags = 0;
    const cli_spec spec = {CMD,
                           "samples= sample-bytes= batch= budget= free= fraction= reserve= buffers= "
                           "drop-last world= rank= pad no-pad shuffle seed= epoch= dataset= assume-gpu=",
                           "json", set, o, usage, NULL, 1, 0};
    int rc;
    memset(o, 0, sizeof o[0]);
    if ((rc = cli_parse(&spec, argc, argv, &flags)) >= 0) return rc;
    *json = (flags & FLAG_JSON) != 0;
    if (optind < argc) o->file = argv[optind];
    rc = cli_set(CMD, vram_chunking_check(o, optind + 1 < argc ? argv[optind + 1] : NULL, ranks, err, sizeof err), err);
    return rc ? rc : -1;
}

static int print_chunk_text(const vram_chunking_report *o, uint64_t k, uint64_t i) {
    const vram_chunks_plan *p = &o->plan;
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
    if (p->config.shuffle) {
        /* position by position: O(what is printed), whatever the chunk's size */
        vram_perm rows;
        if (vram_chunks_row_perm(p, i, o->epoch, &rows) != VRAM_OK || rows.n != ch.rows)
            return -1;
        printf("%7s  %5s  order:", "", "");
        for (uint64_t r = 0; r < ch.rows && r < TEXT_ORDER; r++)
            printf(" %llu", (unsigned long long)(ch.start + vram_perm_at(&rows, r)));
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
    } else if (json && (st = vram_chunking_json_check(&r, err, sizeof err)) != VRAM_OK) {
        rc = cli_error(VRAM_EXIT_USAGE, CMD, "%s", err); /* refused before a byte is written */
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
