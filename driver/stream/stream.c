/* driver/stream/stream.c — the streamer (stream.h): a producer thread walks the plan chunk by chunk,
 * reader threads read the source into pinned slabs (or straight into device buffers on the
 * host backend), the copy stream moves slabs to device buffers, and the consumer takes
 * batches from loaded buffers. One mutex guards the shared state; events order the device. */
#include "stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util/text.h"

#define MAX_HELD 2u          /* batches the consumer may hold at once */
#define MAX_PIECES 32u       /* pieces packed into one slab */
#define TASK_CAP 4096u       /* read tasks queued at once (the producer waits when full) */
#define PIECE_ALIGN 256u     /* pieces start at this alignment inside a slab */
#define COPY_POLL_NS 200000L /* how often the producer, waiting for reads, looks at a copy */

/* ---- small helpers ------------------------------------------------------------------ */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Device memory that the host may use as its own (the host backend; the plain mock). */
static int host_memory_device(const vram_device_ops *ops) {
    return (ops->flags & VRAM_DEVICE_HOST_MEMORY) != 0;
}

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1u) / a * a; }

/* ---- the memory source ---------------------------------------------------------------- */

static vram_status mem_read(void *ctx, uint32_t d, uint64_t first, uint64_t count, void *dst,
                            char *err, size_t cap) {
    const vram_memsource *m = (const vram_memsource *)ctx;
    if (d >= m->datasets || first > m->samples || count > m->samples - first) {
        vram_msgf(err, cap, "memory source: rows [%llu, %llu) of dataset %u are out of range",
                (unsigned long long)first, (unsigned long long)(first + count), d);
        return VRAM_E_RANGE;
    }
    if (m->fail_at != 0 && d == m->fail_dataset && m->fail_at - 1u >= first &&
        m->fail_at - 1u - first < count) {
        vram_msgf(err, cap, "memory source: injected read error at sample %llu of dataset %u",
                (unsigned long long)(m->fail_at - 1u), d);
        return VRAM_E_IO;
    }
    memcpy(dst, (const uint8_t *)m->data[d] + first * m->row_bytes[d],
           (size_t)(count * m->row_bytes[d]));
    return VRAM_OK;
}

vram_source vram_memsource_source(vram_memsource *m) {
    vram_source s;
    memset(&s, 0, sizeof s);
    s.ctx = m;
    s.samples = m->samples;
    s.datasets = m->datasets;
    for (uint32_t d = 0; d < m->datasets && d < VRAM_STREAM_MAX_DATASETS; d++) {
        s.row_bytes[d] = m->row_bytes[d];
        s.parallel[d] = 1;
    }
    s.read = mem_read;
    return s;
}

vram_status vram_stream_host_gather(void *dst, const void *src, uint64_t src_rows,
                                    const uint64_t *index, uint64_t rows, uint64_t row_bytes,
                                    int *bad_index_flag, void *stream) {
    (void)stream;
    if (rows == 0 || row_bytes == 0) return VRAM_OK;
    if (dst == NULL || src == NULL || index == NULL) return VRAM_E_INVALID;
    uint8_t *o = (uint8_t *)dst;
    const uint8_t *in = (const uint8_t *)src;
    for (uint64_t i = 0; i < rows; i++) {
        uint64_t r = index[i];
        if (r >= src_rows) {
            if (bad_index_flag) *bad_index_flag = 1;
            continue;
        }
        memcpy(o + i * row_bytes, in + r * row_bytes, (size_t)row_bytes);
    }
    return VRAM_OK;
}

/* ---- the streamer's state ------------------------------------------------------------- */

typedef struct piece {
    uint32_t d;
    uint64_t first, count; /* source rows */
    uint64_t slab_off;     /* where they sit in the slab */
    uint64_t row;          /* the chunk row of the first one */
} piece;

typedef struct slab {
    uint8_t *host;
    vram_event ev;
    int copying; /* a copy out of it may be in flight */
    uint64_t q;
    uint64_t epoch_index, visit;
    vram_chunk ch; /* the chunk q, for its buffer */
    int first_of_chunk, last_of_chunk;
    uint32_t npieces;
    piece pieces[MAX_PIECES];
} slab;

/* Tasks of one slab (SLABS) or one buffer (DIRECT) count down here. */
typedef struct group {
    uint64_t pending;
    vram_status st;
    char err[VRAM_STREAM_ERR_MAX];
} group;

enum { BUF_FREE = 0, BUF_LOADING = 1, BUF_READY = 2 };

typedef struct dbuf {
    uint8_t *dev;
    vram_event ready, done;
    int ready_recorded, done_recorded;
    uint64_t *order_host; /* slot -> row, shuffle only */
    uint64_t *order_dev;  /* its device copy (== order_host in DIRECT staging) */
    int state;
    uint64_t seq;
    vram_chunk chunk;
    uint64_t epoch_index, visit;
    uint64_t delivered, released;
    uint32_t kept; /* vram_streamer_keep: not reused until as many unkeeps */
} dbuf;

typedef struct task {
    uint8_t *dst;
    uint64_t first, count; /* rows; bytes for a touch */
    uint64_t epoch_index;
    uint32_t d, group;
    int touch;
} task;

typedef struct held {
    uint64_t serial;
    uint32_t buf;
    uint64_t epoch_index;
    int epoch_end;
} held;

struct vram_streamer {
    vram_device_ops ops;
    vram_source src;
    vram_stream_config cfg;
    vram_chunks_plan plan;
    int direct;
    int order_shared; /* order_dev is order_host (DIRECT: the host gathers) */
    vram_gather_fn gather;
    uint32_t nbuf;
    uint64_t total_q;
    uint64_t region_off[VRAM_STREAM_MAX_DATASETS]; /* in a chunk buffer */
    uint64_t gather_off[VRAM_STREAM_MAX_DATASETS]; /* in a gather buffer */
    dbuf *bufs;

    slab *slabs;
    uint32_t nslabs;
    uint64_t slab_bytes;
    uint8_t *slab_mem;
    size_t slab_map_bytes;
    int slab_registered, slab_pinned;

    uint8_t *gbuf[MAX_HELD];
    uint64_t *bsamples[MAX_HELD];
    vram_event bready[MAX_HELD];
    uint32_t gslot;

    vram_stream copy_stream;
    int copy_stream_made;

    pthread_mutex_t mu;
    pthread_cond_t cv;       /* state changes: groups done, buffers freed/ready, stop */
    pthread_cond_t task_cv;  /* tasks queued */
    pthread_cond_t space_cv; /* room in the task queue */
    int sync_made;
    pthread_t readers[VRAM_STREAM_MAX_READERS];
    uint32_t readers_started;
    pthread_t producer;
    int producer_started;
    task *tasks;
    uint32_t task_head, task_count;
    group *groups;
    uint32_t ngroups;
    int closing;

    int stopped;
    vram_status stop_status;
    uint64_t stop_q;
    char err[VRAM_STREAM_ERR_MAX];

    /* the consumer */
    uint64_t cur_q, cur_j, epoch_batch;
    uint64_t serial_next, serial_oldest;
    uint32_t held_n;
    held held_ring[MAX_HELD];
    double epoch_mark; /* when the current epoch began: open, or the last epoch's end */

    vram_stream_stats *stats; /* per epoch */
    vram_perm chunk_order;    /* the producer's: this epoch's visiting order (O(1) a visit) */
    uint64_t chunk_order_epoch;
};

/* ---- config and plan ------------------------------------------------------------------ */

static uint32_t default_readers(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2) n = 2;
    if (n > 16) n = 16; /* a 16-core GPU host: one reader a core (pread waits on the page cache or the disk) */
    return (uint32_t)n;
}

vram_stream_config vram_stream_defaults(const vram_stream_config *cfg, const vram_source *src) {
    vram_stream_config c = *cfg;
    uint64_t widest = 0;
    c.plan = vram_chunks_defaults(&cfg->plan);
    if (c.epochs == 0) c.epochs = 1;
    if (c.readers == 0) c.readers = default_readers();
    if (c.readers > VRAM_STREAM_MAX_READERS) c.readers = VRAM_STREAM_MAX_READERS;
    if (c.slabs == 0) c.slabs = VRAM_STREAM_DEFAULT_SLABS;
    if (c.slabs < 2) c.slabs = 2;
    if (c.slabs > VRAM_STREAM_MAX_SLABS) c.slabs = VRAM_STREAM_MAX_SLABS;
    if (c.slab_bytes == 0) c.slab_bytes = VRAM_STREAM_DEFAULT_SLAB_BYTES;
    if (c.piece_bytes == 0) c.piece_bytes = VRAM_STREAM_DEFAULT_PIECE_BYTES;
    for (uint32_t d = 0; d < src->datasets && d < VRAM_STREAM_MAX_DATASETS; d++)
        widest = vram__max_u64(widest, src->row_bytes[d]);
    if (c.slab_bytes < widest) c.slab_bytes = widest;
    return c;
}

