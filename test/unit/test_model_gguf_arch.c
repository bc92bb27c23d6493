/* GGUF headers of the 2025-26 architectures as llama.cpp writes them: test/models/gguf/NAME.gguf
 * holds the header (metadata and tensor infos) that llama.cpp's own Python writer, the `gguf`
 * package 0.19.0 (GGUFWriter), wrote for a small model of each architecture, with the tensor
 * names and metadata keys of that package (gguf.MODEL_TENSORS, TENSOR_NAMES, the add_*
 * methods): test/models/gguf_gen.py, which also checks each file's tensors against the model
 * transformers builds from the same config. Here each header is written out with a data section
 * (zeros, sparse) and read by vramkit's reader; for each architecture:
 *   the arch read from the metadata counts what the tensor headers hold, and both equal the
 *   count by hand below (from the widths: hidden 32, vocabulary 64, 4 heads of 8, 2 KV heads,
 *   MLP 48 unless the case says); MoE: the active parameters (total less the routed experts a
 *   token skips); hybrids and state-space models: the recurrent state and the KV term. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/gen/model_fixtures.h"
#include "models/model_read.h"

static char tmp[64];

static void setup(void) { cr_assert_not_null(fx_tmpdir(tmp), "mkdtemp"); }
static void teardown(void) { fx_rmtree(tmp); }

/* the common widths */
#define H 32ull                               /* hidden */
#define EMB (64ull * H)                       /* token_embd, and output when untied */
#define ATT (H * 32 + 2 * H * 16 + 32 * H)    /* q 4 x 8, k and v 2 x 8, o */
#define MLP(f) (3ull * H * (f))               /* gate, up, down */
#define NORMS (2 * H)                         /* two RMS norms a block */
#define ROUTED(e, f) (H * (e) + (e) * MLP(f)) /* a router and e experts of width f */

typedef struct gguf_case {
    char file[24];      /* test/models/gguf/<file>.gguf (an array: Criterion copies the
                           parameters into the test's process, where a pointer may not hold) */
    uint64_t tensors;   /* tensor infos in the header */
    uint64_t params;    /* by hand */
    uint64_t active;    /* by hand (= params when dense) */
    uint64_t layers, mixer_layers, experts, topk, dense_layers;
    uint64_t attn_blocks, per_token, state; /* vram_arch_cache, by hand */
    uint64_t window, window_layers;
    uint32_t flags; /* VRAM_ARCH_* expected */
} gguf_case;

/* Mamba-1 block (mamba, falcon-mamba): in 32 -> 2 x 64, conv 64 x 4 + bias, x_proj 64 -> 2 +
   2 x 8, dt_proj 2 -> 64 + bias, A 64 x 8, D 64, out 64 -> 32, one norm */
#define MAMBA1 (H * 128 + 64 * 4 + 64 + 64 * 18 + 2 * 64 + 64 + 64 * 8 + 64 + 64 * H + H)
/* Jamba's Mamba-1 mixer: time_step_rank 4, and its dt/B/C norms (4 + 8 + 8) */
#define JMIX (H * 128 + 64 * 4 + 64 + 64 * 20 + 4 * 64 + 64 + 64 * 8 + 64 + 64 * H + 20)
/* Mamba-2 mixer, inner 64, 4 heads, state 8, G groups: conv channels 64 + 2 G 8; in_proj
   32 -> 64 + conv + 4; conv x 4 taps + bias; dt_bias, A, D of 4; out 64 -> 32 (+ its gated
   norm of 64 when the model has it) */
#define M2X(G) (64ull + 16 * (G))
#define MAMBA2(G) (H * (64 + M2X(G) + 4) + M2X(G) * 4 + M2X(G) + 12 + 64 * H)
/* the recurrent state of one block: Mamba e x N + (taps - 1) x conv channels */
#define ST(e, n, conv) ((e) * (n) + 3 * (conv))

