/* Unit tests of driver/gpustats/gpustats.h on the mock: free memory scripted to move between samples
 * (vram_mock_script_free, and real mock allocations), a leak across epochs detected with
 * the right numbers, the log line's exact text, the warning queue (order, partial reads,
 * overflow), every open failure with its one-line reason, and a NULL handle everywhere. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_device.h"
#include "gpustats/gpustats.h"
#include "device/host_device.h"
#include "mock_device.h"

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)
#define MB UINT64_C(1000000)

static vram_mock mock;
static vram_device_ops ops;
static vram_gpustats *g;
static char err[256];

static void setup(void) {
    vram_mock_init(&mock, 1);
    ops = vram_mock_ops(&mock);
    g = NULL;
    err[0] = '\0';
}

static void teardown(void) {
    vram_gpustats_close(g);
    cr_expect_eq(vram_mock_fini(&mock, stderr), 0u, "mock objects leaked");
}

TestSuite(gpustats, .init = setup, .fini = teardown);

static void open_ok(const vram_monitor_config *cfg) {
    vram_status st = vram_gpustats_open(&ops, cfg, &g, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "open: %s (%s)", vram_status_name(st), err);
    cr_assert_not_null(g);
    cr_expect_str_empty(err);
}

static size_t take(vram_monitor_warning *w, size_t cap) {
    size_t n = 999;
    cr_assert_eq(vram_gpustats_warnings(g, w, cap, &n), VRAM_OK);
    return n;
}

/* ---- the mock's script itself ------------------------------------------------------ */

Test(gpustats, mock_free_script_moves_per_mem_info_call) {
    const uint64_t seq[3] = {70 * GIB, 60 * GIB, 65 * GIB};
    uint64_t f = 0, t = 0;
    vram_device_info info;
    cr_assert_eq(vram_mock_script_free(&mock, 0, seq, 3), 0);
    cr_expect_eq(ops.device_info(ops.ctx, 0, &info), VRAM_OK); /* does not move the script */
    cr_expect_eq(info.free_bytes, 80 * GIB);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(ops.mem_info(ops.ctx, 0, &f, &t), VRAM_OK);
        cr_expect_eq(f, seq[i]);
        cr_expect_eq(t, 80 * GIB);
    }
    cr_assert_eq(ops.mem_info(ops.ctx, 0, &f, &t), VRAM_OK);
    cr_expect_eq(f, 65 * GIB, "the last value stays");
    cr_expect_eq(ops.mem_info(ops.ctx, 1, &f, &t), VRAM_E_INVALID); /* a failed call: no move */
    cr_expect_eq(vram_mock_script_free(&mock, 0, seq, VRAM_MOCK_MAX_FREE_SCRIPT + 1), -1);
    cr_expect_eq(vram_mock_script_free(&mock, -1, seq, 1), -1);
    cr_expect_eq(vram_mock_script_free(&mock, 0, NULL, 1), -1);
    cr_expect_eq(vram_mock_script_free(&mock, 0, NULL, 0), 0);
}

/* ---- samples and the log line ---------------------------------------------------------- */

