/* Unit tests of the GGUF reader (driver/models/model_gguf.c): a TinyLlama-1.1B-shaped Q4_K_M file
 * (v3 and v2, sparse data, a 32,000-string vocabulary), architectures from metadata, and
 * every malformed header with the status and the words of its message. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/gen/model_fixtures.h"
#include "models/model_read.h"

static char tmp[64];

static void setup(void) { cr_assert_not_null(fx_tmpdir(tmp), "mkdtemp"); }
static void teardown(void) { fx_rmtree(tmp); }

TestSuite(gguf, .init = setup, .fini = teardown);

static void expect_err(vram_status got, vram_status want, const char *err, const char *n1,
                       const char *n2) {
    cr_assert_eq(got, want, "status %s, wanted %s; message: %s", vram_status_name(got),
                 vram_status_name(want), err);
    cr_assert_not_null(strstr(err, n1), "message \"%s\" lacks \"%s\"", err, n1);
    if (n2 != NULL) cr_assert_not_null(strstr(err, n2), "message \"%s\" lacks \"%s\"", err, n2);
    cr_assert_null(strchr(err, '\n'), "one line: %s", err);
}

/* A source over b whose size may be declared larger (a header whose tensor data is not
 * there): bytes past b cannot be read. */
typedef struct bounded {
    const unsigned char *p;
    size_t n;
} bounded;
static int bounded_read(void *ctx, uint64_t off, void *buf, size_t n) {
    const bounded *b = ctx;
    if (off > b->n || n > b->n - off) return 5; /* EIO */
    memcpy(buf, b->p + off, n);
    return 0;
}

/* Parses an image in memory; checks nothing is half-filled on error. */
static vram_status parse_mem(const fx_buf *b, uint64_t virtual_size, vram_model *m, char *err,
                             size_t cap) {
    bounded ctx = {b->p, b->n};
    vram_gguf_source src = vram_gguf_source_memory(b->p, b->n);
    vram_model before;
    if (virtual_size) {
        src.size = virtual_size;
        src.read_at = bounded_read;
        src.ctx = &ctx;
    }
    memset(m, 0x77, sizeof *m);
    before = *m;
    vram_status st = vram_gguf_parse(&src, "m.gguf", m, err, cap);
    if (st != VRAM_OK) cr_assert_eq(memcmp(m, &before, sizeof *m), 0, "nothing half-filled");
    return st;
}

/* ---- TinyLlama Q4_K_M ------------------------------------------------------------------ */

static uint64_t write_tinyllama(const char *path, uint32_t version, uint32_t alignment,
                                uint32_t tokens, int64_t size_delta) {
    fx_gguf g = {0};
    fx_list l = {0};
    fx_buf head = {0};
    g.version = version;
    g.alignment = alignment;
    if (alignment != 0) fx_gguf_u32(&g, "general.alignment", alignment);
    fx_gguf_llama_meta(&g, &FX_TINYLLAMA, 2048, tokens);
    fx_llama_gguf(&l, &FX_TINYLLAMA);
    uint64_t size = fx_gguf_build(&g, &l, &head, NULL);
    cr_assert_eq(fx_write_sparse(path, head.p, head.n, (uint64_t)((int64_t)size + size_delta)), 0);
    fx_free(&head);
    fx_free(&g.kv);
    fx_list_free(&l);
    return size;
}

/* Counted by hand: Q4_K stores 256 elements in 144 bytes, Q6_K in 210, F32 4 bytes each. */
static void check_tinyllama(const vram_model *m) {
    const uint64_t q4k = 144, q6k = 210;
    const uint64_t layer_q4k =
        (2048ull * 2048 * 2 + 256ull * 2048 * 2 + 5632ull * 2048 * 2) / 256 * q4k;
    const uint64_t layer_q6k = 5632ull * 2048 / 256 * q6k;
    cr_assert_eq(m->stats.tensors, 201);
    cr_assert_eq(m->stats.params, 1100048384ull);
    cr_assert_eq(m->stats.dtype_bytes[VRAM_DTYPE_Q4_K],
                 32000ull * 2048 / 256 * q4k + 22 * layer_q4k);
    cr_assert_eq(m->stats.dtype_bytes[VRAM_DTYPE_Q6_K],
                 32000ull * 2048 / 256 * q6k + 22 * layer_q6k);
    cr_assert_eq(m->stats.dtype_bytes[VRAM_DTYPE_F32], 4ull * 2048 * (1 + 2 * 22));
    cr_assert_eq(m->stats.bytes, 701411328ull);
    cr_assert_eq(m->stats.matrices, 22 * 7);
    cr_assert_eq(m->stats.matrix_params,
                 22ull * (2048 * 2048 * 2 + 256 * 2048 * 2 + 5632 * 2048 * 3));
    /* rows as stored (outermost first after reversing ne[]) */
    cr_assert_eq(m->stats.matrix_rows, 22ull * (2048 + 256 + 256 + 2048 + 5632 + 5632 + 2048));
    cr_assert_eq(m->stats.outer_matrices, 2);
    cr_assert_eq(m->stats.outer_rows, 64000);
    cr_assert_eq(m->stats.largest_bytes, 32000ull * 2048 / 256 * q6k);
    cr_assert_eq(m->blocks, 22);
    cr_assert_eq(m->dtype, VRAM_DTYPE_Q4_K);
    /* the architecture, from llama.* metadata */
    const vram_arch *a = &m->arch;
    cr_assert_eq(a->family, VRAM_FAMILY_DECODER);
    cr_assert_eq(a->layers, 22);
    cr_assert_eq(a->hidden, 2048);
    cr_assert_eq(a->heads, 32);
    cr_assert_eq(a->kv_heads, 4);
    cr_assert_eq(a->head_dim, 0);
    cr_assert_eq(a->intermediate, 5632);
    cr_assert_eq(a->vocab, 32000);
    cr_assert_eq(a->context, 2048);
    cr_assert_eq(a->mlp, VRAM_MLP_GATED);
    cr_assert_eq(a->norm, VRAM_NORM_RMS);
    cr_assert_eq(a->flags, VRAM_ARCH_FINAL_NORM, "untied: the file has output.weight");
    vram_param_count pc = {0};
    cr_assert_eq(vram_arch_params(a, &pc), VRAM_OK);
    cr_assert_eq(pc.total, m->stats.params, "the metadata and the tensors agree");
}

