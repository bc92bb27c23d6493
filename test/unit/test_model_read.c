/* Unit tests of vram_read_path (driver/models/model_read.c): a model directory (config.json with
 * model.safetensors, with a sharded index, with one .gguf, config alone), files told apart
 * by content, the errors of each; the reader's hash set; and the committed fuzz seeds,
 * which must still parse (ok_*, hdr_*) or fail (bad_*, as whole files) as their names say. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../fuzz/gen/model_fixtures.h"
#include "models/model_read.h"

static char tmp[64];

static void setup(void) { cr_assert_not_null(fx_tmpdir(tmp), "mkdtemp"); }
static void teardown(void) { fx_rmtree(tmp); }

TestSuite(read_path, .init = setup, .fini = teardown);

static void write_text(const char *dir, const char *name, const char *text) {
    char path[4096];
    cr_assert_eq(fx_write_file(fx_path(path, dir, name), text, strlen(text)), 0);
}

static void write_gpt2(const char *dir, const char *name) {
    fx_list l = {0};
    fx_buf json = {0};
    char path[4096];
    fx_gpt2(&l);
    uint64_t data = fx_st_header(l.t, l.n, 1, &json);
    cr_assert_eq(fx_st_write(fx_path(path, dir, name), &json, data, 0), 0);
    fx_free(&json);
    fx_list_free(&l);
}

Test(read_path, directory_with_config_and_safetensors) {
    vram_model m;
    char err[512];
    write_text(tmp, "config.json", FX_CFG_GPT2);
    write_gpt2(tmp, "model.safetensors");
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_str_empty(err);
    /* the arch from config.json, the stats from the tensors */
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.layers, 12);
    cr_assert_eq(m.stats.tensors, 160);
    cr_assert_eq(m.stats.bytes, 548090880ull);
    cr_assert_eq(m.blocks, 12);
    /* gpt2's config has no torch_dtype: the tensors' format */
    cr_assert_eq(m.dtype, VRAM_DTYPE_F32);
    /* the parameters the arch predicts are the file's, less the 12 attention-mask buffers */
    vram_param_count pc = {0};
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
    cr_assert_eq(pc.total + 12ull * 1024 * 1024, m.stats.params);
}

Test(read_path, directory_with_config_only) {
    vram_model m;
    char err[512];
    char sub[4096];
    write_text(tmp, "config.json", FX_CFG_NLLB_200_DISTILLED_600M);
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_ENCODER_DECODER);
    cr_assert_eq(m.stats.tensors, 0);
    cr_assert_eq(m.blocks, 0);
    cr_assert_eq(m.dtype, VRAM_DTYPE_F32);
    /* a trailing slash changes nothing */
    snprintf(sub, sizeof sub, "%s/", tmp);
    cr_assert_eq(vram_read_path(sub, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.vocab, 256206);
}

Test(read_path, directory_with_sharded_llama_and_config) {
    vram_model m;
    char err[512];
    const char *a[] = {"model.embed_tokens.weight", "model.layers.0.mlp.up_proj.weight"};
    const char *b[] = {"model.layers.1.mlp.up_proj.weight", "lm_head.weight"};
    for (int k = 0; k < 2; k++) {
        fx_list l = {0};
        fx_buf json = {0};
        char path[4096];
        l.dtype = "F16";
        for (int i = 0; i < 2; i++)
            FX_2(&l, (k ? b : a)[i], 64, 32);
        uint64_t data = fx_st_header(l.t, l.n, 0, &json);
        cr_assert_eq(fx_st_write(fx_path(path, tmp, k ? "s2.safetensors" : "s1.safetensors"), &json,
                                 data, 0),
                     0);
        fx_free(&json);
        fx_list_free(&l);
    }
    write_text(tmp, "model.safetensors.index.json",
               "{\"weight_map\":{\"model.embed_tokens.weight\":\"s1.safetensors\","
               "\"model.layers.0.mlp.up_proj.weight\":\"s1.safetensors\","
               "\"model.layers.1.mlp.up_proj.weight\":\"s2.safetensors\","
               "\"lm_head.weight\":\"s2.safetensors\"}}");
    write_text(tmp, "config.json",
               "{\"model_type\":\"llama\",\"num_hidden_layers\":2,\"hidden_size\":32,"
               "\"num_attention_heads\":4,\"intermediate_size\":64,\"vocab_size\":64,"
               "\"torch_dtype\":\"bfloat16\"}");
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.layers, 2);
    cr_assert_eq(m.stats.tensors, 4);
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_F16], 4 * 64 * 32 * 2);
    cr_assert_eq(m.blocks, 2);
    cr_assert_eq(m.dtype, VRAM_DTYPE_BF16, "config's torch_dtype wins for safetensors");
}

