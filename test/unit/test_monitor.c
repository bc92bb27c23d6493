/* Unit tests of vramkit/monitor.h on hand-built sample streams: each warning fires at the
 * sample where its threshold is crossed and not one sample before, once per episode, and
 * again only after its re-arm rule; epochs start at the first mark; devices are
 * independent; bad configs and samples are refused without changing anything; a full
 * warning buffer loses nothing. Thresholds are worked out by hand in the comments. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <vramkit/monitor.h>

#define MB UINT64_C(1000000)
#define GB UINT64_C(1000000000)

static vram_monitor *new_monitor(const vram_monitor_config *c) {
    static vram_monitor m; /* ~10 KiB: kept off the stack */
    vram_status st = vram_monitor_init(&m, c);
    cr_assert_eq(st, VRAM_OK, "init: %s", vram_status_name(st));
    return &m;
}

/* Feeds one sample (free = total - used) and returns how many warnings it raised. */
static size_t feed(vram_monitor *m, int dev, uint64_t t, uint64_t used, uint64_t total, int mark,
                   vram_monitor_warning *w) {
    vram_monitor_sample s;
    vram_monitor_warning local[VRAM_MONITOR_MAX_RAISED];
    size_t n = 99;
    memset(&s, 0, sizeof s);
    s.time_ms = t;
    s.device = dev;
    s.used_bytes = used;
    s.free_bytes = total - used;
    s.total_bytes = total;
    s.epoch_mark = mark;
    vram_status st = vram_monitor_feed(m, &s, w ? w : local, VRAM_MONITOR_MAX_RAISED, &n);
    cr_assert_eq(st, VRAM_OK, "feed t=%llu: %s", (unsigned long long)t, vram_status_name(st));
    cr_assert_leq(n, (size_t)VRAM_MONITOR_MAX_RAISED);
    return n;
}

static vram_monitor_config cfg_zero(void) {
    vram_monitor_config c;
    memset(&c, 0, sizeof c);
    return c;
}

/* ---- config --------------------------------------------------------------------- */

Test(monitor_config, zero_means_the_documented_defaults) {
    vram_monitor_config z = cfg_zero();
    vram_monitor_config c = vram_monitor_defaults(&z);
    cr_expect_eq(c.limit, 0.90);
    cr_expect_eq(c.rearm, 0.05);
    cr_expect_eq(c.leak_bytes, 100 * MB); /* user-reports/004: 100 MB */
    cr_expect_eq(c.floor_epochs, 3u);
    cr_expect_eq(c.floor_rise_bytes, 1 * MB);
    vram_monitor *m = new_monitor(NULL);
    cr_expect_eq(m->limit_ppm, 900000u);
    cr_expect_eq(m->rearm_ppm, 50000u);
    cr_expect_eq(m->config.leak_bytes, 100 * MB);
    for (int d = 0; d < VRAM_MONITOR_MAX_DEVICES; d++) cr_expect_eq(m->dev[d].samples, 0u);
}

Test(monitor_config, set_fields_are_kept) {
    vram_monitor_config c = cfg_zero();
    c.limit = 0.8;
    c.rearm = 0.1;
    c.leak_bytes = 5;
    c.floor_epochs = 7;
    c.floor_rise_bytes = 9;
    vram_monitor *m = new_monitor(&c);
    cr_expect_eq(m->limit_ppm, 800000u);
    cr_expect_eq(m->rearm_ppm, 100000u);
    cr_expect_eq(m->config.leak_bytes, 5u);
    cr_expect_eq(m->config.floor_epochs, 7u);
    cr_expect_eq(m->config.floor_rise_bytes, 9u);
}

Test(monitor_config, small_limit_gets_a_rearm_no_larger_than_itself) {
    vram_monitor_config c = cfg_zero();
    c.limit = 0.02;
    cr_expect_eq(vram_monitor_defaults(&c).rearm, 0.02);
    vram_monitor *m = new_monitor(&c);
    cr_expect_eq(m->limit_ppm, 20000u);
    cr_expect_eq(m->rearm_ppm, 20000u);
}