Test(gguf, tinyllama_v3_sparse_file) {
    char path[4096], err[512];
    vram_model m;
    write_tinyllama(fx_path(path, tmp, "tinyllama.Q4_K_M.gguf"), 3, 0, 32000, 0);
    cr_assert_eq(vram_gguf_read(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_str_empty(err);
    check_tinyllama(&m);
    memset(&m, 0, sizeof m);
    cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    check_tinyllama(&m);
}

Test(gguf, tinyllama_v2_and_alignment_64) {
    char path[4096], err[512];
    vram_model m;
    write_tinyllama(fx_path(path, tmp, "v2.gguf"), 2, 64, 300, 0);
    cr_assert_eq(vram_gguf_read(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    check_tinyllama(&m);
}

Test(gguf, vocabulary_from_tokens_when_no_embedding) {
    fx_gguf g = {0};
    fx_list l = {0};
    fx_buf b = {0};
    vram_model m;
    char err[512];
    fx_gguf_llama_meta(&g, &FX_TINYLLAMA, 2048, 1000);
    uint64_t size = fx_gguf_build(&g, &l, &b, NULL);
    cr_assert_eq(size, b.n);
    cr_assert_eq(parse_mem(&b, 0, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.vocab, 1000);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.flags & VRAM_ARCH_TIED, VRAM_ARCH_TIED, "no output.weight");
    cr_assert_eq(m.stats.tensors, 0);
    cr_assert_eq(m.blocks, 0);
    fx_free(&b);
    fx_free(&g.kv);
}

Test(gguf, truncated_data_names_the_tensor) {
    char path[4096], err[512];
    vram_model m;
    write_tinyllama(fx_path(path, tmp, "cut.gguf"), 3, 0, 100, -1000);
    expect_err(vram_gguf_read(path, &m, err, sizeof err), VRAM_E_FORMAT, err, "cut.gguf: tensor ",
               "past the end of the file");
    cr_assert_not_null(strstr(err, "truncated"), "%s", err);
    /* the last tensor in the data section is output.weight */
    cr_assert_not_null(strstr(err, "'output.weight'"), "%s", err);
}

Test(gguf, magic_decides_not_the_extension) {
    char path[4096], err[512];
    vram_model m;
    write_tinyllama(fx_path(path, tmp, "weights.bin"), 3, 0, 10, 0);
    cr_assert_eq(vram_read_path(path, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.stats.tensors, 201);
    /* and a .gguf that is not one says so */
    cr_assert_eq(fx_write_file(fx_path(path, tmp, "fake.gguf"), "PK\x03\x04 not gguf", 13), 0);
    expect_err(vram_read_path(path, &m, err, sizeof err), VRAM_E_FORMAT, err,
               "fake.gguf: not a GGUF file (it does not start with \"GGUF\")", NULL);
    cr_expect(strstr(err, "50 4b") == NULL, "its bytes are not echoed: %s", err);
}

/* ---- malformed headers, built byte by byte ------------------------------------------------- */

/* A header: magic, version, counts; then the caller appends. */
static void head(fx_buf *b, const char *magic, uint32_t version, uint64_t tensors, uint64_t kvs) {
    fx_put(b, magic, 4);
    fx_u32(b, version);
    fx_u64(b, tensors);
    fx_u64(b, kvs);
}
static void key(fx_buf *b, const char *k, uint32_t type) {
    fx_u64(b, strlen(k));
    fx_put(b, k, strlen(k));
    fx_u32(b, type);
}
static void str(fx_buf *b, const char *s) {
    fx_u64(b, strlen(s));
    fx_put(b, s, strlen(s));
}
/* one tensor info: name, dims (ne order), ggml type, offset */
static void tinfo(fx_buf *b, const char *name, uint32_t nd, const uint64_t *ne, uint32_t type,
                  uint64_t off) {
    str(b, name);
    fx_u32(b, nd);
    for (uint32_t i = 0; i < nd; i++)
        fx_u64(b, ne[i]);
    fx_u32(b, type);
    fx_u64(b, off);
}
static void pad(fx_buf *b, size_t align, size_t data) {
    while (b->n % align)
        fx_put(b, "", 1);
    for (size_t i = 0; i < data; i++)
        fx_put(b, "", 1);
}

static void expect_mem(const fx_buf *b, vram_status want, const char *n1, const char *n2) {
    vram_model m;
    char err[512];
    expect_err(parse_mem(b, 0, &m, err, sizeof err), want, err, n1, n2);
    cr_assert(strncmp(err, "m.gguf: ", 8) == 0, "names the file: %s", err);
}

Test(gguf, bad_magic) {
    fx_buf b = {0};
    head(&b, "GGML", 3, 0, 0);
    expect_mem(&b, VRAM_E_FORMAT, "not a GGUF file (it does not start with \"GGUF\")", NULL);
    fx_free(&b);
    fx_put(&b, "GG", 2);
    expect_mem(&b, VRAM_E_FORMAT, "truncated: 2 bytes", NULL);
    fx_free(&b);
}

Test(gguf, versions) {
    fx_buf b = {0};
    head(&b, "GGUF", 1, 0, 0);
    expect_mem(&b, VRAM_E_UNHANDLED, "GGUF version 1 is not supported", "only 2 and 3");
    fx_free(&b);
    head(&b, "GGUF", 4, 0, 0);
    expect_mem(&b, VRAM_E_UNHANDLED, "GGUF version 4 is not supported", NULL);
    fx_free(&b);
    head(&b, "GGUF", 0x03000000u, 0, 0);
    expect_mem(&b, VRAM_E_UNHANDLED, "big-endian", NULL);
    fx_free(&b);
    /* v2 and v3 with nothing in them are fine */
    for (uint32_t v = 2; v <= 3; v++) {
        vram_model m;
        char err[256];
        head(&b, "GGUF", v, 0, 0);
        cr_assert_eq(parse_mem(&b, 0, &m, err, sizeof err), VRAM_OK, "%s", err);
        cr_assert_eq(m.stats.tensors, 0);
        cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
        cr_assert_not_null(strstr(err, "no general.architecture"), "a note: %s", err);
        fx_free(&b);
    }
}

Test(gguf, absurd_counts) {
    fx_buf b = {0};
    head(&b, "GGUF", 3, 2000000, 0);
    expect_mem(&b, VRAM_E_FORMAT, "tensor count 2000000 is absurd", NULL);
    fx_free(&b);
    head(&b, "GGUF", 3, 0, UINT64_MAX);
    expect_mem(&b, VRAM_E_FORMAT, "metadata count 18446744073709551615 is absurd", NULL);
    fx_free(&b);
    /* plausible counts that the file cannot hold */
    head(&b, "GGUF", 3, 1000, 0);
    pad(&b, 1, 100);
    expect_mem(&b, VRAM_E_FORMAT, "1000 tensor infos cannot fit in the 100 bytes", NULL);
    fx_free(&b);
    head(&b, "GGUF", 3, 0, 500000);
    pad(&b, 1, 100);
    expect_mem(&b, VRAM_E_FORMAT, "500000 metadata entries", "cannot fit");
    fx_free(&b);
}

Test(gguf, strings) {
    fx_buf b = {0};
    /* a value that runs past the end */
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "general.name", 8);
    fx_u64(&b, 1000);
    fx_put(&b, "short", 5);
    expect_mem(&b, VRAM_E_FORMAT, "metadata 'general.name': string of 1000 bytes",
               "runs past the end of the file");
    fx_free(&b);
    /* over 1 GiB */
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "general.name", 8);
    fx_u64(&b, UINT64_C(1) << 31);
    expect_mem(&b, VRAM_E_FORMAT, "string length 2147483648 is over the 1 GiB limit", NULL);
    fx_free(&b);
    /* a key past the end, and one over 65,535 bytes */
    head(&b, "GGUF", 3, 0, 1);
    fx_u64(&b, 40);
    fx_put(&b, "general.", 8);
    pad(&b, 1, 5);
    expect_mem(&b, VRAM_E_FORMAT, "metadata key 1 of 1 of 40 bytes", "runs past the end");
    fx_free(&b);
    head(&b, "GGUF", 3, 0, 1);
    fx_u64(&b, 70000);
    pad(&b, 1, 20);
    expect_mem(&b, VRAM_E_FORMAT, "has length 70000, over the 65535-byte limit", NULL);
    fx_free(&b);
    /* a tensor name past the end */
    head(&b, "GGUF", 3, 1, 0);
    fx_u64(&b, 30);
    fx_put(&b, "blk.0.", 6);
    pad(&b, 1, 20);
    expect_mem(&b, VRAM_E_FORMAT, "tensor name 1 of 1 of 30 bytes", "runs past the end");
    fx_free(&b);
}

Test(gguf, arrays) {
    fx_buf b = {0};
    vram_model m;
    char err[256];
    /* a count that cannot fit */
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "tokenizer.ggml.tokens", 9);
    fx_u32(&b, 8);
    fx_u64(&b, 1000000000ull);
    pad(&b, 1, 64);
    expect_mem(&b, VRAM_E_FORMAT, "'tokenizer.ggml.tokens': an array of 1000000000 elements",
               "cannot fit in the 64 bytes");
    fx_free(&b);
    /* a string inside an array that runs past the end */
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "tokenizer.ggml.tokens", 9);
    fx_u32(&b, 8);
    fx_u64(&b, 2);
    str(&b, "a");
    fx_u64(&b, 99);
    pad(&b, 1, 4);
    expect_mem(&b, VRAM_E_FORMAT, "string of 99 bytes", "runs past the end");
    fx_free(&b);
    /* arrays of arrays: two deep is fine, three is not */
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "x.pairs", 9);
    fx_u32(&b, 9);
    fx_u64(&b, 2);
    for (int i = 0; i < 2; i++) {
        fx_u32(&b, 4);
        fx_u64(&b, 2);
        fx_u32(&b, 7);
        fx_u32(&b, 8);
    }
    cr_assert_eq(parse_mem(&b, 0, &m, err, sizeof err), VRAM_OK, "%s", err);
    fx_free(&b);
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "x.deep", 9);
    fx_u32(&b, 9);
    fx_u64(&b, 1);
    fx_u32(&b, 9);
    fx_u64(&b, 1);
    fx_u32(&b, 4);
    fx_u64(&b, 0);
    expect_mem(&b, VRAM_E_FORMAT, "'x.deep': arrays nested more than 2 deep", NULL);
    fx_free(&b);
    /* bad element and value types */
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "x.arr", 9);
    fx_u32(&b, 13);
    fx_u64(&b, 0);
    expect_mem(&b, VRAM_E_FORMAT, "array element type 13 is not one of 0-12", NULL);
    fx_free(&b);
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "x.val", 99);
    pad(&b, 1, 8);
    expect_mem(&b, VRAM_E_FORMAT, "metadata 'x.val' has value type 99", NULL);
    fx_free(&b);
}

