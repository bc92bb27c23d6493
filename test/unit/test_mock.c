/* test_mock.c — the mocked CUDA layer does what every later module's tests rely on.
 * Each scripted behaviour (devices, limits, Nth-call faults, sticky errors, missing or old
 * driver, copies, counters, leak report, contexts and current devices, deferred completion
 * and its fault switch) is exercised through the ops table, as a module would. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vramkit/cudaerr.h>
#include <vramkit/device.h>

#include "mock_device.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static vram_mock m;
static vram_device_ops ops;

static void start(int n) {
    vram_mock_init(&m, n);
    ops = vram_mock_ops(&m);
}

/* Every test ends here: nothing it created may still be live. */
static void finish(void) { cr_assert_eq(vram_mock_fini(&m, stderr), 0, "the test leaked"); }

#define CALL(slot, ...) ops.slot(ops.ctx, __VA_ARGS__)
#define LAST() ops.last_error(ops.ctx)

/* ---- table and defaults ------------------------------------------------------------ */

Test(mock, table_is_complete) {
    start(1);
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK);
    cr_assert_str_eq(ops.backend, "mock");
    cr_assert_eq(ops.ctx, &m);
    cr_assert_eq(ops.api_version, VRAM_DEVICE_API_VERSION);
    cr_assert_eq(ops.size, sizeof(vram_device_ops));
    finish();
}

Test(mock, defaults) {
    start(2);
    int v = -1;
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(v, 13000);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK);
    cr_assert_eq(v, 13000);
    cr_assert_eq(CALL(device_count, &v), VRAM_OK);
    cr_assert_eq(v, 2);
    for (int d = 0; d < 2; d++) {
        vram_device_info info;
        cr_assert_eq(CALL(device_info, d, &info), VRAM_OK);
        cr_assert_str_eq(info.name, "Mock H100");
        cr_assert_eq(info.ordinal, d);
        cr_assert_eq(vram_device_cc(&info), 90);
        cr_assert_eq(info.total_bytes, 80 * GiB);
        cr_assert_eq(info.free_bytes, 80 * GiB);
        cr_assert_eq(info.compute_mode, VRAM_COMPUTE_DEFAULT);
        cr_assert_eq(info.integrated, 0);
        cr_assert_gt(info.multiprocessors, 0);
        cr_assert_gt(info.copy_engines, 0);
        cr_assert_eq(info.vmm, VRAM_YES);
        cr_assert_eq(info.vmm_posix_fd, VRAM_YES);
        cr_assert_eq(info.vmm_rdma, VRAM_YES);
        cr_assert_eq(info.memory_pools, VRAM_YES);
        cr_assert_eq(info.host_register, VRAM_YES);
        static const int attrs[] = {99, 102, 103, 110, 115};
        for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
            int a = -1;
            cr_assert_eq(CALL(attribute, d, attrs[i], &a), VRAM_OK);
            cr_assert_eq(a, 1, "attribute %d", attrs[i]);
        }
        int mask = 0;
        cr_assert_eq(CALL(attribute, d, VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES, &mask), VRAM_OK);
        cr_assert_eq(mask, 1);
    }
    cr_assert_eq(LAST(), 0);
    finish();
}