Test(gpustats, log_line_exact_text) {
    /* 80 GiB total, used 5,594,194,903 bytes = 5.2100 GiB, free 74.7900 GiB, 6.51% */
    const uint64_t used = UINT64_C(5594194903);
    const uint64_t seq[1] = {80 * GIB - used};
    char line[256];
    cr_assert_eq(vram_mock_script_free(&mock, 0, seq, 1), 0);
    open_ok(NULL);
    cr_expect_eq(vram_gpustats_log_line(g, 0, line, sizeof line), VRAM_E_STATE, "no sample yet");
    cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_log_line(g, 0, line, sizeof line), VRAM_OK);
    cr_expect_str_eq(line, "gpu0 used 5.21 GiB / 80.00 GiB (6.5%), free 74.79 GiB, "
                           "reserved by this process unknown");
    vram_gpustats_set_reserved(g, 0, 4 * GIB + 512 * MIB);
    cr_expect_eq(vram_gpustats_reserved(g, 0), 4 * GIB + 512 * MIB);
    cr_assert_eq(vram_gpustats_log_line(g, 0, line, sizeof line), VRAM_OK);
    cr_expect_str_eq(line, "gpu0 used 5.21 GiB / 80.00 GiB (6.5%), free 74.79 GiB, "
                           "reserved by this process 4.50 GiB");
    vram_gpustats_set_reserved(g, 0, VRAM_GPUSTATS_UNKNOWN);
    cr_assert_eq(vram_gpustats_log_line(g, 0, line, sizeof line), VRAM_OK);
    cr_expect(strstr(line, "reserved by this process unknown") != NULL);
    /* a short buffer: a terminated prefix and VRAM_E_BUFFER */
    char small[10];
    cr_expect_eq(vram_gpustats_log_line(g, 0, small, sizeof small), VRAM_E_BUFFER);
    cr_expect_str_eq(small, "gpu0 used");
    cr_expect_eq(vram_gpustats_log_line(g, 1, line, sizeof line), VRAM_E_RANGE);
    /* the sample behind it */
    vram_monitor_sample s;
    cr_assert_eq(vram_gpustats_last(g, 0, &s), VRAM_OK);
    cr_expect_eq(s.used_bytes, used);
    cr_expect_eq(s.free_bytes, 80 * GIB - used);
    cr_expect_eq(s.total_bytes, 80 * GIB);
    cr_expect_eq(s.device, 0);
    cr_expect_eq(s.epoch_mark, 0);
}

Test(gpustats, format_functions_like_snprintf) {
    vram_monitor_sample s = {0, 3, 3 * GIB, 1 * GIB, 4 * GIB, 0};
    char buf[128];
    int n = vram_gpustats_format_sample("gpu", &s, 0, 0, buf, sizeof buf);
    cr_expect_str_eq(buf, "gpu3 used 3.00 GiB / 4.00 GiB (75.0%), free 1.00 GiB");
    cr_expect_eq(n, (int)strlen(buf));
    cr_expect_eq(vram_gpustats_format_sample("gpu", &s, 0, 0, NULL, 0), n, "length only");
    cr_expect_eq(vram_gpustats_format_sample("host", &s, 0, 0, NULL, 0), n + 1);
    cr_expect_eq(vram_gpustats_format_sample(NULL, &s, 0, 0, buf, sizeof buf), -1);
    cr_expect_eq(vram_gpustats_format_sample("gpu", NULL, 0, 0, buf, sizeof buf), -1);
    cr_expect_eq(vram_gpustats_format_warning("gpu", NULL, 1, buf, sizeof buf), -1);
    cr_expect_eq(vram_gpustats_format_summary(NULL, buf, sizeof buf), -1);
    /* small values print in bytes */
    vram_monitor_sample tiny = {0, 0, 512, 512, 1024, 0};
    vram_gpustats_format_sample("gpu", &tiny, 100, 1, buf, sizeof buf);
    cr_expect_str_eq(buf, "gpu0 used 512 B / 1.00 KiB (50.0%), free 512 B, reserved by this "
                          "process 100 B");
}

/* ---- leaks across epochs --------------------------------------------------------------- */

