/* test/mock/mock_device.h — the mocked CUDA layer: a scriptable fake behind vram_device_ops.
 * A test sets plain fields (devices, versions, limits) and scripts faults (the Nth call of
 * an op, a sticky error, no driver); everything is counted. Plain, "device" memory is host
 * memory and work is done at once; deferred, a worker thread does the work later, in stream
 * order, and the host sees device memory only through the waits that cover it. */
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
    X(RELEASE_DEVICE, release_device)       \
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

    /* the primary context a real process would hold on this device: taken by any call that
     * needs one (see vram_mock_ops), given back by release_device */
    int context;
    uint64_t contexts_made; /* times it was taken */
    uint64_t releases;      /* successful release_device calls */
} vram_mock_device;

struct vram_mock__obj;      /* a live allocation, registration, stream or event */
struct vram_mock__deferred; /* the worker and its queues (vram_mock_deferred) */

#define VRAM_MOCK_MAX_THREADS 64 /* threads whose current device the mock tells apart */

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
    int current_device;    /* the device the last set_device selected (any thread) */
    struct {
        pthread_t thread;
        int device;
    } thread_device[VRAM_MOCK_MAX_THREADS]; /* each thread's current device (0 until set) */
    int n_thread_device;
    uint64_t cross_device_calls; /* work queued on a stream (or an event recorded) of another
                                    device than the calling thread's current one */
    uint64_t copies[5], bytes_copied[5]; /* indexed by vram_copy_kind */
    uint64_t pageable_copies; /* H2D/D2H copies whose host side was neither pinned nor
                                 registered (real CUDA would not overlap them) */
    uint64_t pinned_live, pinned_live_bytes;
    uint64_t registered_live, registered_live_bytes;
    uint64_t streams_live, events_live;
    uint64_t serial; /* numbers objects for the leak report */
    struct vram_mock__obj *objs;
    struct vram_mock__deferred *deferred; /* NULL: plain mode */
    uint64_t dropped_waits; /* waits the fault switch (vram_mock_drop_waits) dropped */
    pthread_mutex_t lock;
} vram_mock;

/* ---- set-up ----------------------------------------------------------------------- */

/* Defaults: n devices (negative: 0) named "Mock H100", cc 9.0, 80 GiB total and
 * free, 132 SMs, 3 copy engines, compute mode default, every attribute yes, driver and
 * runtime 13000, no limits, no faults. Requires: m valid. Pair with vram_mock_fini. */
void vram_mock_init(vram_mock *m, int n_devices);

/* The table over this mock: api_version/size of this build, backend "mock", ctx = m, flags
 * VRAM_DEVICE_HOST_MEMORY in plain mode and 0 in deferred mode (what the mode is when this
 * is called). Behaviour beyond the slot contracts in device.h:
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
 *   - memcpy_async copies at once (plain mode); NULL is the default stream; 0 bytes always
 *     succeed; a device side must lie inside one live allocation and a host side must not
 *     touch device memory (else VRAM_E_INVALID); H2D/D2H from unpinned memory count in
 *     pageable_copies;
 *   - host_register fails with 801 (VRAM_E_NOT_SUPPORTED) when the calling thread's current
 *     device says host_register NO, with 712 over an already registered or pinned range;
 *   - compute mode PROHIBITED: set_device, dev_alloc, stream_create on it fail with 46;
 *   - event_query says done unless event_not_ready is set (or, deferred, the work before
 *     the event's record is not done);
 *   - contexts, as cudart (12 and later) takes them: set_device, and the slots that take a
 *     device (device_info, mem_info, dev_alloc, dev_free, stream_create), take that
 *     device's context; every other slot but the version queries, device_count, attribute,
 *     release_device and last_error takes the context of the calling thread's current
 *     device (a thread starts on device 0, as in cudart). Events belong to the device that
 *     is current when they are made; recording one on a stream of another device is
 *     VRAM_E_INVALID (400). Queuing work on a stream of another device than the calling
 *     thread's (copies, records, waits, the stand-ins below) counts in cross_device_calls;
 *   - release_device waits for the device's work (deferred), destroys its allocations,
 *     streams and events (what cudaDeviceReset does: they are not leaks, later use of them
 *     is VRAM_E_INVALID) and gives its context back. */
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

