/* test_snapshot.c — vram_snapshot_take over the mock, for every way a machine can look.
 * The core trusts a snapshot's status: a complete one must be complete, and an incomplete
 * one must say why (no driver, sticky error, ...) with only whole devices in it. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include <vramkit/cudaerr.h>
#include <vramkit/device.h>

#include "mock_device.h"
#include "device/snapshot.h"

#define GiB (1ull << 30)

static vram_mock m;
static vram_device_ops ops;
static vram_device_snapshot snap; /* ~20 KiB: static, not on the stack */

static void start(int n) {
    vram_mock_init(&m, n);
    ops = vram_mock_ops(&m);
    memset(&snap, 0xA5, sizeof snap); /* garbage, to prove the snapshot zeroes it */
}

static void finish(void) { cr_assert_eq(vram_mock_fini(&m, stderr), 0); }

/* Bytes of a device entry are all zero: nothing half-filled is left behind. */
static int all_zero(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0) return 0;
    return 1;
}

static void assert_unused_entries_zero(int from) {
    for (int i = from; i < VRAM_MAX_DEVICES; i++)
        cr_assert(all_zero(&snap.devices[i], sizeof snap.devices[i]), "devices[%d] not zero", i);
}

/* Calls a snapshot of n mock devices makes: 3 up front, then info + mem + 6 attribute reads. */
#define CALLS_BEFORE_DEVICE(i) (3 + 8 * (i))

Test(snapshot, two_devices) {
    start(2);
    vram_mock_set_name(&m, 1, "Mock L40S-48C");
    vram_mock_set_memory(&m, 1, 48 * GiB, 40 * GiB);
    m.dev[1].info.cc_major = 8;
    m.dev[1].info.cc_minor = 9;
    vram_mock_set_attr(&m, 1, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
    vram_mock_set_attr(&m, 1, VRAM_ATTR_MEMORY_POOLS_SUPPORTED, 0);
    void *held = NULL; /* another part of this process holds 1 GiB on device 0 */
    cr_assert_eq(ops.dev_alloc(ops.ctx, 0, 1 * GiB, &held), VRAM_OK);

    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(snap.status, VRAM_OK);
    cr_assert_eq(snap.cuda_error, 0);
    cr_assert_eq(snap.driver_version, 13000);
    cr_assert_eq(snap.runtime_version, 13000);
    cr_assert_eq(snap.device_count, 2);
    cr_assert_eq(vram_snapshot_count(&snap), 2);

    const vram_device_info *d0 = &snap.devices[0], *d1 = &snap.devices[1];
    cr_assert_str_eq(d0->name, "Mock H100");
    cr_assert_eq(d0->ordinal, 0);
    cr_assert_eq(vram_device_cc(d0), 90);
    cr_assert_eq(d0->total_bytes, 80 * GiB);
    cr_assert_eq(d0->free_bytes, 79 * GiB, "free memory is read at the moment of the snapshot");
    cr_assert_eq(d0->vmm, VRAM_YES);
    cr_assert_eq(d0->vmm_posix_fd, VRAM_YES);
    cr_assert_eq(d0->vmm_rdma, VRAM_YES);
    cr_assert_eq(d0->memory_pools, VRAM_YES);
    cr_assert_eq(d0->host_register, VRAM_YES);
    cr_assert_eq(d0->mempool_handle_types, 1, "attribute 119 is kept as its bitmask");
    cr_assert_gt(d0->multiprocessors, 0);

    cr_assert_str_eq(d1->name, "Mock L40S-48C");
    cr_assert_eq(d1->ordinal, 1);
    cr_assert_eq(vram_device_cc(d1), 89);
    cr_assert_eq(d1->total_bytes, 48 * GiB);
    cr_assert_eq(d1->free_bytes, 40 * GiB);
    cr_assert_eq(d1->vmm, VRAM_NO, "a real 0 stays NO");
    cr_assert_eq(d1->memory_pools, VRAM_NO);
    cr_assert_eq(d1->vmm_posix_fd, VRAM_YES);
    assert_unused_entries_zero(2);

    /* a snapshot only reads */
    cr_assert_eq(m.calls[VRAM_MOCK_OP_DEV_ALLOC], 1);
    cr_assert_eq(m.calls[VRAM_MOCK_OP_SET_DEVICE], 0);
    cr_assert_eq(m.calls[VRAM_MOCK_OP_STREAM_CREATE], 0);
    cr_assert_eq(m.total_calls, 1 + CALLS_BEFORE_DEVICE(2));
    cr_assert_eq(ops.dev_free(ops.ctx, 0, held), VRAM_OK);
    finish();
}

Test(snapshot, no_driver) {
    start(2);
    vram_mock_no_driver(&m);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_NO_DRIVER);
    cr_assert_eq(snap.status, VRAM_E_NO_DRIVER);
    cr_assert_eq(snap.driver_version, 0);
    cr_assert_eq(snap.runtime_version, 13000, "the runtime still reports itself");
    cr_assert_eq(snap.device_count, 0);
    cr_assert_eq(snap.cuda_error, 35);
    assert_unused_entries_zero(0);
    finish();
}