Test(gguf, duplicates) {
    fx_buf b = {0};
    const uint64_t ne[1] = {8};
    head(&b, "GGUF", 3, 0, 2);
    key(&b, "general.name", 8);
    str(&b, "a");
    key(&b, "general.name", 8);
    str(&b, "b");
    expect_mem(&b, VRAM_E_FORMAT, "metadata key 'general.name' appears twice", NULL);
    fx_free(&b);
    head(&b, "GGUF", 3, 2, 0);
    tinfo(&b, "t", 1, ne, 0, 0);
    tinfo(&b, "t", 1, ne, 0, 32);
    pad(&b, 32, 64);
    expect_mem(&b, VRAM_E_FORMAT, "tensor 't' appears twice", NULL);
    fx_free(&b);
}

Test(gguf, tensor_infos) {
    fx_buf b = {0};
    const uint64_t ne5[5] = {1, 1, 1, 1, 1}, ne_row100[2] = {100, 4}, ne[2] = {256, 2};
    head(&b, "GGUF", 3, 1, 0);
    tinfo(&b, "t5", 5, ne5, 0, 0);
    pad(&b, 32, 64);
    expect_mem(&b, VRAM_E_FORMAT, "tensor 't5' has 5 dimensions, not 1 to 4", NULL);
    fx_free(&b);
    /* ggml type 4 (the removed Q4_2) */
    head(&b, "GGUF", 3, 1, 0);
    tinfo(&b, "blk.0.attn_q.weight", 2, ne, 4, 0);
    pad(&b, 32, 1024);
    expect_mem(&b, VRAM_E_UNHANDLED, "tensor 'blk.0.attn_q.weight' has ggml type 4",
               "does not know");
    fx_free(&b);
    /* Q4_K rows must be whole blocks of 256 */
    head(&b, "GGUF", 3, 1, 0);
    tinfo(&b, "odd", 2, ne_row100, 12, 0);
    pad(&b, 32, 1024);
    expect_mem(&b, VRAM_E_FORMAT, "rows of 100 elements are not whole q4_k blocks of 256", NULL);
    fx_free(&b);
    /* dims that overflow */
    const uint64_t big[2] = {UINT64_C(1) << 40, UINT64_C(1) << 40};
    head(&b, "GGUF", 3, 1, 0);
    tinfo(&b, "huge", 2, big, 0, 0);
    pad(&b, 32, 0);
    expect_mem(&b, VRAM_E_OVERFLOW, "'huge': its dimensions hold more than 2^64 elements", NULL);
    fx_free(&b);
}

Test(gguf, data_section) {
    fx_buf b = {0};
    const uint64_t ne[1] = {8}; /* 8 x F32 = 32 bytes */
    /* misaligned */
    head(&b, "GGUF", 3, 1, 0);
    tinfo(&b, "w", 1, ne, 0, 16);
    pad(&b, 32, 64);
    expect_mem(&b, VRAM_E_FORMAT, "tensor 'w': offset 16 is not a multiple of the alignment 32",
               NULL);
    fx_free(&b);
    /* overlapping */
    head(&b, "GGUF", 3, 2, 0);
    tinfo(&b, "a", 1, (const uint64_t[]){16}, 0, 0);
    tinfo(&b, "b", 1, ne, 0, 32);
    pad(&b, 32, 96);
    expect_mem(&b, VRAM_E_FORMAT, "tensors 'a' [0, +64) and 'b' [32, +32) overlap", NULL);
    fx_free(&b);
    /* past the end */
    head(&b, "GGUF", 3, 1, 0);
    tinfo(&b, "w", 1, ne, 0, 0);
    pad(&b, 32, 31);
    expect_mem(&b, VRAM_E_FORMAT, "tensor 'w' (32 bytes at data offset 0)",
               "past the end of the file");
    fx_free(&b);
    /* general.alignment: not a power of two, not an integer; 64 moves the data section */
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "general.alignment", 4);
    fx_u32(&b, 48);
    expect_mem(&b, VRAM_E_FORMAT, "general.alignment is 48, not a power of two", NULL);
    fx_free(&b);
    head(&b, "GGUF", 3, 0, 1);
    key(&b, "general.alignment", 8);
    str(&b, "32");
    expect_mem(&b, VRAM_E_FORMAT, "general.alignment is not an integer", NULL);
    fx_free(&b);
    vram_model m;
    char err[256];
    head(&b, "GGUF", 3, 1, 1);
    key(&b, "general.alignment", 4);
    fx_u32(&b, 64);
    tinfo(&b, "w", 1, ne, 0, 64);
    pad(&b, 64, 64 + 32);
    cr_assert_eq(parse_mem(&b, 0, &m, err, sizeof err), VRAM_OK, "%s", err);
    b.n -= 1; /* now one byte short */
    expect_mem(&b, VRAM_E_FORMAT, "tensor 'w'", "past the end of the file");
    fx_free(&b);
}

Test(gguf, truncated_header) {
    fx_gguf g = {0};
    fx_list l = {0};
    fx_buf b = {0};
    fx_gguf_llama_meta(&g, &FX_TINYLLAMA, 2048, 50);
    fx_llama_gguf(&l, &FX_TINYLLAMA);
    fx_gguf_build(&g, &l, &b, NULL);
    /* cut in the tensor infos: every cut point gives a clean error, never a crash */
    for (size_t cut = 0; cut < b.n; cut += b.n / 97 + 1) {
        fx_buf c = {0};
        vram_model m;
        char err[512];
        fx_put(&c, b.p, cut);
        vram_status st = parse_mem(&c, 0, &m, err, sizeof err);
        cr_assert_eq(st, VRAM_E_FORMAT, "cut at %zu: %s (%s)", cut, vram_status_name(st), err);
        cr_assert(strncmp(err, "m.gguf: ", 8) == 0, "%s", err);
        fx_free(&c);
    }
    fx_free(&b);
    fx_free(&g.kv);
    fx_list_free(&l);
}

/* ---- architectures ------------------------------------------------------------------------- */

