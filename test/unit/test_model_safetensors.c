/* Unit tests of the safetensors readers (driver/models/model_safetensors.c): GPT-2's real header
 * over a sparse data section, a TinyLlama-shaped model sharded in two with a block split
 * across the shards, and every malformed header with the status and the words of its
 * message (the file, the tensor, the defect). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fuzz/gen/model_fixtures.h"
#include "../fuzz/gen/st_index_agree.h"
#include "models/model_names.h"
#include "models/model_read.h"

static char tmp[64];

static void setup(void) { cr_assert_not_null(fx_tmpdir(tmp), "mkdtemp"); }
static void teardown(void) { fx_rmtree(tmp); }

TestSuite(safetensors, .init = setup, .fini = teardown);

/* status and message: the message must hold every needle (NULL: none) */
static void expect_err(vram_status got, vram_status want, const char *err, const char *n1,
                       const char *n2, const char *n3) {
    cr_assert_eq(got, want, "status %s, wanted %s; message: %s", vram_status_name(got),
                 vram_status_name(want), err);
    const char *needles[3] = {n1, n2, n3};
    for (int i = 0; i < 3; i++)
        if (needles[i] != NULL)
            cr_assert_not_null(strstr(err, needles[i]), "message \"%s\" lacks \"%s\"", err,
                               needles[i]);
    cr_assert_null(strchr(err, '\n'), "one line: %s", err);
}

/* ---- GPT-2 ------------------------------------------------------------------------------ */

/* What GPT-2's model.safetensors holds, counted by hand: 124,439,808 parameters plus the 12
 * causal-mask buffers of 1024 x 1024 (so the real file is 548,105,171 bytes with its header). */
static void check_gpt2(const vram_model *m) {
    const uint64_t per_block_matrices =
        768ull * 2304 + 768ull * 768 + 768ull * 3072 + 3072ull * 768;
    cr_assert_eq(m->stats.tensors, 2 + 12 * 13 + 2);
    cr_assert_eq(m->stats.params, 124439808ull + 12ull * 1024 * 1024);
    cr_assert_eq(m->stats.bytes, 4 * (124439808ull + 12ull * 1024 * 1024));
    cr_assert_eq(m->stats.bytes, 548090880ull);
    cr_assert_eq(m->stats.matrices, 48);
    cr_assert_eq(m->stats.matrix_params, 12 * per_block_matrices);
    cr_assert_eq(m->stats.matrix_rows, 12ull * (768 + 768 + 768 + 3072));
    cr_assert_eq(m->stats.outer_matrices, 2);
    cr_assert_eq(m->stats.outer_params, 50257ull * 768 + 1024ull * 768);
    cr_assert_eq(m->stats.block_params,
                 12 * (per_block_matrices + 2304 + 768 + 3072 + 768 + 4 * 768 + 1024ull * 1024));
    cr_assert_eq(m->stats.largest_bytes, 50257ull * 768 * 4);
    cr_assert_eq(m->stats.dtype_bytes[VRAM_DTYPE_F32], m->stats.bytes);
    cr_assert_eq(m->blocks, 12);
    cr_assert_eq(m->dtype, VRAM_DTYPE_F32);
    cr_assert_eq(m->arch.family, VRAM_FAMILY_NONE);
}

