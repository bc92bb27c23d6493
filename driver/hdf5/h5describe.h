/* driver/hdf5/h5describe.h — the datasets of an open HDF5 file (h5source.h) in words and as
 * JSON: what `vramkit chunks FILE` and `vramkit stream` report. Built with or without HDF5
 * (where the file can then never have been opened). */
#ifndef VRAMKIT_DRIVER_H5DESCRIBE_H
#define VRAMKIT_DRIVER_H5DESCRIBE_H

#include <stddef.h>

#include "h5source.h"
#include "util/json.h"

/* "1003 x 36 x 7" into buf. Returns buf. */
const char *vram_h5_shape(const vram_h5_dataset *ds, char *buf, size_t cap);
/* How a dataset is read, in words ("contiguous: pread from offset 2048"). */
void vram_h5_path_text(const vram_h5_dataset *ds, char *buf, size_t cap);
/* The members "file" and "datasets" (an array of {name, shape, type, layout, filters,
 * row_bytes, read_path, reason, offset, chunk_rows, chunks}) of an open JSON object. */
void vram_h5_json(vram_json *j, const vram_h5_file *f);

#endif /* VRAMKIT_DRIVER_H5DESCRIBE_H */