Test(gguf, architectures_from_metadata) {
    fx_buf b = {0};
    vram_model m;
    char err[512];
    const uint64_t emb[2] = {768, 50257}, pos[2] = {768, 1024}, qkv_b[1] = {2304}, out_b[1] = {768},
                   up_b[1] = {3072};
    /* gpt2: layer norm, plain MLP, biases found from the tensor names, learned positions */
    head(&b, "GGUF", 3, 5, 6);
    key(&b, "general.architecture", 8);
    str(&b, "gpt2");
    key(&b, "gpt2.block_count", 4);
    fx_u32(&b, 12);
    key(&b, "gpt2.embedding_length", 4);
    fx_u32(&b, 768);
    key(&b, "gpt2.feed_forward_length", 4);
    fx_u32(&b, 3072);
    key(&b, "gpt2.attention.head_count", 10); /* a u64 is an integer too */
    fx_u64(&b, 12);
    key(&b, "gpt2.context_length", 4);
    fx_u32(&b, 1024);
    tinfo(&b, "token_embd.weight", 2, emb, 1, 0);
    tinfo(&b, "position_embd.weight", 2, pos, 1, 77194752);
    tinfo(&b, "blk.0.attn_qkv.bias", 1, qkv_b, 0, 77194752 + 1572864);
    tinfo(&b, "blk.0.attn_output.bias", 1, out_b, 0, 77194752 + 1572864 + 9216);
    tinfo(&b, "blk.0.ffn_up.bias", 1, up_b, 0, 77194752 + 1572864 + 9216 + 3072);
    uint64_t size = 0;
    while ((b.n + size) % 32)
        size++;
    size += b.n + 77194752 + 1572864 + 9216 + 3072 + 12288;
    cr_assert_eq(parse_mem(&b, size, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.mlp, VRAM_MLP_PLAIN);
    cr_assert_eq(m.arch.norm, VRAM_NORM_LAYER);
    cr_assert_eq(m.arch.flags, VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS |
                                   VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED);
    cr_assert_eq(m.arch.vocab, 50257);
    cr_assert_eq(m.arch.positions, 1024);
    cr_assert_eq(m.arch.heads, 12);
    cr_assert_eq(m.dtype, VRAM_DTYPE_F16);
    fx_free(&b);
}

/* A GGUF with general.architecture `arch`, its five basic numbers (4 blocks of width 256,
 * MLP 512, 8 heads, 2 KV heads), n more keys (u32 when types[i] is 4 or 5, else u64) and a
 * tokenizer of 3 tokens, parsed. */
static void arch_keys(const char *arch, int n, const uint32_t *types, const char *const *keys,
                      const uint64_t *values, vram_model *m, char *err, size_t cap,
                      vram_status *st) {
    fx_buf b = {0};
    char k[128];
    head(&b, "GGUF", 3, 0, 7 + (uint64_t)n);
    key(&b, "general.architecture", 8);
    str(&b, arch);
    const char *names[5] = {"block_count", "embedding_length", "feed_forward_length",
                            "attention.head_count", "attention.head_count_kv"};
    const uint32_t base[5] = {4, 256, 512, 8, 2};
    for (int i = 0; i < 5; i++) {
        snprintf(k, sizeof k, "%s.%s", arch, names[i]);
        key(&b, k, 4);
        fx_u32(&b, base[i]);
    }
    for (int i = 0; i < n; i++) {
        key(&b, keys[i], types[i]);
        if (types[i] == 4 || types[i] == 5)
            fx_u32(&b, (uint32_t)values[i]);
        else
            fx_u64(&b, values[i]);
    }
    key(&b, "tokenizer.ggml.tokens", 9);
    fx_u32(&b, 8);
    fx_u64(&b, 3);
    str(&b, "a");
    str(&b, "b");
    str(&b, "c");
    *st = parse_mem(&b, 0, m, err, cap);
    fx_free(&b);
}

static void arch_case(const char *arch, uint32_t extra_key_type, const char *extra_key,
                      uint64_t extra_value, vram_model *m, char *err, size_t cap, vram_status *st) {
    arch_keys(arch, extra_key ? 1 : 0, &extra_key_type, &extra_key, &extra_value, m, err, cap, st);
}

/* arch_case with two more u32 keys (a mixture of experts' counts) */
static void moe_case(const char *arch, const char *k1, uint32_t v1, const char *k2, uint32_t v2,
                     vram_model *m, char *err, size_t cap, vram_status *st) {
    const uint32_t types[2] = {4, 4};
    const char *const keys[2] = {k1, k2};
    const uint64_t values[2] = {v1, v2};
    arch_keys(arch, 2, types, keys, values, m, err, cap, st);
}

Test(gguf, mixture_of_experts) {
    vram_model m;
    char err[512];
    vram_status st;
    /* Mixtral's GGUF: arch llama with expert_count and expert_used_count */
    moe_case("llama", "llama.expert_count", 8, "llama.expert_used_count", 2, &m, err, sizeof err,
             &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.experts, 8);
    cr_assert_eq(m.arch.experts_per_token, 2);
    vram_param_count pc;
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
    /* 4 blocks of 8 experts of 3 x 512 x 256, 2 of them per token */
    cr_assert_eq(pc.expert_params, 4ull * 8 * 3 * 512 * 256);
    cr_assert_eq(pc.total - pc.active, 4ull * 6 * 3 * 512 * 256);
    /* qwen3moe with its own expert width */
    moe_case("qwen3moe", "qwen3moe.expert_count", 4, "qwen3moe.expert_feed_forward_length", 64,
             &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE, "no expert_used_count: not modelled");
    /* more used than there are */
    moe_case("llama", "llama.expert_count", 8, "llama.expert_used_count", 9, &m, err, sizeof err,
             &st);
    expect_err(st, VRAM_E_FORMAT, err, "llama.expert_used_count 9 is more than llama.expert_count 8",
               NULL);
    moe_case("llama", "llama.expert_count", 8, "llama.expert_used_count", 0, &m, err, sizeof err,
             &st);
    expect_err(st, VRAM_E_FORMAT, err, "metadata 'llama.expert_used_count' is 0", NULL);
}

Test(gguf, architecture_table_and_notes) {
    vram_model m;
    char err[512];
    vram_status st;
    arch_case("qwen2", 0, NULL, 0, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.kv_heads, 2);
    cr_assert_eq(m.arch.vocab, 3);
    arch_case("bert", 0, NULL, 0, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_ENCODER);
    cr_assert(m.arch.flags & VRAM_ARCH_NO_HEAD);
    arch_case("rwkv7", 0, NULL, 0, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(
        strstr(err, "m.gguf: general.architecture 'rwkv7' is not in vramkit's table"), "%s", err);
    /* a state-space model without its mixer's keys (test_model_gguf_arch.c reads whole ones) */
    arch_case("mamba", 0, NULL, 0, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "m.gguf: metadata has no mamba.ssm.conv_kernel (its recurrent "
                              "mixer); architecture left unknown"),
                       "%s", err);
    arch_case("llama", 4, "llama.expert_count", 8, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "8 experts (mixture of experts) but no llama.expert_used_count"),
                       "%s", err);
    /* numbers out of range are errors that name the key */
    arch_case("llama", 5, "llama.context_length", (uint64_t)(uint32_t)-5, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "metadata 'llama.context_length' is -5", NULL);
    arch_case("llama", 10, "llama.attention.key_length", 5000000, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "'llama.attention.key_length' is 5000000", "1..");
    arch_case("llama", 10, "llama.attention.key_length", 200000, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "8 heads x 200000 head_dim is over 1000000", NULL);
}

/* ---- deepseek2 and gpt-oss: the arch from metadata against the tensor headers ---------- */

#include <vramkit/estimate.h>

/* A GGUF header of g's metadata and l's tensors, parsed from memory (the data section
 * declared but not there); l and g freed. */
static vram_status parse_built(fx_gguf *g, fx_list *l, vram_model *m, char *err, size_t cap) {
    fx_buf b = {0};
    uint64_t size = fx_gguf_build(g, l, &b, NULL);
    vram_status st = parse_mem(&b, size, m, err, cap);
    fx_free(&b);
    fx_free(&g->kv);
    fx_list_free(l);
    return st;
}

static vram_param_count arch_count(const vram_model *m) {
    vram_param_count pc;
    memset(&pc, 0, sizeof pc);
    cr_assert_eq(vram_arch_params(&m->arch, &pc), VRAM_OK);
    return pc;
}

static void deepseek2_gguf(const fx_mla *x, int split, vram_model *m, char *err, size_t cap) {
    fx_gguf g = {0};
    fx_list l = {0};
    fx_gguf_deepseek2_meta(&g, x, split, 0);
    fx_deepseek2_gguf(&l, x, split);
    cr_assert_eq(parse_built(&g, &l, m, err, cap), VRAM_OK, "%s", err);
}

