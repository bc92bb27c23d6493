/* driver/models/model_gguf.c — GGUF v2/v3 headers, streamed: metadata and tensor infos are read
 * through a 64 KiB window over a byte source (a file, or memory for the fuzzer), so a
 * multi-megabyte vocabulary array is skipped, never held, and tensor data is never read.
 * Every count is checked against the bytes left before anything is sized by it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model_arch.h"
#include "model_gguf.h"
#include "util/file.h"

#define GG_WINDOW 65536u

enum {
    GG_U8 = 0,
    GG_I8,
    GG_U16,
    GG_I16,
    GG_U32,
    GG_I32,
    GG_F32,
    GG_BOOL,
    GG_STRING,
    GG_ARRAY,
    GG_U64,
    GG_I64,
    GG_F64,
    GG_TYPES
};
/* bytes of each scalar value type (0: string or array, sized by its contents) */
static const uint8_t gg_size[GG_TYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

/* how a metadata key's value was recorded (vram__set_entry.aux) */
enum { GG_VAL_OTHER = 0, GG_VAL_UINT = 1, GG_VAL_NEG = 2, GG_VAL_ARRAY = 3 };

typedef struct gg {
    const vram_gguf_source *src;
    uint64_t pos, size;
    unsigned char *win; /* [woff, woff + wlen) of the source */
    uint64_t woff;
    size_t wlen;
    const char *label;
    char *err;
    size_t errcap;
} gg;

static uint64_t gg_left(const gg *g) { return g->size - g->pos; }

/* n bytes at the cursor, or a "truncated" error saying what was being read. */
static vram_status gg_read(gg *g, void *out, size_t n, const char *what) {
    if ((uint64_t)n > gg_left(g))
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "truncated: %s at byte %llu needs %zu bytes, but the file ends at %llu",
                          what, (unsigned long long)g->pos, n, (unsigned long long)g->size);
    if (n == 0) return VRAM_OK;
    if (n > GG_WINDOW) {
        int rc = g->src->read_at(g->src->ctx, g->pos, out, n);
        if (rc != 0)
            return vram__fail(g->err, g->errcap, VRAM_E_IO, g->label,
                              "read failed at byte %llu (%s): %s", (unsigned long long)g->pos, what,
                              strerror(rc > 0 ? rc : EIO));
        g->pos += n;
        return VRAM_OK;
    }
    if (g->pos < g->woff || g->pos + n > g->woff + g->wlen) {
        /* refill the window from the cursor; a source that cannot give the whole window
           (a file that shrank, the fuzzer's sparse tail) is asked for just the bytes needed */
        uint64_t want = gg_left(g) < GG_WINDOW ? gg_left(g) : GG_WINDOW;
        int rc = g->src->read_at(g->src->ctx, g->pos, g->win, (size_t)want);
        if (rc != 0 && want > n) {
            want = n;
            rc = g->src->read_at(g->src->ctx, g->pos, g->win, n);
        }
        if (rc != 0) {
            g->wlen = 0;
            return vram__fail(g->err, g->errcap, VRAM_E_IO, g->label,
                              "read failed at byte %llu (%s): %s", (unsigned long long)g->pos, what,
                              strerror(rc > 0 ? rc : EIO));
        }
        g->woff = g->pos;
        g->wlen = (size_t)want;
    }
    memcpy(out, g->win + (g->pos - g->woff), n);
    g->pos += n;
    return VRAM_OK;
}

static vram_status gg_skip(gg *g, uint64_t n, const char *what) {
    if (n > gg_left(g))
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "truncated: %s at byte %llu needs %llu bytes, but the file ends at %llu",
                          what, (unsigned long long)g->pos, (unsigned long long)n,
                          (unsigned long long)g->size);
    g->pos += n;
    return VRAM_OK;
}

static vram_status gg_u64(gg *g, uint64_t *v, const char *what) {
    unsigned char b[8] = {0};
    vram_status st = gg_read(g, b, 8, what);
    if (st != VRAM_OK) return st;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = *v << 8 | b[i];
    return VRAM_OK;
}

static vram_status gg_u32(gg *g, uint32_t *v, const char *what) {
    unsigned char b[4] = {0};
    vram_status st = gg_read(g, b, 4, what);
    if (st != VRAM_OK) return st;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return VRAM_OK;
}

/* A key or a tensor name (u64 length + bytes) into buf (VRAM_GGUF_MAX_NAME + 1 bytes). */
static vram_status gg_name(gg *g, char *buf, size_t *len, const char *what) {
    uint64_t n;
    vram_status st = gg_u64(g, &n, what);
    if (st != VRAM_OK) return st;
    if (n > VRAM_GGUF_MAX_NAME)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "%s at byte %llu has length %llu, over the %llu-byte limit", what,
                          (unsigned long long)(g->pos - 8), (unsigned long long)n,
                          (unsigned long long)VRAM_GGUF_MAX_NAME);
    if (n > gg_left(g))
        return vram__fail(
            g->err, g->errcap, VRAM_E_FORMAT, g->label,
            "%s of %llu bytes at byte %llu runs past the end of the file (%llu bytes)", what,
            (unsigned long long)n, (unsigned long long)g->pos, (unsigned long long)g->size);
    uint64_t start = g->pos;
    if ((st = gg_read(g, buf, (size_t)n, what)) != VRAM_OK) return st;
    buf[n] = '\0';
    *len = (size_t)n;
    /* a name that is not printable UTF-8 is a corrupted file, not a name to look up */
    size_t at;
    char bad[64], q[VRAM__QUOTE_CAP];
    if (!vram__name_ok(buf, (size_t)n, &at, bad))
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "%s %s at byte %llu holds %s at byte %llu; names must be printable "
                          "UTF-8",
                          what, vram__quote(buf, (size_t)n, q), (unsigned long long)start, bad,
                          (unsigned long long)(start + at));
    return VRAM_OK;
}

/* A string value's length, checked: at most 1 GiB and inside the file. */
static vram_status gg_string_len(gg *g, const char *key, uint64_t *n) {
    char q[VRAM__QUOTE_CAP];
    vram_status st = gg_u64(g, n, "a string length");
    if (st != VRAM_OK) return st;
    if (*n > VRAM_GGUF_MAX_STRING)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata %s: string length %llu is over the 1 GiB limit",
                          vram__quote(key, strlen(key), q), (unsigned long long)*n);
    if (*n > gg_left(g))
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata %s: string of %llu bytes at byte %llu runs past the end of the "
                          "file (%llu bytes)",
                          vram__quote(key, strlen(key), q), (unsigned long long)*n,
                          (unsigned long long)g->pos, (unsigned long long)g->size);
    return VRAM_OK;
}

/* An array value (after its key and type): skipped, its element count returned. Arrays of
 * arrays are allowed one level down (depth 2), no deeper. With sum (non-NULL) an array of
 * integers is read, not skipped: its largest element in sum[0] and how many are not 0 in
 * sum[1] (llama.cpp's per-block head_count_kv, 0 in the blocks without attention); a negative
 * element is an error. */