Test(mock, scripted_devices) {
    start(3);
    vram_mock_set_name(&m, 1, "Mock RTX 4090");
    vram_mock_set_memory(&m, 1, 24 * GiB, 20 * GiB);
    m.dev[1].info.cc_major = 8;
    m.dev[1].info.cc_minor = 9;
    m.dev[2].info.compute_mode = VRAM_COMPUTE_EXCLUSIVE_PROCESS;
    m.dev[2].info.integrated = 1;
    vram_mock_set_attr(&m, 2, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
    vram_mock_set_attr(&m, 2, VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES, 9);
    vram_mock_set_attr(&m, 2, 88, 42); /* any other attribute number */

    vram_device_info info;
    cr_assert_eq(CALL(device_info, 1, &info), VRAM_OK);
    cr_assert_str_eq(info.name, "Mock RTX 4090");
    cr_assert_eq(vram_device_cc(&info), 89);
    uint64_t f = 0, t = 0;
    cr_assert_eq(CALL(mem_info, 1, &f, &t), VRAM_OK);
    cr_assert_eq(t, 24 * GiB);
    cr_assert_eq(f, 20 * GiB);

    cr_assert_eq(CALL(device_info, 2, &info), VRAM_OK);
    cr_assert_eq(info.compute_mode, VRAM_COMPUTE_EXCLUSIVE_PROCESS);
    cr_assert_eq(info.integrated, 1);
    cr_assert_eq(info.vmm, VRAM_NO);
    int a = -1;
    cr_assert_eq(CALL(attribute, 2, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &a), VRAM_OK);
    cr_assert_eq(a, 0);
    cr_assert_eq(CALL(attribute, 2, VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES, &a), VRAM_OK);
    cr_assert_eq(a, 9);
    cr_assert_eq(CALL(attribute, 2, 88, &a), VRAM_OK);
    cr_assert_eq(a, 42);
    vram_mock_set_attr(&m, 2, 88, 43); /* overwrite, not a second entry */
    cr_assert_eq(CALL(attribute, 2, 88, &a), VRAM_OK);
    cr_assert_eq(a, 43);
    cr_assert_eq(m.dev[2].n_extra_attrs, 1);
    finish();
}

Test(mock, long_name_is_truncated_and_terminated) {
    start(1);
    char longname[VRAM_DEVICE_NAME_MAX + 50];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    vram_mock_set_name(&m, 0, longname);
    vram_device_info info;
    cr_assert_eq(CALL(device_info, 0, &info), VRAM_OK);
    cr_assert_eq(strlen(info.name), VRAM_DEVICE_NAME_MAX - 1);
    finish();
}

Test(mock, bad_ordinals_and_null_outputs) {
    start(2);
    vram_device_info info;
    uint64_t f, t;
    int v;
    void *p = (void *)&v;
    cr_assert_eq(CALL(device_info, 2, &info), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 101); /* cudaErrorInvalidDevice */
    cr_assert_eq(CALL(device_info, -1, &info), VRAM_E_INVALID);
    cr_assert_eq(CALL(mem_info, 5, &f, &t), VRAM_E_INVALID);
    cr_assert_eq(CALL(attribute, 2, 102, &v), VRAM_E_INVALID);
    cr_assert_eq(CALL(set_device, 2), VRAM_E_INVALID);
    cr_assert_eq(CALL(dev_alloc, 2, 16, &p), VRAM_E_INVALID);
    cr_assert_null(p, "a failed alloc leaves *ptr NULL");
    cr_assert_eq(CALL(device_info, 0, NULL), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 1); /* cudaErrorInvalidValue */
    cr_assert_eq(CALL(mem_info, 0, NULL, &t), VRAM_E_INVALID);
    cr_assert_eq(CALL(mem_info, 0, &f, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(driver_version, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(runtime_version, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(device_count, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(attribute, 0, 102, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(dev_alloc, 0, 16, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_alloc_pinned, 16, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_create, 0, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_create, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(set_device, 1), VRAM_OK);
    cr_assert_eq(m.current_device, 1);
    finish();
}

Test(mock, zero_devices_is_no_device) {
    start(0);
    int n = -1;
    cr_assert_eq(CALL(device_count, &n), VRAM_E_NO_DEVICE);
    cr_assert_eq(n, 0);
    cr_assert_eq(LAST(), 100);
    finish();
}

Test(mock, more_devices_than_the_snapshot_holds) {
    start(VRAM_MAX_DEVICES + 6);
    int n = 0;
    vram_device_info info;
    cr_assert_eq(CALL(device_count, &n), VRAM_OK);
    cr_assert_eq(n, VRAM_MAX_DEVICES + 6);
    cr_assert_eq(CALL(device_info, VRAM_MAX_DEVICES - 1, &info), VRAM_OK);
    cr_assert_eq(info.ordinal, VRAM_MAX_DEVICES - 1);
    cr_assert_eq(CALL(device_info, VRAM_MAX_DEVICES, &info), VRAM_E_INVALID);
    finish();
}

Test(mock, unknown_and_unreadable_attributes) {
    start(1);
    int a = 7;
    cr_assert_eq(CALL(attribute, 0, 4242, &a), VRAM_E_CUDA);
    cr_assert_eq(LAST(), 1);
    vram_mock_attr_unknown(&m, 0, VRAM_ATTR_MEMORY_POOLS_SUPPORTED);
    cr_assert_eq(CALL(attribute, 0, VRAM_ATTR_MEMORY_POOLS_SUPPORTED, &a), VRAM_E_CUDA);
    vram_device_info info;
    cr_assert_eq(CALL(device_info, 0, &info), VRAM_OK);
    cr_assert_eq(info.memory_pools, VRAM_UNKNOWN);
    cr_assert_eq(CALL(attribute, 0, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &a), VRAM_OK);
    vram_mock_set_attr(&m, 0, 77, 1);
    vram_mock_attr_unknown(&m, 0, 77);
    cr_assert_eq(CALL(attribute, 0, 77, &a), VRAM_E_CUDA);
    finish();
}

/* ---- memory ------------------------------------------------------------------------ */

Test(mock, alloc_limit_fails_after_k_bytes_and_free_memory_drops) {
    start(2);
    vram_mock_alloc_limit(&m, 0, 1 * MiB);
    void *p[4] = {0};
    uint64_t f = 0, t = 0, prev = 80 * GiB;
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(CALL(dev_alloc, 0, 256 * 1024, &p[i]), VRAM_OK, "alloc %d", i);
        cr_assert_not_null(p[i]);
        cr_assert_eq((uintptr_t)p[i] % 256, 0, "cudaMalloc alignment");
        cr_assert_eq(CALL(mem_info, 0, &f, &t), VRAM_OK);
        cr_assert_eq(f, prev - 256 * 1024, "free memory goes down with each allocation");
        cr_assert_eq(t, 80 * GiB, "total does not move");
        prev = f;
    }
    cr_assert_eq(m.dev[0].live_bytes, 1 * MiB);
    void *q = (void *)&f;
    cr_assert_eq(CALL(dev_alloc, 0, 1, &q), VRAM_E_OOM, "one byte past K");
    cr_assert_null(q);
    cr_assert_eq(LAST(), 2); /* cudaErrorMemoryAllocation */
    cr_assert_eq(CALL(mem_info, 0, &f, &t), VRAM_OK);
    cr_assert_eq(f, prev, "a failed allocation takes nothing");
    /* the limit is per device */
    void *other = NULL;
    cr_assert_eq(CALL(dev_alloc, 1, 4 * MiB, &other), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 1, other), VRAM_OK);
    /* freeing gives it back */
    cr_assert_eq(CALL(dev_free, 0, p[0]), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 256 * 1024, &p[0]), VRAM_OK);
    cr_assert_eq(m.dev[0].peak_bytes, 1 * MiB);
    cr_assert_eq(m.dev[0].allocs_total, 5);
    cr_assert_eq(m.dev[0].frees_total, 1);
    for (int i = 0; i < 4; i++) cr_assert_eq(CALL(dev_free, 0, p[i]), VRAM_OK);
    cr_assert_eq(m.dev[0].live_bytes, 0);
    cr_assert_eq(m.dev[0].live_allocs, 0);
    finish();
}

Test(mock, free_memory_limits_allocation_too) {
    start(1);
    vram_mock_set_memory(&m, 0, 16 * GiB, 2 * MiB); /* another tenant holds the rest */
    void *a = NULL, *b = NULL;
    cr_assert_eq(CALL(dev_alloc, 0, 2 * MiB + 1, &a), VRAM_E_OOM);
    cr_assert_eq(CALL(dev_alloc, 0, 2 * MiB, &a), VRAM_OK);
    uint64_t f = 1, t = 0;
    cr_assert_eq(CALL(mem_info, 0, &f, &t), VRAM_OK);
    cr_assert_eq(f, 0);
    cr_assert_eq(CALL(dev_alloc, 0, 1, &b), VRAM_E_OOM);
    cr_assert_eq(CALL(dev_free, 0, a), VRAM_OK);
    finish();
}

Test(mock, alloc_limit_zero_fails_everything_and_huge_sizes_do_not_wrap) {
    start(1);
    void *p = NULL;
    cr_assert_eq(CALL(dev_alloc, 0, UINT64_MAX, &p), VRAM_E_OOM);
    cr_assert_eq(CALL(dev_alloc, 0, 64, &p), VRAM_OK);
    void *q = NULL;
    cr_assert_eq(CALL(dev_alloc, 0, UINT64_MAX - 32, &q), VRAM_E_OOM, "live + bytes wraps");
    cr_assert_eq(CALL(dev_free, 0, p), VRAM_OK);
    vram_mock_alloc_limit(&m, 0, 0);
    cr_assert_eq(CALL(dev_alloc, 0, 1, &p), VRAM_E_OOM);
    finish();
}

Test(mock, zero_byte_alloc_and_null_free) {
    start(1);
    void *p = (void *)&p;
    cr_assert_eq(CALL(dev_alloc, 0, 0, &p), VRAM_OK);
    cr_assert_null(p);
    cr_assert_eq(CALL(dev_free, 0, NULL), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, 0, &p), VRAM_OK);
    cr_assert_null(p);
    cr_assert_eq(CALL(host_free_pinned, NULL), VRAM_OK);
    cr_assert_eq(vram_mock_leaks(&m), 0);
    finish();
}

Test(mock, bad_frees) {
    start(2);
    void *p = NULL;
    int local;
    cr_assert_eq(CALL(dev_alloc, 0, 100, &p), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 1, p), VRAM_E_INVALID, "freed through the wrong device");
    cr_assert_eq(CALL(dev_free, 0, (char *)p + 1), VRAM_E_INVALID, "not the base pointer");
    cr_assert_eq(CALL(dev_free, 0, &local), VRAM_E_INVALID, "not device memory");
    cr_assert_eq(CALL(host_free_pinned, p), VRAM_E_INVALID, "device memory as pinned");
    cr_assert_eq(CALL(dev_free, 0, p), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, p), VRAM_E_INVALID, "double free");
    cr_assert_eq(LAST(), 1);
    finish();
}

Test(mock, device_memory_is_not_zeroed) {
    start(1);
    unsigned char *p = NULL, back[64];
    cr_assert_eq(CALL(dev_alloc, 0, sizeof back, (void **)&p), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, back, p, sizeof back, VRAM_COPY_D2H, NULL), VRAM_OK);
    size_t zeros = 0;
    for (size_t i = 0; i < sizeof back; i++) zeros += back[i] == 0;
    cr_assert_eq(zeros, 0, "fresh device memory reads as garbage, like cudaMalloc's");
    cr_assert_eq(CALL(dev_free, 0, p), VRAM_OK);
    finish();
}

Test(mock, pinned_memory_and_limit) {
    start(1);
    m.pinned_limit = 8192;
    void *a = NULL, *b = NULL;
    cr_assert_eq(CALL(host_alloc_pinned, 5000, &a), VRAM_OK);
    cr_assert_eq((uintptr_t)a % 4096, 0, "pinned memory is page aligned");
    memset(a, 1, 5000); /* real, writable memory */
    cr_assert_eq(CALL(host_alloc_pinned, 5000, &b), VRAM_E_OOM);
    cr_assert_eq(LAST(), 2);
    cr_assert_eq(m.pinned_live, 1);
    cr_assert_eq(m.pinned_live_bytes, 5000);
    cr_assert_eq(CALL(host_free_pinned, a), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, a), VRAM_E_INVALID, "double free");
    finish();
}