vram_status vram_stream_plan(const vram_source *src, const vram_stream_config *cfg,
                             vram_chunks_plan *plan) {
    vram_chunks_config c = cfg->plan;
    uint64_t sb = 0;
    if (src->datasets == 0) return VRAM_E_INVALID;
    if (src->datasets > VRAM_STREAM_MAX_DATASETS) return VRAM_E_RANGE;
    for (uint32_t d = 0; d < src->datasets; d++) {
        if (src->row_bytes[d] == 0) return VRAM_E_INVALID;
        if (vram__add_u64(sb, src->row_bytes[d], &sb) != VRAM_OK) return VRAM_E_OVERFLOW;
    }
    c.samples = src->samples;
    c.sample_bytes = sb;
    return vram_chunks_make(&c, plan);
}

/* ops NULL: a GPU that is not here (planning only). */
static vram_stream_staging resolve_staging(vram_stream_staging st, const vram_device_ops *ops) {
    if (st == VRAM_STAGE_AUTO)
        return ops != NULL && host_memory_device(ops) ? VRAM_STAGE_DIRECT : VRAM_STAGE_SLABS;
    return st;
}

uint64_t vram_stream_extra_device_bytes(const vram_chunks_plan *plan, const vram_stream_config *cfg,
                                        const vram_device_ops *ops) {
    uint64_t gather = 0, orders = 0, nbuf = plan->config.buffers ? plan->config.buffers : 1u;
    if (!plan->config.shuffle) return 0;
    if (vram__mul_u64(MAX_HELD, plan->batch_bytes, &gather) != VRAM_OK) return UINT64_MAX;
    if (resolve_staging(cfg->staging, ops) != VRAM_STAGE_DIRECT) { /* orders copied to the device */
        if (vram__mul_u64(plan->samples_per_chunk, 8u * nbuf, &orders) != VRAM_OK) return UINT64_MAX;
    }
    if (vram__add_u64(gather, orders, &gather) != VRAM_OK) return UINT64_MAX;
    return gather;
}

/* ---- errors: the first one wins ------------------------------------------------------- */

/* Stops the producer at chunk q (caller holds mu). */
static void stop_locked(vram_streamer *s, uint64_t q, vram_status st, const char *msg) {
    if (!s->stopped || q < s->stop_q) {
        s->stopped = 1;
        s->stop_q = q;
        s->stop_status = st;
        snprintf(s->err, sizeof s->err, "%s", msg);
    }
    pthread_cond_broadcast(&s->cv);
}

static void stop_at(vram_streamer *s, uint64_t q, vram_status st, const char *msg) {
    pthread_mutex_lock(&s->mu);
    stop_locked(s, q, st, msg);
    pthread_mutex_unlock(&s->mu);
}

static void device_msg(vram_streamer *s, char *buf, size_t cap, const char *what, vram_status st) {
    int code = s->ops.last_error ? s->ops.last_error(s->ops.ctx) : 0;
    if (code != 0)
        snprintf(buf, cap, "%s failed: %s (CUDA error %d)", what, vram_status_str(st), code);
    else
        snprintf(buf, cap, "%s failed: %s", what, vram_status_str(st));
}

/* ---- the task queue and the readers --------------------------------------------------- */

