/* driver/models/model_names.c — see model_names.h. */
#include "model_names.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "model_util.h"
#include "util/file.h"
#include "util/json.h"
#include "util/text.h"

#define HEADER_MAX 100000000u /* the safetensors reader's limit */

static vram_status add_name(vram_names *out, const char *name) {
    char **grown, *copy;
    if ((out->n & (out->n - 1)) == 0) { /* 0, 1, 2, 4, ...: double */
        grown = realloc(out->name, (out->n ? out->n * 2 : 1) * sizeof *grown);
        if (grown == NULL) return VRAM_E_NOMEM;
        out->name = grown;
    }
    if ((copy = strdup(name)) == NULL) return VRAM_E_NOMEM;
    out->name[out->n++] = copy;
    return VRAM_OK;
}

/* Every key of obj but "__metadata__". */
static vram_status add_keys(const cJSON *obj, vram_names *out) {
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        if (it->string == NULL || strcmp(it->string, "__metadata__") == 0) continue;
        if (add_name(out, it->string) != VRAM_OK) return VRAM_E_NOMEM;
    }
    return VRAM_OK;
}

static vram_status from_json(const char *text, size_t len, int index, const char *path,
                             vram_names *out, char *err, size_t cap) {
    cJSON *doc = cJSON_ParseWithLength(text, len);
    const cJSON *obj = doc;
    vram_status st;
    /* a key given twice (weight_map, a tensor): the last, as Python's json and transformers
       read it */
    vram_json_last_wins(doc);
    if (doc != NULL && index) obj = cJSON_GetObjectItemCaseSensitive(doc, "weight_map");
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(doc);
        return vram_errorf(err, cap, index ? VRAM_E_UNHANDLED : VRAM_E_FORMAT, "%s: %s", path,
                           index ? "no weight_map object: no tensor names"
                                 : "header is not a JSON object");
    }
    st = add_keys(obj, out);
    cJSON_Delete(doc);
    return st == VRAM_OK ? VRAM_OK : vram_errorf(err, cap, st, "%s: out of memory", path);
}

static vram_status from_file(const char *path, vram_names *out, char *err, size_t cap) {
    const char *why = NULL;
    int fd = vram_open_read(path, 0, NULL, &why); /* never waits on a FIFO */
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    unsigned char b[8];
    uint64_t n = 0;
    char *hdr;
    vram_status st;
    if (f == NULL) {
        if (fd >= 0) close(fd);
        return vram_errorf(err, cap, VRAM_E_IO, "%s: %s", path, fd >= 0 ? strerror(errno) : why);
    }
    if (fread(b, 1, 8, f) != 8) {
        fclose(f);
        return vram_errorf(err, cap, VRAM_E_FORMAT, "%s: shorter than a safetensors header", path);
    }
    if (b[0] == '{') { /* an index: JSON from the first byte */
        size_t len;
        fclose(f);
        if ((st = vram__read_small_file(path, HEADER_MAX, &hdr, &len, err, cap)) != VRAM_OK)
            return st;
        st = from_json(hdr, len, 1, path, out, err, cap);
        free(hdr);
        return st;
    }
    if (memcmp(b, "GGUF", 4) == 0) {
        fclose(f);
        return vram_errorf(err, cap, VRAM_E_UNHANDLED,
                           "%s is GGUF: its tensor names are llama.cpp's, not the module names "
                           "of a transformers model",
                           path);
    }
    for (int i = 7; i >= 0; i--) n = n << 8 | b[i];
    if (n == 0 || n > HEADER_MAX || (hdr = malloc((size_t)n)) == NULL) {
        fclose(f);
        return vram_errorf(err, cap, n == 0 || n > HEADER_MAX ? VRAM_E_FORMAT : VRAM_E_NOMEM,
                           "%s: header of %llu bytes", path, (unsigned long long)n);
    }
    if (fread(hdr, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(hdr);
        return vram_errorf(err, cap, VRAM_E_FORMAT, "%s: header cut short", path);
    }
    fclose(f);
    st = from_json(hdr, (size_t)n, 0, path, out, err, cap);
    free(hdr);
    return st;
}

vram_status vram_model_tensor_names(const char *path, vram_names *out, char *err, size_t cap) {
    static const char *const in_dir[2] = {"model.safetensors", "model.safetensors.index.json"};
    struct stat sb;
    vram_status st;
    out->name = NULL;
    out->n = 0;
    if (stat(path, &sb) != 0)
        return vram_errorf(err, cap, VRAM_E_UNHANDLED, "%s: not a file (%s)", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) {
        for (int i = 0; i < 2; i++) {
            char p[4096];
            if ((size_t)snprintf(p, sizeof p, "%s/%s", path, in_dir[i]) >= sizeof p)
                return vram_errorf(err, cap, VRAM_E_INVALID, "%s: path too long", path);
            if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
                st = from_file(p, out, err, cap);
                if (st != VRAM_OK) vram_names_free(out);
                return st;
            }
        }
        return vram_errorf(err, cap, VRAM_E_UNHANDLED,
                           "%s holds no model.safetensors or model.safetensors.index.json", path);
    }
    st = from_file(path, out, err, cap);
    if (st != VRAM_OK) vram_names_free(out);
    return st;
}

void vram_names_free(vram_names *n) {
    for (size_t i = 0; i < n->n; i++) free(n->name[i]);
    free(n->name);
    n->name = NULL;
    n->n = 0;
}