static vram_status gg_array(gg *g, const char *key, int depth, uint64_t *count_out,
                            uint64_t *sum) {
    char q[VRAM__QUOTE_CAP];
    uint32_t et;
    uint64_t count;
    vram_status st = gg_u32(g, &et, "an array's element type");
    if (st != VRAM_OK) return st;
    if ((st = gg_u64(g, &count, "an array's element count")) != VRAM_OK) return st;
    if (et >= GG_TYPES)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata %s: array element type %u is not one of 0-12",
                          vram__quote(key, strlen(key), q), et);
    if (et == GG_ARRAY && depth >= 2)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata %s: arrays nested more than 2 deep",
                          vram__quote(key, strlen(key), q));
    /* the least each element takes: its scalar size, a string's 8-byte length, an array's
       type and count */
    uint64_t least = et == GG_STRING ? 8u : et == GG_ARRAY ? 12u : gg_size[et];
    if (count > gg_left(g) / least)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata %s: an array of %llu elements cannot fit in the %llu bytes "
                          "left in the file",
                          vram__quote(key, strlen(key), q), (unsigned long long)count,
                          (unsigned long long)gg_left(g));
    *count_out = count;
    if (et == GG_STRING) {
        for (uint64_t i = 0; i < count; i++) {
            uint64_t n;
            if ((st = gg_string_len(g, key, &n)) != VRAM_OK) return st;
            g->pos += n; /* checked inside the file by gg_string_len */
        }
        return VRAM_OK;
    }
    if (et == GG_ARRAY) {
        for (uint64_t i = 0; i < count; i++) {
            uint64_t inner;
            if ((st = gg_array(g, key, depth + 1, &inner, NULL)) != VRAM_OK) return st;
        }
        return VRAM_OK;
    }
    if (sum != NULL && et != GG_F32 && et != GG_F64 && et != GG_BOOL) {
        const int sgn = et == GG_I8 || et == GG_I16 || et == GG_I32 || et == GG_I64;
        sum[0] = sum[1] = 0;
        for (uint64_t i = 0; i < count; i++) {
            unsigned char b[8];
            uint64_t v = 0;
            if ((st = gg_read(g, b, (size_t)least, "array elements")) != VRAM_OK) return st;
            for (size_t j = (size_t)least; j-- > 0;)
                v = v << 8 | b[j];
            if (sgn && (b[least - 1] & 0x80u) != 0)
                return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                                  "metadata %s: element %llu is negative",
                                  vram__quote(key, strlen(key), q), (unsigned long long)i);
            if (v > sum[0]) sum[0] = v;
            sum[1] += v != 0;
        }
        return VRAM_OK;
    }
    return gg_skip(g, count * least, "array elements");
}

/* ---- architectures ------------------------------------------------------------------- */

/* general.architecture -> its row of the architecture table (model_arch.c): the family, MLP,
 * norm and the flags every such model has, the parameters beyond the pattern (q/k norms,
 * Gemma's post-norms), and how the numbers beyond the common keys are read (gguf_kind).
 * Biases are not taken from the row: they are read from the tensor names
 * (blk.N.attn_q.bias, ...; the router's ffn_gate_inp.bias and the experts' ffn_*_exps.bias
 * too), which llama.cpp's converters fix. The output head is tied when the file has no
 * output.weight. Rows whose GGUF form vramkit has no test of (the state-space models among
 * them) have no GGUF name: unknown, with a note. */
#define GG_BIASES (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS)

/* The architectures llama.cpp gives sliding-window blocks, and its pattern (its hparams'
 * set_swa_pattern(n): block il slides unless il % n == n - 1, so all but each n-th), with
 * the window from <arch>.attention.sliding_window (absent: none). llama.cpp hard-codes
 * the pattern for these four and reads no pattern key for them; other architectures
 * (mistral and qwen2 among them) it runs without a window, so vramkit reads none. */
static const struct {
    const char *name;
    uint64_t every, min; /* min: the least window (gemma3: 0 allowed, llama.cpp runs it
                            without a window then) */
} gg_swa[] = {{"gemma2", 2, 1}, {"gemma3", 6, 0}, {"gpt-oss", 2, 1}, {"cohere2", 4, 1}};

/* What the tensor names tell about the architecture. */
typedef struct gg_seen {
    int output, token_embd;
    uint64_t vocab_rows, positions, type_vocab;
    uint32_t bias_flags;
    uint32_t moe_flags;  /* VRAM_MOE_ROUTER_BIAS, VRAM_MOE_EXPERT_BIAS from bias names */
    int kv_b, k_b;       /* DeepSeek's attn_kv_b (before llama.cpp's MLA split), attn_k_b */
    int mxfp4_experts;   /* a routed experts' matrix stored in MXFP4 (gpt-oss) */
    uint64_t probs_b;    /* elements of exp_probs_b.bias (DeepSeek-V3's routing bias) */
    uint64_t shexp_gate; /* elements of ffn_gate_inp_shexp.weight (Qwen2-MoE's shared gate) */
    uint64_t rope_factors; /* elements of rope_factors_long/short.weight (phi3), rope_freqs */
    uint64_t routers;      /* blocks with a router (blk.N.ffn_gate_inp.weight): the MoE blocks */
    int shexp;             /* a shared expert's matrices (ffn_*_shexp.weight) */
    uint64_t head_bias;    /* elements of output.bias (Phi-3.5-MoE's lm_head bias) */
    uint64_t nextn;        /* elements of the multi-token-prediction tensors (blk.N.nextn.*:
                              GLM-4.5's eh_proj and norms beside its last block) */
    int q_norm;            /* attn_q_norm.weight (GLM-4.5's use_qk_norm) */
    /* the recurrent mixer's optional parts (ssm_*, shortconv.*) */
    int ssm_in_bias, ssm_out_bias, ssm_conv_bias, ssm_norm, ssm_dt_norm, shortconv_bias;
} gg_seen;

static void gg_note_tensor(gg_seen *seen, const char *name, size_t len, const uint64_t *rdims,
                           uint32_t nd, uint64_t numel, vram_dtype dt) {
    if (strcmp(name, "output.weight") == 0) seen->output = 1;
    if (strcmp(name, "token_embd.weight") == 0 && nd == 2) {
        seen->token_embd = 1;
        seen->vocab_rows = rdims[0];
    }
    if (strcmp(name, "position_embd.weight") == 0 && nd == 2) seen->positions = rdims[0];
    if (strcmp(name, "token_types.weight") == 0 && nd == 2) seen->type_vocab = rdims[0];
    if ((strcmp(name, "rope_factors_long.weight") == 0 ||
         strcmp(name, "rope_factors_short.weight") == 0 ||
         strcmp(name, "rope_freqs.weight") == 0) &&
        seen->rope_factors <= UINT64_MAX - numel)
        seen->rope_factors += numel;
    if (strcmp(name, "output.bias") == 0) seen->head_bias = numel;
    if (strncmp(name, "blk.", 4) != 0) return;
    if (strstr(name, ".nextn.") != NULL && seen->nextn <= UINT64_MAX - numel) seen->nextn += numel;
    if (vram__ends_with(name, len, ".attn_q_norm.weight")) seen->q_norm = 1;
    if (vram__ends_with(name, len, ".ssm_in.bias")) seen->ssm_in_bias = 1;
    if (vram__ends_with(name, len, ".ssm_out.bias")) seen->ssm_out_bias = 1;
    if (vram__ends_with(name, len, ".ssm_conv1d.bias")) seen->ssm_conv_bias = 1;
    if (vram__ends_with(name, len, ".ssm_norm.weight")) seen->ssm_norm = 1;
    if (vram__ends_with(name, len, ".ssm_dt_norm.weight")) seen->ssm_dt_norm = 1;
    if (vram__ends_with(name, len, ".shortconv.conv.bias")) seen->shortconv_bias = 1;
    if (vram__ends_with(name, len, ".ffn_gate_inp.weight")) seen->routers++;
    if (vram__ends_with(name, len, ".ffn_up_shexp.weight")) seen->shexp = 1;
    if (vram__ends_with(name, len, ".attn_q.bias") || vram__ends_with(name, len, ".attn_k.bias") ||
        vram__ends_with(name, len, ".attn_v.bias") || vram__ends_with(name, len, ".attn_qkv.bias"))
        seen->bias_flags |= VRAM_ARCH_QKV_BIAS;
    if (vram__ends_with(name, len, ".attn_output.bias")) seen->bias_flags |= VRAM_ARCH_OUT_BIAS;
    if (vram__ends_with(name, len, ".ffn_up.bias") || vram__ends_with(name, len, ".ffn_down.bias"))
        seen->bias_flags |= VRAM_ARCH_MLP_BIAS;
    if (vram__ends_with(name, len, ".ffn_gate_inp.bias")) seen->moe_flags |= VRAM_MOE_ROUTER_BIAS;
    if (vram__ends_with(name, len, "_exps.bias")) seen->moe_flags |= VRAM_MOE_EXPERT_BIAS;
    if (vram__ends_with(name, len, "_exps.weight") && dt == VRAM_DTYPE_MXFP4) seen->mxfp4_experts = 1;
    if (vram__ends_with(name, len, ".attn_kv_b.weight")) seen->kv_b = 1;
    if (vram__ends_with(name, len, ".attn_k_b.weight")) seen->k_b = 1;
    if (vram__ends_with(name, len, ".exp_probs_b.bias") && seen->probs_b <= UINT64_MAX - numel)
        seen->probs_b += numel;
    if (vram__ends_with(name, len, ".ffn_gate_inp_shexp.weight") &&
        seen->shexp_gate <= UINT64_MAX - numel)
        seen->shexp_gate += numel;
}

