/* driver/models/model_read.c — the one entry point that takes any path (vram_read_path): a file
 * is told apart by its content and handed to its reader; a directory combines config.json
 * with the tensors beside it. */
#include "model_read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

/* ---- any path ------------------------------------------------------------------------- */

typedef enum { KIND_SAFETENSORS, KIND_GGUF, KIND_JSON } file_kind;

/* Tell a file's kind by its first bytes; the extension decides only when content cannot. */
static vram_status sniff(const char *path, file_kind *kind, char *err, size_t errcap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return vram__fail(err, errcap, VRAM_E_IO, path, "%s", strerror(errno));
    struct stat st;
    unsigned char head[64];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0) {
        do
            n = pread(fd, head, sizeof head, 0);
        while (n < 0 && errno == EINTR);
    }
    int e = errno;
    close(fd);
    if (n < 0) return vram__fail(err, errcap, VRAM_E_IO, path, "%s", strerror(e));
    size_t len = strlen(path);
    if (n >= 4 && memcmp(head, "GGUF", 4) == 0) {
        *kind = KIND_GGUF;
        return VRAM_OK;
    }
    if (n >= 9 && head[8] == '{') {
        uint64_t hl = 0;
        for (int i = 7; i >= 0; i--)
            hl = hl << 8 | head[i];
        if (hl <= (uint64_t)st.st_size - 8) {
            *kind = KIND_SAFETENSORS;
            return VRAM_OK;
        }
    }
    for (ssize_t i = 0; i < n; i++) {
        if (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r') continue;
        if (head[i] == '{') {
            *kind = KIND_JSON;
            return VRAM_OK;
        }
        break;
    }
    if (len >= 5 && strcmp(path + len - 5, ".gguf") == 0)
        *kind = KIND_GGUF;
    else if (len >= 5 && strcmp(path + len - 5, ".json") == 0)
        *kind = KIND_JSON;
    else
        *kind = KIND_SAFETENSORS;
    return VRAM_OK;
}

static vram_status read_json_file(const char *path, vram_model *m, char *err, size_t errcap) {
    char *text;
    size_t len;
    vram_status st = vram__read_small_file(path, VRAM_JSON_FILE_MAX, &text, &len, err, errcap);
    if (st != VRAM_OK) return st;
    /* an index names its shards in "weight_map"; anything else is read as config.json */
    cJSON *doc = cJSON_ParseWithLength(text, len);
    int is_index = doc != NULL && cJSON_IsObject(doc) &&
                   cJSON_GetObjectItemCaseSensitive(doc, "weight_map") != NULL;
    cJSON_Delete(doc);
    if (is_index)
        st = vram_safetensors_index_read(path, m, err, errcap);
    else
        st = vram_config_parse(text, len, path, m, err, errcap);
    free(text);
    return st;
}

static vram_status read_file(const char *path, vram_model *m, char *err, size_t errcap) {
    file_kind kind = KIND_SAFETENSORS;
    vram_status st = sniff(path, &kind, err, errcap);
    if (st != VRAM_OK) return st;
    switch (kind) {
    case KIND_GGUF:
        return vram_gguf_read(path, m, err, errcap);
    case KIND_JSON:
        return read_json_file(path, m, err, errcap);
    default:
        return vram_safetensors_read(path, m, err, errcap);
    }
}

static int is_regular(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static vram_status join(const char *dir, const char *name, char *out, size_t cap, char *err,
                        size_t errcap) {
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    int n = snprintf(out, cap, "%.*s/%s", (int)dl, dir, name);
    if (n < 0 || (size_t)n >= cap)
        return vram__fail(err, errcap, VRAM_E_IO, dir, "%s", strerror(ENAMETOOLONG));
    return VRAM_OK;
}

/* The one *.gguf of a directory: VRAM_OK with *found 0 when there is none. */
static vram_status find_gguf(const char *dir, char *out, size_t cap, int *found, char *err,
                             size_t errcap) {
    DIR *d = opendir(dir);
    if (d == NULL) return vram__fail(err, errcap, VRAM_E_IO, dir, "%s", strerror(errno));
    struct dirent *e;
    int count = 0;
    char first[NAME_MAX + 1] = "";
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".gguf") != 0) continue;
        char p[PATH_MAX];
        if (join(dir, e->d_name, p, sizeof p, err, errcap) != VRAM_OK) continue;
        if (!is_regular(p)) continue;
        if (count == 0) snprintf(first, sizeof first, "%s", e->d_name);
        count++;
    }
    closedir(d);
    if (count > 1)
        return vram__fail(err, errcap, VRAM_E_FORMAT, dir,
                          "holds %d .gguf files; name the one to read", count);
    *found = count == 1;
    if (count == 1) return join(dir, first, out, cap, err, errcap);
    return VRAM_OK;
}

