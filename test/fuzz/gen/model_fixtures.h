/* test/fuzz/gen/model_fixtures.h — builders of real-shaped model files for the reader tests
 * (test/unit/test_model_*.c) and the fuzz seed generator (gen_corpus.c): safetensors headers
 * with contiguous offsets, GGUF v2/v3 headers with aligned tensor offsets, and the tensor
 * lists of GPT-2 and a TinyLlama-1.1B-shaped Llama (Hugging Face and GGUF names). Data
 * sections are never written: files end with ftruncate, so they are sparse.
 * Everything is static inline, so an includer that uses a part pays for nothing else. */
#ifndef VRAMKIT_MODEL_FIXTURES_H
#define VRAMKIT_MODEL_FIXTURES_H

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vramkit/dtype.h>

/* ---- a growable byte buffer ------------------------------------------------------------ */

typedef struct fx_buf {
    unsigned char *p;
    size_t n, cap;
} fx_buf;

static inline void fx_put(fx_buf *b, const void *d, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        unsigned char *np = (unsigned char *)realloc(b->p, cap);
        if (np == NULL) abort();
        b->p = np;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0; /* always NUL-terminated, for text */
}

static inline void fx_printf(fx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void fx_printf(fx_buf *b, const char *fmt, ...) {
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) abort();
    if ((size_t)n < sizeof small) {
        fx_put(b, small, (size_t)n);
        return;
    }
    char *big = (char *)malloc((size_t)n + 1);
    if (big == NULL) abort();
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    fx_put(b, big, (size_t)n);
    free(big);
}

static inline void fx_u32(fx_buf *b, uint32_t v) {
    unsigned char x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    fx_put(b, x, 4);
}

static inline void fx_u64(fx_buf *b, uint64_t v) {
    unsigned char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    fx_put(b, x, 8);
}

static inline void fx_free(fx_buf *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* ---- tensor lists ---------------------------------------------------------------------- */

typedef struct fx_tensor {
    char name[160];
    char dtype[16]; /* safetensors dtype ("F32") */
    uint32_t ggml;  /* GGUF ggml type */
    uint32_t nd;
    uint64_t dims[8]; /* outermost first, as PyTorch and safetensors write them */
} fx_tensor;

typedef struct fx_list {
    fx_tensor *t;
    size_t n, cap;
    const char *dtype; /* applied to the tensors added next */
    uint32_t ggml;
} fx_list;

static inline fx_tensor *fx_add(fx_list *l, const char *name, uint32_t nd, uint64_t d0, uint64_t d1,
                                uint64_t d2, uint64_t d3) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->t = (fx_tensor *)realloc(l->t, l->cap * sizeof *l->t);
        if (l->t == NULL) abort();
    }
    fx_tensor *t = &l->t[l->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->dtype, sizeof t->dtype, "%s", l->dtype ? l->dtype : "F32");
    t->ggml = l->ggml;
    t->nd = nd;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dims[2] = d2;
    t->dims[3] = d3;
    return t;
}
#define FX_1(l, name, a) fx_add((l), (name), 1, (a), 0, 0, 0)
#define FX_2(l, name, a, b) fx_add((l), (name), 2, (a), (b), 0, 0)

static inline void fx_list_free(fx_list *l) {
    free(l->t);
    memset(l, 0, sizeof *l);
}

static inline uint64_t fx_numel(const fx_tensor *t) {
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->nd; i++)
        n *= t->dims[i];
    return n;
}

/* Stored bytes of a tensor as safetensors (by its dtype string) or GGUF (by its ggml type). */
static inline uint64_t fx_st_bytes(const fx_tensor *t) {
    vram_dtype d;
    uint64_t b = 0;
    if (vram_dtype_from_safetensors(t->dtype, strlen(t->dtype), &d) != VRAM_OK) return 0;
    if (vram_dtype_bytes(d, fx_numel(t), t->nd ? t->dims[0] : 1, &b) != VRAM_OK) return 0;
    return b;
}
static inline uint64_t fx_gguf_bytes(const fx_tensor *t) {
    vram_dtype d;
    uint64_t b = 0;
    if (vram_dtype_from_ggml(t->ggml, &d) != VRAM_OK) return 0;
    if (vram_dtype_bytes(d, fx_numel(t), t->nd ? t->dims[0] : 1, &b) != VRAM_OK) return 0;
    return b;
}

/* GPT-2 (124M) as its model.safetensors holds it: F32, Conv1D weights stored [in, out],
 * and each block's causal-mask buffer attn.bias [1, 1, 1024, 1024]. */
static inline void fx_gpt2(fx_list *l) {
    char n[160];
    l->dtype = "F32";
    FX_2(l, "wte.weight", 50257, 768);
    FX_2(l, "wpe.weight", 1024, 768);
    for (int i = 0; i < 12; i++) {
#define FX_N(s) (snprintf(n, sizeof n, "h.%d.%s", i, s), n)
        FX_1(l, FX_N("ln_1.weight"), 768);
        FX_1(l, FX_N("ln_1.bias"), 768);
        fx_add(l, FX_N("attn.bias"), 4, 1, 1, 1024, 1024);
        FX_2(l, FX_N("attn.c_attn.weight"), 768, 2304);
        FX_1(l, FX_N("attn.c_attn.bias"), 2304);
        FX_2(l, FX_N("attn.c_proj.weight"), 768, 768);
        FX_1(l, FX_N("attn.c_proj.bias"), 768);
        FX_1(l, FX_N("ln_2.weight"), 768);
        FX_1(l, FX_N("ln_2.bias"), 768);
        FX_2(l, FX_N("mlp.c_fc.weight"), 768, 3072);
        FX_1(l, FX_N("mlp.c_fc.bias"), 3072);
        FX_2(l, FX_N("mlp.c_proj.weight"), 3072, 768);
        FX_1(l, FX_N("mlp.c_proj.bias"), 768);
#undef FX_N
    }
    FX_1(l, "ln_f.weight", 768);
    FX_1(l, "ln_f.bias", 768);
}

/* A Llama in Hugging Face names (model.layers.N.self_attn.q_proj.weight, ...), layers
 * [first, last) only, so a test can put them in different shards; embed and head with
 * the first and last shard as the caller decides. */
typedef struct fx_llama {
    uint64_t layers, hidden, inter, heads, kv, vocab;
} fx_llama;
static const fx_llama FX_TINYLLAMA = {22, 2048, 5632, 32, 4, 32000}; /* TinyLlama-1.1B */