Test(safetensors, gpt2_header_in_memory) {
    fx_list l = {0};
    fx_buf json = {0};
    vram_model m;
    char err[512];
    fx_gpt2(&l);
    uint64_t data = fx_st_header(l.t, l.n, 1, &json);
    cr_assert_eq(data, 548090880ull);
    vram_status st =
        vram_safetensors_parse((const char *)json.p, json.n, data, "gpt2", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_str_empty(err);
    check_gpt2(&m);
    fx_free(&json);
    fx_list_free(&l);
}

Test(safetensors, gpt2_sparse_file) {
    fx_list l = {0};
    fx_buf json = {0};
    vram_model m;
    char err[512], path[4096];
    fx_gpt2(&l);
    uint64_t data = fx_st_header(l.t, l.n, 1, &json);
    cr_assert_eq(fx_st_write(fx_path(path, tmp, "model.safetensors"), &json, data, 0), 0);
    cr_assert_eq(vram_safetensors_read(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    check_gpt2(&m);
    memset(&m, 0, sizeof m);
    cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    check_gpt2(&m);
    fx_free(&json);
    fx_list_free(&l);
}

Test(safetensors, truncated_data_section_names_the_last_tensor) {
    fx_list l = {0};
    fx_buf json = {0};
    vram_model m, before;
    char err[512], path[4096];
    fx_gpt2(&l);
    uint64_t data = fx_st_header(l.t, l.n, 0, &json);
    cr_assert_eq(fx_st_write(fx_path(path, tmp, "model.safetensors"), &json, data - 100, 0), 0);
    memset(&m, 0x5a, sizeof m);
    before = m;
    vram_status st = vram_safetensors_read(path, &m, err, sizeof err);
    expect_err(st, VRAM_E_FORMAT, err, path, "'ln_f.bias'", "truncated");
    cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "nothing half-filled");
    fx_free(&json);
    fx_list_free(&l);
}

/* ---- the 8-byte length ------------------------------------------------------------------ */

static void write_raw(const char *path, uint64_t n, const char *json, uint64_t size) {
    fx_buf f = {0};
    fx_u64(&f, n);
    fx_put(&f, json, strlen(json));
    cr_assert_eq(fx_write_sparse(path, f.p, f.n, size > f.n ? size : f.n), 0);
    fx_free(&f);
}

Test(safetensors, shorter_than_the_length_field) {
    char err[512], path[4096];
    vram_model m;
    cr_assert_eq(fx_write_file(fx_path(path, tmp, "tiny.safetensors"), "\x02\0\0\0\0", 5), 0);
    expect_err(vram_safetensors_read(path, &m, err, sizeof err), VRAM_E_FORMAT, err,
               "tiny.safetensors", "truncated: 5 bytes", NULL);
    expect_err(vram_safetensors_parse_image("\x02\0\0", 3, "img", &m, err, sizeof err),
               VRAM_E_FORMAT, err, "img: truncated: 3 bytes", NULL, NULL);
}

Test(safetensors, header_length_past_the_end) {
    char err[512], path[4096];
    vram_model m;
    write_raw(fx_path(path, tmp, "model.safetensors"), 123456789012ull, "{}", 4096);
    expect_err(vram_safetensors_read(path, &m, err, sizeof err), VRAM_E_FORMAT, err,
               "model.safetensors: not a safetensors file: its first 8 bytes, read as the "
               "header length, point past the end of the file (4096 bytes)",
               NULL, NULL);
    cr_expect(strstr(err, "123456789012") == NULL, "a file that is not one is not echoed: %s", err);
}

Test(safetensors, header_over_the_limit) {
    char err[512], path[4096];
    vram_model m;
    /* 150 MB of header inside a 200 MB (sparse) file: refused before any of it is read */
    write_raw(fx_path(path, tmp, "big.safetensors"), 150000000ull, "{", 200000000ull);
    expect_err(vram_safetensors_read(path, &m, err, sizeof err), VRAM_E_FORMAT, err,
               "big.safetensors", "are over the 100,000,000-byte limit", NULL);
    cr_expect(strstr(err, "150000000") == NULL, "%s", err);
    /* the in-memory parser applies the same limit */
    expect_err(vram_safetensors_parse("{}", 100000001u, 0, "mem", &m, err, sizeof err),
               VRAM_E_FORMAT, err, "mem: header length 100000001", NULL, NULL);
}

Test(safetensors, image_parser_reads_a_whole_file) {
    const char json[] = "{\"a\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,8]}}";
    fx_buf f = {0};
    vram_model m;
    char err[256];
    fx_u64(&f, sizeof json - 1);
    fx_put(&f, json, sizeof json - 1);
    fx_put(&f, "\0\0\0\0\0\0\0\0", 8);
    cr_assert_eq(vram_safetensors_parse_image(f.p, f.n, "img", &m, err, sizeof err), VRAM_OK, "%s",
                 err);
    cr_assert_eq(m.stats.params, 4);
    cr_assert_eq(m.stats.bytes, 8);
    cr_assert_eq(m.dtype, VRAM_DTYPE_F16);
    cr_assert_eq(m.stats.outer_matrices, 0); /* not named *weight */
    /* one byte short: the tensor runs past the data section */
    expect_err(vram_safetensors_parse_image(f.p, f.n - 1, "img", &m, err, sizeof err),
               VRAM_E_FORMAT, err, "img:", "'a'", "past the end of the data section (7 bytes)");
    fx_free(&f);
}

Test(safetensors, missing_file_is_io) {
    char err[512];
    vram_model m;
    expect_err(vram_safetensors_read("/nonexistent/model.safetensors", &m, err, sizeof err),
               VRAM_E_IO, err, "/nonexistent/model.safetensors", "No such file or directory", NULL);
}

/* ---- malformed headers ------------------------------------------------------------------ */

struct bad_header {
    char name[40];
    char json[400];
    uint64_t data;
    vram_status want;
    char n1[96], n2[96];
};

#define T1(x) "{\"a\":{\"dtype\":\"F32\",\"shape\":" x ",\"data_offsets\":[0,8]}}"

ParameterizedTestParameters(safetensors, malformed) {
    static struct bad_header cases[] = {
        {"invalid json", "{\"a\":{\"dtype\":", 0, VRAM_E_FORMAT, "not valid JSON", ""},
        {"not an object", "[1,2]", 0, VRAM_E_FORMAT, "header is an array, not a JSON object", ""},
        {"junk after", "{} x", 0, VRAM_E_FORMAT, "bytes after its JSON (at byte 3", ""},
        {"unknown dtype", "{\"w.weight\":{\"dtype\":\"F12\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         8, VRAM_E_UNHANDLED, "tensor 'w.weight' has dtype 'F12'", "does not know"},
        {"lowercase dtype", "{\"w\":{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
         VRAM_E_UNHANDLED, "dtype 'f32'", ""},
        {"overlap",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
         12, VRAM_E_FORMAT, "tensors 'a' [0, 8) and 'b' [4, 12) overlap", ""},
        {"same offsets",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         8, VRAM_E_FORMAT, "overlap", "'b' [0, 8)"},
        {"gap",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}",
         20, VRAM_E_FORMAT, "gap of 4 bytes between tensor 'a' (ends at 8)",
         "tensor 'b' (begins at 12)"},
        {"gap at start", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
         VRAM_E_FORMAT, "the first tensor 'a' begins at 4, not 0", ""},
        {"gap at end", T1("[2]"), 16, VRAM_E_FORMAT, "gap of 8 bytes at the end",
         "'a' ends at 8 of 16"},
        {"past the end", T1("[2]"), 4, VRAM_E_FORMAT,
         "tensor 'a' [0, 8) runs past the end of the data section (4 bytes)", ""},
        {"no tensors but data", "{}", 8, VRAM_E_FORMAT, "no tensors, but a data section of 8", ""},
        {"size vs shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", 20,
         VRAM_E_FORMAT, "shape [2, 3] of F32 takes 24 bytes", "data_offsets [0, 20] span 20"},
        {"fractional dim", T1("[1.5]"), 8, VRAM_E_FORMAT, "tensor 'a': shape[0] is 1.5", "integer"},
        {"negative dim", T1("[2,-1]"), 8, VRAM_E_FORMAT, "shape[1] is -1", "non-negative"},
        {"huge dim", T1("[1e30]"), 8, VRAM_E_FORMAT, "shape[0] is 1e+30", "below 2^53"},
        {"past 2^53", T1("[9007199254740993]"), 8, VRAM_E_FORMAT, "shape[0] is", "below 2^53"},
        {"string dim", T1("[\"2\"]"), 8, VRAM_E_FORMAT, "shape[0] is a string, not an integer", ""},
        {"nine dims", T1("[1,1,1,1,1,1,1,1,2]"), 8, VRAM_E_FORMAT, "more than 8 dimensions", ""},
        {"shape not array", T1("3"), 8, VRAM_E_FORMAT, "shape is a number, not an array", ""},
        {"end before begin", "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}}", 8,
         VRAM_E_FORMAT, "data_offsets [8, 0] end before they begin", ""},
        {"one offset", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8,
         VRAM_E_FORMAT, "not an array of two integers", ""},
        {"negative offset", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}", 8,
         VRAM_E_FORMAT, "data_offsets[0] is -8", ""},
        {"no dtype", "{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, VRAM_E_FORMAT,
         "tensor 'a' has no dtype", ""},
        {"dtype not string", "{\"a\":{\"dtype\":4,\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
         VRAM_E_FORMAT, "dtype is a number, not a string", ""},
        {"no shape", "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8, VRAM_E_FORMAT,
         "tensor 'a' has no shape", ""},
        {"no offsets", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, VRAM_E_FORMAT,
         "tensor 'a' has no data_offsets", ""},
        {"tensor not object", "{\"a\":3}", 0, VRAM_E_FORMAT,
         "tensor 'a' is a number, not an object", ""},
        {"metadata not object", "{\"__metadata__\":[1]}", 0, VRAM_E_FORMAT,
         "__metadata__ is an array, not an object of strings", ""},
        {"metadata value", "{\"__metadata__\":{\"format\":1}}", 0, VRAM_E_FORMAT,
         "__metadata__ entry 'format' is a number, not a string", ""},
        {"duplicate",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
         16, VRAM_E_FORMAT, "tensor 'a' appears twice", ""},
        {"elements overflow", T1("[4503599627370496,4503599627370496]"), 8, VRAM_E_OVERFLOW,
         "tensor 'a': its shape holds more than 2^64 elements", ""},
        {"bytes overflow",
         "{\"a\":{\"dtype\":\"F64\",\"shape\":[4503599627370496,1024],\"data_offsets\":[0,8]}}", 8,
         VRAM_E_OVERFLOW, "take more than 2^64 bytes", ""},
        {"control chars in name",
         "{\"a\\nb\":{\"dtype\":\"F12\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
         VRAM_E_FORMAT, "header key 'a\\nb' at byte 9 of the file",
         "holds an escaped control character (\\n) at byte 11"},
    };
    return cr_make_param_array(struct bad_header, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_header *c, safetensors, malformed) {
    vram_model m, before;
    char err[512];
    memset(&m, 0x33, sizeof m);
    before = m;
    vram_status st = vram_safetensors_parse(c->json, strlen(c->json), c->data, "x.safetensors", &m,
                                            err, sizeof err);
    cr_assert_eq(st, c->want, "[%s] status %s, wanted %s: %s", c->name, vram_status_name(st),
                 vram_status_name(c->want), err);
    cr_assert(strncmp(err, "x.safetensors: ", 15) == 0, "[%s] names the file: %s", c->name, err);
    cr_assert_not_null(strstr(err, c->n1), "[%s] \"%s\" lacks \"%s\"", c->name, err, c->n1);
    cr_assert_not_null(strstr(err, c->n2), "[%s] \"%s\" lacks \"%s\"", c->name, err, c->n2);
    cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "[%s] nothing half-filled", c->name);
}

Test(safetensors, accepted_edge_cases) {
    vram_model m;
    char err[256];
    /* empty model, zero-size tensors, scalar shapes, padding spaces, every plain dtype */
    const char *ok[] = {
        "{}",
        "{\"__metadata__\":{\"format\":\"pt\"}}   ",
        "{\"z\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[0,0]},"
        "\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]}}",
        "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]},"
        "\"e\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[3,4]},"
        "\"c\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[4,12]},"
        "\"f\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[12,14]},"
        "\"g\":{\"dtype\":\"F6_E2M3\",\"shape\":[4],\"data_offsets\":[14,17]}}",
    };
    const uint64_t data[] = {0, 0, 8, 17};
    const uint64_t params[] = {0, 0, 1, 13};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        vram_status st =
            vram_safetensors_parse(ok[i], strlen(ok[i]), data[i], "ok", &m, err, sizeof err);
        cr_assert_eq(st, VRAM_OK, "case %zu: %s", i, err);
        cr_assert_eq(m.stats.bytes, data[i], "case %zu", i);
        cr_assert_eq(m.stats.params, params[i], "case %zu", i);
    }
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_F6_E2M3], 3);
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_C64], 8);
}