/* Queues one task; waits while the queue is full. Returns 0, or -1 when closing. */
static int post(vram_streamer *s, const task *t) {
    pthread_mutex_lock(&s->mu);
    while (s->task_count == TASK_CAP && !s->closing) pthread_cond_wait(&s->space_cv, &s->mu);
    if (s->closing) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    s->tasks[(s->task_head + s->task_count) % TASK_CAP] = *t;
    s->task_count++;
    pthread_cond_signal(&s->task_cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static void *reader_main(void *arg) {
    vram_streamer *s = (vram_streamer *)arg;
    char err[VRAM_STREAM_ERR_MAX];
    for (;;) {
        task t;
        pthread_mutex_lock(&s->mu);
        while (s->task_count == 0 && !s->closing) pthread_cond_wait(&s->task_cv, &s->mu);
        if (s->closing) {
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        t = s->tasks[s->task_head];
        s->task_head = (s->task_head + 1u) % TASK_CAP;
        s->task_count--;
        pthread_cond_signal(&s->space_cv);
        pthread_mutex_unlock(&s->mu);

        vram_status st = VRAM_OK;
        double t0 = now_s(), dt;
        err[0] = '\0';
        if (t.touch) {
            memset(t.dst, 0, (size_t)t.count);
        } else {
            st = s->src.read(s->src.ctx, t.d, t.first, t.count, t.dst, err, sizeof err);
            if (st != VRAM_OK && err[0] == '\0')
                snprintf(err, sizeof err, "reading rows [%llu, %llu) of dataset %u failed: %s",
                         (unsigned long long)t.first, (unsigned long long)(t.first + t.count),
                         t.d, vram_status_str(st));
        }
        dt = now_s() - t0;

        pthread_mutex_lock(&s->mu);
        group *g = &s->groups[t.group];
        if (st != VRAM_OK && g->st == VRAM_OK) {
            g->st = st;
            snprintf(g->err, sizeof g->err, "%s", err);
        }
        if (!t.touch && st == VRAM_OK) {
            vram_stream_stats *x = &s->stats[t.epoch_index];
            x->bytes_read += t.count * s->src.row_bytes[t.d];
            x->read_seconds += dt;
        }
        if (--g->pending == 0) pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
}

/* Posts reads of source rows [first, first + count) of dataset d to dst, in pieces of
 * piece_bytes where the dataset may be read in parallel. Returns 0 or -1 (closing). */
static uint64_t count_reads(const vram_streamer *s, uint32_t d, uint64_t count) {
    uint64_t per;
    if (!s->src.parallel[d]) return 1;
    per = vram__max_u64(1u, s->cfg.piece_bytes / s->src.row_bytes[d]);
    return vram__div_ceil_u64(count, per);
}

static int post_reads(vram_streamer *s, uint32_t group_ix, uint64_t epoch_index, uint32_t d,
                      uint64_t first, uint64_t count, uint8_t *dst) {
    uint64_t rb = s->src.row_bytes[d];
    uint64_t per = s->src.parallel[d] ? vram__max_u64(1u, s->cfg.piece_bytes / rb) : count;
    for (uint64_t done = 0; done < count; done += per) {
        task t;
        memset(&t, 0, sizeof t);
        t.dst = dst + done * rb;
        t.first = first + done;
        t.count = vram__min_u64(per, count - done);
        t.epoch_index = epoch_index;
        t.d = d;
        t.group = group_ix;
        if (post(s, &t) != 0) return -1;
    }
    return 0;
}

/* ---- the walk: chunk q of the stream ------------------------------------------------------ */

/* The chunk visited at q (producer only: keeps this epoch's chunk order). */
static vram_status chunk_at(vram_streamer *s, uint64_t q, vram_chunk *ch, uint64_t *epoch_index,
                            uint64_t *visit) {
    uint64_t cc = s->plan.chunk_count, e = q / cc, k = q % cc;
    vram_status st;
    if (s->chunk_order_epoch != e) {
        st = vram_chunks_chunk_perm(&s->plan, s->cfg.first_epoch + e, &s->chunk_order);
        if (st != VRAM_OK) return st;
        s->chunk_order_epoch = e;
    }
    *epoch_index = e;
    *visit = k;
    return vram_chunks_chunk(&s->plan, vram_perm_at(&s->chunk_order, k), ch);
}

/* The status of a group whose tasks are done, its message in err; the group is reset for
 * its next use. Caller holds mu. */
static vram_status take_group_locked(vram_streamer *s, uint32_t g, char *err, size_t cap) {
    vram_status st = s->groups[g].st;
    if (st != VRAM_OK) snprintf(err, cap, "%s", s->groups[g].err);
    s->groups[g].st = VRAM_OK;
    s->groups[g].err[0] = '\0';
    return st;
}

/* Waits until a group's tasks are done. Returns its status; -1 as VRAM_E_STATE on close. */
static vram_status wait_group(vram_streamer *s, uint32_t g, char *err, size_t cap) {
    vram_status st;
    pthread_mutex_lock(&s->mu);
    while (s->groups[g].pending != 0 && !s->closing) pthread_cond_wait(&s->cv, &s->mu);
    if (s->closing) {
        pthread_mutex_unlock(&s->mu);
        return VRAM_E_STATE;
    }
    st = take_group_locked(s, g, err, cap);
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* The chunk in buffer b is loaded: check the source, write the order, record ready,
 * publish. Returns 0, or -1 after stopping the stream. */
static int publish(vram_streamer *s, uint32_t b, uint64_t q) {
    dbuf *B = &s->bufs[b];
    char msg[VRAM_STREAM_ERR_MAX];
    vram_status st;
    if (s->src.check) {
        msg[0] = '\0';
        st = s->src.check(s->src.ctx, msg, sizeof msg);
        if (st != VRAM_OK) {
            stop_at(s, q, st, msg[0] ? msg : "the source changed under the reader");
            return -1;
        }
    }
    if (s->plan.config.shuffle) {
        if (B->ready_recorded && !s->order_shared) {
            /* the last upload of this order array must be done before it is rewritten */
            st = s->ops.event_sync(s->ops.ctx, B->ready);
            if (st != VRAM_OK) {
                device_msg(s, msg, sizeof msg, "waiting for an order upload", st);
                stop_at(s, q, st, msg);
                return -1;
            }
        }
        st = vram_chunks_sample_order(&s->plan, B->chunk.index, s->cfg.first_epoch + B->epoch_index,
                                      B->order_host, s->plan.samples_per_chunk);
        if (st != VRAM_OK) {
            snprintf(msg, sizeof msg, "internal error: the chunk's order: %s", vram_status_str(st));
            stop_at(s, q, st, msg);
            return -1;
        }
        if (B->order_dev != B->order_host) {
            st = s->ops.memcpy_async(s->ops.ctx, B->order_dev, B->order_host, B->chunk.rows * 8u,
                                     VRAM_COPY_H2D, s->copy_stream);
            if (st != VRAM_OK) {
                device_msg(s, msg, sizeof msg, "copying the chunk's order to the device", st);
                stop_at(s, q, st, msg);
                return -1;
            }
        }
    }
    st = s->ops.event_record(s->ops.ctx, B->ready, s->copy_stream);
    if (st != VRAM_OK) {
        device_msg(s, msg, sizeof msg, "recording a chunk's ready event", st);
        stop_at(s, q, st, msg);
        return -1;
    }
    pthread_mutex_lock(&s->mu);
    B->ready_recorded = 1;
    B->state = BUF_READY;
    B->seq = q;
    B->delivered = B->released = 0;
    s->stats[B->epoch_index].chunks++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* ---- the producer, DIRECT staging: readers write the device buffers ------------------- */

static int post_chunk_direct(vram_streamer *s, uint64_t q) {
    uint32_t b = (uint32_t)(q % s->nbuf);
    dbuf *B = &s->bufs[b];
    vram_chunk ch;
    uint64_t e, k, n = 0;
    char msg[VRAM_STREAM_ERR_MAX];
    vram_status st = chunk_at(s, q, &ch, &e, &k);
    if (st != VRAM_OK) {
        snprintf(msg, sizeof msg, "internal error: chunk %llu of the plan: %s",
                 (unsigned long long)q, vram_status_str(st));
        stop_at(s, q, st, msg);
        return -1;
    }
    B->chunk = ch;
    B->epoch_index = e;
    B->visit = k;
    for (uint32_t d = 0; d < s->src.datasets; d++)
        for (int r = 0; r < 2; r++)
            if (ch.samples[r].end > ch.samples[r].start)
                n += count_reads(s, d, ch.samples[r].end - ch.samples[r].start);
    pthread_mutex_lock(&s->mu);
    s->groups[b].pending = n;
    pthread_mutex_unlock(&s->mu);
    for (uint32_t d = 0; d < s->src.datasets; d++) {
        uint64_t row = 0, rb = s->src.row_bytes[d];
        for (int r = 0; r < 2; r++) {
            uint64_t a = ch.samples[r].start, len = ch.samples[r].end - a;
            if (len == 0) continue;
            if (post_reads(s, b, e, d, a, len, B->dev + s->region_off[d] + row * rb) != 0)
                return -1;
            row += len;
        }
    }
    return 0;
}

static void produce_direct(vram_streamer *s) {
    uint64_t next_post = 0, next_pub = 0;
    char msg[VRAM_STREAM_ERR_MAX];
    while (next_pub < s->total_q) {
        int can_post = 0;
        pthread_mutex_lock(&s->mu);
        if (s->closing) {
            pthread_mutex_unlock(&s->mu);
            return;
        }
        if (next_post < s->total_q && next_post < next_pub + s->nbuf &&
            s->bufs[next_post % s->nbuf].state == BUF_FREE) {
            s->bufs[next_post % s->nbuf].state = BUF_LOADING;
            can_post = 1;
        } else if (next_pub == next_post) {
            pthread_cond_wait(&s->cv, &s->mu); /* for a buffer to be released */
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        if (can_post) {
            if (post_chunk_direct(s, next_post) != 0) return;
            next_post++;
            continue;
        }
        uint32_t b = (uint32_t)(next_pub % s->nbuf);
        msg[0] = '\0';
        vram_status st = wait_group(s, b, msg, sizeof msg);
        if (st == VRAM_E_STATE) return; /* closing */
        if (st != VRAM_OK) {
            stop_at(s, next_pub, st, msg);
            return;
        }
        if (publish(s, b, next_pub) != 0) return;
        next_pub++;
    }
}

/* ---- the producer, SLABS staging: slabs, then copies ----------------------------------- */

/* Cuts chunks into pieces, slab by slab. */
typedef struct gen {
    uint64_t q;      /* chunk being cut (total_q when done) */
    vram_chunk ch;
    uint64_t e, k;
    uint32_t d;      /* dataset */
    int r;           /* sample range 0 or 1 */
    uint64_t off;    /* rows of the range already cut */
    int fresh;       /* nothing of chunk q cut yet */
} gen;

static int gen_load(vram_streamer *s, gen *g) {
    char msg[VRAM_STREAM_ERR_MAX];
    g->d = 0;
    g->r = 0;
    g->off = 0;
    g->fresh = 1;
    if (g->q >= s->total_q) return 0;
    vram_status st = chunk_at(s, g->q, &g->ch, &g->e, &g->k);
    if (st != VRAM_OK) {
        snprintf(msg, sizeof msg, "internal error: chunk %llu of the plan: %s",
                 (unsigned long long)g->q, vram_status_str(st));
        stop_at(s, g->q, st, msg);
        return -1;
    }
    return 0;
}

/* Rows left in the current range; moves on to the next range or dataset when it is cut. */
static uint64_t gen_left(vram_streamer *s, gen *g) {
    while (g->d < s->src.datasets) {
        vram_range rg = g->ch.samples[g->r];
        uint64_t len = rg.end - rg.start;
        if (g->off < len) return len - g->off;
        g->off = 0;
        if (g->r == 0) {
            g->r = 1;
        } else {
            g->r = 0;
            g->d++;
        }
    }
    return 0;
}

/* Fills slab sl with the next pieces of chunk g->q (never of two chunks). */
static void gen_fill(vram_streamer *s, gen *g, slab *sl) {
    uint64_t off = 0;
    sl->q = g->q;
    sl->epoch_index = g->e;
    sl->visit = g->k;
    sl->ch = g->ch;
    sl->first_of_chunk = g->fresh;
    sl->last_of_chunk = 0;
    sl->npieces = 0;
    g->fresh = 0;
    while (sl->npieces < MAX_PIECES) {
        uint64_t left = gen_left(s, g);
        if (left == 0) {
            sl->last_of_chunk = 1;
            break;
        }
        uint64_t rb = s->src.row_bytes[g->d], at = round_up(off, PIECE_ALIGN);
        if (at >= s->slab_bytes || (s->slab_bytes - at) / rb == 0) break;
        uint64_t take = vram__min_u64(left, (s->slab_bytes - at) / rb);
        piece *p = &sl->pieces[sl->npieces++];
        p->d = g->d;
        p->first = g->ch.samples[g->r].start + g->off;
        p->count = take;
        p->slab_off = at;
        p->row = (g->r == 1 ? g->ch.samples[0].end - g->ch.samples[0].start : 0) + g->off;
        g->off += take;
        off = at + take * rb;
    }
    if (!sl->last_of_chunk && gen_left(s, g) == 0) sl->last_of_chunk = 1;
}

/* Is the copy out of a slab done (so it may be refilled)? Asks without waiting. Returns 1
 * done (or no copy), 0 not yet, -1 after stopping the stream on a device error. */
static int slab_copied(vram_streamer *s, slab *sl) {
    char msg[VRAM_STREAM_ERR_MAX];
    if (!sl->copying) return 1;
    vram_status st = s->ops.event_query(s->ops.ctx, sl->ev);
    if (st == VRAM_E_NOT_READY) return 0;
    sl->copying = 0;
    if (st != VRAM_OK) {
        device_msg(s, msg, sizeof msg, "checking a copy to the device", st);
        stop_at(s, sl->q, st, msg);
        return -1;
    }
    return 1;
}

/* Waits for the copy out of a slab before it is refilled. Returns 0 or -1 (stopped). */
static int slab_settle(vram_streamer *s, slab *sl) {
    char msg[VRAM_STREAM_ERR_MAX];
    if (!sl->copying) return 0;
    double t0 = now_s();
    vram_status st = s->ops.event_sync(s->ops.ctx, sl->ev);
    double dt = now_s() - t0;
    sl->copying = 0;
    pthread_mutex_lock(&s->mu);
    s->stats[sl->epoch_index].copy_seconds += dt;
    pthread_mutex_unlock(&s->mu);
    if (st != VRAM_OK) {
        device_msg(s, msg, sizeof msg, "waiting for a copy to the device", st);
        stop_at(s, sl->q, st, msg);
        return -1;
    }
    return 0;
}

static int slab_post(vram_streamer *s, uint32_t ix) {
    slab *sl = &s->slabs[ix];
    uint64_t n = 0;
    for (uint32_t i = 0; i < sl->npieces; i++) n += count_reads(s, sl->pieces[i].d, sl->pieces[i].count);
    pthread_mutex_lock(&s->mu);
    s->groups[ix].pending = n;
    pthread_mutex_unlock(&s->mu);
    for (uint32_t i = 0; i < sl->npieces; i++) {
        piece *p = &sl->pieces[i];
        if (post_reads(s, ix, sl->epoch_index, p->d, p->first, p->count, sl->host + p->slab_off) != 0)
            return -1;
    }
    return 0;
}

/* Can the slab's copies be queued: its reads done and, for a chunk's first slab, the
 * chunk's buffer given back by the consumer? Caller holds mu. */
static int slab_drainable_locked(vram_streamer *s, uint32_t ix) {
    const slab *sl = &s->slabs[ix];
    if (s->groups[ix].pending != 0) return 0;
    return !sl->first_of_chunk || s->bufs[sl->q % s->nbuf].state == BUF_FREE;
}

/* Waits until slab ix can be drained, or (poll) for at most COPY_POLL_NS, so the caller can
 * look at a copy meanwhile. Returns 0, or -1 when closing. */
static int slab_wait_drainable(vram_streamer *s, uint32_t ix, int poll) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the condition variable's clock */
    until.tv_nsec += COPY_POLL_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->mu);
    while (!s->closing && !slab_drainable_locked(s, ix)) {
        if (!poll)
            pthread_cond_wait(&s->cv, &s->mu);
        else if (pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT)
            break;
    }
    int closing = s->closing;
    pthread_mutex_unlock(&s->mu);
    return closing ? -1 : 0;
}

/* The slab's reads are done (and its buffer free): queue the copies of its pieces into the
 * chunk's buffer on the copy stream, without waiting for any copy. */
static int slab_drain(vram_streamer *s, uint32_t ix) {
    slab *sl = &s->slabs[ix];
    char msg[VRAM_STREAM_ERR_MAX];
    uint32_t b = (uint32_t)(sl->q % s->nbuf);
    dbuf *B = &s->bufs[b];
    vram_status st;
    int wait_done;
    msg[0] = '\0';
    pthread_mutex_lock(&s->mu);
    st = take_group_locked(s, ix, msg, sizeof msg);
    if (st == VRAM_OK && sl->first_of_chunk) B->state = BUF_LOADING;
    wait_done = B->done_recorded;
    pthread_mutex_unlock(&s->mu);
    if (st != VRAM_OK) {
        stop_at(s, sl->q, st, msg);
        return -1;
    }
    if (sl->first_of_chunk) {
        /* the buffer is ours now: the consumer reads this only once it is READY */
        B->chunk = sl->ch;
        B->epoch_index = sl->epoch_index;
        B->visit = sl->visit;
        if (wait_done) {
            /* consumer -> reuse: no copy into the buffer before the consumer's work on it */
            st = s->ops.stream_wait_event(s->ops.ctx, s->copy_stream, B->done);
            if (st != VRAM_OK) {
                device_msg(s, msg, sizeof msg, "waiting for the consumer to finish a buffer", st);
                stop_at(s, sl->q, st, msg);
                return -1;
            }
        }
    }
    double t0 = now_s();
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < sl->npieces; i++) {
        piece *p = &sl->pieces[i];
        uint64_t rb = s->src.row_bytes[p->d], n = p->count * rb;
        st = s->ops.memcpy_async(s->ops.ctx, B->dev + s->region_off[p->d] + p->row * rb,
                                 sl->host + p->slab_off, n, VRAM_COPY_H2D, s->copy_stream);
        if (st != VRAM_OK) {
            device_msg(s, msg, sizeof msg, "copying a slab to the device", st);
            stop_at(s, sl->q, st, msg);
            return -1;
        }
        bytes += n;
    }
    st = s->ops.event_record(s->ops.ctx, sl->ev, s->copy_stream);
    double dt = now_s() - t0;
    if (st != VRAM_OK) {
        device_msg(s, msg, sizeof msg, "recording a slab's copy event", st);
        stop_at(s, sl->q, st, msg);
        return -1;
    }
    sl->copying = 1;
    pthread_mutex_lock(&s->mu);
    s->stats[sl->epoch_index].bytes_copied += bytes;
    s->stats[sl->epoch_index].copy_seconds += dt;
    pthread_mutex_unlock(&s->mu);
    if (sl->last_of_chunk) return publish(s, b, sl->q);
    return 0;
}

/* The ring of slabs, in order: a slab is filled (its reads posted) once the copy out of its
 * last use is done, and drained (its copies queued) once its reads are done. Every slab
 * that can be drained is, at once, so copies of several slabs are in flight together; the
 * producer blocks only when nothing can move without waiting: on reads (or the consumer
 * giving a buffer back) while a slab waits for them, looking every COPY_POLL_NS at the copy
 * that frees the next slab to fill; on that copy alone once every read slab is copying. */
static void produce_slabs(vram_streamer *s) {
    gen g;
    uint64_t fill = 0, drain = 0; /* slabs filled / drained so far (ring positions) */
    memset(&g, 0, sizeof g);
    g.q = 0;
    if (gen_load(s, &g) != 0) return;
    for (;;) {
        int moved = 0, r;
        while (fill - drain < s->nslabs && g.q < s->total_q) {
            uint32_t ix = (uint32_t)(fill % s->nslabs);
            slab *sl = &s->slabs[ix];
            if ((r = slab_copied(s, sl)) < 0) return; /* reader -> copy: not over a copy's source */
            if (r == 0) break;
            gen_fill(s, &g, sl);
            if (slab_post(s, ix) != 0) return;
            fill++;
            moved = 1;
            if (sl->last_of_chunk) {
                g.q++;
                if (gen_load(s, &g) != 0) return;
            }
        }
        while (drain < fill) {
            uint32_t ix = (uint32_t)(drain % s->nslabs);
            pthread_mutex_lock(&s->mu);
            r = s->closing ? -1 : slab_drainable_locked(s, ix);
            pthread_mutex_unlock(&s->mu);
            if (r < 0) return;
            if (r == 0) break;
            if (slab_drain(s, ix) != 0) return;
            drain++;
            moved = 1;
        }
        if (fill == drain && g.q >= s->total_q) return; /* every chunk published */
        if (moved) continue;
        int copy_blocks_fill = fill - drain < s->nslabs && g.q < s->total_q;
        if (drain < fill) {
            if (slab_wait_drainable(s, (uint32_t)(drain % s->nslabs), copy_blocks_fill) != 0) return;
        } else if (slab_settle(s, &s->slabs[fill % s->nslabs]) != 0) {
            return; /* drain == fill: only that copy can free anything */
        }
    }
}

static void *producer_main(void *arg) {
    vram_streamer *s = (vram_streamer *)arg;
    /* a thread starts on device 0: select the stream's before any work (a context on
     * another GPU otherwise, and copies issued from it) */
    vram_status st = s->ops.set_device(s->ops.ctx, s->cfg.device);
    if (st != VRAM_OK) {
        char msg[VRAM_STREAM_ERR_MAX];
        device_msg(s, msg, sizeof msg, "selecting the device for the producer", st);
        stop_at(s, 0, st, msg);
        return NULL;
    }
    if (s->direct)
        produce_direct(s);
    else
        produce_slabs(s);
    return NULL;
}

/* ---- open and close -------------------------------------------------------------------- */

static vram_status teardown(vram_streamer *s) {
    vram_status first = VRAM_OK, st;
#define KEEP(x)                                     \
    do {                                            \
        st = (x);                                   \
        if (st != VRAM_OK && first == VRAM_OK) first = st; \
    } while (0)
    if (s->sync_made) {
        pthread_mutex_lock(&s->mu);
        s->closing = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_cond_broadcast(&s->task_cv);
        pthread_cond_broadcast(&s->space_cv);
        pthread_mutex_unlock(&s->mu);
    }
    if (s->producer_started) pthread_join(s->producer, NULL);
    for (uint32_t i = 0; i < s->readers_started; i++) pthread_join(s->readers[i], NULL);
    /* the device may still be copying into or gathering out of our memory */
    if (s->copy_stream_made) KEEP(s->ops.stream_sync(s->ops.ctx, s->copy_stream));
    if (s->copy_stream_made) KEEP(s->ops.stream_sync(s->ops.ctx, s->cfg.consumer));
    for (uint32_t i = 0; i < MAX_HELD; i++) {
        if (s->gbuf[i]) KEEP(s->ops.dev_free(s->ops.ctx, s->cfg.device, s->gbuf[i]));
        if (s->bready[i]) KEEP(s->ops.event_destroy(s->ops.ctx, s->bready[i]));
        free(s->bsamples[i]);
    }
    if (s->bufs) {
        for (uint32_t b = 0; b < s->nbuf; b++) {
            dbuf *B = &s->bufs[b];
            if (B->dev) KEEP(s->ops.dev_free(s->ops.ctx, s->cfg.device, B->dev));
            if (B->order_dev && B->order_dev != B->order_host)
                KEEP(s->ops.dev_free(s->ops.ctx, s->cfg.device, B->order_dev));
            if (B->order_host) KEEP(s->ops.host_free_pinned(s->ops.ctx, B->order_host));
            if (B->ready) KEEP(s->ops.event_destroy(s->ops.ctx, B->ready));
            if (B->done) KEEP(s->ops.event_destroy(s->ops.ctx, B->done));
        }
    }
    if (s->slabs) {
        for (uint32_t i = 0; i < s->nslabs; i++)
            if (s->slabs[i].ev) KEEP(s->ops.event_destroy(s->ops.ctx, s->slabs[i].ev));
    }
    if (s->slab_mem) {
        if (s->slab_registered) KEEP(s->ops.host_unregister(s->ops.ctx, s->slab_mem));
        if (s->slab_pinned)
            KEEP(s->ops.host_free_pinned(s->ops.ctx, s->slab_mem));
        else
            munmap(s->slab_mem, s->slab_map_bytes);
    }
    if (s->copy_stream_made) KEEP(s->ops.stream_destroy(s->ops.ctx, s->copy_stream));
    if (s->sync_made) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        pthread_cond_destroy(&s->task_cv);
        pthread_cond_destroy(&s->space_cv);
    }
    free(s->bufs);
    free(s->slabs);
    free(s->groups);
    free(s->tasks);
    free(s->stats);
    free(s);
#undef KEEP
    return first;
}

/* Writes every page of [p, p + bytes) on all the readers at once, so that the kernel backs
 * the memory now (setup) rather than on the first read into it (streaming). */
static vram_status touch(vram_streamer *s, uint8_t *p, uint64_t bytes, uint64_t pg) {
    uint64_t per = round_up(vram__div_ceil_u64(bytes, s->readers_started ? s->readers_started : 1u), pg);
    uint32_t g = s->ngroups - 1u, n = 0;
    char msg[VRAM_STREAM_ERR_MAX];
    if (bytes == 0) return VRAM_OK;
    for (uint64_t at = 0; at < bytes; at += per) n++;
    pthread_mutex_lock(&s->mu);
    s->groups[g].pending = n;
    pthread_mutex_unlock(&s->mu);
    for (uint64_t at = 0; at < bytes; at += per) {
        task t;
        memset(&t, 0, sizeof t);
        t.touch = 1;
        t.dst = p + at;
        t.count = vram__min_u64(per, bytes - at);
        t.group = g;
        if (post(s, &t) != 0) return VRAM_E_STATE;
    }
    return wait_group(s, g, msg, sizeof msg) == VRAM_OK ? VRAM_OK : VRAM_E_STATE;
}

static uint64_t page_size(void) {
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (uint64_t)page : 4096u;
}

/* Allocates the slab ring: mmap, touched by the readers in parallel, then registered with
 * the device (pinned); host_alloc_pinned when registration is refused. */
static vram_status open_slabs(vram_streamer *s, char *err, size_t cap) {
    uint64_t total = 0;
    uint64_t pg = page_size();
    vram_status st;
    s->slab_bytes = round_up(s->slab_bytes, PIECE_ALIGN);
    if (vram__mul_u64(round_up(s->slab_bytes, pg), s->nslabs, &total) != VRAM_OK || total > SIZE_MAX) {
        vram_msgf(err, cap, "%u slabs of %llu bytes overflow the address space", s->nslabs,
                (unsigned long long)s->slab_bytes);
        return VRAM_E_OVERFLOW;
    }
    void *m = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        vram_msgf(err, cap, "cannot map %llu bytes of host memory for the slabs: %s",
                (unsigned long long)total, strerror(errno));
        return VRAM_E_NOMEM;
    }
    s->slab_mem = (uint8_t *)m;
    s->slab_map_bytes = (size_t)total;
    /* the kernel backs the pages before they are pinned */
    if (touch(s, s->slab_mem, total, pg) != VRAM_OK) return VRAM_E_STATE;
    st = s->ops.host_register(s->ops.ctx, s->slab_mem, total);
    if (st == VRAM_OK) {
        s->slab_registered = 1;
    } else {
        void *p = NULL;
        munmap(s->slab_mem, s->slab_map_bytes);
        s->slab_mem = NULL;
        st = s->ops.host_alloc_pinned(s->ops.ctx, total, &p);
        if (st != VRAM_OK || p == NULL) {
            vram_msgf(err, cap, "cannot pin %llu bytes of host memory for %u slabs: %s",
                    (unsigned long long)total, s->nslabs, vram_status_str(st));
            return st != VRAM_OK ? st : VRAM_E_OOM;
        }
        s->slab_mem = (uint8_t *)p;
        s->slab_pinned = 1;
    }
    for (uint32_t i = 0; i < s->nslabs; i++) s->slabs[i].host = s->slab_mem + (uint64_t)i * round_up(s->slab_bytes, pg);
    return VRAM_OK;
}

static vram_status dev_alloc(vram_streamer *s, uint64_t bytes, void **p, const char *what, char *err,
                             size_t cap) {
    char sz[64];
    vram_status st = s->ops.dev_alloc(s->ops.ctx, s->cfg.device, bytes, p);
    if (st != VRAM_OK || (*p == NULL && bytes > 0)) {
        *p = NULL;
        snprintf(sz, sizeof sz, "%llu bytes", (unsigned long long)bytes);
        char m[VRAM_STREAM_ERR_MAX];
        device_msg(s, m, sizeof m, "allocating", st != VRAM_OK ? st : VRAM_E_OOM);
        vram_msgf(err, cap, "cannot allocate %s of device memory for %s (%s)", sz, what, m);
        return st != VRAM_OK ? st : VRAM_E_OOM;
    }
    return VRAM_OK;
}

static vram_status make_event(vram_streamer *s, vram_event *e, char *err, size_t cap) {
    vram_status st = s->ops.event_create(s->ops.ctx, e);
    if (st != VRAM_OK) {
        char m[VRAM_STREAM_ERR_MAX];
        device_msg(s, m, sizeof m, "creating an event", st);
        vram_msgf(err, cap, "%s", m);
    }
    return st;
}

static void plan_msg(vram_status st, const vram_chunks_plan *p, char *err, size_t cap) {
    const vram_chunks_config *c = &p->config;
    switch (st) {
    case VRAM_E_NOSPACE:
        vram_msgf(err, cap,
                "a batch of %llu samples x %llu bytes = %llu bytes does not fit one buffer: the "
                "budget is %llu bytes in %u buffers (%llu bytes each), %llu bytes needed",
                (unsigned long long)c->batch, (unsigned long long)c->sample_bytes,
                (unsigned long long)p->batch_bytes, (unsigned long long)p->budget_bytes, c->buffers,
                (unsigned long long)p->buffer_bytes, (unsigned long long)p->needed_bytes);
        break;
    case VRAM_E_RANGE:
        if (c->rank >= c->world)
            vram_msgf(err, cap, "rank %u is not below world %u", c->rank, c->world);
        else if (p->rank_samples == 0 && c->shard == VRAM_SHARD_DROP)
            vram_msgf(err, cap, "%llu samples leave nothing for each of %u ranks",
                    (unsigned long long)c->samples, c->world);
        else if (c->drop_last && p->rank_samples < c->batch)
            vram_msgf(err, cap, "drop_last: each rank has %llu samples, less than one batch of %llu",
                    (unsigned long long)p->rank_samples, (unsigned long long)c->batch);
        else
            vram_msgf(err, cap, "cannot plan: %s (budget fraction or reserve)", vram_status_str(st));
        break;
    case VRAM_E_INVALID:
        if (c->samples == 0)
            vram_msgf(err, cap, "the source has no samples");
        else if (c->batch == 0)
            vram_msgf(err, cap, "the batch size is 0");
        else
            vram_msgf(err, cap, "cannot plan: no budget (give budget_bytes or free_bytes)");
        break;
    default: vram_msgf(err, cap, "cannot plan: %s", vram_status_str(st)); break;
    }
}

vram_status vram_streamer_open(const vram_device_ops *ops, const vram_source *src,
                               const vram_stream_config *cfg, vram_streamer **out, char *err,
                               size_t cap) {
    vram_streamer *s;
    vram_status st;
    if (err && cap) err[0] = '\0';
    if (out == NULL || src == NULL || cfg == NULL || ops == NULL) {
        vram_msgf(err, cap, "NULL argument");
        return VRAM_E_INVALID;
    }
    *out = NULL;
    if ((st = vram_device_ops_check(ops)) != VRAM_OK) {
        vram_msgf(err, cap, "the device table is not usable: %s", vram_status_str(st));
        return st;
    }
    if (src->read == NULL || src->datasets == 0 || src->datasets > VRAM_STREAM_MAX_DATASETS) {
        vram_msgf(err, cap, "the source has %u datasets (1 to %u) or no read function",
                src->datasets, VRAM_STREAM_MAX_DATASETS);
        return VRAM_E_INVALID;
    }
    if (src->samples == 0) {
        vram_msgf(err, cap, "the source has no samples (empty dataset)");
        return VRAM_E_INVALID;
    }
    s = (vram_streamer *)calloc(1, sizeof *s);
    if (s == NULL) {
        vram_msgf(err, cap, "out of host memory");
        return VRAM_E_NOMEM;
    }
    s->ops = *ops;
    s->src = *src;
    s->cfg = vram_stream_defaults(cfg, src);
    s->cfg.staging = resolve_staging(cfg->staging, ops);
    if (s->cfg.staging != VRAM_STAGE_SLABS && s->cfg.staging != VRAM_STAGE_DIRECT) {
        vram_msgf(err, cap, "unknown staging %d", (int)cfg->staging);
        free(s);
        return VRAM_E_INVALID;
    }
    s->direct = s->cfg.staging == VRAM_STAGE_DIRECT;
    if (s->direct && !host_memory_device(ops)) {
        vram_msgf(err, cap, "direct staging needs device memory that is host memory (the host "
                          "backend), not backend '%s'", ops->backend);
        free(s);
        return VRAM_E_NOT_SUPPORTED;
    }
    st = vram_stream_plan(src, &s->cfg, &s->plan);
    if (st != VRAM_OK) {
        plan_msg(st, &s->plan, err, cap);
        free(s);
        return st;
    }
    s->cfg.plan = s->plan.config;
    if (vram__mul_u64(s->cfg.epochs, s->plan.chunk_count, &s->total_q) != VRAM_OK ||
        s->cfg.epochs > (UINT64_MAX - s->cfg.first_epoch)) {
        vram_msgf(err, cap, "%llu epochs of %llu chunks overflow 64 bits",
                (unsigned long long)s->cfg.epochs, (unsigned long long)s->plan.chunk_count);
        free(s);
        return VRAM_E_OVERFLOW;
    }
    if (s->cfg.epochs > VRAM_STREAM_MAX_EPOCHS) {
        vram_msgf(err, cap, "%llu epochs: at most %llu", (unsigned long long)s->cfg.epochs,
                (unsigned long long)VRAM_STREAM_MAX_EPOCHS);
        free(s);
        return VRAM_E_RANGE;
    }
    s->gather = s->cfg.gather;
    if (s->plan.config.shuffle && s->gather == NULL) {
        if (!host_memory_device(ops)) {
            vram_msgf(err, cap, "shuffling on backend '%s' needs a device gather (the kernels "
                              "library's vram_k_gather_rows), and none was given", ops->backend);
            free(s);
            return VRAM_E_NOT_SUPPORTED;
        }
        s->gather = vram_stream_host_gather;
    }
    s->order_shared = s->direct; /* DIRECT: the order is read where it is written */
    s->nbuf = (uint32_t)vram__min_u64(s->plan.config.buffers, s->total_q);
    s->slab_bytes = vram__min_u64(s->cfg.slab_bytes, round_up(s->plan.bytes_per_chunk, PIECE_ALIGN));
    {
        uint64_t widest = 0;
        for (uint32_t d = 0; d < src->datasets; d++) widest = vram__max_u64(widest, src->row_bytes[d]);
        s->slab_bytes = vram__max_u64(s->slab_bytes, widest);
    }
    s->nslabs = s->direct ? 0 : s->cfg.slabs;
    s->ngroups = (s->direct ? s->nbuf : s->nslabs) + 1u; /* + the setup group */
    s->chunk_order_epoch = UINT64_MAX;
    s->stop_q = UINT64_MAX;

    /* layout of a chunk buffer and of a gather buffer */
    {
        uint64_t off = 0, goff = 0;
        for (uint32_t d = 0; d < src->datasets; d++) {
            s->region_off[d] = off;
            s->gather_off[d] = goff;
            off += s->plan.samples_per_chunk * src->row_bytes[d];
            goff += s->plan.config.batch * src->row_bytes[d];
        }
    }

    /* host-side state */
    s->bufs = (dbuf *)calloc(s->nbuf, sizeof *s->bufs);
    s->slabs = s->nslabs ? (slab *)calloc(s->nslabs, sizeof *s->slabs) : NULL;
    s->groups = (group *)calloc(s->ngroups, sizeof *s->groups);
    s->tasks = (task *)calloc(TASK_CAP, sizeof *s->tasks);
    s->stats = (vram_stream_stats *)calloc((size_t)s->cfg.epochs, sizeof *s->stats);
    for (uint32_t i = 0; i < MAX_HELD; i++)
        s->bsamples[i] = (uint64_t *)calloc((size_t)s->plan.config.batch, sizeof(uint64_t));
    if (!s->bufs || (s->nslabs && !s->slabs) || !s->groups || !s->tasks || !s->stats ||
        !s->bsamples[0] || !s->bsamples[1]) {
        vram_msgf(err, cap, "out of host memory for the streamer's bookkeeping");
        teardown(s);
        return VRAM_E_NOMEM;
    }
    if (pthread_mutex_init(&s->mu, NULL) != 0 || pthread_cond_init(&s->cv, NULL) != 0 ||
        pthread_cond_init(&s->task_cv, NULL) != 0 || pthread_cond_init(&s->space_cv, NULL) != 0) {
        vram_msgf(err, cap, "cannot create the streamer's locks");
        teardown(s);
        return VRAM_E_STATE;
    }
    s->sync_made = 1;

    /* the device */
    if ((st = ops->set_device(ops->ctx, s->cfg.device)) != VRAM_OK) {
        char m[VRAM_STREAM_ERR_MAX];
        device_msg(s, m, sizeof m, "selecting the device", st);
        vram_msgf(err, cap, "device %d: %s", s->cfg.device, m);
        teardown(s);
        return st;
    }
    if ((st = ops->stream_create(ops->ctx, s->cfg.device, &s->copy_stream)) != VRAM_OK) {
        char m[VRAM_STREAM_ERR_MAX];
        device_msg(s, m, sizeof m, "creating the copy stream", st);
        vram_msgf(err, cap, "%s", m);
        teardown(s);
        return st;
    }
    s->copy_stream_made = 1;
    for (uint32_t b = 0; b < s->nbuf; b++) {
        dbuf *B = &s->bufs[b];
        void *p = NULL;
        if ((st = dev_alloc(s, s->plan.bytes_per_chunk, &p, "a chunk buffer", err, cap)) != VRAM_OK) {
            teardown(s);
            return st;
        }
        B->dev = (uint8_t *)p;
        if ((st = make_event(s, &B->ready, err, cap)) != VRAM_OK ||
            (st = make_event(s, &B->done, err, cap)) != VRAM_OK) {
            teardown(s);
            return st;
        }
        if (s->plan.config.shuffle) {
            uint64_t ob = s->plan.samples_per_chunk * 8u;
            p = NULL;
            st = ops->host_alloc_pinned(ops->ctx, ob, &p);
            if (st != VRAM_OK || p == NULL) {
                vram_msgf(err, cap, "cannot allocate %llu bytes of pinned host memory for a "
                                  "shuffle order: %s",
                        (unsigned long long)ob, vram_status_str(st != VRAM_OK ? st : VRAM_E_OOM));
                teardown(s);
                return st != VRAM_OK ? st : VRAM_E_OOM;
            }
            B->order_host = (uint64_t *)p;
            if (s->order_shared) {
                B->order_dev = B->order_host;
            } else {
                p = NULL;
                if ((st = dev_alloc(s, ob, &p, "a shuffle order", err, cap)) != VRAM_OK) {
                    teardown(s);
                    return st;
                }
                B->order_dev = (uint64_t *)p;
            }
        }
    }
    for (uint32_t i = 0; i < MAX_HELD; i++) {
        if ((st = make_event(s, &s->bready[i], err, cap)) != VRAM_OK) {
            teardown(s);
            return st;
        }
        if (s->plan.config.shuffle) {
            void *p = NULL;
            if ((st = dev_alloc(s, s->plan.batch_bytes, &p, "a gather buffer", err, cap)) != VRAM_OK) {
                teardown(s);
                return st;
            }
            s->gbuf[i] = (uint8_t *)p;
        }
    }

    /* the threads, then the slabs (the readers touch their pages) */
    for (uint32_t i = 0; i < s->cfg.readers; i++) {
        if (pthread_create(&s->readers[i], NULL, reader_main, s) != 0) {
            vram_msgf(err, cap, "cannot start reader thread %u: %s", i, strerror(errno));
            teardown(s);
            return VRAM_E_STATE;
        }
        s->readers_started++;
    }
    if (host_memory_device(ops)) {
        /* the device buffers are host memory: back their pages now, not on the first write */
        for (uint32_t b = 0; b < s->nbuf; b++) {
            if (touch(s, s->bufs[b].dev, s->plan.bytes_per_chunk, page_size()) != VRAM_OK) {
                vram_msgf(err, cap, "cannot prepare the buffers");
                teardown(s);
                return VRAM_E_STATE;
            }
        }
    }
    if (!s->direct) {
        for (uint32_t i = 0; i < s->nslabs; i++) {
            if ((st = make_event(s, &s->slabs[i].ev, err, cap)) != VRAM_OK) {
                teardown(s);
                return st;
            }
        }
        if ((st = open_slabs(s, err, cap)) != VRAM_OK) {
            teardown(s);
            return st;
        }
    }
    s->epoch_mark = now_s();
    if (pthread_create(&s->producer, NULL, producer_main, s) != 0) {
        vram_msgf(err, cap, "cannot start the producer thread: %s", strerror(errno));
        teardown(s);
        return VRAM_E_STATE;
    }
    s->producer_started = 1;
    *out = s;
    return VRAM_OK;
}

const vram_chunks_plan *vram_streamer_plan(const vram_streamer *s) { return &s->plan; }
const vram_stream_config *vram_streamer_config(const vram_streamer *s) { return &s->cfg; }
const char *vram_streamer_staging(const vram_streamer *s) { return s->direct ? "direct" : "slabs"; }

const char *vram_streamer_error(vram_streamer *s) {
    const char *e;
    pthread_mutex_lock(&s->mu);
    e = s->err;
    pthread_mutex_unlock(&s->mu);
    return e;
}

vram_status vram_streamer_close(vram_streamer *s) {
    if (s == NULL) return VRAM_OK;
    return teardown(s);
}

/* ---- the consumer ------------------------------------------------------------------------- */

vram_status vram_streamer_next(vram_streamer *s, vram_batch *out) {
    vram_status st;
    double waited = 0;
    int first_of_chunk;
    dbuf *B;
    vram_range slots;
    uint32_t g, b;
    uint64_t ei;
    if (s == NULL || out == NULL) return VRAM_E_INVALID;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->mu);
    if (s->held_n >= MAX_HELD) {
        pthread_mutex_unlock(&s->mu);
        return VRAM_E_STATE;
    }
    for (;;) {
        if (s->cur_q >= s->total_q) {
            pthread_mutex_unlock(&s->mu);
            out->done = 1;
            return VRAM_OK;
        }
        b = (uint32_t)(s->cur_q % s->nbuf);
        B = &s->bufs[b];
        if (B->state == BUF_READY && B->seq == s->cur_q) {
            if (B->chunk.batches > 0) break;
            /* a chunk with no batch: nothing to deliver, give the buffer back */
            B->state = BUF_FREE;
            B->done_recorded = 0;
            s->cur_q++;
            s->cur_j = 0;
            pthread_cond_broadcast(&s->cv);
            continue;
        }
        if (s->stopped && s->stop_q <= s->cur_q) {
            st = s->stop_status;
            pthread_mutex_unlock(&s->mu);
            return st;
        }
        if (B->state == BUF_READY && B->seq != s->cur_q && (B->released < B->delivered || B->kept)) {
            /* the chunk needs this buffer, and the consumer still holds or keeps batches of it */
            pthread_mutex_unlock(&s->mu);
            return VRAM_E_STATE;
        }
        double w0 = now_s();
        pthread_cond_wait(&s->cv, &s->mu);
        waited += now_s() - w0;
    }
    first_of_chunk = s->cur_j == 0;
    ei = B->epoch_index;
    if (vram_chunks_batch(&s->plan, B->chunk.index, s->cur_j, &slots) != VRAM_OK) {
        pthread_mutex_unlock(&s->mu);
        return VRAM_E_STATE;
    }
    g = s->gslot;
    s->gslot = (s->gslot + 1u) % MAX_HELD;
    out->count = slots.end - slots.start;
    out->epoch_index = ei;
    out->epoch = s->cfg.first_epoch + ei;
    out->chunk = B->chunk.index;
    out->chunk_seq = s->cur_q;
    out->slot_start = slots.start;
    out->epoch_begin = B->visit == 0 && s->cur_j == 0;
    out->epoch_end = B->visit + 1 == s->plan.chunk_count && s->cur_j + 1 == B->chunk.batches;
    if (out->epoch_begin) s->epoch_batch = 0;
    out->index = s->epoch_batch++;
    out->serial_ = s->serial_next++;
    out->ready = s->bready[g];
    s->held_ring[out->serial_ % MAX_HELD].serial = out->serial_;
    s->held_ring[out->serial_ % MAX_HELD].buf = b;
    s->held_ring[out->serial_ % MAX_HELD].epoch_index = ei;
    s->held_ring[out->serial_ % MAX_HELD].epoch_end = out->epoch_end;
    s->held_n++;
    B->delivered++;
    if (++s->cur_j == B->chunk.batches) {
        s->cur_q++;
        s->cur_j = 0;
    }
    s->stats[ei].wait_seconds += waited;
    pthread_mutex_unlock(&s->mu);

    /* the batch's buffer cannot change while it is held: no lock needed from here */
    uint64_t *samples = s->bsamples[g];
    const uint64_t *order = s->plan.config.shuffle ? B->order_host : NULL;
    uint64_t n = s->plan.config.samples, base = B->chunk.start % n;
    /* (chunk.start + row) mod n, without a division a row (they cost more than the rest) */
    if (order) {
        for (uint64_t k = 0; k < out->count; k++) {
            uint64_t x = base + order[slots.start + k]; /* a row of the chunk: below n */
            while (x >= n) x -= n;
            samples[k] = x;
        }
    } else {
        uint64_t x = (base + slots.start % n) % n;
        for (uint64_t k = 0; k < out->count; k++) {
            samples[k] = x;
            if (++x == n) x = 0;
        }
    }
    out->samples = samples;
    if (first_of_chunk) {
        st = s->ops.stream_wait_event(s->ops.ctx, s->cfg.consumer, B->ready);
        if (st != VRAM_OK) goto device_error;
    }
    uint64_t gathered = 0;
    for (uint32_t d = 0; d < s->src.datasets; d++) {
        uint64_t rb = s->src.row_bytes[d];
        uint8_t *region = B->dev + s->region_off[d];
        if (s->plan.config.shuffle) {
            out->data[d] = s->gbuf[g] + s->gather_off[d];
            st = s->gather(out->data[d], region, B->chunk.rows, B->order_dev + slots.start,
                           out->count, rb, NULL, s->cfg.consumer);
            if (st != VRAM_OK) goto device_error;
            gathered += out->count * rb;
        } else {
            out->data[d] = region + slots.start * rb;
        }
    }
    st = s->ops.event_record(s->ops.ctx, out->ready, s->cfg.consumer);
    if (st != VRAM_OK) goto device_error;
    pthread_mutex_lock(&s->mu);
    s->stats[ei].batches++;
    s->stats[ei].samples += out->count;
    s->stats[ei].bytes_delivered += out->count * s->plan.config.sample_bytes;
    s->stats[ei].bytes_gathered += gathered;
    pthread_mutex_unlock(&s->mu);
    return VRAM_OK;

device_error: {
    char m[VRAM_STREAM_ERR_MAX];
    device_msg(s, m, sizeof m, s->plan.config.shuffle ? "gathering a batch" : "preparing a batch", st);
    pthread_mutex_lock(&s->mu);
    if (!s->stopped) {
        s->stopped = 1;
        s->stop_q = 0;
        s->stop_status = st;
        snprintf(s->err, sizeof s->err, "%s", m);
    }
    pthread_mutex_unlock(&s->mu);
    /* the batch stays held: release it so the buffer can be given back */
    return st;
}
}

/* A buffer whose batches were all delivered and released, and that nobody keeps, goes back
 * to the producer (after the consumer's work on it). Under s->mu. */
static vram_status buf_finish_locked(vram_streamer *s, dbuf *B) {
    vram_status st = VRAM_OK;
    if (B->released == B->chunk.batches && B->delivered == B->chunk.batches && B->kept == 0 &&
        B->state == BUF_READY) {
        st = s->ops.event_record(s->ops.ctx, B->done, s->cfg.consumer);
        B->done_recorded = st == VRAM_OK;
        B->state = BUF_FREE;
        pthread_cond_broadcast(&s->cv);
    }
    return st;
}

/* A device error met outside the producer: the stream stops there. Under s->mu. */
static void stop_device_locked(vram_streamer *s, vram_status st, const char *what) {
    if (st != VRAM_OK && !s->stopped) {
        s->stopped = 1;
        s->stop_q = 0;
        s->stop_status = st;
        device_msg(s, s->err, sizeof s->err, what, st);
    }
}

vram_status vram_streamer_release(vram_streamer *s, vram_batch *bt) {
    vram_status st = VRAM_OK;
    if (s == NULL || bt == NULL || bt->done) return VRAM_E_INVALID;
    pthread_mutex_lock(&s->mu);
    if (s->held_n == 0 || bt->serial_ != s->serial_oldest ||
        s->held_ring[bt->serial_ % MAX_HELD].serial != bt->serial_) {
        pthread_mutex_unlock(&s->mu);
        return VRAM_E_INVALID;
    }
    held h = s->held_ring[bt->serial_ % MAX_HELD];
    dbuf *B = &s->bufs[h.buf];
    s->held_n--;
    s->serial_oldest++;
    B->released++;
    st = buf_finish_locked(s, B);
    if (h.epoch_end) {
        double t = now_s();
        s->stats[h.epoch_index].seconds = t - s->epoch_mark;
        s->epoch_mark = t;
    }
    stop_device_locked(s, st, "recording that a buffer is done");
    pthread_mutex_unlock(&s->mu);
    bt->serial_ = UINT64_MAX;
    return st;
}

/* The buffer that holds chunk q, kept; NULL when none. Under s->mu. */
static dbuf *kept_buf_locked(vram_streamer *s, uint64_t q) {
    dbuf *B = &s->bufs[q % s->nbuf];
    return B->state == BUF_READY && B->seq == q && B->kept > 0 ? B : NULL;
}

vram_status vram_streamer_keep(vram_streamer *s, const vram_batch *b) {
    if (s == NULL || b == NULL || b->done) return VRAM_E_INVALID;
    if (!s->direct || s->plan.config.shuffle) return VRAM_E_NOT_SUPPORTED;
    pthread_mutex_lock(&s->mu);
    dbuf *B = &s->bufs[b->chunk_seq % s->nbuf];
    if (s->held_n == 0 || b->serial_ < s->serial_oldest || b->serial_ >= s->serial_next ||
        B->state != BUF_READY || B->seq != b->chunk_seq) {
        pthread_mutex_unlock(&s->mu);
        return VRAM_E_INVALID;
    }
    B->kept++;
    pthread_mutex_unlock(&s->mu);
    return VRAM_OK;
}

vram_status vram_streamer_unkeep(vram_streamer *s, uint64_t chunk_seq) {
    vram_status st;
    if (s == NULL) return VRAM_E_INVALID;
    pthread_mutex_lock(&s->mu);
    dbuf *B = kept_buf_locked(s, chunk_seq);
    if (B == NULL) {
        pthread_mutex_unlock(&s->mu);
        return VRAM_E_INVALID;
    }
    B->kept--;
    st = buf_finish_locked(s, B);
    stop_device_locked(s, st, "recording that a buffer is done");
    pthread_mutex_unlock(&s->mu);
    return st;
}

uint64_t vram_streamer_kept_blocker(vram_streamer *s) {
    uint64_t q = UINT64_MAX;
    if (s == NULL) return q;
    pthread_mutex_lock(&s->mu);
    if (s->cur_q < s->total_q) {
        dbuf *B = &s->bufs[s->cur_q % s->nbuf];
        if (B->state == BUF_READY && B->seq != s->cur_q && B->kept > 0 &&
            B->released == B->delivered)
            q = B->seq;
    }
    pthread_mutex_unlock(&s->mu);
    return q;
}

vram_status vram_streamer_detach(vram_streamer *s, uint64_t chunk_seq, int replace, void **mem) {
    vram_status st = VRAM_OK;
    void *p = NULL;
    if (s == NULL || mem == NULL) return VRAM_E_INVALID;
    *mem = NULL;
    /* the new buffer first, outside the lock (nothing else allocates it) */
    if (replace && (st = s->ops.dev_alloc(s->ops.ctx, s->cfg.device, s->plan.bytes_per_chunk, &p)) != VRAM_OK)
        return st;
    pthread_mutex_lock(&s->mu);
    dbuf *B = kept_buf_locked(s, chunk_seq);
    if (B == NULL) {
        pthread_mutex_unlock(&s->mu);
        if (p) (void)s->ops.dev_free(s->ops.ctx, s->cfg.device, p);
        return VRAM_E_INVALID;
    }
    *mem = B->dev;
    B->dev = (uint8_t *)p;
    B->kept = 0;
    /* without a replacement the buffer stays READY and is never loaded again: only close follows */
    if (replace) {
        st = buf_finish_locked(s, B);
        stop_device_locked(s, st, "recording that a buffer is done");
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

vram_status vram_streamer_stats(vram_streamer *s, uint64_t epoch_index, vram_stream_stats *out) {
    if (s == NULL || out == NULL) return VRAM_E_INVALID;
    pthread_mutex_lock(&s->mu);
    if (epoch_index == UINT64_MAX) {
        memset(out, 0, sizeof *out);
        for (uint64_t e = 0; e < s->cfg.epochs; e++) {
            const vram_stream_stats *x = &s->stats[e];
            out->batches += x->batches;
            out->samples += x->samples;
            out->bytes_delivered += x->bytes_delivered;
            out->bytes_read += x->bytes_read;
            out->bytes_copied += x->bytes_copied;
            out->bytes_gathered += x->bytes_gathered;
            out->chunks += x->chunks;
            out->read_seconds += x->read_seconds;
            out->copy_seconds += x->copy_seconds;
            out->wait_seconds += x->wait_seconds;
            out->seconds += x->seconds;
        }
    } else if (epoch_index >= s->cfg.epochs) {
        pthread_mutex_unlock(&s->mu);
        return VRAM_E_RANGE;
    } else {
        *out = s->stats[epoch_index];
    }
    pthread_mutex_unlock(&s->mu);
    return VRAM_OK;
}
