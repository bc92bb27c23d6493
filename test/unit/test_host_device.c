/* test_host_device.c — the "host" backend: vram_device_ops over plain host memory.
 * It is what the streamer runs on without a GPU, so it must pass the table check, move
 * bytes exactly, and report memory figures that make sense for this machine. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>
#include <unistd.h>

#include <vramkit/device.h>

#include "device/host_device.h"
#include "device/snapshot.h"

static vram_device_ops ops;

static void setup(void) { ops = vram_host_ops(); }

#define CALL(slot, ...) ops.slot(ops.ctx, __VA_ARGS__)

TestSuite(host, .init = setup);

Test(host, passes_ops_check) {
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK);
    cr_assert_str_eq(ops.backend, "host");
    cr_assert_eq(ops.api_version, VRAM_DEVICE_API_VERSION);
    cr_assert_eq(ops.size, sizeof(vram_device_ops));
}

Test(host, inventory) {
    int v = -1;
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(v, 0);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK);
    cr_assert_eq(v, 0);
    cr_assert_eq(CALL(device_count, &v), VRAM_OK);
    cr_assert_eq(v, 1);
    vram_device_info info;
    memset(&info, 0x7f, sizeof info);
    cr_assert_eq(CALL(device_info, 0, &info), VRAM_OK);
    cr_assert_str_eq(info.name, "host (CPU memory)");
    cr_assert_eq(info.ordinal, 0);
    cr_assert_eq(vram_device_cc(&info), 0);
    cr_assert_eq(info.integrated, 1);
    cr_assert_eq(info.compute_mode, VRAM_COMPUTE_DEFAULT);
    cr_assert_eq(info.vmm, VRAM_NO);
    cr_assert_eq(info.vmm_posix_fd, VRAM_NO);
    cr_assert_eq(info.vmm_rdma, VRAM_NO);
    cr_assert_eq(info.memory_pools, VRAM_NO);
    cr_assert_eq(info.host_register, VRAM_YES);
    cr_assert_gt(info.total_bytes, 0);
    cr_assert_leq(info.free_bytes, info.total_bytes);
    cr_assert_eq(ops.last_error(ops.ctx), 0);
}

Test(host, mem_info_is_sane) {
    uint64_t f = 0, t = 0;
    cr_assert_eq(CALL(mem_info, 0, &f, &t), VRAM_OK);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    cr_assert_eq(t, (uint64_t)pages * (uint64_t)page, "total is physical RAM");
    cr_assert_gt(f, 0, "some memory is available, or this test would not run");
    cr_assert_leq(f, t);
    cr_assert_eq(CALL(mem_info, 1, &f, &t), VRAM_E_INVALID);
    cr_assert_eq(CALL(mem_info, 0, NULL, &t), VRAM_E_INVALID);
}

Test(host, attributes) {
    int v = -1;
    cr_assert_eq(CALL(attribute, 0, VRAM_ATTR_HOST_REGISTER_SUPPORTED, &v), VRAM_OK);
    cr_assert_eq(v, 1);
    static const int no[] = {102, 103, 110, 115, 119};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        v = -1;
        cr_assert_eq(CALL(attribute, 0, no[i], &v), VRAM_OK);
        cr_assert_eq(v, 0, "attribute %d", no[i]);
    }
    cr_assert_eq(CALL(attribute, 0, 4242, &v), VRAM_E_NOT_SUPPORTED);
    cr_assert_eq(CALL(attribute, 1, 102, &v), VRAM_E_INVALID);
    cr_assert_eq(CALL(attribute, 0, 102, NULL), VRAM_E_INVALID);
}

Test(host, alloc_copy_free_roundtrip) {
    enum { N = 1 << 16 };
    unsigned char *pin = NULL, *back = NULL, *d1 = NULL, *d2 = NULL;
    vram_stream s = NULL;
    vram_event e = NULL;
    cr_assert_eq(CALL(set_device, 0), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, N, (void **)&pin), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, N, (void **)&back), VRAM_OK);
    cr_assert_eq((uintptr_t)pin % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
    cr_assert_eq(CALL(dev_alloc, 0, N, (void **)&d1), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, N + 1, (void **)&d2), VRAM_OK);
    cr_assert_eq((uintptr_t)d1 % 256, 0);
    cr_assert_eq((uintptr_t)d2 % 256, 0);
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_OK);
    cr_assert_eq(CALL(event_create, &e), VRAM_OK);
    for (int i = 0; i < N; i++) pin[i] = (unsigned char)(i ^ (i >> 8));
    memset(back, 0, N);
    cr_assert_eq(CALL(memcpy_async, d1, pin, N, VRAM_COPY_H2D, s), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, d2, d1, N, VRAM_COPY_D2D, s), VRAM_OK);
    cr_assert_eq(CALL(event_record, e, s), VRAM_OK);
    cr_assert_eq(CALL(stream_wait_event, NULL, e), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, back, d2, N, VRAM_COPY_D2H, NULL), VRAM_OK);
    cr_assert_eq(CALL(event_query, e), VRAM_OK);
    cr_assert_eq(CALL(event_sync, e), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, s), VRAM_OK);
    cr_assert_arr_eq(back, pin, N);
    /* overlapping D2D within one buffer behaves like memmove */
    cr_assert_eq(CALL(memcpy_async, d1 + 1, d1, 100, VRAM_COPY_D2D, s), VRAM_OK);
    cr_assert_eq(d1[1], pin[0]);
    cr_assert_eq(d1[100], pin[99]);
    cr_assert_eq(CALL(host_register, pin, N), VRAM_OK);
    cr_assert_eq(CALL(host_unregister, pin), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, e), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, s), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d1), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d2), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, pin), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, back), VRAM_OK);
}