Test(gpustats, leak_across_epochs_on_scripted_free_memory) {
    /* used: mark 10 GiB (epoch 1 opens), a sample at 12 GiB, mark 10 GiB + 50 MB (+50 MB:
     * fine), mark 10 GiB + 200 MB (+150 MB: a leak) */
    const uint64_t total = 80 * GIB, base = 10 * GIB;
    const uint64_t seq[4] = {total - base, total - 12 * GIB, total - (base + 50 * MB),
                             total - (base + 200 * MB)};
    vram_monitor_warning w[4];
    char line[512];
    cr_assert_eq(vram_mock_script_free(&mock, 0, seq, 4), 0);
    open_ok(NULL);
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK);
    cr_expect_eq(vram_gpustats_pending(g), 0u, "no warning before the leak");
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_pending(g), 1u);
    cr_assert_eq(take(w, 4), 1u);
    cr_expect_eq(w[0].id, VRAM_MONITOR_LEAK);
    cr_expect_eq(w[0].device, 0);
    cr_expect_eq(w[0].epoch, 2u);
    cr_expect_eq(w[0].growth, 150 * MB);
    cr_expect_eq(w[0].from, base + 50 * MB);
    cr_expect_eq(w[0].to, base + 200 * MB);
    cr_expect_eq(w[0].threshold, 100 * MB);
    cr_expect_eq(vram_gpustats_pending(g), 0u, "read once");
    cr_expect_eq(take(w, 4), 0u);
    /* the line a training loop logs: 150e6 B = 143.05 MiB; 10.05 GiB -> 10.19 GiB */
    vram_gpustats_format_warning(vram_gpustats_label(g), &w[0], 0, line, sizeof line);
    cr_expect_str_eq(line, "gpu0 warning leak: suspected leak: used grew by 143.05 MiB over "
                           "epoch 2 (10.05 GiB -> 10.19 GiB), more than the 100 MB threshold");
    vram_gpustats_format_warning(vram_gpustats_label(g), &w[0], 1, line, sizeof line);
    cr_expect(strstr(line, "; recommendation: look for tensors kept across epochs") != NULL,
              "%s", line);
    const vram_monitor_device *d = vram_gpustats_state(g, 0);
    cr_assert_not_null(d);
    cr_expect_eq(d->marks, 3u);
    cr_expect_eq(d->samples, 4u);
    cr_expect_eq(vram_monitor_epochs_done(d), 2u);
}

Test(gpustats, leak_from_real_mock_allocations) {
    /* the mock's free figure drops by what is allocated through the table */
    vram_monitor_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.leak_bytes = 200 * MIB;
    vram_monitor_warning w[4];
    void *a = NULL, *b = NULL;
    open_ok(&cfg);
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK);
    cr_assert_eq(ops.dev_alloc(ops.ctx, 0, 200 * MIB, &a), VRAM_OK);
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK); /* +200 MiB: not beyond */
    cr_expect_eq(vram_gpustats_pending(g), 0u);
    cr_assert_eq(ops.dev_alloc(ops.ctx, 0, 200 * MIB + 1, &b), VRAM_OK);
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK); /* +200 MiB + 1 */
    cr_assert_eq(take(w, 4), 1u);
    cr_expect_eq(w[0].id, VRAM_MONITOR_LEAK);
    cr_expect_eq(w[0].growth, 200 * MIB + 1);
    cr_expect_eq(w[0].to, 400 * MIB + 1);
    /* the leak is fixed: used falls back, the rule re-arms (no new warning) */
    cr_assert_eq(ops.dev_free(ops.ctx, 0, b), VRAM_OK);
    cr_assert_eq(ops.dev_free(ops.ctx, 0, a), VRAM_OK);
    cr_assert_eq(vram_gpustats_mark_epoch(g), VRAM_OK);
    cr_expect_eq(take(w, 4), 0u);
    vram_monitor_sample s;
    cr_assert_eq(vram_gpustats_last(g, 0, &s), VRAM_OK);
    cr_expect_eq(s.used_bytes, 0u);
    cr_expect_eq(s.epoch_mark, 1);
}

/* ---- the queue ------------------------------------------------------------------------- */

/* Flips device `dev` between 95% and 10% used `times` times: one NEAR_LIMIT each. */
static void flip(int dev, int times) {
    for (int i = 0; i < times; i++) {
        vram_mock_set_memory(&mock, dev, 100 * GIB, 5 * GIB);
        cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
        vram_mock_set_memory(&mock, dev, 100 * GIB, 90 * GIB);
        cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
    }
}

