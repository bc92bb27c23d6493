/* driver/comm/ranks_env.c — ranks from the environment, and the words for what is wrong. */
#include "comm/ranks_env.h"

#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vram_ranks_getenv(void *ctx, const char *name) {
    (void)ctx;
    return getenv(name);
}

vram_status vram_ranks_from_env(vram_ranks *out) {
    return vram_ranks_from_vars(vram_ranks_getenv, NULL, out);
}

/* The value of a variable for a message: quoted when it is not a plain number, bounded. */
static const char *shown(vram_ranks_lookup get, void *ctx, const char *name, char *buf, size_t cap) {
    const char *v = name != NULL ? get(ctx, name) : NULL;
    uint32_t n = 0;
    if (v == NULL) return "(unset)";
    if (vram__ranks_number(v, UINT32_MAX, &n) == VRAM_OK)
        snprintf(buf, cap, "%u", n);
    else {
        size_t i = 0, o = 0;
        buf[o++] = '\'';
        for (; v[i] != '\0' && o + 5 < cap && i < 40; i++) /* printable ASCII only */
            buf[o++] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
        if (v[i] != '\0' && o + 4 < cap) buf[o++] = '.', buf[o++] = '.', buf[o++] = '.';
        buf[o++] = '\'';
        buf[o] = '\0';
    }
    return buf;
}

const char *vram_ranks_explain(const vram_ranks *r, vram_status st, vram_ranks_lookup get,
                               void *ctx, char *buf, size_t cap) {
    char a[64], b[64];
    const char *who = vram_launcher_name(r->launcher);
    if (get == NULL) get = vram_ranks_getenv;
    switch (r->fault) {
    case VRAM_RANKS_FAULT_MISSING:
        snprintf(buf, cap, "%s is set but %s is not (%s sets both)", r->var_a, r->var_b, who);
        break;
    case VRAM_RANKS_FAULT_NUMBER: {
        const char *nr = NULL, *ns = NULL, *nl = NULL;
        /* by name: the same literal need not be one address in every translation unit */
        int size = vram_launcher_vars(r->launcher, &nr, &ns, &nl) == VRAM_OK && r->var_a != NULL &&
                   ns != NULL && strcmp(r->var_a, ns) == 0;
        snprintf(buf, cap, "%s=%s (%s) is not a whole number from %u to %u", r->var_a,
                 shown(get, ctx, r->var_a, a, sizeof a), who, size ? 1u : 0u,
                 size ? VRAM_RANKS_MAX_WORLD : VRAM_RANKS_MAX_WORLD - 1u);
        break;
    }
    case VRAM_RANKS_FAULT_NOT_BELOW:
        snprintf(buf, cap, "%s=%s is not below %s=%s (%s)", r->var_a,
                 shown(get, ctx, r->var_a, a, sizeof a), r->var_b,
                 shown(get, ctx, r->var_b, b, sizeof b), who);
        break;
    case VRAM_RANKS_FAULT_FLAG_RANK:
        if (r->var_b != NULL)
            snprintf(buf, cap, "--rank is not below %s=%s (%s)", r->var_b,
                     shown(get, ctx, r->var_b, b, sizeof b), who);
        else
            snprintf(buf, cap, "--rank is not below the world size %u", r->world);
        break;
    default:
        snprintf(buf, cap, "ranks from the launcher: %s", vram_status_str(st));
        break;
    }
    return buf;
}

/* ---- --world and --rank ------------------------------------------------------------------ */

vram_status vram_world_set(vram_world_opts *w, const char *name, const char *text, char *err,
                           size_t cap) {
    const unsigned flags = VRAM_OPT_NEGATIVE | VRAM_OPT_AT_LEAST;
    uint64_t v = 0;
    vram_status st;
    if (strcmp(name, "rank") == 0) {
        if ((st = vram_opt_count("rank", text, 0, UINT32_MAX - 1u, flags, &v, err, cap)) != VRAM_OK)
            return st;
        w->rank = (uint32_t)v;
        w->have_rank = 1;
        return VRAM_OK;
    }
    if (strcmp(name, "world") != 0) return VRAM_E_UNHANDLED;
    if (text != NULL && strcmp(text, "auto") == 0) {
        w->have_world = 0;
        return VRAM_OK;
    }
    if (text == NULL || (text[0] != '-' && (text[0] < '0' || text[0] > '9')))
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "--world: '%s' is not auto or a whole number from 1 to %u",
                           text ? text : "", UINT32_MAX);
    if ((st = vram_opt_count("world", text, 1, UINT32_MAX, flags, &v, err, cap)) != VRAM_OK) return st;
    w->have_world = 1;
    w->world = (uint32_t)v;
    return VRAM_OK;
}

vram_status vram_world_resolve(const vram_world_opts *w, vram_ranks *out, char *err, size_t cap) {
    char line[256];
    vram_status st;
    if (w->have_world) {
        memset(out, 0, sizeof *out);
        out->launcher = VRAM_LAUNCHER_FLAGS;
        out->world = w->world;
        out->rank = w->have_rank ? w->rank : 0u;
        out->local_rank = -1;
        if (out->rank >= out->world)
            return vram_errorf(err, cap, VRAM_E_INVALID, "--rank %u is not below --world %u",
                               out->rank, out->world);
        return VRAM_OK;
    }
    if ((st = vram_ranks_from_env(out)) != VRAM_OK)
        return vram_errorf(err, cap, VRAM_E_INVALID, "%s",
                           vram_ranks_explain(out, st, NULL, NULL, line, sizeof line));
    if (w->have_rank && vram_ranks_with_rank(out, w->rank) != VRAM_OK) {
        if (out->launcher == VRAM_LAUNCHER_NONE)
            return vram_errorf(err, cap, VRAM_E_INVALID, "--rank %u is not below --world %u",
                               w->rank, out->world);
        return vram_errorf(err, cap, VRAM_E_INVALID, "--rank %u is not below %s=%u (%s)", w->rank,
                           out->var_b, out->world, vram_launcher_name(out->launcher));
    }
    return VRAM_OK;
}