/* ---- deferred completion ------------------------------------------------------------
 * Turned on once, after vram_mock_init and before vram_mock_ops and any call. Then:
 *   - work queued on a stream (memcpy_async, event_record, stream_wait_event, and the
 *     stand-ins vram_mock_memset_async and vram_mock_gather) is done later by one worker
 *     thread, in the order of each stream; the worker takes the next piece of work of a
 *     stream chosen at random among those that can go on, after a random delay (both from
 *     `seed`, so a seed gives one kind of schedule; thread timing still varies it). A wait
 *     holds its stream until the event's record (as it was when the wait was queued) is
 *     done. Every stream, the default (NULL) one included, is independent of the others:
 *     only events order them (the non-blocking streams the CUDA backend makes);
 *   - device memory is two copies: the device's, which the work reads and writes, and the
 *     host's view of it, which is the pointer dev_alloc returned. Writes of the device reach
 *     the host's view only when the host waits for them: event_sync, or event_query saying
 *     done, on an event whose record is ordered after them (through its stream and the
 *     waits before it), stream_sync on such a stream, and the calls that wait for the whole
 *     device (dev_free, host_free_pinned, host_unregister, release_device, as cudart's do).
 *     So a host read of device memory that no wait covers sees stale bytes (fresh memory is
 *     garbage in both copies, different garbage), however long ago the work was done;
 *   - host memory is shared: H2D copies read it, D2H copies write it, when the worker does
 *     them (as a DMA engine would), so rewriting a copy's source before the copy is done
 *     changes what arrives;
 *   - a stream's device is checked as in plain mode; at most 63 streams are made in the
 *     mock's life (then stream_create fails with CUDA 2).
 * `max_delay_us` bounds one delay (0: none, only the reordering). Returns 0, or -1 when
 * already deferred, the worker cannot start, or a call was already made. */
int vram_mock_deferred(vram_mock *m, uint64_t seed, uint32_t max_delay_us);

/* Deferred: the worker does nothing while paused (work queues up; waits block). */
void vram_mock_pause(vram_mock *m, int paused);

/* Deferred: copies of this kind queued and not yet done, on every stream together. */
uint64_t vram_mock_queued_copies(vram_mock *m, vram_copy_kind kind);

/* The live streams in the order they were made (not the default stream): writes up to cap
 * handles, returns how many there are. */
int vram_mock_streams(vram_mock *m, vram_stream *out, int cap);

/* The fault switch (deferred): one kind of wait is dropped from now on, each dropped call
 * counted in dropped_waits; the call returns VRAM_OK as if it had waited.
 *   VRAM_MOCK_DROP_HOST_WAITS: event_sync returns at once and event_query says done for
 *     events recorded on `s`, and nothing reaches the host's view;
 *   VRAM_MOCK_DROP_STREAM_WAITS: stream_wait_event(s, ...) queues nothing;
 *   VRAM_MOCK_DROP_NONE: every wait is honoured again.
 * Returns 0, or -1 in plain mode or for a stream that is not live. */
typedef enum vram_mock_drop {
    VRAM_MOCK_DROP_NONE = 0,
    VRAM_MOCK_DROP_HOST_WAITS = 1,
    VRAM_MOCK_DROP_STREAM_WAITS = 2
} vram_mock_drop;
int vram_mock_drop_waits(vram_mock *m, vram_mock_drop kind, vram_stream s);

/* Kernel stand-ins: work on device memory queued on a stream of m, with the checks of
 * memcpy_async (the device ranges inside live allocations, a live stream); plain mode does
 * it at once. They are not ops of the table and are not counted in calls[]. */
vram_status vram_mock_memset_async(vram_mock *m, void *dst, int value, uint64_t bytes,
                                   vram_stream s);
/* The streamer's gather (driver/stream/stream.h, vram_gather_fn): dst[i] = src[index[i]], rows of
 * row_bytes, on `stream`, which must be a stream of a live mock (the mock is found by it:
 * the default stream is VRAM_E_INVALID here). index may be device or host memory; an index
 * >= src_rows sets *bad_index_flag (when not NULL) and copies nothing for that row. */
vram_status vram_mock_gather(void *dst, const void *src, uint64_t src_rows, const uint64_t *index,
                             uint64_t rows, uint64_t row_bytes, int *bad_index_flag, void *stream);

/* ---- reading the state (each takes the lock) ------------------------------------- */

typedef struct vram_mock_outstanding {
    uint64_t dev_allocs, dev_bytes; /* all devices together */
    uint64_t pinned, pinned_bytes;
    uint64_t registered, registered_bytes;
    uint64_t streams, events;
} vram_mock_outstanding;

vram_mock_outstanding vram_mock_live(vram_mock *m);
/* Devices whose context the process holds now. */
int vram_mock_contexts(vram_mock *m);
/* Live objects of every kind together: 0 means nothing leaked so far. */
uint64_t vram_mock_leaks(vram_mock *m);
uint64_t vram_mock_calls(vram_mock *m, vram_mock_op op);

#endif /* VRAMKIT_MOCK_DEVICE_H */
