/* test/mock/mock_device.c — the scriptable fake device behind vram_device_ops.
 * Every op takes the lock, counts itself, applies the script (sticky error, missing or old
 * driver, scripted fault), validates its arguments like cudart, then acts on real memory. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* pthreads under strict C11 */
#endif

#include "mock_device.h"

#include <stdlib.h>
#include <string.h>

#include <vramkit/cudaerr.h>

/* cudaError_t values the mock records for failures cudart would report itself. */
enum {
    MOCK_CUDA_INVALID_VALUE = 1,
    MOCK_CUDA_MEMORY_ALLOCATION = 2,
    MOCK_CUDA_INVALID_MEMCPY_DIRECTION = 21,
    MOCK_CUDA_INSUFFICIENT_DRIVER = 35,
    MOCK_CUDA_DEVICES_UNAVAILABLE = 46,
    MOCK_CUDA_NO_DEVICE = 100,
    MOCK_CUDA_INVALID_DEVICE = 101,
    MOCK_CUDA_INVALID_HANDLE = 400,
    MOCK_CUDA_HOST_ALREADY_REGISTERED = 712,
    MOCK_CUDA_HOST_NOT_REGISTERED = 713,
    MOCK_CUDA_NOT_SUPPORTED = 801
};

#define MOCK_DEV_ALIGN 256u    /* cudaMalloc's guaranteed alignment */
#define MOCK_PINNED_ALIGN 4096u /* cudaMallocHost hands out whole pages */
#define MOCK_POISON_MAX (64u << 20) /* fresh device memory up to this size is filled with
                                       garbage, as cudaMalloc does not zero it */

typedef enum mock_kind { OBJ_DEV, OBJ_PINNED, OBJ_REGISTERED, OBJ_STREAM, OBJ_EVENT } mock_kind;

static const char *const mock_kind_name[] = {"device allocation", "pinned allocation",
                                             "host registration", "stream", "event"};

/* Streams and events are these objects themselves: the handle is the object's address,
 * looked up in the list before any use, so a stale or foreign handle is never dereferenced. */
struct vram_mock__obj {
    struct vram_mock__obj *next;
    mock_kind kind;
    int device;
    void *ptr; /* memory (dev, pinned) or the registered range's start */
    uint64_t bytes;
    uint64_t serial;
    int recorded; /* events */
};
typedef struct vram_mock__obj mock_obj;

/* ---- names ----------------------------------------------------------------------- */

static const char *const mock_op_names[] = {
#define MOCK_OP_NAME(e, n) #n,
    VRAM_MOCK_OP_LIST(MOCK_OP_NAME)
#undef MOCK_OP_NAME
};

const char *vram_mock_op_name(vram_mock_op op) {
    if ((int)op < 0 || op >= VRAM_MOCK_OP_COUNT) return NULL;
    return mock_op_names[op];
}

int vram_mock_op_from_name(const char *name) {
    if (name == NULL) return -1;
    for (int i = 0; i < VRAM_MOCK_OP_COUNT; i++)
        if (strcmp(mock_op_names[i], name) == 0) return i;
    return -1;
}

/* ---- set-up ---------------------------------------------------------------------- */

static void mock_default_device(vram_mock_device *d, int ordinal) {
    memset(d, 0, sizeof *d);
    strcpy(d->info.name, "Mock H100");
    d->info.ordinal = ordinal;
    d->info.cc_major = 9;
    d->info.cc_minor = 0;
    d->info.total_bytes = 80ull << 30;
    d->info.free_bytes = 80ull << 30;
    d->info.multiprocessors = 132;
    d->info.copy_engines = 3;
    d->info.integrated = 0;
    d->info.compute_mode = VRAM_COMPUTE_DEFAULT;
    d->info.vmm = VRAM_YES;
    d->info.vmm_posix_fd = VRAM_YES;
    d->info.vmm_rdma = VRAM_YES;
    d->info.memory_pools = VRAM_YES;
    d->info.host_register = VRAM_YES;
    d->mempool_handle_types = 1;
    d->alloc_limit = UINT64_MAX;
}

void vram_mock_init(vram_mock *m, int n_devices) {
    memset(m, 0, sizeof *m);
    m->n_devices = n_devices < 0 ? 0 : n_devices;
    m->driver_version = 13000;
    m->runtime_version = 13000;
    for (int i = 0; i < VRAM_MAX_DEVICES; i++) mock_default_device(&m->dev[i], i);
    m->pinned_limit = UINT64_MAX;
    pthread_mutex_init(&m->lock, NULL);
}

