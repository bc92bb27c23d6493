/* Fuzzes vramkit/monitor.h: a random config, then a random stream of samples (devices,
 * times that may go back, sizes that may be inconsistent, epoch marks) fed with random
 * warning-buffer sizes.
 * Invariants: the config is accepted exactly when an independent check says it is valid;
 * each sample's status is the one predicted (RANGE for a bad device, INVALID for total 0,
 * used or free above total, or a time before the device's last; BUFFER when more warnings
 * than room; else OK), and on any error the monitor is byte-for-byte unchanged (after
 * BUFFER the same sample fed again with room succeeds); the warnings raised are exactly the
 * ones an independent recomputation from the whole stored history predicts, with the same
 * numbers: near_limit when used * 10^6 >= limit_ppm * total (128-bit) and the last earlier
 * sample that was at the limit or strictly below the re-arm level was below it (or there is
 * none); leak at a mark when used grew since the previous mark by more than the threshold
 * and the previous epoch's growth did not; rising_floor at a mark when the run of epochs
 * whose floor (least used after the previous mark, up to and including this one) rose by
 * at least floor_rise reaches exactly floor_epochs. Counts: at most 3 per sample, at most
 * one near_limit per sample, one leak per epoch, and the monitor's per-id totals equal the
 * recomputation's.
 *
 * Input bytes, in order (missing bytes read as 0):
 *   limit(1: 0 default, 1..250 -> x*4000 ppm, 251 NaN, 252 -0.5, 253 1.5, 254-255 1.0),
 *   rearm(1: 0 default, else x*4000 ppm), unit(1: sizes are multiples of 2^(x mod 41)),
 *   leak(1: 0 default, else x units), floor_epochs(1: 0 default, else x mod 8 + 1),
 *   floor_rise(1: 0 default, else x units / 4 + 1), then records: dev(1: bits 0-1 pick
 *   device 0, 1, 2 or 63; bits 6-7 = 3: device -1, = 2 with bit 5: device 64), flags(1:
 *   bit 0 epoch mark, bit 1 raw sizes, bit 2 time goes back, bits 3-4 buffer room 0..3),
 *   dt(1, ms), then used(2) and total(2) in units, free = total - used (0 when used >
 *   total; with raw sizes used, free and total are 8 bytes each, unscaled). */
#include <vramkit/monitor.h>

#include "fuzz_common.h"

__extension__ typedef unsigned __int128 u128;

#define MAX_HIST 2048
#define NDEV 4
static const int dev_ids[NDEV] = {0, 1, 2, 63};

typedef struct hist {
    uint64_t used[MAX_HIST], total[MAX_HIST];
    int mark[MAX_HIST];
    int n;
    uint64_t last_t;
} hist;

static hist H[NDEV];
static vram_monitor mon, copy;

typedef struct params {
    uint32_t ppm, rearm_ppm, n_floor;
    uint64_t leak, rise;
} params;

static int is_near(const params *p, uint64_t used, uint64_t total) {
    return (u128)used * 1000000u >= (u128)p->ppm * total;
}
static int is_below_rearm(const params *p, uint64_t used, uint64_t total) {
    return (u128)used * 1000000u < (u128)(p->ppm - p->rearm_ppm) * total;
}

/* Index of the k-th mark (0-based) in h, or -1. */
static int mark_index(const hist *h, int k) {
    for (int i = 0, c = 0; i < h->n; i++)
        if (h->mark[i] && c++ == k) return i;
    return -1;
}

/* Floor of epoch e (1-based): least used in (mark e-1, mark e] (0-based mark indices). */
static uint64_t floor_of(const hist *h, int e) {
    int a = mark_index(h, e - 1), b = mark_index(h, e);
    uint64_t f = UINT64_MAX;
    for (int i = a + 1; i <= b; i++)
        if (h->used[i] < f) f = h->used[i];
    return f;
}

static int rises(const params *p, const hist *h, int e) { /* epoch e's floor rose (e >= 2) */
    return (u128)floor_of(h, e) >= (u128)floor_of(h, e - 1) + p->rise;
}

static uint64_t growth(const hist *h, int i) { /* used at mark i (0-based) minus mark i-1 */
    uint64_t a = h->used[mark_index(h, i - 1)], b = h->used[mark_index(h, i)];
    return b > a ? b - a : 0;
}