Test(monitor_config, bad_configs_are_invalid_and_leave_the_monitor_alone) {
    static const struct {
        double limit, rearm;
    } bad[] = {
        {-0.1, 0.0}, {1.5, 0.0}, {1.0000001, 0.0}, {NAN, 0.0}, {INFINITY, 0.0}, {-INFINITY, 0.0},
        {0.5, 0.6},  {0.5, -0.01}, {0.5, NAN}, {0.9, INFINITY},
    };
    static vram_monitor m;
    static vram_monitor before;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_monitor_config c = cfg_zero();
        c.limit = bad[i].limit;
        c.rearm = bad[i].rearm;
        memset(&m, 0x5A, sizeof m);
        memcpy(&before, &m, sizeof m);
        cr_expect_eq(vram_monitor_init(&m, &c), VRAM_E_INVALID, "case %zu", i);
        cr_expect_eq(memcmp(&m, &before, sizeof m), 0, "case %zu changed the monitor", i);
    }
    cr_expect_eq(vram_monitor_init(NULL, NULL), VRAM_E_INVALID);
    /* the edges that are allowed */
    vram_monitor_config c = cfg_zero();
    c.limit = 1.0;
    c.rearm = 1.0;
    cr_expect_eq(vram_monitor_init(&m, &c), VRAM_OK);
    c.limit = 1e-6;
    c.rearm = 0.0;
    cr_expect_eq(vram_monitor_init(&m, &c), VRAM_OK);
    cr_expect_eq(m.limit_ppm, 1u);
}

Test(monitor_config, table_names_severities_and_texts) {
    cr_expect_str_eq(vram_monitor_warning_name(VRAM_MONITOR_NEAR_LIMIT), "near_limit");
    cr_expect_str_eq(vram_monitor_warning_name(VRAM_MONITOR_LEAK), "leak");
    cr_expect_str_eq(vram_monitor_warning_name(VRAM_MONITOR_RISING_FLOOR), "rising_floor");
    cr_expect_eq(vram_monitor_warning_severity(VRAM_MONITOR_NEAR_LIMIT), VRAM_MONITOR_WARNING);
    cr_expect_eq(vram_monitor_warning_severity(VRAM_MONITOR_LEAK), VRAM_MONITOR_WARNING);
    cr_expect_eq(vram_monitor_warning_severity(VRAM_MONITOR_RISING_FLOOR), VRAM_MONITOR_NOTICE);
    cr_expect_str_eq(vram_monitor_severity_name(VRAM_MONITOR_NOTICE), "notice");
    cr_expect_str_eq(vram_monitor_severity_name(VRAM_MONITOR_WARNING), "warning");
    for (int i = 0; i < VRAM_MONITOR_WARNING_COUNT; i++) {
        vram_monitor_warning_id id = (vram_monitor_warning_id)i;
        cr_expect(vram_monitor_warning_text(id) && strlen(vram_monitor_warning_text(id)) > 20);
        cr_expect(vram_monitor_warning_recommendation(id) &&
                  strlen(vram_monitor_warning_recommendation(id)) > 20);
    }
    cr_expect_str_eq(vram_monitor_warning_name(VRAM_MONITOR_WARNING_COUNT), "unknown");
    cr_expect_str_eq(vram_monitor_warning_name((vram_monitor_warning_id)-1), "unknown");
    cr_expect_null(vram_monitor_warning_text((vram_monitor_warning_id)-1));
    cr_expect_null(vram_monitor_warning_recommendation(VRAM_MONITOR_WARNING_COUNT));
    cr_expect_eq((int)vram_monitor_warning_severity(VRAM_MONITOR_WARNING_COUNT), 0);
    cr_expect_str_eq(vram_monitor_severity_name((vram_monitor_severity)0), "unknown");
    cr_expect_str_eq(vram_monitor_severity_name((vram_monitor_severity)99), "unknown");
}

