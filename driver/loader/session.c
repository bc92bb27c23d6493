/* driver/loader/session.c — see session.h. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "hdf5/h5describe.h"
#include "util/clock.h"
#include "util/text.h"

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

/* ---- options ------------------------------------------------------------------------- */

/* Counts: a value starting with '-' is called negative, one below the minimum has its own
 * line; sizes: only zero has its own line. */
#define COUNT_WORDS (VRAM_OPT_NEGATIVE | VRAM_OPT_AT_LEAST)
#define SIZE_WORDS VRAM_OPT_AT_LEAST

static vram_status parse_device(const char *text, vram_stream_opts *o, char *err, size_t cap) {
    uint64_t n = 0;
    if (strcmp(text, "cpu") == 0) {
        o->device = VRAM_STREAM_DEVICE_CPU;
        return VRAM_OK;
    }
    if (strcmp(text, "cuda") == 0) {
        o->device = VRAM_STREAM_DEVICE_CUDA;
        o->ordinal = 0;
        return VRAM_OK;
    }
    if (strncmp(text, "cuda:", 5) == 0 && vram_parse_u64(text + 5, VRAM_MAX_DEVICES - 1u, &n) == VRAM_OK) {
        o->device = VRAM_STREAM_DEVICE_CUDA;
        o->ordinal = (int)n;
        return VRAM_OK;
    }
    FAIL("--device: '%s' is not cpu or cuda:N (N from 0 to %d)", text, VRAM_MAX_DEVICES - 1);
}

vram_status vram_stream_set(vram_stream_opts *o, const char *name, const char *a, char *err,
                            size_t cap) {
    vram_stream_config *c = &o->cfg;
    uint64_t v = 0;
    vram_status st = VRAM_OK;
#define IS(n) (strcmp(name, n) == 0)
    if (IS("dataset")) {
        if (o->n_names == VRAM_STREAM_MAX_DATASETS) FAIL("--dataset: at most %u datasets", VRAM_STREAM_MAX_DATASETS);
        o->names[o->n_names++] = a;
    } else if (IS("batch")) {
        st = vram_opt_count("batch", a, 1, UINT64_MAX, COUNT_WORDS, &c->plan.batch, err, cap);
    } else if (IS("epochs")) {
        st = vram_opt_count("epochs", a, 1, VRAM_STREAM_MAX_EPOCHS, COUNT_WORDS, &c->epochs, err, cap);
    } else if (IS("first-epoch")) {
        st = vram_opt_count("first-epoch", a, 0, UINT64_MAX, COUNT_WORDS, &c->first_epoch, err, cap);
    } else if (IS("shuffle")) {
        c->plan.shuffle = 1;
    } else if (IS("seed")) {
        st = vram_opt_count("seed", a, 0, UINT64_MAX, COUNT_WORDS, &c->plan.seed, err, cap);
        o->have_seed = 1;
    } else if (IS("drop-last")) {
        c->plan.drop_last = 1;
    } else if (IS("no-pad")) {
        c->plan.shard = VRAM_SHARD_DROP;
    } else if (IS("budget")) {
        st = vram_opt_size("budget", a, 0, SIZE_WORDS, &c->plan.budget_bytes, err, cap);
        o->have_budget = 1;
    } else if (IS("fraction")) {
        st = vram_opt_fraction("fraction", a, &c->plan.fraction, err, cap);
        o->have_fraction = 1;
    } else if (IS("reserve")) {
        st = vram_opt_size("reserve", a, 1, SIZE_WORDS, &c->plan.reserve_bytes, err, cap);
        o->have_reserve = 1;
    } else if (IS("buffers")) {
        if ((st = vram_opt_count("buffers", a, 1, 64, COUNT_WORDS, &v, err, cap)) == VRAM_OK)
            c->plan.buffers = (uint32_t)v;
    } else if (IS("device")) {
        st = parse_device(a, o, err, cap);
    } else if (IS("readers")) {
        if ((st = vram_opt_count("readers", a, 1, VRAM_STREAM_MAX_READERS, COUNT_WORDS, &v, err, cap)) == VRAM_OK)
            c->readers = (uint32_t)v;
    } else if (IS("slab")) {
        st = vram_opt_size("slab", a, 0, SIZE_WORDS, &c->slab_bytes, err, cap);
    } else {
        return vram_world_set(&o->world, name, a, err, cap);
    }
#undef IS
    return st;
}

vram_status vram_stream_check(vram_stream_opts *o, vram_ranks *ranks, char *err, size_t cap) {
    vram_status st;
    if (o->n_names == 0) FAIL("--dataset is required (e.g. --dataset /features)");
    if (o->have_budget && (o->have_fraction || o->have_reserve))
        FAIL("--budget is a fixed size: --fraction and --reserve apply to the device's free memory "
             "instead");
    if (o->have_seed && !o->cfg.plan.shuffle) FAIL("--seed applies to --shuffle, which is missing");
    if ((st = vram_world_resolve(&o->world, ranks, err, cap)) != VRAM_OK) return st;
    o->cfg.plan.world = ranks->world;
    o->cfg.plan.rank = ranks->rank;
    return VRAM_OK;
}