Test(mock, host_register) {
    start(1);
    char *buf = malloc(8192);
    cr_assert_not_null(buf);
    cr_assert_eq(CALL(host_register, buf, 8192), VRAM_OK);
    cr_assert_eq(vram_mock_live(&m).registered, 1);
    cr_assert_eq(vram_mock_live(&m).registered_bytes, 8192);
    cr_assert_eq(CALL(host_register, buf + 100, 10), VRAM_E_INVALID, "overlaps");
    cr_assert_eq(LAST(), 712); /* cudaErrorHostMemoryAlreadyRegistered */
    cr_assert_eq(CALL(host_register, NULL, 10), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_register, buf, 0), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_unregister, buf + 1), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 713); /* cudaErrorHostMemoryNotRegistered */
    cr_assert_eq(CALL(host_unregister, buf), VRAM_OK);
    cr_assert_eq(CALL(host_unregister, buf), VRAM_E_INVALID);
    /* the attribute predicts the call */
    vram_mock_set_attr(&m, 0, VRAM_ATTR_HOST_REGISTER_SUPPORTED, 0);
    cr_assert_eq(CALL(host_register, buf, 8192), VRAM_E_NOT_SUPPORTED);
    cr_assert_eq(LAST(), 801);
    free(buf);
    finish();
}

Test(mock, prohibited_compute_mode) {
    start(2);
    m.dev[1].info.compute_mode = VRAM_COMPUTE_PROHIBITED;
    void *p = NULL;
    vram_stream s = NULL;
    cr_assert_eq(CALL(set_device, 1), VRAM_E_CUDA);
    cr_assert_eq(LAST(), 46); /* cudaErrorDevicesUnavailable */
    cr_assert_eq(CALL(dev_alloc, 1, 64, &p), VRAM_E_CUDA);
    cr_assert_eq(CALL(stream_create, 1, &s), VRAM_E_CUDA);
    vram_device_info info;
    cr_assert_eq(CALL(device_info, 1, &info), VRAM_OK, "inventory still reads it");
    cr_assert_eq(info.compute_mode, VRAM_COMPUTE_PROHIBITED);
    cr_assert_eq(CALL(dev_alloc, 0, 64, &p), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, p), VRAM_OK);
    finish();
}

/* ---- copies ------------------------------------------------------------------------ */

Test(mock, copies_move_bytes) {
    start(1);
    enum { N = 4096 };
    unsigned char *src = NULL, *dst = NULL, *d1 = NULL, *d2 = NULL;
    vram_stream s = NULL;
    cr_assert_eq(CALL(host_alloc_pinned, N, (void **)&src), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, N, (void **)&dst), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, N, (void **)&d1), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, N, (void **)&d2), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_OK);
    for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 7 + 3);
    memset(dst, 0, N);
    cr_assert_eq(CALL(memcpy_async, d1, src, N, VRAM_COPY_H2D, s), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, d2, d1, N, VRAM_COPY_D2D, s), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, dst, d2, N, VRAM_COPY_D2H, s), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, s), VRAM_OK);
    cr_assert_arr_eq(dst, src, N);
    /* a sub-range at an offset */
    cr_assert_eq(CALL(memcpy_async, d1 + 100, src + 200, 50, VRAM_COPY_H2D, NULL), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, dst, d1 + 100, 50, VRAM_COPY_D2H, NULL), VRAM_OK);
    cr_assert_arr_eq(dst, src + 200, 50);
    /* host to host, pageable */
    unsigned char a[16] = {1, 2, 3}, b[16] = {0};
    cr_assert_eq(CALL(memcpy_async, b, a, sizeof a, VRAM_COPY_H2H, NULL), VRAM_OK);
    cr_assert_arr_eq(a, b, sizeof a);

    cr_assert_eq(m.copies[VRAM_COPY_H2D], 2);
    cr_assert_eq(m.copies[VRAM_COPY_D2H], 2);
    cr_assert_eq(m.copies[VRAM_COPY_D2D], 1);
    cr_assert_eq(m.copies[VRAM_COPY_H2H], 1);
    cr_assert_eq(m.bytes_copied[VRAM_COPY_H2D], N + 50);
    cr_assert_eq(m.bytes_copied[VRAM_COPY_D2D], N);
    cr_assert_eq(m.pageable_copies, 0, "every H2D/D2H here used pinned memory");

    cr_assert_eq(CALL(stream_destroy, s), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d1), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d2), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, src), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, dst), VRAM_OK);
    finish();
}

Test(mock, pageable_and_registered_copies_are_told_apart) {
    start(1);
    char host[256] = {0};
    void *d = NULL;
    cr_assert_eq(CALL(dev_alloc, 0, sizeof host, &d), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, d, host, sizeof host, VRAM_COPY_H2D, NULL), VRAM_OK);
    cr_assert_eq(m.pageable_copies, 1);
    cr_assert_eq(CALL(host_register, host, sizeof host), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, host, d, sizeof host, VRAM_COPY_D2H, NULL), VRAM_OK);
    cr_assert_eq(m.pageable_copies, 1, "registered memory counts as pinned");
    cr_assert_eq(CALL(host_unregister, host), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d), VRAM_OK);
    finish();
}

Test(mock, copy_argument_checks) {
    start(1);
    unsigned char *d = NULL, host[64] = {0};
    cr_assert_eq(CALL(dev_alloc, 0, 64, (void **)&d), VRAM_OK);
    int bogus;
    /* zero bytes is fine, whatever the pointers */
    cr_assert_eq(CALL(memcpy_async, NULL, NULL, 0, VRAM_COPY_H2D, NULL), VRAM_OK);
    /* NULL with bytes */
    cr_assert_eq(CALL(memcpy_async, NULL, host, 8, VRAM_COPY_H2D, NULL), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 1);
    cr_assert_eq(CALL(memcpy_async, d, NULL, 8, VRAM_COPY_H2D, NULL), VRAM_E_INVALID);
    /* unknown stream, even for zero bytes */
    cr_assert_eq(CALL(memcpy_async, d, host, 8, VRAM_COPY_H2D, (vram_stream)&bogus),
                 VRAM_E_INVALID);
    cr_assert_eq(LAST(), 400); /* cudaErrorInvalidResourceHandle */
    cr_assert_eq(CALL(memcpy_async, d, host, 0, VRAM_COPY_H2D, (vram_stream)&bogus),
                 VRAM_E_INVALID);
    /* bad kind */
    cr_assert_eq(CALL(memcpy_async, d, host, 8, (vram_copy_kind)0, NULL), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 21); /* cudaErrorInvalidMemcpyDirection */
    cr_assert_eq(CALL(memcpy_async, d, host, 8, (vram_copy_kind)5, NULL), VRAM_E_INVALID);
    /* the device side must be inside one live allocation */
    cr_assert_eq(CALL(memcpy_async, d + 60, host, 8, VRAM_COPY_H2D, NULL), VRAM_E_INVALID,
                 "overruns the allocation");
    cr_assert_eq(CALL(memcpy_async, d + 56, host, 8, VRAM_COPY_H2D, NULL), VRAM_OK,
                 "ends exactly at the end");
    cr_assert_eq(CALL(memcpy_async, host, host + 8, 8, VRAM_COPY_H2D, NULL), VRAM_E_INVALID,
                 "H2D into host memory");
    cr_assert_eq(CALL(memcpy_async, d, host, 8, VRAM_COPY_D2H, NULL), VRAM_E_INVALID,
                 "swapped direction");
    cr_assert_eq(CALL(memcpy_async, d, host, 8, VRAM_COPY_D2D, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, d, host, 8, VRAM_COPY_H2H, NULL), VRAM_E_INVALID,
                 "H2H touching device memory");
    cr_assert_eq(CALL(dev_free, 0, d), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, d, host, 8, VRAM_COPY_H2D, NULL), VRAM_E_INVALID,
                 "use after free");
    cr_assert_eq(m.copies[VRAM_COPY_H2D], 2, "only the valid ones count");
    finish();
}

/* ---- streams and events ------------------------------------------------------------ */

