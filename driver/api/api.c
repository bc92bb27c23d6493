/* driver/api/api.c — see api.h. The commands run in process with stdout and stderr pointed
 * at memory (glibc's streams are plain variables, which it documents as assignable); the
 * streamer is driver/stream/stream.h over driver/hdf5/h5source.h, on the host device or
 * the CUDA backend. */
#include "api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/base.h>

#include "cli/cli.h"
#include "comm/ranks_env.h"
#include "cuda/cuda_device.h"
#include "device/host_device.h"
#include "stream/stream.h"
#ifdef VRAMKIT_HAVE_HDF5
#include "hdf5/h5source.h"
#endif
#if defined(VRAMKIT_HAVE_CUDA) && defined(__has_include)
#if __has_include(<vramkit_kernels.h>)
#include <vramkit_kernels.h>
#define API_DEVICE_GATHER vram_k_gather_rows
#endif
#endif

int vram_api_version(void) { return VRAM_API_VERSION; }
const char *vram_api_status_name(int status) { return vram_status_name((vram_status)status); }
const char *vram_api_status_str(int status) { return vram_status_str((vram_status)status); }
void vram_api_free(void *p) { free(p); }

/* ---- commands in process ------------------------------------------------------------------ */

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} api_commands[] = {
    {"estimate", cmd_estimate},
    {"plan", cmd_plan},
    {"chunks", cmd_chunks},
    {"doctor", cmd_doctor},
};

static pthread_mutex_t cli_lock = PTHREAD_MUTEX_INITIALIZER;