/* The warnings the last sample of h should raise, into w; returns how many. */
static size_t predict(const params *p, const hist *h, int device, uint64_t t, uint64_t free_b,
                      vram_monitor_warning *w) {
    size_t n = 0;
    int k = h->n - 1, marks = 0;
    for (int i = 0; i < k; i++) marks += h->mark[i];
    uint64_t used = h->used[k], total = h->total[k];
    memset(w, 0, 3 * sizeof *w);
    for (int i = 0; i < 3; i++) {
        w[i].device = device;
        w[i].time_ms = t;
        w[i].epoch = (uint64_t)marks;
        w[i].used = used;
        w[i].free = free_b;
        w[i].total = total;
    }
    if (is_near(p, used, total)) {
        int j = k - 1;
        while (j >= 0 && !is_near(p, h->used[j], h->total[j]) &&
               !is_below_rearm(p, h->used[j], h->total[j]))
            j--;
        if (j < 0 || is_below_rearm(p, h->used[j], h->total[j])) {
            w[n].id = VRAM_MONITOR_NEAR_LIMIT;
            w[n].severity = VRAM_MONITOR_WARNING;
            w[n].limit_ppm = p->ppm;
            u128 need = ((u128)p->ppm * total + 999999u) / 1000000u;
            w[n].threshold = (uint64_t)need;
            n++;
        }
    }
    if (!h->mark[k]) return n;
    int m = marks + 1; /* marks including this one; this is mark m-1 (0-based) */
    if (m >= 2) {
        uint64_t g = growth(h, m - 1);
        int cond = g > p->leak, prev = m >= 3 && growth(h, m - 2) > p->leak;
        if (cond && !prev) {
            w[n].id = VRAM_MONITOR_LEAK;
            w[n].severity = VRAM_MONITOR_WARNING;
            w[n].threshold = p->leak;
            w[n].growth = g;
            w[n].from = h->used[mark_index(h, m - 2)];
            w[n].to = used;
            n++;
        }
    }
    if (m >= 3) {
        int e = m - 1; /* the epoch this mark closes */
        uint32_t run = 0;
        for (int x = e; x >= 2 && run <= p->n_floor && rises(p, h, x); x--) run++; /* N+1 is enough */
        if (run == p->n_floor) {
            w[n].id = VRAM_MONITOR_RISING_FLOOR;
            w[n].severity = VRAM_MONITOR_NOTICE;
            w[n].threshold = p->rise;
            w[n].from = floor_of(h, e - (int)p->n_floor);
            w[n].to = floor_of(h, e);
            w[n].growth = w[n].to - w[n].from;
            w[n].epochs = p->n_floor;
            n++;
        }
    }
    return n;
}