Test(mock, streams_and_events) {
    start(2);
    vram_stream s0 = NULL, s1 = NULL;
    vram_event e = NULL, e2 = NULL;
    cr_assert_eq(CALL(stream_create, 0, &s0), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 1, &s1), VRAM_OK);
    cr_assert_neq(s0, s1);
    cr_assert_eq(CALL(event_create, &e), VRAM_OK);
    cr_assert_eq(CALL(event_create, &e2), VRAM_OK);
    cr_assert_neq(e, e2);
    cr_assert_eq(vram_mock_live(&m).streams, 2);
    cr_assert_eq(vram_mock_live(&m).events, 2);
    cr_assert_eq(CALL(event_record, e, s0), VRAM_OK);
    cr_assert_eq(CALL(event_record, e2, NULL), VRAM_OK, "the default stream");
    cr_assert_eq(CALL(stream_wait_event, s1, e), VRAM_OK);
    cr_assert_eq(CALL(stream_wait_event, NULL, e), VRAM_OK);
    cr_assert_eq(CALL(event_query, e), VRAM_OK, "synchronous mock: done");
    m.event_not_ready = 2;
    cr_assert_eq(CALL(event_query, e), VRAM_E_NOT_READY);
    cr_assert_eq(CALL(event_query, e), VRAM_E_NOT_READY);
    cr_assert_eq(CALL(event_query, e), VRAM_OK);
    cr_assert_eq(LAST(), 0, "not ready is not an error");
    cr_assert_eq(CALL(event_sync, e), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, s1), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, NULL), VRAM_OK);

    /* handles that are not live */
    int bogus;
    cr_assert_eq(CALL(event_record, (vram_event)&bogus, s0), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 400);
    cr_assert_eq(CALL(event_record, e, (vram_stream)&bogus), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_query, (vram_event)&bogus), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_query, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_sync, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_sync, (vram_stream)&bogus), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_wait_event, s0, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_wait_event, (vram_stream)&bogus, e), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_destroy, NULL), VRAM_E_INVALID, "the default stream");
    cr_assert_eq(CALL(event_query, s0), VRAM_E_INVALID, "a stream is not an event");
    cr_assert_eq(CALL(stream_sync, e), VRAM_E_INVALID, "an event is not a stream");

    cr_assert_eq(CALL(stream_destroy, s0), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, s0), VRAM_E_INVALID, "double destroy");
    cr_assert_eq(CALL(stream_sync, s0), VRAM_E_INVALID, "destroyed stream");
    cr_assert_eq(CALL(stream_destroy, s1), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, e), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, e), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_destroy, e2), VRAM_OK);
    finish();
}

/* ---- scripted faults --------------------------------------------------------------- */

Test(mock, fail_nth_call_of_an_op) {
    start(1);
    void *p[4] = {0};
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_DEV_ALLOC, 3, 2), 0);
    cr_assert_eq(CALL(dev_alloc, 0, 16, &p[0]), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 16, &p[1]), VRAM_OK);
    p[2] = (void *)&m;
    cr_assert_eq(CALL(dev_alloc, 0, 16, &p[2]), VRAM_E_OOM, "the third call");
    cr_assert_null(p[2], "a scripted failure leaves NULL too");
    cr_assert_eq(LAST(), 2);
    cr_assert_eq(CALL(dev_alloc, 0, 16, &p[2]), VRAM_OK, "only once");
    cr_assert_eq(CALL(dev_alloc, 0, 16, &p[3]), VRAM_OK);
    /* counted from when it is scripted: 1 = the next call */
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_DEV_FREE, 1, 801), 0);
    cr_assert_eq(CALL(dev_free, 0, p[0]), VRAM_E_NOT_SUPPORTED);
    cr_assert_eq(LAST(), 801);
    cr_assert_eq(vram_mock_leaks(&m), 4, "a failed free frees nothing");
    for (int i = 0; i < 4; i++) cr_assert_eq(CALL(dev_free, 0, p[i]), VRAM_OK);
    cr_assert_eq(m.calls[VRAM_MOCK_OP_DEV_ALLOC], 5);
    cr_assert_eq(m.calls[VRAM_MOCK_OP_DEV_FREE], 5);
    finish();
}

typedef struct code_case {
    int code;
    vram_status expect;
} code_case;

ParameterizedTestParameters(mock, fault_code_converted) {
    static code_case cases[] = {{2, VRAM_E_OOM},
                                {801, VRAM_E_NOT_SUPPORTED},
                                {100, VRAM_E_NO_DEVICE},
                                {35, VRAM_E_CUDA},
                                {701, VRAM_E_CUDA},
                                {999, VRAM_E_CUDA},
                                {700, VRAM_E_CUDA_STICKY},
                                {719, VRAM_E_CUDA_STICKY}};
    return cr_make_param_array(code_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(code_case *c, mock, fault_code_converted) {
    start(1);
    vram_stream s = NULL;
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_STREAM_CREATE, 1, c->code), 0);
    cr_assert_eq(CALL(stream_create, 0, &s), c->expect, "code %d", c->code);
    cr_assert_eq(vram_status_from_cuda(c->code), c->expect);
    cr_assert_eq(LAST(), c->code);
    cr_assert_eq(m.failed_calls, 1);
    finish();
}

Test(mock, fail_from_keeps_failing_one_op) {
    start(1);
    int a = 0;
    cr_assert_eq(vram_mock_fail_from(&m, VRAM_MOCK_OP_ATTRIBUTE, 2, 801), 0);
    cr_assert_eq(CALL(attribute, 0, 102, &a), VRAM_OK);
    for (int i = 0; i < 5; i++) cr_assert_eq(CALL(attribute, 0, 102, &a), VRAM_E_NOT_SUPPORTED);
    vram_device_info info;
    cr_assert_eq(CALL(device_info, 0, &info), VRAM_OK, "other ops are unaffected");
    finish();
}

Test(mock, sticky_code_in_a_fault_poisons_everything) {
    start(1);
    void *d = NULL;
    char host[8] = {0};
    cr_assert_eq(CALL(dev_alloc, 0, 8, &d), VRAM_OK);
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_MEMCPY_ASYNC, 1, 700), 0);
    cr_assert_eq(CALL(memcpy_async, d, host, 8, VRAM_COPY_H2D, NULL), VRAM_E_CUDA_STICKY);
    int n = 0;
    cr_assert_eq(CALL(device_count, &n), VRAM_E_CUDA_STICKY, "the context is gone");
    cr_assert_eq(CALL(dev_free, 0, d), VRAM_E_CUDA_STICKY);
    cr_assert_eq(LAST(), 700);
    cr_assert(m.poisoned);
    /* the memory is still live: fini releases it and reports it */
    cr_assert_eq(vram_mock_fini(&m, NULL), 1);
}

Test(mock, sticky_from_nth_call) {
    start(1);
    int v = 0;
    vram_mock_sticky_from(&m, 3, 700);
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(CALL(device_count, &v), VRAM_OK);
    uint64_t f, t;
    cr_assert_eq(CALL(mem_info, 0, &f, &t), VRAM_E_CUDA_STICKY, "call 3");
    cr_assert_eq(LAST(), 700);
    cr_assert_eq(LAST(), 700, "last_error keeps answering and is not a call");
    /* every op from now on, versions included */
    void *p = NULL;
    vram_stream s = NULL;
    vram_event e = NULL;
    cr_assert_eq(CALL(driver_version, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(device_count, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(set_device, 0), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(dev_alloc, 0, 8, &p), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(host_alloc_pinned, 8, &p), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(event_create, &e), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(stream_sync, NULL), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(memcpy_async, NULL, NULL, 0, VRAM_COPY_H2H, NULL), VRAM_E_CUDA_STICKY);
    cr_assert_eq(m.total_calls, 13);
    cr_assert_eq(m.failed_calls, 11);
    cr_assert_eq(m.calls[VRAM_MOCK_OP_LAST_ERROR], 2);
    finish();
}

Test(mock, fault_scripting_rejects_nonsense) {
    start(1);
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_LAST_ERROR, 1, 2), -1, "cannot fail");
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_COUNT, 1, 2), -1);
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_DEV_ALLOC, 0, 2), -1, "calls count from 1");
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_DEV_ALLOC, 1, 0), -1, "0 is success");
    for (int i = 0; i < VRAM_MOCK_MAX_FAULTS; i++)
        cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_DEV_ALLOC, 100 + (uint64_t)i, 2), 0);
    cr_assert_eq(vram_mock_fail_from(&m, VRAM_MOCK_OP_DEV_ALLOC, 1, 2), -1, "table full");
    finish();
}

/* ---- drivers ----------------------------------------------------------------------- */