int vram_api_cli(int argc, const char *const *argv, char **out, char **err) {
    char *obuf = NULL, *ebuf = NULL;
    size_t olen = 0, elen = 0;
    int (*run)(int, char **) = NULL;
    int rc;
    if (out == NULL || err == NULL) return -1;
    *out = *err = NULL;
    for (size_t i = 0; argc >= 1 && argv && argv[0] && i < sizeof api_commands / sizeof api_commands[0]; i++)
        if (strcmp(argv[0], api_commands[i].name) == 0) run = api_commands[i].run;
    if (run == NULL) {
        const char *name = argc >= 1 && argv && argv[0] ? argv[0] : "";
        size_t n = strlen(name) + 160;
        *out = calloc(1, 1);
        *err = malloc(n);
        if (!*out || !*err) {
            free(*out);
            free(*err);
            *out = *err = NULL;
            return -1;
        }
        snprintf(*err, n, "vramkit: '%s' cannot run inside this process (estimate, plan, chunks and "
                          "doctor can; run the others as the vramkit command)\n", name);
        return VRAM_EXIT_USAGE;
    }
    /* getopt permutes argv: give the command its own copy of the pointers */
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (args == NULL) return -1;
    for (int i = 0; i < argc; i++) args[i] = (char *)argv[i];

    pthread_mutex_lock(&cli_lock);
    FILE *o = open_memstream(&obuf, &olen), *e = open_memstream(&ebuf, &elen);
    if (o == NULL || e == NULL) {
        if (o) fclose(o);
        if (e) fclose(e);
        free(obuf);
        free(ebuf);
        pthread_mutex_unlock(&cli_lock);
        free(args);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    FILE *saved_out = stdout, *saved_err = stderr;
    stdout = o;
    stderr = e;
    rc = run(argc, args);
    stdout = saved_out;
    stderr = saved_err;
    int bad = fclose(o) != 0;
    bad |= fclose(e) != 0;
    pthread_mutex_unlock(&cli_lock);
    free(args);
    if (bad) {
        free(obuf);
        free(ebuf);
        return -1;
    }
    *out = obuf;
    *err = ebuf;
    return rc;
}

/* ---- the streamer --------------------------------------------------------------------------- */

struct vram_api_stream {
    vram_device_ops ops;
    int device;                  /* -1: host memory */
    vram_streamer *s;
    vram_batch held;
    int holding;
    vram_stream own_consumer;    /* made here when the caller gave none on a GPU: NULL */
    const char *launcher;        /* who set the ranks ("" when given or single) */
#ifdef VRAMKIT_HAVE_HDF5
    vram_h5_file *f;
#endif
};

static int api_fail(char *err, size_t cap, int st, const char *fmt, const char *a, const char *b) {
    if (cap) snprintf(err, cap, fmt, a, b);
    return st;
}

int vram_api_local_gpu(char *err, size_t cap) {
    vram_ranks r;
    vram_device_ops ops;
    int count = 0, gpu = 0;
    if (cap) err[0] = '\0';
    vram_status st = vram_ranks_from_env(&r);
    if (st != VRAM_OK) {
        char why[256];
        vram_ranks_explain(&r, st, NULL, NULL, why, sizeof why);
        return api_fail(err, cap, st, "%s%s", why, "");
    }
    if ((st = vram_cuda_ops(&ops)) == VRAM_OK) st = ops.device_count(ops.ctx, &count);
    if (st == VRAM_OK) st = vram_ranks_gpu(&r, count, &gpu);
    if (st != VRAM_OK) return api_fail(err, cap, st, "cuda: no usable GPU (%s)%s", vram_status_str(st), "");
    return gpu;
}

uint32_t vram_api_stream_datasets(const vram_api_stream *s) {
#ifdef VRAMKIT_HAVE_HDF5
    return s ? s->f->datasets : 0;
#else
    (void)s;
    return 0;
#endif
}

#ifdef VRAMKIT_HAVE_HDF5
static const vram_h5_dataset *api_ds(const vram_api_stream *s, uint32_t d) {
    return s && d < s->f->datasets ? &s->f->ds[d] : NULL;
}
#endif

uint64_t vram_api_stream_row_bytes(const vram_api_stream *s, uint32_t d) {
#ifdef VRAMKIT_HAVE_HDF5
    const vram_h5_dataset *x = api_ds(s, d);
    return x ? x->row_bytes : 0;
#else
    (void)s;
    (void)d;
    return 0;
#endif
}

const char *vram_api_stream_type(const vram_api_stream *s, uint32_t d) {
#ifdef VRAMKIT_HAVE_HDF5
    const vram_h5_dataset *x = api_ds(s, d);
    return x ? x->type : "";
#else
    (void)s;
    (void)d;
    return "";
#endif
}

int vram_api_stream_rank(const vram_api_stream *s, uint32_t d) {
#ifdef VRAMKIT_HAVE_HDF5
    const vram_h5_dataset *x = api_ds(s, d);
    return x ? x->rank : 0;
#else
    (void)s;
    (void)d;
    return 0;
#endif
}

uint64_t vram_api_stream_dim(const vram_api_stream *s, uint32_t d, int k) {
#ifdef VRAMKIT_HAVE_HDF5
    const vram_h5_dataset *x = api_ds(s, d);
    return x && k >= 0 && k < x->rank ? x->dims[k] : 0;
#else
    (void)s;
    (void)d;
    (void)k;
    return 0;
#endif
}

uint64_t vram_api_stream_rank_samples(const vram_api_stream *s) {
    if (s == NULL) return 0;
    const vram_chunks_plan *p = vram_streamer_plan(s->s);
    return p->rank_samples - p->dropped_last;
}

uint64_t vram_api_stream_batches_per_epoch(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s)->batch_count : 0;
}

int vram_api_stream_device(const vram_api_stream *s) { return s ? s->device : -1; }

uint32_t vram_api_stream_rank_of(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s)->config.rank : 0;
}

uint32_t vram_api_stream_world(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s)->config.world : 0;
}

const char *vram_api_stream_launcher(const vram_api_stream *s) { return s ? s->launcher : ""; }

int vram_api_stream_close(vram_api_stream *s) {
    vram_status st = VRAM_OK;
    if (s == NULL) return VRAM_OK;
    if (s->holding) (void)vram_streamer_release(s->s, &s->held);
    if (s->s) st = vram_streamer_close(s->s);
    if (s->own_consumer) (void)s->ops.stream_destroy(s->ops.ctx, s->own_consumer);
#ifdef VRAMKIT_HAVE_HDF5
    if (s->f) vram_h5_close(s->f);
#endif
    free(s);
    return st;
}

