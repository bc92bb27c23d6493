/* driver/models/model_find.c — see model_find.h. */
#include "model_find.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin_models.h"
#include "model_read.h"
#include "util/text.h"

vram_status vram_model_find(const char *arg, vram_model_ref *out, char *err, size_t cap) {
    const vram_builtin_model *b;
    struct stat st;
    char rerr[1024];
    vram_status s;
    memset(out, 0, sizeof *out);
    if (cap) err[0] = '\0';
    if (arg == NULL || arg[0] == '\0')
        return vram_errorf(err, cap, VRAM_E_INVALID, "MODEL: empty name");
    snprintf(out->label, sizeof out->label, "%s", arg);
    b = vram_builtin_find(arg);
    if (b != NULL) {
        vram_builtin_to_model(b, &out->model);
        snprintf(out->label, sizeof out->label, "%s", b->name);
        snprintf(out->source, sizeof out->source, "built-in");
        snprintf(out->hf_id, sizeof out->hf_id, "%s", b->hf_id);
        return VRAM_OK;
    }
    if (stat(arg, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            snprintf(err, cap,
                     "%s: not a built-in model and no such file or directory (built-ins: "
                     "vramkit estimate --list-models)",
                     arg);
            return VRAM_E_INVALID;
        }
        return vram_errorf(err, cap, VRAM_E_IO, "%s: %s", arg, strerror(errno));
    }
    rerr[0] = '\0';
    s = vram_read_path(arg, &out->model, rerr, sizeof rerr);
    if (s != VRAM_OK) {
        snprintf(err, cap, "%s", rerr[0] ? rerr : vram_status_str(s));
        return s == VRAM_E_IO || s == VRAM_E_NOMEM ? s : VRAM_E_INVALID;
    }
    snprintf(out->note, sizeof out->note, "%s", rerr);
    if (S_ISDIR(st.st_mode)) snprintf(out->source, sizeof out->source, "directory");
    else if (out->model.stats.tensors == 0)
        snprintf(out->source, sizeof out->source, "config.json");
    else snprintf(out->source, sizeof out->source, "file");
    return VRAM_OK;
}