/* ---- NEAR_LIMIT ------------------------------------------------------------------ */

Test(monitor_near_limit, fires_at_the_exact_byte_and_not_before) {
    /* total 1,000,003: 90% is 900,002.7 bytes, so the least used that meets it is 900,003 */
    const uint64_t total = 1000003;
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    vram_monitor *m = new_monitor(NULL);
    cr_expect_eq(feed(m, 0, 0, 500000, total, 0, w), 0u);
    cr_expect_eq(feed(m, 0, 1, 900002, total, 0, w), 0u);
    cr_assert_eq(feed(m, 0, 2, 900003, total, 0, w), 1u);
    cr_expect_eq(w[0].id, VRAM_MONITOR_NEAR_LIMIT);
    cr_expect_eq(w[0].severity, VRAM_MONITOR_WARNING);
    cr_expect_eq(w[0].device, 0);
    cr_expect_eq(w[0].time_ms, 2u);
    cr_expect_eq(w[0].used, 900003u);
    cr_expect_eq(w[0].free, total - 900003u);
    cr_expect_eq(w[0].total, total);
    cr_expect_eq(w[0].threshold, 900003u);
    cr_expect_eq(w[0].limit_ppm, 900000u);
    cr_expect_eq(w[0].epoch, 0u);
    cr_expect_eq(m->raised[VRAM_MONITOR_NEAR_LIMIT], 1u);
}

Test(monitor_near_limit, once_per_episode_and_rearm_strictly_below_limit_minus_rearm) {
    /* total 10^6, limit 90% = 900,000, re-arm below 85% = 850,000 */
    const uint64_t total = 1000000;
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    vram_monitor *m = new_monitor(NULL);
    uint64_t t = 0;
    cr_expect_eq(feed(m, 0, t++, 900000, total, 0, w), 1u); /* first sample already at it */
    cr_expect_eq(feed(m, 0, t++, 990000, total, 0, w), 0u); /* still the same episode */
    cr_expect_eq(feed(m, 0, t++, 1000000, total, 0, w), 0u);
    cr_expect_eq(feed(m, 0, t++, 899999, total, 0, w), 0u); /* below the limit: not re-armed */
    cr_expect_eq(feed(m, 0, t++, 850000, total, 0, w), 0u); /* at the re-arm level: not below */
    cr_expect_eq(feed(m, 0, t++, 900000, total, 0, w), 0u); /* so no second warning */
    cr_expect(m->dev[0].near_raised);
    cr_expect_eq(feed(m, 0, t++, 849999, total, 0, w), 0u); /* re-armed, silently */
    cr_expect(!m->dev[0].near_raised);
    cr_expect_eq(feed(m, 0, t++, 899999, total, 0, w), 0u);
    cr_expect_eq(feed(m, 0, t++, 900000, total, 0, w), 1u); /* a new episode */
    cr_expect_eq(w[0].time_ms, t - 1);
    cr_expect_eq(m->raised[VRAM_MONITOR_NEAR_LIMIT], 2u);
}

Test(monitor_near_limit, custom_limit_and_rearm) {
    /* limit 50%, rearm 10 points: fires at 500 of 1000, re-arms below 400 */
    vram_monitor_config c = cfg_zero();
    c.limit = 0.5;
    c.rearm = 0.1;
    vram_monitor *m = new_monitor(&c);
    cr_expect_eq(feed(m, 0, 0, 499, 1000, 0, NULL), 0u);
    cr_expect_eq(feed(m, 0, 1, 500, 1000, 0, NULL), 1u);
    cr_expect_eq(feed(m, 0, 2, 400, 1000, 0, NULL), 0u);
    cr_expect_eq(feed(m, 0, 3, 600, 1000, 0, NULL), 0u);
    cr_expect_eq(feed(m, 0, 4, 399, 1000, 0, NULL), 0u);
    cr_expect_eq(feed(m, 0, 5, 500, 1000, 0, NULL), 1u);
}