Test(gpustats, queue_order_partial_reads_and_overflow) {
    vram_monitor_warning w[8];
    vram_mock_fini(&mock, NULL);
    vram_mock_init(&mock, 2);
    ops = vram_mock_ops(&mock);
    open_ok(NULL);
    cr_expect_eq(vram_gpustats_device_count(g), 2);
    vram_mock_set_memory(&mock, 1, 100 * GIB, 100 * GIB);
    flip(0, 3);
    cr_expect_eq(vram_gpustats_pending(g), 3u);
    cr_assert_eq(take(w, 2), 2u);
    cr_expect_lt(w[0].time_ms + 0, w[1].time_ms + 1, "oldest first");
    cr_expect_eq(vram_gpustats_pending(g), 1u, "the rest stays");
    cr_assert_eq(take(w, 8), 1u);
    cr_expect_eq(w[0].id, VRAM_MONITOR_NEAR_LIMIT);
    cr_expect_eq(w[0].device, 0);
    cr_expect_eq(take(NULL, 0), 0u);
    /* past VRAM_GPUSTATS_QUEUE unread the oldest go, counted */
    flip(1, VRAM_GPUSTATS_QUEUE + 44);
    cr_expect_eq(vram_gpustats_pending(g), (size_t)VRAM_GPUSTATS_QUEUE);
    cr_expect_eq(vram_gpustats_dropped(g), 44u);
    size_t got = 0, n;
    do {
        n = take(w, 8);
        for (size_t i = 0; i < n; i++) cr_expect_eq(w[i].device, 1);
        got += n;
    } while (n > 0);
    cr_expect_eq(got, (size_t)VRAM_GPUSTATS_QUEUE);
    size_t k = 5;
    cr_expect_eq(vram_gpustats_warnings(g, NULL, 3, &k), VRAM_E_INVALID);
    cr_expect_eq(k, 0u);
}

/* ---- failures ---------------------------------------------------------------------------- */

Test(gpustats, a_failed_sample_says_why_and_changes_nothing) {
    vram_monitor_sample before, after;
    open_ok(NULL);
    cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_last(g, 0, &before), VRAM_OK);
    vram_mock_sticky_from(&mock, 1, 700);
    cr_expect_eq(vram_gpustats_sample(g), VRAM_E_CUDA_STICKY);
    cr_expect(strstr(vram_gpustats_error(g), "gpu0: mem_info failed") != NULL, "%s",
              vram_gpustats_error(g));
    cr_expect(strstr(vram_gpustats_error(g), "CUDA error 700") != NULL, "%s",
              vram_gpustats_error(g));
    cr_assert_eq(vram_gpustats_last(g, 0, &after), VRAM_OK);
    cr_expect_eq(memcmp(&before, &after, sizeof before), 0);
    cr_expect_eq(vram_gpustats_state(g, 0)->samples, 1u);
    cr_expect_eq(vram_gpustats_sample_device(g, 1, 0), VRAM_E_RANGE);
    cr_expect_eq(vram_gpustats_sample_device(g, -1, 0), VRAM_E_RANGE);
}

Test(gpustats, open_failures_each_with_one_line) {
    vram_monitor_config bad;
    memset(&bad, 0, sizeof bad);
    bad.limit = 1.5;
    cr_expect_eq(vram_gpustats_open(&ops, &bad, &g, err, sizeof err), VRAM_E_INVALID);
    cr_expect_null(g);
    cr_expect(strstr(err, "limit") != NULL, "%s", err);
    cr_expect_eq(vram_gpustats_open(&ops, NULL, NULL, err, sizeof err), VRAM_E_INVALID);

    vram_device_ops old = ops;
    old.api_version = 0;
    cr_expect_eq(vram_gpustats_open(&old, NULL, &g, err, sizeof err), VRAM_E_VERSION);
    cr_expect(strstr(err, "API version mismatch") != NULL, "%s", err);
    cr_expect_null(g);

    vram_mock_no_driver(&mock);
    cr_expect_eq(vram_gpustats_open(&ops, NULL, &g, err, sizeof err), VRAM_E_NO_DRIVER);
    cr_expect_str_eq(err, "no NVIDIA driver found");
    cr_expect_null(g);

    vram_mock_fini(&mock, NULL);
    vram_mock_init(&mock, 0);
    ops = vram_mock_ops(&mock);
    cr_expect_eq(vram_gpustats_open(&ops, NULL, &g, err, sizeof err), VRAM_E_NO_DEVICE);
    cr_expect(strstr(err, "no usable GPU") != NULL, "%s", err);
    cr_expect(strchr(err, '\n') == NULL);

    vram_mock_fini(&mock, NULL);
    vram_mock_init(&mock, 1);
    ops = vram_mock_ops(&mock);
    vram_mock_fail_nth(&mock, VRAM_MOCK_OP_DEVICE_INFO, 1, 999);
    cr_expect_eq(vram_gpustats_open(&ops, NULL, &g, err, sizeof err), VRAM_E_CUDA);
    cr_expect(strstr(err, "device_info(0) failed") != NULL, "%s", err);
    cr_expect(strstr(err, "CUDA error 999") != NULL, "%s", err);
    cr_expect_null(g);
    /* err may be NULL */
    cr_expect_eq(vram_gpustats_open(&ops, &bad, &g, NULL, 0), VRAM_E_INVALID);
}

