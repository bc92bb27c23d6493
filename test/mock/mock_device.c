/* test/mock/mock_device.c — the scriptable fake device behind vram_device_ops.
 * Every op takes the lock, counts itself, applies the script (sticky error, missing or old
 * driver, scripted fault), validates its arguments like cudart, then acts on real memory:
 * at once (plain mode) or through per-stream queues a worker thread drains (deferred). */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* pthreads under strict C11 */
#endif

#include "mock_device.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <vramkit/cudaerr.h>
#include <vramkit/rng.h>

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

#define MOCK_MAX_QUEUES 64 /* deferred: the default stream's queue and 63 made ones */

/* Streams and events are these objects themselves: the handle is the object's address,
 * looked up in the list before any use, so a stale or foreign handle is never dereferenced. */
struct vram_mock__obj {
    struct vram_mock__obj *next;
    mock_kind kind;
    int device;
    void *ptr; /* memory (dev, pinned) or the registered range's start */
    uint64_t bytes;
    uint64_t serial;
    int recorded;    /* events */
    uint8_t *shadow; /* deferred device memory: the device's copy (ptr is the host's view) */
    int q;           /* deferred streams: their queue */
    int rec_q;       /* deferred events: the queue and place of the last record, and what */
    uint64_t rec_seq; /* was ordered before it (a clock: per queue, the last place covered) */
    uint64_t *clock;
};
typedef struct vram_mock__obj mock_obj;

/* ---- deferred state ------------------------------------------------------------------
 * Each stream has a queue of work; each piece has a place (seq, from 1) in its queue. A
 * queue's clock says, per queue, the last place ordered before the next piece queued here
 * (its own last piece, and through waits, other queues' pieces). A record copies the clock
 * into the event; the host's wait on it publishes the device writes the clock covers. */
typedef enum dwork_kind { DW_COPY, DW_MEMSET, DW_GATHER, DW_RECORD, DW_WAIT } dwork_kind;

typedef struct dwork {
    struct dwork *next;
    dwork_kind kind;
    uint64_t seq;
    vram_copy_kind copy_kind;
    uint8_t *dst;       /* where the bytes go: a device copy or host memory */
    uint8_t *dst_view;  /* the host's view of dst when it is device memory, else NULL */
    const uint8_t *src; /* a device copy or host memory */
    uint64_t bytes;     /* bytes written at dst */
    int value;          /* memset */
    uint64_t src_rows, rows, row_bytes; /* gather */
    const uint64_t *index;
    int *flag;
    int wait_q; /* wait: queue and place it waits for */
    uint64_t wait_seq;
} dwork;

typedef struct dqueue {
    dwork *head, *tail;
    uint64_t queued, done; /* places: the last queued, the last done */
    uint64_t clock[MOCK_MAX_QUEUES];
    int used;
    mock_obj *stream; /* NULL for the default stream and for destroyed streams */
} dqueue;

/* A device write done by the worker that the host's view does not have yet: the bytes as
 * the write left them (later writes to the device copy must not leak into the view). */
typedef struct dwrite {
    struct dwrite *next;
    int q;
    uint64_t seq;
    uint8_t *view;
    uint8_t *bytes;
    uint64_t n;
} dwrite;

struct vram_mock__deferred {
    pthread_t worker;
    int stop, paused;
    pthread_cond_t work_cv; /* work queued, unpaused, stop */
    pthread_cond_t done_cv; /* a piece of work is done */
    vram_rng rng;
    uint32_t max_delay_us;
    dqueue q[MOCK_MAX_QUEUES];
    int nq;
    dwrite *writes, *writes_tail; /* in the order they were done */
    uint64_t queued_copies[5];
    vram_mock_drop drop;
    int drop_q;
};

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

/* Live mocks, so that vram_mock_gather (which gets a stream, not a mock) finds its own. */
#define MOCK_REGISTRY_MAX 64
static pthread_mutex_t mock_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static vram_mock *mock_registry[MOCK_REGISTRY_MAX];