/* One architecture number: <arch>.<suffix>. 0 when absent (or a per-layer array); an error
 * when it is not an integer in min..limit (min 0 or 1). */
static vram_status gg_arch_num_min(gg *g, const vram__set *keys, const char *arch,
                                   const char *suffix, uint64_t min, uint64_t limit,
                                   uint64_t *out) {
    char key[512], q[VRAM__QUOTE_CAP];
    int n = snprintf(key, sizeof key, "%s.%s", arch, suffix);
    *out = 0;
    if (n < 0 || (size_t)n >= sizeof key) return VRAM_OK;
    const vram__set_entry *e = vram__set_get(keys, key, (size_t)n, 0);
    if (e == NULL || e->aux == GG_VAL_ARRAY) return VRAM_OK;
    if (e->aux == GG_VAL_OTHER)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata %s is not an integer", vram__quote(key, (size_t)n, q));
    if (e->aux == GG_VAL_NEG || e->value < min || e->value > limit)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata %s is %s%llu, not an integer in %llu..%llu",
                          vram__quote(key, (size_t)n, q), e->aux == GG_VAL_NEG ? "-" : "",
                          (unsigned long long)e->value, (unsigned long long)min,
                          (unsigned long long)limit);
    *out = e->value;
    return VRAM_OK;
}

static vram_status gg_arch_num(gg *g, const vram__set *keys, const char *arch, const char *suffix,
                               uint64_t limit, uint64_t *out) {
    return gg_arch_num_min(g, keys, arch, suffix, 1, limit, out);
}

/* deepseek2's latent attention, shared experts and leading dense blocks, onto a (whose
 * common numbers are read). llama.cpp's converter writes, since it splits attn_kv_b into
 * attn_k_b and attn_v_b (its MLA form): head_count_kv 1, key_length kv_lora_rank +
 * rope.dimension_count, value_length kv_lora_rank, and the heads' own sizes in
 * key_length_mla and value_length_mla; before, head_count_kv = head_count, key_length
 * qk_nope + qk_rope and value_length v_head_dim. Both read as DeepSeek's config.json is:
 * head_dim the heads' key size, kv_heads = heads. *note set when the file is of the older
 * form (llama.cpp then keeps full keys and values, not the latent cache). */
static vram_status gg_arch_mla(gg *g, const vram__set *keys, const char *arch, const gg_seen *seen,
                               uint64_t xffn, vram_arch *a, char *note, size_t notecap) {
    uint64_t kvr = 0, qr = 0, rope = 0, kmla = 0, vmla = 0, vlen = 0, lead = 0, shared = 0;
    vram_status st;
    if ((st = gg_arch_num(g, keys, arch, "attention.kv_lora_rank", VRAM_LIMIT_HIDDEN, &kvr)) ||
        (st = gg_arch_num(g, keys, arch, "attention.q_lora_rank", VRAM_LIMIT_HIDDEN, &qr)) ||
        (st = gg_arch_num(g, keys, arch, "rope.dimension_count", VRAM_LIMIT_HIDDEN, &rope)) ||
        (st = gg_arch_num(g, keys, arch, "attention.key_length_mla", VRAM_LIMIT_HIDDEN, &kmla)) ||
        (st = gg_arch_num(g, keys, arch, "attention.value_length_mla", VRAM_LIMIT_HIDDEN,
                          &vmla)) ||
        (st = gg_arch_num(g, keys, arch, "attention.value_length", VRAM_LIMIT_HIDDEN, &vlen)) ||
        (st = gg_arch_num_min(g, keys, arch, "leading_dense_block_count", 0, VRAM_LIMIT_LAYERS,
                              &lead)) ||
        (st = gg_arch_num_min(g, keys, arch, "expert_shared_count", 0, VRAM_ARCH_MAX_EXPERTS,
                              &shared)))
        return st;
    const char *missing = kvr == 0                        ? "attention.kv_lora_rank"
                          : rope == 0                     ? "rope.dimension_count"
                          : kmla == 0 && a->head_dim == 0 ? "attention.key_length"
                                                          : NULL;
    if (missing != NULL) {
        snprintf(note, notecap, "%s: metadata has no %s.%s (latent attention); architecture "
                 "left unknown", g->label, arch, missing);
        memset(a, 0, sizeof *a);
        return VRAM_OK;
    }
    const uint64_t hd = kmla != 0 ? kmla : a->head_dim, vd = kmla != 0 ? vmla : vlen;
    const char *hd_key = kmla != 0 ? "attention.key_length_mla" : "attention.key_length";
    if (rope >= hd)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %s.rope.dimension_count %llu is not less than %s.%s %llu "
                          "(the rotary part of each head's key)",
                          arch, (unsigned long long)rope, arch, hd_key, (unsigned long long)hd);
    if (hd > VRAM_LIMIT_HIDDEN / a->heads || vd > VRAM_LIMIT_HIDDEN / a->heads)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %llu heads of %s.%s %llu (or value length %llu) are over "
                          "the width limit of %llu",
                          (unsigned long long)a->heads, arch, hd_key, (unsigned long long)hd,
                          (unsigned long long)vd, (unsigned long long)VRAM_LIMIT_HIDDEN);
    if (lead > a->layers)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %s.leading_dense_block_count %llu is more than "
                          "%s.block_count %llu",
                          arch, (unsigned long long)lead, arch, (unsigned long long)a->layers);
    const uint64_t xw = xffn != 0 ? xffn : a->intermediate;
    if (shared > VRAM_LIMIT_INTERMEDIATE / xw)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %s.expert_shared_count %llu x expert_feed_forward_length "
                          "%llu is over the width limit of %llu",
                          arch, (unsigned long long)shared, (unsigned long long)xw,
                          (unsigned long long)VRAM_LIMIT_INTERMEDIATE);
    a->q_lora_rank = qr;
    a->kv_lora_rank = kvr;
    a->rope_dim = rope;
    a->head_dim = hd;
    a->v_head_dim = vd;
    a->kv_heads = a->heads;
    if (a->experts != 0) {
        a->dense_layers = lead;
        a->shared_intermediate = shared * xw;
    }
    /* routers in fewer blocks than those from the leading dense ones on: a DeepSeek with
       moe_layer_freq other than 1 (experts only where the block's index is a multiple of
       it), counted as the file holds it; llama.cpp has no key for it */
    const int freq = a->experts != 0 && seen->routers != 0 && seen->routers < a->layers - lead;
    if (freq) a->dense_layers = a->layers - seen->routers;
    /* DeepSeek-V3's routing bias (e_score_correction_bias): a buffer in transformers, a
       tensor in the GGUF, counted so that the count is the file's */
    a->extra_params = seen->probs_b <= VRAM_ARCH_MAX_EXTRA ? seen->probs_b : 0;
    if (kmla == 0 || seen->kv_b)
        snprintf(note, notecap,
                 "%s: a DeepSeek GGUF from before llama.cpp split attn_kv_b (no "
                 "%s.attention.key_length_mla): llama.cpp runs it without latent attention "
                 "and keeps %llu heads x (%llu + %llu) key and value numbers per token and "
                 "block; the KV cache estimated here is the latent one (%llu numbers), as "
                 "vLLM, SGLang and llama.cpp keep for newer conversions",
                 g->label, arch, (unsigned long long)a->heads, (unsigned long long)hd,
                 (unsigned long long)(vd != 0 ? vd : hd - rope), (unsigned long long)(kvr + rope));
    if (freq) {
        size_t n = strlen(note);
        snprintf(note + n, notecap - n,
                 "%s%s: experts (ffn_gate_inp) in %llu of the %llu blocks after the %llu leading "
                 "dense ones (a DeepSeek moe_layer_freq other than 1), counted as the file holds "
                 "them; llama.cpp expects experts in each of those blocks",
                 n != 0 ? "; " : "", g->label, (unsigned long long)seen->routers,
                 (unsigned long long)(a->layers - lead), (unsigned long long)lead);
    }
    return VRAM_OK;
}