Test(mock, no_driver) {
    start(2);
    vram_mock_no_driver(&m);
    int v = -1;
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK, "cudaDriverGetVersion answers 0");
    cr_assert_eq(v, 0);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK);
    cr_assert_eq(v, 13000);
    cr_assert_eq(CALL(device_count, &v), VRAM_E_NO_DRIVER);
    cr_assert_eq(LAST(), 35);
    vram_device_info info;
    void *p = NULL;
    vram_stream s = NULL;
    vram_event e = NULL;
    cr_assert_eq(CALL(device_info, 0, &info), VRAM_E_CUDA);
    cr_assert_eq(CALL(dev_alloc, 0, 8, &p), VRAM_E_CUDA);
    cr_assert_eq(CALL(host_alloc_pinned, 8, &p), VRAM_E_CUDA);
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_E_CUDA);
    cr_assert_eq(CALL(event_create, &e), VRAM_E_CUDA);
    cr_assert_eq(LAST(), 35);
    cr_assert_eq(vram_mock_leaks(&m), 0);
    finish();
}

Test(mock, driver_of_an_older_major_cannot_run_the_runtime) {
    start(1);
    vram_mock_driver_older(&m, 12040, 13000);
    int v = 0;
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(v, 12040);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK);
    cr_assert_eq(v, 13000);
    cr_assert_eq(CALL(device_count, &v), VRAM_E_CUDA, "not NO_DRIVER: there is a driver");
    cr_assert_eq(LAST(), 35);
    void *p = NULL;
    cr_assert_eq(CALL(dev_alloc, 0, 8, &p), VRAM_E_CUDA);
    cr_assert_eq(vram_cuda_error_class(LAST()), VRAM_CUDA_SETUP);
    finish();
}

Test(mock, driver_of_an_older_minor_works) {
    start(1);
    vram_mock_driver_older(&m, 12040, 12080); /* minor-version compatibility */
    int v = 0;
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(v, 12040);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK);
    cr_assert_eq(v, 12080);
    cr_assert_eq(CALL(device_count, &v), VRAM_OK);
    cr_assert_eq(v, 1);
    void *p = NULL;
    cr_assert_eq(CALL(dev_alloc, 0, 8, &p), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, p), VRAM_OK);
    cr_assert_eq(LAST(), 0);
    finish();
}

/* ---- counters, names, leaks -------------------------------------------------------- */

Test(mock, call_counters) {
    start(1);
    int v;
    for (int i = 0; i < 3; i++) cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(CALL(device_count, &v), VRAM_OK);
    cr_assert_eq(CALL(device_info, 9, NULL), VRAM_E_INVALID);
    (void)LAST();
    cr_assert_eq(vram_mock_calls(&m, VRAM_MOCK_OP_DRIVER_VERSION), 3);
    cr_assert_eq(vram_mock_calls(&m, VRAM_MOCK_OP_DEVICE_COUNT), 1);
    cr_assert_eq(vram_mock_calls(&m, VRAM_MOCK_OP_DEVICE_INFO), 1, "failed calls count");
    cr_assert_eq(vram_mock_calls(&m, VRAM_MOCK_OP_LAST_ERROR), 1);
    cr_assert_eq(vram_mock_calls(&m, VRAM_MOCK_OP_MEMCPY_ASYNC), 0);
    cr_assert_eq(vram_mock_calls(&m, VRAM_MOCK_OP_COUNT), 0);
    cr_assert_eq(m.total_calls, 5);
    cr_assert_eq(m.failed_calls, 1);
    finish();
}

Test(mock, op_names_round_trip) {
    static const char *const expect[] = {
        "driver_version", "runtime_version", "device_count",     "device_info",
        "mem_info",       "attribute",       "set_device",       "release_device",
        "dev_alloc",
        "dev_free",       "host_alloc_pinned", "host_free_pinned", "host_register",
        "host_unregister", "stream_create",  "stream_destroy",   "stream_sync",
        "memcpy_async",   "event_create",    "event_destroy",    "event_record",
        "event_query",    "event_sync",      "stream_wait_event", "last_error"};
    cr_assert_eq(sizeof expect / sizeof expect[0], (size_t)VRAM_MOCK_OP_COUNT);
    for (int i = 0; i < VRAM_MOCK_OP_COUNT; i++) {
        cr_assert_str_eq(vram_mock_op_name((vram_mock_op)i), expect[i]);
        cr_assert_eq(vram_mock_op_from_name(expect[i]), i);
    }
    cr_assert_null(vram_mock_op_name(VRAM_MOCK_OP_COUNT));
    cr_assert_null(vram_mock_op_name((vram_mock_op)-1));
    cr_assert_eq(vram_mock_op_from_name("cudaMalloc"), -1);
    cr_assert_eq(vram_mock_op_from_name(""), -1);
    cr_assert_eq(vram_mock_op_from_name(NULL), -1);
}

Test(mock, outstanding_accounting) {
    start(2);
    void *d0 = NULL, *d1 = NULL, *pin = NULL;
    vram_stream s = NULL;
    vram_event e = NULL;
    char reg[64];
    cr_assert_eq(CALL(dev_alloc, 0, 1000, &d0), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 1, 3000, &d1), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, 500, &pin), VRAM_OK);
    cr_assert_eq(CALL(host_register, reg, sizeof reg), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 1, &s), VRAM_OK);
    cr_assert_eq(CALL(event_create, &e), VRAM_OK);
    vram_mock_outstanding o = vram_mock_live(&m);
    cr_assert_eq(o.dev_allocs, 2);
    cr_assert_eq(o.dev_bytes, 4000);
    cr_assert_eq(o.pinned, 1);
    cr_assert_eq(o.pinned_bytes, 500);
    cr_assert_eq(o.registered, 1);
    cr_assert_eq(o.registered_bytes, sizeof reg);
    cr_assert_eq(o.streams, 1);
    cr_assert_eq(o.events, 1);
    cr_assert_eq(vram_mock_leaks(&m), 6);
    cr_assert_eq(m.dev[0].live_bytes, 1000);
    cr_assert_eq(m.dev[1].live_bytes, 3000);
    cr_assert_eq(CALL(dev_free, 0, d0), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 1, d1), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, pin), VRAM_OK);
    cr_assert_eq(CALL(host_unregister, reg), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, s), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, e), VRAM_OK);
    cr_assert_eq(vram_mock_leaks(&m), 0);
    finish();
}

Test(mock, leak_report_finds_what_was_not_freed) {
    start(1);
    void *kept = NULL, *freed = NULL;
    vram_stream s = NULL;
    cr_assert_eq(CALL(dev_alloc, 0, 4096, &freed), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 12345, &kept), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, freed), VRAM_OK);
    cr_assert_eq(vram_mock_leaks(&m), 2);

    char text[1024] = {0};
    FILE *log = tmpfile();
    cr_assert_not_null(log);
    cr_assert_eq(vram_mock_fini(&m, log), 2);
    rewind(log);
    size_t n = fread(text, 1, sizeof text - 1, log);
    fclose(log);
    cr_assert_gt(n, 0);
    cr_assert_not_null(strstr(text, "device allocation"), "%s", text);
    cr_assert_not_null(strstr(text, "12345 bytes"), "%s", text);
    cr_assert_not_null(strstr(text, "stream"), "%s", text);
    cr_assert_null(strstr(text, "4096"), "a freed allocation is not a leak: %s", text);
}

/* ---- threads ----------------------------------------------------------------------- */

enum { THREADS = 4, ROUNDS = 500 };

static void *worker(void *arg) {
    unsigned char host[128], back[128];
    long id = (long)(intptr_t)arg;
    vram_stream s = NULL;
    if (CALL(stream_create, 0, &s) != VRAM_OK) return (void *)1;
    for (int r = 0; r < ROUNDS; r++) {
        void *d = NULL;
        memset(host, (int)(id * 31 + r), sizeof host);
        if (CALL(dev_alloc, 0, sizeof host, &d) != VRAM_OK) return (void *)2;
        if (CALL(memcpy_async, d, host, sizeof host, VRAM_COPY_H2D, s) != VRAM_OK) return (void *)3;
        if (CALL(memcpy_async, back, d, sizeof back, VRAM_COPY_D2H, s) != VRAM_OK) return (void *)4;
        if (CALL(dev_free, 0, d) != VRAM_OK) return (void *)5;
        if (memcmp(host, back, sizeof host) != 0) return (void *)6;
    }
    if (CALL(stream_destroy, s) != VRAM_OK) return (void *)7;
    return NULL;
}