static void write_small_gguf(const char *path) {
    fx_gguf g = {0};
    fx_list l = {0};
    fx_buf b = {0};
    const fx_llama tiny = {2, 256, 512, 4, 2, 32};
    fx_gguf_llama_meta(&g, &tiny, 512, 32);
    fx_llama_gguf(&l, &tiny);
    uint64_t size = fx_gguf_build(&g, &l, &b, NULL);
    cr_assert_eq(fx_write_sparse(path, b.p, b.n, size), 0);
    fx_free(&b);
    fx_free(&g.kv);
    fx_list_free(&l);
}

Test(read_path, directory_with_one_gguf) {
    vram_model m;
    char err[512], path[4096];
    write_small_gguf(fx_path(path, tmp, "tiny.Q4_K_M.gguf"));
    write_text(tmp, "README.md", "# not a model file\n");
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.hidden, 256);
    cr_assert_eq(m.stats.tensors, 2 + 2 * 9 + 1);
    cr_assert_eq(m.blocks, 2);
    cr_assert_eq(m.dtype, VRAM_DTYPE_Q4_K);
    /* a config.json beside it gives the arch, but the format stays the file's */
    write_text(tmp, "config.json",
               "{\"model_type\":\"llama\",\"num_hidden_layers\":2,\"hidden_size\":256,"
               "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":512,"
               "\"vocab_size\":32,\"torch_dtype\":\"bfloat16\"}");
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.context, 2048,
                 "from config.json (LlamaConfig's default), not the GGUF's 512");
    cr_assert_eq(m.dtype, VRAM_DTYPE_Q4_K);
    /* two are ambiguous */
    write_small_gguf(fx_path(path, tmp, "tiny.Q8_0.gguf"));
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_E_FORMAT);
    cr_assert_not_null(strstr(err, "holds 2 .gguf files; name the one to read"), "%s", err);
    cr_assert_not_null(strstr(err, tmp), "%s", err);
}

Test(read_path, errors_name_the_input) {
    vram_model m, before;
    char err[512], path[4096];
    memset(&m, 0x3c, sizeof m);
    before = m;
    /* an empty directory is bad input (exit 2), not an environment error */
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_E_INVALID);
    cr_assert_not_null(strstr(err, "no model files here"), "%s", err);
    cr_assert_eq(vram_read_path("/nonexistent/model", &m, err, sizeof err), VRAM_E_IO);
    cr_assert_not_null(strstr(err, "/nonexistent/model: No such file or directory"), "%s", err);
    /* a broken config.json is an error, not a silent fallback on the tensors */
    write_gpt2(tmp, "model.safetensors");
    write_text(tmp, "config.json", "{\"model_type\":\"gpt2\",\"n_layer\":1.5}");
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_E_FORMAT);
    cr_assert_not_null(strstr(err, "config.json: n_layer is 1.5"), "%s", err);
    /* a broken safetensors beside a good config */
    write_text(tmp, "config.json", FX_CFG_GPT2);
    cr_assert_eq(
        fx_write_file(fx_path(path, tmp, "model.safetensors"), "\x10\0\0\0\0\0\0\0{\"a\":1}", 15),
        0);
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_E_FORMAT);
    cr_assert_not_null(strstr(err, "model.safetensors: not a safetensors file: its first 8 bytes, "
                                   "read as the header length, point past the end"), "%s", err);
    cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "nothing half-filled");
    /* neither JSON, nor GGUF, nor a plausible safetensors length */
    write_text(tmp, "notes.txt", "hello, world, this is text");
    cr_assert_eq(vram_read_path(fx_path(path, tmp, "notes.txt"), &m, err, sizeof err),
                 VRAM_E_FORMAT);
    cr_assert_not_null(strstr(err, "notes.txt: not a safetensors file"), "%s", err);
    cr_assert_null(strstr(err, "hello"), "the text is not echoed: %s", err);
}

