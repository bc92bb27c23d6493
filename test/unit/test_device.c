/* test_device.c — the ops-table contract and helpers of vramkit/device.h.
 * vram_device_ops_check is what stops a half-filled or foreign table before anything calls
 * through it, so every slot is removed in turn; the cc and count helpers are pinned too. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include <vramkit/device.h>

#include "device/host_device.h"

/* Every function slot, in order. The layout test below fails when device.h gains a slot
 * this list does not name, so "each slot removed in turn" stays complete. */
#define SLOTS(X)                                                                        \
    X(driver_version) X(runtime_version) X(device_count) X(device_info) X(mem_info)     \
    X(attribute) X(set_device) X(release_device) X(dev_alloc) X(dev_free) X(host_alloc_pinned)             \
    X(host_free_pinned) X(host_register) X(host_unregister) X(stream_create)             \
    X(stream_destroy) X(stream_sync) X(memcpy_async) X(event_create) X(event_destroy)    \
    X(event_record) X(event_query) X(event_sync) X(stream_wait_event) X(last_error)

enum {
#define SLOT_ENUM(n) SLOT_##n,
    SLOTS(SLOT_ENUM)
#undef SLOT_ENUM
    N_SLOTS
};

static void clear_slot(vram_device_ops *ops, int slot) {
    switch (slot) {
#define SLOT_CLEAR(n) \
    case SLOT_##n:    \
        ops->n = NULL; \
        break;
        SLOTS(SLOT_CLEAR)
#undef SLOT_CLEAR
    default: break;
    }
}

static const char *slot_name(int slot) {
    static const char *const names[] = {
#define SLOT_NAME(n) #n,
        SLOTS(SLOT_NAME)
#undef SLOT_NAME
    };
    return slot >= 0 && slot < N_SLOTS ? names[slot] : "?";
}

Test(device_ops, slot_list_covers_the_table) {
    /* the header fields, then nothing but function pointers, the last one last_error */
    size_t first = offsetof(vram_device_ops, driver_version);
    size_t end = offsetof(vram_device_ops, last_error) + sizeof(int (*)(void *));
    cr_assert_eq(end, sizeof(vram_device_ops), "slots after last_error?");
    cr_assert_eq((end - first) / sizeof(void (*)(void)), (size_t)N_SLOTS,
                 "device.h has slots this test does not remove");
}

Test(device_ops, full_table_passes) {
    vram_device_ops ops = vram_host_ops();
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK);
}

Test(device_ops, null_table) { cr_assert_eq(vram_device_ops_check(NULL), VRAM_E_INVALID); }

Test(device_ops, zeroed_table) {
    vram_device_ops ops;
    memset(&ops, 0, sizeof ops);
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_E_VERSION); /* version 0 is nobody's */
    ops.api_version = VRAM_DEVICE_API_VERSION;
    ops.size = sizeof ops;
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_E_INVALID);
}

ParameterizedTestParameters(device_ops, wrong_version) {
    static uint32_t versions[] = {0, VRAM_DEVICE_API_VERSION + 1, VRAM_DEVICE_API_VERSION + 100,
                                  UINT32_MAX};
    return cr_make_param_array(uint32_t, versions, sizeof versions / sizeof versions[0]);
}

ParameterizedTest(uint32_t *v, device_ops, wrong_version) {
    vram_device_ops ops = vram_host_ops();
    ops.api_version = *v;
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_E_VERSION, "version %u accepted", *v);
}

ParameterizedTestParameters(device_ops, small_size) {
    static uint32_t sizes[] = {0, 1, (uint32_t)offsetof(vram_device_ops, last_error),
                               (uint32_t)sizeof(vram_device_ops) - 1};
    return cr_make_param_array(uint32_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(uint32_t *size, device_ops, small_size) {
    vram_device_ops ops = vram_host_ops();
    ops.size = *size;
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_E_VERSION, "size %u accepted", *size);
}

Test(device_ops, larger_size_is_a_newer_backend_and_fine) {
    vram_device_ops ops = vram_host_ops();
    ops.size = (uint32_t)sizeof ops + 64;
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK);
}

ParameterizedTestParameters(device_ops, missing_slot) {
    static int slots[N_SLOTS];
    for (int i = 0; i < N_SLOTS; i++) slots[i] = i;
    return cr_make_param_array(int, slots, N_SLOTS);
}