/* The recurrent mixer of a row (model_arch.h vram__mix) from <arch>.ssm.* (and LFM2's
 * shortconv.l_cache), as llama.cpp's converters write them; its optional parts (biases, the
 * gated norm, Jamba's dt/B/C norms) from the tensor names. The same layouts as the config
 * reader (model_config.c cfg_mixer):
 *   mamba, jamba (Mamba-1): e = ssm.inner_size, N = ssm.state_size, R = ssm.time_step_rank,
 *     ssm_in hidden -> 2e, ssm_conv1d e x conv_kernel, ssm_x e -> R + 2N, ssm_dt R -> e,
 *     ssm_a e x N, ssm_d e; state e x N.
 *   mamba2, granitehybrid, falcon-h1 (Mamba-2): H = ssm.time_step_rank heads,
 *     G = ssm.group_count, conv channels e + 2 G N; ssm_in hidden -> e + (e + 2 G N) + H;
 *     ssm_dt (bias), ssm_a, ssm_d of H; ssm_norm e; state e x N.
 *   lfm2: shortconv.in_proj hidden -> 3 hidden, a conv of hidden channels and
 *     shortconv.l_cache taps, out_proj hidden -> hidden.
 *   qwen3next (gated delta rule): Hk = ssm.group_count key heads of dk = ssm.state_size,
 *     Hv = ssm.time_step_rank value heads of dv = ssm.inner_size / Hv; in_proj (ssm_in, or
 *     attn_qkv and attn_gate) and ssm_ba hidden -> 2 Hk dk + 2 Hv dv + 2 Hv; state Hv dk dv.
 * Which blocks mix: every block (mamba, mamba2; falcon-h1 beside attention), those whose
 * per-block head_count_kv is 0 (jamba, granitehybrid, lfm2: attn blocks have attention), all
 * but each full_attention_interval-th (qwen3next). *missing names a key the file lacks. */
static vram_status gg_arch_mixer(gg *g, const vram__set *keys, const char *arch,
                                 const vram__arch_row *r, const gg_seen *seen, uint64_t attn,
                                 vram_arch *a, const char **missing) {
    const uint64_t h = a->hidden, L = a->layers;
    uint64_t k = 0, e = 0, n = 0, rank = 0, groups = 0, every = 0;
    vram_status st;
    *missing = NULL;
    if (r->mix == VRAM__MIX_CONV) {
        if ((st = gg_arch_num(g, keys, arch, "shortconv.l_cache", VRAM_ARCH_MAX_KERNEL, &k)))
            return st;
        if (k == 0) {
            *missing = "shortconv.l_cache";
            return VRAM_OK;
        }
        a->mix_in = 3 * h;
        a->mix_out = a->mix_conv = h;
        a->mix_kernel = k;
        a->mix_vectors = seen->shortconv_bias ? 5 * h : 0u;
        a->mixer_layers = L - attn;
        return VRAM_OK;
    }
    const int m1 = r->mix == VRAM__MIX_MAMBA || r->mix == VRAM__MIX_JAMBA;
    if ((st = gg_arch_num(g, keys, arch, "ssm.conv_kernel", VRAM_ARCH_MAX_KERNEL, &k)) ||
        (st = gg_arch_num(g, keys, arch, "ssm.inner_size", VRAM_LIMIT_HIDDEN, &e)) ||
        (st = gg_arch_num(g, keys, arch, "ssm.state_size", VRAM_LIMIT_HIDDEN, &n)) ||
        (st = gg_arch_num(g, keys, arch, "ssm.time_step_rank",
                          m1 ? VRAM_LIMIT_HIDDEN : VRAM_LIMIT_HEADS, &rank)) ||
        (!m1 && (st = gg_arch_num(g, keys, arch, "ssm.group_count", VRAM_LIMIT_HEADS, &groups))) ||
        (r->mix == VRAM__MIX_DELTA &&
         (st = gg_arch_num(g, keys, arch, "full_attention_interval", VRAM_LIMIT_LAYERS, &every))))
        return st;
    *missing = k == 0              ? "ssm.conv_kernel"
               : e == 0            ? "ssm.inner_size"
               : n == 0            ? "ssm.state_size"
               : rank == 0         ? "ssm.time_step_rank"
               : !m1 && groups == 0 ? "ssm.group_count"
               : r->mix == VRAM__MIX_DELTA && every == 0 ? "full_attention_interval"
                                   : NULL;
    if (*missing != NULL) return VRAM_OK;
    if (!m1 && e % rank != 0)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %s.ssm.inner_size %llu is not a multiple of "
                          "%s.ssm.time_step_rank %llu (the heads)",
                          arch, (unsigned long long)e, arch, (unsigned long long)rank);
    if (groups * n > VRAM_LIMIT_HIDDEN)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %s.ssm.group_count %llu x ssm.state_size %llu is over the "
                          "width limit of %llu",
                          arch, (unsigned long long)groups, (unsigned long long)n,
                          (unsigned long long)VRAM_LIMIT_HIDDEN);
    a->mix_kernel = k;
    switch (r->mix) {
    case VRAM__MIX_MAMBA:
    case VRAM__MIX_JAMBA:
        a->mix_in = 2 * e;
        a->mix_out = a->mix_conv = e;
        a->mix_matrix = e * (rank + 2 * n) + rank * e;
        a->mix_vectors = (seen->ssm_in_bias ? 2 * e : 0u) + (seen->ssm_out_bias ? h : 0u) +
                         (seen->ssm_conv_bias ? e : 0u) + e + e * n + e +
                         (seen->ssm_dt_norm ? rank + 2 * n : 0u);
        a->mix_state = e * n;
        break;
    case VRAM__MIX_DELTA: {
        const uint64_t kh = groups, dk = n, vh = rank, dv = e / rank;
        a->mix_in = 2 * kh * dk + 2 * vh * dv + 2 * vh;
        a->mix_out = vh * dv;
        a->mix_conv = 2 * kh * dk + vh * dv;
        a->mix_vectors = 2 * vh + dv;
        a->mix_state = vh * dk * dv;
        a->mixer_layers = L - L / every;
        return VRAM_OK;
    }
    default: { /* Mamba-2 */
        const uint64_t x = e + 2 * groups * n;
        a->mix_in = e + x + rank;
        a->mix_out = e;
        a->mix_conv = x;
        a->mix_vectors = 3 * rank + (seen->ssm_norm ? e : 0u) +
                         (seen->ssm_in_bias ? a->mix_in : 0u) + (seen->ssm_out_bias ? h : 0u) +
                         (seen->ssm_conv_bias ? x : 0u);
        a->mix_state = e * n;
        break;
    }
    }
    if (r->mix == VRAM__MIX_MAMBA || r->mix == VRAM__MIX_MAMBA2) {
        a->intermediate = e; /* no MLP: the mixer's inner width for the activations */
        a->mixer_layers = L;
    } else {
        a->mixer_layers = r->mix == VRAM__MIX_FALCON_H1 ? L : L - attn;
    }
    return VRAM_OK;
}