Test(monitor_near_limit, rearm_equal_to_the_limit_warns_once_per_run) {
    vram_monitor_config c = cfg_zero();
    c.limit = 0.5;
    c.rearm = 0.5;
    vram_monitor *m = new_monitor(&c);
    cr_expect_eq(feed(m, 0, 0, 500, 1000, 0, NULL), 1u);
    cr_expect_eq(feed(m, 0, 1, 0, 1000, 0, NULL), 0u); /* even empty: level 0 is never passed */
    cr_expect_eq(feed(m, 0, 2, 1000, 1000, 0, NULL), 0u);
}

Test(monitor_near_limit, huge_totals_do_not_overflow) {
    /* total 2^64 - 1: 90% needs a 128-bit product done without one */
    const uint64_t total = UINT64_MAX;
    /* ceil(0.9 * (2^64 - 1)) = 16602069666338596454 (0.9 * 18446744073709551615 =
     * 16602069666338596453.5) */
    const uint64_t level = UINT64_C(16602069666338596454);
    vram_monitor *m = new_monitor(NULL);
    cr_expect_eq(feed(m, 0, 0, level - 1, total, 0, NULL), 0u);
    cr_expect_eq(feed(m, 0, 1, level, total, 0, NULL), 1u);
}

/* ---- LEAK ------------------------------------------------------------------------- */

Test(monitor_leak, growth_between_marks_beyond_100MB_fires_once_per_run_of_epochs) {
    const uint64_t total = 80 * GB, base = 10 * GB;
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    vram_monitor *m = new_monitor(NULL);
    uint64_t t = 0;
    cr_expect_eq(feed(m, 0, t++, 1 * GB, total, 0, w), 0u);     /* before epochs: loading */
    cr_expect_eq(feed(m, 0, t++, base, total, 1, w), 0u);       /* mark 1 opens epoch 1 */
    cr_expect_eq(m->dev[0].marks, 1u);
    cr_expect_eq(feed(m, 0, t++, base + 5 * GB, total, 0, w), 0u); /* inside: peaks are fine */
    cr_expect_eq(feed(m, 0, t++, base + 100 * MB, total, 1, w), 0u); /* +100 MB: not beyond */
    cr_assert_eq(feed(m, 0, t++, base + 200 * MB + 1, total, 1, w), 1u); /* +100 MB + 1 byte */
    cr_expect_eq(w[0].id, VRAM_MONITOR_LEAK);
    cr_expect_eq(w[0].epoch, 2u);
    cr_expect_eq(w[0].growth, 100 * MB + 1);
    cr_expect_eq(w[0].from, base + 100 * MB);
    cr_expect_eq(w[0].to, base + 200 * MB + 1);
    cr_expect_eq(w[0].threshold, 100 * MB);
    cr_expect_eq(w[0].used, base + 200 * MB + 1);
    cr_expect_eq(feed(m, 0, t++, base + 1 * GB, total, 1, w), 0u); /* still leaking: same run */
    cr_expect_eq(feed(m, 0, t++, base + 1 * GB, total, 1, w), 0u); /* flat epoch: re-armed */
    cr_expect_eq(feed(m, 0, t++, base + 1 * GB + 100 * MB, total, 1, w), 0u);
    cr_expect_eq(feed(m, 0, t++, base + 1 * GB + 300 * MB, total, 1, w), 1u); /* a new run */
    cr_expect_eq(w[0].epoch, 6u);
    cr_expect_eq(w[0].growth, 200 * MB);
    cr_expect_eq(m->raised[VRAM_MONITOR_LEAK], 2u);
}