Test(mock, threads_share_one_mock) {
    start(1);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *rc = (void *)1;
        cr_assert_eq(pthread_join(t[i], &rc), 0);
        cr_assert_null(rc, "thread %d failed at step %ld", i, (long)(intptr_t)rc);
    }
    cr_assert_eq(m.calls[VRAM_MOCK_OP_DEV_ALLOC], THREADS * ROUNDS);
    cr_assert_eq(m.copies[VRAM_COPY_H2D], THREADS * ROUNDS);
    cr_assert_eq(m.dev[0].allocs_total, THREADS * ROUNDS);
    cr_assert_eq(m.dev[0].peak_bytes <= THREADS * 128, 1);
    finish();
}

/* ---- contexts and devices ------------------------------------------------------------ */

Test(mock, calls_take_contexts_where_cudart_would) {
    start(3);
    int v;
    vram_device_info info;
    uint64_t f, t;
    cr_assert_eq(CALL(device_count, &v), VRAM_OK);
    cr_assert_eq(CALL(attribute, 2, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &v), VRAM_OK);
    cr_assert_eq(vram_mock_contexts(&m), 0, "inventory and attributes need no context");
    cr_assert_eq(CALL(mem_info, 1, &f, &t), VRAM_OK);
    cr_assert_eq(CALL(device_info, 2, &info), VRAM_OK);
    cr_assert(m.dev[1].context && m.dev[2].context && !m.dev[0].context);
    vram_event e = NULL;
    cr_assert_eq(CALL(event_create, &e), VRAM_OK);
    cr_assert(m.dev[0].context, "a thread's calls work on device 0 until it selects another");
    cr_assert_eq(vram_mock_contexts(&m), 3);
    /* giving a context back destroys what lives on the device, as a reset does */
    void *d = NULL;
    vram_stream s = NULL;
    cr_assert_eq(CALL(dev_alloc, 1, 4096, &d), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 1, &s), VRAM_OK);
    cr_assert_eq(CALL(release_device, 1), VRAM_OK);
    cr_assert(!m.dev[1].context);
    cr_assert_eq(m.dev[1].releases, 1);
    cr_assert_eq(m.dev[1].live_allocs, 0);
    cr_assert_eq(vram_mock_live(&m).streams, 0);
    cr_assert_eq(CALL(dev_free, 1, d), VRAM_E_INVALID, "gone with the context");
    cr_assert_eq(CALL(release_device, 1), VRAM_OK, "nothing held: nothing to do");
    cr_assert_eq(m.dev[1].releases, 1);
    cr_assert_eq(CALL(release_device, 3), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 101);
    cr_assert_eq(CALL(release_device, 0), VRAM_OK);
    cr_assert_eq(vram_mock_live(&m).events, 0, "the event lived on device 0");
    cr_assert_eq(CALL(release_device, 2), VRAM_OK);
    cr_assert_eq(vram_mock_contexts(&m), 0);
    finish();
}

Test(mock, prohibited_devices_never_get_a_context) {
    start(2);
    m.dev[1].info.compute_mode = VRAM_COMPUTE_PROHIBITED;
    vram_device_info info;
    cr_assert_eq(CALL(device_info, 1, &info), VRAM_OK);
    cr_assert(!m.dev[1].context);
    finish();
}

typedef struct on_thread {
    vram_stream s;
    vram_event e;
    int select; /* select device 1 first */
    vram_status st;
} on_thread;

static void *queue_from_a_thread(void *arg) {
    on_thread *o = (on_thread *)arg;
    if (o->select) o->st = CALL(set_device, 1);
    if (o->st == VRAM_OK) o->st = CALL(event_record, o->e, o->s);
    return NULL;
}

Test(mock, each_thread_has_its_current_device) {
    start(2);
    vram_stream s1 = NULL;
    vram_event e1 = NULL, e0 = NULL;
    cr_assert_eq(CALL(stream_create, 1, &s1), VRAM_OK);
    cr_assert_eq(CALL(event_create, &e0), VRAM_OK);
    cr_assert_eq(CALL(event_record, e0, s1), VRAM_E_INVALID, "an event of device 0, a stream of device 1");
    cr_assert_eq(LAST(), 400);
    cr_assert_eq(CALL(set_device, 1), VRAM_OK);
    cr_assert_eq(CALL(event_create, &e1), VRAM_OK);
    cr_assert_eq(CALL(event_record, e1, s1), VRAM_OK);
    cr_assert_eq(m.cross_device_calls, 0);
    m.dev[0].context = 0;
    /* another thread starts on device 0, whatever this one selected */
    on_thread o = {s1, e1, 0, VRAM_OK};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, queue_from_a_thread, &o), 0);
    pthread_join(t, NULL);
    cr_assert_eq(o.st, VRAM_OK);
    cr_assert_eq(m.cross_device_calls, 1, "work queued on device 1 from a thread on device 0");
    cr_assert(m.dev[0].context, "and that thread made a context on device 0");
    m.dev[0].context = 0;
    o.select = 1;
    cr_assert_eq(pthread_create(&t, NULL, queue_from_a_thread, &o), 0);
    pthread_join(t, NULL);
    cr_assert_eq(o.st, VRAM_OK);
    cr_assert_eq(m.cross_device_calls, 1, "a thread that selected device 1 first is fine");
    cr_assert(!m.dev[0].context);
    cr_assert_eq(CALL(event_destroy, e0), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, e1), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, s1), VRAM_OK);
    finish();
}

/* ---- deferred completion ------------------------------------------------------------- */

static void start_deferred(int n, uint64_t seed, uint32_t delay_us) {
    vram_mock_init(&m, n);
    cr_assert_eq(vram_mock_deferred(&m, seed, delay_us), 0);
    cr_assert_eq(vram_mock_deferred(&m, seed, delay_us), -1, "once");
    ops = vram_mock_ops(&m);
    cr_assert_eq(ops.flags, 0u, "deferred device memory is not host memory");
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK);
}

static void wait_until_no_copy_is_queued(void) {
    for (int i = 0; i < 10000 && vram_mock_queued_copies(&m, VRAM_COPY_H2D) +
                                         vram_mock_queued_copies(&m, VRAM_COPY_D2D) +
                                         vram_mock_queued_copies(&m, VRAM_COPY_D2H) != 0;
         i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

Test(mock, deferred_mode_is_chosen_before_any_call) {
    int v;
    vram_mock_init(&m, 1);
    ops = vram_mock_ops(&m);
    cr_assert_eq(ops.flags, VRAM_DEVICE_HOST_MEMORY);
    cr_assert_eq(CALL(device_count, &v), VRAM_OK);
    cr_assert_eq(vram_mock_deferred(&m, 1, 0), -1, "too late: a call was made");
    cr_assert_eq(vram_mock_drop_waits(&m, VRAM_MOCK_DROP_HOST_WAITS, NULL), -1, "plain mode");
    cr_assert_eq(vram_mock_queued_copies(&m, VRAM_COPY_H2D), 0);
    finish();
}

Test(mock, deferred_device_writes_reach_the_host_only_through_a_covering_wait) {
    start_deferred(1, 3, 20);
    enum { N = 512 };
    uint8_t *src = NULL, *d = NULL;
    vram_stream s = NULL, other = NULL;
    vram_event e = NULL, x = NULL;
    cr_assert_eq(CALL(host_alloc_pinned, N, (void **)&src), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, N, (void **)&d), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 0, &other), VRAM_OK);
    cr_assert_eq(CALL(event_create, &e), VRAM_OK);
    cr_assert_eq(CALL(event_create, &x), VRAM_OK);
    for (int i = 0; i < N; i++) src[i] = (uint8_t)(i * 13 + 1);
    cr_assert_eq(CALL(memcpy_async, d, src, N, VRAM_COPY_H2D, s), VRAM_OK);
    cr_assert_eq(CALL(event_record, e, s), VRAM_OK);
    /* the copy is done by the worker, but no wait of the host covers it yet */
    wait_until_no_copy_is_queued();
    cr_assert_eq(CALL(event_record, x, other), VRAM_OK);
    cr_assert_eq(CALL(event_sync, x), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, other), VRAM_OK);
    for (int i = 0; i < N; i++) cr_assert_eq(d[i], 0xA5, "byte %d reached the host uncovered", i);
    /* a wait that covers it hands it over */
    cr_assert_eq(CALL(event_sync, e), VRAM_OK);
    cr_assert_arr_eq(d, src, N);
    /* covered through another stream's wait on the event: the host waits on that stream */
    memset(src, 0x42, N);
    cr_assert_eq(CALL(memcpy_async, d, src, N, VRAM_COPY_H2D, s), VRAM_OK);
    cr_assert_eq(CALL(event_record, e, s), VRAM_OK);
    cr_assert_eq(CALL(stream_wait_event, other, e), VRAM_OK);
    cr_assert_eq(CALL(event_record, x, other), VRAM_OK);
    vram_status q;
    while ((q = CALL(event_query, x)) == VRAM_E_NOT_READY) sched_yield();
    cr_assert_eq(q, VRAM_OK);
    for (int i = 0; i < N; i++) cr_assert_eq(d[i], 0x42, "a done query publishes what it covers");
    cr_assert_eq(LAST(), 0, "not ready is not an error");
    cr_assert_eq(CALL(event_destroy, e), VRAM_OK);
    cr_assert_eq(CALL(event_destroy, x), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, s), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, other), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, src), VRAM_OK);
    finish();
}