Test(read_path, files_by_content) {
    vram_model m;
    char err[512], path[4096];
    /* a config.json under another name */
    write_text(tmp, "my-config", "\n  " FX_CFG_DISTILBERT_BASE_UNCASED);
    cr_assert_eq(vram_read_path(fx_path(path, tmp, "my-config"), &m, err, sizeof err), VRAM_OK,
                 "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_ENCODER);
    /* an index under another name reads its shards */
    write_gpt2(tmp, "gpt2.safetensors");
    write_text(tmp, "idx.json", "{\"weight_map\":{\"wte.weight\":\"gpt2.safetensors\"}}");
    cr_assert_eq(vram_read_path(fx_path(path, tmp, "idx.json"), &m, err, sizeof err),
                 VRAM_E_FORMAT);
    cr_assert_not_null(
        strstr(err, "gpt2.safetensors: holds tensor 'wpe.weight', which the index's"), "%s", err);
    /* a safetensors file whose first length byte happens to be '{' is still safetensors */
    {
        fx_buf f = {0};
        fx_u64(&f, 123); /* 123 == '{' */
        fx_printf(&f, "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}");
        while (f.n < 8 + 123)
            fx_put(&f, " ", 1);
        fx_put(&f, "", 1);
        cr_assert_eq(f.p[0], '{');
        cr_assert_eq(fx_write_file(fx_path(path, tmp, "brace"), f.p, f.n), 0);
        cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s", err);
        cr_assert_eq(m.stats.tensors, 1);
        fx_free(&f);
    }
    /* a path that is neither file nor directory */
    cr_assert_eq(vram_read_path("/dev/null", &m, err, sizeof err), VRAM_E_IO);
    cr_assert_not_null(strstr(err, "/dev/null: not a regular file or a directory"), "%s", err);
}

Test(read_path, small_error_buffers_are_safe) {
    vram_model m;
    char err[8];
    memset(err, 'x', sizeof err);
    cr_assert_eq(vram_read_path("/nonexistent/model", &m, err, sizeof err), VRAM_E_IO);
    cr_assert_eq(strlen(err), sizeof err - 1, "truncated and terminated");
    cr_assert_eq(vram_read_path("/nonexistent/model", &m, NULL, 0), VRAM_E_IO);
}

/* ---- the hash set ----------------------------------------------------------------------- */

Test(read_path, set_finds_what_it_holds) {
    vram__set s = {0};
    vram__set_entry *e;
    int found;
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "model.layers.%d.", i % 2500);
        cr_assert_eq(vram__set_put(&s, key, strlen(key), (uint64_t)i / 2500, &e, &found), VRAM_OK);
        cr_assert_eq(found, 0, "key %s tag %d", key, i / 2500);
        e->value = (uint64_t)i;
    }
    cr_assert_eq(s.count, 5000);
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "model.layers.%d.", i % 2500);
        e = vram__set_get(&s, key, strlen(key), (uint64_t)i / 2500);
        cr_assert_not_null(e);
        cr_assert_eq(e->value, (uint64_t)i);
        cr_assert_eq(vram__set_put(&s, key, strlen(key), (uint64_t)i / 2500, &e, &found), VRAM_OK);
        cr_assert_eq(found, 1);
    }
    cr_assert_null(vram__set_get(&s, "model.layers.7.", 15, 2));
    cr_assert_null(vram__set_get(&s, "", 0, 0));
    cr_assert_eq(vram__set_put(&s, "", 0, 0, &e, &found), VRAM_OK);
    cr_assert_eq(found, 0);
    cr_assert_eq(s.count, 5001);
    vram__set_free(&s);
    cr_assert_eq(s.count, 0);
}

/* ---- the committed seeds ------------------------------------------------------------------ */