/* ---- sharded ------------------------------------------------------------------------------ */

/* TinyLlama-1.1B in BF16, in two shards; block 11's attention is in shard 1, its MLP in
 * shard 2 (as transformers splits by size). */
static void write_tinyllama_shards(const char *dir, fx_list *s1, fx_list *s2) {
    const fx_llama *m = &FX_TINYLLAMA;
    char path[4096];
    fx_buf index = {0};
    s1->dtype = s2->dtype = "BF16";
    FX_2(s1, "model.embed_tokens.weight", m->vocab, m->hidden);
    for (uint64_t i = 0; i < 11; i++)
        fx_llama_hf_layer(s1, m, i, 1, 1);
    fx_llama_hf_layer(s1, m, 11, 1, 0);
    fx_llama_hf_layer(s2, m, 11, 0, 1);
    for (uint64_t i = 12; i < m->layers; i++)
        fx_llama_hf_layer(s2, m, i, 1, 1);
    FX_1(s2, "model.norm.weight", m->hidden);
    FX_2(s2, "lm_head.weight", m->vocab, m->hidden);

    const char *names[2] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
    fx_list *lists[2] = {s1, s2};
    uint64_t total = 0;
    for (int k = 0; k < 2; k++) {
        fx_buf json = {0};
        uint64_t data = fx_st_header(lists[k]->t, lists[k]->n, 1, &json);
        total += data;
        cr_assert_eq(fx_st_write(fx_path(path, dir, names[k]), &json, data, 0), 0);
        fx_free(&json);
    }
    fx_printf(&index, "{\"metadata\":{\"total_size\":%llu},\"weight_map\":{",
              (unsigned long long)total);
    int first = 1;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < lists[k]->n; i++) {
            fx_printf(&index, "%s\"%s\":\"%s\"", first ? "" : ",", lists[k]->t[i].name, names[k]);
            first = 0;
        }
    fx_printf(&index, "}}");
    cr_assert_eq(
        fx_write_file(fx_path(path, dir, "model.safetensors.index.json"), index.p, index.n), 0);
    fx_free(&index);
}