/* Qwen3-Next's two blocks (and Qwen3.5's) without their MLPs: block 0 the gated delta rule
   (in 32 -> 104, conv 64 x 4, dt_bias and A of 4, norm 8, out 32 -> 32), block 1 gated
   attention (q 32 -> 64) with q/k norms; the embeddings, head and final norm. With
   experts: 4 (top 2) of 16 a block, a shared one of 24 and its gate 32 -> 1. State: 4 value
   heads of 8 x 8 and 3 taps of 64 conv channels. */
#define QNEXT_BLOCKS ((H * 104 + 64 * 4 + 16 + 32 * H) + (ATT + H * 32 + 16) + 2 * EMB + H)
#define QNEXT_MOE (QNEXT_BLOCKS + 2 * (ROUTED(4, 16) + MLP(24) + H + NORMS))
#define QNEXT_STATE (4 * 8 * 8 + 3 * 64)

static const gguf_case cases[] = {
    /* mamba-2.8b-hf's config, 2 blocks (tied head) */
    {"mamba", 22, 2 * MAMBA1 + EMB + H, 2 * MAMBA1 + EMB + H, 2, 2, 0, 0, 0, 0, 2 * 2 * 8,
     2 * ST(64, 8, 64), 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED | VRAM_ARCH_NO_MLP},
    /* falcon-mamba-7b's (GGUF architecture mamba, dt_b_c_rms; its norms have no weights;
       untied) */
    {"falcon-mamba", 23, 2 * MAMBA1 + 2 * EMB + H, 2 * MAMBA1 + 2 * EMB + H, 2, 2, 0, 0, 0, 0,
     2 * 2 * 8, 2 * ST(64, 8, 64), 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_NO_MLP},
    /* Mamba-Codestral: 2 groups, gated norm */
    {"mamba2", 21, 2 * (MAMBA2(2) + 64 + H) + 2 * EMB + H, 2 * (MAMBA2(2) + 64 + H) + 2 * EMB + H,
     2, 2, 0, 0, 0, 0, 2 * 2 * 8, 2 * ST(64, 8, M2X(2)), 0, 0,
     VRAM_ARCH_FINAL_NORM | VRAM_ARCH_NO_MLP},
    /* Jamba: 4 blocks, attention in 1 and 3 (head_count_kv [0, 2, 0, 2]), experts (4, top 2)
       in 1 and 3, Mamba with a dense MLP in 0 and 2 */
    {"jamba", 57, 2 * (JMIX + MLP(48) + NORMS) + 2 * (ATT + ROUTED(4, 48) + NORMS) + 2 * EMB + H,
     2 * (JMIX + MLP(48) + NORMS) + 2 * (ATT + ROUTED(4, 48) + NORMS) + 2 * EMB + H -
         2 * 2 * MLP(48),
     4, 2, 4, 2, 2, 2, 2 * 2 * 8, 2 * ST(64, 8, 64), 0, 0, VRAM_ARCH_FINAL_NORM},
    /* Falcon-H1: Mamba-2 (1 group, no gated norm) beside attention in both blocks, dense MLP */
    {"falcon-h1", 35, 2 * (MAMBA2(1) + ATT + MLP(48) + NORMS) + 2 * EMB + H,
     2 * (MAMBA2(1) + ATT + MLP(48) + NORMS) + 2 * EMB + H, 2, 2, 0, 0, 0, 2, 2 * 2 * 8,
     2 * ST(64, 8, M2X(1)), 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_MIXER_ALSO},
    /* Granite-4.0-H: 4 blocks, attention in block 1, Mamba-2 (gated norm) in 0, 2, 3; every
       block 4 experts (top 2) of 48 and a shared MLP of 40; tied */
    {"granitehybrid", 66,
     3 * (MAMBA2(1) + 64) + ATT + 4 * (ROUTED(4, 48) + MLP(40) + NORMS) + EMB + H,
     3 * (MAMBA2(1) + 64) + ATT + 4 * (ROUTED(4, 48) + MLP(40) + NORMS) + EMB + H -
         4 * 2 * MLP(48),
     4, 3, 4, 2, 0, 1, 2 * 2 * 8, 3 * ST(64, 8, M2X(1)), 0, 0,
     VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED},
    /* LFM2: 3 blocks, short convolutions (in 32 -> 96, 3 taps, out 32 -> 32) in 0 and 2,
       attention with q/k norms in 1; MLP 64 (its adjusted width); the final norm is the
       converter's token_embd_norm; tied */
    {"lfm2", 29,
     2 * (H * 96 + H * 3 + H * H + MLP(64) + NORMS) + (ATT + 16 + MLP(64) + NORMS) + EMB + H,
     2 * (H * 96 + H * 3 + H * H + MLP(64) + NORMS) + (ATT + 16 + MLP(64) + NORMS) + EMB + H, 3,
     2, 0, 0, 0, 1, 2 * 2 * 8, 2 * (2 * H), 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED},
    /* Qwen3-Next: block 0 the gated delta rule (2 key heads of 8, 4 value heads of 8: in
       32 -> 104, conv 64 x 4, dt_bias and A of 4, norm 8, out 32 -> 32), block 1 gated
       attention (q 32 -> 64) with q/k norms; both 4 experts (top 2) of 16, a shared one of 24
       and its gate 32 -> 1 */
    {"qwen3next", 37, QNEXT_MOE, QNEXT_MOE - 2 * 2 * MLP(16), 2, 1, 4, 2, 0, 1, 2 * 2 * 8,
     QNEXT_STATE, 0, 0, VRAM_ARCH_FINAL_NORM},
    /* Qwen3.5: Qwen3-Next's two blocks (its in_proj_qkv, _z, _b, _a: the same numbers as
       in_proj_qkvz and _ba) with a dense MLP of 48; its MoE form as Qwen3-Next's */
    {"qwen35", 28, QNEXT_BLOCKS + 2 * (MLP(48) + NORMS), QNEXT_BLOCKS + 2 * (MLP(48) + NORMS), 2,
     1, 0, 0, 0, 1, 2 * 2 * 8, QNEXT_STATE, 0, 0, VRAM_ARCH_FINAL_NORM},
    {"qwen35moe", 38, QNEXT_MOE, QNEXT_MOE - 2 * 2 * MLP(16), 2, 1, 4, 2, 0, 1, 2 * 2 * 8,
     QNEXT_STATE, 0, 0, VRAM_ARCH_FINAL_NORM},
    /* Apertus: an up/down MLP (xIELU; its 4 scalars a block are metadata in the GGUF), q/k
       norms */
    {"apertus", 23, 2 * (ATT + 16 + 2 * H * 48 + NORMS) + 2 * EMB + H,
     2 * (ATT + 16 + 2 * H * 48 + NORMS) + 2 * EMB + H, 2, 0, 0, 0, 0, 2, 2 * 2 * 8, 0, 0, 0,
     VRAM_ARCH_FINAL_NORM},
    /* Cohere2: one norm a block feeds attention and MLP side by side; tied; a window of 64 in
       all blocks but each 4th */
    {"cohere2", 34, 4 * (ATT + MLP(48) + H) + EMB + H, 4 * (ATT + MLP(48) + H) + EMB + H, 4, 0, 0,
     0, 0, 4, 2 * 2 * 8, 0, 64, 3,
     VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED | VRAM_ARCH_PARALLEL},
    /* OLMoE: q/k norms over q (32) and kv (16), 4 experts (top 2) of 48 in each block */
    {"olmoe", 27, 2 * (ATT + 48 + ROUTED(4, 48) + NORMS) + 2 * EMB + H,
     2 * (ATT + 48 + ROUTED(4, 48) + NORMS) + 2 * EMB + H - 2 * 2 * MLP(48), 2, 0, 4, 2, 0, 2,
     2 * 2 * 8, 0, 0, 0, VRAM_ARCH_FINAL_NORM},
    /* Phi-3.5-MoE: LayerNorms with biases, attention biases, the head's bias */
    {"phimoe", 37, 2 * (ATT + 96 + ROUTED(4, 48) + 2 * NORMS) + 2 * EMB + 2 * H + 64,
     2 * (ATT + 96 + ROUTED(4, 48) + 2 * NORMS) + 2 * EMB + 2 * H + 64 - 2 * 2 * MLP(48), 2, 0,
     4, 2, 0, 2, 2 * 2 * 8, 0, 0, 0,
     VRAM_ARCH_FINAL_NORM | VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS},
    /* Granite-MoE: tied */
    {"granitemoe", 22, 2 * (ATT + ROUTED(4, 48) + NORMS) + EMB + H,
     2 * (ATT + ROUTED(4, 48) + NORMS) + EMB + H - 2 * 2 * MLP(48), 2, 0, 4, 2, 0, 2, 2 * 2 * 8,
     0, 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED},
    /* GLM-4.5: q, k, v biases and q/k norms; block 0 dense, 1 and 2 four experts (top 2) of
       16, one shared, the routing bias (exp_probs_b) of 4 */
    {"glm4moe", 55,
     (ATT + 64 + 16 + MLP(48) + NORMS) + 2 * (ATT + 64 + 16 + ROUTED(4, 16) + 4 + MLP(16) + NORMS) +
         2 * EMB + H,
     (ATT + 64 + 16 + MLP(48) + NORMS) + 2 * (ATT + 64 + 16 + ROUTED(4, 16) + 4 + MLP(16) + NORMS) +
         2 * EMB + H - 2 * 2 * MLP(16),
     3, 0, 4, 2, 1, 3, 2 * 2 * 8, 0, 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_QKV_BIAS},
    /* MiniMax-M2: q/k norms over q (32) and kv (16), the routing bias (exp_probs_b) of 4, 4
       experts (top 2) of 48 in each block */
    {"minimax-m2", 29, 2 * (ATT + 48 + 4 + ROUTED(4, 48) + NORMS) + 2 * EMB + H,
     2 * (ATT + 48 + 4 + ROUTED(4, 48) + NORMS) + 2 * EMB + H - 2 * 2 * MLP(48), 2, 0, 4, 2, 0,
     2, 2 * 2 * 8, 0, 0, 0, VRAM_ARCH_FINAL_NORM},
    /* ERNIE-4.5 dense (0.3B's config): tied */
    {"ernie4_5", 20, 2 * (ATT + MLP(48) + NORMS) + EMB + H, 2 * (ATT + MLP(48) + NORMS) + EMB + H,
     2, 0, 0, 0, 0, 2, 2 * 2 * 8, 0, 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED},
    /* ERNIE-4.5-MoE: block 0 dense of 64, 1 and 2 four experts (top 2) of 16, two shared
       ones (expert_shared_feed_forward_length 32), the routing bias of 4; tied */
    {"ernie4_5-moe", 39,
     (ATT + MLP(64) + NORMS) + 2 * (ATT + ROUTED(4, 16) + 4 + MLP(32) + NORMS) + EMB + H,
     (ATT + MLP(64) + NORMS) + 2 * (ATT + ROUTED(4, 16) + 4 + MLP(32) + NORMS) + EMB + H -
         2 * 2 * MLP(16),
     3, 0, 4, 2, 1, 3, 2 * 2 * 8, 0, 0, 0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED},
    /* BLOOM (bloom-560m's config, 2 blocks): LayerNorms with biases (one after the
       embeddings), biases on qkv, the output, up and down; MLP 4 x 32; tied */
    {"bloom", 29,
     2 * (2 * NORMS + (3 * H * H + 3 * H) + (H * H + H) + (H * 128 + 128) + (128 * H + H)) +
         EMB + 2 * NORMS,
     2 * (2 * NORMS + (3 * H * H + 3 * H) + (H * H + H) + (H * 128 + 128) + (128 * H + H)) +
         EMB + 2 * NORMS,
     2, 0, 0, 0, 0, 2, 2 * 4 * 8, 0, 0, 0,
     VRAM_ARCH_FINAL_NORM | VRAM_ARCH_EMB_NORM | VRAM_ARCH_TIED | VRAM_ARCH_QKV_BIAS |
         VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS},
    /* MPT (mpt-7b's config, 2 blocks): no biases, LayerNorms of a weight only, MLP 4 x 32;
       no head_count_kv (4 KV heads); tied */
    {"mpt", 14, 2 * (NORMS + 3 * H * H + H * H + 2 * H * 128) + EMB + H,
     2 * (NORMS + 3 * H * H + H * H + 2 * H * 128) + EMB + H, 2, 0, 0, 0, 0, 2, 2 * 4 * 8, 0, 0,
     0, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED},
    /* Llama 4: block 0 dense of 48 (intermediate_size_mlp), block 1 four experts (top 1) of
       16 and the shared one of 16 (interleave_moe_layer_step 2) */
    {"llama4", 25,
     (ATT + MLP(48) + NORMS) + (ATT + ROUTED(4, 16) + MLP(16) + NORMS) + 2 * EMB + H,
     (ATT + MLP(48) + NORMS) + (ATT + ROUTED(4, 16) + MLP(16) + NORMS) + 2 * EMB + H -
         3 * MLP(16),
     2, 0, 4, 1, 1, 2, 2 * 2 * 8, 0, 0, 0, VRAM_ARCH_FINAL_NORM},
};

