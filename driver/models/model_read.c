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

#include "util/file.h"

/* ---- any path ------------------------------------------------------------------------- */

typedef enum { KIND_SAFETENSORS, KIND_GGUF, KIND_JSON } file_kind;

/* Tell a file's kind by its first bytes; the extension decides only when content cannot. */
static vram_status sniff(const char *path, file_kind *kind, char *err, size_t errcap) {
    const char *why = NULL;
    int fd = vram_open_read(path, 0, NULL, &why); /* never waits on a FIFO */
    if (fd < 0) return vram__fail(err, errcap, VRAM_E_IO, path, "%s", why);
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

/* Is name (a file name, no directory) a shard by the Hugging Face pattern
 * PREFIX-NNNNN-of-NNNNN.safetensors? 1 with *i and *n (1 <= i <= n, n > 1), else 0. */
int vram__shard_name(const char *name, unsigned long *i, unsigned long *n) {
    static const char ext[] = ".safetensors";
    size_t len = strlen(name), el = sizeof ext - 1;
    if (len <= el || strcmp(name + len - el, ext) != 0) return 0;
    /* back from the extension: digits, "-of-", digits, '-' */
    size_t e = len - el, k = e;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
        k--;
    if (k == e || e - k > 9 || k < 4 || memcmp(name + k - 4, "-of-", 4) != 0) return 0;
    size_t e2 = k - 4, k2 = e2;
    while (k2 > 0 && name[k2 - 1] >= '0' && name[k2 - 1] <= '9')
        k2--;
    if (k2 == e2 || e2 - k2 > 9 || k2 == 0 || name[k2 - 1] != '-') return 0;
    *i = strtoul(name + k2, NULL, 10);
    *n = strtoul(name + k, NULL, 10);
    return *n > 1 && *i >= 1 && *i <= *n;
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
        break;
    }
    st = vram_safetensors_read(path, m, err, errcap);
    /* one shard of a sharded set is counted (it is a valid file), and says what it is */
    const char *base = strrchr(path, '/');
    unsigned long i = 0, n = 0;
    if (st == VRAM_OK && vram__shard_name(base ? base + 1 : path, &i, &n) && err != NULL &&
        errcap > 0)
        snprintf(err, errcap,
                 "%s: shard %lu of %lu of a sharded model; only this shard was counted (give "
                 "the directory or its model.safetensors.index.json for the whole model)",
                 path, i, n);
    return st;
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

/* What a directory holds besides config.json and model.safetensors(.index.json): its .gguf
 * files, pickled PyTorch weights, other .safetensors files (shards without their index). */
typedef struct dir_scan {
    int ggufs;
    char gguf[NAME_MAX + 1];   /* the first .gguf */
    int pickles;
    char pickle[NAME_MAX + 1]; /* pytorch_model.bin when there, else the first *.bin/.pt/.pth */
    int others;
    char other[NAME_MAX + 1];  /* the first other .safetensors */
} dir_scan;

static int ends_with(const char *s, const char *suffix) {
    size_t l = strlen(s), n = strlen(suffix);
    return l > n && strcmp(s + l - n, suffix) == 0;
}

static vram_status scan_dir(const char *dir, dir_scan *sc, char *err, size_t errcap) {
    DIR *d = opendir(dir);
    memset(sc, 0, sizeof *sc);
    if (d == NULL) return vram__fail(err, errcap, VRAM_E_IO, dir, "%s", strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        char p[PATH_MAX];
        int gguf = ends_with(nm, ".gguf");
        int pickle = ends_with(nm, ".bin") || ends_with(nm, ".pt") || ends_with(nm, ".pth");
        int other = ends_with(nm, ".safetensors") && strcmp(nm, "model.safetensors") != 0;
        if (!gguf && !pickle && !other) continue;
        if (join(dir, nm, p, sizeof p, err, errcap) != VRAM_OK || !is_regular(p)) continue;
        if (gguf && sc->ggufs++ == 0) snprintf(sc->gguf, sizeof sc->gguf, "%s", nm);
        if (pickle && (sc->pickles++ == 0 || strcmp(nm, "pytorch_model.bin") == 0))
            snprintf(sc->pickle, sizeof sc->pickle, "%s", nm);
        if (other && sc->others++ == 0) snprintf(sc->other, sizeof sc->other, "%s", nm);
    }
    closedir(d);
    if (err != NULL && errcap > 0) err[0] = '\0';
    return VRAM_OK;
}

/* note += "; " + more (or note = more), cut at cap - 1 characters (copied, not printed: a
 * note cut short is meant, and snprintf's truncation warning would say otherwise). */
static void note_add(char *note, size_t cap, const char *more) {
    size_t n = strlen(note);
    if (more[0] == '\0' || n + 1 >= cap) return;
    const char *parts[2] = {n != 0 ? "; " : "", more};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(parts[i]);
        if (k > cap - 1 - n) k = cap - 1 - n;
        memcpy(note + n, parts[i], k);
        n += k;
    }
    note[n] = '\0';
}