static void mock_register(vram_mock *m, int on) {
    pthread_mutex_lock(&mock_registry_lock);
    for (int i = 0; i < MOCK_REGISTRY_MAX; i++) {
        if (on && mock_registry[i] == NULL) {
            mock_registry[i] = m;
            break;
        }
        if (!on && mock_registry[i] == m) {
            mock_registry[i] = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&mock_registry_lock);
}

void vram_mock_init(vram_mock *m, int n_devices) {
    memset(m, 0, sizeof *m);
    m->n_devices = n_devices < 0 ? 0 : n_devices;
    m->driver_version = 13000;
    m->runtime_version = 13000;
    for (int i = 0; i < VRAM_MAX_DEVICES; i++) mock_default_device(&m->dev[i], i);
    m->pinned_limit = UINT64_MAX;
    pthread_mutex_init(&m->lock, NULL);
    mock_register(m, 1);
}

static void mock_free_obj(mock_obj *o) {
    if (o->kind == OBJ_DEV || o->kind == OBJ_PINNED) free(o->ptr);
    free(o->shadow);
    free(o->clock);
    free(o);
}

static void mock_deferred_stop(vram_mock *m);

uint64_t vram_mock_fini(vram_mock *m, FILE *log) {
    uint64_t leaks = 0;
    mock_register(m, 0);
    mock_deferred_stop(m); /* no work runs on memory freed below */
    pthread_mutex_lock(&m->lock);
    mock_obj *o = m->objs;
    while (o != NULL) {
        mock_obj *next = o->next;
        leaks++;
        if (log != NULL)
            fprintf(log, "vram_mock: leaked %s #%llu (%llu bytes, device %d)\n",
                    mock_kind_name[o->kind], (unsigned long long)o->serial,
                    (unsigned long long)o->bytes, o->device);
        mock_free_obj(o);
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

/* ---- threads, devices, contexts --------------------------------------------------- */

/* The calling thread's current device: 0 until it selects one, as in cudart. */
static int mock_thread_device(const vram_mock *m) {
    pthread_t self = pthread_self();
    for (int i = 0; i < m->n_thread_device; i++)
        if (pthread_equal(m->thread_device[i].thread, self)) return m->thread_device[i].device;
    return 0;
}

static void mock_set_thread_device(vram_mock *m, int device) {
    pthread_t self = pthread_self();
    int i = 0;
    while (i < m->n_thread_device && !pthread_equal(m->thread_device[i].thread, self)) i++;
    if (i == m->n_thread_device) {
        if (i == VRAM_MOCK_MAX_THREADS)
            i = VRAM_MOCK_MAX_THREADS - 1; /* table full: the last thread's place is reused */
        else
            m->n_thread_device++;
        m->thread_device[i].thread = self;
    }
    m->thread_device[i].device = device;
}

/* The process now holds a context on `device` (a call that needs one was made there). */
static void mock_take_context(vram_mock *m, int device) {
    if (device < 0 || device >= m->n_devices || device >= VRAM_MAX_DEVICES) return;
    if (m->dev[device].info.compute_mode == VRAM_COMPUTE_PROHIBITED) return; /* none can be */
    if (!m->dev[device].context) {
        m->dev[device].context = 1;
        m->dev[device].contexts_made++;
    }
}

/* A call that works in the calling thread's current context. */
static void mock_thread_context(vram_mock *m) { mock_take_context(m, mock_thread_device(m)); }

/* The device a stream belongs to: NULL is the calling thread's default stream. */
static int mock_stream_device(const vram_mock *m, const mock_obj *stream) {
    return stream != NULL ? stream->device : mock_thread_device(m);
}

/* Work queued on `device`'s stream from a thread whose current device is another. */
static void mock_note_device(vram_mock *m, int device) {
    if (device != mock_thread_device(m)) m->cross_device_calls++;
}

/* ---- deferred: queues, the worker, what the host sees ---------------------------- */

static int mock_queue_of(const mock_obj *stream) { return stream != NULL ? stream->q : 0; }

/* Queues a piece of work on queue qi (caller holds the lock and fills it in before letting
 * go). NULL when the host is out of memory. */
static dwork *mock_push(vram_mock *m, int qi, dwork_kind kind) {
    struct vram_mock__deferred *D = m->deferred;
    dqueue *q = &D->q[qi];
    dwork *w = (dwork *)calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    w->kind = kind;
    w->seq = ++q->queued;
    q->clock[qi] = w->seq;
    if (q->tail != NULL)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
    pthread_cond_signal(&D->work_cv);
    return w;
}

/* The device's copy of [p, p + bytes), inside a live allocation (checked by the caller). */
static uint8_t *mock_device_copy(vram_mock *m, const void *p, uint64_t bytes) {
    mock_obj *o = mock_find_range(m, OBJ_DEV, p, bytes);
    return o != NULL ? o->shadow + ((uintptr_t)p - (uintptr_t)o->ptr) : NULL;
}

/* Hands the host the device writes that `clock` covers (all of them for NULL), oldest
 * first, so the view ends as the device's copy was after the last of them. */
static void mock_publish(vram_mock *m, const uint64_t *clock) {
    struct vram_mock__deferred *D = m->deferred;
    dwrite **pp = &D->writes, *last = NULL;
    while (*pp != NULL) {
        dwrite *w = *pp;
        if (clock == NULL || w->seq <= clock[w->q]) {
            memcpy(w->view, w->bytes, (size_t)w->n);
            *pp = w->next;
            free(w->bytes);
            free(w);
        } else {
            last = w;
            pp = &w->next;
        }
    }
    D->writes_tail = last;
}

/* Waits until every queue is empty, then hands the host everything: what cudart's calls
 * that synchronise the device do. Nothing in plain mode. Caller holds the lock. */
static void mock_idle(vram_mock *m) {
    struct vram_mock__deferred *D = m->deferred;
    if (D == NULL) return;
    for (;;) {
        int busy = 0;
        for (int i = 0; i < D->nq; i++) busy |= D->q[i].head != NULL;
        if (!busy) break;
        pthread_cond_wait(&D->done_cv, &m->lock);
    }
    mock_publish(m, NULL);
}

/* The delay before the next piece of work: often none, sometimes a yield, sometimes a
 * sleep of up to max_delay_us (the timer slack of the worker is 1 ns, so it is short). */
static void mock_delay(const struct vram_mock__deferred *D, uint64_t r) {
    uint64_t p = r % 100u;
    if (D->max_delay_us == 0 || p < 40u) return;
    if (p < 70u) {
        sched_yield();
        return;
    }
    uint64_t us = 1u + (r >> 16) % D->max_delay_us;
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    nanosleep(&ts, NULL);
}

/* Does one piece of work, outside the lock: only the worker touches its memory now. */
static void mock_do(dwork *w) {
    switch (w->kind) {
    case DW_COPY: memmove(w->dst, w->src, (size_t)w->bytes); break;
    case DW_MEMSET: memset(w->dst, w->value, (size_t)w->bytes); break;
    case DW_GATHER:
        for (uint64_t i = 0; i < w->rows; i++) {
            uint64_t r = w->index[i];
            if (r >= w->src_rows) {
                if (w->flag != NULL) *w->flag = 1;
                continue;
            }
            memcpy(w->dst + i * w->row_bytes, w->src + r * w->row_bytes, (size_t)w->row_bytes);
        }
        break;
    case DW_RECORD:
    case DW_WAIT: break;
    }
}

static void *mock_worker(void *arg) {
    vram_mock *m = (vram_mock *)arg;
    struct vram_mock__deferred *D = m->deferred;
#ifdef __linux__
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
    pthread_mutex_lock(&m->lock);
    while (!D->stop) {
        int ready[MOCK_MAX_QUEUES], n = 0;
        for (int i = 0; i < D->nq && !D->paused; i++) {
            const dwork *w = D->q[i].head;
            if (w == NULL) continue;
            if (w->kind == DW_WAIT && D->q[w->wait_q].done < w->wait_seq) continue;
            ready[n++] = i;
        }
        if (n == 0) {
            pthread_cond_wait(&D->work_cv, &m->lock);
            continue;
        }
        uint64_t r = vram_rng_next(&D->rng);
        int qi = ready[r % (uint64_t)n];
        dwork *w = D->q[qi].head; /* stays queued (and its stream busy) until it is done */
        pthread_mutex_unlock(&m->lock);
        mock_delay(D, vram_rng_mix(r));
        mock_do(w);
        dwrite *x = NULL; /* what the host will see of it, taken before any later work */
        if (w->dst_view != NULL && w->bytes > 0 && (x = (dwrite *)calloc(1, sizeof *x)) != NULL) {
            x->bytes = (uint8_t *)malloc((size_t)w->bytes);
            if (x->bytes != NULL) {
                memcpy(x->bytes, w->dst, (size_t)w->bytes);
            } else {
                free(x);
                x = NULL;
            }
        }
        pthread_mutex_lock(&m->lock);
        dqueue *q = &D->q[qi];
        q->head = w->next;
        if (q->head == NULL) q->tail = NULL;
        q->done = w->seq;
        if (w->kind == DW_COPY) D->queued_copies[w->copy_kind]--;
        if (x != NULL) {
            x->q = qi;
            x->seq = w->seq;
            x->view = w->dst_view;
            x->n = w->bytes;
            if (D->writes_tail != NULL)
                D->writes_tail->next = x;
            else
                D->writes = x;
            D->writes_tail = x;
        } else if (w->dst_view != NULL && w->bytes > 0) {
            memcpy(w->dst_view, w->dst, (size_t)w->bytes); /* out of host memory: show it now */
        }
        free(w);
        pthread_cond_broadcast(&D->done_cv);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

int vram_mock_deferred(vram_mock *m, uint64_t seed, uint32_t max_delay_us) {
    pthread_mutex_lock(&m->lock);
    if (m->deferred != NULL || m->total_calls != 0) {
        pthread_mutex_unlock(&m->lock);
        return -1;
    }
    struct vram_mock__deferred *D = (struct vram_mock__deferred *)calloc(1, sizeof *D);
    if (D == NULL) {
        pthread_mutex_unlock(&m->lock);
        return -1;
    }
    vram_rng_seed(&D->rng, seed);
    D->max_delay_us = max_delay_us;
    D->nq = 1; /* the default stream */
    D->q[0].used = 1;
    pthread_cond_init(&D->work_cv, NULL);
    pthread_cond_init(&D->done_cv, NULL);
    m->deferred = D;
    if (pthread_create(&D->worker, NULL, mock_worker, m) != 0) {
        m->deferred = NULL;
        pthread_cond_destroy(&D->work_cv);
        pthread_cond_destroy(&D->done_cv);
        free(D);
        pthread_mutex_unlock(&m->lock);
        return -1;
    }
    pthread_mutex_unlock(&m->lock);
    return 0;
}

/* Stops the worker and drops what it had not done (fini). */
static void mock_deferred_stop(vram_mock *m) {
    pthread_mutex_lock(&m->lock);
    struct vram_mock__deferred *D = m->deferred;
    if (D == NULL) {
        pthread_mutex_unlock(&m->lock);
        return;
    }
    D->stop = 1;
    pthread_cond_broadcast(&D->work_cv);
    pthread_mutex_unlock(&m->lock);
    pthread_join(D->worker, NULL);
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < D->nq; i++) {
        while (D->q[i].head != NULL) {
            dwork *w = D->q[i].head;
            D->q[i].head = w->next;
            free(w);
        }
    }
    while (D->writes != NULL) {
        dwrite *x = D->writes;
        D->writes = x->next;
        free(x->bytes);
        free(x);
    }
    pthread_cond_destroy(&D->work_cv);
    pthread_cond_destroy(&D->done_cv);
    m->deferred = NULL;
    free(D);
    pthread_mutex_unlock(&m->lock);
}

void vram_mock_pause(vram_mock *m, int paused) {
    pthread_mutex_lock(&m->lock);
    if (m->deferred != NULL) {
        m->deferred->paused = paused != 0;
        pthread_cond_broadcast(&m->deferred->work_cv);
    }
    pthread_mutex_unlock(&m->lock);
}

uint64_t vram_mock_queued_copies(vram_mock *m, vram_copy_kind kind) {
    uint64_t n = 0;
    pthread_mutex_lock(&m->lock);
    if (m->deferred != NULL && kind >= VRAM_COPY_H2D && kind <= VRAM_COPY_H2H)
        n = m->deferred->queued_copies[kind];
    pthread_mutex_unlock(&m->lock);
    return n;
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
    mock_take_context(m, device); /* the CUDA backend reads free memory in the device's context */
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
    mock_take_context(m, device); /* cudaMemGetInfo runs in the device's context */
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
    mock_set_thread_device(m, device);
    mock_take_context(m, device); /* cudaSetDevice makes the context since CUDA 12 */
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
    /* deferred: the device's own copy beside the host's view */
    uint8_t *shadow = p && m->deferred ? (uint8_t *)malloc(rounded) : NULL;
    mock_obj *o = p && (shadow || !m->deferred) ? mock_new_obj(m, OBJ_DEV, device, p, bytes) : NULL;
    if (o == NULL) { /* the host could not back it: the device is "out of memory" */
        free(p);
        free(shadow);
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    o->shadow = shadow;
    if (bytes <= MOCK_POISON_MAX) memset(p, 0xA5, (size_t)bytes);
    if (shadow && bytes <= MOCK_POISON_MAX) memset(shadow, 0x5A, (size_t)bytes); /* other garbage */
    mock_take_context(m, device);
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
    mock_take_context(m, device);
    mock_idle(m); /* cudaFree waits for the device */
    vram_mock_device *d = &m->dev[o->device];
    d->live_bytes -= o->bytes;
    d->live_allocs--;
    d->frees_total++;
    mock_unlink(m, o);
    mock_free_obj(o);
    MOCK_END;
}

static vram_status mock_host_alloc_pinned(void *ctx, uint64_t bytes, void **ptr) {
    if (ptr != NULL) *ptr = NULL; /* a failed call, scripted or not, leaves NULL */
    MOCK_BEGIN(VRAM_MOCK_OP_HOST_ALLOC_PINNED);
    if (ptr == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    mock_thread_context(m);
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
    mock_thread_context(m);
    mock_idle(m); /* cudaFreeHost waits for the device */
    m->pinned_live--;
    m->pinned_live_bytes -= o->bytes;
    mock_unlink(m, o);
    mock_free_obj(o);
    MOCK_END;
}

static vram_status mock_host_register(void *ctx, void *ptr, uint64_t bytes) {
    MOCK_BEGIN(VRAM_MOCK_OP_HOST_REGISTER);
    if (ptr == NULL || bytes == 0 || bytes > UINTPTR_MAX - (uintptr_t)ptr) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    /* the attribute predicts the call, as on a real device */
    int cur = mock_thread_device(m);
    if (mock_valid_device(m, cur) && m->dev[cur].info.host_register == VRAM_NO) {
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
    mock_thread_context(m);
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
    mock_thread_context(m);
    mock_idle(m); /* no copy may still read the range */
    m->registered_live--;
    m->registered_live_bytes -= o->bytes;
    mock_unlink(m, o);
    mock_free_obj(o);
    MOCK_END;
}

/* Destroys every allocation, stream and event of `device`, as a context reset does: they are
 * gone, not leaked. Caller holds the lock, the device is idle. */
static void mock_reset_device(vram_mock *m, int device) {
    mock_obj **pp = &m->objs;
    while (*pp != NULL) {
        mock_obj *o = *pp;
        int mine = o->device == device && (o->kind == OBJ_DEV || o->kind == OBJ_STREAM || o->kind == OBJ_EVENT);
        if (!mine) {
            pp = &o->next;
            continue;
        }
        *pp = o->next;
        if (o->kind == OBJ_DEV) {
            m->dev[device].live_bytes -= o->bytes;
            m->dev[device].live_allocs--;
            m->dev[device].frees_total++;
        } else if (o->kind == OBJ_STREAM) {
            m->streams_live--;
            if (m->deferred != NULL) m->deferred->q[o->q].stream = NULL;
        } else {
            m->events_live--;
        }
        mock_free_obj(o);
    }
}

static vram_status mock_release_device(void *ctx, int device) {
    MOCK_BEGIN(VRAM_MOCK_OP_RELEASE_DEVICE);
    if (!mock_valid_device(m, device)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_DEVICE);
        goto done;
    }
    if (!m->dev[device].context) goto done; /* nothing held: nothing to reset */
    mock_idle(m);
    mock_reset_device(m, device);
    m->dev[device].context = 0;
    m->dev[device].releases++;
    MOCK_END;
}

/* ---- streams, copies, events ----------------------------------------------------- */

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
    if (m->deferred != NULL && m->deferred->nq >= MOCK_MAX_QUEUES) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    mock_obj *o = mock_new_obj(m, OBJ_STREAM, device, NULL, 0);
    if (o == NULL) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    if (m->deferred != NULL) {
        o->q = m->deferred->nq++;
        m->deferred->q[o->q].used = 1;
        m->deferred->q[o->q].stream = o;
    }
    mock_take_context(m, device);
    m->streams_live++;
    *out = (vram_stream)o;
    MOCK_END;
}

/* Deferred: waits until everything queued on stream `o` (NULL: default) so far is done. */
static void mock_drain_queue(vram_mock *m, const mock_obj *o) {
    struct vram_mock__deferred *D = m->deferred;
    if (D == NULL) return;
    dqueue *q = &D->q[mock_queue_of(o)];
    uint64_t target = q->queued;
    while (q->done < target) pthread_cond_wait(&D->done_cv, &m->lock);
}

static vram_status mock_stream_destroy(void *ctx, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_STREAM_DESTROY);
    mock_obj *o = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL; /* the default stream
                                                                    cannot be destroyed */
    if (o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_thread_context(m);
    mock_drain_queue(m, o); /* cudart lets the work finish first */
    if (m->deferred != NULL) m->deferred->q[o->q].stream = NULL;
    m->streams_live--;
    mock_unlink(m, o);
    mock_free_obj(o);
    MOCK_END;
}

static vram_status mock_stream_sync(void *ctx, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_STREAM_SYNC);
    mock_obj *o = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL;
    if (s != NULL && o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_thread_context(m);
    if (m->deferred != NULL) {
        uint64_t clock[MOCK_MAX_QUEUES];
        memcpy(clock, m->deferred->q[mock_queue_of(o)].clock, sizeof clock);
        mock_drain_queue(m, o);
        mock_publish(m, clock);
    }
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

/* Deferred: a piece of work that writes [dst, dst + bytes) (device or host memory). */
static dwork *mock_push_write(vram_mock *m, int qi, dwork_kind kind, void *dst, uint64_t bytes,
                              int dst_dev) {
    dwork *w = mock_push(m, qi, kind);
    if (w == NULL) return NULL;
    w->bytes = bytes;
    if (dst_dev) {
        w->dst = mock_device_copy(m, dst, bytes);
        w->dst_view = (uint8_t *)dst;
    } else {
        w->dst = (uint8_t *)dst;
    }
    return w;
}

static vram_status mock_memcpy_async(void *ctx, void *dst, const void *src, uint64_t bytes,
                                     vram_copy_kind kind, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_MEMCPY_ASYNC);
    if (kind < VRAM_COPY_H2D || kind > VRAM_COPY_H2H) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_MEMCPY_DIRECTION);
        goto done;
    }
    mock_obj *so = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL;
    if (s != NULL && so == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_thread_context(m);
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
    mock_note_device(m, mock_stream_device(m, so));
    if ((kind == VRAM_COPY_H2D && !mock_is_pinned(m, src, bytes)) ||
        (kind == VRAM_COPY_D2H && !mock_is_pinned(m, dst, bytes)))
        m->pageable_copies++;
    if (m->deferred != NULL) {
        dwork *w = mock_push_write(m, mock_queue_of(so), DW_COPY, dst, bytes, dst_dev);
        if (w == NULL) {
            st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
            goto done;
        }
        w->copy_kind = kind;
        w->src = src_dev ? mock_device_copy(m, src, bytes) : (const uint8_t *)src;
        m->deferred->queued_copies[kind]++;
    } else {
        memmove(dst, src, (size_t)bytes); /* synchronous: the copy is done when the call returns */
    }
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
    mock_obj *o = mock_new_obj(m, OBJ_EVENT, mock_thread_device(m), NULL, 0);
    if (o == NULL) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    mock_thread_context(m);
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
    mock_thread_context(m);
    m->events_live--;
    mock_unlink(m, o); /* queued waits name the record's place, not the event */
    mock_free_obj(o);
    MOCK_END;
}

static vram_status mock_event_record(void *ctx, vram_event e, vram_stream s) {
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_RECORD);
    mock_obj *o = e ? mock_find_handle(m, OBJ_EVENT, e) : NULL;
    mock_obj *so = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL;
    if (o == NULL || (s != NULL && so == NULL)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_thread_context(m);
    int sdev = mock_stream_device(m, so);
    if (o->device != sdev) { /* cudaEventRecord: the event and the stream share a device */
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_note_device(m, sdev);
    if (m->deferred != NULL) {
        int qi = mock_queue_of(so);
        if (o->clock == NULL) o->clock = (uint64_t *)calloc(MOCK_MAX_QUEUES, sizeof(uint64_t));
        dwork *w = o->clock != NULL ? mock_push(m, qi, DW_RECORD) : NULL;
        if (w == NULL) {
            st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
            goto done;
        }
        o->rec_q = qi;
        o->rec_seq = w->seq;
        memcpy(o->clock, m->deferred->q[qi].clock, MOCK_MAX_QUEUES * sizeof(uint64_t));
    }
    o->recorded = 1;
    MOCK_END;
}

/* Deferred: is this host wait on event o one the fault switch drops? Counts it. */
static int mock_drop_host_wait(vram_mock *m, const mock_obj *o) {
    const struct vram_mock__deferred *D = m->deferred;
    if (D == NULL || D->drop != VRAM_MOCK_DROP_HOST_WAITS || o->rec_seq == 0 || o->rec_q != D->drop_q)
        return 0;
    m->dropped_waits++;
    return 1;
}

static vram_status mock_event_query(void *ctx, vram_event e) {
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_QUERY);
    mock_obj *o = e ? mock_find_handle(m, OBJ_EVENT, e) : NULL;
    if (o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_thread_context(m);
    /* "not ready" is an answer, not a failure: last_error is left alone */
    if (m->event_not_ready > 0) {
        m->event_not_ready--;
        st = VRAM_E_NOT_READY;
        goto done;
    }
    if (m->deferred != NULL && o->rec_seq != 0 && !mock_drop_host_wait(m, o)) {
        if (m->deferred->q[o->rec_q].done < o->rec_seq)
            st = VRAM_E_NOT_READY;
        else
            mock_publish(m, o->clock);
    }
    MOCK_END;
}

static vram_status mock_event_sync(void *ctx, vram_event e) {
    MOCK_BEGIN(VRAM_MOCK_OP_EVENT_SYNC);
    mock_obj *o = e ? mock_find_handle(m, OBJ_EVENT, e) : NULL;
    if (o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_thread_context(m);
    if (m->deferred != NULL && o->rec_seq != 0 && !mock_drop_host_wait(m, o)) {
        int q = o->rec_q;
        uint64_t seq = o->rec_seq, clock[MOCK_MAX_QUEUES];
        memcpy(clock, o->clock, sizeof clock); /* the event may be recorded again meanwhile */
        while (m->deferred->q[q].done < seq) pthread_cond_wait(&m->deferred->done_cv, &m->lock);
        mock_publish(m, clock);
    }
    MOCK_END;
}

static vram_status mock_stream_wait_event(void *ctx, vram_stream s, vram_event e) {
    MOCK_BEGIN(VRAM_MOCK_OP_STREAM_WAIT_EVENT);
    mock_obj *so = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL;
    mock_obj *o = e ? mock_find_handle(m, OBJ_EVENT, e) : NULL;
    if ((s != NULL && so == NULL) || o == NULL) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
        goto done;
    }
    mock_thread_context(m);
    mock_note_device(m, mock_stream_device(m, so));
    struct vram_mock__deferred *D = m->deferred;
    if (D == NULL || o->rec_seq == 0) goto done; /* done at once, or nothing to wait for */
    int qi = mock_queue_of(so);
    if (D->drop == VRAM_MOCK_DROP_STREAM_WAITS && D->drop_q == qi) {
        m->dropped_waits++;
        goto done;
    }
    dwork *w = mock_push(m, qi, DW_WAIT);
    if (w == NULL) {
        st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
        goto done;
    }
    w->wait_q = o->rec_q;
    w->wait_seq = o->rec_seq;
    for (int i = 0; i < MOCK_MAX_QUEUES; i++)
        if (o->clock[i] > D->q[qi].clock[i]) D->q[qi].clock[i] = o->clock[i];
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
    pthread_mutex_lock(&m->lock);
    ops.flags = m->deferred != NULL ? 0u : VRAM_DEVICE_HOST_MEMORY;
    pthread_mutex_unlock(&m->lock);
    ops.backend = "mock";
    ops.ctx = m;
    ops.driver_version = mock_driver_version;
    ops.runtime_version = mock_runtime_version;
    ops.device_count = mock_device_count;
    ops.device_info = mock_device_info;
    ops.mem_info = mock_mem_info;
    ops.attribute = mock_attribute;
    ops.set_device = mock_set_device;
    ops.release_device = mock_release_device;
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

/* ---- the fault switch and the kernel stand-ins ----------------------------------- */

int vram_mock_streams(vram_mock *m, vram_stream *out, int cap) {
    int n = 0;
    pthread_mutex_lock(&m->lock);
    for (const mock_obj *o = m->objs; o != NULL; o = o->next) n += o->kind == OBJ_STREAM;
    /* the list is newest first: fill from the back */
    int i = n;
    for (mock_obj *o = m->objs; o != NULL; o = o->next) {
        if (o->kind != OBJ_STREAM) continue;
        i--;
        if (out != NULL && i < cap) out[i] = (vram_stream)o;
    }
    pthread_mutex_unlock(&m->lock);
    return n;
}

int vram_mock_drop_waits(vram_mock *m, vram_mock_drop kind, vram_stream s) {
    int rc = -1;
    pthread_mutex_lock(&m->lock);
    struct vram_mock__deferred *D = m->deferred;
    mock_obj *so = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL;
    if (D != NULL && (s == NULL || so != NULL) &&
        (kind == VRAM_MOCK_DROP_NONE || kind == VRAM_MOCK_DROP_HOST_WAITS ||
         kind == VRAM_MOCK_DROP_STREAM_WAITS)) {
        D->drop = kind;
        D->drop_q = mock_queue_of(so);
        rc = 0;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* Common entry of the stand-ins: the stream's checks and the poison of a sticky error.
 * Caller holds the lock. */
static vram_status mock_standin_enter(vram_mock *m, vram_stream s, mock_obj **so) {
    *so = s ? mock_find_handle(m, OBJ_STREAM, s) : NULL;
    if (m->poisoned) return mock_fail(m, m->poison_code);
    if (s != NULL && *so == NULL) return mock_bad_arg(m, MOCK_CUDA_INVALID_HANDLE);
    mock_thread_context(m);
    mock_note_device(m, mock_stream_device(m, *so));
    return VRAM_OK;
}

vram_status vram_mock_memset_async(vram_mock *m, void *dst, int value, uint64_t bytes,
                                   vram_stream s) {
    mock_obj *so = NULL;
    pthread_mutex_lock(&m->lock);
    vram_status st = mock_standin_enter(m, s, &so);
    if (st != VRAM_OK || bytes == 0) goto done;
    if (dst == NULL || bytes > SIZE_MAX || !mock_side_ok(m, dst, bytes, 1)) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (m->deferred != NULL) {
        dwork *w = mock_push_write(m, mock_queue_of(so), DW_MEMSET, dst, bytes, 1);
        if (w == NULL) {
            st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
            goto done;
        }
        w->value = value;
    } else {
        memset(dst, value, (size_t)bytes);
    }
done:
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* The live mock that made stream s; NULL when none did. */
static vram_mock *mock_owner(vram_stream s) {
    vram_mock *found = NULL;
    if (s == NULL) return NULL;
    pthread_mutex_lock(&mock_registry_lock);
    for (int i = 0; i < MOCK_REGISTRY_MAX && found == NULL; i++) {
        vram_mock *m = mock_registry[i];
        if (m == NULL) continue;
        pthread_mutex_lock(&m->lock);
        if (mock_find_handle(m, OBJ_STREAM, s) != NULL) found = m;
        pthread_mutex_unlock(&m->lock);
    }
    pthread_mutex_unlock(&mock_registry_lock);
    return found;
}

vram_status vram_mock_gather(void *dst, const void *src, uint64_t src_rows, const uint64_t *index,
                             uint64_t rows, uint64_t row_bytes, int *bad_index_flag, void *stream) {
    vram_mock *m = mock_owner((vram_stream)stream);
    if (m == NULL) return VRAM_E_INVALID;
    mock_obj *so = NULL;
    uint64_t out_bytes = 0, in_bytes = 0, index_bytes = 0;
    pthread_mutex_lock(&m->lock);
    vram_status st = mock_standin_enter(m, (vram_stream)stream, &so);
    if (st != VRAM_OK || rows == 0 || row_bytes == 0) goto done;
    if (dst == NULL || src == NULL || index == NULL ||
        vram__mul_u64(rows, row_bytes, &out_bytes) != VRAM_OK ||
        vram__mul_u64(src_rows, row_bytes, &in_bytes) != VRAM_OK ||
        vram__mul_u64(rows, sizeof(uint64_t), &index_bytes) != VRAM_OK || out_bytes > SIZE_MAX ||
        !mock_side_ok(m, dst, out_bytes, 1) || (in_bytes > 0 && !mock_side_ok(m, src, in_bytes, 1)) ||
        (bad_index_flag != NULL && !mock_side_ok(m, bad_index_flag, sizeof *bad_index_flag, 0))) {
        st = mock_bad_arg(m, MOCK_CUDA_INVALID_VALUE);
        goto done;
    }
    if (m->deferred != NULL) {
        int index_dev = mock_side_ok(m, index, index_bytes, 1);
        dwork *w = mock_push_write(m, mock_queue_of(so), DW_GATHER, dst, out_bytes, 1);
        if (w == NULL) {
            st = mock_fail(m, MOCK_CUDA_MEMORY_ALLOCATION);
            goto done;
        }
        w->src = mock_device_copy(m, src, in_bytes);
        w->index = index_dev ? (const uint64_t *)(const void *)mock_device_copy(m, index, index_bytes) : index;
        w->src_rows = src_rows;
        w->rows = rows;
        w->row_bytes = row_bytes;
        w->flag = bad_index_flag;
    } else {
        dwork w;
        memset(&w, 0, sizeof w);
        w.kind = DW_GATHER;
        w.dst = (uint8_t *)dst;
        w.src = (const uint8_t *)src;
        w.index = index;
        w.src_rows = src_rows;
        w.rows = rows;
        w.row_bytes = row_bytes;
        w.flag = bad_index_flag;
        mock_do(&w);
    }
done:
    pthread_mutex_unlock(&m->lock);
    return st;
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

int vram_mock_contexts(vram_mock *m) {
    int n = 0;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < VRAM_MAX_DEVICES; i++) n += m->dev[i].context != 0;
    pthread_mutex_unlock(&m->lock);
    return n;
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