Test(monitor_leak, a_shrinking_epoch_is_no_growth_and_rearms) {
    vram_monitor_config c = cfg_zero();
    c.leak_bytes = 10;
    vram_monitor *m = new_monitor(&c);
    cr_expect_eq(feed(m, 0, 0, 100, 1000, 1, NULL), 0u);
    cr_expect_eq(feed(m, 0, 1, 111, 1000, 1, NULL), 1u);
    cr_expect_eq(feed(m, 0, 2, 50, 1000, 1, NULL), 0u);  /* shrink: re-arms */
    cr_expect_eq(feed(m, 0, 3, 60, 1000, 1, NULL), 0u);  /* +10: not beyond */
    cr_expect_eq(feed(m, 0, 4, 71, 1000, 1, NULL), 1u);  /* +11 */
}

Test(monitor_leak, growth_without_marks_is_never_a_leak) {
    vram_monitor_config c = cfg_zero();
    c.leak_bytes = 1;
    c.limit = 1.0;
    vram_monitor *m = new_monitor(&c);
    for (uint64_t i = 0; i < 100; i++) cr_expect_eq(feed(m, 0, i, i * 10, 1000000, 0, NULL), 0u);
    cr_expect_eq(m->raised[VRAM_MONITOR_LEAK], 0u);
    cr_expect_eq(vram_monitor_epochs_done(&m->dev[0]), 0u);
}

Test(monitor_leak, the_first_mark_only_sets_the_baseline) {
    vram_monitor *m = new_monitor(NULL);
    /* a model of 60 GB loads before the first mark: no leak */
    cr_expect_eq(feed(m, 0, 0, 0, 80 * GB, 0, NULL), 0u);
    cr_expect_eq(feed(m, 0, 1, 60 * GB, 80 * GB, 1, NULL), 0u);
    cr_expect_eq(vram_monitor_epochs_done(&m->dev[0]), 0u);
    cr_expect_eq(feed(m, 0, 2, 60 * GB, 80 * GB, 1, NULL), 0u);
    cr_expect_eq(vram_monitor_epochs_done(&m->dev[0]), 1u);
}

/* ---- RISING_FLOOR ------------------------------------------------------------------ */

/* One epoch on device 0: a low point `low`, then a mark at `end`. */
static size_t epoch(vram_monitor *m, uint64_t *t, uint64_t low, uint64_t end,
                    vram_monitor_warning *w) {
    cr_expect_eq(feed(m, 0, (*t)++, low, 100 * GB, 0, w), 0u);
    return feed(m, 0, (*t)++, end, 100 * GB, 1, w);
}

Test(monitor_floor, three_rising_floors_fire_at_the_third_and_not_before) {
    vram_monitor_config c = cfg_zero();
    c.leak_bytes = UINT64_MAX; /* the floor rule alone */
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    vram_monitor *m = new_monitor(&c);
    uint64_t t = 0, f = 20 * GB;
    cr_expect_eq(feed(m, 0, t++, 1 * GB, 100 * GB, 0, w), 0u); /* before epoch 1: not a floor */
    cr_expect_eq(feed(m, 0, t++, 30 * GB, 100 * GB, 1, w), 0u); /* opens epoch 1 */
    cr_expect_eq(epoch(m, &t, f, 30 * GB, w), 0u);            /* epoch 1 floor f */
    cr_expect_eq(epoch(m, &t, f + 1 * MB, 30 * GB, w), 0u);   /* rise 1 (exactly 1 MB) */
    cr_expect_eq(epoch(m, &t, f + 2 * MB, 30 * GB, w), 0u);   /* rise 2 */
    cr_assert_eq(epoch(m, &t, f + 3 * MB, 30 * GB, w), 1u);   /* rise 3: fires */
    cr_expect_eq(w[0].id, VRAM_MONITOR_RISING_FLOOR);
    cr_expect_eq(w[0].severity, VRAM_MONITOR_NOTICE);
    cr_expect_eq(w[0].epoch, 4u);
    cr_expect_eq(w[0].epochs, 3u);
    cr_expect_eq(w[0].from, f);
    cr_expect_eq(w[0].to, f + 3 * MB);
    cr_expect_eq(w[0].growth, 3 * MB);
    cr_expect_eq(w[0].threshold, 1 * MB);
    cr_expect_eq(epoch(m, &t, f + 9 * MB, 30 * GB, w), 0u);   /* rise 4: same run */
    cr_expect_eq(epoch(m, &t, f + 9 * MB, 30 * GB, w), 0u);   /* flat: re-armed */
    cr_expect_eq(epoch(m, &t, f + 10 * MB, 30 * GB, w), 0u);  /* 1 */
    cr_expect_eq(epoch(m, &t, f + 11 * MB, 30 * GB, w), 0u);  /* 2 */
    cr_assert_eq(epoch(m, &t, f + 12 * MB, 30 * GB, w), 1u);  /* 3: fires again */
    cr_expect_eq(w[0].from, f + 9 * MB);
    cr_expect_eq(w[0].to, f + 12 * MB);
    cr_expect_eq(m->raised[VRAM_MONITOR_RISING_FLOOR], 2u);
    cr_expect_eq(m->raised[VRAM_MONITOR_LEAK], 0u);
}