static vram_status gg_arch(gg *g, const vram__set *keys, const char *arch, const gg_seen *seen,
                           vram_arch *a, char *note, size_t notecap) {
    char q[VRAM__QUOTE_CAP];
    vram_status st;
    memset(a, 0, sizeof *a);
    if (arch[0] == '\0') {
        snprintf(note, notecap, "%s: no general.architecture; architecture left unknown", g->label);
        return VRAM_OK;
    }
    const vram__arch_row *row = vram__arch_by_gguf(arch);
    if (row == NULL) {
        snprintf(note, notecap,
                 "%s: general.architecture %s is not in vramkit's table; architecture left unknown",
                 g->label, vram__quote(arch, strlen(arch), q));
        return VRAM_OK;
    }
    uint64_t experts = 0, used = 0, xffn = 0, tokens = 0;
    /* a state-space model has no attention and no MLP: head_count and feed_forward_length
       are 0 there (the mixer's widths come from ssm.*) */
    const int ssm = row->mix == VRAM__MIX_MAMBA || row->mix == VRAM__MIX_MAMBA2;
    const vram__set_entry *te = vram__set_get(keys, "tokenizer.ggml.tokens", 21, 0);
    if (te != NULL && te->aux == GG_VAL_ARRAY) tokens = te->value;
    if ((st = gg_arch_num(g, keys, arch, "block_count", VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = gg_arch_num(g, keys, arch, "embedding_length", VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = gg_arch_num_min(g, keys, arch, "feed_forward_length", !ssm,
                              VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = gg_arch_num_min(g, keys, arch, "attention.head_count", !ssm, VRAM_LIMIT_HEADS,
                              &a->heads)) ||
        (st = gg_arch_num(g, keys, arch, "attention.head_count_kv", VRAM_LIMIT_HEADS,
                          &a->kv_heads)) ||
        (st =
             gg_arch_num(g, keys, arch, "attention.key_length", VRAM_LIMIT_HIDDEN, &a->head_dim)) ||
        (st = gg_arch_num(g, keys, arch, "context_length", VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = gg_arch_num(g, keys, arch, "expert_count", VRAM_ARCH_MAX_EXPERTS, &experts)) ||
        (st = gg_arch_num(g, keys, arch, "expert_used_count", VRAM_ARCH_MAX_EXPERTS, &used)) ||
        (st = gg_arch_num(g, keys, arch, "expert_feed_forward_length", VRAM_LIMIT_INTERMEDIATE,
                          &xffn)))
        return st;
    a->vocab = seen->token_embd ? seen->vocab_rows : tokens;
    if (ssm) {
        a->heads = a->kv_heads = 1;
        a->intermediate = 1; /* the mixer's width below */
    }
    /* llama.cpp's per-block head_count_kv (jamba, granitehybrid, lfm2): its largest, and
       the blocks with attention (those where it is not 0) */
    uint64_t attn = a->layers;
    const vram__set_entry *kva = NULL;
    {
        char key[512];
        int n = snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
        if (n > 0 && (size_t)n < sizeof key) kva = vram__set_get(keys, key, (size_t)n, 1);
    }
    if (kva != NULL && !ssm) {
        if (kva->value > VRAM_LIMIT_HEADS || kva->aux > a->layers)
            return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                              "metadata: %s.attention.head_count_kv has %llu heads in %llu "
                              "blocks, not at most %llu in at most %s.block_count %llu",
                              arch, (unsigned long long)kva->value, (unsigned long long)kva->aux,
                              (unsigned long long)VRAM_LIMIT_HEADS, arch,
                              (unsigned long long)a->layers);
        a->kv_heads = kva->value;
        attn = kva->aux;
    }
    const char *missing = a->layers == 0         ? "block_count"
                          : a->hidden == 0       ? "embedding_length"
                          : a->heads == 0        ? "attention.head_count"
                          : a->intermediate == 0 ? "feed_forward_length"
                                                 : NULL;
    if (experts > 1 && used > experts)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %s.expert_used_count %llu is more than %s.expert_count %llu",
                          arch, (unsigned long long)used, arch, (unsigned long long)experts);
    if ((experts > 1 && used == 0) || missing != NULL || a->vocab == 0 ||
        a->vocab > VRAM_LIMIT_VOCAB) {
        if (experts > 1 && used == 0)
            snprintf(note, notecap,
                     "%s: %s with %llu experts (mixture of experts) but no %s.expert_used_count; "
                     "architecture left unknown",
                     g->label, arch, (unsigned long long)experts, arch);
        else if (missing != NULL)
            snprintf(note, notecap, "%s: metadata has no %s.%s; architecture left unknown",
                     g->label, arch, missing);
        else if (a->vocab == 0)
            snprintf(note, notecap,
                     "%s: no vocabulary (neither token_embd.weight nor tokenizer.ggml.tokens); "
                     "architecture left unknown",
                     g->label);
        else
            snprintf(note, notecap,
                     "%s: vocabulary of %llu rows is over the limit; architecture left unknown",
                     g->label, (unsigned long long)a->vocab);
        memset(a, 0, sizeof *a);
        return VRAM_OK;
    }
    if (row->mix != VRAM__MIX_NONE) {
        if ((st = gg_arch_mixer(g, keys, arch, row, seen, attn, a, &missing)) != VRAM_OK)
            return st;
        if (missing != NULL) {
            snprintf(note, notecap,
                     "%s: metadata has no %s.%s (its recurrent mixer); architecture left unknown",
                     g->label, arch, missing);
            memset(a, 0, sizeof *a);
            return VRAM_OK;
        }
    }
    if (a->heads != 0 && a->kv_heads != 0 && a->heads % a->kv_heads != 0)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "metadata: %llu attention heads are not a multiple of %llu KV heads",
                          (unsigned long long)a->heads, (unsigned long long)a->kv_heads);
    a->family = row->family;
    a->mlp = row->mlp;
    a->norm = row->norm;
    a->flags = (row->flags & ~GG_BIASES) | seen->bias_flags;
    if (a->family == VRAM_FAMILY_DECODER && !seen->output) a->flags |= VRAM_ARCH_TIED;
    a->positions = seen->positions;
    a->type_vocab = seen->type_vocab;
    if (experts > 1) { /* Mixtral (arch llama), Qwen3-MoE: every block routed */
        a->experts = experts;
        a->experts_per_token = used;
        a->expert_intermediate = xffn; /* 0: feed_forward_length */
        /* biases from the tensor names; the routing weights' format is the row's */
        a->moe_flags =
            seen->moe_flags | (row->moe_flags & (VRAM_MOE_ROUTE_FP32 | VRAM_MOE_GATE_CLAMP));
        if (seen->mxfp4_experts) a->expert_format = VRAM_DTYPE_MXFP4;
        /* the blocks with a router are the MoE ones, wherever they are (Llama 4 Maverick's
           every second block; DeepSeek's leading dense blocks are read from their key) */
        if (seen->routers != 0 && seen->routers < a->layers && row->gguf_kind != VRAM__GGUF_MLA)
            a->dense_layers = a->layers - seen->routers;
    }
    for (size_t i = 0; i < sizeof gg_swa / sizeof gg_swa[0]; i++) {
        uint64_t window = 0;
        if (strcmp(gg_swa[i].name, arch) != 0) continue;
        if ((st = gg_arch_num_min(g, keys, arch, "attention.sliding_window", gg_swa[i].min,
                                  VRAM_LIMIT_CONTEXT, &window)) != VRAM_OK)
            return st;
        if (window != 0) {
            a->sliding_window = window;
            a->window_layers = a->layers - a->layers / gg_swa[i].every;
        }
    }
    {
        /* q/k norms (GLM-4.5's when the file has them), post-norms and Qwen3-Next's gated q,
           as the row says (llama.cpp keeps them: attn_q_norm, attn_k_norm,
           post_attention_norm, post_ffw_norm, attn_q of twice the heads); the rest of the
           row's extra parameters the converter either moves into metadata (Apertus's xIELU
           scalars) or writes as tensors counted below as the file holds them */
        vram__arch_row norms = *row;
        norms.has &= VRAM__HAS_QK_NORM | VRAM__HAS_QK_NORM_FULL | VRAM__HAS_POST_NORMS |
                     VRAM__HAS_GATED_Q | VRAM__HAS_QK_NORM_KEY;
        a->extra_params = vram__arch_extra(&norms, a, 0, seen->q_norm);
    }
    if (row->gguf_kind == VRAM__GGUF_MLA)
        return gg_arch_mla(g, keys, arch, seen, xffn, a, note, notecap);
    if (row->gguf_kind == VRAM__GGUF_OSS)
        a->extra_params = a->layers * a->heads; /* attn_sinks: one per head and block */
    /* rotary frequency factors the converter stores as tensors (phi3's rope_factors_long and
       _short, Llama 3.1 and 4's rope_freqs: head_dim / 2 each), counted as the file holds them */
    if (seen->rope_factors > VRAM_ARCH_MAX_EXTRA)
        return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                          "rope_factors_long/short and rope_freqs hold %llu parameters, over 10^12",
                          (unsigned long long)seen->rope_factors);
    a->extra_params += seen->rope_factors;
    if (a->experts != 0 && seen->shexp) {
        /* the shared experts (ffn_{gate,up,down}_shexp): their width in
           expert_shared_feed_forward_length (Qwen2-MoE, Qwen3-Next, Granite-4.0-H, ERNIE-4.5),
           else expert_shared_count experts of the routed width (GLM-4.5), else one (Llama 4) */
        uint64_t count = 0;
        const uint64_t xw = a->expert_intermediate != 0 ? a->expert_intermediate : a->intermediate;
        if ((st = gg_arch_num_min(g, keys, arch, "expert_shared_feed_forward_length", 0,
                                  VRAM_LIMIT_INTERMEDIATE, &a->shared_intermediate)) ||
            (st = gg_arch_num_min(g, keys, arch, "expert_shared_count", 0, VRAM_ARCH_MAX_EXPERTS,
                                  &count)))
            return st;
        if (count > VRAM_LIMIT_INTERMEDIATE / xw)
            return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                              "metadata: %s.expert_shared_count %llu x the experts' width %llu "
                              "is over the width limit of %llu",
                              arch, (unsigned long long)count, (unsigned long long)xw,
                              (unsigned long long)VRAM_LIMIT_INTERMEDIATE);
        if (a->shared_intermediate == 0) a->shared_intermediate = (count != 0 ? count : 1u) * xw;
    }
    /* tensors beyond the pattern, counted as the file holds them: the shared experts' sigmoid
       gates (ffn_gate_inp_shexp, hidden -> 1), the routing-score bias (exp_probs_b: ERNIE-4.5,
       GLM-4.5), the head's bias (output.bias: Phi-3.5-MoE, phi2) and GLM-4.5's
       multi-token-prediction block's own tensors (blk.N.nextn.*) */
    const uint64_t more[4] = {seen->shexp_gate, seen->probs_b, seen->head_bias, seen->nextn};
    for (size_t i = 0; i < 4; i++) {
        if (more[i] > VRAM_ARCH_MAX_EXTRA - a->extra_params)
            return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                              "the tensors beyond the blocks' pattern (shared-expert gates, "
                              "routing biases, the head's bias) hold over 10^12 parameters");
        a->extra_params += more[i];
    }
    return VRAM_OK;
}