static inline void fx_llama_hf_layer(fx_list *l, const fx_llama *m, uint64_t i, int attn, int mlp) {
    char n[160];
    uint64_t hd = m->hidden / m->heads;
#define FX_N(s) (snprintf(n, sizeof n, "model.layers.%llu.%s", (unsigned long long)i, s), n)
    if (attn) {
        FX_1(l, FX_N("input_layernorm.weight"), m->hidden);
        FX_2(l, FX_N("self_attn.q_proj.weight"), m->heads * hd, m->hidden);
        FX_2(l, FX_N("self_attn.k_proj.weight"), m->kv * hd, m->hidden);
        FX_2(l, FX_N("self_attn.v_proj.weight"), m->kv * hd, m->hidden);
        FX_2(l, FX_N("self_attn.o_proj.weight"), m->hidden, m->heads * hd);
    }
    if (mlp) {
        FX_1(l, FX_N("post_attention_layernorm.weight"), m->hidden);
        FX_2(l, FX_N("mlp.gate_proj.weight"), m->inter, m->hidden);
        FX_2(l, FX_N("mlp.up_proj.weight"), m->inter, m->hidden);
        FX_2(l, FX_N("mlp.down_proj.weight"), m->hidden, m->inter);
    }
#undef FX_N
}

/* The same Llama in GGUF names, quantised like a Q4_K_M file: Q4_K matrices and embedding,
 * Q6_K ffn_down and output, F32 norms. */
static inline void fx_llama_gguf(fx_list *l, const fx_llama *m) {
    char n[160];
    uint64_t hd = m->hidden / m->heads;
    enum { F32 = 0, Q4_K = 12, Q6_K = 14 };
    l->ggml = Q4_K;
    FX_2(l, "token_embd.weight", m->vocab, m->hidden);
    for (uint64_t i = 0; i < m->layers; i++) {
#define FX_N(s) (snprintf(n, sizeof n, "blk.%llu.%s", (unsigned long long)i, s), n)
        l->ggml = F32;
        FX_1(l, FX_N("attn_norm.weight"), m->hidden);
        l->ggml = Q4_K;
        FX_2(l, FX_N("attn_q.weight"), m->heads * hd, m->hidden);
        FX_2(l, FX_N("attn_k.weight"), m->kv * hd, m->hidden);
        FX_2(l, FX_N("attn_v.weight"), m->kv * hd, m->hidden);
        FX_2(l, FX_N("attn_output.weight"), m->hidden, m->heads * hd);
        l->ggml = F32;
        FX_1(l, FX_N("ffn_norm.weight"), m->hidden);
        l->ggml = Q4_K;
        FX_2(l, FX_N("ffn_gate.weight"), m->inter, m->hidden);
        FX_2(l, FX_N("ffn_up.weight"), m->inter, m->hidden);
        l->ggml = Q6_K;
        FX_2(l, FX_N("ffn_down.weight"), m->hidden, m->inter);
#undef FX_N
    }
    l->ggml = F32;
    FX_1(l, "output_norm.weight", m->hidden);
    l->ggml = Q6_K;
    FX_2(l, "output.weight", m->vocab, m->hidden);
}

/* ---- safetensors ------------------------------------------------------------------------ */

/* The header JSON of tensors [0, n) laid out contiguously in list order; returns the size
 * of the data section. With metadata, a "__metadata__" entry comes first. */
static inline uint64_t fx_st_header(const fx_tensor *t, size_t n, int metadata, fx_buf *json) {
    uint64_t off = 0;
    fx_printf(json, "{");
    if (metadata) fx_printf(json, "\"__metadata__\":{\"format\":\"pt\"}%s", n ? "," : "");
    for (size_t i = 0; i < n; i++) {
        uint64_t b = fx_st_bytes(&t[i]);
        fx_printf(json, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", t[i].name,
                  t[i].dtype);
        for (uint32_t d = 0; d < t[i].nd; d++)
            fx_printf(json, "%s%llu", d ? "," : "", (unsigned long long)t[i].dims[d]);
        fx_printf(json, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                  (unsigned long long)(off + b));
        off += b;
    }
    fx_printf(json, "}");
    return off;
}

/* A safetensors file: the 8-byte length, the JSON padded with spaces to a multiple of 8
 * (as the reference writer does), then data_bytes of data (sparse, or zeros written when
 * `write_data`). Returns 0 on success. */
static inline int fx_st_write(const char *path, const fx_buf *json, uint64_t data_bytes,
                              int write_data) {
    fx_buf f = {0};
    size_t pad = (8 - json->n % 8) % 8;
    fx_u64(&f, (uint64_t)(json->n + pad));
    fx_put(&f, json->p, json->n);
    for (size_t i = 0; i < pad; i++)
        fx_put(&f, " ", 1);
    if (write_data)
        for (uint64_t i = 0; i < data_bytes; i++)
            fx_put(&f, "", 1);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = -1;
    if (fd >= 0) {
        rc = write(fd, f.p, f.n) == (ssize_t)f.n ? 0 : -1;
        if (rc == 0 && !write_data && ftruncate(fd, (off_t)(f.n + data_bytes)) != 0) rc = -1;
        close(fd);
    }
    fx_free(&f);
    return rc;
}

/* ---- GGUF ------------------------------------------------------------------------------- */

typedef struct fx_gguf {
    fx_buf kv;
    uint64_t nkv;
    uint32_t version;   /* 3 unless set */
    uint32_t alignment; /* 32 unless set (write general.alignment yourself to change it) */
} fx_gguf;