int vram_api_stream_open(const char *path, const char *const *datasets, uint32_t n,
                         const vram_api_stream_opts *o, vram_api_stream **out, char *err,
                         size_t cap) {
    if (cap) err[0] = '\0';
    if (out == NULL || o == NULL || path == NULL || (n && datasets == NULL))
        return api_fail(err, cap, VRAM_E_INVALID, "%s%s", "stream: missing arguments", "");
    *out = NULL;
    if (o->size != sizeof *o)
        return api_fail(err, cap, VRAM_E_VERSION, "%s%s",
                        "stream: the options' layout differs from this library's (a package and "
                        "library of different versions)", "");
#ifndef VRAMKIT_HAVE_HDF5
    (void)n;
    return api_fail(err, cap, VRAM_E_NOT_BUILT, "%s: %s", path,
                    "this vramkit was built without HDF5");
#else
    vram_stream_config cfg;
    vram_status st;
    char why[VRAM_STREAM_ERR_MAX];
    vram_ranks ranks;
    uint32_t world = o->world, rank = o->rank;
    vram_api_stream *s = calloc(1, sizeof *s);
    if (s == NULL) return api_fail(err, cap, VRAM_E_NOMEM, "%s%s", "out of host memory", "");
    s->launcher = "";
    memset(&ranks, 0, sizeof ranks);
    ranks.local_rank = -1;
    if (o->world_auto && world == 0) { /* the launcher's variables, as vramkit stream --world auto */
        vram_status rs = vram_ranks_from_env(&ranks);
        if (rs == VRAM_OK && o->rank_given) rs = vram_ranks_with_rank(&ranks, o->rank);
        if (rs != VRAM_OK) {
            char why[256];
            vram_ranks_explain(&ranks, rs, NULL, NULL, why, sizeof why);
            vram_api_stream_close(s);
            return api_fail(err, cap, rs, "world=auto: %s%s", why, "");
        }
        world = ranks.world;
        rank = ranks.rank;
        if (ranks.launcher != VRAM_LAUNCHER_NONE) s->launcher = vram_launcher_name(ranks.launcher);
    }
    s->device = o->device == -1 ? -1 : o->device;
    if (n == 0) {
        vram_api_stream_close(s);
        return api_fail(err, cap, VRAM_E_INVALID, "%s: %s", path, "no dataset named");
    }
    st = vram_h5_open(path, datasets, n, &s->f, why, sizeof why);
    if (st != VRAM_OK) {
        vram_api_stream_close(s);
        return api_fail(err, cap, st, "%s%s", why, "");
    }
    memset(&cfg, 0, sizeof cfg);
    if (s->device < 0) {
        s->ops = vram_host_ops();
        cfg.device = 0;
    } else {
        int count = 0;
        st = vram_cuda_ops(&s->ops);
        if (st == VRAM_OK) st = s->ops.device_count(s->ops.ctx, &count);
        if (st == VRAM_OK && s->device == -2) { /* the local rank's GPU */
            int g = 0;
            st = vram_ranks_gpu(&ranks, count, &g);
            s->device = g;
        }
        if (st != VRAM_OK || s->device < 0 || s->device >= count) {
            char dev[48];
            snprintf(dev, sizeof dev, "cuda:%d", s->device);
            vram_api_stream_close(s);
            if (st == VRAM_OK) st = VRAM_E_RANGE;
            return api_fail(err, cap, st, "%s: %s", dev,
                            st == VRAM_E_RANGE ? "no such GPU on this machine"
                                               : vram_status_str(st));
        }
        cfg.device = s->device;
#ifdef API_DEVICE_GATHER
        cfg.gather = API_DEVICE_GATHER;
#endif
        if (o->consumer) {
            cfg.consumer = o->consumer;
        } else if ((st = s->ops.stream_create(s->ops.ctx, s->device, &s->own_consumer)) != VRAM_OK) {
            vram_api_stream_close(s);
            return api_fail(err, cap, st, "cannot create a stream: %s%s", vram_status_str(st), "");
        } else {
            cfg.consumer = s->own_consumer;
        }
    }
    cfg.plan.batch = o->batch;
    cfg.plan.budget_bytes = o->budget_bytes;
    cfg.plan.fraction = o->fraction;
    cfg.plan.reserve_bytes = o->reserve_bytes;
    cfg.plan.buffers = o->buffers;
    cfg.plan.world = world;
    cfg.plan.rank = rank;
    cfg.plan.shuffle = o->shuffle != 0;
    cfg.plan.seed = o->seed;
    cfg.plan.drop_last = o->drop_last != 0;
    if (o->no_pad) cfg.plan.shard = VRAM_SHARD_DROP;
    cfg.epochs = o->epochs ? o->epochs : 1;
    cfg.first_epoch = o->first_epoch;
    cfg.readers = o->readers;
    if (o->budget_bytes == 0) {
        uint64_t freeb = 0, total = 0;
        st = s->ops.mem_info(s->ops.ctx, cfg.device, &freeb, &total);
        if (st != VRAM_OK || freeb == 0) {
            vram_api_stream_close(s);
            return api_fail(err, cap, st ? st : VRAM_E_STATE,
                            "cannot read the device's free memory (%s): give budget_bytes%s",
                            vram_status_str(st), "");
        }
        cfg.plan.free_bytes = freeb;
    }
    vram_source src = vram_h5_source(s->f);
    st = vram_streamer_open(&s->ops, &src, &cfg, &s->s, why, sizeof why);
    if (st != VRAM_OK) {
        vram_api_stream_close(s);
        return api_fail(err, cap, st, "%s%s", why, "");
    }
    *out = s;
    return VRAM_OK;
#endif
}