/* ---- the parse ----------------------------------------------------------------------- */

typedef struct gg_tensor {
    uint64_t offset, bytes;
    size_t name; /* offset into the names arena */
} gg_tensor;

static int gg_tensor_cmp(const void *a, const void *b) {
    const gg_tensor *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return 0;
}

static vram_status gg_metadata(gg *g, uint64_t count, vram__set *keys, char *kbuf, char *arch,
                               size_t archcap, uint64_t *alignment) {
    char q[VRAM__QUOTE_CAP];
    vram_status st;
    for (uint64_t i = 0; i < count; i++) {
        size_t klen;
        uint32_t type;
        char what[64];
        snprintf(what, sizeof what, "metadata key %llu of %llu", (unsigned long long)i + 1,
                 (unsigned long long)count);
        if ((st = gg_name(g, kbuf, &klen, what)) != VRAM_OK) return st;
        vram__set_entry *e;
        int found;
        if (vram__set_put(keys, kbuf, klen, 0, &e, &found) != VRAM_OK)
            return vram__fail(g->err, g->errcap, VRAM_E_NOMEM, g->label, "out of host memory");
        if (found)
            return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                              "metadata key %s appears twice", vram__quote(kbuf, klen, q));
        if ((st = gg_u32(g, &type, "a metadata value type")) != VRAM_OK) return st;
        if (type >= GG_TYPES)
            return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                              "metadata %s has value type %u, not one of 0-12",
                              vram__quote(kbuf, klen, q), type);
        uint64_t v = 0;
        unsigned char b[8];
        switch (type) {
        case GG_STRING:
            if ((st = gg_string_len(g, kbuf, &v)) != VRAM_OK) return st;
            if (strcmp(kbuf, "general.architecture") == 0 && v < archcap) {
                if ((st = gg_read(g, arch, (size_t)v, "general.architecture")) != VRAM_OK)
                    return st;
                arch[v] = '\0';
                if (strlen(arch) != v) arch[0] = '\0'; /* an embedded NUL: no known name */
            } else {
                g->pos += v;
            }
            break;
        case GG_ARRAY: {
            /* per-block head counts: their largest and how many blocks have any, under tag 1 */
            uint64_t sum[2] = {0, 0};
            const int per_block = vram__ends_with(kbuf, klen, ".attention.head_count_kv");
            if ((st = gg_array(g, kbuf, 1, &v, per_block ? sum : NULL)) != VRAM_OK) return st;
            e = vram__set_get(keys, kbuf, klen, 0);
            e->aux = GG_VAL_ARRAY;
            e->value = v;
            if (per_block) {
                if (vram__set_put(keys, kbuf, klen, 1, &e, &found) != VRAM_OK)
                    return vram__fail(g->err, g->errcap, VRAM_E_NOMEM, g->label,
                                      "out of host memory");
                e->value = sum[0];
                e->aux = sum[1];
            }
            break;
        }
        default: {
            size_t n = gg_size[type];
            if ((st = gg_read(g, b, n, "a metadata value")) != VRAM_OK) return st;
            for (size_t j = n; j-- > 0;)
                v = v << 8 | b[j];
            e = vram__set_get(keys, kbuf, klen, 0);
            if (type == GG_F32 || type == GG_F64 || type == GG_BOOL) break;
            int neg = (type == GG_I8 || type == GG_I16 || type == GG_I32 || type == GG_I64) &&
                      (b[n - 1] & 0x80u) != 0;
            if (neg) {
                /* the magnitude, from the sign-extended value */
                uint64_t ext = n == 8 ? v : v | (~UINT64_C(0) << (8 * n));
                e->value = ~ext + 1u;
                e->aux = GG_VAL_NEG;
            } else {
                e->value = v;
                e->aux = GG_VAL_UINT;
            }
            break;
        }
        }
        if (strcmp(kbuf, "general.alignment") == 0) {
            e = vram__set_get(keys, kbuf, klen, 0);
            if (e->aux != GG_VAL_UINT && e->aux != GG_VAL_NEG)
                return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                                  "general.alignment is not an integer");
            if (e->aux != GG_VAL_UINT || e->value == 0 || (e->value & (e->value - 1)) != 0 ||
                e->value > (UINT64_C(1) << 30))
                return vram__fail(g->err, g->errcap, VRAM_E_FORMAT, g->label,
                                  "general.alignment is %s%llu, not a power of two up to 2^30",
                                  e->aux == GG_VAL_NEG ? "-" : "", (unsigned long long)e->value);
            *alignment = e->value;
        }
    }
    return VRAM_OK;
}