Test(snapshot, driver_too_old_is_not_no_driver) {
    start(1);
    vram_mock_driver_older(&m, 12040, 13000);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_CUDA);
    cr_assert_eq(snap.driver_version, 12040);
    cr_assert_eq(snap.runtime_version, 13000);
    cr_assert_eq(snap.cuda_error, 35);
    cr_assert_eq(snap.device_count, 0);
    assert_unused_entries_zero(0);
    finish();
}

Test(snapshot, older_minor_driver_is_complete) {
    start(1);
    vram_mock_driver_older(&m, 13000, 13010);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(snap.driver_version, 13000);
    cr_assert_eq(snap.runtime_version, 13010);
    cr_assert_eq(snap.device_count, 1);
    finish();
}

Test(snapshot, no_device) {
    start(0);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_NO_DEVICE);
    cr_assert_eq(snap.driver_version, 13000);
    cr_assert_eq(snap.device_count, 0);
    cr_assert_eq(snap.cuda_error, 100);
    finish();
}

typedef struct sticky_case {
    int call;     /* global call number where the context dies */
    int complete; /* devices complete before it */
} sticky_case;

ParameterizedTestParameters(snapshot, sticky_mid_snapshot) {
    static sticky_case cases[] = {
        {1, 0},                            /* the driver version query */
        {3, 0},                            /* device count */
        {CALLS_BEFORE_DEVICE(0) + 1, 0},   /* device 0's info */
        {CALLS_BEFORE_DEVICE(0) + 2, 0},   /* device 0's mem_info */
        {CALLS_BEFORE_DEVICE(0) + 4, 0},   /* an attribute of device 0: not "unknown" */
        {CALLS_BEFORE_DEVICE(1) + 1, 1},   /* device 1's info */
        {CALLS_BEFORE_DEVICE(2) + 7, 2},   /* device 2's last attribute */
    };
    return cr_make_param_array(sticky_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(sticky_case *c, snapshot, sticky_mid_snapshot) {
    start(3);
    vram_mock_sticky_from(&m, (uint64_t)c->call, 700);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_CUDA_STICKY, "call %d", c->call);
    cr_assert_eq(snap.status, VRAM_E_CUDA_STICKY);
    cr_assert_eq(snap.cuda_error, 700);
    cr_assert_eq(snap.device_count, c->complete);
    for (int i = 0; i < c->complete; i++) {
        cr_assert_str_eq(snap.devices[i].name, "Mock H100");
        cr_assert_eq(snap.devices[i].total_bytes, 80 * GiB);
        cr_assert_eq(snap.devices[i].host_register, VRAM_YES);
    }
    assert_unused_entries_zero(c->complete);
    cr_assert_eq(m.failed_calls, 1, "the snapshot stops at the first sticky failure");
    finish();
}

Test(snapshot, sticky_fault_on_an_attribute) {
    start(2);
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_ATTRIBUTE, 7, 719), 0); /* device 1 */
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_CUDA_STICKY);
    cr_assert_eq(snap.cuda_error, 719);
    cr_assert_eq(snap.device_count, 1);
    assert_unused_entries_zero(1);
    finish();
}