static inline void fx_gguf_key(fx_gguf *g, const char *key, uint32_t type) {
    fx_u64(&g->kv, strlen(key));
    fx_put(&g->kv, key, strlen(key));
    fx_u32(&g->kv, type);
    g->nkv++;
}
static inline void fx_gguf_str(fx_gguf *g, const char *key, const char *v) {
    fx_gguf_key(g, key, 8);
    fx_u64(&g->kv, strlen(v));
    fx_put(&g->kv, v, strlen(v));
}
static inline void fx_gguf_u32(fx_gguf *g, const char *key, uint32_t v) {
    fx_gguf_key(g, key, 4);
    fx_u32(&g->kv, v);
}
static inline void fx_gguf_f32(fx_gguf *g, const char *key, float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    fx_gguf_key(g, key, 6);
    fx_u32(&g->kv, bits);
}
static inline void fx_gguf_bool(fx_gguf *g, const char *key, int v) {
    unsigned char b = (unsigned char)(v != 0);
    fx_gguf_key(g, key, 7);
    fx_put(&g->kv, &b, 1);
}
/* tokenizer-like arrays: n strings "<t%u>", n f32 scores, n i32 token types */
static inline void fx_gguf_tokens(fx_gguf *g, uint32_t n) {
    fx_gguf_str(g, "tokenizer.ggml.model", "llama");
    fx_gguf_key(g, "tokenizer.ggml.tokens", 9);
    fx_u32(&g->kv, 8);
    fx_u64(&g->kv, n);
    for (uint32_t i = 0; i < n; i++) {
        char s[32];
        int k = snprintf(s, sizeof s, "<t%u>", i);
        fx_u64(&g->kv, (uint64_t)k);
        fx_put(&g->kv, s, (size_t)k);
    }
    fx_gguf_key(g, "tokenizer.ggml.scores", 9);
    fx_u32(&g->kv, 6);
    fx_u64(&g->kv, n);
    for (uint32_t i = 0; i < n; i++)
        fx_u32(&g->kv, 0);
    fx_gguf_key(g, "tokenizer.ggml.token_type", 9);
    fx_u32(&g->kv, 5);
    fx_u64(&g->kv, n);
    for (uint32_t i = 0; i < n; i++)
        fx_u32(&g->kv, 1);
}