vram_status vram_gguf_parse(const vram_gguf_source *src, const char *label, vram_model *m, char *err,
                            size_t errcap) {
    char q[VRAM__QUOTE_CAP], q2[VRAM__QUOTE_CAP], note[512] = "";
    gg g;
    memset(&g, 0, sizeof g);
    g.src = src;
    g.size = src->size;
    g.label = label;
    g.err = err;
    g.errcap = errcap;
    if (err != NULL && errcap > 0) err[0] = '\0';

    unsigned char magic[4];
    uint32_t version;
    uint64_t tcount, mcount, alignment = VRAM_GGUF_DEFAULT_ALIGNMENT;
    vram_status st;
    if (g.size < 4)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "truncated: %llu bytes, too short for the GGUF magic",
                          (unsigned long long)g.size);
    g.win = malloc(GG_WINDOW);
    char *kbuf = malloc(VRAM_GGUF_MAX_NAME + 1);
    if (g.win == NULL || kbuf == NULL) {
        free(g.win);
        free(kbuf);
        return vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
    }
    vram__set keys = {0}, names = {0};
    vram__tensor_acc acc;
    memset(&acc, 0, sizeof acc);
    gg_tensor *tensors = NULL;
    char *arena = NULL;
    size_t arena_len = 0, arena_cap = 0;
    char arch[128] = "";
    gg_seen seen;
    memset(&seen, 0, sizeof seen);

    if ((st = gg_read(&g, magic, 4, "the magic")) != VRAM_OK) goto done;
    if (memcmp(magic, "GGUF", 4) != 0) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                        "not a GGUF file (it does not start with \"GGUF\")");
        goto done;
    }
    if ((st = gg_u32(&g, &version, "the version")) != VRAM_OK) goto done;
    if (version != 2 && version != 3) {
        if (version == 1)
            st =
                vram__fail(err, errcap, VRAM_E_UNHANDLED, label,
                           "GGUF version 1 is not supported (only 2 and 3; v1 used 32-bit counts)");
        else if ((version & 0xffffu) == 0 && (version >> 24) <= 3)
            st = vram__fail(err, errcap, VRAM_E_UNHANDLED, label,
                            "GGUF version %u: a big-endian file? only little-endian versions 2 "
                            "and 3 are supported",
                            version);
        else
            st = vram__fail(err, errcap, VRAM_E_UNHANDLED, label,
                            "GGUF version %u is not supported (only 2 and 3)", version);
        goto done;
    }
    if ((st = gg_u64(&g, &tcount, "the tensor count")) != VRAM_OK ||
        (st = gg_u64(&g, &mcount, "the metadata count")) != VRAM_OK)
        goto done;
    if (tcount > VRAM_GGUF_MAX_TENSORS) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                        "tensor count %llu is absurd (over 1,000,000)", (unsigned long long)tcount);
        goto done;
    }
    if (mcount > VRAM_GGUF_MAX_METADATA) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                        "metadata count %llu is absurd (over 1,000,000)",
                        (unsigned long long)mcount);
        goto done;
    }
    /* each metadata entry takes at least 13 bytes (key length, type, a 1-byte value), each
       tensor info at least 24 (name length, n_dims, one dim... type, offset) */
    if (mcount > gg_left(&g) / 13 || tcount > (gg_left(&g) - mcount * 13) / 24) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                        "%llu metadata entries and %llu tensor infos cannot fit in the %llu bytes "
                        "left in the file",
                        (unsigned long long)mcount, (unsigned long long)tcount,
                        (unsigned long long)gg_left(&g));
        goto done;
    }
    if ((st = gg_metadata(&g, mcount, &keys, kbuf, arch, sizeof arch, &alignment)) != VRAM_OK)
        goto done;

    if (tcount > gg_left(&g) / 24) {
        st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                        "tensor count %llu cannot fit in the %llu bytes left in the file",
                        (unsigned long long)tcount, (unsigned long long)gg_left(&g));
        goto done;
    }
    tensors = malloc((tcount > 0 ? (size_t)tcount : 1) * sizeof *tensors);
    if (tensors == NULL) {
        st = vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
        goto done;
    }
    for (uint64_t i = 0; i < tcount; i++) {
        size_t nlen;
        uint32_t nd, type;
        uint64_t ne[VRAM_GGUF_MAX_DIMS], rd[VRAM_GGUF_MAX_DIMS], numel = 1, offset, bytes;
        char what[64];
        snprintf(what, sizeof what, "tensor name %llu of %llu", (unsigned long long)i + 1,
                 (unsigned long long)tcount);
        if ((st = gg_name(&g, kbuf, &nlen, what)) != VRAM_OK) goto done;
        if ((st = gg_u32(&g, &nd, "a tensor's n_dims")) != VRAM_OK) goto done;
        if (nd == 0 || nd > VRAM_GGUF_MAX_DIMS) {
            st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                            "tensor %s has %u dimensions, not 1 to 4", vram__quote(kbuf, nlen, q),
                            nd);
            goto done;
        }
        for (uint32_t d = 0; d < nd; d++) {
            if ((st = gg_u64(&g, &ne[d], "a tensor dimension")) != VRAM_OK) goto done;
            if (ne[d] > (uint64_t)INT64_MAX) {
                st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                                "tensor %s: dimension %u is %llu, over 2^63",
                                vram__quote(kbuf, nlen, q), d, (unsigned long long)ne[d]);
                goto done;
            }
            if (vram__mul_u64(numel, ne[d], &numel) != VRAM_OK) {
                st = vram__fail(err, errcap, VRAM_E_OVERFLOW, label,
                                "tensor %s: its dimensions hold more than 2^64 elements",
                                vram__quote(kbuf, nlen, q));
                goto done;
            }
        }
        if ((st = gg_u32(&g, &type, "a tensor's ggml type")) != VRAM_OK ||
            (st = gg_u64(&g, &offset, "a tensor's offset")) != VRAM_OK)
            goto done;
        vram_dtype dt;
        vram_dtype_layout lay;
        if (vram_dtype_from_ggml(type, &dt) != VRAM_OK || vram_dtype_get(dt, &lay) != VRAM_OK) {
            st = vram__fail(err, errcap, VRAM_E_UNHANDLED, label,
                            "tensor %s has ggml type %u, which vramkit does not know",
                            vram__quote(kbuf, nlen, q), type);
            goto done;
        }
        if (lay.block > 1 && ne[0] % lay.block != 0) {
            st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                            "tensor %s: rows of %llu elements are not whole %s blocks of %u",
                            vram__quote(kbuf, nlen, q), (unsigned long long)ne[0],
                            vram_dtype_name(dt), lay.block);
            goto done;
        }
        for (uint32_t d = 0; d < nd; d++)
            rd[d] = ne[nd - 1 - d];
        if (vram_dtype_bytes(dt, numel, rd[0], &bytes) != VRAM_OK) {
            st = vram__fail(err, errcap, VRAM_E_OVERFLOW, label,
                            "tensor %s: %llu elements of %s take more than 2^64 bytes",
                            vram__quote(kbuf, nlen, q), (unsigned long long)numel,
                            vram_dtype_name(dt));
            goto done;
        }
        vram__set_entry *e;
        int found;
        if (vram__set_put(&names, kbuf, nlen, 0, &e, &found) != VRAM_OK) {
            st = vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
            goto done;
        }
        if (found) {
            st = vram__fail(err, errcap, VRAM_E_FORMAT, label, "tensor %s appears twice",
                            vram__quote(kbuf, nlen, q));
            goto done;
        }
        if ((st = vram__acc_add(&acc, kbuf, nlen, nd, rd, numel, bytes, dt, label, err, errcap)) !=
            VRAM_OK)
            goto done;
        gg_note_tensor(&seen, kbuf, nlen, rd, nd, numel, dt);
        /* the name, kept for messages about offsets (the arena grows with the file's bytes) */
        if (arena_len + nlen + 1 > arena_cap) {
            size_t cap = arena_cap == 0 ? 4096 : arena_cap;
            while (cap < arena_len + nlen + 1)
                cap *= 2;
            char *na = realloc(arena, cap);
            if (na == NULL) {
                st = vram__fail(err, errcap, VRAM_E_NOMEM, label, "out of host memory");
                goto done;
            }
            arena = na;
            arena_cap = cap;
        }
        memcpy(arena + arena_len, kbuf, nlen + 1);
        tensors[i].offset = offset;
        tensors[i].bytes = bytes;
        tensors[i].name = arena_len;
        arena_len += nlen + 1;
    }

    /* the data section: aligned after the header; tensors aligned, disjoint, inside */
    uint64_t data_start;
    if (vram__add_u64(g.pos, alignment - 1, &data_start) != VRAM_OK) {
        st = vram__fail(err, errcap, VRAM_E_OVERFLOW, label, "data section offset overflows");
        goto done;
    }
    data_start -= data_start % alignment;
    qsort(tensors, (size_t)tcount, sizeof *tensors, gg_tensor_cmp);
    for (uint64_t i = 0; i < tcount; i++) {
        const gg_tensor *t = &tensors[i];
        const char *nm = arena + t->name;
        uint64_t end;
        if (t->offset % alignment != 0) {
            st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                            "tensor %s: offset %llu is not a multiple of the alignment %llu",
                            vram__quote(nm, strlen(nm), q), (unsigned long long)t->offset,
                            (unsigned long long)alignment);
            goto done;
        }
        if (i > 0 && t->offset < tensors[i - 1].offset + tensors[i - 1].bytes) {
            const char *pn = arena + tensors[i - 1].name;
            st = vram__fail(
                err, errcap, VRAM_E_FORMAT, label,
                "tensors %s [%llu, +%llu) and %s [%llu, +%llu) overlap",
                vram__quote(pn, strlen(pn), q), (unsigned long long)tensors[i - 1].offset,
                (unsigned long long)tensors[i - 1].bytes, vram__quote(nm, strlen(nm), q2),
                (unsigned long long)t->offset, (unsigned long long)t->bytes);
            goto done;
        }
        if (vram__add_u64(data_start, t->offset, &end) != VRAM_OK ||
            vram__add_u64(end, t->bytes, &end) != VRAM_OK) {
            st = vram__fail(err, errcap, VRAM_E_OVERFLOW, label,
                            "tensor %s: offset %llu plus %llu bytes overflows",
                            vram__quote(nm, strlen(nm), q), (unsigned long long)t->offset,
                            (unsigned long long)t->bytes);
            goto done;
        }
        if (end > g.size) {
            st = vram__fail(err, errcap, VRAM_E_FORMAT, label,
                            "tensor %s (%llu bytes at data offset %llu) ends at byte %llu, past "
                            "the end of the file (%llu bytes): the file is truncated",
                            vram__quote(nm, strlen(nm), q), (unsigned long long)t->bytes,
                            (unsigned long long)t->offset, (unsigned long long)end,
                            (unsigned long long)g.size);
            goto done;
        }
    }

    {
        vram_model out;
        memset(&out, 0, sizeof out);
        if ((st = gg_arch(&g, &keys, arch, &seen, &out.arch, note, sizeof note)) != VRAM_OK ||
            (st = vram__arch_validate(&out.arch, label, err, errcap)) != VRAM_OK)
            goto done;
        const vram__set_entry *sc = vram__set_get(&keys, "split.count", 11, 0);
        if (sc != NULL && sc->aux == GG_VAL_UINT && sc->value > 1 && note[0] == '\0')
            snprintf(note, sizeof note,
                     "%s: one part of a GGUF split in %llu files; only this part was counted",
                     label, (unsigned long long)sc->value);
        out.stats = acc.stats;
        out.blocks = vram__acc_blocks(&acc);
        out.dtype = vram_tensor_stats_dtype(&acc.stats);
        *m = out;
        if (err != NULL && errcap > 0) snprintf(err, errcap, "%s", note);
    }