static void check_tinyllama_stats(const vram_model *m) {
    const uint64_t layer_matrices = 2048ull * 2048 * 2 + 256ull * 2048 * 2 + 5632ull * 2048 * 3;
    cr_assert_eq(m->stats.tensors, 2 + 22 * 9 + 1);
    cr_assert_eq(m->stats.params, 1100048384ull); /* TinyLlama-1.1B's published count */
    cr_assert_eq(m->stats.bytes, 2 * 1100048384ull);
    cr_assert_eq(m->stats.dtype_bytes[VRAM_DTYPE_BF16], m->stats.bytes);
    cr_assert_eq(m->stats.matrices, 22 * 7);
    cr_assert_eq(m->stats.matrix_params, 22 * layer_matrices);
    cr_assert_eq(m->stats.matrix_rows, 22ull * (2048 + 256 + 256 + 2048 + 5632 + 5632 + 2048));
    cr_assert_eq(m->stats.outer_matrices, 2);
    cr_assert_eq(m->stats.outer_params, 2 * 32000ull * 2048);
    cr_assert_eq(m->stats.block_params, 22 * (layer_matrices + 2 * 2048));
    cr_assert_eq(m->blocks, 22, "block 11 spans both shards and counts once");
}

Test(safetensors, sharded_tinyllama) {
    fx_list s1 = {0}, s2 = {0};
    vram_model m;
    char err[512], path[4096];
    write_tinyllama_shards(tmp, &s1, &s2);
    fx_path(path, tmp, "model.safetensors.index.json");
    cr_assert_eq(vram_safetensors_index_read(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    check_tinyllama_stats(&m);
    cr_assert_eq(m.dtype, VRAM_DTYPE_BF16);
    memset(&m, 0, sizeof m);
    cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    check_tinyllama_stats(&m);
    fx_list_free(&s1);
    fx_list_free(&s2);
}

static void write_index(const char *dir, const char *body) {
    char path[4096];
    cr_assert_eq(
        fx_write_file(fx_path(path, dir, "model.safetensors.index.json"), body, strlen(body)), 0);
}

static void write_shard(const char *dir, const char *name, const char *const *tensors, int n) {
    fx_list l = {0};
    fx_buf json = {0};
    char path[4096];
    for (int i = 0; i < n; i++)
        FX_2(&l, tensors[i], 4, 4);
    uint64_t data = fx_st_header(l.t, l.n, 0, &json);
    cr_assert_eq(fx_st_write(fx_path(path, dir, name), &json, data, 0), 0);
    fx_free(&json);
    fx_list_free(&l);
}

static vram_status read_index(char *err, size_t cap) {
    char path[4096];
    vram_model m;
    memset(&m, 0x11, sizeof m);
    vram_model before = m;
    vram_status st = vram_safetensors_index_read(fx_path(path, tmp, "model.safetensors.index.json"),
                                                 &m, err, cap);
    if (st != VRAM_OK) cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "nothing half-filled");
    return st;
}

Test(safetensors, index_small_ok) {
    const char *a[] = {"layers.0.w.weight", "layers.1.w.weight"}, *b[] = {"head.weight"};
    char err[512];
    write_shard(tmp, "s1.safetensors", a, 2);
    write_shard(tmp, "s2.safetensors", b, 1);
    write_index(tmp,
                "{\"weight_map\":{\"layers.0.w.weight\":\"s1.safetensors\","
                "\"head.weight\":\"s2.safetensors\",\"layers.1.w.weight\":\"s1.safetensors\"}}");
    cr_assert_eq(read_index(err, sizeof err), VRAM_OK, "%s", err);
}

Test(safetensors, index_missing_shard) {
    const char *a[] = {"a.weight"};
    char err[512];
    write_shard(tmp, "s1.safetensors", a, 1);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"s1.safetensors\","
                     "\"b.weight\":\"model-00002-of-00002.safetensors\"}}");
    /* the index names a shard the directory lacks: an incomplete model is bad input */
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "model.safetensors.index.json",
               "shard 'model-00002-of-00002.safetensors'",
               "No such file or directory; the index names it, so the model is incomplete");
}

