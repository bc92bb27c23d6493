/* driver/hdf5/h5source_none.c — h5source.h in a build without HDF5: opening a file says so,
 * and nothing else can be reached (no file is ever open). */
#include "h5source.h"

#include <string.h>

#include "util/text.h"

vram_status vram_h5_open(const char *path, const char *const *names, uint32_t n,
                         vram_h5_file **out, char *err, size_t cap) {
    (void)names;
    (void)n;
    *out = NULL;
    return vram_errorf(err, cap, VRAM_E_NOT_BUILT,
                       "%s: this vramkit was built without HDF5, so it cannot read files (install "
                       "libhdf5-dev and rebuild)",
                       path);
}

vram_source vram_h5_source(vram_h5_file *f) {
    vram_source s;
    (void)f;
    memset(&s, 0, sizeof s);
    return s;
}

vram_status vram_h5_read_plain(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                               void *dst, char *err, size_t cap) {
    (void)f, (void)d, (void)first, (void)count, (void)dst;
    return vram_errorf(err, cap, VRAM_E_NOT_BUILT, "built without HDF5");
}

void vram_h5_close(vram_h5_file *f) { (void)f; }