int vram_api_stream_next(vram_api_stream *s, vram_api_batch *b, char *err, size_t cap) {
    if (cap) err[0] = '\0';
    if (s == NULL || b == NULL) return api_fail(err, cap, VRAM_E_INVALID, "%s%s", "stream: no stream", "");
    if (b->size != sizeof *b)
        return api_fail(err, cap, VRAM_E_VERSION, "%s%s",
                        "stream: the batch's layout differs from this library's", "");
    if (s->holding)
        return api_fail(err, cap, VRAM_E_STATE, "%s%s",
                        "stream: the previous batch is still held (release it first)", "");
    vram_status st = vram_streamer_next(s->s, &s->held);
    if (st != VRAM_OK) {
        const char *why = vram_streamer_error(s->s);
        return api_fail(err, cap, st, "%s%s", why[0] ? why : vram_status_str(st), "");
    }
    memset(b, 0, sizeof *b);
    b->size = sizeof *b;
    b->count = s->held.count;
    b->epoch = s->held.epoch;
    b->epoch_index = s->held.epoch_index;
    b->index = s->held.index;
    b->epoch_begin = s->held.epoch_begin;
    b->epoch_end = s->held.epoch_end;
    b->done = s->held.done;
    b->samples = s->held.samples;
    for (int d = 0; d < 16 && d < (int)VRAM_STREAM_MAX_DATASETS; d++) b->data[d] = s->held.data[d];
    s->holding = !s->held.done; /* the end holds nothing */
    b->held = s->holding;
    return VRAM_OK;
}

int vram_api_stream_release(vram_api_stream *s, char *err, size_t cap) {
    if (cap) err[0] = '\0';
    if (s == NULL) return api_fail(err, cap, VRAM_E_INVALID, "%s%s", "stream: no stream", "");
    if (!s->holding) return api_fail(err, cap, VRAM_E_STATE, "%s%s", "stream: no batch is held", "");
    vram_status st = vram_streamer_release(s->s, &s->held);
    s->holding = 0;
    if (st != VRAM_OK) return api_fail(err, cap, st, "releasing a batch: %s%s", vram_status_str(st), "");
    return VRAM_OK;
}