Test(mock, deferred_copies_read_their_source_when_they_run) {
    start_deferred(1, 4, 0);
    enum { N = 256 };
    uint8_t *src = NULL, *d = NULL, *back = NULL;
    cr_assert_eq(CALL(host_alloc_pinned, N, (void **)&src), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, N, (void **)&back), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, N, (void **)&d), VRAM_OK);
    memset(src, 1, N);
    memset(back, 0, N);
    vram_mock_pause(&m, 1);
    cr_assert_eq(CALL(memcpy_async, d, src, N, VRAM_COPY_H2D, NULL), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, back, d, N, VRAM_COPY_D2H, NULL), VRAM_OK);
    cr_assert_eq(vram_mock_queued_copies(&m, VRAM_COPY_H2D), 1);
    cr_assert_eq(vram_mock_queued_copies(&m, VRAM_COPY_D2H), 1);
    memset(src, 2, N); /* rewritten before the copy ran: the copy carries the new bytes */
    cr_assert_eq(back[0], 0, "the D2H has not run");
    vram_mock_pause(&m, 0);
    cr_assert_eq(CALL(stream_sync, NULL), VRAM_OK);
    for (int i = 0; i < N; i++) cr_assert_eq(back[i], 2);
    cr_assert_eq(vram_mock_queued_copies(&m, VRAM_COPY_H2D), 0);
    cr_assert_eq(CALL(dev_free, 0, d), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, src), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, back), VRAM_OK);
    finish();
}

/* What the ordering tests share: two streams and an event on device 0, n bytes of pinned
 * source and destination, n bytes of device memory. */
typedef struct two_streams {
    uint8_t *src, *back, *d;
    vram_stream a, b;
    vram_event e;
} two_streams;

static two_streams two_streams_make(uint64_t n) {
    two_streams t;
    memset(&t, 0, sizeof t);
    cr_assert_eq(CALL(host_alloc_pinned, n, (void **)&t.src), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, n, (void **)&t.back), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, n, (void **)&t.d), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 0, &t.a), VRAM_OK);
    cr_assert_eq(CALL(stream_create, 0, &t.b), VRAM_OK);
    cr_assert_eq(CALL(event_create, &t.e), VRAM_OK);
    return t;
}

static void two_streams_free(two_streams *t) {
    cr_assert_eq(CALL(event_destroy, t->e), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, t->a), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, t->b), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, t->d), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, t->src), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, t->back), VRAM_OK);
}

/* One stream's work: H2D a pattern, then a D2H of it on another stream, with or without a
 * wait in between. Returns 1 when the D2H saw the pattern. */
static int ordered_across_streams(uint64_t seed, int wait) {
    enum { N = 4096 };
    vram_mock_init(&m, 1);
    cr_assert_eq(vram_mock_deferred(&m, seed, 30), 0);
    ops = vram_mock_ops(&m);
    two_streams t = two_streams_make(N);
    uint8_t *src = t.src, *back = t.back, *d = t.d;
    vram_stream a = t.a, b = t.b;
    vram_event e = t.e;
    memset(src, 7, N);
    for (int i = 0; i < 4; i++) /* several pieces, so the D2H has room to overtake them */
        cr_assert_eq(CALL(memcpy_async, d + i * (N / 4), src + i * (N / 4), N / 4, VRAM_COPY_H2D, a), VRAM_OK);
    cr_assert_eq(CALL(event_record, e, a), VRAM_OK);
    if (wait) cr_assert_eq(CALL(stream_wait_event, b, e), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, back, d, N, VRAM_COPY_D2H, b), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, b), VRAM_OK);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= back[i] == 7;
    cr_assert_eq(CALL(stream_sync, a), VRAM_OK);
    two_streams_free(&t);
    finish();
    return ok;
}

Test(mock, deferred_streams_are_ordered_only_by_events) {
    int overtaken = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        cr_assert(ordered_across_streams(seed, 1), "seed %llu: the wait did not order the streams",
                  (unsigned long long)seed);
        overtaken += !ordered_across_streams(seed, 0);
    }
    cr_assert_gt(overtaken, 0, "without a wait, the other stream never ran first in 40 seeds");
}

Test(mock, deferred_events_complete_in_stream_order) {
    start_deferred(1, 5, 50);
    enum { K = 16 };
    vram_stream s = NULL;
    vram_event e[K];
    uint8_t *d = NULL, host[64];
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, sizeof host, (void **)&d), VRAM_OK);
    for (int i = 0; i < K; i++) {
        cr_assert_eq(CALL(event_create, &e[i]), VRAM_OK);
        cr_assert_eq(CALL(memcpy_async, d, host, sizeof host, VRAM_COPY_H2D, s), VRAM_OK);
        cr_assert_eq(CALL(event_record, e[i], s), VRAM_OK);
    }
    /* whenever event j is done, every earlier one is */
    for (int spin = 0; spin < 100000; spin++) {
        int last_done = -1;
        for (int i = K - 1; i >= 0 && last_done < 0; i--)
            if (CALL(event_query, e[i]) == VRAM_OK) last_done = i;
        for (int i = 0; i < last_done; i++) cr_assert_eq(CALL(event_query, e[i]), VRAM_OK);
        if (last_done == K - 1) break;
    }
    cr_assert_eq(CALL(event_sync, e[K - 1]), VRAM_OK);
    for (int i = 0; i < K; i++) cr_assert_eq(CALL(event_destroy, e[i]), VRAM_OK);
    cr_assert_eq(CALL(stream_destroy, s), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d), VRAM_OK);
    finish();
}