uint64_t vram_mock_fini(vram_mock *m, FILE *log) {
    uint64_t leaks = 0;
    pthread_mutex_lock(&m->lock);
    mock_obj *o = m->objs;
    while (o != NULL) {
        mock_obj *next = o->next;
        leaks++;
        if (log != NULL)
            fprintf(log, "vram_mock: leaked %s #%llu (%llu bytes, device %d)\n",
                    mock_kind_name[o->kind], (unsigned long long)o->serial,
                    (unsigned long long)o->bytes, o->device);
        if (o->kind == OBJ_DEV || o->kind == OBJ_PINNED) free(o->ptr);
        free(o);
        o = next;
    }
    m->objs = NULL;
    pthread_mutex_unlock(&m->lock);
    pthread_mutex_destroy(&m->lock);
    return leaks;
}

/* ---- the script, applied on entry to every op ------------------------------------ */

static vram_status mock_fail(vram_mock *m, int code) {
    m->last_error = code;
    m->failed_calls++;
    return vram_status_from_cuda(code);
}

/* A bad argument the mock itself detects: cudart's code is recorded, the status says
 * the caller is at fault. */
static vram_status mock_bad_arg(vram_mock *m, int code) {
    m->last_error = code;
    m->failed_calls++;
    return VRAM_E_INVALID;
}

static int mock_is_version_op(vram_mock_op op) {
    return op == VRAM_MOCK_OP_DRIVER_VERSION || op == VRAM_MOCK_OP_RUNTIME_VERSION;
}

/* Counts the call and decides whether the script makes it fail, in the order a real stack
 * would: a corrupt context first, then a missing or too old driver, then scripted faults. */
static vram_status mock_enter(vram_mock *m, vram_mock_op op) {
    m->calls[op]++;
    m->total_calls++;
    if (!m->poisoned && m->sticky_at != 0 && m->total_calls >= m->sticky_at) {
        m->poisoned = 1;
        m->poison_code = m->sticky_code;
    }
    if (m->poisoned) return mock_fail(m, m->poison_code);
    if (!mock_is_version_op(op)) {
        if (m->driver_version == 0) {
            if (op == VRAM_MOCK_OP_DEVICE_COUNT) {
                (void)mock_fail(m, MOCK_CUDA_INSUFFICIENT_DRIVER);
                return VRAM_E_NO_DRIVER;
            }
            return mock_fail(m, MOCK_CUDA_INSUFFICIENT_DRIVER);
        }
        if (m->driver_version / 1000 < m->runtime_version / 1000)
            return mock_fail(m, MOCK_CUDA_INSUFFICIENT_DRIVER);
    }
    for (int i = 0; i < m->n_faults && i < VRAM_MOCK_MAX_FAULTS; i++) {
        vram_mock_fault *f = &m->faults[i];
        if (f->op != op) continue;
        int hit = f->repeat ? m->calls[op] >= f->at : (!f->fired && m->calls[op] == f->at);
        if (!hit) continue;
        f->fired = 1;
        if (vram_cuda_error_class(f->cuda_code) == VRAM_CUDA_STICKY) {
            m->poisoned = 1;
            m->poison_code = f->cuda_code;
        }
        return mock_fail(m, f->cuda_code);
    }
    return VRAM_OK;
}

#define MOCK_BEGIN(op)                           \
    vram_mock *m = (vram_mock *)ctx;             \
    pthread_mutex_lock(&m->lock);                \
    vram_status st = mock_enter(m, (op));        \
    if (st != VRAM_OK) goto done

#define MOCK_END          \
    done:                 \
    pthread_mutex_unlock(&m->lock); \
    return st

/* ---- object list ----------------------------------------------------------------- */

static mock_obj *mock_new_obj(vram_mock *m, mock_kind kind, int device, void *ptr,
                              uint64_t bytes) {
    mock_obj *o = (mock_obj *)calloc(1, sizeof *o);
    if (o == NULL) return NULL;
    o->kind = kind;
    o->device = device;
    o->ptr = ptr;
    o->bytes = bytes;
    o->serial = ++m->serial;
    o->next = m->objs;
    m->objs = o;
    return o;
}

static void mock_unlink(vram_mock *m, mock_obj *o) {
    for (mock_obj **p = &m->objs; *p != NULL; p = &(*p)->next) {
        if (*p == o) {
            *p = o->next;
            return;
        }
    }
}