#define PICKLE_WHY                                                                            \
    "a Python pickle, which vramkit does not read: its tensors' shapes are arguments inside " \
    "a pickle program, not a header, and vramkit interprets no pickles"

static vram_status read_dir(const char *dir, vram_model *m, char *err, size_t errcap) {
    char cfg_path[PATH_MAX], tensors_path[PATH_MAX], more[1024];
    vram_model cfg, ten;
    int have_cfg = 0, have_tensors = 0, tensors_gguf = 0;
    char note[1024] = "";
    const char *tensors_name = NULL;
    dir_scan sc;
    vram_status st;
    memset(&cfg, 0, sizeof cfg);
    memset(&ten, 0, sizeof ten);

    if ((st = scan_dir(dir, &sc, err, errcap)) != VRAM_OK) return st;
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
        tensors_name = names[i];
    }
    if (have_tensors && sc.ggufs > 0) {
        /* both: say which was read, and why */
        snprintf(more, sizeof more,
                 "%s: read %s; %s%s%s not read (with both, the safetensors are the published "
                 "weights a GGUF is converted from; give the .gguf file itself to count it)",
                 dir, tensors_name, sc.ggufs > 1 ? "the .gguf files (" : "", sc.gguf,
                 sc.ggufs > 1 ? ", ...) were" : " was");
        note_add(note, sizeof note, more);
    }
    if (!have_tensors && sc.ggufs > 1)
        return vram__fail(err, errcap, VRAM_E_FORMAT, dir,
                          "holds %d .gguf files; name the one to read", sc.ggufs);
    if (!have_tensors && sc.ggufs == 1) {
        if ((st = join(dir, sc.gguf, tensors_path, sizeof tensors_path, err, errcap)) != VRAM_OK)
            return st;
        st = vram_gguf_read(tensors_path, &ten, err, errcap);
        if (st != VRAM_OK) return st;
        have_tensors = tensors_gguf = 1;
    }
    if (!have_cfg && !have_tensors) {
        if (sc.pickles > 0)
            return vram__fail(err, errcap, VRAM_E_UNHANDLED, dir,
                              "holds %s, " PICKLE_WHY
                              "; convert it to safetensors, or add the model's config.json",
                              sc.pickle);
        if (sc.others > 0)
            return vram__fail(err, errcap, VRAM_E_INVALID, dir,
                              "no config.json, model.safetensors, model.safetensors.index.json "
                              "or *.gguf here, but %s: give that file, or the index of its set",
                              sc.other);
        return vram__fail(err, errcap, VRAM_E_INVALID, dir,
                          "no model files here (looked for config.json, model.safetensors, "
                          "model.safetensors.index.json and *.gguf)");
    }
    if (have_tensors && err != NULL && errcap > 0 && err[0] != '\0') note_add(note, sizeof note, err);
    if (!have_tensors && sc.pickles > 0) {
        snprintf(more, sizeof more, "%s: %s is " PICKLE_WHY "; the count comes from config.json",
                 dir, sc.pickle);
        note_add(note, sizeof note, more);
    }

    vram_model out;
    memset(&out, 0, sizeof out);
    /* the arch from config.json, with what comes with it (a guess's range, the tokens an
       image adds), so that the directory answers as its config.json does */
    if (have_cfg && cfg.arch.family != VRAM_FAMILY_NONE) {
        out.arch = cfg.arch;
        out.guess_low = cfg.guess_low;
        out.guess_high = cfg.guess_high;
        out.image_tokens = cfg.image_tokens;
    } else {
        out.arch = ten.arch;
    }
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