Test(snapshot, unreadable_attribute_is_unknown_not_no) {
    start(2);
    vram_mock_attr_unknown(&m, 1, VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED);
    cr_assert_eq(vram_mock_fail_nth(&m, VRAM_MOCK_OP_ATTRIBUTE, 1, 801), 0); /* dev 0, VMM */
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(snap.device_count, 2);
    cr_assert_eq(snap.devices[0].vmm, VRAM_UNKNOWN);
    cr_assert_eq(snap.devices[0].vmm_posix_fd, VRAM_YES);
    cr_assert_eq(snap.devices[0].memory_pools, VRAM_YES);
    cr_assert_eq(snap.devices[1].vmm_rdma, VRAM_UNKNOWN);
    cr_assert_eq(snap.devices[1].vmm, VRAM_YES);
    cr_assert_eq(snap.devices[1].host_register, VRAM_YES);
    cr_assert_eq(snap.cuda_error, 0, "a complete snapshot carries no error");
    finish();
}

Test(snapshot, every_attribute_unreadable) {
    start(1);
    cr_assert_eq(vram_mock_fail_from(&m, VRAM_MOCK_OP_ATTRIBUTE, 1, 1), 0);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    const vram_device_info *d = &snap.devices[0];
    cr_assert_eq(d->vmm, VRAM_UNKNOWN);
    cr_assert_eq(d->vmm_posix_fd, VRAM_UNKNOWN);
    cr_assert_eq(d->vmm_rdma, VRAM_UNKNOWN);
    cr_assert_eq(d->memory_pools, VRAM_UNKNOWN);
    cr_assert_eq(d->host_register, VRAM_UNKNOWN);
    cr_assert_eq(d->mempool_handle_types, -1, "an unreadable bitmask is -1, not 0");
    cr_assert_eq(d->total_bytes, 80 * GiB, "the rest of the device is still read");
    finish();
}

typedef struct fault_case {
    vram_mock_op op;
    int nth;
    int code;
    vram_status expect;
    int complete;
} fault_case;

ParameterizedTestParameters(snapshot, plain_failure_stops) {
    static fault_case cases[] = {
        {VRAM_MOCK_OP_DRIVER_VERSION, 1, 999, VRAM_E_CUDA, 0},
        {VRAM_MOCK_OP_RUNTIME_VERSION, 1, 3, VRAM_E_CUDA, 0},
        {VRAM_MOCK_OP_DEVICE_COUNT, 1, 3, VRAM_E_CUDA, 0},
        {VRAM_MOCK_OP_DEVICE_INFO, 2, 999, VRAM_E_CUDA, 1},
        {VRAM_MOCK_OP_MEM_INFO, 1, 801, VRAM_E_NOT_SUPPORTED, 0},
        {VRAM_MOCK_OP_MEM_INFO, 2, 2, VRAM_E_OOM, 1},
    };
    return cr_make_param_array(fault_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(fault_case *c, snapshot, plain_failure_stops) {
    start(2);
    cr_assert_eq(vram_mock_fail_nth(&m, c->op, (uint64_t)c->nth, c->code), 0);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), c->expect, "%s #%d",
                 vram_mock_op_name(c->op), c->nth);
    cr_assert_eq(snap.status, c->expect);
    cr_assert_eq(snap.cuda_error, c->code);
    cr_assert_eq(snap.device_count, c->complete);
    assert_unused_entries_zero(c->complete);
    if (c->op == VRAM_MOCK_OP_DRIVER_VERSION) cr_assert_eq(snap.runtime_version, 0);
    finish();
}