ParameterizedTest(int *slot, device_ops, missing_slot) {
    vram_device_ops ops = vram_host_ops();
    clear_slot(&ops, *slot);
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_E_INVALID, "table without %s accepted",
                 slot_name(*slot));
}

Test(device_ops, flags_this_version_does_not_define_are_refused) {
    /* a table that promises something this build cannot know how to honour is not usable */
    vram_device_ops ops = vram_host_ops();
    cr_assert_eq(ops.flags, VRAM_DEVICE_HOST_MEMORY, "the host backend's memory is host memory");
    for (int bit = 0; bit < 32; bit++) {
        uint32_t f = 1u << bit;
        ops.flags = f;
        vram_status want = (f & VRAM_DEVICE_FLAGS_KNOWN) ? VRAM_OK : VRAM_E_INVALID;
        cr_assert_eq(vram_device_ops_check(&ops), want, "flag bit %d", bit);
    }
    ops.flags = 0;
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK, "no flag: a GPU");
}

Test(device_ops, ctx_is_not_checked) {
    /* a stateless backend has no ctx; the check is about what can be called */
    vram_device_ops ops = vram_host_ops();
    ops.ctx = NULL;
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK);
}

Test(device_ops, unnamed_backend_is_refused) {
    /* every report names the backend; a NULL name would crash the one that prints it */
    vram_device_ops ops = vram_host_ops();
    ops.backend = NULL;
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_E_INVALID);
}

/* ---- helpers ----------------------------------------------------------------------- */

typedef struct cc_case {
    int major, minor, expect;
} cc_case;

ParameterizedTestParameters(device, cc) {
    static cc_case cases[] = {{0, 0, 0},   {7, 5, 75},   {8, 0, 80},  {8, 6, 86},
                              {8, 9, 89},  {9, 0, 90},   {10, 0, 100}, {12, 0, 120},
                              {12, 1, 121}};
    return cr_make_param_array(cc_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(cc_case *c, device, cc) {
    vram_device_info d;
    memset(&d, 0, sizeof d);
    d.cc_major = c->major;
    d.cc_minor = c->minor;
    cr_assert_eq(vram_device_cc(&d), c->expect);
}

typedef struct count_case {
    int count, expect;
} count_case;

ParameterizedTestParameters(device, snapshot_count) {
    static count_case cases[] = {{INT_MIN, 0},
                                 {-1, 0},
                                 {0, 0},
                                 {1, 1},
                                 {8, 8},
                                 {VRAM_MAX_DEVICES - 1, VRAM_MAX_DEVICES - 1},
                                 {VRAM_MAX_DEVICES, VRAM_MAX_DEVICES},
                                 {VRAM_MAX_DEVICES + 1, VRAM_MAX_DEVICES},
                                 {INT_MAX, VRAM_MAX_DEVICES}};
    return cr_make_param_array(count_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(count_case *c, device, snapshot_count) {
    static vram_device_snapshot s; /* large: not on the stack */
    memset(&s, 0, sizeof s);
    s.device_count = c->count;
    cr_assert_eq(vram_snapshot_count(&s), c->expect, "count %d", c->count);
}

Test(device, enums_match_cuda_numbers) {
    /* the numbers are CUDA's (cudaComputeMode, CUdevice_attribute in 13.0); a typo here
     * would make the driver read the wrong attribute */
    cr_assert_eq(VRAM_COMPUTE_DEFAULT, 0);
    cr_assert_eq(VRAM_COMPUTE_EXCLUSIVE_THREAD, 1);
    cr_assert_eq(VRAM_COMPUTE_PROHIBITED, 2);
    cr_assert_eq(VRAM_COMPUTE_EXCLUSIVE_PROCESS, 3);
    cr_assert_eq(VRAM_ATTR_HOST_REGISTER_SUPPORTED, 99);
    cr_assert_eq(VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 102);
    cr_assert_eq(VRAM_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED, 103);
    cr_assert_eq(VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED, 110);
    cr_assert_eq(VRAM_ATTR_MEMORY_POOLS_SUPPORTED, 115);
    cr_assert_eq(VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES, 119);
    cr_assert_eq(VRAM_UNKNOWN, -1);
    cr_assert_eq(VRAM_NO, 0);
    cr_assert_eq(VRAM_YES, 1);
}