Test(gpustats, default_backend_is_cuda_or_a_clear_error) {
    vram_status st = vram_gpustats_open(NULL, NULL, &g, err, sizeof err);
    if (!vram_cuda_built()) {
        cr_expect_eq(st, VRAM_E_NOT_BUILT);
        cr_expect(strstr(err, "built without CUDA") != NULL, "%s", err);
        return;
    }
    if (st == VRAM_OK) { /* a machine with a GPU */
        cr_expect_str_eq(vram_gpustats_backend(g), "cuda");
        cr_expect_gt(vram_gpustats_device_count(g), 0);
        return;
    }
    cr_expect(st == VRAM_E_NO_DRIVER || st == VRAM_E_NO_DEVICE, "%s", vram_status_name(st));
    if (st == VRAM_E_NO_DRIVER) cr_expect_str_eq(err, "no NVIDIA driver found");
    cr_expect_null(g);
}

Test(gpustats, host_backend_samples_this_machine) {
    vram_device_ops host = vram_host_ops();
    vram_monitor_sample s;
    char line[256];
    cr_assert_eq(vram_gpustats_open(&host, NULL, &g, err, sizeof err), VRAM_OK, "%s", err);
    cr_expect_str_eq(vram_gpustats_label(g), "host");
    cr_expect_str_eq(vram_gpustats_backend(g), "host");
    cr_expect_str_eq(vram_gpustats_device_name(g, 0), "host (CPU memory)");
    cr_expect_str_eq(vram_gpustats_device_name(g, 1), "");
    cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_last(g, 0, &s), VRAM_OK);
    cr_expect_gt(s.total_bytes, 0u);
    cr_expect_eq(s.used_bytes + s.free_bytes, s.total_bytes);
    cr_assert_eq(vram_gpustats_log_line(g, 0, line, sizeof line), VRAM_OK);
    cr_expect(strncmp(line, "host0 used ", 11) == 0, "%s", line);
}

Test(gpustats, a_null_handle_is_refused_everywhere) {
    vram_monitor_sample s;
    vram_monitor_warning w[1];
    char line[64];
    size_t n = 3;
    vram_gpustats_close(NULL);
    cr_expect_eq(vram_gpustats_sample(NULL), VRAM_E_INVALID);
    cr_expect_eq(vram_gpustats_mark_epoch(NULL), VRAM_E_INVALID);
    cr_expect_eq(vram_gpustats_sample_device(NULL, 0, 0), VRAM_E_INVALID);
    cr_expect_eq(vram_gpustats_warnings(NULL, w, 1, &n), VRAM_E_INVALID);
    cr_expect_eq(n, 0u);
    cr_expect_eq(vram_gpustats_last(NULL, 0, &s), VRAM_E_INVALID);
    cr_expect_eq(vram_gpustats_log_line(NULL, 0, line, sizeof line), VRAM_E_INVALID);
    cr_expect_eq(vram_gpustats_device_count(NULL), 0);
    cr_expect_eq(vram_gpustats_pending(NULL), 0u);
    cr_expect_eq(vram_gpustats_dropped(NULL), 0u);
    cr_expect_null(vram_gpustats_state(NULL, 0));
    cr_expect_eq(vram_gpustats_reserved(NULL, 0), VRAM_GPUSTATS_UNKNOWN);
    vram_gpustats_set_reserved(NULL, 0, 1);
    cr_expect_str_eq(vram_gpustats_error(NULL), "");
    cr_expect_str_eq(vram_gpustats_backend(NULL), "");
    cr_expect_str_eq(vram_gpustats_device_name(NULL, 0), "");
}