Test(monitor_floor, a_rise_below_the_minimum_breaks_the_run) {
    vram_monitor_config c = cfg_zero();
    c.leak_bytes = UINT64_MAX;
    vram_monitor *m = new_monitor(&c);
    uint64_t t = 0, f = 20 * GB;
    cr_expect_eq(feed(m, 0, t++, f, 100 * GB, 1, NULL), 0u);
    cr_expect_eq(epoch(m, &t, f, f, NULL), 0u);
    cr_expect_eq(epoch(m, &t, f + 1 * MB, f + 1 * MB, NULL), 0u);
    cr_expect_eq(epoch(m, &t, f + 2 * MB, f + 2 * MB, NULL), 0u);
    cr_expect_eq(epoch(m, &t, f + 3 * MB - 1, f + 3 * MB, NULL), 0u); /* 999,999 bytes: no */
    cr_expect_eq(m->dev[0].rises, 0u);
    cr_expect_eq(epoch(m, &t, f + 4 * MB, f + 4 * MB, NULL), 0u);
    cr_expect_eq(epoch(m, &t, f + 5 * MB, f + 5 * MB, NULL), 0u);
    cr_expect_eq(epoch(m, &t, f + 6 * MB, f + 6 * MB, NULL), 1u);
}

Test(monitor_floor, the_floor_is_the_least_used_not_the_mark) {
    /* marks climb by 50 MB an epoch but every epoch dips to the same low: no floor warning
     * (and 50 MB is under the leak threshold) */
    vram_monitor *m = new_monitor(NULL);
    uint64_t t = 0;
    cr_expect_eq(feed(m, 0, t++, 10 * GB, 100 * GB, 1, NULL), 0u);
    for (uint64_t e = 1; e <= 10; e++)
        cr_expect_eq(epoch(m, &t, 5 * GB, 10 * GB + e * 50 * MB, NULL), 0u, "epoch %llu",
                     (unsigned long long)e);
    cr_expect_eq(m->dev[0].floor_raised, 0);
    cr_expect_eq(m->raised[VRAM_MONITOR_RISING_FLOOR], 0u);
}

Test(monitor_floor, a_slow_leak_under_the_threshold_shows_as_a_rising_floor) {
    /* 60 MB an epoch, nothing else: never a LEAK (<= 100 MB), RISING_FLOOR at epoch 4 */
    vram_monitor *m = new_monitor(NULL);
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    uint64_t t = 0;
    cr_expect_eq(feed(m, 0, t++, 10 * GB, 100 * GB, 1, w), 0u);
    for (uint64_t e = 1; e <= 3; e++)
        cr_expect_eq(feed(m, 0, t++, 10 * GB + e * 60 * MB, 100 * GB, 1, w), 0u);
    cr_assert_eq(feed(m, 0, t++, 10 * GB + 4 * 60 * MB, 100 * GB, 1, w), 1u);
    cr_expect_eq(w[0].id, VRAM_MONITOR_RISING_FLOOR);
    cr_expect_eq(w[0].from, 10 * GB + 60 * MB); /* epoch 1's floor: its only sample */
    cr_expect_eq(w[0].to, 10 * GB + 240 * MB);
}

