/* driver/cli/cli_stream.c — the HDF5 side of `vramkit chunks FILE` and `vramkit stream`
 * (cli_stream.h): status -> exit code, dataset descriptions. Without HDF5 only the message
 * that says so is compiled. */
#include "cli_stream.h"

#include <string.h>

#include "comm/ranks_env.h"

int cli_h5_built(void) {
#ifdef VRAMKIT_HAVE_HDF5
    return 1;
#else
    return 0;
#endif
}

int cli_h5_open(const char *cmd, const char *path, const char *const *names, uint32_t n,
                vram_h5_file **out) {
    *out = NULL;
#ifdef VRAMKIT_HAVE_HDF5
    char err[VRAM_STREAM_ERR_MAX];
    vram_status st = vram_h5_open(path, names, n, out, err, sizeof err);
    if (st == VRAM_OK) return -1;
    return cli_error(cli_exit_code(st), cmd,
                     "%s", err);
#else
    (void)names;
    (void)n;
    return cli_error(VRAM_EXIT_ENV, cmd,
                     "%s: this vramkit was built without HDF5, so it cannot read files (install "
                     "libhdf5-dev and rebuild)",
                     path);
#endif
}

void cli_h5_close(vram_h5_file *f) {
#ifdef VRAMKIT_HAVE_HDF5
    vram_h5_close(f);
#else
    (void)f;
#endif
}

vram_source cli_h5_source(vram_h5_file *f) {
#ifdef VRAMKIT_HAVE_HDF5
    return vram_h5_source(f);
#else
    vram_source s;
    (void)f;
    memset(&s, 0, sizeof s);
    return s;
#endif
}

vram_status cli_h5_read_plain(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                              void *dst, char *err, size_t cap) {
#ifdef VRAMKIT_HAVE_HDF5
    return vram_h5_read_plain(f, d, first, count, dst, err, cap);
#else
    (void)f, (void)d, (void)first, (void)count, (void)dst;
    snprintf(err, cap, "built without HDF5");
    return VRAM_E_NOT_BUILT;
#endif
}

const char *cli_h5_shape(const vram_h5_dataset *ds, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < ds->rank && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%llu", i ? " x " : "", (unsigned long long)ds->dims[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
    return buf;
}

/* vram_h5_path_name's words, here so that a build without HDF5 links. */
static const char *path_name(vram_h5_path p) {
    switch (p) {
    case VRAM_H5_PATH_CONTIGUOUS: return "contiguous";
    case VRAM_H5_PATH_CHUNKED: return "chunked";
    case VRAM_H5_PATH_HDF5: return "hdf5";
    }
    return "unknown";
}

static void path_text(const vram_h5_dataset *ds, char *buf, size_t cap) {
    switch (ds->path) {
    case VRAM_H5_PATH_CONTIGUOUS:
        snprintf(buf, cap, "contiguous: pread from offset %llu", (unsigned long long)ds->offset);
        break;
    case VRAM_H5_PATH_CHUNKED:
        snprintf(buf, cap, "chunked: pread at %llu chunk addresses (%llu samples each)",
                 (unsigned long long)ds->nchunks, (unsigned long long)ds->chunk_rows);
        break;
    default: snprintf(buf, cap, "hdf5: H5Dread per range (%s)", ds->reason); break;
    }
}

void cli_h5_text(FILE *out, const vram_h5_file *f) {
    size_t w = 4;
    for (uint32_t d = 0; d < f->datasets; d++) w = strlen(f->ds[d].name) > w ? strlen(f->ds[d].name) : w;
    if (w > 40) w = 40;
    for (uint32_t d = 0; d < f->datasets; d++) {
        const vram_h5_dataset *ds = &f->ds[d];
        char shape[256], bytes[32], path[320];
        cli_h5_shape(ds, shape, sizeof shape);
        vram_fmt_size(ds->row_bytes, bytes, sizeof bytes);
        path_text(ds, path, sizeof path);
        fprintf(out, "  %-*s  %s %s, %s per sample; %s\n", (int)w, ds->name, shape, ds->type, bytes, path);
    }
}