Test(safetensors, index_refuses_paths_in_shard_names) {
    char err[512];
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"../secret.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "model.safetensors.index.json",
               "'../secret.safetensors'", "no \"..\"");
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"sub/x.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "'sub/x.safetensors'",
               "no path separator", NULL);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"..\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "'..'", NULL, NULL);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"/etc/passwd\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "'/etc/passwd'",
               "no path separator", NULL);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"s1.safetensors\",\"b.weight\":\"..\\\\x\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "'..\\x'", "no path separator",
               NULL);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\".\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "'.'", "no path separator", NULL);
}

/* A shard that is not a regular file (a directory, a FIFO that no one writes) is refused with
 * its name, never read or waited on (environment: exit 3). */
Test(safetensors, index_shard_not_a_regular_file) {
    char err[512], path[4096];
    cr_assert_eq(mkdir(fx_path(path, tmp, "s1.safetensors"), 0700), 0);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"s1.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_IO, err, "s1.safetensors",
               "not a regular file", NULL);
    cr_assert_eq(mkfifo(fx_path(path, tmp, "s2.safetensors"), 0600), 0);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"s2.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_IO, err, "s2.safetensors", "FIFO", NULL);
}

/* A key given twice in the index means what Python's json (and so transformers) reads: the
 * last (issue 29), in the weight_map and at its top. Here the first mention of 'a.weight'
 * names a shard that is not there: read as the first, the model would be incomplete. */
Test(safetensors, index_duplicate_keys_last_wins) {
    const char *a[] = {"a.weight"};
    const char *body =
        "{\"weight_map\":{\"a.weight\":\"gone.safetensors\",\"a.weight\":\"s2.safetensors\"}}";
    char err[512], cmd[600], py[64] = "";
    write_shard(tmp, "s2.safetensors", a, 1);
    write_index(tmp, body);
    cr_assert_eq(read_index(err, sizeof err), VRAM_OK, "%s", err);
    /* Python's own json says which shard it reads */
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"weight_map\"]"
             "[\"a.weight\"])' %s/model.safetensors.index.json",
             tmp);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(py, sizeof py, p));
    cr_assert_eq(pclose(p), 0);
    cr_expect_str_eq(py, "s2.safetensors\n");
    /* the whole map given twice: the last */
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"gone.safetensors\"},\"metadata\":{},"
                     "\"weight_map\":{\"a.weight\":\"s2.safetensors\"}}");
    cr_assert_eq(read_index(err, sizeof err), VRAM_OK, "%s", err);
    /* and a tensor moved by its second mention out of the shard that holds it */
    const char *s2[] = {"a.weight", "c"}, *s1[] = {"b"};
    write_shard(tmp, "s2.safetensors", s2, 2);
    write_shard(tmp, "s1.safetensors", s1, 1);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"s2.safetensors\",\"c\":\"s2.safetensors\","
                     "\"b\":\"s1.safetensors\",\"a.weight\":\"s1.safetensors\"}}");
    /* Python's json keeps 'a.weight' first (its first place, its last value), so the first
     * shard the map names is s1, which lacks it */
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "s1.safetensors",
               "tensor 'a.weight' is missing: the index's weight_map puts it in this shard", NULL);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The tensor names --emit reads of an index (driver/models/model_names.c) follow the same
 * rule: the last weight_map, each tensor once. The names are compared with Python's own
 * json's keys, sorted (a key given twice keeps its first place in Python's dict, its last in
 * vramkit's reading: the set is what the device_map uses). */