/* The object of this kind whose handle (streams, events) or base pointer is `h`. */
static mock_obj *mock_find_handle(vram_mock *m, mock_kind kind, const void *h) {
    for (mock_obj *o = m->objs; o != NULL; o = o->next) {
        if (o->kind != kind) continue;
        if ((kind == OBJ_STREAM || kind == OBJ_EVENT) ? (const void *)o == h : o->ptr == h)
            return o;
    }
    return NULL;
}

/* The object of this kind holding all of [p, p + bytes), or NULL. */
static mock_obj *mock_find_range(vram_mock *m, mock_kind kind, const void *p, uint64_t bytes) {
    uintptr_t a = (uintptr_t)p;
    for (mock_obj *o = m->objs; o != NULL; o = o->next) {
        if (o->kind != kind) continue;
        uintptr_t b = (uintptr_t)o->ptr;
        if (a >= b && a - b <= o->bytes && bytes <= o->bytes - (a - b)) return o;
    }
    return NULL;
}

/* Does [p, p + bytes) touch any object of this kind? */
static int mock_overlaps(vram_mock *m, mock_kind kind, const void *p, uint64_t bytes) {
    uintptr_t a = (uintptr_t)p;
    for (mock_obj *o = m->objs; o != NULL; o = o->next) {
        if (o->kind != kind) continue;
        uintptr_t b = (uintptr_t)o->ptr;
        if (a < b + o->bytes && b < a + bytes) return 1;
    }
    return 0;
}

static int mock_valid_device(const vram_mock *m, int device) {
    return device >= 0 && device < m->n_devices && device < VRAM_MAX_DEVICES;
}

static uint64_t mock_free_now(const vram_mock_device *d) {
    return d->info.free_bytes > d->live_bytes ? d->info.free_bytes - d->live_bytes : 0;
}

/* ---- versions and inventory ------------------------------------------------------ */

