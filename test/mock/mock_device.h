/* test/mock/mock_device.h — the mocked CUDA layer: a scriptable fake behind vram_device_ops.
 * A test sets plain fields (devices, versions, limits) and scripts faults (the Nth call of
 * an op, a sticky error, no driver); "device" memory is real host memory, everything is counted. */
#ifndef VRAMKIT_MOCK_DEVICE_H
#define VRAMKIT_MOCK_DEVICE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <vramkit/device.h>

/* ---- ops, by name, for fault scripting ------------------------------------------ */

/* X(ENUM_SUFFIX, slot name), in the order of vram_device_ops. */
#define VRAM_MOCK_OP_LIST(X)                \
    X(DRIVER_VERSION, driver_version)       \
    X(RUNTIME_VERSION, runtime_version)     \
    X(DEVICE_COUNT, device_count)           \
    X(DEVICE_INFO, device_info)             \
    X(MEM_INFO, mem_info)                   \
    X(ATTRIBUTE, attribute)                 \
    X(SET_DEVICE, set_device)               \
    X(DEV_ALLOC, dev_alloc)                 \
    X(DEV_FREE, dev_free)                   \
    X(HOST_ALLOC_PINNED, host_alloc_pinned) \
    X(HOST_FREE_PINNED, host_free_pinned)   \
    X(HOST_REGISTER, host_register)         \
    X(HOST_UNREGISTER, host_unregister)     \
    X(STREAM_CREATE, stream_create)         \
    X(STREAM_DESTROY, stream_destroy)       \
    X(STREAM_SYNC, stream_sync)             \
    X(MEMCPY_ASYNC, memcpy_async)           \
    X(EVENT_CREATE, event_create)           \
    X(EVENT_DESTROY, event_destroy)         \
    X(EVENT_RECORD, event_record)           \
    X(EVENT_QUERY, event_query)             \
    X(EVENT_SYNC, event_sync)               \
    X(STREAM_WAIT_EVENT, stream_wait_event) \
    X(LAST_ERROR, last_error)

typedef enum vram_mock_op {
#define VRAM__MOCK_OP_ENUM(e, n) VRAM_MOCK_OP_##e,
    VRAM_MOCK_OP_LIST(VRAM__MOCK_OP_ENUM)
#undef VRAM__MOCK_OP_ENUM
    VRAM_MOCK_OP_COUNT
} vram_mock_op;

/* "dev_alloc" for VRAM_MOCK_OP_DEV_ALLOC; NULL outside the enum. */
const char *vram_mock_op_name(vram_mock_op op);
/* The op whose slot is called `name`; -1 when none is. */
int vram_mock_op_from_name(const char *name);

/* ---- the script ------------------------------------------------------------------ */

#define VRAM_MOCK_MAX_FAULTS 32
#define VRAM_MOCK_MAX_EXTRA_ATTRS 8
#define VRAM_MOCK_MAX_FREE_SCRIPT 64

/* One scripted failure: call number `at` of `op` (counted in calls[op]) fails with
 * `cuda_code`; with `repeat`, every call from `at` on does. */
typedef struct vram_mock_fault {
    vram_mock_op op;
    uint64_t at;
    int cuda_code;
    int repeat;
    int fired; /* set by the mock */
} vram_mock_fault;

typedef struct vram_mock_device {
    /* What device_info reports. free_bytes is the free memory before the mock allocates
     * anything; mem_info/device_info report it minus live_bytes. The tristates also drive
     * `attribute`: YES -> 1, NO -> 0, UNKNOWN -> the read fails (CUDA error 1, as a driver
     * that does not know the attribute answers). */
    vram_device_info info;
    int mempool_handle_types; /* attribute 119 (a bitmask; 1 = POSIX fd) */
    struct {
        int attr, value;
    } extra_attrs[VRAM_MOCK_MAX_EXTRA_ATTRS]; /* any other attribute number */
    int n_extra_attrs;
    /* K: dev_alloc fails (VRAM_E_OOM, CUDA 2) once live bytes would exceed
     * min(alloc_limit, info.free_bytes). UINT64_MAX = only free memory limits. */
    uint64_t alloc_limit;

    /* accounting, kept by the mock */
    uint64_t live_bytes, live_allocs, peak_bytes;
    uint64_t allocs_total, frees_total;

    /* free memory over time (vram_mock_script_free): each successful mem_info call on this
     * device first sets info.free_bytes to the next value; after the last the figure stays */
    uint64_t free_script[VRAM_MOCK_MAX_FREE_SCRIPT];
    int free_script_n, free_script_next;
} vram_mock_device;

