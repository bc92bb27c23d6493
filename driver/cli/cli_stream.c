/* driver/cli/cli_stream.c — see cli_stream.h. */
#include "cli_stream.h"

#include <string.h>

#include "hdf5/h5describe.h"

void cli_h5_text(FILE *out, const vram_h5_file *f) {
    size_t w = 4;
    for (uint32_t d = 0; d < f->datasets; d++) w = strlen(f->ds[d].name) > w ? strlen(f->ds[d].name) : w;
    if (w > 40) w = 40;
    for (uint32_t d = 0; d < f->datasets; d++) {
        const vram_h5_dataset *ds = &f->ds[d];
        char shape[256], bytes[32], path[320];
        vram_h5_shape(ds, shape, sizeof shape);
        vram_fmt_size(ds->row_bytes, bytes, sizeof bytes);
        vram_h5_path_text(ds, path, sizeof path);
        fprintf(out, "  %-*s  %s %s, %s per sample; %s\n", (int)w, ds->name, shape, ds->type, bytes, path);
    }
}

void cli_print_launcher(const vram_ranks *r) {
    const char *nr = NULL, *ns = NULL, *nl = NULL;
    if (vram_launcher_vars(r->launcher, &nr, &ns, &nl) != VRAM_OK) return;
    printf("launcher        %s: %s, %s", vram_launcher_name(r->launcher), nr, ns);
    if (r->local_rank >= 0)
        printf(", local rank %lld (%s)", (long long)r->local_rank, nl);
    printf("\n");
}