Test(host, distinct_handles) {
    vram_stream a = NULL, b = NULL;
    vram_event x = NULL, y = NULL;
    cr_assert_eq(CALL(stream_create, 0, &a), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 0, &b), VRAM_OK);
    cr_assert_eq(CALL(event_create, &x), VRAM_OK);
    cr_assert_eq(CALL(event_create, &y), VRAM_OK);
    cr_assert_not_null(a);
    cr_assert_neq(a, b);
    cr_assert_neq(x, y);
    cr_assert_eq(CALL(stream_destroy, a), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, b), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, x), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, y), VRAM_OK);
}

Test(host, argument_checks) {
    void *p = (void *)&p;
    char buf[8] = {0};
    cr_assert_eq(CALL(dev_alloc, 0, 0, &p), VRAM_OK);
    cr_assert_null(p);
    cr_assert_eq(CALL(dev_alloc, 1, 8, &p), VRAM_E_INVALID);
    cr_assert_eq(CALL(dev_alloc, 0, 8, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(dev_alloc, 0, UINT64_MAX, &p), VRAM_E_OOM);
    cr_assert_null(p);
    cr_assert_eq(CALL(host_alloc_pinned, UINT64_MAX - 10, &p), VRAM_E_OOM);
    cr_assert_eq(CALL(dev_free, 0, NULL), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 3, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_free_pinned, NULL), VRAM_OK);
    cr_assert_eq(CALL(set_device, 1), VRAM_E_INVALID);
    cr_assert_eq(CALL(device_info, 1, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(device_count, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(driver_version, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(runtime_version, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, NULL, NULL, 0, VRAM_COPY_H2D, NULL), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, NULL, buf, 8, VRAM_COPY_H2D, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, buf, NULL, 8, VRAM_COPY_H2D, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, buf, buf + 4, 4, (vram_copy_kind)0, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, buf, buf + 4, 4, (vram_copy_kind)9, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_register, NULL, 8), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_register, buf, 0), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_unregister, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_create, 1, (vram_stream *)&p), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_create, 0, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_create, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_destroy, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_destroy, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_query, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_record, NULL, NULL), VRAM_E_INVALID);
    cr_assert_eq(ops.last_error(ops.ctx), 0, "no CUDA error, ever");
}

Test(host, snapshot_over_host_is_complete) {
    static vram_device_snapshot snap;
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(snap.status, VRAM_OK);
    cr_assert_eq(snap.device_count, 1);
    cr_assert_eq(snap.driver_version, 0, "no CUDA driver: the host is not one");
    cr_assert_str_eq(snap.devices[0].name, "host (CPU memory)");
    cr_assert_eq(snap.devices[0].vmm, VRAM_NO);
    cr_assert_eq(snap.devices[0].host_register, VRAM_YES);
    cr_assert_gt(snap.devices[0].total_bytes, 0);
}

/* ---- /proc/meminfo parsing --------------------------------------------------------- */

typedef struct meminfo_case {
    char text[160];
    vram_status st;
    uint64_t bytes;
} meminfo_case;

ParameterizedTestParameters(host, parse_meminfo) {
    static meminfo_case cases[] = {
        {"MemTotal:       16303396 kB\nMemFree:         1234 kB\nMemAvailable:    8000000 kB\n",
         VRAM_OK, 8000000ull * 1024},
        {"MemAvailable: 0 kB\n", VRAM_OK, 0},
        {"MemAvailable:\t42 kB", VRAM_OK, 42ull * 1024},
        {"MemAvailable:    18014398509481983 kB\n", VRAM_OK, 18014398509481983ull * 1024},
        {"MemAvailable:    18014398509481984 kB\n", VRAM_E_OVERFLOW, 0}, /* 2^54 KiB */
        {"MemAvailable:    99999999999999999999999 kB\n", VRAM_E_OVERFLOW, 0},
        {"MemTotal: 100 kB\nMemFree: 50 kB\n", VRAM_E_FORMAT, 0},
        {"XMemAvailable: 5 kB\n", VRAM_E_FORMAT, 0}, /* only at a line start */
        {"MemAvailable: kB\n", VRAM_E_FORMAT, 0},
        {"MemAvailable: 12 MB\n", VRAM_E_FORMAT, 0},
        {"MemAvailable: 12\n", VRAM_E_FORMAT, 0},
        {"", VRAM_E_FORMAT, 0},
    };
    return cr_make_param_array(meminfo_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(meminfo_case *c, host, parse_meminfo) {
    uint64_t b = 0xABCDEFull;
    vram_status st = vram__host_parse_meminfo(c->text, &b);
    cr_assert_eq(st, c->st, "'%s': %s", c->text, vram_status_name(st));
    cr_assert_eq(b, st == VRAM_OK ? c->bytes : 0xABCDEFull);
}