Test(monitor_floor, one_epoch_setting) {
    vram_monitor_config c = cfg_zero();
    c.floor_epochs = 1;
    c.floor_rise_bytes = 1;
    c.leak_bytes = UINT64_MAX;
    vram_monitor *m = new_monitor(&c);
    cr_expect_eq(feed(m, 0, 0, 10, 1000, 1, NULL), 0u);
    cr_expect_eq(feed(m, 0, 1, 10, 1000, 1, NULL), 0u); /* epoch 1: floor 10 */
    cr_expect_eq(feed(m, 0, 2, 11, 1000, 1, NULL), 1u); /* epoch 2: 11 >= 10 + 1 */
    cr_expect_eq(feed(m, 0, 3, 12, 1000, 1, NULL), 0u); /* same run */
    cr_expect_eq(feed(m, 0, 4, 12, 1000, 1, NULL), 0u); /* flat: re-armed */
    cr_expect_eq(feed(m, 0, 5, 13, 1000, 1, NULL), 1u);
}

/* ---- several devices, bad samples, the buffer ---------------------------------------- */

Test(monitor_devices, each_device_has_its_own_state) {
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    vram_monitor *m = new_monitor(NULL);
    cr_expect_eq(feed(m, 0, 0, 95, 100, 0, w), 1u);
    cr_expect_eq(w[0].device, 0);
    cr_expect_eq(feed(m, 1, 0, 95, 100, 0, w), 1u); /* device 1 has its own episode */
    cr_expect_eq(w[0].device, 1);
    cr_expect_eq(feed(m, 63, 0, 10, 100, 1, w), 0u);
    cr_expect_eq(feed(m, 0, 1, 10, 100, 0, w), 0u); /* re-arms device 0 only */
    cr_expect(m->dev[1].near_raised);
    cr_expect_eq(feed(m, 1, 1, 96, 100, 0, w), 0u);
    cr_expect_eq(feed(m, 0, 2, 96, 100, 0, w), 1u);
    /* marks are per device: device 63 has one, device 0 none */
    cr_expect_eq(m->dev[63].marks, 1u);
    cr_expect_eq(m->dev[0].marks, 0u);
    /* time is per device too: device 5 may start at 0 after device 0 reached 2 */
    cr_expect_eq(feed(m, 5, 0, 1, 100, 0, w), 0u);
    cr_expect_eq(m->dev[5].samples, 1u);
    cr_expect_eq(m->dev[0].samples, 3u);
    cr_expect_eq(m->dev[0].min_used, 10u);
    cr_expect_eq(m->dev[0].max_used, 96u);
}

