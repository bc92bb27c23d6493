/* The streamer sharded across ranks that come from the launcher: each rank takes its rank and
 * the world from mpirun's variables (vram_ranks_from_env, as `--world auto` does), streams its
 * shard of a data set in host memory (the host device), and the counts of every sample
 * delivered are summed over the ranks: with N a multiple of the world every sample of an epoch
 * arrives exactly once, in every combination of shuffle, drop-last and padding; with a
 * remainder, padding repeats exactly the first samples and --no-pad leaves out exactly the
 * last ones. Every row's bytes are the sample's own. */
#include <string.h>

#include "comm/ranks_env.h"
#include "device/host_device.h"
#include "mpi_check.h"
#include "stream/stream.h"

#define ROW 12 /* bytes per sample: index, ~index, index * 7 as uint32 */

static void fill(uint32_t *data, uint64_t n) {
    for (uint64_t s = 0; s < n; s++) {
        data[3 * s] = (uint32_t)s;
        data[3 * s + 1] = ~(uint32_t)s;
        data[3 * s + 2] = (uint32_t)s * 7u;
    }
}

/* Streams `epochs` epochs; counts[e * n + s] += deliveries of sample s in epoch e. */
static void stream_shard(const vram_ranks *r, uint64_t n, int shuffle, int drop_last, int nopad,
                         uint64_t batch, uint64_t epochs, const uint32_t *data, uint32_t *counts) {
    vram_memsource m;
    memset(&m, 0, sizeof m);
    m.data[0] = data;
    m.row_bytes[0] = ROW;
    m.samples = n;
    m.datasets = 1;
    vram_source src = vram_memsource_source(&m);
    vram_stream_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plan.batch = batch;
    cfg.plan.budget_bytes = 64 * batch * ROW; /* several chunks */
    cfg.plan.world = r->world;
    cfg.plan.rank = r->rank;
    cfg.plan.shard = nopad ? VRAM_SHARD_DROP : VRAM_SHARD_PAD;
    cfg.plan.drop_last = drop_last;
    cfg.plan.shuffle = shuffle;
    cfg.plan.seed = 11;
    cfg.epochs = epochs;
    cfg.readers = 2;
    vram_device_ops ops = vram_host_ops();
    vram_streamer *s = NULL;
    char err[512];
    vram_status st = vram_streamer_open(&ops, &src, &cfg, &s, err, sizeof err);
    CHECK(st == VRAM_OK, "open: %s", err);
    if (st != VRAM_OK) return;
    for (;;) {
        vram_batch b;
        st = vram_streamer_next(s, &b);
        CHECK(st == VRAM_OK, "next: %s", vram_streamer_error(s));
        if (st != VRAM_OK || b.done) break;
        const uint32_t *rows = (const uint32_t *)b.data[0];
        for (uint64_t i = 0; i < b.count; i++) {
            uint64_t smp = b.samples[i];
            CHECK(smp < n, "sample %llu", (unsigned long long)smp);
            if (smp >= n) continue;
            CHECK(rows[3 * i] == (uint32_t)smp && rows[3 * i + 1] == ~(uint32_t)smp &&
                      rows[3 * i + 2] == (uint32_t)smp * 7u,
                  "row %llu of batch %llu holds another sample's bytes", (unsigned long long)i,
                  (unsigned long long)b.index);
            counts[b.epoch_index * n + smp]++;
        }
        CHECK(vram_streamer_release(s, &b) == VRAM_OK, "release");
    }
    CHECK(vram_streamer_close(s) == VRAM_OK, "close");
}

int main(void) {
    vram_comm_ops c = check_comm();
    vram_ranks r;
    vram_status st = vram_ranks_from_env(&r);
    CHECK(st == VRAM_OK, "ranks from the environment: %s", vram_status_str(st));
    CHECK(r.launcher == VRAM_LAUNCHER_OPENMPI, "launcher %s", vram_launcher_name(r.launcher));
    CHECK(r.rank == (uint32_t)c.rank && r.world == (uint32_t)c.world,
          "the launcher says %u of %u, MPI %d of %d", r.rank, r.world, c.rank, c.world);
    CHECK(r.local_rank == c.rank, "one node: the local rank is the rank (%lld)", (long long)r.local_rank);
    if (check_failures) return check_finish(&c);

    const uint64_t epochs = 2;
    const uint64_t sizes[] = {4000, 1003}; /* a multiple of the world, and one with a remainder */
    for (unsigned z = 0; z < 2; z++) {
        uint64_t n = sizes[z];
        uint32_t *data = (uint32_t *)malloc(n * ROW);
        uint32_t *counts = (uint32_t *)malloc(epochs * n * sizeof(uint32_t));
        fill(data, n);
        for (int combo = 0; combo < 8; combo++) {
            int shuffle = combo & 1, drop_last = (combo >> 1) & 1, nopad = (combo >> 2) & 1;
            uint64_t batch = 32;
            memset(counts, 0, epochs * n * sizeof(uint32_t));
            stream_shard(&r, n, shuffle, drop_last, nopad, batch, epochs, data, counts);
            st = c.all_reduce(c.ctx, counts, counts, epochs * n, VRAM_COMM_U32, VRAM_COMM_SUM, NULL);
            CHECK(st == VRAM_OK, "all-reduce: %s", c.last_error(c.ctx));
            /* what each sample must get: per rank, ceil or floor of n / world positions, then
             * drop-last cuts each rank to whole batches */
            uint64_t w = r.world, per = nopad ? n / w : (n + w - 1) / w;
            uint64_t kept = drop_last ? per / batch * batch : per;
            for (uint64_t e = 0; e < epochs; e++) {
                uint64_t bad = 0, first_bad = 0, total = 0;
                uint32_t seen = 0;
                for (uint64_t s = 0; s < n; s++) {
                    /* positions p < world * per hold sample p mod n: s at s, s + n, ... */
                    uint32_t full = 0, got = counts[e * n + s];
                    for (uint64_t p = s; p < w * per; p += n) full++;
                    /* drop-last leaves out each rank's final partial batch, wherever the
                     * shuffle put its samples: at most the full count */
                    if (drop_last ? got > full : got != full) {
                        if (!bad) first_bad = s, seen = got;
                        bad++;
                    }
                    total += got;
                }
                CHECK(bad == 0, "n %llu shuffle %d drop_last %d no-pad %d epoch %llu: %llu samples "
                      "delivered a wrong number of times (sample %llu: %u)",
                      (unsigned long long)n, shuffle, drop_last, nopad, (unsigned long long)e,
                      (unsigned long long)bad, (unsigned long long)first_bad, seen);
                CHECK(total == w * kept, "epoch %llu: %llu deliveries, want %llu", (unsigned long long)e,
                      (unsigned long long)total, (unsigned long long)(w * kept));
                if (n % w == 0 && !drop_last) { /* the headline: every sample exactly once */
                    uint64_t not_once = 0;
                    for (uint64_t s = 0; s < n; s++) not_once += counts[e * n + s] != 1;
                    CHECK(not_once == 0, "%llu samples not delivered exactly once", (unsigned long long)not_once);
                }
            }
        }
        free(data);
        free(counts);
    }
    return check_finish(&c);
}
