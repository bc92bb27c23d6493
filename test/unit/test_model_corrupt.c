/* Bad input found by corrupting real files (issue 16 §5). Each test writes a valid file the
 * way the reference writer lays it out (model_fixtures.h: a safetensors header padded with
 * spaces to 8 bytes, a GGUF v3 header, a config.json as published), checks that it reads,
 * then flips bytes the way a bad disk, a bad copy or a bad edit does, and checks the
 * reader's answer: the status, one line naming the file, the defect and its byte offset.
 * The CLI half runs `vramkit estimate` on the same files: the exit code its help documents
 * (2 for bad input), one line on stderr, nothing on stdout. Directory cases (one shard
 * alone, a missing shard, an empty directory, GGUF beside safetensors, pickles only) are
 * here too. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../fuzz/gen/model_fixtures.h"
#include "cli_run.h"
#include "json_check.h"
#include "models/model_read.h"

static char tmp[64];

static void setup(void) { cr_assert_not_null(fx_tmpdir(tmp), "mkdtemp"); }
static void teardown(void) { fx_rmtree(tmp); }

TestSuite(corrupt, .init = setup, .fini = teardown);

/* ---- helpers ----------------------------------------------------------------------------- */

/* The offset of the first occurrence of needle in b (which must be there). */
static size_t find(const fx_buf *b, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= b->n; i++)
        if (memcmp(b->p + i, needle, n) == 0) return i;
    cr_assert_fail("'%s' is not in the file", needle);
    return 0;
}

/* A small Llama-shaped safetensors image (the reference layout: u64 length, the JSON padded
 * with spaces to a multiple of 8, the data), whole in memory. */
static void st_image(fx_buf *f) {
    static const fx_llama tiny = {2, 64, 128, 4, 2, 100};
    fx_list l = {0};
    fx_buf json = {0};
    l.dtype = "BF16";
    FX_2(&l, "model.embed_tokens.weight", tiny.vocab, tiny.hidden);
    for (uint64_t i = 0; i < tiny.layers; i++)
        fx_llama_hf_layer(&l, &tiny, i, 1, 1);
    FX_1(&l, "model.norm.weight", tiny.hidden);
    FX_2(&l, "lm_head.weight", tiny.vocab, tiny.hidden);
    uint64_t data = fx_st_header(l.t, l.n, 1, &json);
    /* the padding is what a vertical tab replaces below */
    cr_assert_neq(json.n % 8, 0, "the fixture's header needs padding (%zu bytes)", json.n);
    size_t pad = (8 - json.n % 8) % 8;
    fx_u64(f, (uint64_t)(json.n + pad));
    fx_put(f, json.p, json.n);
    for (size_t i = 0; i < pad; i++)
        fx_put(f, " ", 1);
    for (uint64_t i = 0; i < data; i++)
        fx_put(f, "", 1);
    fx_free(&json);
    fx_list_free(&l);
}

static const char *write_buf(char path[4096], const char *name, const fx_buf *b) {
    fx_path(path, tmp, name);
    cr_assert_eq(fx_write_file(path, b->p, b->n), 0, "write %s", path);
    return path;
}

static void write_text(const char *dir, const char *name, const char *text) {
    char path[4096];
    cr_assert_eq(fx_write_file(fx_path(path, dir, name), text, strlen(text)), 0);
}

/* The reader's answer on path: the status, and the message holds every needle. */
static void expect_read(const char *path, vram_status want, const char *n1, const char *n2,
                        const char *n3) {
    vram_model m, before;
    char err[1024];
    memset(&m, 0x5a, sizeof m);
    before = m;
    vram_status st = vram_read_path(path, &m, err, sizeof err);
    cr_assert_eq(st, want, "%s: status %s, wanted %s: %s", path, vram_status_name(st),
                 vram_status_name(want), err);
    const char *needles[3] = {n1, n2, n3};
    for (int i = 0; i < 3; i++)
        if (needles[i] != NULL)
            cr_assert_not_null(strstr(err, needles[i]), "message \"%s\" lacks \"%s\"", err,
                               needles[i]);
    cr_assert_null(strchr(err, '\n'), "one line: %s", err);
    if (want != VRAM_OK) {
        cr_assert_not_null(strstr(err, path), "names the input: %s", err);
        cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "nothing half-filled");
    }
}

/* `vramkit estimate PATH`: exit code, nothing on stdout, one line on stderr naming the path
 * and holding the needle. */