done:
    free(g.win);
    free(kbuf);
    free(tensors);
    free(arena);
    vram__set_free(&keys);
    vram__set_free(&names);
    vram__acc_free(&acc);
    return st;
}

/* ---- sources ---------------------------------------------------------------------------- */

static int mem_read_at(void *ctx, uint64_t offset, void *buf, size_t n) {
    memcpy(buf, (const unsigned char *)ctx + offset, n);
    return 0;
}

vram_gguf_source vram_gguf_source_memory(const void *data, size_t len) {
    vram_gguf_source s;
    s.size = len;
    s.read_at = mem_read_at;
    s.ctx = (void *)data;
    return s;
}

static int fd_read_at(void *ctx, uint64_t offset, void *buf, size_t n) {
    int fd = *(int *)ctx;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        if (r == 0) return EIO; /* the file shrank */
        got += (size_t)r;
    }
    return 0;
}

vram_status vram_gguf_read(const char *path, vram_model *m, char *err, size_t errcap) {
    if (err != NULL && errcap > 0) err[0] = '\0';
    const char *why = NULL;
    int fd = vram_open_read(path, 0, NULL, &why); /* never waits on a FIFO */
    if (fd < 0) return vram__fail(err, errcap, VRAM_E_IO, path, "%s", why);
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return vram__fail(err, errcap, VRAM_E_IO, path, "%s", strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return vram__fail(err, errcap, VRAM_E_IO, path, "not a regular file");
    }
    vram_gguf_source src;
    src.size = (uint64_t)sb.st_size;
    src.read_at = fd_read_at;
    src.ctx = &fd;
    vram_status st = vram_gguf_parse(&src, path, m, err, errcap);
    close(fd);
    return st;
}