static vram_status mock_driver_version(void *ctx, int *version) {
    MOCK_BEGIN(VRAM_MOCK_OP_DRIVER_VERSION);
    if (version == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    *version = m->driver_version;
    MOCK_END;
}

static vram_status mock_runtime_version(void *ctx, int *version) {
    MOCK_BEGIN(VRAM_MOCK_OP_RUNTIME_VERSION);
    if (version == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    *version = m->runtime_version;
    MOCK_END;
}

static vram_status mock_device_count(void *ctx, int *count) {
    MOCK_BEGIN(VRAM_MOCK_OP_DEVICE_COUNT);
    if (count == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    *count = m->n_devices;
    /* cudaGetDeviceCount says "no device" rather than 0 devices and success */
    if (m->n_devices == 0) st = mock_fail(m, MOCK_CUDA_NO_DEVICE);
    MOCK_END;
}

static vram_status mock_device_info(void *ctx, int device, vram_device_info *out) {
    MOCK_BEGIN(VRAM_MOCK_OP_DEVICE_INFO);
    if (out == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (!mock_valid_device(m, device)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_DEVICE);
        goto done;
    }
    *out = m->dev[device].info;
    out->name[VRAM_DEVICE_NAME_MAX - 1] = '\0';
    out->ordinal = device;
    out->free_bytes = mock_free_now(&m->dev[device]);
    MOCK_END;
}

static vram_status mock_mem_info(void *ctx, int device, uint64_t *free_bytes,
                                 uint64_t *total_bytes) {
    MOCK_BEGIN(VRAM_MOCK_OP_MEM_INFO);
    if (free_bytes == NULL || total_bytes == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (!mock_valid_device(m, device)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_DEVICE);
        goto done;
    }
    {
        vram_mock_device *d = &m->dev[device];
        if (d->free_script_next < d->free_script_n)
            d->info.free_bytes = d->free_script[d->free_script_next++];
    }
    *free_bytes = mock_free_now(&m->dev[device]);
    *total_bytes = m->dev[device].info.total_bytes;
    MOCK_END;
}

/* The tristate field behind a known attribute number, or NULL. */
static vram_tristate *mock_attr_field(vram_device_info *info, int attr) {
    switch (attr) {
    case VRAM_ATTR_HOST_REGISTER_SUPPORTED: return &info->host_register;
    case VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return &info->vmm;
    case VRAM_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED: return &info->vmm_posix_fd;
    case VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED: return &info->vmm_rdma;
    case VRAM_ATTR_MEMORY_POOLS_SUPPORTED: return &info->memory_pools;
    default: return NULL;
    }
}

static vram_status mock_attribute(void *ctx, int device, int attr, int *value) {
    MOCK_BEGIN(VRAM_MOCK_OP_ATTRIBUTE);
    if (value == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (!mock_valid_device(m, device)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_DEVICE);
        goto done;
    }
    vram_mock_device *d = &m->dev[device];
    vram_tristate *t = mock_attr_field(&d->info, attr);
    if (t != NULL) {
        if (*t == VRAM_UNKNOWN) {
            st = mock_fail(m, MOCK_CUDA_INVALID_VALUE);
            goto done;
        }
        *value = *t == VRAM_YES ? 1 : 0;
        goto done;
    }
    if (attr == VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES) {
        *value = d->mempool_handle_types;
        goto done;
    }
    for (int i = 0; i < d->n_extra_attrs && i < VRAM_MOCK_MAX_EXTRA_ATTRS; i++) {
        if (d->extra_attrs[i].attr == attr) {
            *value = d->extra_attrs[i].value;
            goto done;
        }
    }
    st = mock_fail(m, MOCK_CUDA_INVALID_VALUE); /* an attribute this "driver" does not know */
    MOCK_END;
}

/* ---- memory ---------------------------------------------------------------------- */

/* Operations that need a context on the device fail under compute mode "prohibited". */
static int mock_prohibited(const vram_mock *m, int device) {
    return m->dev[device].info.compute_mode == VRAM_COMPUTE_PROHIBITED;
}

static vram_status mock_set_device(void *ctx, int device) {
    MOCK_BEGIN(VRAM_MOCK_OP_SET_DEVICE);
    if (!mock_valid_device(m, device)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_DEVICE);
        goto done;
    }
    if (mock_prohibited(m, device)) {
        st = mock_fail(m, MOCK_CUDA_DEVICES_UNAVAILABLE);
        goto done;
    }
    m->current_device = device;
    MOCK_END;
}

/* Rounds up to `align` (a power of two); 0 when that overflows. */
static size_t mock_round_up(uint64_t bytes, size_t align) {
    if (bytes > (uint64_t)(SIZE_MAX - (align - 1))) return 0;
    return ((size_t)bytes + (align - 1)) & ~(align - 1);
}

static vram_status mock_dev_alloc(void *ctx, int device, uint64_t bytes, void **ptr) {
    if (ptr != NULL) *ptr = NULL; /* a failed call, scripted or not, leaves NULL */
    MOCK_BEGIN(VRAM_MOCK_OP_DEV_ALLOC);
    if (ptr == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (!mock_valid_device(m, device)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_DEVICE);
        goto done;
    }
    if (mock_prohibited(m, device)) {
        st = mock_fail(m, MOCK_CUDA_DEVICES_UNAVAILABLE);
        goto done;
    }
    if (bytes == 0) goto done; /* cudaMalloc(0) succeeds with a NULL pointer */
    vram_mock_device *d = &m->dev[device];
    uint64_t limit = vram__min_u64(d->alloc_limit, d->info.free_bytes), after;
    if (vram__add_u64(d->live_bytes, bytes, &after) != VRAM_OK || after > limit) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    size_t rounded = mock_round_up(bytes, MOCK_DEV_ALIGN);
    void *p = rounded ? aligned_alloc(MOCK_DEV_ALIGN, rounded) : NULL;
    mock_obj *o = p ? mock_new_obj(m, OBJ_DEV, device, p, bytes) : NULL;
    if (o == NULL) { /* the host could not back it: the device is "out of memory" */
        free(p);
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    if (bytes <= MOCK_POISON_MAX) memset(p, 0xA5, (size_t)bytes);
    d->live_bytes = after;
    d->live_allocs++;
    d->allocs_total++;
    if (after > d->peak_bytes) d->peak_bytes = after;
    *ptr = p;
    MOCK_END;
}

static vram_status mock_dev_free(void *ctx, int device, void *ptr) {
    MOCK_BEGIN(VRAM_MOCK_OP_DEV_FREE);
    if (ptr == NULL) goto done; /* cudaFree(NULL) is a no-op */
    mock_obj *o = mock_find_handle(m, OBJ_DEV, ptr);
    /* stricter than CUDA: freeing through the wrong ordinal is a caller bug worth catching */
    if (o == NULL || o->device != device) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    vram_mock_device *d = &m->dev[o->device];
    d->live_bytes -= o->bytes;
    d->live_allocs--;
    d->frees_total++;
    mock_unlink(m, o);
    free(o->ptr);
    free(o);
    MOCK_END;
}

static vram_status mock_host_alloc_pinned(void *ctx, uint64_t bytes, void **ptr) {
    if (ptr != NULL) *ptr = NULL; /* a failed call, scripted or not, leaves NULL */
    MOCK_BEGIN(VRAM_MOCK_OP_HOST_ALLOC_PINNED);
    if (ptr == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (bytes == 0) goto done;
    uint64_t after;
    if (vram__add_u64(m->pinned_live_bytes, bytes, &after) != VRAM_OK || after > m->pinned_limit) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    size_t rounded = mock_round_up(bytes, MOCK_PINNED_ALIGN);
    void *p = rounded ? aligned_alloc(MOCK_PINNED_ALIGN, rounded) : NULL;
    mock_obj *o = p ? mock_new_obj(m, OBJ_PINNED, -1, p, bytes) : NULL;
    if (o == NULL) {
        free(p);
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    m->pinned_live++;
    m->pinned_live_bytes = after;
    *ptr = p;
    MOCK_END;
}

static vram_status mock_host_free_pinned(void *ctx, void *ptr) {
    MOCK_BEGIN(VRAM_MOCK_OP_HOST_FREE_PINNED);
    if (ptr == NULL) goto done;
    mock_obj *o = mock_find_handle(m, OBJ_PINNED, ptr);
    if (o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    m->pinned_live--;
    m->pinned_live_bytes -= o->bytes;
    mock_unlink(m, o);
    free(o->ptr);
    free(o);
    MOCK_END;
}

static vram_status mock_host_register(void *ctx, void *ptr, uint64_t bytes) {
    MOCK_BEGIN(VRAM_MOCK_OP_HOST_REGISTER);
    if (ptr == NULL || bytes == 0 || bytes > UINTPTR_MAX - (uintptr_t)ptr) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    /* the attribute predicts the call, as on a real device */
    if (mock_valid_device(m, m->current_device) &&
        m->dev[m->current_device].info.host_register == VRAM_NO) {
        st = mock_fail(m, MOCK_CUDA_NOT_SUPPORTED);
        goto done;
    }
    if (mock_overlaps(m, OBJ_REGISTERED, ptr, bytes) || mock_overlaps(m, OBJ_PINNED, ptr, bytes)) {
        st = mock_bad_arg(m, MOCK_CUDA_HOST_ALREADY_REGISTERED);
        goto done;
    }
    if (mock_overlaps(m, OBJ_DEV, ptr, bytes)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (mock_new_obj(m, OBJ_REGISTERED, -1, ptr, bytes) == NULL) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    m->registered_live++;
    m->registered_live_bytes += bytes;
    MOCK_END;
}

static vram_status mock_host_unregister(void *ctx, void *ptr) {
    MOCK_BEGIN(VRAM_MOCK_OP_HOST_UNREGISTER);
    mock_obj *o = ptr ? mock_find_handle(m, OBJ_REGISTERED, ptr) : NULL;
    if (o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_HOST_NOT_REGISTERED);
        goto done;
    }
    m->registered_live--;
    m->registered_live_bytes -= o->bytes;
    mock_unlink(m, o);
    free(o);
    MOCK_END;
}

/* ---- streams, copies, events ----------------------------------------------------- */

/* NULL is the default stream; anything else must be a live stream of this mock. */
static int mock_stream_ok(vram_mock *m, vram_stream s) {
    return s == NULL || mock_find_handle(m, OBJ_STREAM, s) != NULL;
}

static vram_status mock_stream_create(void *ctx, int device, vram_stream *out) {
    if (out != NULL) *out = NULL; /* a failed call, scripted or not, leaves NULL */
    MOCK_BEGIN(VRAM_MOCK_OP_STREAM_CREATE);
    if (out == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (!mock_valid_device(m, device)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_DEVICE);
        goto done;
    }
    if (mock_prohibited(m, device)) {
        st = mock_fail(m, MOCK_CUDA_DEVICES_UNAVAILABLE);
        goto done;
    }
    mock_obj *o = mock_new_obj(m, OBJ_STREAM, device, NULL, 0);
    if (o == NULL) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    m->streams_live++;
    *out = (vram_stream)o;
    MOCK_END;
}

static vram_status mock_stream_destroy(void *ctx, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_STREAM_DESTROY);
    mock_obj *o = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL; /* the default stream
                                                                    cannot be destroyed */
    if (o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    m->streams_live--;
    mock_unlink(m, o);
    free(o);
    MOCK_END;
}

static vram_status mock_stream_sync(void *ctx, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_STREAM_SYNC);
    if (!mock_stream_ok(m, s)) st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
    MOCK_END;
}

/* Checks one side of a copy: a device side must lie inside one live device allocation; a
 * host side must not touch device memory (that is a swapped or wrong kind). */
static int mock_side_ok(vram_mock *m, const void *p, uint64_t bytes, int device_side) {
    if (device_side) return mock_find_range(m, OBJ_DEV, p, bytes) != NULL;
    return !mock_overlaps(m, OBJ_DEV, p, bytes);
}

static int mock_is_pinned(vram_mock *m, const void *p, uint64_t bytes) {
    return mock_find_range(m, OBJ_PINNED, p, bytes) != NULL ||
           mock_find_range(m, OBJ_REGISTERED, p, bytes) != NULL;
}

static vram_status mock_memcpy_async(void *ctx, void *dst, const void *src, uint64_t bytes,
                                     vram_copy_kind kind, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_MEMCPY_ASYNC);
    if (kind < VRAM_COPY_H2D || kind > VRAM_COPY_H2H) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_MEMCPY_DIRECTION);
        goto done;
    }
    if (!mock_stream_ok(m, s)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    if (bytes == 0) { /* a zero-byte copy is valid whatever the pointers */
        m->copies[kind]++;
        goto done;
    }
    int dst_dev = kind == VRAM_COPY_H2D || kind == VRAM_COPY_D2D;
    int src_dev = kind == VRAM_COPY_D2H || kind == VRAM_COPY_D2D;
    if (dst == NULL || src == NULL || bytes > SIZE_MAX ||
        bytes > UINTPTR_MAX - (uintptr_t)dst || bytes > UINTPTR_MAX - (uintptr_t)src ||
        !mock_side_ok(m, dst, bytes, dst_dev) || !mock_side_ok(m, src, bytes, src_dev)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if ((kind == VRAM_COPY_H2D && !mock_is_pinned(m, src, bytes)) ||
        (kind == VRAM_COPY_D2H && !mock_is_pinned(m, dst, bytes)))
        m->pageable_copies++;
    memmove(dst, src, (size_t)bytes); /* synchronous: the copy is done when the call returns */
    m->copies[kind]++;
    m->bytes_copied[kind] += bytes;
    MOCK_END;
}

static vram_status mock_event_create(void *ctx, vram_event *out) {
    if (out != NULL) *out = NULL; /* a failed call, scripted or not, leaves NULL */
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_CREATE);
    if (out == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    mock_obj *o = mock_new_obj(m, OBJ_EVENT, m->current_device, NULL, 0);
    if (o == NULL) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    m->events_live++;
    *out = (vram_event)o;
    MOCK_END;
}

static vram_status mock_event_destroy(void *ctx, vram_event e) {
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_DESTROY);
    mock_obj *o = e ? mock_find_handle(m, OBJ_EVENT, e) : NULL;
    if (o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    m->events_live--;
    mock_unlink(m, o);
    free(o);
    MOCK_END;
}

static vram_status mock_event_record(void *ctx, vram_event e, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_RECORD);
    mock_obj *o = e ? mock_find_handle(m, OBJ_EVENT, e) : NULL;
    if (o == NULL || !mock_stream_ok(m, s)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    o->recorded = 1;
    MOCK_END;
}

static vram_status mock_event_query(void *ctx, vram_event e) {
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_QUERY);
    if (e == NULL || mock_find_handle(m, OBJ_EVENT, e) == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    /* "not ready" is an answer, not a failure: last_error is left alone */
    if (m->event_not_ready > 0) {
        m->event_not_ready--;
        st = VRAM_E_NOT_READY;
    }
    MOCK_END;
}

static vram_status mock_event_sync(void *ctx, vram_event e) {
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_SYNC);
    if (e == NULL || mock_find_handle(m, OBJ_EVENT, e) == NULL)
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
    MOCK_END;
}

static vram_status mock_stream_wait_event(void *ctx, vram_stream s, vram_event e) {
    MOCK_BEGIN(VRAM_MOCK_OP_STREAM_WAIT_EVENT);
    if (!mock_stream_ok(m, s) || e == NULL || mock_find_handle(m, OBJ_EVENT, e) == NULL)
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
    MOCK_END;
}

/* Not part of the call clock and never fails: it is how a test (or the driver) reads
 * what went wrong, including after a sticky error. */
static int mock_last_error(void *ctx) {
    vram_mock *m = (vram_mock *)ctx;
    pthread_mutex_lock(&m->lock);
    m->calls[VRAM_MOCK_OP_LAST_ERROR]++;
    int e = m->last_error;
    pthread_mutex_unlock(&m->lock);
    return e;
}

vram_device_ops vram_mock_ops(vram_mock *m) {
    vram_device_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.api_version = VRAM_DEVICE_API_VERSION;
    ops.size = (uint32_t)sizeof(vram_device_ops);
    ops.backend = "mock";
    ops.ctx = m;
    ops.driver_version = mock_driver_version;
    ops.runtime_version = mock_runtime_version;
    ops.device_count = mock_device_count;
    ops.device_info = mock_device_info;
    ops.mem_info = mock_mem_info;
    ops.attribute = mock_attribute;
    ops.set_device = mock_set_device;
    ops.dev_alloc = mock_dev_alloc;
    ops.dev_free = mock_dev_free;
    ops.host_alloc_pinned = mock_host_alloc_pinned;
    ops.host_free_pinned = mock_host_free_pinned;
    ops.host_register = mock_host_register;
    ops.host_unregister = mock_host_unregister;
    ops.stream_create = mock_stream_create;
    ops.stream_destroy = mock_stream_destroy;
    ops.stream_sync = mock_stream_sync;
    ops.memcpy_async = mock_memcpy_async;
    ops.event_create = mock_event_create;
    ops.event_destroy = mock_event_destroy;
    ops.event_record = mock_event_record;
    ops.event_query = mock_event_query;
    ops.event_sync = mock_event_sync;
    ops.stream_wait_event = mock_stream_wait_event;
    ops.last_error = mock_last_error;
    return ops;
}

/* ---- scripting helpers ----------------------------------------------------------- */

void vram_mock_set_name(vram_mock *m, int dev, const char *name) {
    if (dev < 0 || dev >= VRAM_MAX_DEVICES || name == NULL) return;
    pthread_mutex_lock(&m->lock);
    vram_device_info *i = &m->dev[dev].info;
    size_t n = strlen(name);
    if (n > VRAM_DEVICE_NAME_MAX - 1) n = VRAM_DEVICE_NAME_MAX - 1;
    memcpy(i->name, name, n);
    i->name[n] = '\0';
    pthread_mutex_unlock(&m->lock);
}

void vram_mock_set_memory(vram_mock *m, int dev, uint64_t total_bytes, uint64_t free_bytes) {
    if (dev < 0 || dev >= VRAM_MAX_DEVICES) return;
    pthread_mutex_lock(&m->lock);
    m->dev[dev].info.total_bytes = total_bytes;
    m->dev[dev].info.free_bytes = free_bytes;
    pthread_mutex_unlock(&m->lock);
}

int vram_mock_script_free(vram_mock *m, int dev, const uint64_t *values, int n) {
    if (dev < 0 || dev >= VRAM_MAX_DEVICES || n < 0 || n > VRAM_MOCK_MAX_FREE_SCRIPT ||
        (n > 0 && values == NULL))
        return -1;
    pthread_mutex_lock(&m->lock);
    vram_mock_device *d = &m->dev[dev];
    for (int i = 0; i < n; i++) d->free_script[i] = values[i];
    d->free_script_n = n;
    d->free_script_next = 0;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

void vram_mock_set_attr(vram_mock *m, int dev, int attr, int value) {
    if (dev < 0 || dev >= VRAM_MAX_DEVICES) return;
    pthread_mutex_lock(&m->lock);
    vram_mock_device *d = &m->dev[dev];
    vram_tristate *t = mock_attr_field(&d->info, attr);
    if (t != NULL) {
        *t = value ? VRAM_YES : VRAM_NO;
    } else if (attr == VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES) {
        d->mempool_handle_types = value;
    } else {
        int i = 0;
        while (i < d->n_extra_attrs && d->extra_attrs[i].attr != attr) i++;
        if (i < VRAM_MOCK_MAX_EXTRA_ATTRS) {
            d->extra_attrs[i].attr = attr;
            d->extra_attrs[i].value = value;
            if (i == d->n_extra_attrs) d->n_extra_attrs++;
        }
    }
    pthread_mutex_unlock(&m->lock);
}

void vram_mock_attr_unknown(vram_mock *m, int dev, int attr) {
    if (dev < 0 || dev >= VRAM_MAX_DEVICES) return;
    pthread_mutex_lock(&m->lock);
    vram_mock_device *d = &m->dev[dev];
    vram_tristate *t = mock_attr_field(&d->info, attr);
    if (t != NULL) {
        *t = VRAM_UNKNOWN;
    } else {
        /* drop it from the extra table; 119 cannot be made unknown this way (it is a
         * mask, not a tristate): script a fault on the attribute op instead */
        for (int i = 0; i < d->n_extra_attrs; i++) {
            if (d->extra_attrs[i].attr == attr) {
                d->extra_attrs[i] = d->extra_attrs[d->n_extra_attrs - 1];
                d->n_extra_attrs--;
                break;
            }
        }
    }
    pthread_mutex_unlock(&m->lock);
}

void vram_mock_alloc_limit(vram_mock *m, int dev, uint64_t bytes) {
    if (dev < 0 || dev >= VRAM_MAX_DEVICES) return;
    pthread_mutex_lock(&m->lock);
    m->dev[dev].alloc_limit = bytes;
    pthread_mutex_unlock(&m->lock);
}

static int mock_add_fault(vram_mock *m, vram_mock_op op, uint64_t nth, int cuda_code,
                          int repeat) {
    /* last_error cannot fail; a success code is no fault */
    if ((int)op < 0 || op >= VRAM_MOCK_OP_LAST_ERROR || nth == 0 || cuda_code == 0) return -1;
    pthread_mutex_lock(&m->lock);
    int rc = -1;
    if (m->n_faults >= 0 && m->n_faults < VRAM_MOCK_MAX_FAULTS) {
        vram_mock_fault *f = &m->faults[m->n_faults++];
        f->op = op;
        f->at = m->calls[op] + nth;
        f->cuda_code = cuda_code;
        f->repeat = repeat;
        f->fired = 0;
        rc = 0;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int vram_mock_fail_nth(vram_mock *m, vram_mock_op op, uint64_t nth, int cuda_code) {
    return mock_add_fault(m, op, nth, cuda_code, 0);
}

int vram_mock_fail_from(vram_mock *m, vram_mock_op op, uint64_t nth, int cuda_code) {
    return mock_add_fault(m, op, nth, cuda_code, 1);
}

void vram_mock_sticky_from(vram_mock *m, uint64_t nth_call, int cuda_code) {
    pthread_mutex_lock(&m->lock);
    m->sticky_at = nth_call == 0 ? 0 : m->total_calls + nth_call;
    m->sticky_code = cuda_code;
    pthread_mutex_unlock(&m->lock);
}

void vram_mock_no_driver(vram_mock *m) {
    pthread_mutex_lock(&m->lock);
    m->driver_version = 0;
    pthread_mutex_unlock(&m->lock);
}

void vram_mock_driver_older(vram_mock *m, int drv, int rt) {
    pthread_mutex_lock(&m->lock);
    m->driver_version = drv;
    m->runtime_version = rt;
    pthread_mutex_unlock(&m->lock);
}

/* ---- reading the state ----------------------------------------------------------- */

vram_mock_outstanding vram_mock_live(vram_mock *m) {
    vram_mock_outstanding r;
    memset(&r, 0, sizeof r);
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < VRAM_MAX_DEVICES; i++) {
        r.dev_allocs += m->dev[i].live_allocs;
        r.dev_bytes += m->dev[i].live_bytes;
    }
    r.pinned = m->pinned_live;
    r.pinned_bytes = m->pinned_live_bytes;
    r.registered = m->registered_live;
    r.registered_bytes = m->registered_live_bytes;
    r.streams = m->streams_live;
    r.events = m->events_live;
    pthread_mutex_unlock(&m->lock);
    return r;
}

uint64_t vram_mock_leaks(vram_mock *m) {
    vram_mock_outstanding r = vram_mock_live(m);
    return r.dev_allocs + r.pinned + r.registered + r.streams + r.events;
}

uint64_t vram_mock_calls(vram_mock *m, vram_mock_op op) {
    if ((int)op < 0 || op >= VRAM_MOCK_OP_COUNT) return 0;
    pthread_mutex_lock(&m->lock);
    uint64_t n = m->calls[op];
    pthread_mutex_unlock(&m->lock);
    return n;
}