Test(gguf, deepseek2_v2_lite_two_blocks) {
    /* DeepSeek-V2-Lite cut to its first two blocks (block 0 dense, block 1 with experts), in
       both forms llama.cpp's converter has written (attn_kv_b; attn_k_b + attn_v_b since its
       MLA split: convert_hf_to_gguf.py's DeepseekV2Model, src/models/deepseek2.cpp's tensor
       shapes). By hand, per the shapes of fx_deepseek2_gguf: */
    const uint64_t h = 2048, attn = 3072ull * h + 576ull * h + 512 + 512ull * 4096 + h * 2048;
    const uint64_t dense = attn + 2 * h + 3ull * 10944 * h;
    const uint64_t moe = attn + 2 * h + 64ull * h + 64ull * 3 * 1408 * h + 3ull * 2816 * h;
    const uint64_t outer = 2ull * 102400 * h + h;
    fx_mla x = FX_DEEPSEEK_V2_LITE;
    x.layers = 2;
    for (int split = 0; split <= 1; split++) {
        vram_model m;
        char err[512];
        deepseek2_gguf(&x, split, &m, err, sizeof err);
        const vram_arch *a = &m.arch;
        cr_assert_eq(a->family, VRAM_FAMILY_DECODER);
        cr_assert_eq(a->kv_lora_rank, 512);
        cr_assert_eq(a->q_lora_rank, 0, "V2-Lite: q projected directly");
        cr_assert_eq(a->rope_dim, 64);
        cr_assert_eq(a->head_dim, 192, "split %d: the heads' key size, not the MQA form's", split);
        cr_assert_eq(a->v_head_dim, 128);
        cr_assert_eq(a->kv_heads, 16);
        cr_assert_eq(a->experts, 64);
        cr_assert_eq(a->experts_per_token, 6);
        cr_assert_eq(a->expert_intermediate, 1408);
        cr_assert_eq(a->shared_intermediate, 2 * 1408);
        cr_assert_eq(a->dense_layers, 1);
        cr_assert_eq(a->flags, VRAM_ARCH_FINAL_NORM);
        /* the same number two ways: the metadata's arch and the tensor headers */
        vram_param_count pc = arch_count(&m);
        cr_assert_eq(m.stats.params, dense + moe + outer);
        cr_assert_eq(pc.total, m.stats.params, "split %d: arch %llu, tensors %llu", split,
                     (unsigned long long)pc.total, (unsigned long long)m.stats.params);
        cr_assert_eq(pc.expert_params, m.stats.expert_params);
        cr_assert_eq(pc.total - pc.active, 58ull * 3 * 1408 * h, "58 of 64 experts idle");
        if (split)
            cr_assert_str_empty(err);
        else
            cr_assert_not_null(strstr(err, "before llama.cpp split attn_kv_b"), "%s", err);
        /* the KV cache: the compressed KV and the rotary key per token and block */
        vram_workload w;
        vram_estimate e;
        memset(&w, 0, sizeof w);
        w.seq = 4096;
        w.batch = 2;
        w.compute = VRAM_DTYPE_BF16;
        cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
        cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].expected, 2ull * (512 + 64) * 4096 * 2 * 2);
        cr_assert_eq(e.params, m.stats.params);
    }
}

Test(gguf, deepseek2_v2_lite_whole_agrees_with_config) {
    /* all 27 blocks; the count equals the one from V2-Lite's config.json (test_moe.c) */
    static const char cfg[] =
        "{\"model_type\":\"deepseek_v2\",\"q_lora_rank\":null,\"hidden_size\":2048,"
        "\"num_attention_heads\":16,\"num_key_value_heads\":16,\"num_hidden_layers\":27,"
        "\"n_routed_experts\":64,\"moe_intermediate_size\":1408,\"intermediate_size\":10944,"
        "\"vocab_size\":102400}";
    vram_model m, c;
    char err[512];
    deepseek2_gguf(&FX_DEEPSEEK_V2_LITE, 1, &m, err, sizeof err);
    cr_assert_eq(vram_config_parse(cfg, strlen(cfg), "config.json", &c, err, sizeof err), VRAM_OK,
                 "%s", err);
    vram_param_count pg = arch_count(&m), pcfg = arch_count(&c);
    cr_assert_eq(pg.total, m.stats.params);
    cr_assert_eq(pg.total, pcfg.total, "gguf %llu, config %llu", (unsigned long long)pg.total,
                 (unsigned long long)pcfg.total);
    cr_assert_eq(pg.active, pcfg.active);
    cr_assert(pg.total > 15600000000ull && pg.total < 15800000000ull, "published 15.7B");
}

Test(gguf, deepseek2_moe_layer_freq) {
    /* DeepSeek-V2-Lite's widths, 5 blocks, the first dense, moe_layer_freq 2 (blocks 2 and 4
       routed, as DeepSeek's modelling code builds it; llama.cpp's converter writes no key for
       it): the file's routers decide, with a note, and the count is the file's */
    const uint64_t h = 2048, attn = 3072ull * h + 576ull * h + 512 + 512ull * 4096 + h * 2048;
    const uint64_t dense = attn + 2 * h + 3ull * 10944 * h;
    const uint64_t moe = attn + 2 * h + 64ull * h + 64ull * 3 * 1408 * h + 3ull * 2816 * h;
    const uint64_t outer = 2ull * 102400 * h + h;
    fx_mla x = FX_DEEPSEEK_V2_LITE;
    x.layers = 5;
    x.freq = 2;
    vram_model m;
    char err[1024];
    deepseek2_gguf(&x, 1, &m, err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.dense_layers, 3, "blocks 0, 1, 3 dense");
    cr_assert_not_null(strstr(err, "experts (ffn_gate_inp) in 2 of the 4 blocks after the 1 "
                                   "leading dense ones"),
                       "%s", err);
    cr_assert_eq(m.stats.params, 3 * dense + 2 * moe + outer);
    vram_param_count pc = arch_count(&m);
    cr_assert_eq(pc.total, m.stats.params, "arch %llu, tensors %llu", (unsigned long long)pc.total,
                 (unsigned long long)m.stats.params);
    cr_assert_eq(pc.total - pc.active, 2 * 58ull * 3 * 1408 * h, "58 of 64 experts idle, twice");
}

Test(gguf, deepseek2_q_rank_and_routing_bias) {
    /* a V3-like cut: q through q_a/q_b, and exp_probs_b (DeepSeek-V3's routing bias, a
       buffer in transformers, a tensor [experts] in the GGUF) counted as the file has it */
    fx_mla x = {3, 1, 256, 4, 64, 32, 16, 8, 16, 512, 8, 2, 64, 1, 100, 0};
    fx_gguf g = {0};
    fx_list l = {0};
    vram_model m;
    char err[512];
    fx_gguf_deepseek2_meta(&g, &x, 1, 0);
    fx_deepseek2_gguf(&l, &x, 1);
    FX_1(&l, "blk.1.exp_probs_b.bias", 8);
    FX_1(&l, "blk.2.exp_probs_b.bias", 8);
    cr_assert_eq(parse_built(&g, &l, &m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.q_lora_rank, 64);
    cr_assert_eq(m.arch.extra_params, 16);
    cr_assert_eq(arch_count(&m).total, m.stats.params);
}

static void gpt_oss_gguf(const fx_oss *x, vram_model *m, char *err, size_t cap) {
    fx_gguf g = {0};
    fx_list l = {0};
    fx_gguf_gpt_oss_meta(&g, x, 0);
    fx_gpt_oss_gguf(&l, x);
    cr_assert_eq(parse_built(&g, &l, m, err, cap), VRAM_OK, "%s", err);
}

Test(gguf, gpt_oss_20b_two_blocks) {
    /* gpt-oss-20b cut to two blocks, as llama.cpp's converter writes it (GptOssModel: gate_up
       split into gate and up, MXFP4 experts, sinks as attn_sinks.weight; the openai-moe
       loader's shapes). By hand: */
    const uint64_t h = 2880;
    const uint64_t attn = 4096 * h + 4096 + 2 * (512 * h + 512) + h * 4096 + h + 64;
    const uint64_t ffn = 32 * h + 32 + 32ull * 3 * h * h + 32ull * 3 * h;
    const uint64_t outer = 2ull * 201088 * h + h;
    fx_oss x = FX_GPT_OSS_20B;
    x.layers = 2;
    vram_model m;
    char err[512];
    gpt_oss_gguf(&x, &m, err, sizeof err);
    const vram_arch *a = &m.arch;
    cr_assert_eq(a->family, VRAM_FAMILY_DECODER);
    cr_assert_eq(a->experts, 32);
    cr_assert_eq(a->experts_per_token, 4);
    cr_assert_eq(a->head_dim, 64);
    cr_assert_eq(a->kv_heads, 8);
    cr_assert_eq(a->flags, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS);
    /* biases from the tensor names; the clamped gate is the architecture's */
    cr_assert_eq(a->moe_flags, VRAM_MOE_ROUTER_BIAS | VRAM_MOE_EXPERT_BIAS | VRAM_MOE_GATE_CLAMP);
    cr_assert_eq(a->expert_format, VRAM_DTYPE_MXFP4);
    cr_assert_eq(a->extra_params, 2 * 64, "the sinks");
    cr_assert_eq(m.stats.params, 2 * (attn + 2 * h + ffn) + outer);
    vram_param_count pc = arch_count(&m);
    cr_assert_eq(pc.total, m.stats.params, "arch %llu, tensors %llu", (unsigned long long)pc.total,
                 (unsigned long long)m.stats.params);
    cr_assert_eq(pc.expert_params, m.stats.expert_params);
    /* its window, on every other block (llama.cpp's set_swa_pattern(2)) */
    cr_assert_eq(a->sliding_window, 128);
    cr_assert_eq(a->window_layers, 1, "2 blocks: block 0 slides");
    cr_assert_eq(err[0], '\0', "no note: the window is modelled: %s", err);
}

Test(gguf, gpt_oss_20b_whole_agrees_with_config) {
    vram_model m, c;
    char err[512];
    const char *cfg = "{\"model_type\":\"gpt_oss\"}"; /* every default is gpt-oss-20b's */
    gpt_oss_gguf(&FX_GPT_OSS_20B, &m, err, sizeof err);
    cr_assert_eq(vram_config_parse(cfg, strlen(cfg), "config.json", &c, err, sizeof err), VRAM_OK,
                 "%s", err);
    vram_param_count pg = arch_count(&m), pcfg = arch_count(&c);
    cr_assert_eq(pg.total, m.stats.params);
    cr_assert_eq(pg.total, pcfg.total, "gguf %llu, config %llu", (unsigned long long)pg.total,
                 (unsigned long long)pcfg.total);
    cr_assert_eq(pg.active, pcfg.active);
    /* the same window on the same blocks */
    cr_assert_eq(m.arch.sliding_window, c.arch.sliding_window);
    cr_assert_eq(m.arch.window_layers, c.arch.window_layers);
    cr_assert_eq(m.arch.window_layers, 12);
    /* the experts as stored: MXFP4, 17 bytes per 32 values */
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_MXFP4], 24ull * 32 * 3 * 2880 * 2880 / 32 * 17);
}