Test(snapshot, more_devices_than_it_can_hold) {
    start(VRAM_MAX_DEVICES + 6);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_RANGE,
                 "complete devices, but not the whole machine");
    cr_assert_eq(snap.status, VRAM_E_RANGE);
    cr_assert_eq(snap.cuda_error, 0);
    cr_assert_eq(snap.device_count, VRAM_MAX_DEVICES);
    cr_assert_eq(vram_snapshot_count(&snap), VRAM_MAX_DEVICES);
    for (int i = 0; i < VRAM_MAX_DEVICES; i++) {
        cr_assert_eq(snap.devices[i].ordinal, i);
        cr_assert_eq(snap.devices[i].total_bytes, 80 * GiB);
    }
    cr_assert_eq(m.calls[VRAM_MOCK_OP_DEVICE_INFO], VRAM_MAX_DEVICES, "never asks past the end");
    finish();
}

Test(snapshot, exactly_max_devices_is_complete) {
    start(VRAM_MAX_DEVICES);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(snap.device_count, VRAM_MAX_DEVICES);
    finish();
}

Test(snapshot, bad_tables_and_arguments) {
    cr_assert_eq(vram_snapshot_take(NULL, NULL), VRAM_E_INVALID);
    start(1);
    cr_assert_eq(vram_snapshot_take(&ops, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_snapshot_take(NULL, &snap), VRAM_E_INVALID);
    cr_assert_eq(snap.status, VRAM_E_INVALID);
    cr_assert_eq(snap.device_count, 0);
    cr_assert(all_zero(&snap.devices, sizeof snap.devices));
    vram_device_ops bad = ops;
    bad.api_version = VRAM_DEVICE_API_VERSION + 1;
    cr_assert_eq(vram_snapshot_take(&bad, &snap), VRAM_E_VERSION);
    cr_assert_eq(snap.status, VRAM_E_VERSION);
    bad = ops;
    bad.mem_info = NULL;
    cr_assert_eq(vram_snapshot_take(&bad, &snap), VRAM_E_INVALID);
    cr_assert_eq(m.total_calls, 0, "a bad table is never called");
    finish();
}

/* ---- backends that misbehave ------------------------------------------------------- */

static vram_status negative_count(void *ctx, int *count) {
    (void)ctx;
    *count = -3;
    return VRAM_OK;
}

Test(snapshot, negative_count_is_range) {
    start(1);
    ops.device_count = negative_count;
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_RANGE);
    cr_assert_eq(snap.device_count, 0);
    finish();
}

/* A backend that reports a sticky CUDA code under a generic status. */
static vram_status generic_status_sticky_code(void *ctx, int device, int attr, int *value) {
    (void)device;
    (void)attr;
    (void)value;
    vram_mock *mm = (vram_mock *)ctx;
    mm->last_error = 700;
    return VRAM_E_CUDA;
}

Test(snapshot, sticky_code_behind_a_generic_status) {
    start(1);
    ops.attribute = generic_status_sticky_code;
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_CUDA_STICKY);
    cr_assert_eq(snap.cuda_error, 700);
    cr_assert_eq(snap.device_count, 0);
    finish();
}

static vram_status unterminated_name(void *ctx, int device, vram_device_info *out) {
    (void)ctx;
    memset(out, 'A', sizeof *out);
    out->ordinal = 99 + device;
    out->vmm = VRAM_NO; /* overwritten by the attribute reads */
    return VRAM_OK;
}

Test(snapshot, backend_output_is_normalised) {
    start(1);
    ops.device_info = unterminated_name;
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(strlen(snap.devices[0].name), VRAM_DEVICE_NAME_MAX - 1);
    cr_assert_eq(snap.devices[0].ordinal, 0);
    cr_assert_eq(snap.devices[0].vmm, VRAM_YES);
    cr_assert_eq(snap.devices[0].total_bytes, 80 * GiB, "mem_info's numbers win");
    finish();
}

Test(snapshot, repeated_snapshots_see_memory_move) {
    start(1);
    void *p = NULL;
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    uint64_t before = snap.devices[0].free_bytes;
    cr_assert_eq(ops.dev_alloc(ops.ctx, 0, 3 * GiB, &p), VRAM_OK);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_assert_eq(snap.devices[0].free_bytes, before - 3 * GiB);
    cr_assert_eq(ops.dev_free(ops.ctx, 0, p), VRAM_OK);
    finish();
}