Test(safetensors, index_tensor_names_last_key_wins) {
    char err[512], cmd[4800], path[4096], line[256], *py[8];
    size_t npy = 0;
    vram_names nm;
    write_index(tmp, "{\"weight_map\":{\"x.weight\":\"s1.safetensors\",\"y.weight\":"
                     "\"s1.safetensors\"},\"metadata\":{},\"weight_map\":{\"a.weight\":"
                     "\"s1.safetensors\",\"b.weight\":\"s2.safetensors\",\"a.weight\":"
                     "\"s2.safetensors\"}}");
    fx_path(path, tmp, "model.safetensors.index.json");
    cr_assert_eq(vram_model_tensor_names(path, &nm, err, sizeof err), VRAM_OK, "%s", err);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; print(\"\\n\".join(sorted(json.load(open(sys.argv[1]))"
             "[\"weight_map\"])))' %s",
             path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (npy < 8 && fgets(line, sizeof line, p) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        py[npy++] = strdup(line);
    }
    cr_assert_eq(pclose(p), 0);
    cr_assert_eq(npy, 2, "Python's json: the last weight_map, 'a.weight' once");
    cr_assert_eq(nm.n, npy, "%zu names, Python's json reads %zu", nm.n, npy);
    qsort(nm.name, nm.n, sizeof nm.name[0], cmp_str);
    for (size_t i = 0; i < npy; i++) {
        cr_expect_str_eq(nm.name[i], py[i]);
        free(py[i]);
    }
    vram_names_free(&nm);
}

Test(safetensors, index_tensor_missing_from_its_shard) {
    const char *a[] = {"a.weight"};
    char err[512];
    write_shard(tmp, "s1.safetensors", a, 1);
    write_index(
        tmp, "{\"weight_map\":{\"a.weight\":\"s1.safetensors\",\"b.weight\":\"s1.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "s1.safetensors",
               "tensor 'b.weight' is missing", NULL);
}

Test(safetensors, index_shard_holds_an_unlisted_tensor) {
    const char *a[] = {"a.weight", "stray.weight"};
    char err[512];
    write_shard(tmp, "s1.safetensors", a, 2);
    write_index(tmp, "{\"weight_map\":{\"a.weight\":\"s1.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "s1.safetensors",
               "'stray.weight', which the index's weight_map does not list", NULL);
}

Test(safetensors, index_tensor_in_the_wrong_shard) {
    const char *a[] = {"a.weight", "b.weight"}, *b[] = {"c.weight"};
    char err[512];
    write_shard(tmp, "s1.safetensors", a, 2);
    write_shard(tmp, "s2.safetensors", b, 1);
    write_index(tmp,
                "{\"weight_map\":{\"a.weight\":\"s1.safetensors\",\"b.weight\":\"s2.safetensors\","
                "\"c.weight\":\"s2.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err, "s1.safetensors",
               "'b.weight', which the index's weight_map puts in 's2.safetensors'", NULL);
}

Test(safetensors, index_shape_errors) {
    char err[512];
    struct {
        const char *body, *needle;
    } cases[] = {
        {"{\"weight_map\":", "not valid JSON"},
        {"[]", "is an array, not a JSON object"},
        {"{\"metadata\":{}}", "has no weight_map"},
        {"{\"weight_map\":[]}", "weight_map is an array, not an object"},
        {"{\"weight_map\":{}}", "weight_map is empty"},
        {"{\"weight_map\":{\"a\":1}}", "weight_map entry 'a' is a number, not a file name"},
        {"{\"weight_map\":{\"a\":\"s.safetensors\"}, \"weight_map\":{}}", "weight_map is empty"},
        {"{\"weight_map\":{\"a\":\"s.safetensors\"}} x", "bytes after the JSON object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_index(tmp, cases[i].body);
        expect_err(read_index(err, sizeof err), VRAM_E_FORMAT, err,
                   "model.safetensors.index.json: ", cases[i].needle, NULL);
    }
}

Test(safetensors, index_shard_errors_name_the_shard) {
    char err[512], path[4096];
    const char bad[] = "{\"w\":{\"dtype\":\"F12\",\"shape\":[1],\"data_offsets\":[0,4]}}";
    fx_buf f = {0};
    fx_u64(&f, sizeof bad - 1);
    fx_put(&f, bad, sizeof bad - 1);
    fx_put(&f, "\0\0\0\0", 4);
    cr_assert_eq(fx_write_file(fx_path(path, tmp, "s1.safetensors"), f.p, f.n), 0);
    write_index(tmp, "{\"weight_map\":{\"w\":\"s1.safetensors\"}}");
    expect_err(read_index(err, sizeof err), VRAM_E_UNHANDLED, err,
               "s1.safetensors: ", "dtype 'F12'", NULL);
    fx_free(&f);
}

/* ---- the streaming read and the tree read agree ----------------------------------------- */

/* Both reads of one header: the same status, message and statistics. */
static void both_reads(const char *json, uint64_t data_bytes) {
    vram__tensor_acc a, b;
    char ea[512] = "", eb[512] = "";
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    vram_status sa = vram__safetensors_parse_into(json, strlen(json), data_bytes, "h", &a, NULL,
                                                  ea, sizeof ea);
    vram_status sb = vram__safetensors_parse_tree(json, strlen(json), data_bytes, "h", &b, NULL,
                                                  eb, sizeof eb);
    cr_expect_eq(sa, sb, "%s: %d vs %d (%s | %s)", json, sa, sb, ea, eb);
    cr_expect_str_eq(ea, eb, "%s", json);
    if (sa == VRAM_OK && sb == VRAM_OK) {
        cr_expect_eq(memcmp(&a.stats, &b.stats, sizeof a.stats), 0, "%s", json);
        cr_expect_eq(vram__acc_blocks(&a), vram__acc_blocks(&b), "%s", json);
    }
    vram__acc_free(&a);
    vram__acc_free(&b);
    /* and as a file, read a window at a time (windows from smaller than one member, which
       leave the header to the whole read, to larger than the header) */
    static const size_t windows[] = {2, 16, 61, 128, 509, 4096};
    const size_t len = strlen(json);
    char path[4096];
    unsigned char n8[8];
    fx_path(path, tmp, "w.safetensors");
    for (int i = 0; i < 8; i++)
        n8[i] = (unsigned char)((uint64_t)len >> (8 * i));
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(n8, 1, 8, f), 8);
    cr_assert_eq(fwrite(json, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    if (data_bytes > ((uint64_t)1 << 40) || truncate(path, (off_t)(8 + len + data_bytes)) != 0)
        return; /* a data section no file here can have */
    memset(&b, 0, sizeof b);
    sb = vram__safetensors_parse_tree(json, len, data_bytes, path, &b, NULL, eb, sizeof eb);
    const size_t keep = vram__st_window;
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        vram__tensor_acc c;
        char ec[512] = "";
        memset(&c, 0, sizeof c);
        vram__st_window = windows[w];
        vram_status sc = vram__safetensors_read_into(path, &c, NULL, ec, sizeof ec);
        cr_expect_eq(sc, sb, "window %zu, %s: %d vs %d (%s | %s)", windows[w], json, sc, sb, ec,
                     eb);
        cr_expect_str_eq(ec, eb, "window %zu, %s", windows[w], json);
        if (sc == VRAM_OK && sb == VRAM_OK) {
            cr_expect_eq(memcmp(&c.stats, &b.stats, sizeof c.stats), 0, "window %zu, %s",
                         windows[w], json);
            cr_expect_eq(vram__acc_blocks(&c), vram__acc_blocks(&b), "window %zu, %s", windows[w],
                         json);
        }
        vram__acc_free(&c);
    }
    vram__st_window = keep;
    vram__acc_free(&b);
    unlink(path);
}

Test(safetensors, streaming_and_tree_reads_agree) {
    static const struct {
        const char *json;
        uint64_t data;
    } cases[] = {
        /* the common form (the streaming read decides) */
        {"{\"__metadata__\":{\"format\":\"pt\"},\"model.layers.0.w.weight\":{\"dtype\":\"F16\","
         "\"shape\":[2,3],\"data_offsets\":[0,12]},\"model.layers.1.w.weight\":{\"dtype\":"
         "\"BF16\",\"shape\":[3],\"data_offsets\":[12,18]}}",
         18},
        {"{}", 0},
        {" { \"a\" : { \"shape\" : [ ] , \"dtype\" : \"F32\" , \"data_offsets\" : [ 0 , 4 ] } } ",
         4},
        /* MXFP4 as transformers stores it, a fused experts' tensor */
        {"{\"model.layers.0.mlp.experts.gate_up_proj_blocks\":{\"dtype\":\"U8\",\"shape\":[2,4,1,"
         "16],\"data_offsets\":[0,128]},\"model.layers.0.mlp.experts.gate_up_proj_scales\":{"
         "\"dtype\":\"U8\",\"shape\":[2,4,1],\"data_offsets\":[128,136]}}",
         136},
        /* outside the form: left to the tree read, which decides */
        {"{\"a\\u0062\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4},
        {"{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"{\"__metadata__\":{\"d\":\"caf\xc3\xa9\"},\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
         "\"data_offsets\":[0,4]}}",
         4},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[9007199254740993],\"data_offsets\":[0,4]}}", 4},
        /* defects: the same message */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[4,8]}}",
         8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8},
        {"{\"a\":{\"dtype\":\"X9\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", 4},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4},
        {"{\"layers.1234567890123456789.w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":"
         "[0,4]}}",
         4},
        {"{\"a\x01\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"{\"a\x7f\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"{\"a\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        both_reads(cases[i].json, cases[i].data);
    /* and every seed of the fuzz corpus: hdr_* (8 bytes of data size, then the header), the
       others whole files (8 bytes of header length, the header, the data) */
    DIR *d = opendir(VRAMKIT_SOURCE_DIR "/test/fuzz/corpus/safetensors");
    struct dirent *e;
    int seeds = 0;
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL) {
        char p[512];
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, VRAMKIT_SOURCE_DIR "/test/fuzz/corpus/safetensors/%s", e->d_name);
        FILE *f = fopen(p, "rb");
        cr_assert_not_null(f);
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        if (n < 8) continue;
        buf[n] = '\0';
        uint64_t first = 0, data, hlen = n - 8;
        for (int k = 7; k >= 0; k--)
            first = first << 8 | (unsigned char)buf[k];
        if (strncmp(e->d_name, "hdr_", 4) == 0) {
            data = first;
        } else {
            if (first > n - 8) continue; /* a header past the end: no header to read */
            hlen = first;
            data = n - 8 - first;
            buf[8 + hlen] = '\0';
        }
        if (strlen(buf + 8) != hlen) continue; /* a NUL inside: not a C string */
        both_reads(buf + 8, data);
        seeds++;
    }
    closedir(d);
    cr_assert_gt(seeds, 0);
}

/* Headers long enough for the streaming read's word-at-a-time steps and its compact form,
 * with offsets in order (kept as one run), out of order (kept as spans), with empty tensors
 * inside the run and after it, a gap, an overlap, and numbers of 1 to 16 digits: the two
 * reads agree on each. */
Test(safetensors, streaming_and_tree_reads_agree_on_long_headers) {
    enum { T = 40 };
    static char json[T * 200 + 256];
    for (int order = 0; order < 6; order++)
        for (int width = 0; width < 3; width++) {
            size_t n = 0;
            uint64_t at = 0, begin[T], end[T];
            /* sizes of 1 to 16 digits where width says so (bytes = 2 x elements, F16) */
            for (int i = 0; i < T; i++) {
                uint64_t elems = width == 0 ? (uint64_t)(i % 7) + 1
                                 : width == 1 ? (uint64_t)1 << (i % 45)
                                              : (uint64_t)999999999999999 >> (i % 40);
                if (order == 2 && i % 9 == 4) elems = 0; /* empty tensors inside the run */
                begin[i] = at;
                end[i] = at + 2 * elems;
                at = end[i];
            }
            n += (size_t)snprintf(json + n, sizeof json - n, "{\"__metadata__\":{\"f\":\"pt\"}");
            for (int k = 0; k < T; k++) {
                /* 0, 2: in order; 1: reversed; 3: two swapped; 4: a gap; 5: an overlap */
                int i = order == 1                ? T - 1 - k
                        : order == 3 && k == 5 ? 6
                        : order == 3 && k == 6 ? 5
                                               : k;
                uint64_t b = begin[i], e = end[i];
                if (order == 4 && i == 20) b += 2, e += 2;
                if (order == 5 && i == 20) b -= 2, e -= 2;
                n += (size_t)snprintf(json + n, sizeof json - n,
                                      ",\"model.layers.%d.mlp.w%d.weight\":{\"dtype\":"
                                      "\"F16\",\"shape\":[%llu],\"data_offsets\":[%llu,%llu]}",
                                      i / 4, i, (unsigned long long)((e - b) / 2),
                                      (unsigned long long)b, (unsigned long long)e);
            }
            /* an empty tensor at an offset inside the run, after it: the one case where the
               streaming read's run is stricter than the spans (left to the tree read) */
            if (order == 2)
                n += (size_t)snprintf(json + n, sizeof json - n,
                                      ",\"late\":{\"dtype\":\"F16\",\"shape\":[0],"
                                      "\"data_offsets\":[%llu,%llu]}",
                                      (unsigned long long)end[3], (unsigned long long)end[3]);
            snprintf(json + n, sizeof json - n, "}");
            both_reads(json, at);
        }
}

/* The index's two reads (the streaming one, with its fallback, and the cJSON tree): the same
 * answer on every index; the common form decided by the streaming read alone. */
Test(safetensors, index_streaming_and_tree_reads_agree) {
    static const struct {
        const char *json;
        int streamed; /* the streaming read must decide it */
    } cases[] = {
        /* the common form, with what transformers and others write beside the map */
        {"{\"metadata\":{\"total_size\":1234},\"weight_map\":{\"a.weight\":\"s1.safetensors\","
         "\"b.weight\":\"s2.safetensors\",\"c\":\"s1.safetensors\"}}",
         1},
        {" {\n  \"weight_map\" : { \"a\" : \"x.safetensors\" } ,\n \"metadata\": {\"total_size\": "
         "-1.5e+3, \"parameters\": [1, 2.25, true, false, null, {\"k\": [\"v\", []]}], "
         "\"name\": \"caf\xc3\xa9\"}}\n",
         1},
        {"{\"weight_map\":{\"\":\"x\",\"caf\xc3\xa9\":\"y.safetensors\"}}", 1},
        /* outside the form: left to the tree read, which decides */
        {"{\"weight_map\":{\"a\\u0062\":\"x.safetensors\"}}", 0},
        {"{\"weight_map\":{\"a\":\"x.safetensors\",\"a\":\"y.safetensors\",\"b\":\"x.safetensors\"}}",
         0},
        {"{\"weight_map\":{\"a\":\"x.safetensors\"},\"weight_map\":{\"b\":\"y.safetensors\"}}", 0},
        {"{\"metadata\":{\"n\":012},\"weight_map\":{\"a\":\"x\"}}", 0},
        {"{\"metadata\":{\"n\":1.},\"weight_map\":{\"a\":\"x\"}}", 0},
        {"{\"metadata\":{\"n\":+1},\"weight_map\":{\"a\":\"x\"}}", 0},
        {"{\"metadata\":{\"n\":1e},\"weight_map\":{\"a\":\"x\"}}", 0},
        {"{\"metadata\":{\"n\":tru},\"weight_map\":{\"a\":\"x\"}}", 0},
        {"{\"metadata\":{\"n\":1234567890123456789012345678901234567890123},\"weight_map\":{\"a\":"
         "\"x\"}}",
         0},
        {"{\"metadata\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]],\"weight_map\":{\"a\":\"x\"}}", 0},
        {"{\"metadata\":\"\x7f\",\"weight_map\":{\"a\":\"x\"}}", 0},
        {"\xef\xbb\xbf{\"weight_map\":{\"a\":\"x\"}}", 0},
        /* defects: the same message */
        {"{\"weight_map\":{\"a\":\"../x\"}}", 0},
        {"{\"weight_map\":{\"a\":\"x\",\"b\":\"d/x\"}}", 0},
        {"{\"weight_map\":{\"a\":\".\"}}", 0},
        {"{\"weight_map\":{\"a\":\"\"}}", 0},
        {"{\"weight_map\":{\"a\":1}}", 0},
        {"{\"weight_map\":{}}", 0},
        {"{\"weight_map\":[]}", 0},
        {"{\"metadata\":{}}", 0},
        {"{}", 0},
        {"[]", 0},
        {"", 0},
        {"{\"weight_map\":{\"a\":\"x\"}} x", 0},
        {"{\"weight_map\":{\"a\":\"x\"}", 0},
        {"{\"weight_map\":{\"a\":\"x\",}}", 0},
        {"{\"weight_map\":{\"a\x01\":\"x\"}}", 0},
        {"{\"weight_map\":{\"a\x7f\":\"x\"}}", 0},
        {"{\"weight_map\":{\"a\xff\":\"x\"}}", 0},
        {"{\"weight_map\":{\"a\":\"x\xc3\"}}", 0},
        {"{\"weight_map\":{\"a\\n\":\"x\"}}", 0},
        {"{\"metadata\":{\"v\":\"\\ud800\"},\"weight_map\":{\"a\":\"x\"}}", 0},
        {"{\"weight_map\":{\"a\":\"x\"}\x0b}", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int streamed;
        const char *why = st_index_disagree(cases[i].json, strlen(cases[i].json), &streamed);
        cr_expect_null(why, "case %zu (%s): the reads differ in %s", i, cases[i].json, why);
        if (cases[i].streamed)
            cr_expect(streamed, "case %zu (%s): the streaming read decides", i, cases[i].json);
    }
    /* and every seed of the index fuzzer's corpus */
    DIR *d = opendir(VRAMKIT_SOURCE_DIR "/test/fuzz/corpus/st_index");
    struct dirent *e;
    int seeds = 0, streamed_seeds = 0;
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL) {
        char p[512];
        static char buf[1 << 20];
        int streamed;
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, VRAMKIT_SOURCE_DIR "/test/fuzz/corpus/st_index/%s", e->d_name);
        FILE *f = fopen(p, "rb");
        cr_assert_not_null(f);
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        const char *why = st_index_disagree(buf, n, &streamed);
        cr_expect_null(why, "seed %s: the reads differ in %s", e->d_name, why);
        seeds++;
        streamed_seeds += streamed;
    }
    closedir(d);
    cr_assert_gt(seeds, 0);
    cr_assert_gt(streamed_seeds, 0);
}