static void same_warning(const vram_monitor_warning *a, const vram_monitor_warning *b) {
    FUZZ_CHECK(a->id == b->id);
    FUZZ_CHECK(a->severity == b->severity);
    FUZZ_CHECK(a->device == b->device);
    FUZZ_CHECK(a->time_ms == b->time_ms);
    FUZZ_CHECK(a->epoch == b->epoch);
    FUZZ_CHECK(a->used == b->used && a->free == b->free && a->total == b->total);
    FUZZ_CHECK(a->limit_ppm == b->limit_ppm);
    FUZZ_CHECK(a->threshold == b->threshold);
    FUZZ_CHECK(a->growth == b->growth);
    FUZZ_CHECK(a->from == b->from && a->to == b->to);
    FUZZ_CHECK(a->epochs == b->epochs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    vram_monitor_config cfg;
    params p;
    memset(&cfg, 0, sizeof cfg);
    memset(H, 0, sizeof H);

    /* the config, and whether it is valid, worked out separately */
    unsigned lb = (unsigned)fuzz_u64(&in, 1), rb = (unsigned)fuzz_u64(&in, 1);
    unsigned ub = (unsigned)fuzz_u64(&in, 1), leakb = (unsigned)fuzz_u64(&in, 1);
    unsigned fe = (unsigned)fuzz_u64(&in, 1), frb = (unsigned)fuzz_u64(&in, 1);
    uint64_t unit = UINT64_C(1) << (ub % 41);
    int valid = 1;
    uint32_t lim_ppm = 900000;
    if (lb >= 1 && lb <= 250) {
        lim_ppm = lb * 4000u;
        cfg.limit = (double)lim_ppm / 1e6;
    } else if (lb == 251) {
        cfg.limit = __builtin_nan("");
        valid = 0;
    } else if (lb == 252) {
        cfg.limit = -0.5;
        valid = 0;
    } else if (lb == 253) {
        cfg.limit = 1.5;
        valid = 0;
    } else if (lb >= 254) {
        lim_ppm = 1000000u;
        cfg.limit = 1.0;
    }
    uint32_t re_ppm = lim_ppm < 50000u ? lim_ppm : 50000u;
    if (rb != 0) {
        re_ppm = rb * 4000u;
        cfg.rearm = (double)re_ppm / 1e6;
        if (valid && re_ppm > lim_ppm) valid = 0;
    }
    cfg.leak_bytes = leakb ? leakb * unit : 0;
    cfg.floor_epochs = fe ? fe % 8u + 1u : 0;
    cfg.floor_rise_bytes = frb ? frb * unit / 4u + 1u : 0;
    p.ppm = lim_ppm;
    p.rearm_ppm = re_ppm;
    p.leak = leakb ? leakb * unit : UINT64_C(100000000);
    p.n_floor = fe ? fe % 8u + 1u : 3u;
    p.rise = frb ? frb * unit / 4u + 1u : UINT64_C(1000000);

    vram_status st = vram_monitor_init(&mon, &cfg);
    FUZZ_CHECK(st == (valid ? VRAM_OK : VRAM_E_INVALID));
    if (!valid) return 0;
    FUZZ_CHECK(mon.limit_ppm == p.ppm && mon.rearm_ppm == p.rearm_ppm);

    uint64_t want_raised[VRAM_MONITOR_WARNING_COUNT] = {0};
    while (in.n > 0) {
        unsigned db = (unsigned)fuzz_u64(&in, 1), fl = (unsigned)fuzz_u64(&in, 1);
        uint64_t dt = fuzz_u64(&in, 1);
        int slot = (int)(db & 3u), device = dev_ids[slot];
        if ((db >> 6) == 3u) device = -1;
        else if ((db >> 6) == 2u && (db & 0x20u)) device = VRAM_MONITOR_MAX_DEVICES;
        int mark = (int)(fl & 1u), raw = (int)((fl >> 1) & 1u), back = (int)((fl >> 2) & 1u);
        size_t cap = (fl >> 3) & 3u;
        vram_monitor_sample s;
        memset(&s, 0, sizeof s);
        if (raw) {
            s.used_bytes = fuzz_u64(&in, 8);
            s.free_bytes = fuzz_u64(&in, 8);
            s.total_bytes = fuzz_u64(&in, 8);
        } else {
            s.used_bytes = fuzz_u64(&in, 2) * unit;
            s.total_bytes = fuzz_u64(&in, 2) * unit;
            s.free_bytes = s.used_bytes <= s.total_bytes ? s.total_bytes - s.used_bytes : 0;
        }
        hist *h = device >= 0 && device < VRAM_MONITOR_MAX_DEVICES ? &H[slot] : NULL;
        uint64_t last = h ? h->last_t : 0;
        s.time_ms = back ? (last > dt ? last - dt - 1 : 0) : last + dt;
        s.device = device;
        s.epoch_mark = mark;

        vram_status want = VRAM_OK;
        if (h == NULL) want = VRAM_E_RANGE;
        else if (s.total_bytes == 0 || s.used_bytes > s.total_bytes || s.free_bytes > s.total_bytes)
            want = VRAM_E_INVALID;
        else if (h->n > 0 && s.time_ms < h->last_t)
            want = VRAM_E_INVALID;

        vram_monitor_warning got[4], exp[3];
        size_t n = 99, n_exp = 0;
        memcpy(&copy, &mon, sizeof mon);
        memset(got, 0xA5, sizeof got);
        if (want == VRAM_OK) {
            if (h->n >= MAX_HIST) break;
            h->used[h->n] = s.used_bytes;
            h->total[h->n] = s.total_bytes;
            h->mark[h->n] = mark;
            h->n++;
            n_exp = predict(&p, h, device, s.time_ms, s.free_bytes, exp);
            FUZZ_CHECK(n_exp <= VRAM_MONITOR_MAX_RAISED);
            if (n_exp > cap) want = VRAM_E_BUFFER;
        }
        st = vram_monitor_feed(&mon, &s, cap ? got : NULL, cap, &n);
        FUZZ_CHECK(st == want);
        if (st != VRAM_OK) {
            FUZZ_CHECK(memcmp(&mon, &copy, sizeof mon) == 0);
            FUZZ_CHECK(n == (st == VRAM_E_BUFFER ? n_exp : 0u));
            if (st != VRAM_E_BUFFER) continue;
            st = vram_monitor_feed(&mon, &s, got, VRAM_MONITOR_MAX_RAISED, &n);
            FUZZ_CHECK(st == VRAM_OK);
        }
        FUZZ_CHECK(n == n_exp);
        for (size_t i = 0; i < n; i++) {
            same_warning(&got[i], &exp[i]);
            want_raised[exp[i].id]++;
        }
        if (n < 4) FUZZ_CHECK(((unsigned char *)&got[n])[0] == 0xA5); /* nothing past n */
        h->last_t = s.time_ms;
        /* the device's own state agrees with the history */
        const vram_monitor_device *d = vram_monitor_device_state(&mon, device);
        FUZZ_CHECK(d != NULL && d->samples == (uint64_t)h->n);
        FUZZ_CHECK(d->used == s.used_bytes && d->total == s.total_bytes);
    }
    /* totals: the recomputation's, and within the obvious bounds */
    uint64_t samples = 0, marks = 0;
    for (int s = 0; s < NDEV; s++) {
        samples += (uint64_t)H[s].n;
        for (int i = 0; i < H[s].n; i++) marks += (uint64_t)H[s].mark[i];
    }
    for (int i = 0; i < VRAM_MONITOR_WARNING_COUNT; i++) FUZZ_CHECK(mon.raised[i] == want_raised[i]);
    FUZZ_CHECK(mon.raised[VRAM_MONITOR_NEAR_LIMIT] <= samples);
    FUZZ_CHECK(mon.raised[VRAM_MONITOR_LEAK] <= marks);
    FUZZ_CHECK(mon.raised[VRAM_MONITOR_RISING_FLOOR] <= marks);
    return 0;
}