Test(mock, deferred_stand_ins_memset_and_gather) {
    start_deferred(1, 6, 10);
    uint8_t *src = NULL, *out = NULL, *back = NULL;
    uint64_t *ix = NULL, host_ix[5] = {3, 0, 9, 1, 3};
    vram_stream s = NULL;
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 12, (void **)&src), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 15, (void **)&out), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, sizeof host_ix, (void **)&ix), VRAM_OK);
    cr_assert_eq(CALL(host_alloc_pinned, 15, (void **)&back), VRAM_OK);
    uint8_t rows[12];
    for (int i = 0; i < 12; i++) rows[i] = (uint8_t)i;
    cr_assert_eq(CALL(memcpy_async, src, rows, 12, VRAM_COPY_H2D, s), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, ix, host_ix, sizeof host_ix, VRAM_COPY_H2D, s), VRAM_OK);
    cr_assert_eq(vram_mock_memset_async(&m, out, 0xee, 15, s), VRAM_OK);
    int bad = 0;
    cr_assert_eq(vram_mock_gather(out, src, 4, ix, 5, 3, &bad, s), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, back, out, 15, VRAM_COPY_D2H, s), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, s), VRAM_OK);
    uint8_t want[15] = {9, 10, 11, 0, 1, 2, 0xee, 0xee, 0xee, 3, 4, 5, 9, 10, 11};
    cr_assert_arr_eq(back, want, 15);
    cr_assert_arr_eq(out, want, 15, "the sync handed the host the gather's output too");
    cr_assert_eq(bad, 1, "index 9 of 4 rows is flagged");
    /* what is refused */
    cr_assert_eq(vram_mock_gather(out, src, 4, ix, 5, 3, NULL, NULL), VRAM_E_INVALID, "no stream, no mock");
    cr_assert_eq(vram_mock_gather(back, src, 4, ix, 5, 3, NULL, s), VRAM_E_INVALID, "output not device memory");
    cr_assert_eq(vram_mock_gather(out, src, 5, ix, 5, 3, NULL, s), VRAM_E_INVALID, "5 rows of 3 in 12 bytes");
    cr_assert_eq(vram_mock_gather(out, src, 4, ix, 5, 3, (int *)(void *)out, s), VRAM_E_INVALID,
                 "the flag is host memory");
    cr_assert_eq(vram_mock_memset_async(&m, back, 0, 15, s), VRAM_E_INVALID, "not device memory");
    cr_assert_eq(vram_mock_memset_async(&m, out, 0, 16, s), VRAM_E_INVALID, "past the allocation");
    int bogus;
    cr_assert_eq(vram_mock_memset_async(&m, out, 0, 15, (vram_stream)&bogus), VRAM_E_INVALID);
    cr_assert_eq(LAST(), 400);
    cr_assert_eq(CALL(stream_destroy, s), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, src), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, out), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, ix), VRAM_OK);
    cr_assert_eq(CALL(host_free_pinned, back), VRAM_OK);
    finish();
}

Test(mock, plain_stand_ins_work_at_once) {
    start(1);
    uint8_t *out = NULL, *src = NULL;
    uint64_t ix[2] = {1, 0};
    vram_stream s = NULL;
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 4, (void **)&out), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 4, (void **)&src), VRAM_OK);
    cr_assert_eq(vram_mock_memset_async(&m, src, 3, 2, s), VRAM_OK);
    cr_assert_eq(vram_mock_memset_async(&m, src + 2, 4, 2, s), VRAM_OK);
    cr_assert_eq(vram_mock_gather(out, src, 2, ix, 2, 2, NULL, s), VRAM_OK);
    uint8_t want[4] = {4, 4, 3, 3};
    cr_assert_arr_eq(out, want, 4);
    cr_assert_eq(CALL(stream_destroy, s), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, out), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, src), VRAM_OK);
    finish();
}

Test(mock, the_fault_switch_drops_one_kind_of_wait) {
    start_deferred(1, 8, 0);
    two_streams t = two_streams_make(64);
    uint8_t *src = t.src, *d = t.d, *back = t.back;
    vram_stream a = t.a, b = t.b;
    vram_event e = t.e;
    vram_stream listed[3] = {NULL, NULL, NULL};
    cr_assert_eq(vram_mock_streams(&m, listed, 3), 2);
    cr_assert_eq(listed[0], a, "in the order they were made");
    cr_assert_eq(listed[1], b);
    memset(src, 5, 64);
    /* host waits on events of stream a: the host does not wait, nothing is handed over */
    cr_assert_eq(vram_mock_drop_waits(&m, VRAM_MOCK_DROP_HOST_WAITS, a), 0);
    vram_mock_pause(&m, 1);
    cr_assert_eq(CALL(memcpy_async, d, src, 64, VRAM_COPY_H2D, a), VRAM_OK);
    cr_assert_eq(CALL(event_record, e, a), VRAM_OK);
    cr_assert_eq(CALL(event_sync, e), VRAM_OK, "returns at once though the worker is paused");
    cr_assert_eq(CALL(event_query, e), VRAM_OK, "and a query says done");
    cr_assert_eq(m.dropped_waits, 2);
    cr_assert_eq(d[0], 0xA5, "nothing reached the host");
    /* stream waits made by b: the D2H on b overtakes the paused H2D on a */
    cr_assert_eq(vram_mock_drop_waits(&m, VRAM_MOCK_DROP_STREAM_WAITS, b), 0);
    cr_assert_eq(CALL(stream_wait_event, b, e), VRAM_OK);
    cr_assert_eq(m.dropped_waits, 3);
    cr_assert_eq(CALL(memcpy_async, back, d, 64, VRAM_COPY_D2H, b), VRAM_OK);
    vram_mock_pause(&m, 0);
    cr_assert_eq(CALL(stream_sync, b), VRAM_OK);
    cr_assert_eq(CALL(stream_sync, a), VRAM_OK);
    /* the worker may still have run a first; b's copy is right only by luck, so only the
     * honoured run below is checked for bytes */
    cr_assert_eq(vram_mock_drop_waits(&m, VRAM_MOCK_DROP_NONE, NULL), 0);
    vram_mock_pause(&m, 1);
    memset(src, 6, 64);
    cr_assert_eq(CALL(memcpy_async, d, src, 64, VRAM_COPY_H2D, a), VRAM_OK);
    cr_assert_eq(CALL(event_record, e, a), VRAM_OK);
    cr_assert_eq(CALL(stream_wait_event, b, e), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, back, d, 64, VRAM_COPY_D2H, b), VRAM_OK);
    vram_mock_pause(&m, 0);
    cr_assert_eq(CALL(stream_sync, b), VRAM_OK);
    for (int i = 0; i < 64; i++) cr_assert_eq(back[i], 6);
    cr_assert_eq(m.dropped_waits, 3, "honoured again");
    int bogus;
    cr_assert_eq(vram_mock_drop_waits(&m, VRAM_MOCK_DROP_STREAM_WAITS, (vram_stream)&bogus), -1);
    cr_assert_eq(vram_mock_drop_waits(&m, (vram_mock_drop)7, a), -1);
    two_streams_free(&t);
    finish();
}

Test(mock, deferred_frees_and_release_wait_for_the_device) {
    start_deferred(1, 9, 100);
    uint8_t *src = NULL, *d = NULL;
    cr_assert_eq(CALL(host_alloc_pinned, 1 << 16, (void **)&src), VRAM_OK);
    cr_assert_eq(CALL(dev_alloc, 0, 1 << 16, (void **)&d), VRAM_OK);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(CALL(memcpy_async, d + i * 1024, src + i * 1024, 1024, VRAM_COPY_H2D, NULL), VRAM_OK);
    cr_assert_eq(CALL(dev_free, 0, d), VRAM_OK);
    cr_assert_eq(vram_mock_queued_copies(&m, VRAM_COPY_H2D), 0, "cudaFree waits for the device");
    cr_assert_eq(CALL(dev_alloc, 0, 1 << 16, (void **)&d), VRAM_OK);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(CALL(memcpy_async, d + i * 1024, src + i * 1024, 1024, VRAM_COPY_H2D, NULL), VRAM_OK);
    cr_assert_eq(CALL(release_device, 0), VRAM_OK);
    cr_assert_eq(vram_mock_queued_copies(&m, VRAM_COPY_H2D), 0, "a reset waits for the device");
    cr_assert_eq(vram_mock_live(&m).dev_allocs, 0);
    cr_assert_eq(CALL(host_free_pinned, src), VRAM_OK);
    finish();
}

Test(mock, deferred_streams_run_out_after_63) {
    start_deferred(1, 10, 0);
    vram_stream s[64];
    for (int i = 0; i < 63; i++) cr_assert_eq(CALL(stream_create, 0, &s[i]), VRAM_OK, "stream %d", i);
    cr_assert_eq(CALL(stream_create, 0, &s[63]), VRAM_E_OOM);
    cr_assert_eq(LAST(), 2);
    for (int i = 0; i < 63; i++) cr_assert_eq(CALL(stream_destroy, s[i]), VRAM_OK);
    finish();
}