Test(monitor_devices, bad_samples_are_refused_and_change_nothing) {
    static vram_monitor before;
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    vram_monitor *m = new_monitor(NULL);
    cr_expect_eq(feed(m, 0, 10, 50, 100, 1, w), 0u);
    memcpy(&before, m, sizeof before);
    static const struct {
        int device;
        uint64_t t, used, free, total;
        vram_status want;
    } bad[] = {
        {-1, 11, 1, 1, 100, VRAM_E_RANGE},
        {VRAM_MONITOR_MAX_DEVICES, 11, 1, 1, 100, VRAM_E_RANGE},
        {0, 11, 0, 0, 0, VRAM_E_INVALID},      /* total 0 */
        {0, 11, 101, 0, 100, VRAM_E_INVALID},  /* used > total */
        {0, 11, 1, 101, 100, VRAM_E_INVALID},  /* free > total */
        {0, 9, 95, 5, 100, VRAM_E_INVALID},    /* time goes back */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_monitor_sample s = {bad[i].t, bad[i].device, bad[i].used, bad[i].free, bad[i].total, 1};
        size_t n = 77;
        cr_expect_eq(vram_monitor_feed(m, &s, w, VRAM_MONITOR_MAX_RAISED, &n), bad[i].want,
                     "case %zu", i);
        cr_expect_eq(n, 0u, "case %zu", i);
        cr_expect_eq(memcmp(m, &before, sizeof before), 0, "case %zu changed the monitor", i);
    }
    vram_monitor_sample ok = {10, 0, 95, 5, 100, 0}; /* the same time is fine */
    size_t n = 0;
    cr_expect_eq(vram_monitor_feed(NULL, &ok, w, 3, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_monitor_feed(m, NULL, w, 3, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_monitor_feed(m, &ok, NULL, 3, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_monitor_feed(m, &ok, w, 3, NULL), VRAM_E_INVALID);
    cr_expect_eq(memcmp(m, &before, sizeof before), 0);
    cr_expect_eq(vram_monitor_feed(m, &ok, w, 3, &n), VRAM_OK);
    cr_expect_eq(n, 1u);
    cr_expect_null(vram_monitor_device_state(m, -1));
    cr_expect_null(vram_monitor_device_state(m, VRAM_MONITOR_MAX_DEVICES));
    cr_expect_eq(vram_monitor_device_state(m, 0)->samples, 2u);
}

Test(monitor_buffer, a_full_buffer_loses_nothing) {
    /* one mark sample raises all three: epoch 1 flat at 10 GB, then epoch 2 ends at 95 GB
     * (95% >= 90%, +85 GB > 100 MB, floor 95 GB >= 10 GB + 1 MB with floor_epochs 1) */
    static vram_monitor before;
    vram_monitor_config c = cfg_zero();
    c.floor_epochs = 1;
    vram_monitor *m = new_monitor(&c);
    cr_expect_eq(feed(m, 0, 0, 10 * GB, 100 * GB, 1, NULL), 0u);
    cr_expect_eq(feed(m, 0, 1, 10 * GB, 100 * GB, 1, NULL), 0u);
    memcpy(&before, m, sizeof before);
    vram_monitor_sample s = {2, 0, 95 * GB, 5 * GB, 100 * GB, 1};
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED + 1];
    memset(w, 0xEE, sizeof w);
    size_t n = 0;
    cr_expect_eq(vram_monitor_feed(m, &s, w, 2, &n), VRAM_E_BUFFER);
    cr_expect_eq(n, 3u);
    cr_expect_eq(((unsigned char *)w)[0], 0xEE, "nothing written");
    cr_expect_eq(memcmp(m, &before, sizeof before), 0, "the monitor is unchanged");
    cr_expect_eq(vram_monitor_feed(m, &s, NULL, 0, &n), VRAM_E_BUFFER);
    cr_expect_eq(n, 3u);
    cr_expect_eq(memcmp(m, &before, sizeof before), 0);
    /* the same sample again, with room */
    cr_assert_eq(vram_monitor_feed(m, &s, w, VRAM_MONITOR_MAX_RAISED, &n), VRAM_OK);
    cr_assert_eq(n, 3u);
    cr_expect_eq(w[0].id, VRAM_MONITOR_NEAR_LIMIT);
    cr_expect_eq(w[1].id, VRAM_MONITOR_LEAK);
    cr_expect_eq(w[1].growth, 85 * GB);
    cr_expect_eq(w[2].id, VRAM_MONITOR_RISING_FLOOR);
    cr_expect_eq(w[2].from, 10 * GB);
    cr_expect_eq(w[2].to, 95 * GB);
    cr_expect_eq(((unsigned char *)&w[3])[0], 0xEE, "nothing past n");
    /* a sample that raises nothing needs no buffer at all */
    vram_monitor_sample quiet = {3, 0, 92 * GB, 8 * GB, 100 * GB, 0};
    cr_expect_eq(vram_monitor_feed(m, &quiet, NULL, 0, &n), VRAM_OK);
    cr_expect_eq(n, 0u);
}
