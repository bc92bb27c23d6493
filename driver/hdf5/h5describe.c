/* driver/hdf5/h5describe.c — see h5describe.h, and vram_h5_path_name (h5source.h). */
#include "h5describe.h"

#include <stdio.h>

const char *vram_h5_path_name(vram_h5_path p) {
    switch (p) {
    case VRAM_H5_PATH_CONTIGUOUS: return "contiguous";
    case VRAM_H5_PATH_CHUNKED: return "chunked";
    case VRAM_H5_PATH_HDF5: return "hdf5";
    }
    return "unknown";
}

const char *vram_h5_shape(const vram_h5_dataset *ds, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < ds->rank && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%llu", i ? " x " : "", (unsigned long long)ds->dims[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
    return buf;
}

void vram_h5_path_text(const vram_h5_dataset *ds, char *buf, size_t cap) {
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

void vram_h5_json(vram_json *j, const vram_h5_file *f) {
    vram_json_key_string(j, "file", f->path);
    vram_json_key(j, "datasets");
    vram_json_begin_array(j);
    for (uint32_t d = 0; d < f->datasets; d++) {
        const vram_h5_dataset *ds = &f->ds[d];
        vram_json_begin_object(j);
        vram_json_key_string(j, "name", ds->name);
        vram_json_key(j, "shape");
        vram_json_begin_array(j);
        for (int i = 0; i < ds->rank; i++) vram_json_u64(j, ds->dims[i]);
        vram_json_end_array(j);
        vram_json_key_string(j, "type", ds->type);
        vram_json_key_string(j, "layout", ds->layout);
        vram_json_key_string(j, "filters", ds->filters);
        vram_json_key_u64(j, "row_bytes", ds->row_bytes);
        vram_json_key_string(j, "read_path", vram_h5_path_name(ds->path));
        vram_json_key_string(j, "reason", ds->path == VRAM_H5_PATH_HDF5 ? ds->reason : NULL);
        vram_json_key_u64_or_null(j, "offset", ds->path == VRAM_H5_PATH_CONTIGUOUS, ds->offset);
        vram_json_key_u64(j, "chunk_rows", ds->chunk_rows);
        vram_json_key_u64(j, "chunks", ds->nchunks);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
}