struct vram_mock__obj; /* a live allocation, registration, stream or event */

typedef struct vram_mock {
    /* --- script: set after vram_mock_init, before the ops are used --- */
    int n_devices; /* what device_count says; may exceed VRAM_MAX_DEVICES (ordinals
                      past it then fail like a bad ordinal) */
    int driver_version;  /* 0 = no driver */
    int runtime_version;
    vram_mock_device dev[VRAM_MAX_DEVICES];
    uint64_t pinned_limit;    /* host_alloc_pinned fails (OOM, CUDA 2) past this many live bytes */
    uint64_t sticky_at;       /* from this global call number on, every call fails; 0 = never */
    int sticky_code;          /* the CUDA code sticky_at fails with */
    vram_mock_fault faults[VRAM_MOCK_MAX_FAULTS];
    int n_faults;
    int event_not_ready;      /* the next N event_query calls answer VRAM_E_NOT_READY */

    /* --- state and counters, kept by the mock (read them when no thread is in an op,
     *     or through the getters below) --- */
    uint64_t calls[VRAM_MOCK_OP_COUNT]; /* per op, failed calls included */
    uint64_t total_calls;  /* every op except last_error: the clock sticky_at counts on */
    uint64_t failed_calls; /* calls that returned an error (NOT_READY excluded) */
    int poisoned;          /* a sticky error fired: every call fails with poison_code */
    int poison_code;
    int last_error;        /* what last_error returns: the CUDA code of the last failure */
    int current_device;
    uint64_t copies[5], bytes_copied[5]; /* indexed by vram_copy_kind */
    uint64_t pageable_copies; /* H2D/D2H copies whose host side was neither pinned nor
                                 registered (real CUDA would not overlap them) */
    uint64_t pinned_live, pinned_live_bytes;
    uint64_t registered_live, registered_live_bytes;
    uint64_t streams_live, events_live;
    uint64_t serial; /* numbers objects for the leak report */
    struct vram_mock__obj *objs;
    pthread_mutex_t lock;
} vram_mock;

/* ---- set-up ----------------------------------------------------------------------- */

/* Defaults: n devices (negative: 0) named "Mock H100", cc 9.0, 80 GiB total and
 * free, 132 SMs, 3 copy engines, compute mode default, every attribute yes, driver and
 * runtime 13000, no limits, no faults. Requires: m valid. Pair with vram_mock_fini. */
void vram_mock_init(vram_mock *m, int n_devices);

/* The table over this mock: api_version/size of this build, backend "mock", ctx = m.
 * Behaviour beyond the slot contracts in device.h:
 *   - failures cudart itself would report carry its code for last_error: a bad ordinal
 *     VRAM_E_INVALID (101), a NULL output or unknown pointer VRAM_E_INVALID (1), an unknown
 *     stream/event VRAM_E_INVALID (400), a bad copy kind VRAM_E_INVALID (21); last_error
 *     keeps the code of the last failure (successes do not clear it);
 *   - device_count with n_devices 0 fails with VRAM_E_NO_DEVICE (100), as cudart does;
 *   - dev_alloc/host_alloc_pinned/stream_create/event_create leave NULL on any failure;
 *     0 bytes succeed with NULL; dev_alloc is 256-byte aligned and filled with garbage
 *     (up to 64 MiB), pinned memory is page aligned;
 *   - dev_free/host_free_pinned(NULL) succeed; freeing through another device's ordinal
 *     is VRAM_E_INVALID (stricter than CUDA, to catch the bug);
 *   - memcpy_async copies at once; NULL is the default stream; 0 bytes always succeed;
 *     a device side must lie inside one live allocation and a host side must not touch
 *     device memory (else VRAM_E_INVALID); H2D/D2H from unpinned memory count in
 *     pageable_copies;
 *   - host_register fails with 801 (VRAM_E_NOT_SUPPORTED) when the current device says
 *     host_register NO, with 712 over an already registered or pinned range;
 *   - compute mode PROHIBITED: set_device, dev_alloc, stream_create on it fail with 46;
 *   - event_query says done unless event_not_ready is set. */