/* deepseek2 / gpt-oss keys (u32 unless typed) on arch_keys' 4 blocks of width 256, 8 heads */
static void keys_case(const char *arch, int n, const char *const *k, const uint64_t *v,
                      const uint32_t *types, vram_model *m, char *err, size_t cap,
                      vram_status *st) {
    uint32_t t[16];
    for (int i = 0; i < n; i++)
        t[i] = types != NULL ? types[i] : 4;
    arch_keys(arch, n, t, k, v, m, err, cap, st);
}

Test(gguf, deepseek2_and_gpt_oss_bad_values) {
    vram_model m;
    char err[512];
    vram_status st;
    const char *base[4] = {"deepseek2.attention.kv_lora_rank", "deepseek2.rope.dimension_count",
                           "deepseek2.attention.key_length", "deepseek2.expert_feed_forward_length"};
    /* well formed: the MLA numbers read, kv_heads = heads */
    uint64_t v[4] = {64, 16, 48, 128};
    keys_case("deepseek2", 4, base, v, NULL, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.kv_lora_rank, 64);
    cr_assert_eq(m.arch.head_dim, 48);
    cr_assert_eq(m.arch.kv_heads, 8);
    /* the rotary part as wide as the key */
    v[1] = 48;
    keys_case("deepseek2", 4, base, v, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err,
               "m.gguf: metadata: deepseek2.rope.dimension_count 48 is not less than "
               "deepseek2.attention.key_length 48",
               NULL);
    v[1] = 16;
    /* negative, zero, absurd */
    const uint32_t i32[4] = {5, 4, 4, 4};
    v[0] = (uint32_t)-512;
    keys_case("deepseek2", 4, base, v, i32, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "'deepseek2.attention.kv_lora_rank' is -512", "1..");
    v[0] = 64;
    const char *more[6] = {base[0], base[1], base[2], base[3], "deepseek2.leading_dense_block_count",
                           "deepseek2.expert_shared_count"};
    uint64_t mv[6] = {64, 16, 48, 128, 5, 1};
    keys_case("deepseek2", 6, more, mv, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err,
               "deepseek2.leading_dense_block_count 5 is more than deepseek2.block_count 4", NULL);
    mv[4] = 0; /* 0 leading dense blocks is allowed */
    mv[5] = 200000;
    keys_case("deepseek2", 6, more, mv, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "'deepseek2.expert_shared_count' is 200000",
               "not an integer in 0..100000");
    mv[5] = 10000;
    keys_case("deepseek2", 6, more, mv, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "deepseek2.expert_shared_count 10000 x "
               "expert_feed_forward_length 128 is over the width limit", NULL);
    /* the heads' key size from key_length_mla, too wide for 8 heads */
    const char *mla[3] = {base[0], base[1], "deepseek2.attention.key_length_mla"};
    const uint64_t mlv[3] = {64, 16, 200000};
    keys_case("deepseek2", 3, mla, mlv, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "8 heads of deepseek2.attention.key_length_mla 200000",
               "over the width limit");
    /* no kv_lora_rank: not latent attention vramkit can count; a note */
    keys_case("deepseek2", 1, &base[1], &v[1], NULL, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "metadata has no deepseek2.attention.kv_lora_rank"), "%s", err);
    /* gpt-oss */
    const char *oss[3] = {"gpt-oss.expert_count", "gpt-oss.expert_used_count",
                          "gpt-oss.attention.sliding_window"};
    uint64_t ov[3] = {32, 33, 128};
    keys_case("gpt-oss", 3, oss, ov, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err,
               "gpt-oss.expert_used_count 33 is more than gpt-oss.expert_count 32", NULL);
    ov[1] = 4;
    ov[2] = 0;
    keys_case("gpt-oss", 3, oss, ov, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "'gpt-oss.attention.sliding_window' is 0", NULL);
    ov[2] = 128;
    keys_case("gpt-oss", 3, oss, ov, NULL, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.extra_params, 4 * 8, "sinks: 8 heads in each of 4 blocks");
}

/* Sliding windows (issue 16): llama.cpp's patterns for gemma2 (every other block), gemma3
 * (all but each 6th) and gpt-oss (every other), the window from <arch>.attention.
 * sliding_window (src/llama-model.cpp: set_swa_pattern(2) / (6) / (2)); other
 * architectures run without a window in llama.cpp, so none is read. arch_keys: 4 blocks. */
Test(gguf, sliding_window) {
    vram_model m;
    char err[512];
    vram_status st;
    const char *k2[1] = {"gemma2.attention.sliding_window"};
    uint64_t v[1] = {4096};
    keys_case("gemma2", 1, k2, v, NULL, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.sliding_window, 4096);
    cr_assert_eq(m.arch.window_layers, 2, "blocks 0 and 2");
    const char *k3[1] = {"gemma3.attention.sliding_window"};
    v[0] = 512;
    keys_case("gemma3", 1, k3, v, NULL, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.sliding_window, 512);
    cr_assert_eq(m.arch.window_layers, 4, "4 blocks, none a 6th");
    /* gemma3 with window 0: none (llama.cpp then runs it without one) */
    v[0] = 0;
    keys_case("gemma3", 1, k3, v, NULL, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.sliding_window, 0);
    cr_assert_eq(m.arch.window_layers, 0);
    /* gemma3 without the key: none */
    arch_case("gemma3", 0, NULL, 0, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.window_layers, 0);
    /* a negative window (i32): one line naming the file and the key */
    const uint32_t i32[1] = {5};
    v[0] = (uint64_t)(uint32_t)-4096;
    keys_case("gemma2", 1, k2, v, i32, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "m.gguf: metadata 'gemma2.attention.sliding_window' is -",
               NULL);
    cr_assert_null(strchr(err, '\n'), "%s", err);
    /* over the limit */
    v[0] = 200000000;
    keys_case("gemma2", 1, k2, v, NULL, &m, err, sizeof err, &st);
    expect_err(st, VRAM_E_FORMAT, err, "'gemma2.attention.sliding_window' is 200000000", NULL);
    /* llama (Mistral's GGUFs) with the key: llama.cpp caches every block; none read */
    const char *kl[1] = {"llama.attention.sliding_window"};
    v[0] = 4096;
    keys_case("llama", 1, kl, v, NULL, &m, err, sizeof err, &st);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.window_layers, 0);
    cr_assert_eq(m.arch.sliding_window, 0);
}

/* ---- qwen2moe --------------------------------------------------------------------------- */