/* Llama metadata as llama.cpp's converter writes it. */
static inline void fx_gguf_llama_meta(fx_gguf *g, const fx_llama *m, uint32_t context,
                                      uint32_t vocab_tokens) {
    fx_gguf_str(g, "general.architecture", "llama");
    fx_gguf_str(g, "general.name", "TinyLlama-like");
    fx_gguf_u32(g, "llama.context_length", context);
    fx_gguf_u32(g, "llama.embedding_length", (uint32_t)m->hidden);
    fx_gguf_u32(g, "llama.block_count", (uint32_t)m->layers);
    fx_gguf_u32(g, "llama.feed_forward_length", (uint32_t)m->inter);
    fx_gguf_u32(g, "llama.rope.dimension_count", (uint32_t)(m->hidden / m->heads));
    fx_gguf_u32(g, "llama.attention.head_count", (uint32_t)m->heads);
    fx_gguf_u32(g, "llama.attention.head_count_kv", (uint32_t)m->kv);
    fx_gguf_f32(g, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    fx_gguf_u32(g, "general.file_type", 15); /* MOSTLY_Q4_K_M */
    if (vocab_tokens) fx_gguf_tokens(g, vocab_tokens);
    fx_gguf_u32(g, "general.quantization_version", 2);
}

/* DeepSeek-V2/V3 in GGUF (general.architecture "deepseek2") as llama.cpp's converter writes it
 * (gguf-py/gguf/constants.py's tensor names; the shapes llama.cpp's deepseek2 loader asks
 * for, written here outermost first): latent attention (attn_q, or attn_q_a + attn_q_a_norm +
 * attn_q_b with a q rank; attn_kv_a_mqa, attn_kv_a_norm; attn_kv_b, or since llama.cpp's MLA
 * split attn_k_b [heads, kv_lora, nope] and attn_v_b [heads, v, kv_lora]; attn_output), the
 * first `dense` blocks with ffn_gate/up/down, the others with ffn_gate_inp, the routed
 * experts fused per block (ffn_*_exps) and the shared ones (ffn_*_shexp). F16 matrices and
 * embeddings, F32 norms. `layers` blocks are written (a cut of the model when fewer). */
typedef struct fx_mla {
    uint64_t layers, dense, hidden, heads, q_lora, kv_lora, nope, rope, v, inter;
    uint64_t experts, used, xinter, shared, vocab;
    uint64_t freq; /* moe_layer_freq: experts only in blocks whose index it divides (0: 1) */
} fx_mla;
/* deepseek-ai/DeepSeek-V2-Lite's config.json: no q rank (q_lora_rank null) */
static const fx_mla FX_DEEPSEEK_V2_LITE = {27,  1,  2048, 16,   0, 512, 128, 64,
                                           128, 10944, 64, 6, 1408, 2,   102400, 0};

static inline void fx_deepseek2_gguf(fx_list *l, const fx_mla *m, int split) {
    char n[160];
    enum { F32 = 0, F16 = 1 };
    const uint64_t h = m->hidden, qk = m->nope + m->rope, sx = m->xinter * m->shared;
    l->ggml = F16;
    FX_2(l, "token_embd.weight", m->vocab, h);
    for (uint64_t i = 0; i < m->layers; i++) {
#define FX_N(s) (snprintf(n, sizeof n, "blk.%llu.%s", (unsigned long long)i, s), n)
        l->ggml = F32;
        FX_1(l, FX_N("attn_norm.weight"), h);
        FX_1(l, FX_N("attn_kv_a_norm.weight"), m->kv_lora);
        if (m->q_lora) FX_1(l, FX_N("attn_q_a_norm.weight"), m->q_lora);
        l->ggml = F16;
        if (m->q_lora) {
            FX_2(l, FX_N("attn_q_a.weight"), m->q_lora, h);
            FX_2(l, FX_N("attn_q_b.weight"), m->heads * qk, m->q_lora);
        } else {
            FX_2(l, FX_N("attn_q.weight"), m->heads * qk, h);
        }
        FX_2(l, FX_N("attn_kv_a_mqa.weight"), m->kv_lora + m->rope, h);
        if (split) {
            fx_add(l, FX_N("attn_k_b.weight"), 3, m->heads, m->kv_lora, m->nope, 0);
            fx_add(l, FX_N("attn_v_b.weight"), 3, m->heads, m->v, m->kv_lora, 0);
        } else {
            FX_2(l, FX_N("attn_kv_b.weight"), m->heads * (m->nope + m->v), m->kv_lora);
        }
        FX_2(l, FX_N("attn_output.weight"), h, m->heads * m->v);
        l->ggml = F32;
        FX_1(l, FX_N("ffn_norm.weight"), h);
        l->ggml = F16;
        if (i < m->dense || (m->freq > 1 && i % m->freq != 0)) {
            FX_2(l, FX_N("ffn_gate.weight"), m->inter, h);
            FX_2(l, FX_N("ffn_up.weight"), m->inter, h);
            FX_2(l, FX_N("ffn_down.weight"), h, m->inter);
        } else {
            FX_2(l, FX_N("ffn_gate_inp.weight"), m->experts, h);
            fx_add(l, FX_N("ffn_gate_exps.weight"), 3, m->experts, m->xinter, h, 0);
            fx_add(l, FX_N("ffn_up_exps.weight"), 3, m->experts, m->xinter, h, 0);
            fx_add(l, FX_N("ffn_down_exps.weight"), 3, m->experts, h, m->xinter, 0);
            if (sx) {
                FX_2(l, FX_N("ffn_gate_shexp.weight"), sx, h);
                FX_2(l, FX_N("ffn_up_shexp.weight"), sx, h);
                FX_2(l, FX_N("ffn_down_shexp.weight"), h, sx);
            }
        }
#undef FX_N
    }
    l->ggml = F32;
    FX_1(l, "output_norm.weight", h);
    l->ggml = F16;
    FX_2(l, "output.weight", m->vocab, h);
}

/* Its metadata: split (llama.cpp's MLA form, since its converter splits kv_b) writes
 * head_count_kv 1, key_length kv_lora + rope, value_length kv_lora and the heads' own sizes
 * in key_length_mla / value_length_mla; the older form head_count_kv = heads, key_length
 * nope + rope, value_length v. */
static inline void fx_gguf_deepseek2_meta(fx_gguf *g, const fx_mla *m, int split,
                                          uint32_t tokens) {
    fx_gguf_str(g, "general.architecture", "deepseek2");
    fx_gguf_str(g, "general.name", "DeepSeek-V2-Lite-like");
    fx_gguf_u32(g, "deepseek2.block_count", (uint32_t)m->layers);
    fx_gguf_u32(g, "deepseek2.context_length", 163840);
    fx_gguf_u32(g, "deepseek2.embedding_length", (uint32_t)m->hidden);
    fx_gguf_u32(g, "deepseek2.feed_forward_length", (uint32_t)m->inter);
    fx_gguf_u32(g, "deepseek2.attention.head_count", (uint32_t)m->heads);
    fx_gguf_u32(g, "deepseek2.attention.head_count_kv", split ? 1u : (uint32_t)m->heads);
    fx_gguf_f32(g, "deepseek2.rope.freq_base", 10000.0f);
    fx_gguf_f32(g, "deepseek2.attention.layer_norm_rms_epsilon", 1e-6f);
    fx_gguf_u32(g, "deepseek2.expert_used_count", (uint32_t)m->used);
    fx_gguf_u32(g, "deepseek2.leading_dense_block_count", (uint32_t)m->dense);
    fx_gguf_u32(g, "deepseek2.vocab_size", (uint32_t)m->vocab);
    if (m->q_lora) fx_gguf_u32(g, "deepseek2.attention.q_lora_rank", (uint32_t)m->q_lora);
    fx_gguf_u32(g, "deepseek2.attention.kv_lora_rank", (uint32_t)m->kv_lora);
    if (split) {
        fx_gguf_u32(g, "deepseek2.attention.key_length", (uint32_t)(m->kv_lora + m->rope));
        fx_gguf_u32(g, "deepseek2.attention.value_length", (uint32_t)m->kv_lora);
        fx_gguf_u32(g, "deepseek2.attention.key_length_mla", (uint32_t)(m->nope + m->rope));
        fx_gguf_u32(g, "deepseek2.attention.value_length_mla", (uint32_t)m->v);
    } else {
        fx_gguf_u32(g, "deepseek2.attention.key_length", (uint32_t)(m->nope + m->rope));
        fx_gguf_u32(g, "deepseek2.attention.value_length", (uint32_t)m->v);
    }
    fx_gguf_u32(g, "deepseek2.expert_feed_forward_length", (uint32_t)m->xinter);
    fx_gguf_u32(g, "deepseek2.expert_count", (uint32_t)m->experts);
    fx_gguf_u32(g, "deepseek2.expert_shared_count", (uint32_t)m->shared);
    fx_gguf_f32(g, "deepseek2.expert_weights_scale", 1.0f);
    fx_gguf_u32(g, "deepseek2.rope.dimension_count", (uint32_t)m->rope);
    fx_gguf_u32(g, "general.file_type", 1); /* MOSTLY_F16 */
    if (tokens) fx_gguf_tokens(g, tokens);
}

/* gpt-oss in GGUF (general.architecture "gpt-oss") as llama.cpp's converter writes it: q, k,
 * v, o with biases, attn_sinks [heads], attn_norm and post_attention_norm, ffn_gate_inp with a
 * bias, the experts' gate_up split into ffn_gate_exps and ffn_up_exps, all three in MXFP4
 * (ggml type 39) with F32 biases [experts, width]. */
typedef struct fx_oss {
    uint64_t layers, hidden, heads, kv, head_dim, experts, used, xinter, vocab, window;
} fx_oss;
/* openai/gpt-oss-20b's config.json */
static const fx_oss FX_GPT_OSS_20B = {24, 2880, 64, 8, 64, 32, 4, 2880, 201088, 128};

static inline void fx_gpt_oss_gguf(fx_list *l, const fx_oss *m) {
    char n[160];
    enum { F32 = 0, F16 = 1, MXFP4 = 39 };
    const uint64_t h = m->hidden, q = m->heads * m->head_dim, kv = m->kv * m->head_dim;
    l->ggml = F16;
    FX_2(l, "token_embd.weight", m->vocab, h);
    for (uint64_t i = 0; i < m->layers; i++) {
#define FX_N(s) (snprintf(n, sizeof n, "blk.%llu.%s", (unsigned long long)i, s), n)
        l->ggml = F32;
        FX_1(l, FX_N("attn_norm.weight"), h);
        FX_1(l, FX_N("post_attention_norm.weight"), h);
        FX_1(l, FX_N("attn_q.bias"), q);
        FX_1(l, FX_N("attn_k.bias"), kv);
        FX_1(l, FX_N("attn_v.bias"), kv);
        FX_1(l, FX_N("attn_output.bias"), h);
        FX_1(l, FX_N("attn_sinks.weight"), m->heads);
        FX_1(l, FX_N("ffn_gate_inp.bias"), m->experts);
        FX_2(l, FX_N("ffn_gate_exps.bias"), m->experts, m->xinter);
        FX_2(l, FX_N("ffn_up_exps.bias"), m->experts, m->xinter);
        FX_2(l, FX_N("ffn_down_exps.bias"), m->experts, h);
        l->ggml = F16;
        FX_2(l, FX_N("attn_q.weight"), q, h);
        FX_2(l, FX_N("attn_k.weight"), kv, h);
        FX_2(l, FX_N("attn_v.weight"), kv, h);
        FX_2(l, FX_N("attn_output.weight"), h, q);
        FX_2(l, FX_N("ffn_gate_inp.weight"), m->experts, h);
        l->ggml = MXFP4;
        fx_add(l, FX_N("ffn_gate_exps.weight"), 3, m->experts, m->xinter, h, 0);
        fx_add(l, FX_N("ffn_up_exps.weight"), 3, m->experts, m->xinter, h, 0);
        fx_add(l, FX_N("ffn_down_exps.weight"), 3, m->experts, h, m->xinter, 0);
#undef FX_N
    }
    l->ggml = F32;
    FX_1(l, "output_norm.weight", h);
    l->ggml = F16;
    FX_2(l, "output.weight", m->vocab, h);
}

static inline void fx_gguf_gpt_oss_meta(fx_gguf *g, const fx_oss *m, uint32_t tokens) {
    fx_gguf_str(g, "general.architecture", "gpt-oss");
    fx_gguf_str(g, "general.name", "gpt-oss-20b-like");
    fx_gguf_u32(g, "gpt-oss.block_count", (uint32_t)m->layers);
    fx_gguf_u32(g, "gpt-oss.context_length", 131072);
    fx_gguf_u32(g, "gpt-oss.embedding_length", (uint32_t)m->hidden);
    fx_gguf_u32(g, "gpt-oss.feed_forward_length", (uint32_t)m->xinter);
    fx_gguf_u32(g, "gpt-oss.attention.head_count", (uint32_t)m->heads);
    fx_gguf_u32(g, "gpt-oss.attention.head_count_kv", (uint32_t)m->kv);
    fx_gguf_f32(g, "gpt-oss.rope.freq_base", 150000.0f);
    fx_gguf_f32(g, "gpt-oss.attention.layer_norm_rms_epsilon", 1e-5f);
    fx_gguf_u32(g, "gpt-oss.expert_count", (uint32_t)m->experts);
    fx_gguf_u32(g, "gpt-oss.expert_used_count", (uint32_t)m->used);
    fx_gguf_u32(g, "gpt-oss.attention.key_length", (uint32_t)m->head_dim);
    fx_gguf_u32(g, "gpt-oss.attention.value_length", (uint32_t)m->head_dim);
    fx_gguf_u32(g, "gpt-oss.attention.sliding_window", (uint32_t)m->window);
    fx_gguf_u32(g, "gpt-oss.expert_feed_forward_length", (uint32_t)m->xinter);
    fx_gguf_u32(g, "general.file_type", 38); /* MOSTLY_MXFP4_MOE */
    if (tokens) fx_gguf_tokens(g, tokens);
}

/* The header (magic to the end of the tensor infos, padded to the alignment) of a GGUF
 * with g's metadata and the tensors of l (dims written innermost first, offsets aligned in
 * list order). Returns the file's full size (header + data). offsets, when not NULL,
 * receives each tensor's offset (l->n entries). */
static inline uint64_t fx_gguf_build(const fx_gguf *g, const fx_list *l, fx_buf *out,
                                     uint64_t *offsets) {
    uint64_t align = g->alignment ? g->alignment : 32, off = 0;
    fx_put(out, "GGUF", 4);
    fx_u32(out, g->version ? g->version : 3);
    fx_u64(out, l->n);
    fx_u64(out, g->nkv);
    fx_put(out, g->kv.p, g->kv.n);
    for (size_t i = 0; i < l->n; i++) {
        const fx_tensor *t = &l->t[i];
        fx_u64(out, strlen(t->name));
        fx_put(out, t->name, strlen(t->name));
        fx_u32(out, t->nd);
        for (uint32_t d = t->nd; d-- > 0;)
            fx_u64(out, t->dims[d]);
        fx_u32(out, t->ggml);
        off = (off + align - 1) / align * align;
        if (offsets) offsets[i] = off;
        fx_u64(out, off);
        off += fx_gguf_bytes(t);
    }
    while (out->n % align)
        fx_put(out, "", 1);
    return out->n + off;
}

/* Writes header bytes and extends the file to size (sparse). Returns 0 on success. */
static inline int fx_write_sparse(const char *path, const void *head, size_t n, uint64_t size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    int rc = write(fd, head, n) == (ssize_t)n ? 0 : -1;
    if (rc == 0 && size > n && ftruncate(fd, (off_t)size) != 0) rc = -1;
    close(fd);
    return rc;
}

/* Writes bytes as a whole file. Returns 0 on success. */
static inline int fx_write_file(const char *path, const void *data, size_t n) {
    return fx_write_sparse(path, data, n, n);
}

/* ---- public config.json texts (as published on the Hugging Face hub) ------------------ */

/* gpt2 */
#define FX_CFG_GPT2                                                                                \
    "{\"activation_function\": \"gelu_new\", \"architectures\": [\"GPT2LMHeadModel\"], "           \
    "\"attn_pdrop\": 0.1, \"bos_token_id\": 50256, \"embd_pdrop\": 0.1, \"eos_token_id\": "        \
    "50256, \"initializer_range\": 0.02, \"layer_norm_epsilon\": 1e-05, \"model_type\": "          \
    "\"gpt2\", \"n_ctx\": 1024, \"n_embd\": 768, \"n_head\": 12, \"n_layer\": 12, "                \
    "\"n_positions\": 1024, \"resid_pdrop\": 0.1, \"summary_activation\": null, "                  \
    "\"summary_first_dropout\": 0.1, \"summary_proj_to_labels\": true, \"summary_type\": "         \
    "\"cls_index\", \"summary_use_proj\": true, \"task_specific_params\": "                        \
    "{\"text-generation\": {\"do_sample\": true, \"max_length\": 50}}, \"vocab_size\": 50257}"

/* Meta-Llama-3-8B */
#define FX_CFG_META_LLAMA_3_8B                                                                     \
    "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, "                      \
    "\"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": 128001, "             \
    "\"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02, "               \
    "\"intermediate_size\": 14336, \"max_position_embeddings\": 8192, \"model_type\": "            \
    "\"llama\", \"num_attention_heads\": 32, \"num_hidden_layers\": 32, "                          \
    "\"num_key_value_heads\": 8, \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, "                 \
    "\"rope_scaling\": null, \"rope_theta\": 500000.0, \"tie_word_embeddings\": false, "           \
    "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.40.0.dev0\", "                   \
    "\"use_cache\": true, \"vocab_size\": 128256}"

/* Mistral-7B-v0.1 */
#define FX_CFG_MISTRAL_7B_V0_1                                                                     \
    "{\"architectures\": [\"MistralForCausalLM\"], \"bos_token_id\": 1, \"eos_token_id\": 2, "     \
    "\"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02, "               \
    "\"intermediate_size\": 14336, \"max_position_embeddings\": 32768, \"model_type\": "           \
    "\"mistral\", \"num_attention_heads\": 32, \"num_hidden_layers\": 32, "                        \
    "\"num_key_value_heads\": 8, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, "               \
    "\"sliding_window\": 4096, \"tie_word_embeddings\": false, \"torch_dtype\": "                  \
    "\"bfloat16\", \"transformers_version\": \"4.34.0.dev0\", \"use_cache\": true, "               \
    "\"vocab_size\": 32000}"

/* Qwen2.5-0.5B */
#define FX_CFG_QWEN2_5_0_5B                                                                        \
    "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0, "                     \
    "\"bos_token_id\": 151643, \"eos_token_id\": 151643, \"hidden_act\": \"silu\", "               \
    "\"hidden_size\": 896, \"initializer_range\": 0.02, \"intermediate_size\": 4864, "             \
    "\"max_position_embeddings\": 32768, \"max_window_layers\": 24, \"model_type\": "              \
    "\"qwen2\", \"num_attention_heads\": 14, \"num_hidden_layers\": 24, "                          \
    "\"num_key_value_heads\": 2, \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0, "             \
    "\"sliding_window\": 32768, \"tie_word_embeddings\": true, \"torch_dtype\": "                  \
    "\"bfloat16\", \"transformers_version\": \"4.40.1\", \"use_cache\": true, "                    \
    "\"use_mrope\": false, \"use_sliding_window\": false, \"vocab_size\": 151936}"

/* multilingual-e5-large */
#define FX_CFG_MULTILINGUAL_E5_LARGE                                                               \
    "{\"_name_or_path\": \"tmp/xlm-roberta-large\", \"architectures\": "                           \
    "[\"XLMRobertaModel\"], \"attention_probs_dropout_prob\": 0.1, \"bos_token_id\": 0, "          \
    "\"classifier_dropout\": null, \"eos_token_id\": 2, \"hidden_act\": \"gelu\", "                \
    "\"hidden_dropout_prob\": 0.1, \"hidden_size\": 1024, \"initializer_range\": 0.02, "           \
    "\"intermediate_size\": 4096, \"layer_norm_eps\": 1e-05, \"max_position_embeddings\": "        \
    "514, \"model_type\": \"xlm-roberta\", \"num_attention_heads\": 16, "                          \
    "\"num_hidden_layers\": 24, \"output_past\": true, \"pad_token_id\": 1, "                      \
    "\"position_embedding_type\": \"absolute\", \"torch_dtype\": \"float32\", "                    \
    "\"transformers_version\": \"4.30.2\", \"type_vocab_size\": 1, \"use_cache\": true, "          \
    "\"vocab_size\": 250002}"

/* distilbert-base-uncased */
#define FX_CFG_DISTILBERT_BASE_UNCASED                                                             \
    "{\"activation\": \"gelu\", \"architectures\": [\"DistilBertForMaskedLM\"], "                  \
    "\"attention_dropout\": 0.1, \"dim\": 768, \"dropout\": 0.1, \"hidden_dim\": 3072, "           \
    "\"initializer_range\": 0.02, \"max_position_embeddings\": 512, \"model_type\": "              \
    "\"distilbert\", \"n_heads\": 12, \"n_layers\": 6, \"pad_token_id\": 0, "                      \
    "\"qa_dropout\": 0.1, \"seq_classif_dropout\": 0.2, \"sinusoidal_pos_embds\": false, "         \
    "\"tie_weights_\": true, \"transformers_version\": \"4.10.0.dev0\", \"vocab_size\": "          \
    "30522}"

/* nllb-200-distilled-600M */
#define FX_CFG_NLLB_200_DISTILLED_600M                                                             \
    "{\"_name_or_path\": \"facebook/nllb-200-distilled-600M\", \"activation_dropout\": 0.0, "      \
    "\"activation_function\": \"relu\", \"architectures\": "                                       \
    "[\"M2M100ForConditionalGeneration\"], \"attention_dropout\": 0.1, \"bos_token_id\": 0, "      \
    "\"d_model\": 1024, \"decoder_attention_heads\": 16, \"decoder_ffn_dim\": 4096, "              \
    "\"decoder_layerdrop\": 0, \"decoder_layers\": 12, \"decoder_start_token_id\": 2, "            \
    "\"dropout\": 0.1, \"encoder_attention_heads\": 16, \"encoder_ffn_dim\": 4096, "               \
    "\"encoder_layerdrop\": 0, \"encoder_layers\": 12, \"eos_token_id\": 2, \"init_std\": "        \
    "0.02, \"is_encoder_decoder\": true, \"max_length\": 200, \"max_position_embeddings\": "       \
    "1024, \"model_type\": \"m2m_100\", \"num_hidden_layers\": 12, \"pad_token_id\": 1, "          \
    "\"scale_embedding\": true, \"tokenizer_class\": \"NllbTokenizer\", \"torch_dtype\": "         \
    "\"float32\", \"transformers_version\": \"4.21.0.dev0\", \"use_cache\": true, "                \
    "\"vocab_size\": 256206}"

/* t5-small */
#define FX_CFG_T5_SMALL                                                                            \
    "{\"architectures\": [\"T5ForConditionalGeneration\"], \"d_ff\": 2048, \"d_kv\": 64, "         \
    "\"d_model\": 512, \"decoder_start_token_id\": 0, \"dropout_rate\": 0.1, "                     \
    "\"eos_token_id\": 1, \"initializer_factor\": 1.0, \"is_encoder_decoder\": true, "             \
    "\"layer_norm_epsilon\": 1e-06, \"model_type\": \"t5\", \"n_positions\": 512, "                \
    "\"num_heads\": 8, \"num_layers\": 6, \"output_past\": true, \"pad_token_id\": 0, "            \
    "\"relative_attention_num_buckets\": 32, \"vocab_size\": 32128}"

/* bart-large */
#define FX_CFG_BART_LARGE                                                                          \
    "{\"activation_dropout\": 0.1, \"activation_function\": \"gelu\", \"add_bias_logits\": "       \
    "false, \"add_final_layer_norm\": false, \"architectures\": [\"BartModel\"], "                 \
    "\"attention_dropout\": 0.1, \"bos_token_id\": 0, \"d_model\": 1024, "                         \
    "\"decoder_attention_heads\": 16, \"decoder_ffn_dim\": 4096, \"decoder_layerdrop\": 0.0, "     \
    "\"decoder_layers\": 12, \"dropout\": 0.1, \"encoder_attention_heads\": 16, "                  \
    "\"encoder_ffn_dim\": 4096, \"encoder_layerdrop\": 0.0, \"encoder_layers\": 12, "              \
    "\"eos_token_id\": 2, \"init_std\": 0.02, \"is_encoder_decoder\": true, "                      \
    "\"max_position_embeddings\": 1024, \"model_type\": \"bart\", \"normalize_before\": "          \
    "false, \"num_hidden_layers\": 12, \"pad_token_id\": 1, \"scale_embedding\": false, "          \
    "\"vocab_size\": 50265}"

/* bert-base-uncased */
#define FX_CFG_BERT_BASE_UNCASED                                                                   \
    "{\"architectures\": [\"BertForMaskedLM\"], \"attention_probs_dropout_prob\": 0.1, "           \
    "\"gradient_checkpointing\": false, \"hidden_act\": \"gelu\", \"hidden_dropout_prob\": "       \
    "0.1, \"hidden_size\": 768, \"initializer_range\": 0.02, \"intermediate_size\": 3072, "        \
    "\"layer_norm_eps\": 1e-12, \"max_position_embeddings\": 512, \"model_type\": \"bert\", "      \
    "\"num_attention_heads\": 12, \"num_hidden_layers\": 12, \"pad_token_id\": 0, "                \
    "\"position_embedding_type\": \"absolute\", \"transformers_version\": \"4.6.0.dev0\", "        \
    "\"type_vocab_size\": 2, \"use_cache\": true, \"vocab_size\": 30522}"

/* gemma-2-2b */
#define FX_CFG_GEMMA_2_2B                                                                          \
    "{\"architectures\": [\"Gemma2ForCausalLM\"], \"attention_bias\": false, "                     \
    "\"attention_dropout\": 0.0, \"attn_logit_softcapping\": 50.0, \"bos_token_id\": 2, "          \
    "\"cache_implementation\": \"hybrid\", \"eos_token_id\": 1, "                                  \
    "\"final_logit_softcapping\": 30.0, \"head_dim\": 256, \"hidden_act\": "                       \
    "\"gelu_pytorch_tanh\", \"hidden_activation\": \"gelu_pytorch_tanh\", \"hidden_size\": "       \
    "2304, \"initializer_range\": 0.02, \"intermediate_size\": 9216, "                             \
    "\"max_position_embeddings\": 8192, \"model_type\": \"gemma2\", \"num_attention_heads\": "     \
    "8, \"num_hidden_layers\": 26, \"num_key_value_heads\": 4, \"pad_token_id\": 0, "              \
    "\"query_pre_attn_scalar\": 256, \"rms_norm_eps\": 1e-06, \"rope_theta\": 10000.0, "           \
    "\"sliding_window\": 4096, \"torch_dtype\": \"float32\", \"transformers_version\": "           \
    "\"4.42.4\", \"use_cache\": true, \"vocab_size\": 256000}"

/* phi-2 (its public config.json) */
#define FX_CFG_PHI_2                                                                               \
    "{\"architectures\":[\"PhiForCausalLM\"],\"attention_dropout\":0.0,"                           \
    "\"bos_token_id\":50256,\"embd_pdrop\":0.0,\"eos_token_id\":50256,"                            \
    "\"hidden_act\":\"gelu_new\",\"hidden_size\":2560,\"initializer_range\":0.02,"                 \
    "\"intermediate_size\":10240,\"layer_norm_eps\":1e-05,"                                        \
    "\"max_position_embeddings\":2048,\"model_type\":\"phi\",\"num_attention_heads\":32,"          \
    "\"num_hidden_layers\":32,\"num_key_value_heads\":32,\"partial_rotary_factor\":0.4,"           \
    "\"qk_layernorm\":false,\"resid_pdrop\":0.1,\"rope_scaling\":null,"                            \
    "\"rope_theta\":10000.0,\"tie_word_embeddings\":false,\"torch_dtype\":\"float16\","            \
    "\"use_cache\":true,\"vocab_size\":51200}"

/* falcon-7b (its public config.json) */
#define FX_CFG_FALCON_7B                                                                           \
    "{\"alibi\":false,\"apply_residual_connection_post_layernorm\":false,"                         \
    "\"architectures\":[\"FalconForCausalLM\"],\"attention_dropout\":0.0,\"bias\":false,"          \
    "\"bos_token_id\":11,\"eos_token_id\":11,\"hidden_dropout\":0.0,"                              \
    "\"hidden_size\":4544,\"initializer_range\":0.02,\"layer_norm_epsilon\":1e-05,"                \
    "\"model_type\":\"falcon\",\"multi_query\":true,\"new_decoder_architecture\":false,"           \
    "\"num_attention_heads\":71,\"num_hidden_layers\":32,\"parallel_attn\":true,"                  \
    "\"torch_dtype\":\"bfloat16\",\"use_cache\":true,\"vocab_size\":65024}"

/* whisper-small (its public config.json) */
#define FX_CFG_WHISPER_SMALL                                                                       \
    "{\"activation_dropout\":0.0,\"activation_function\":\"gelu\","                                \
    "\"architectures\":[\"WhisperForConditionalGeneration\"],\"attention_dropout\":0.0,"           \
    "\"begin_suppress_tokens\":[220,50257],\"bos_token_id\":50257,\"d_model\":768,"                \
    "\"decoder_attention_heads\":12,\"decoder_ffn_dim\":3072,\"decoder_layerdrop\":0.0,"           \
    "\"decoder_layers\":12,\"decoder_start_token_id\":50258,\"dropout\":0.0,"                      \
    "\"encoder_attention_heads\":12,\"encoder_ffn_dim\":3072,\"encoder_layerdrop\":0.0,"           \
    "\"encoder_layers\":12,\"eos_token_id\":50257,\"init_std\":0.02,"                              \
    "\"is_encoder_decoder\":true,\"max_length\":448,\"max_source_positions\":1500,"                \
    "\"max_target_positions\":448,\"model_type\":\"whisper\",\"num_hidden_layers\":12,"            \
    "\"num_mel_bins\":80,\"pad_token_id\":50257,\"scale_embedding\":false,"                        \
    "\"torch_dtype\":\"float32\",\"use_cache\":true,\"vocab_size\":51865}"

/* vit-base-patch16-224 (its public config.json; num_labels for its 1000-entry id2label) */
#define FX_CFG_VIT_BASE_PATCH16_224                                                                \
    "{\"architectures\":[\"ViTForImageClassification\"],\"attention_probs_dropout_prob\":"         \
    "0.0,\"hidden_act\":\"gelu\",\"hidden_dropout_prob\":0.0,\"hidden_size\":768,"                 \
    "\"image_size\":224,\"initializer_range\":0.02,\"intermediate_size\":3072,"                    \
    "\"layer_norm_eps\":1e-12,\"model_type\":\"vit\",\"num_attention_heads\":12,"                  \
    "\"num_channels\":3,\"num_hidden_layers\":12,\"num_labels\":1000,\"patch_size\":16,"           \
    "\"qkv_bias\":true}"

/* clip-vit-base-patch32 (its public config.json; num_labels for its 1000-entry id2label) */
#define FX_CFG_CLIP_VIT_BASE_PATCH32                                                               \
    "{\"architectures\":[\"CLIPModel\"],\"initializer_factor\":1.0,\"logit_scale_init_value\""     \
    ":2.6592,\"model_type\":\"clip\",\"projection_dim\":512,\"text_config\":{\"bos_token_id\""     \
    ":0,\"dropout\":0.0,\"eos_token_id\":2,\"hidden_act\":\"quick_gelu\",\"hidden_size\":512,"     \
    "\"intermediate_size\":2048,\"max_position_embeddings\":77,\"model_type\":"                    \
    "\"clip_text_model\",\"num_attention_heads\":8,\"num_hidden_layers\":12,\"projection_dim\""    \
    ":512,\"vocab_size\":49408},\"torch_dtype\":\"float32\",\"vision_config\":{\"dropout\":"       \
    "0.0,\"hidden_act\":\"quick_gelu\",\"hidden_size\":768,\"image_size\":224,"                    \
    "\"intermediate_size\":3072,\"model_type\":\"clip_vision_model\",\"num_attention_heads\""      \
    ":12,\"num_hidden_layers\":12,\"patch_size\":32,\"projection_dim\":512}}"

/* llava-1.5-7b (its public config.json) */
#define FX_CFG_LLAVA_1_5_7B                                                                        \
    "{\"architectures\":[\"LlavaForConditionalGeneration\"],\"ignore_index\":-100,"                \
    "\"image_token_index\":32000,\"model_type\":\"llava\",\"pad_token_id\":32001,"                 \
    "\"projector_hidden_act\":\"gelu\",\"text_config\":{\"_name_or_path\":"                        \
    "\"lmsys/vicuna-7b-v1.5\",\"architectures\":[\"LlamaForCausalLM\"],"                           \
    "\"max_position_embeddings\":4096,\"model_type\":\"llama\",\"rms_norm_eps\":1e-05,"            \
    "\"torch_dtype\":\"float16\",\"vocab_size\":32064},\"tie_word_embeddings\":false,"             \
    "\"torch_dtype\":\"float16\",\"vision_config\":{\"hidden_size\":1024,\"image_size\":"          \
    "336,\"intermediate_size\":4096,\"model_type\":\"clip_vision_model\","                         \
    "\"num_attention_heads\":16,\"num_hidden_layers\":24,\"patch_size\":14,"                       \
    "\"projection_dim\":768,\"vocab_size\":32000},\"vision_feature_layer\":-2,"                    \
    "\"vision_feature_select_strategy\":\"default\",\"vocab_size\":32064}"

/* Qwen2-VL-7B-Instruct (its public config.json) */
#define FX_CFG_QWEN2_VL_7B_INSTRUCT                                                                \
    "{\"architectures\":[\"Qwen2VLForConditionalGeneration\"],\"attention_dropout\":0.0,"          \
    "\"bos_token_id\":151643,\"eos_token_id\":151645,\"vision_start_token_id\":151652,"            \
    "\"vision_end_token_id\":151653,\"vision_token_id\":151654,\"image_token_id\":151655,"         \
    "\"video_token_id\":151656,\"hidden_act\":\"silu\",\"hidden_size\":3584,"                      \
    "\"initializer_range\":0.02,\"intermediate_size\":18944,\"max_position_embeddings\":"          \
    "32768,\"max_window_layers\":28,\"model_type\":\"qwen2_vl\",\"num_attention_heads\":28,"       \
    "\"num_hidden_layers\":28,\"num_key_value_heads\":4,\"rms_norm_eps\":1e-06,"                   \
    "\"rope_theta\":1000000.0,\"sliding_window\":32768,\"tie_word_embeddings\":false,"             \
    "\"torch_dtype\":\"bfloat16\",\"use_cache\":true,\"use_sliding_window\":false,"                \
    "\"vision_config\":{\"depth\":32,\"embed_dim\":1280,\"mlp_ratio\":4,\"num_heads\":16,"         \
    "\"in_chans\":3,\"hidden_size\":3584,\"patch_size\":14,\"spatial_merge_size\":2,"              \
    "\"spatial_patch_size\":14,\"temporal_patch_size\":2},\"rope_scaling\":{\"type\":"             \
    "\"mrope\",\"mrope_section\":[16,24,24]},\"vocab_size\":152064}"

/* ---- temporary directories ------------------------------------------------------------ */

/* A fresh directory under /tmp into buf ("/tmp/vramkit-model-XXXXXX"); NULL on failure. */
static inline char *fx_tmpdir(char buf[64]) {
    snprintf(buf, 64, "/tmp/vramkit-model-XXXXXX");
    return mkdtemp(buf);
}

static inline int fx__rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes a directory tree (depth first, not following links). */
static inline void fx_rmtree(const char *dir) {
    if (dir != NULL && dir[0] != '\0') nftw(dir, fx__rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir/name into out (4096 bytes); returns out. */
static inline const char *fx_path(char out[4096], const char *dir, const char *name) {
    snprintf(out, 4096, "%s/%s", dir, name);
    return out;
}

#endif /* VRAMKIT_MODEL_FIXTURES_H */