vram_device_ops vram_mock_ops(vram_mock *m);

/* Releases every live object (real memory), reports each on `log` when not NULL, destroys
 * the lock. Returns how many objects were still live: 0 means nothing leaked. */
uint64_t vram_mock_fini(vram_mock *m, FILE *log);

/* ---- scripting helpers (each takes the lock; plain field writes work before use) --- */

void vram_mock_set_name(vram_mock *m, int dev, const char *name);
void vram_mock_set_memory(vram_mock *m, int dev, uint64_t total_bytes, uint64_t free_bytes);
/* Sets any attribute's value: 99/102/103/110/115 set the info tristate (0 -> NO, else YES),
 * 119 the handle-type mask, other numbers go to the extra table. */
void vram_mock_set_attr(vram_mock *m, int dev, int attr, int value);
/* Makes attribute `attr` unreadable on `dev` (its read fails with CUDA error 1). */
void vram_mock_attr_unknown(vram_mock *m, int dev, int attr);
/* dev_alloc on `dev` fails once live allocations would exceed `bytes`. */
void vram_mock_alloc_limit(vram_mock *m, int dev, uint64_t bytes);
/* Free memory that moves: the next n successful mem_info calls on `dev` report values[0],
 * values[1], ... (less live allocations, as always); later calls keep the last value.
 * device_info reports the current value without moving on. n 0 ends a script. Returns 0,
 * or -1 for a bad device or n outside 0 .. VRAM_MOCK_MAX_FREE_SCRIPT. */
int vram_mock_script_free(vram_mock *m, int dev, const uint64_t *values, int n);

/* The nth call of `op` from now (1 = the next one) fails with `cuda_code`, converted with
 * vram_status_from_cuda and recorded for last_error. A code of the sticky class also
 * poisons the mock, as it corrupts a real context. Returns 0, or -1 when the table is full
 * or the arguments are bad. */
int vram_mock_fail_nth(vram_mock *m, vram_mock_op op, uint64_t nth, int cuda_code);
/* Same, for the nth call and every later call of `op` (other ops unaffected). */
int vram_mock_fail_from(vram_mock *m, vram_mock_op op, uint64_t nth, int cuda_code);
/* From the nth call from now, of any op, on, EVERY call fails with `cuda_code` (a corrupt
 * context). last_error is not counted and keeps answering. */
void vram_mock_sticky_from(vram_mock *m, uint64_t nth_call, int cuda_code);
/* No NVIDIA driver: driver_version says 0, runtime_version still answers, device_count
 * fails with VRAM_E_NO_DRIVER, every other call with CUDA 35 (VRAM_E_CUDA). */
void vram_mock_no_driver(vram_mock *m);
/* Driver `drv` under runtime `rt` (e.g. 12040 under 13000). An older driver of another
 * major version cannot run the runtime: like cudart, every call but the two version
 * queries fails with CUDA 35 (VRAM_E_CUDA; driver_version still says drv, which is how
 * "driver too old" is told from "no driver"). An older minor of the same major works
 * (CUDA minor-version compatibility): only the versions differ. */
void vram_mock_driver_older(vram_mock *m, int drv, int rt);

/* ---- reading the state (each takes the lock) ------------------------------------- */

typedef struct vram_mock_outstanding {
    uint64_t dev_allocs, dev_bytes; /* all devices together */
    uint64_t pinned, pinned_bytes;
    uint64_t registered, registered_bytes;
    uint64_t streams, events;
} vram_mock_outstanding;

vram_mock_outstanding vram_mock_live(vram_mock *m);
/* Live objects of every kind together: 0 means nothing leaked so far. */
uint64_t vram_mock_leaks(vram_mock *m);
uint64_t vram_mock_calls(vram_mock *m, vram_mock_op op);

#endif /* VRAMKIT_MOCK_DEVICE_H */