/* Qwen1.5-MoE-A2.7B cut to `layers` blocks, with the tensor names and shapes llama.cpp's
 * converter writes for it (convert_hf_to_gguf.py Qwen2MoeModel: experts merged into
 * ffn_{gate,up,down}_exps, the shared expert as ffn_{gate,up,down}_shexp, its gate
 * ffn_gate_inp_shexp of hidden elements, q/k/v biases; expert_shared_feed_forward_length). */
static void qwen2moe_gguf(uint64_t layers, uint32_t shared_ff, vram_model *m, char *err,
                          size_t cap, vram_status want) {
    fx_gguf g = {0};
    fx_list l = {0};
    char n[160];
    const uint64_t h = 2048, e = 60, xf = 1408, sf = 5632, vocab = 151936;
    fx_gguf_str(&g, "general.architecture", "qwen2moe");
    fx_gguf_u32(&g, "qwen2moe.block_count", (uint32_t)layers);
    fx_gguf_u32(&g, "qwen2moe.context_length", 8192);
    fx_gguf_u32(&g, "qwen2moe.embedding_length", (uint32_t)h);
    fx_gguf_u32(&g, "qwen2moe.feed_forward_length", 5632);
    fx_gguf_u32(&g, "qwen2moe.attention.head_count", 16);
    fx_gguf_u32(&g, "qwen2moe.attention.head_count_kv", 16);
    fx_gguf_f32(&g, "qwen2moe.attention.layer_norm_rms_epsilon", 1e-6f);
    fx_gguf_u32(&g, "qwen2moe.expert_count", (uint32_t)e);
    fx_gguf_u32(&g, "qwen2moe.expert_used_count", 4);
    fx_gguf_u32(&g, "qwen2moe.expert_feed_forward_length", (uint32_t)xf);
    fx_gguf_u32(&g, "qwen2moe.expert_shared_feed_forward_length", shared_ff);
    l.ggml = 1; /* F16 */
    FX_2(&l, "token_embd.weight", vocab, h);
    for (uint64_t i = 0; i < layers; i++) {
#define QN(s) (snprintf(n, sizeof n, "blk.%llu.%s", (unsigned long long)i, s), n)
        l.ggml = 0; /* F32 */
        FX_1(&l, QN("attn_norm.weight"), h);
        FX_1(&l, QN("ffn_norm.weight"), h);
        FX_1(&l, QN("attn_q.bias"), h);
        FX_1(&l, QN("attn_k.bias"), h);
        FX_1(&l, QN("attn_v.bias"), h);
        FX_1(&l, QN("ffn_gate_inp_shexp.weight"), h);
        l.ggml = 1;
        FX_2(&l, QN("attn_q.weight"), h, h);
        FX_2(&l, QN("attn_k.weight"), h, h);
        FX_2(&l, QN("attn_v.weight"), h, h);
        FX_2(&l, QN("attn_output.weight"), h, h);
        FX_2(&l, QN("ffn_gate_inp.weight"), e, h);
        fx_add(&l, QN("ffn_gate_exps.weight"), 3, e, xf, h, 0);
        fx_add(&l, QN("ffn_up_exps.weight"), 3, e, xf, h, 0);
        fx_add(&l, QN("ffn_down_exps.weight"), 3, e, h, xf, 0);
        FX_2(&l, QN("ffn_gate_shexp.weight"), sf, h);
        FX_2(&l, QN("ffn_up_shexp.weight"), sf, h);
        FX_2(&l, QN("ffn_down_shexp.weight"), h, sf);
#undef QN
    }
    l.ggml = 0;
    FX_1(&l, "output_norm.weight", h);
    l.ggml = 1;
    FX_2(&l, "output.weight", vocab, h);
    cr_assert_eq(parse_built(&g, &l, m, err, cap), want, "%s", err);
}

Test(gguf, qwen2moe_two_blocks) {
    /* by hand, as test_moe.c's qwen1_5_moe_a2_7b for 2 blocks: attention 4 x 2048^2 + q, k, v
       biases; two norms; router 60 x 2048; 60 experts of 3 x 1408 x 2048; the shared expert
       3 x 5632 x 2048 and its gate 2048; outside: embeddings and head 151936 x 2048 each and
       the final norm */
    const uint64_t h = 2048;
    const uint64_t layer = 4 * h * h + 3 * h + 2 * h + 60 * h + 60ull * 3 * 1408 * h +
                           3ull * 5632 * h + h;
    const uint64_t outer = 2ull * 151936 * h + h;
    vram_model m;
    char err[512];
    qwen2moe_gguf(2, 5632, &m, err, sizeof err, VRAM_OK);
    cr_assert_eq(err[0], '\0', "no note: %s", err);
    const vram_arch *a = &m.arch;
    cr_assert_eq(a->experts, 60);
    cr_assert_eq(a->experts_per_token, 4);
    cr_assert_eq(a->expert_intermediate, 1408);
    cr_assert_eq(a->shared_intermediate, 5632);
    cr_assert_eq(a->extra_params, 2 * h, "the shared experts' gates");
    cr_assert_eq(a->flags, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_QKV_BIAS);
    cr_assert_eq(m.stats.params, 2 * layer + outer);
    vram_param_count pc = arch_count(&m);
    cr_assert_eq(pc.total, m.stats.params, "arch %llu, tensors %llu", (unsigned long long)pc.total,
                 (unsigned long long)m.stats.params);
    cr_assert_eq(pc.expert_params, m.stats.expert_params);
    cr_assert_eq(pc.active, 2 * (layer - 56ull * 3 * 1408 * h) + outer, "4 of 60 experts");
}

Test(gguf, qwen2moe_bad_shared_width) {
    vram_model m;
    char err[512];
    qwen2moe_gguf(1, 2000000000u, &m, err, sizeof err, VRAM_E_FORMAT);
    cr_assert_not_null(strstr(err, "qwen2moe.expert_shared_feed_forward_length"), "%s", err);
    cr_assert_null(strchr(err, '\n'));
}

/* ---- the architecture table's rows, in GGUF form ---------------------------------------- */

/* A GGUF of `layers` blocks of the Llama pattern under general.architecture `arch`, with the
 * tensor names llama.cpp's converters write (convert_hf_to_gguf.py; src/llama-arch.cpp's
 * names): per block attn_norm, attn_q/k/v/output, ffn_norm, ffn_gate/up/down; `more` adds
 * each block's extra tensors by name suffix and element count (q/k norms, post-norms) and
 * `outer` the ones outside the blocks (rope factors). */
typedef struct gg_extra {
    const char *name;
    uint64_t n;
} gg_extra;