typedef vram_status (*seed_fn)(const unsigned char *p, size_t n, int header_mode, char *err,
                               size_t cap);

static vram_status seed_safetensors(const unsigned char *p, size_t n, int header_mode, char *err,
                                    size_t cap) {
    vram_model m;
    if (!header_mode) return vram_safetensors_parse_image(p, n, "seed", &m, err, cap);
    uint64_t data = 0;
    if (n < 8) return VRAM_E_FORMAT;
    for (int i = 7; i >= 0; i--)
        data = data << 8 | p[i];
    return vram_safetensors_parse((const char *)p + 8, n - 8, data, "seed", &m, err, cap);
}

typedef struct seed_head {
    const unsigned char *p;
    size_t n;
} seed_head;
static int seed_head_read(void *ctx, uint64_t off, void *buf, size_t n) {
    const seed_head *h = ctx;
    if (off > h->n || n > h->n - off) return 5;
    memcpy(buf, h->p + off, n);
    return 0;
}

static vram_status seed_gguf(const unsigned char *p, size_t n, int header_mode, char *err,
                             size_t cap) {
    vram_model m;
    seed_head h = {p, n};
    vram_gguf_source src = vram_gguf_source_memory(p, n);
    if (header_mode) {
        src.size = (uint64_t)n + (UINT64_C(1) << 40);
        src.read_at = seed_head_read;
        src.ctx = &h;
    }
    return vram_gguf_parse(&src, "seed", &m, err, cap);
}

static vram_status seed_config(const unsigned char *p, size_t n, int header_mode, char *err,
                               size_t cap) {
    vram_model m;
    (void)header_mode;
    return vram_config_parse((const char *)p, n, "seed", &m, err, cap);
}

static void check_corpus(const char *name, seed_fn fn, int *counts) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/test/fuzz/corpus/%s", VRAMKIT_SOURCE_DIR, name);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096 + 256], err[512];
        int kind = strncmp(e->d_name, "ok_", 3) == 0    ? 0
                   : strncmp(e->d_name, "hdr_", 4) == 0 ? 1
                   : strncmp(e->d_name, "bad_", 4) == 0 ? 2
                                                        : -1;
        if (kind < 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text;
        size_t n;
        cr_assert_eq(vram__read_small_file(path, 1 << 20, &text, &n, err, sizeof err), VRAM_OK,
                     "%s", err);
        if (kind == 0) {
            vram_status st = fn((unsigned char *)text, n, 0, err, sizeof err);
            cr_assert_eq(st, VRAM_OK, "%s: %s", e->d_name, err);
        } else if (kind == 1) {
            vram_status st = fn((unsigned char *)text, n, 1, err, sizeof err);
            cr_assert_eq(st, VRAM_OK, "%s: %s", e->d_name, err);
            st = fn((unsigned char *)text, n, 0, err, sizeof err);
            cr_assert_neq(st, VRAM_OK, "%s: a header alone is not a whole file", e->d_name);
        } else {
            vram_status st = fn((unsigned char *)text, n, 0, err, sizeof err);
            cr_assert_neq(st, VRAM_OK, "%s parsed", e->d_name);
            cr_assert(strncmp(err, "seed: ", 6) == 0, "%s: %s", e->d_name, err);
        }
        counts[kind]++;
        free(text);
    }
    closedir(d);
}

Test(read_path, committed_seeds_say_what_their_names_say) {
    int st[3] = {0, 0, 0}, gg[3] = {0, 0, 0}, cf[3] = {0, 0, 0};
    check_corpus("safetensors", seed_safetensors, st);
    check_corpus("gguf", seed_gguf, gg);
    check_corpus("config", seed_config, cf);
    cr_assert(st[0] >= 2 && st[1] >= 2 && st[2] >= 8, "safetensors seeds %d/%d/%d", st[0], st[1],
              st[2]);
    cr_assert(gg[0] >= 2 && gg[1] >= 1 && gg[2] >= 8, "gguf seeds %d/%d/%d", gg[0], gg[1], gg[2]);
    cr_assert(cf[0] >= 7 && cf[2] >= 4, "config seeds %d/%d", cf[0], cf[2]);
}