static vram_status read_dir(const char *dir, vram_model *m, char *err, size_t errcap) {
    char cfg_path[PATH_MAX], tensors_path[PATH_MAX];
    vram_model cfg, ten;
    int have_cfg = 0, have_tensors = 0, tensors_gguf = 0;
    char note[512] = "";
    vram_status st;
    memset(&cfg, 0, sizeof cfg);
    memset(&ten, 0, sizeof ten);

    if ((st = join(dir, "config.json", cfg_path, sizeof cfg_path, err, errcap)) != VRAM_OK)
        return st;
    if (is_regular(cfg_path)) {
        st = vram_config_read(cfg_path, &cfg, err, errcap);
        if (st != VRAM_OK) return st;
        have_cfg = 1;
        if (err != NULL && errcap > 0) snprintf(note, sizeof note, "%s", err);
    }

    static const char *const names[2] = {"model.safetensors", "model.safetensors.index.json"};
    for (int i = 0; i < 2 && !have_tensors; i++) {
        if ((st = join(dir, names[i], tensors_path, sizeof tensors_path, err, errcap)) != VRAM_OK)
            return st;
        if (!is_regular(tensors_path)) continue;
        st = i == 0 ? vram_safetensors_read(tensors_path, &ten, err, errcap)
                    : vram_safetensors_index_read(tensors_path, &ten, err, errcap);
        if (st != VRAM_OK) return st;
        have_tensors = 1;
    }
    if (!have_tensors) {
        int found = 0;
        st = find_gguf(dir, tensors_path, sizeof tensors_path, &found, err, errcap);
        if (st != VRAM_OK) return st;
        if (found) {
            st = vram_gguf_read(tensors_path, &ten, err, errcap);
            if (st != VRAM_OK) return st;
            have_tensors = tensors_gguf = 1;
        }
    }
    if (!have_cfg && !have_tensors)
        return vram__fail(err, errcap, VRAM_E_IO, dir,
                          "no model files here (looked for config.json, model.safetensors, "
                          "model.safetensors.index.json and *.gguf)");
    if (have_tensors && err != NULL && errcap > 0 && err[0] != '\0' && note[0] == '\0')
        snprintf(note, sizeof note, "%s", err);

    vram_model out;
    memset(&out, 0, sizeof out);
    out.arch = (have_cfg && cfg.arch.family != VRAM_FAMILY_NONE) ? cfg.arch : ten.arch;
    out.stats = ten.stats;
    out.blocks = ten.blocks;
    if (tensors_gguf || !have_cfg || cfg.dtype == VRAM_DTYPE_NONE)
        out.dtype = have_tensors ? ten.dtype : cfg.dtype;
    else
        out.dtype = cfg.dtype;
    *m = out;
    if (err != NULL && errcap > 0) snprintf(err, errcap, "%s", note);
    return VRAM_OK;
}

vram_status vram_read_path(const char *path, vram_model *m, char *err, size_t errcap) {
    if (err != NULL && errcap > 0) err[0] = '\0';
    if (path == NULL || m == NULL)
        return vram__fail(err, errcap, VRAM_E_INVALID, "(null)", "no path or no model given");
    struct stat st;
    if (stat(path, &st) != 0)
        return vram__fail(err, errcap, VRAM_E_IO, path, "%s", strerror(errno));
    if (S_ISDIR(st.st_mode)) return read_dir(path, m, err, errcap);
    if (!S_ISREG(st.st_mode))
        return vram__fail(err, errcap, VRAM_E_IO, path, "not a regular file or a directory");
    return read_file(path, m, err, errcap);
}