static void dense_gguf(const char *arch, uint64_t layers, const gg_extra *more, size_t nmore,
                       const gg_extra *outer, size_t nouter, vram_model *m) {
    fx_gguf g = {0};
    fx_list l = {0};
    char n[160], k[96];
    const uint64_t h = 256, heads = 4, kv = 2, hd = 64, ff = 512, vocab = 1000;
#define AK(s) (snprintf(k, sizeof k, "%s.%s", arch, s), k)
    fx_gguf_str(&g, "general.architecture", arch);
    fx_gguf_u32(&g, AK("block_count"), (uint32_t)layers);
    fx_gguf_u32(&g, AK("context_length"), 4096);
    fx_gguf_u32(&g, AK("embedding_length"), (uint32_t)h);
    fx_gguf_u32(&g, AK("feed_forward_length"), (uint32_t)ff);
    fx_gguf_u32(&g, AK("attention.head_count"), (uint32_t)heads);
    fx_gguf_u32(&g, AK("attention.head_count_kv"), (uint32_t)kv);
#undef AK
    l.ggml = 0;
    FX_2(&l, "token_embd.weight", vocab, h);
    for (size_t j = 0; j < nouter; j++)
        FX_1(&l, outer[j].name, outer[j].n);
    for (uint64_t i = 0; i < layers; i++) {
#define BN(s) (snprintf(n, sizeof n, "blk.%llu.%s", (unsigned long long)i, s), n)
        FX_1(&l, BN("attn_norm.weight"), h);
        FX_1(&l, BN("ffn_norm.weight"), h);
        FX_2(&l, BN("attn_q.weight"), heads * hd, h);
        FX_2(&l, BN("attn_k.weight"), kv * hd, h);
        FX_2(&l, BN("attn_v.weight"), kv * hd, h);
        FX_2(&l, BN("attn_output.weight"), h, heads * hd);
        FX_2(&l, BN("ffn_gate.weight"), ff, h);
        FX_2(&l, BN("ffn_up.weight"), ff, h);
        FX_2(&l, BN("ffn_down.weight"), h, ff);
        for (size_t j = 0; j < nmore; j++)
            FX_1(&l, BN(more[j].name), more[j].n);
#undef BN
    }
    FX_1(&l, "output_norm.weight", h);
    FX_2(&l, "output.weight", vocab, h);
    char err[512];
    cr_assert_eq(parse_built(&g, &l, m, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(err[0], '\0', "%s: no note: %s", arch, err);
}

Test(gguf, norms_and_rope_factors_count_as_the_file_holds_them) {
    /* q/k norms over head_dim (qwen3, qwen3moe's dense form here: the row's norms, whatever
       the MLP), over q and kv widths (olmo2), Gemma 3's two post-norms with its q/k norms,
       phi3's long and short rope factors (head_dim / 2 each), Llama 3.1's rope_freqs */
    static const gg_extra qk[] = {{"attn_q_norm.weight", 64}, {"attn_k_norm.weight", 64}};
    static const gg_extra full[] = {{"attn_q_norm.weight", 256}, {"attn_k_norm.weight", 128}};
    static const gg_extra g3[] = {{"attn_q_norm.weight", 64},
                                  {"attn_k_norm.weight", 64},
                                  {"post_attention_norm.weight", 256},
                                  {"post_ffw_norm.weight", 256}};
    static const gg_extra rope[] = {{"rope_factors_long.weight", 32},
                                    {"rope_factors_short.weight", 32}};
    static const gg_extra freqs[] = {{"rope_freqs.weight", 32}};
    static const struct {
        const char *arch;
        const gg_extra *more, *outer;
        size_t nmore, nouter;
    } cases[] = {{"qwen3", qk, NULL, 2, 0},    {"qwen3moe", qk, NULL, 2, 0},
                 {"olmo2", full, NULL, 2, 0},  {"gemma3", g3, NULL, 4, 0},
                 {"phi3", NULL, rope, 0, 2},   {"llama", NULL, freqs, 0, 1},
                 {"gemma2", g3 + 2, NULL, 2, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vram_model m;
        dense_gguf(cases[i].arch, 3, cases[i].more, cases[i].nmore, cases[i].outer,
                   cases[i].nouter, &m);
        vram_param_count pc = arch_count(&m);
        cr_expect_eq(pc.total, m.stats.params, "%s: arch %llu, tensors %llu", cases[i].arch,
                     (unsigned long long)pc.total, (unsigned long long)m.stats.params);
    }
}

/* Llama 4 Maverick cut to its first two blocks (block 0 dense, block 1 routed: its
 * interleave_moe_layer_step 2) with the names and shapes llama.cpp's Llama4Model converter
 * writes: feed_forward_length the dense blocks' intermediate_size_mlp (16384),
 * expert_feed_forward_length the experts' (8192), gate_up_proj split into ffn_gate_exps and
 * ffn_up_exps, the router ffn_gate_inp, the shared expert ffn_{gate,up,down}_shexp, and the
 * llama3-style rope_freqs. */
static void llama4_gguf(vram_model *m, char *err, size_t cap) {
    fx_gguf g = {0};
    fx_list l = {0};
    char n[160];
    const uint64_t h = 5120, q = 40 * 128, kv = 8 * 128, dense = 16384, xf = 8192, e = 128;
    const uint64_t vocab = 202048;
    fx_gguf_str(&g, "general.architecture", "llama4");
    fx_gguf_u32(&g, "llama4.block_count", 2);
    fx_gguf_u32(&g, "llama4.context_length", 1048576);
    fx_gguf_u32(&g, "llama4.embedding_length", (uint32_t)h);
    fx_gguf_u32(&g, "llama4.feed_forward_length", (uint32_t)dense);
    fx_gguf_u32(&g, "llama4.expert_feed_forward_length", (uint32_t)xf);
    fx_gguf_u32(&g, "llama4.interleave_moe_layer_step", 2);
    fx_gguf_u32(&g, "llama4.attention.head_count", 40);
    fx_gguf_u32(&g, "llama4.attention.head_count_kv", 8);
    fx_gguf_u32(&g, "llama4.attention.key_length", 128);
    fx_gguf_u32(&g, "llama4.expert_count", (uint32_t)e);
    fx_gguf_u32(&g, "llama4.expert_used_count", 1);
    l.ggml = 1;
    FX_2(&l, "token_embd.weight", vocab, h);
    l.ggml = 0;
    FX_1(&l, "rope_freqs.weight", 64);
    for (uint64_t i = 0; i < 2; i++) {
#define LN(s) (snprintf(n, sizeof n, "blk.%llu.%s", (unsigned long long)i, s), n)
        l.ggml = 0;
        FX_1(&l, LN("attn_norm.weight"), h);
        FX_1(&l, LN("ffn_norm.weight"), h);
        l.ggml = 1;
        FX_2(&l, LN("attn_q.weight"), q, h);
        FX_2(&l, LN("attn_k.weight"), kv, h);
        FX_2(&l, LN("attn_v.weight"), kv, h);
        FX_2(&l, LN("attn_output.weight"), h, q);
        if (i == 0) {
            FX_2(&l, LN("ffn_gate.weight"), dense, h);
            FX_2(&l, LN("ffn_up.weight"), dense, h);
            FX_2(&l, LN("ffn_down.weight"), h, dense);
        } else {
            FX_2(&l, LN("ffn_gate_inp.weight"), e, h);
            fx_add(&l, LN("ffn_gate_exps.weight"), 3, e, xf, h, 0);
            fx_add(&l, LN("ffn_up_exps.weight"), 3, e, xf, h, 0);
            fx_add(&l, LN("ffn_down_exps.weight"), 3, e, h, xf, 0);
            FX_2(&l, LN("ffn_gate_shexp.weight"), xf, h);
            FX_2(&l, LN("ffn_up_shexp.weight"), xf, h);
            FX_2(&l, LN("ffn_down_shexp.weight"), h, xf);
        }
#undef LN
    }
    l.ggml = 0;
    FX_1(&l, "output_norm.weight", h);
    l.ggml = 1;
    FX_2(&l, "output.weight", vocab, h);
    cr_assert_eq(parse_built(&g, &l, m, err, cap), VRAM_OK, "%s", err);
}

Test(gguf, llama4_maverick_two_blocks) {
    /* by hand: attention 2 x 5120 x 5120 + 2 x 1024 x 5120 and two norms each block; block 0
       a dense MLP of 3 x 16384 x 5120; block 1 a router 128 x 5120, 128 experts of
       3 x 8192 x 5120 and the shared one of 3 x 8192 x 5120; outside: embeddings and head
       202048 x 5120 each, the final norm and 64 rope frequencies */
    const uint64_t h = 5120, attn = 2 * h * h + 2 * 1024 * h + 2 * h;
    const uint64_t b0 = attn + 3 * 16384 * h, xp = 128ull * 3 * 8192 * h;
    const uint64_t b1 = attn + 128 * h + xp + 3 * 8192 * h;
    const uint64_t outer = 2ull * 202048 * h + h + 64;
    vram_model m;
    char err[512];
    llama4_gguf(&m, err, sizeof err);
    cr_assert_eq(err[0], '\0', "no note: %s", err);
    const vram_arch *a = &m.arch;
    cr_assert_eq(a->experts, 128);
    cr_assert_eq(a->experts_per_token, 1);
    cr_assert_eq(a->dense_layers, 1, "the block without a router");
    cr_assert_eq(a->intermediate, 16384);
    cr_assert_eq(a->expert_intermediate, 8192);
    cr_assert_eq(a->shared_intermediate, 8192, "one shared expert of the routed width");
    cr_assert_eq(m.stats.params, b0 + b1 + outer);
    vram_param_count pc = arch_count(&m);
    cr_assert_eq(pc.total, m.stats.params, "arch %llu, tensors %llu", (unsigned long long)pc.total,
                 (unsigned long long)m.stats.params);
    cr_assert_eq(pc.expert_params, m.stats.expert_params);
    cr_assert_eq(pc.active, pc.total - 127ull * 3 * 8192 * h, "1 of 128 experts");
}