/* ---- the session --------------------------------------------------------------------- */

vram_status vram_stream_session_close(vram_stream_session *s) {
    vram_status st = VRAM_OK;
    if (s == NULL) return VRAM_OK;
    if (s->s) st = vram_streamer_close(s->s);
    vram_stream_backend_close(&s->be);
    if (s->f) vram_h5_close(s->f);
    free(s);
    return st;
}

/* Opening the streamer: "does not fit" is an answer; the rest say what is wrong. */
static vram_status open_streamer(vram_stream_session *s, const vram_stream_config *cfg, char *err,
                                 size_t cap) {
    char why[VRAM_STREAM_ERR_MAX];
    vram_source src = vram_h5_source(s->f);
    vram_status st;
    s->started = vram_now_s();
    st = vram_streamer_open(&s->be.ops, &src, cfg, &s->s, why, sizeof why);
    s->setup_seconds = vram_now_s() - s->started;
    if (st == VRAM_E_NOSPACE) return vram_errorf(err, cap, st, "does not fit: %s", why);
    if (st != VRAM_OK) return vram_errorf(err, cap, st, "%s", why);
    return VRAM_OK;
}

vram_status vram_stream_session_open(const vram_stream_opts *o, const vram_ranks *ranks,
                                     vram_stream_session **out, char *err, size_t cap) {
    vram_stream_config cfg = o->cfg;
    vram_stream_session *s;
    vram_status st;
    *out = NULL;
    if ((s = calloc(1, sizeof *s)) == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of host memory");
    s->ranks = *ranks;
    if ((st = vram_h5_open(o->file, o->names, o->n_names, &s->f, err, cap)) != VRAM_OK) goto fail;
    if ((st = vram_stream_backend_open(o->device, o->ordinal, ranks, &s->be, err, cap)) != VRAM_OK)
        goto fail;
    cfg.device = s->be.device;
    if (!o->have_budget && cfg.plan.budget_bytes == 0) {
        uint64_t freeb = 0, total = 0;
        st = s->be.ops.mem_info(s->be.ops.ctx, cfg.device, &freeb, &total);
        if (st != VRAM_OK || freeb == 0) {
            st = vram_errorf(err, cap, st != VRAM_OK ? st : VRAM_E_NO_DEVICE,
                             "%s: cannot read free memory (%s): give --budget SIZE", s->be.label,
                             vram_status_str(st));
            goto fail;
        }
        cfg.plan.free_bytes = freeb;
        if (cfg.plan.reserve_bytes > freeb) {
            char a[32], b[32];
            st = vram_errorf(err, cap, VRAM_E_INVALID, "--reserve %s is more than the %s free on %s",
                             vram_fmt_size(cfg.plan.reserve_bytes, a, sizeof a),
                             vram_fmt_size(freeb, b, sizeof b), s->be.label);
            goto fail;
        }
    }
    if ((st = vram_stream_backend_consumer(&s->be, o->consumer, err, cap)) != VRAM_OK) goto fail;
    cfg.gather = s->be.gather;
    cfg.consumer = s->be.consumer;
    if (cfg.plan.batch == 0) cfg.plan.batch = VRAM_STREAM_DEFAULT_BATCH;
    if (cfg.epochs == 0) cfg.epochs = 1;
    if ((st = open_streamer(s, &cfg, err, cap)) != VRAM_OK) goto fail;
    *out = s;
    return VRAM_OK;
fail:
    vram_stream_session_close(s);
    return st;
}

/* ---- the report ---------------------------------------------------------------------- */

double vram_stream_rate(uint64_t bytes, double seconds) {
    return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0;
}

double vram_stream_read_rate(const vram_stream_report *r) {
    return r->total.read_seconds > 0
               ? vram_stream_rate(r->total.bytes_read, r->total.read_seconds / r->readers)
               : 0.0;
}

vram_status vram_stream_report_make(const vram_stream_session *s, double seconds,
                                    vram_stream_report *r) {
    memset(r, 0, sizeof *r);
    r->nepochs = vram_streamer_config(s->s)->epochs;
    r->setup = s->setup_seconds;
    r->seconds = seconds;
    r->readers = vram_streamer_config(s->s)->readers;
    r->staging = vram_streamer_staging(s->s);
    r->epochs = (vram_stream_stats *)calloc((size_t)r->nepochs, sizeof *r->epochs);
    if (r->epochs == NULL) return VRAM_E_NOMEM;
    for (uint64_t e = 0; e < r->nepochs; e++) (void)vram_streamer_stats(s->s, e, &r->epochs[e]);
    (void)vram_streamer_stats(s->s, UINT64_MAX, &r->total);
    return VRAM_OK;
}

void vram_stream_report_free(vram_stream_report *r) {
    free(r->epochs);
    r->epochs = NULL;
}

static void stats_json(vram_json *j, const vram_stream_stats *x) {
    vram_json_key(j, "batches"); vram_json_u64(j, x->batches);
    vram_json_key(j, "samples"); vram_json_u64(j, x->samples);
    vram_json_key(j, "bytes_delivered"); vram_json_u64(j, x->bytes_delivered);
    vram_json_key(j, "bytes_read"); vram_json_u64(j, x->bytes_read);
    vram_json_key(j, "bytes_copied"); vram_json_u64(j, x->bytes_copied);
    vram_json_key(j, "bytes_gathered"); vram_json_u64(j, x->bytes_gathered);
    vram_json_key(j, "chunks"); vram_json_u64(j, x->chunks);
    vram_json_key(j, "read_seconds"); vram_json_double(j, x->read_seconds);
    vram_json_key(j, "copy_seconds"); vram_json_double(j, x->copy_seconds);
    vram_json_key(j, "wait_seconds"); vram_json_double(j, x->wait_seconds);
    vram_json_key(j, "seconds"); vram_json_double(j, x->seconds);
}

void vram_stream_report_json(vram_json *j, const vram_stream_session *s,
                             const vram_stream_report *r) {
    const vram_chunks_plan *p = vram_streamer_plan(s->s);
    const vram_chunks_config *c = &p->config;
    vram_json_begin_object(j);
    vram_h5_json(j, s->f);
    vram_json_key(j, "device"); vram_json_string(j, s->be.label);
    vram_json_key(j, "backend"); vram_json_string(j, s->be.ops.backend);
    vram_json_key(j, "staging"); vram_json_string(j, r->staging);
    vram_json_key(j, "readers"); vram_json_u64(j, r->readers);
    vram_json_key(j, "plan");
    vram_json_begin_object(j);
    vram_json_key(j, "samples"); vram_json_u64(j, c->samples);
    vram_json_key(j, "sample_bytes"); vram_json_u64(j, c->sample_bytes);
    vram_json_key(j, "batch"); vram_json_u64(j, c->batch);
    vram_json_key(j, "buffers"); vram_json_u64(j, c->buffers);
    vram_json_key(j, "budget_bytes"); vram_json_u64(j, p->budget_bytes);
    vram_json_key(j, "samples_per_chunk"); vram_json_u64(j, p->samples_per_chunk);
    vram_json_key(j, "bytes_per_chunk"); vram_json_u64(j, p->bytes_per_chunk);
    vram_json_key(j, "chunk_count"); vram_json_u64(j, p->chunk_count);
    vram_json_key(j, "batches_per_epoch"); vram_json_u64(j, p->batch_count);
    vram_json_key(j, "rank_samples"); vram_json_u64(j, p->rank_samples);
    vram_json_key(j, "dropped_last"); vram_json_u64(j, p->dropped_last);
    vram_json_key(j, "world"); vram_json_u64(j, c->world);
    vram_json_key(j, "rank"); vram_json_u64(j, c->rank);
    vram_json_key(j, "launcher"); vram_json_string(j, vram_launcher_name(s->ranks.launcher));
    vram_json_key(j, "local_rank");
    if (s->ranks.local_rank >= 0) vram_json_i64(j, s->ranks.local_rank); else vram_json_null(j);
    vram_json_key(j, "shuffle"); vram_json_bool(j, c->shuffle);
    vram_json_key(j, "seed"); vram_json_u64(j, c->seed);
    vram_json_key(j, "drop_last"); vram_json_bool(j, c->drop_last);
    vram_json_end_object(j);
    vram_json_key(j, "epochs");
    vram_json_begin_array(j);
    for (uint64_t e = 0; e < r->nepochs; e++) {
        vram_json_begin_object(j);
        vram_json_key(j, "epoch"); vram_json_u64(j, e);
        stats_json(j, &r->epochs[e]);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key(j, "total");
    vram_json_begin_object(j);
    stats_json(j, &r->total);
    vram_json_end_object(j);
    vram_json_key(j, "setup_seconds"); vram_json_double(j, r->setup);
    vram_json_key(j, "seconds"); vram_json_double(j, r->seconds);
    vram_json_key(j, "gbps");
    vram_json_begin_object(j);
    vram_json_key(j, "end_to_end"); vram_json_double(j, vram_stream_rate(r->total.bytes_delivered, r->seconds));
    vram_json_key(j, "read"); vram_json_double(j, vram_stream_read_rate(r));
    vram_json_key(j, "copy");
    if (r->total.bytes_copied && r->total.copy_seconds > 0)
        vram_json_double(j, vram_stream_rate(r->total.bytes_copied, r->total.copy_seconds));
    else
        vram_json_null(j);
    vram_json_end_object(j);
    vram_json_key(j, "verify");
    if (r->verified) {
        vram_json_begin_object(j);
        vram_json_key(j, "ok"); vram_json_bool(j, 1);
        vram_json_key(j, "samples_checked"); vram_json_u64(j, r->samples_checked);
        vram_json_key(j, "epochs_checked"); vram_json_u64(j, r->epochs_checked);
        vram_json_end_object(j);
    } else {
        vram_json_null(j);
    }
    vram_json_end_object(j);
}