void cli_h5_json(vram_json *j, const vram_h5_file *f) {
    vram_json_key(j, "file");
    vram_json_string(j, f->path);
    vram_json_key(j, "datasets");
    vram_json_begin_array(j);
    for (uint32_t d = 0; d < f->datasets; d++) {
        const vram_h5_dataset *ds = &f->ds[d];
        vram_json_begin_object(j);
        vram_json_key(j, "name");
        vram_json_string(j, ds->name);
        vram_json_key(j, "shape");
        vram_json_begin_array(j);
        for (int i = 0; i < ds->rank; i++) vram_json_u64(j, ds->dims[i]);
        vram_json_end_array(j);
        vram_json_key(j, "type");
        vram_json_string(j, ds->type);
        vram_json_key(j, "layout");
        vram_json_string(j, ds->layout);
        vram_json_key(j, "filters");
        vram_json_string(j, ds->filters);
        vram_json_key(j, "row_bytes");
        vram_json_u64(j, ds->row_bytes);
        vram_json_key(j, "read_path");
        vram_json_string(j, path_name(ds->path));
        vram_json_key(j, "reason");
        if (ds->path == VRAM_H5_PATH_HDF5)
            vram_json_string(j, ds->reason);
        else
            vram_json_null(j);
        vram_json_key(j, "offset");
        if (ds->path == VRAM_H5_PATH_CONTIGUOUS)
            vram_json_u64(j, ds->offset);
        else
            vram_json_null(j);
        vram_json_key(j, "chunk_rows");
        vram_json_u64(j, ds->chunk_rows);
        vram_json_key(j, "chunks");
        vram_json_u64(j, ds->nchunks);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
}

/* ---- --world auto|W and --rank R ---------------------------------------------------------- */

int cli_opt_world(const char *cmd, const char *text, cli_world *w) {
    uint64_t v = 0;
    int rc;
    if (text != NULL && strcmp(text, "auto") == 0) {
        w->have_world = 0;
        return 0;
    }
    if (text == NULL || (text[0] != '-' && (text[0] < '0' || text[0] > '9')))
        return cli_usage_error(cmd, "--world: '%s' is not auto or a whole number from 1 to %u",
                               text ? text : "", UINT32_MAX);
    if ((rc = cli_opt_count(cmd, "world", text, 1, UINT32_MAX, CLI_OPT_NEGATIVE | CLI_OPT_AT_LEAST, &v)))
        return rc;
    w->have_world = 1;
    w->world = (uint32_t)v;
    return 0;
}

int cli_ranks(const char *cmd, const cli_world *w, vram_ranks *out) {
    char line[256];
    vram_status st;
    if (w->have_world) {
        memset(out, 0, sizeof *out);
        out->launcher = VRAM_LAUNCHER_FLAGS;
        out->world = w->world;
        out->rank = w->have_rank ? w->rank : 0u;
        out->local_rank = -1;
        if (out->rank >= out->world)
            return cli_usage_error(cmd, "--rank %u is not below --world %u", out->rank, out->world);
        return -1;
    }
    st = vram_ranks_from_env(out);
    if (st != VRAM_OK)
        return cli_usage_error(cmd, "%s", vram_ranks_explain(out, st, NULL, NULL, line, sizeof line));
    if (w->have_rank && vram_ranks_with_rank(out, w->rank) != VRAM_OK) {
        if (out->launcher == VRAM_LAUNCHER_NONE)
            return cli_usage_error(cmd, "--rank %u is not below --world %u", w->rank, out->world);
        return cli_usage_error(cmd, "--rank %u is not below %s=%u (%s)", w->rank, out->var_b,
                               out->world, vram_launcher_name(out->launcher));
    }
    return -1;
}

void cli_print_launcher(const vram_ranks *r) {
    const char *nr = NULL, *ns = NULL, *nl = NULL;
    if (vram_launcher_vars(r->launcher, &nr, &ns, &nl) != VRAM_OK) return;
    printf("launcher        %s: %s, %s", vram_launcher_name(r->launcher), nr, ns);
    if (r->local_rank >= 0)
        printf(", local rank %lld (%s)", (long long)r->local_rank, nl);
    printf("\n");
}