ParameterizedTestParameters(gguf_arch, reads_as_llama_cpp_writes) {
    return cr_make_param_array(gguf_case, cases, sizeof cases / sizeof cases[0]);
}

/* The header of test/models/gguf/<name>.gguf in memory. */
static unsigned char *load_header(const char *name, size_t *n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/test/models/gguf/%s.gguf", VRAMKIT_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    unsigned char *p = malloc(1 << 16);
    cr_assert_not_null(p);
    *n = fread(p, 1, 1 << 16, f);
    cr_assert(*n > 0 && *n < (1 << 16) && feof(f), "%s: a header under 64 KiB", path);
    fclose(f);
    return p;
}

ParameterizedTest(const gguf_case *c, gguf_arch, reads_as_llama_cpp_writes, .init = setup,
                  .fini = teardown) {
    char path[4096], err[512];
    size_t n;
    unsigned char *head = load_header(c->file, &n);
    /* the data section: 1 MiB of zeros after the header, more than any case's tensors (the
       largest, granitehybrid, holds 116,788 numbers of at most 4 bytes) */
    snprintf(path, sizeof path, "%s/%s.gguf", tmp, c->file);
    cr_assert_eq(fx_write_sparse(path, head, n, n + (1u << 20)), 0);
    free(head);
    vram_model m;
    memset(&m, 0, sizeof m);
    vram_status st = vram_read_path(path, &m, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s: %s", c->file, err);
    cr_assert_str_empty(err, "%s: no note: %s", c->file, err);
    const vram_arch *a = &m.arch;
    cr_assert_eq(a->family, VRAM_FAMILY_DECODER, "%s: an architecture read", c->file);
    /* the tensor headers */
    cr_assert_eq(m.stats.tensors, c->tensors, "%s: %llu tensors", c->file,
                 (unsigned long long)m.stats.tensors);
    cr_assert_eq(m.stats.params, c->params, "%s: tensors hold %llu, by hand %llu", c->file,
                 (unsigned long long)m.stats.params, (unsigned long long)c->params);
    /* the arch from the metadata */
    vram_param_count pc;
    memset(&pc, 0, sizeof pc);
    cr_assert_eq(vram_arch_params(a, &pc), VRAM_OK, "%s", c->file);
    cr_assert_eq(pc.total, c->params, "%s: arch counts %llu, by hand %llu", c->file,
                 (unsigned long long)pc.total, (unsigned long long)c->params);
    cr_assert_eq(pc.active, c->active, "%s: active %llu, by hand %llu", c->file,
                 (unsigned long long)pc.active, (unsigned long long)c->active);
    cr_assert_eq(pc.expert_params, m.stats.expert_params, "%s: routed experts %llu, files %llu",
                 c->file, (unsigned long long)pc.expert_params,
                 (unsigned long long)m.stats.expert_params);
    cr_assert_eq(a->layers, c->layers, "%s", c->file);
    cr_assert_eq(m.blocks, c->layers, "%s", c->file);
    cr_assert_eq(a->mixer_layers, c->mixer_layers, "%s: %llu mixer blocks", c->file,
                 (unsigned long long)a->mixer_layers);
    cr_assert_eq(a->experts, c->experts, "%s", c->file);
    cr_assert_eq(a->experts_per_token, c->topk, "%s", c->file);
    cr_assert_eq(a->dense_layers, c->dense_layers, "%s", c->file);
    cr_assert_eq(a->flags, c->flags, "%s: flags 0x%x", c->file, a->flags);
    cr_assert_eq(a->sliding_window, c->window, "%s", c->file);
    cr_assert_eq(a->window_layers, c->window_layers, "%s", c->file);
    /* what it keeps while it generates */
    vram_cache_shape cs;
    cr_assert_eq(vram_arch_cache(a, &cs), VRAM_OK, "%s", c->file);
    cr_assert_eq(cs.attn_blocks, c->attn_blocks, "%s: %llu blocks keep keys", c->file,
                 (unsigned long long)cs.attn_blocks);
    if (c->attn_blocks != 0)
        cr_assert_eq(cs.per_token, c->per_token, "%s: %llu numbers a token", c->file,
                     (unsigned long long)cs.per_token);
    cr_assert_eq(cs.state, c->state, "%s: state %llu, by hand %llu", c->file,
                 (unsigned long long)cs.state, (unsigned long long)c->state);
}

/* ---- what a file that lacks a mixer's key gets: unknown, with a note ------------------- */

/* The mamba header with one metadata key renamed (same length, so every offset holds). */
static void mamba_without(const char *key, const char *renamed, vram_model *m, char *err,
                          size_t cap) {
    char path[4096];
    size_t n;
    unsigned char *head = load_header("mamba", &n);
    const size_t kl = strlen(key);
    cr_assert_eq(kl, strlen(renamed));
    unsigned char *at = NULL;
    for (size_t i = 0; i + kl <= n && at == NULL; i++)
        if (memcmp(head + i, key, kl) == 0) at = head + i;
    cr_assert_not_null(at, "%s in the header", key);
    memcpy(at, renamed, kl);
    snprintf(path, sizeof path, "%s/cut.gguf", tmp);
    cr_assert_eq(fx_write_sparse(path, head, n, n + (1u << 20)), 0);
    free(head);
    cr_assert_eq(vram_read_path(path, m, err, cap), VRAM_OK, "%s", err);
}

Test(gguf_arch, a_mixer_without_its_keys_is_unknown, .init = setup, .fini = teardown) {
    vram_model m;
    char err[512];
    mamba_without("mamba.ssm.state_size", "mamba.ssm.statX_size", &m, err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "has no mamba.ssm.state_size (its recurrent mixer)"), "%s",
                       err);
    cr_assert_eq(m.stats.tensors, 22, "the tensors are still counted");
    mamba_without("mamba.ssm.conv_kernel", "mamba.ssm.conv_kernex", &m, err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "has no mamba.ssm.conv_kernel"), "%s", err);
}