static void expect_cli(const char *path, int code, const char *needle) {
    const char *args[] = {"estimate", path, "--assume-gpu", "8GiB", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, code, "exit %d, wanted %d; stderr: %s", r.exit_code, code, r.err);
    cr_assert_str_empty(r.out, "nothing on stdout: %s", r.out);
    size_t n = strlen(r.err);
    cr_assert(n > 0 && r.err[n - 1] == '\n' && strchr(r.err, '\n') == r.err + n - 1,
              "one line on stderr: %s", r.err);
    cr_assert(strncmp(r.err, "vramkit: estimate: ", 19) == 0, "%s", r.err);
    cr_assert_not_null(strstr(r.err, path), "names the file: %s", r.err);
    if (needle) cr_assert_not_null(strstr(r.err, needle), "stderr \"%s\" lacks \"%s\"", r.err, needle);
    cli_result_free(&r);
}

/* ---- safetensors: a tensor name -------------------------------------------------------- */

/* Parameters are copied into the test's process: arrays, not pointers. */
struct flip {
    char name[32];
    char at[48];         /* the text whose first byte is replaced */
    size_t skip;         /* bytes into it */
    unsigned char bytes[3];
    size_t nbytes;
    char what[48];       /* the message names the defect so */
};

ParameterizedTestParameters(corrupt, safetensors_name) {
    static struct flip cases[] = {
        {"bell", "\"model.layers.1.mlp.up_proj.weight\"", 7, {0x07}, 1, "control byte 0x07"},
        {"NUL", "\"model.layers.1.mlp.up_proj.weight\"", 7, {0x00}, 1, "a NUL byte (0x00)"},
        {"line feed", "\"model.embed_tokens.weight\"", 1, {0x0a}, 1, "control byte 0x0a"},
        {"DEL", "\"lm_head.weight\"", 3, {0x7f}, 1, "a DEL byte (0x7f)"},
        {"0xff", "\"model.norm.weight\"", 6, {0xff}, 1, "invalid UTF-8 (byte 0xff)"},
        {"lone lead byte", "\"model.norm.weight\"", 6, {0xc3}, 1, "invalid UTF-8 (byte 0xc3)"},
        {"high bit set", "\"model.norm.weight\"", 6, {'n' | 0x80}, 1, "invalid UTF-8 (byte 0xee)"},
        {"overlong slash", "\"model.norm.weight\"", 6, {0xc0, 0xaf}, 2, "invalid UTF-8 (byte 0xc0)"},
        {"surrogate", "\"model.norm.weight\"", 6, {0xed, 0xa0, 0x80}, 3,
         "invalid UTF-8 (byte 0xed)"},
    };
    return cr_make_param_array(struct flip, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct flip *c, corrupt, safetensors_name) {
    fx_buf f = {0};
    char path[4096], want[128];
    st_image(&f);
    write_buf(path, "model.safetensors", &f);
    expect_read(path, VRAM_OK, NULL, NULL, NULL); /* the file as written reads */
    size_t key = find(&f, c->at), at = key + c->skip;
    memcpy(f.p + at, c->bytes, c->nbytes);
    write_buf(path, "model.safetensors", &f);
    char where[128];
    snprintf(where, sizeof where, "at byte %zu of the file holds", key);
    snprintf(want, sizeof want, "%s at byte %zu; names must be printable UTF-8", c->what, at);
    expect_read(path, VRAM_E_FORMAT, "header key '", where, want);
    expect_cli(path, 2, want);
    fx_free(&f);
}

/* A name that is valid UTF-8 beyond ASCII is a name like any other. */
Test(corrupt, safetensors_utf8_name_is_fine) {
    const char *json = "{\"caf\xc3\xa9.\xe2\x82\xac.\xf0\x9f\x98\x80\":{\"dtype\":\"F32\","
                       "\"shape\":[2],\"data_offsets\":[0,8]}}";
    vram_model m;
    char err[256];
    cr_assert_eq(vram_safetensors_parse(json, strlen(json), 8, "u.safetensors", &m, err, sizeof err),
                 VRAM_OK, "%s", err);
    cr_assert_eq(m.stats.params, 2);
}

/* Escapes the reference writer emits for a control character (serde_json writes \u0007,
 * \n): valid JSON, but the name holds a control character. Escapes elsewhere (a metadata
 * value with a line feed) stay accepted. */
Test(corrupt, safetensors_escaped_control_in_name) {
    static const struct {
        const char *json, *what;
    } bad[] = {
        {"{\"a\\u0007b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         "an escaped control character (\\u0007) at byte 11"},
        {"{\"a\\u0000\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         "an escaped control character (\\u0000) at byte 11"},
        {"{\"a\\tb\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         "an escaped control character (\\t) at byte 11"},
        {"{\"a\\ud800\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         "a lone surrogate (\\ud800) at byte 11"},
    };
    vram_model m;
    char err[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_status st = vram_safetensors_parse(bad[i].json, strlen(bad[i].json), 8,
                                                "e.safetensors", &m, err, sizeof err);
        cr_assert_eq(st, VRAM_E_FORMAT, "[%zu] %s", i, err);
        cr_assert_not_null(strstr(err, bad[i].what), "[%zu] \"%s\" lacks \"%s\"", i, err,
                           bad[i].what);
    }
    const char *ok = "{\"__metadata__\":{\"note\":\"line one\\nline two \\u00e9\"},"
                     "\"a\\u00e9\\ud83d\\ude00\":{\"dtype\":\"F32\",\"shape\":[2],"
                     "\"data_offsets\":[0,8]}}";
    cr_assert_eq(vram_safetensors_parse(ok, strlen(ok), 8, "ok.safetensors", &m, err, sizeof err),
                 VRAM_OK, "%s", err);
}

/* The header's padding is spaces; a flipped one is a vertical tab or a form feed, which
 * cJSON takes for whitespace and RFC 8259 does not. */
Test(corrupt, safetensors_vertical_tab_as_whitespace) {
    static const unsigned char flips[] = {0x0b, 0x0c, 0x01};
    static const char *const names[] = {"a vertical tab (0x0b)", "a form feed (0x0c)",
                                        "control byte 0x01"};
    for (size_t k = 0; k < sizeof flips; k++) {
        fx_buf f = {0};
        char path[4096], want[160];
        st_image(&f);
        uint64_t hl = 0;
        for (int i = 7; i >= 0; i--)
            hl = hl << 8 | f.p[i];
        size_t at = 8 + (size_t)hl - 1; /* the last padding byte */
        cr_assert_eq(f.p[at], ' ', "the reference layout pads with spaces");
        f.p[at] = flips[k];
        write_buf(path, "model.safetensors", &f);
        snprintf(want, sizeof want,
                 "%s at byte %zu of the file, in the header, is not JSON whitespace", names[k],
                 at);
        expect_read(path, VRAM_E_FORMAT, want, NULL, NULL);
        expect_cli(path, 2, want);
        fx_free(&f);
    }
}

/* ---- GGUF: a tensor name, a metadata key ------------------------------------------------ */

static void gguf_image(fx_buf *b) {
    static const fx_llama tiny = {2, 256, 512, 4, 2, 64};
    fx_gguf g = {0};
    fx_list l = {0};
    fx_gguf_llama_meta(&g, &tiny, 512, 64);
    fx_llama_gguf(&l, &tiny);
    uint64_t size = fx_gguf_build(&g, &l, b, NULL);
    while (b->n < size)
        fx_put(b, "", 1);
    fx_free(&g.kv);
    fx_list_free(&l);
}

ParameterizedTestParameters(corrupt, gguf_name) {
    static struct flip cases[] = {
        {"tensor name bell", "blk.1.ffn_up.weight", 6, {0x07}, 1, "control byte 0x07"},
        {"tensor name NUL", "blk.0.attn_q.weight", 2, {0x00}, 1, "a NUL byte (0x00)"},
        {"tensor name 0xff", "output_norm.weight", 0, {0xff}, 1, "invalid UTF-8 (byte 0xff)"},
        {"tensor name high bit", "token_embd.weight", 4, {'n' | 0x80}, 1,
         "invalid UTF-8 (byte 0xee)"},
        {"metadata key", "llama.block_count", 11, {0x1b}, 1, "control byte 0x1b"},
        {"metadata key utf-8", "llama.embedding_length", 3, {0xe2, 0x28}, 2,
         "invalid UTF-8 (byte 0xe2)"},
    };
    return cr_make_param_array(struct flip, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct flip *c, corrupt, gguf_name) {
    fx_buf f = {0};
    char path[4096], want[128], where[64];
    gguf_image(&f);
    write_buf(path, "tiny.gguf", &f);
    expect_read(path, VRAM_OK, NULL, NULL, NULL);
    size_t name = find(&f, c->at), at = name + c->skip;
    memcpy(f.p + at, c->bytes, c->nbytes);
    write_buf(path, "tiny.gguf", &f);
    snprintf(where, sizeof where, "at byte %zu holds", name);
    snprintf(want, sizeof want, "%s at byte %zu; names must be printable UTF-8", c->what, at);
    expect_read(path, VRAM_E_FORMAT, strncmp(c->name, "metadata", 8) == 0 ? "metadata key " : "tensor name ",
                where, want);
    expect_cli(path, 2, want);
    fx_free(&f);
}

/* ---- config.json: a key, whitespace --------------------------------------------------- */

/* A key with a flipped byte is no longer the key: before, the reader took the default for
 * the key it did not find (gpt2 without n_layer: 12 layers) and changed the count. */
ParameterizedTestParameters(corrupt, config_key) {
    static struct flip cases[] = {
        {"bell in n_layer", "\"n_layer\"", 3, {0x07}, 1, "control byte 0x07"},
        {"0xff in vocab_size", "\"vocab_size\"", 1, {0xff}, 1, "invalid UTF-8 (byte 0xff)"},
        {"high bit in n_embd", "\"n_embd\"", 2, {'_' | 0x80}, 1, "invalid UTF-8 (byte 0xdf)"},
        {"DEL in n_head", "\"n_head\"", 6, {0x7f}, 1, "a DEL byte (0x7f)"},
    };
    return cr_make_param_array(struct flip, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct flip *c, corrupt, config_key) {
    fx_buf f = {0};
    char path[4096], want[128], where[64];
    fx_put(&f, FX_CFG_GPT2, strlen(FX_CFG_GPT2));
    write_buf(path, "config.json", &f);
    expect_read(path, VRAM_OK, NULL, NULL, NULL);
    size_t key = find(&f, c->at), at = key + c->skip;
    memcpy(f.p + at, c->bytes, c->nbytes);
    write_buf(path, "config.json", &f);
    snprintf(where, sizeof where, "key '");
    snprintf(want, sizeof want, "at byte %zu of the file holds %s at byte %zu", key, c->what, at);
    expect_read(path, VRAM_E_FORMAT, where, want, "names must be printable UTF-8");
    expect_cli(path, 2, want);
    fx_free(&f);
}

/* A string value may hold any UTF-8 and escaped control characters; a raw control byte or
 * invalid UTF-8 in it is not JSON. */
Test(corrupt, config_value_bytes) {
    fx_buf f = {0};
    char path[4096];
    fx_put(&f, FX_CFG_GPT2, strlen(FX_CFG_GPT2));
    size_t at = find(&f, "\"gelu_new\"") + 3;
    f.p[at] = 0x09; /* a raw tab inside a string */
    write_buf(path, "config.json", &f);
    expect_read(path, VRAM_E_FORMAT, "string 'ge?u_new'", "control byte 0x09",
                "JSON text must be UTF-8 without raw control bytes");
    expect_cli(path, 2, "control byte 0x09");
    fx_free(&f);
    write_text(tmp, "config.json",
               "{\"model_type\":\"gpt2\",\"note\":\"\\u0007 caf\xc3\xa9\\n\",\"n_layer\":2}");
    expect_read(path, VRAM_OK, NULL, NULL, NULL);
}

/* config.json as transformers writes it (indent 2: spaces and line feeds between tokens);
 * one flipped to a vertical tab or a form feed. Trailing NULs (a preallocated file) stay
 * accepted; a NUL inside the object does not. */
Test(corrupt, config_vertical_tab) {
    static const char *cfg = "{\n  \"model_type\": \"gpt2\",\n  \"n_layer\": 2\n}\n";
    char path[4096], want[128];
    fx_path(path, tmp, "config.json");
    for (int k = 0; k < 3; k++) {
        fx_buf f = {0};
        static const unsigned char b[] = {0x0b, 0x0c, 0x00};
        static const char *const w[] = {"a vertical tab (0x0b)", "a form feed (0x0c)",
                                        "a NUL byte (0x00)"};
        fx_put(&f, cfg, strlen(cfg));
        size_t at = find(&f, "  \"n_layer\"");
        f.p[at] = b[k];
        write_buf(path, "config.json", &f);
        snprintf(want, sizeof want, "%s at byte %zu of the file is not JSON whitespace", w[k], at);
        expect_read(path, VRAM_E_FORMAT, want, NULL, NULL);
        expect_cli(path, 2, want);
        fx_free(&f);
    }
    fx_buf f = {0};
    fx_put(&f, cfg, strlen(cfg));
    fx_put(&f, "\0\0\0\0", 4);
    write_buf(path, "config.json", &f);
    expect_read(path, VRAM_OK, NULL, NULL, NULL);
    fx_free(&f);
}

/* The index's weight_map keys are tensor names too. */
Test(corrupt, index_name) {
    char path[4096];
    write_text(tmp, "model.safetensors.index.json",
               "{\"metadata\":{},\"weight_map\":{\"a.w\x01ight\":\"model-00001-of-00001.safetensors\"}}");
    fx_path(path, tmp, "model.safetensors.index.json");
    expect_read(path, VRAM_E_FORMAT, "key 'a.w?ight' at byte 29", "control byte 0x01 at byte 33",
                NULL);
}

/* ---- sharded sets, directories -------------------------------------------------------- */

Test(corrupt, shard_names) {
    static const struct {
        const char *name;
        int ok;
        unsigned long i, n;
    } cases[] = {
        {"model-00001-of-00030.safetensors", 1, 1, 30},
        {"model-00030-of-00030.safetensors", 1, 30, 30},
        {"diffusion_pytorch_model-00002-of-00003.safetensors", 1, 2, 3},
        {"a-1-of-2.safetensors", 1, 1, 2},
        {"model-00001-of-00001.safetensors", 0, 0, 0}, /* a set of one is the model */
        {"model-00031-of-00030.safetensors", 0, 0, 0},
        {"model-00000-of-00030.safetensors", 0, 0, 0},
        {"model.safetensors", 0, 0, 0},
        {"model-00001-of-00030.gguf", 0, 0, 0},
        {"00001-of-00030.safetensors", 0, 0, 0},
        {"model-x-of-00030.safetensors", 0, 0, 0},
        {"model-00001-of-.safetensors", 0, 0, 0},
        {"model-1234567890-of-1234567891.safetensors", 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        unsigned long i = 0, n = 0;
        int ok = vram__shard_name(cases[k].name, &i, &n);
        cr_assert_eq(ok, cases[k].ok, "%s", cases[k].name);
        if (ok) cr_assert(i == cases[k].i && n == cases[k].n, "%s: %lu of %lu", cases[k].name, i, n);
    }
}

/* One shard given alone: it is counted (it is a valid file), and the note says it is one of
 * n and where the whole model is. The CLI still answers (exit 0) and prints the note. */
Test(corrupt, one_shard_alone) {
    fx_buf f = {0};
    char path[4096], err[1024];
    vram_model m;
    st_image(&f);
    write_buf(path, "model-00003-of-00030.safetensors", &f);
    cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_not_null(strstr(err, "shard 3 of 30 of a sharded model; only this shard was counted"),
                       "%s", err);
    cr_assert_not_null(strstr(err, "give the directory or its model.safetensors.index.json"),
                       "%s", err);
    cr_assert_gt(m.stats.params, 0);
    const char *args[] = {"estimate", path, "--assume-gpu", "8GiB", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "note: "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "shard 3 of 30"), "%s", r.out);
    cli_result_free(&r);
    /* plan says it too: in the text, and as notes in the JSON */
    const char *pargs[] = {"plan", "--model", path, "--assume-gpu", "8GiB", "--host-memory",
                           "8GiB", NULL};
    r = cli_run(pargs);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "\nnote: "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "shard 3 of 30 of a sharded model"), "%s", r.out);
    cli_result_free(&r);
    const char *jargs[] = {"plan", "--component", "llm=", "--assume-gpu", "8GiB",
                           "--host-memory", "8GiB", "--json", NULL};
    char spec[4200];
    snprintf(spec, sizeof spec, "llm=%s", path);
    jargs[2] = spec;
    r = cli_run(jargs);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = jparse(r.out);
    const cJSON *notes = jget(doc, "notes");
    cr_assert_eq(cJSON_GetArraySize(notes), 1);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(notes, 0), "component"), "llm");
    cr_expect_not_null(strstr(jstr(cJSON_GetArrayItem(notes, 0), "note"), "shard 3 of 30"));
    cJSON_Delete(doc);
    cli_result_free(&r);
    /* the same bytes under a plain name carry no note */
    write_buf(path, "weights.safetensors", &f);
    cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_str_empty(err);
    fx_free(&f);
}

/* An index naming a shard that is not there, and an empty directory: bad input, exit 2
 * (they were exit 3, an environment error, while the help documents 2 for bad input). */
Test(corrupt, missing_shard_and_empty_directory) {
    char path[4096], dir[4096];
    write_text(tmp, "model.safetensors.index.json",
               "{\"metadata\":{},\"weight_map\":{\"model.embed_tokens.weight\":"
               "\"model-00001-of-00002.safetensors\",\"lm_head.weight\":"
               "\"model-00002-of-00002.safetensors\"}}");
    fx_path(path, tmp, "model.safetensors.index.json");
    expect_read(path, VRAM_E_FORMAT, "shard 'model-00001-of-00002.safetensors'",
                "No such file or directory; the index names it, so the model is incomplete",
                NULL);
    expect_cli(path, 2, "No such file or directory; the index names it, so the model is incomplete");
    expect_cli(tmp, 2, "the index names it, so the model is incomplete");
    cr_assert_eq(remove(path), 0);
    snprintf(dir, sizeof dir, "%s", tmp);
    expect_read(dir, VRAM_E_INVALID, "no model files here", NULL, NULL);
    expect_cli(dir, 2, "no model files here");
}

/* Shards without their index: the directory names one instead of saying nothing is here. */
Test(corrupt, shards_without_index) {
    fx_buf f = {0};
    char path[4096];
    st_image(&f);
    write_buf(path, "model-00001-of-00002.safetensors", &f);
    expect_read(tmp, VRAM_E_INVALID, "but model-00001-of-00002.safetensors",
                "give that file, or the index of its set", NULL);
    expect_cli(tmp, 2, "but model-00001-of-00002.safetensors");
    fx_free(&f);
}

/* GGUF beside safetensors: the safetensors are read, and the note says so and why. */
Test(corrupt, gguf_beside_safetensors) {
    fx_buf st = {0}, gg = {0};
    char path[4096], err[1024];
    vram_model both, alone;
    st_image(&st);
    gguf_image(&gg);
    write_buf(path, "model.safetensors", &st);
    cr_assert_eq(vram_read_path(path, &alone, err, sizeof err), VRAM_OK, "%s", err);
    write_buf(path, "model.Q4_K_M.gguf", &gg);
    cr_assert_eq(vram_read_path(tmp, &both, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(both.stats.params, alone.stats.params, "the safetensors were counted");
    cr_assert_eq(both.stats.bytes, alone.stats.bytes);
    cr_assert_not_null(strstr(err, "read model.safetensors; model.Q4_K_M.gguf was not read"), "%s",
                       err);
    cr_assert_not_null(strstr(err, "the safetensors are the published weights a GGUF is "
                                   "converted from; give the .gguf file itself to count it"),
                       "%s", err);
    const char *args[] = {"estimate", tmp, "--assume-gpu", "8GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "model.Q4_K_M.gguf was not read"), "%s", r.out);
    cli_result_free(&r);
    /* two GGUFs beside the safetensors: named as a set */
    write_buf(path, "model.Q8_0.gguf", &gg);
    cr_assert_eq(vram_read_path(tmp, &both, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_not_null(strstr(err, "the .gguf files ("), "%s", err);
    cr_assert_not_null(strstr(err, ", ...) were not read"), "%s", err);
    fx_free(&st);
    fx_free(&gg);
}

/* Only pickled weights: named, and why they are not read. Beside config.json: counted from
 * the config, with the same reason as a note. */
Test(corrupt, pickle_only) {
    char err[1024];
    vram_model m;
    /* a PyTorch zip's first bytes; the contents do not matter: it is never opened */
    write_text(tmp, "pytorch_model.bin", "PK\x03\x04 not read");
    expect_read(tmp, VRAM_E_UNHANDLED, "holds pytorch_model.bin, a Python pickle",
                "vramkit interprets no pickles",
                "convert it to safetensors, or add the model's config.json");
    expect_cli(tmp, 2, "holds pytorch_model.bin, a Python pickle");
    write_text(tmp, "config.json", FX_CFG_GPT2);
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.layers, 12);
    cr_assert_not_null(strstr(err, "pytorch_model.bin is a Python pickle"), "%s", err);
    cr_assert_not_null(strstr(err, "the count comes from config.json"), "%s", err);
    /* with model.safetensors there too, the pickle is simply not needed: no note */
    fx_buf f = {0};
    char path[4096];
    st_image(&f);
    write_buf(path, "model.safetensors", &f);
    cr_assert_eq(vram_read_path(tmp, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_null(strstr(err, "pickle"), "%s", err);
    fx_free(&f);
}
