/* vramkit/model.h — what vramkit knows about a model before loading it: architecture
 * numbers (from config.json, GGUF metadata or a preset) and the statistics of its tensor
 * list (from safetensors or GGUF headers). The readers in driver/ fill it; estimate.h uses it.
 * Also the rule that sorts a tensor by its name and shape, and the parameter count of an arch. */
#ifndef VRAMKIT_MODEL_H
#define VRAMKIT_MODEL_H

#include <stddef.h>

#include "base.h"
#include "dtype.h"

/* ---- types -------------------------------------------------------------------------- */

typedef enum vram_family {
    VRAM_FAMILY_NONE = 0,           /* no architecture numbers known */
    VRAM_FAMILY_DECODER = 1,        /* decoder-only: GPT-2, Llama, Mistral, Qwen */
    VRAM_FAMILY_ENCODER = 2,        /* encoder-only: BERT, XLM-RoBERTa, DistilBERT */
    VRAM_FAMILY_ENCODER_DECODER = 3 /* M2M100 / NLLB, BART, T5 */
} vram_family;

typedef enum vram_mlp {
    VRAM_MLP_PLAIN = 0, /* up, activation, down: 2 matrices (GPT-2, BERT, M2M100) */
    VRAM_MLP_GATED = 1  /* gate, up, activation, down: 3 matrices (Llama, Mistral, Qwen) */
} vram_mlp;

typedef enum vram_norm {
    VRAM_NORM_LAYER = 0, /* LayerNorm: weight and bias, 2 x hidden */
    VRAM_NORM_RMS = 1    /* RMSNorm: weight only, hidden */
} vram_norm;

/* vram_arch.flags */
#define VRAM_ARCH_QKV_BIAS 0x1u   /* q, k, v projections have biases */
#define VRAM_ARCH_OUT_BIAS 0x2u   /* the attention output projection has a bias */
#define VRAM_ARCH_MLP_BIAS 0x4u   /* the MLP's matrices have biases */
#define VRAM_ARCH_TIED 0x8u       /* the output head is the token embedding (no own weight) */
#define VRAM_ARCH_EMB_NORM 0x10u  /* a norm right after the embeddings (BERT family) */
#define VRAM_ARCH_FINAL_NORM 0x20u /* a norm after the last block of each stack */
#define VRAM_ARCH_NO_HEAD 0x40u   /* no vocabulary head (an encoder for embeddings/classes) */
#define VRAM_ARCH_FLAGS_ALL 0x7fu

/* Architecture numbers. Zero means default where a default is stated. */
typedef struct vram_arch {
    vram_family family;
    uint64_t layers;         /* blocks of a decoder-only or encoder-only model */
    uint64_t encoder_layers; /* encoder-decoder: blocks of each stack */
    uint64_t decoder_layers;
    uint64_t hidden;       /* model width (hidden_size, d_model, n_embd) */
    uint64_t heads;        /* attention heads */
    uint64_t kv_heads;     /* key/value heads (grouped-query attention); 0 = heads */
    uint64_t head_dim;     /* 0 = hidden / heads */
    uint64_t intermediate; /* MLP inner width (intermediate_size, encoder_ffn_dim, n_inner) */
    uint64_t decoder_intermediate; /* encoder-decoder: decoder_ffn_dim; 0 = intermediate */
    uint64_t vocab;        /* vocabulary rows of the token embedding */
    uint64_t positions;    /* rows of a learned position embedding (0: rotary/sinusoidal) */
    uint64_t type_vocab;   /* rows of a token-type embedding (BERT; 0: none) */
    uint64_t context;      /* longest sequence the model was built for (0: unknown) */
    vram_mlp mlp;
    vram_norm norm;
    uint32_t flags;        /* VRAM_ARCH_* */
    uint64_t extra_params; /* parameters outside this pattern (task heads, poolers, the
                              masked-LM head's transform), kept in the weights' format */
} vram_arch;

/* Statistics of a tensor list, gathered tensor by tensor (vram_tensor_stats_add). */
typedef struct vram_tensor_stats {
    uint64_t tensors;        /* how many tensors */
    uint64_t params;         /* their elements */
    uint64_t bytes;          /* their bytes as stored */
    uint64_t matrix_params;  /* elements of the matrices a quantiser converts: 2-D weights
                                inside the blocks (not embeddings, not the output head) */
    uint64_t matrix_rows;    /* the output rows of those matrices (per-row scales) */
    uint64_t matrices;       /* how many such matrices (per-tensor constants) */
    uint64_t outer_params;   /* elements of 2-D weights outside the blocks: embeddings and
                                the output head (llama.cpp and CTranslate2 quantise them
                                too, bitsandbytes does not) */
    uint64_t outer_rows;     /* their rows */
    uint64_t outer_matrices; /* how many */
    uint64_t block_params;   /* elements of every tensor inside a block */
    uint64_t block_bytes;    /* their stored bytes */
    uint64_t largest_bytes;  /* the largest single tensor, stored */
    uint64_t dtype_bytes[VRAM_DTYPE_COUNT]; /* stored bytes per format */
} vram_tensor_stats;

/* A model as vramkit sees it. Either part may be missing (family NONE, tensors 0); the
 * estimate says what it could not count because of that. */
typedef struct vram_model {
    vram_arch arch;
    vram_tensor_stats stats;
    uint64_t blocks;   /* blocks counted from tensor names (readers), 0 when unknown */
    vram_dtype dtype;  /* the format the weights are published in (torch_dtype, or the
                          format most stored bytes are in); NONE = unknown */
} vram_model;

/* Parameters of an architecture, part by part (vram_arch_params). "Matrices" are the 2-D
 * weights inside blocks that quantisers convert; rows are their output rows. */
typedef struct vram_param_count {
    uint64_t embedding;      /* token, position and type embeddings, and their norm */
    uint64_t blocks;         /* every block of every stack */
    uint64_t encoder_block;  /* one encoder block (encoder-only: the block) */
    uint64_t decoder_block;  /* one decoder block (decoder-only: the block; with cross-
                                attention in an encoder-decoder) */
    uint64_t final_norms;    /* norms after the last block of each stack */
    uint64_t head;           /* the vocabulary head's own weight (0 when tied or absent) */
    uint64_t extra;          /* arch.extra_params */
    uint64_t total;
    uint64_t matrix_params;  /* elements of all block matrices */
    uint64_t matrix_rows;    /* their output rows */
    uint64_t matrices;       /* how many */
    uint64_t outer_params;   /* elements of the embedding matrices and the head */
    uint64_t outer_rows;     /* their rows */
    uint64_t outer_matrices; /* how many */
    uint64_t block_count;    /* blocks of all stacks */
} vram_param_count;

/* Where a tensor belongs, from its name and shape (vram_tensor_classify). */
typedef struct vram_tensor_class {
    int in_block;      /* the name carries a block index: "layers.12.", "h.3.", "blk.7." */
    uint64_t block;    /* that index */
    size_t stack_len;  /* bytes of the name before the index's container word ("model.
                          encoder." for "model.encoder.layers.3.fc1.weight"): names with equal
                          stacks and indices belong to the same block */
    int matrix;        /* a 2-D weight inside a block: what int8/int4 quantisers convert */
    int outer_matrix;  /* a 2-D weight outside the blocks (embedding, output head) */
    uint64_t rows;     /* a matrix's output rows (the first dimension as stored) */
} vram_tensor_class;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* Is c an ASCII digit? */
/*@ assigns \nothing; ensures \result <==> '0' <= c <= '9'; */
VRAM_DEF int vram__is_digit(char c) { return c >= '0' && c <= '9'; }

/* Does name[at .. at + wlen) equal word[0 .. wlen)? (bounds checked by the caller) */
/*@ requires at + wlen <= len;
    requires \valid_read(name + (0 .. len - 1)) && \valid_read(word + (0 .. wlen - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram__word_at(const char *name, size_t len, size_t at, const char *word,
                           size_t wlen) {
    size_t i;
    (void)len;
    /*@ loop invariant 0 <= i <= wlen;
        loop assigns i;
        loop variant wlen - i; */
    for (i = 0; i < wlen; i++)
        if (name[at + i] != word[i]) return 0;
    return 1;
}

/* Is name[seg .. end) one of the words that contain block indices: "layers", "layer", "h",
 * "blk", "block", "blocks"? (At most one can match a segment: the words differ.) */
/*@ requires seg <= end <= len && \valid_read(name + (0 .. len - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram__container_word(const char *name, size_t len, size_t seg, size_t end) {
    size_t n = end - seg;
    if (n == 6)
        return vram__word_at(name, len, seg, "layers", 6) || vram__word_at(name, len, seg, "blocks", 6);
    if (n == 5)
        return vram__word_at(name, len, seg, "layer", 5) || vram__word_at(name, len, seg, "block", 5);
    if (n == 3) return vram__word_at(name, len, seg, "blk", 3);
    if (n == 1) return name[seg] == 'h';
    return 0;
}

/* The decimal digits at name[d ..]: their value in *v and the first byte after them in *end.
 * Returns 1 when there is at least one digit, 0 when there is none, -1 when there are more
 * than 18 (the caller's VRAM_E_RANGE). */
/*@ requires d <= len && \valid_read(name + (0 .. len - 1));
    requires \valid(v) && \valid(end) && \separated(v, end);
    assigns *v, *end;
    ensures -1 <= \result <= 1;
    ensures \result >= 0 ==> d <= *end <= len;
    ensures \result == 1 ==> d < *end; */
VRAM_DEF int vram__digits(const char *name, size_t len, size_t d, uint64_t *v, size_t *end) {
    size_t i = d, nd = 0;
    uint64_t x = 0;
    /*@ loop invariant d <= i <= len && nd == i - d && nd <= 18;
        loop assigns i, nd, x;
        loop variant len - i; */
    while (i < len && vram__is_digit(name[i])) {
        if (nd == 18) return -1;
        /* Never true (at most 17 digits so far: x < 10^17); it states for the prover that
           x * 10 + 9 does not wrap. */
        if (x > (UINT64_MAX - 9u) / 10u) return -1;
        x = x * 10u + (uint64_t)(name[i] - '0');
        i++;
        nd++;
    }
    *v = x;
    *end = i;
    return nd != 0 ? 1 : 0;
}

/* Sort a tensor by name and shape. The block index is the first dot-separated segment of
 * digits that follows a segment "layers", "layer", "h", "blk", "block" or "blocks" (the
 * names of Hugging Face, GPT-2, GGUF and timm checkpoints); a matrix is a 2-D tensor inside
 * a block whose name ends in "weight"; an outer matrix the same outside the blocks. name need not be NUL-terminated; dims holds ndims
 * sizes outermost first (PyTorch's order: rows, then columns; GGUF readers reverse ne[]). Requires: out valid. Guarantees: VRAM_OK with
 * *out filled; VRAM_E_RANGE when the index has more than 18 digits; never reads past len. */
/*@ requires \valid(out) && \valid_read(name + (0 .. len - 1));
    requires ndims == 0 || \valid_read(dims + (0 .. ndims - 1));
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==> out->stack_len <= len; */
VRAM_DEF VRAM_NODISCARD vram_status vram_tensor_classify(const char *name, size_t len,
                                                         uint32_t ndims, const uint64_t *dims,
                                                         vram_tensor_class *out) {
    size_t seg = 0; /* start of the current segment */
    int in_block = 0;
    uint64_t block = 0;
    size_t stack_len = 0;
    out->in_block = 0;
    out->block = 0;
    out->stack_len = 0;
    out->matrix = 0;
    out->outer_matrix = 0;
    out->rows = 0;
    /*@ loop invariant 0 <= seg <= len && stack_len <= len;
        loop assigns seg, in_block, block, stack_len;
        loop variant len - seg; */
    while (seg < len && !in_block) {
        size_t end = seg;
        /*@ loop invariant seg <= end <= len;
            loop assigns end;
            loop variant len - end; */
        while (end < len && name[end] != '.') end++;
        /* segment name[seg .. end); is it a container word followed by ".digits." or
           ".digits" at the end? */
        if (end < len && vram__container_word(name, len, seg, end)) {
            uint64_t v = 0;
            size_t d = end + 1; /* first byte after the dot, then after the digits */
            int r = vram__digits(name, len, end + 1, &v, &d);
            if (r < 0) return VRAM_E_RANGE;
            if (r > 0 && (d >= len || name[d] == '.')) {
                in_block = 1;
                block = v;
                stack_len = seg;
            }
        }
        if (end >= len) break; /* the last segment */
        seg = end + 1;
    }
    out->in_block = in_block;
    out->block = block;
    out->stack_len = stack_len;
    if (ndims == 2 && len >= 6 && vram__word_at(name, len, len - 6, "weight", 6)) {
        if (in_block)
            out->matrix = 1;
        else
            out->outer_matrix = 1;
        out->rows = dims[0];
    }
    return VRAM_OK;
}

/* Add one tensor to the statistics: n elements, stored in `bytes` bytes of format t (NONE
 * when the format is unknown to vramkit's table — its bytes still count). Requires: s, c
 * valid. Guarantees: VRAM_OK with s updated; VRAM_E_OVERFLOW (s unchanged) when a sum would
 * wrap. */
/*@ requires \valid(s) && \valid_read(c) && \separated(s, c);
    assigns *s;
    ensures \result == VRAM_OK || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_E_OVERFLOW ==> *s == \old(*s); */
VRAM_DEF VRAM_NODISCARD vram_status vram_tensor_stats_add(vram_tensor_stats *s,
                                                          const vram_tensor_class *c,
                                                          uint64_t n, uint64_t bytes,
                                                          vram_dtype t) {
    vram_tensor_stats x = *s;
    if (vram__add_u64(x.tensors, 1u, &x.tensors) != VRAM_OK ||
        vram__add_u64(x.params, n, &x.params) != VRAM_OK ||
        vram__add_u64(x.bytes, bytes, &x.bytes) != VRAM_OK)
        return VRAM_E_OVERFLOW;
    if (c->in_block) {
        if (vram__add_u64(x.block_params, n, &x.block_params) != VRAM_OK ||
            vram__add_u64(x.block_bytes, bytes, &x.block_bytes) != VRAM_OK)
            return VRAM_E_OVERFLOW;
    }
    if (c->matrix) {
        if (vram__add_u64(x.matrix_params, n, &x.matrix_params) != VRAM_OK ||
            vram__add_u64(x.matrix_rows, c->rows, &x.matrix_rows) != VRAM_OK ||
            vram__add_u64(x.matrices, 1u, &x.matrices) != VRAM_OK)
            return VRAM_E_OVERFLOW;
    } else if (c->outer_matrix) {
        if (vram__add_u64(x.outer_params, n, &x.outer_params) != VRAM_OK ||
            vram__add_u64(x.outer_rows, c->rows, &x.outer_rows) != VRAM_OK ||
            vram__add_u64(x.outer_matrices, 1u, &x.outer_matrices) != VRAM_OK)
            return VRAM_E_OVERFLOW;
    }
    {
        /* the format's slot, NONE's for a format outside the table (indexed by an int that
           is checked, not by the enum, so the bound is plain for the prover) */
        int ti = (int)t;
        if (ti <= (int)VRAM_DTYPE_NONE || ti >= (int)VRAM_DTYPE_COUNT) ti = (int)VRAM_DTYPE_NONE;
        if (vram__add_u64(x.dtype_bytes[ti], bytes, &x.dtype_bytes[ti]) != VRAM_OK)
            return VRAM_E_OVERFLOW;
    }
    if (bytes > x.largest_bytes) x.largest_bytes = bytes;
    *s = x;
    return VRAM_OK;
}

/* The format most stored bytes are in (ties: the earlier format of the list); NONE when
 * no known format holds any byte. */
/*@ requires \valid_read(s);
    assigns \nothing;
    ensures VRAM_DTYPE_NONE <= \result < VRAM_DTYPE_COUNT; */
VRAM_DEF vram_dtype vram_tensor_stats_dtype(const vram_tensor_stats *s) {
    int t, best = VRAM_DTYPE_NONE;
    uint64_t most = 0;
    /*@ loop invariant VRAM_DTYPE_NONE + 1 <= t <= VRAM_DTYPE_COUNT;
        loop invariant VRAM_DTYPE_NONE <= best < VRAM_DTYPE_COUNT;
        loop assigns t, best, most;
        loop variant VRAM_DTYPE_COUNT - t; */
    for (t = VRAM_DTYPE_NONE + 1; t < VRAM_DTYPE_COUNT; t++) {
        if (s->dtype_bytes[t] > most) {
            most = s->dtype_bytes[t];
            best = t;
        }
    }
    return (vram_dtype)best;
}

/* Limits that keep every product in this file far below 2^64 (checked by vram_arch_check):
 * a model wider, deeper or with a larger vocabulary than these is rejected as absurd. */
#define VRAM_ARCH_MAX_LAYERS 10000u   /* per stack */
#define VRAM_ARCH_MAX_WIDTH 1000000u   /* hidden, intermediate, heads x head_dim */
#define VRAM_ARCH_MAX_HEADS 100000u
#define VRAM_ARCH_MAX_VOCAB 100000000u /* vocab, positions, type_vocab */
#define VRAM_ARCH_MAX_EXTRA 1000000000000u

/* A fact of integer arithmetic for the prover, as a ghost "lemma function" (as in chunks.h):
 * proved once from its contract (test/proof/proof_estimate.c) and called in ghost code where a
 * product of two bounded numbers must be bounded. Compilers never see it. */
/*@ ghost
  /@ requires x <= xmax && y <= ymax;
     assigns \nothing;
     ensures x * y <= xmax * ymax; @/
  void vram__lemma_mul_le(uint64_t x, uint64_t xmax, uint64_t y, uint64_t ymax) { }
*/

/* What vram_arch_check guarantees, for the prover: every number within its limit. */
/*@ predicate vram_arch_ok(vram_arch *a) =
      a->heads >= 1 && a->heads <= VRAM_ARCH_MAX_HEADS &&
      a->kv_heads <= a->heads && a->head_dim <= VRAM_ARCH_MAX_WIDTH / a->heads &&
      1 <= a->hidden <= VRAM_ARCH_MAX_WIDTH &&
      1 <= a->intermediate <= VRAM_ARCH_MAX_WIDTH &&
      a->decoder_intermediate <= VRAM_ARCH_MAX_WIDTH &&
      1 <= a->vocab <= VRAM_ARCH_MAX_VOCAB && a->positions <= VRAM_ARCH_MAX_VOCAB &&
      a->type_vocab <= VRAM_ARCH_MAX_VOCAB && a->context <= VRAM_ARCH_MAX_VOCAB &&
      a->layers <= VRAM_ARCH_MAX_LAYERS && a->encoder_layers <= VRAM_ARCH_MAX_LAYERS &&
      a->decoder_layers <= VRAM_ARCH_MAX_LAYERS && a->extra_params <= VRAM_ARCH_MAX_EXTRA &&
      (a->mlp == VRAM_MLP_PLAIN || a->mlp == VRAM_MLP_GATED) &&
      (a->norm == VRAM_NORM_LAYER || a->norm == VRAM_NORM_RMS) &&
      (a->family == VRAM_FAMILY_DECODER || a->family == VRAM_FAMILY_ENCODER ||
       a->family == VRAM_FAMILY_ENCODER_DECODER); */

/* Is a well-formed architecture? Guarantees: VRAM_OK when the family is known, every
 * number the family needs is present and within the limits above, kv_heads divides heads
 * (grouped-query attention), and hidden / heads is whole when head_dim is 0; VRAM_E_INVALID
 * otherwise (VRAM_FAMILY_NONE included). */
/*@ requires \valid_read(a);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> vram_arch_ok(a); */
VRAM_DEF VRAM_NODISCARD vram_status vram_arch_check(const vram_arch *a) {
    uint64_t kv = a->kv_heads != 0 ? a->kv_heads : a->heads;
    uint64_t layers = a->family == VRAM_FAMILY_ENCODER_DECODER ? a->encoder_layers : a->layers;
    if (a->family != VRAM_FAMILY_DECODER && a->family != VRAM_FAMILY_ENCODER &&
        a->family != VRAM_FAMILY_ENCODER_DECODER)
        return VRAM_E_INVALID;
    if (a->mlp != VRAM_MLP_PLAIN && a->mlp != VRAM_MLP_GATED) return VRAM_E_INVALID;
    if (a->norm != VRAM_NORM_LAYER && a->norm != VRAM_NORM_RMS) return VRAM_E_INVALID;
    if ((a->flags & ~VRAM_ARCH_FLAGS_ALL) != 0) return VRAM_E_INVALID;
    if (layers == 0 || a->layers > VRAM_ARCH_MAX_LAYERS ||
        a->encoder_layers > VRAM_ARCH_MAX_LAYERS || a->decoder_layers > VRAM_ARCH_MAX_LAYERS)
        return VRAM_E_INVALID;
    if (a->family == VRAM_FAMILY_ENCODER_DECODER &&
        (a->decoder_layers == 0 || a->decoder_layers > VRAM_ARCH_MAX_LAYERS))
        return VRAM_E_INVALID;
    if (a->hidden == 0 || a->hidden > VRAM_ARCH_MAX_WIDTH) return VRAM_E_INVALID;
    if (a->heads == 0 || a->heads > VRAM_ARCH_MAX_HEADS) return VRAM_E_INVALID;
    if (kv > a->heads || a->heads % kv != 0) return VRAM_E_INVALID;
    if (a->head_dim == 0 && a->hidden % a->heads != 0) return VRAM_E_INVALID;
    if (a->head_dim > VRAM_ARCH_MAX_WIDTH / a->heads) return VRAM_E_INVALID;
    if (a->intermediate == 0 || a->intermediate > VRAM_ARCH_MAX_WIDTH) return VRAM_E_INVALID;
    if (a->decoder_intermediate > VRAM_ARCH_MAX_WIDTH) return VRAM_E_INVALID;
    if (a->vocab == 0 || a->vocab > VRAM_ARCH_MAX_VOCAB) return VRAM_E_INVALID;
    if (a->positions > VRAM_ARCH_MAX_VOCAB || a->type_vocab > VRAM_ARCH_MAX_VOCAB)
        return VRAM_E_INVALID;
    if (a->context > VRAM_ARCH_MAX_VOCAB) return VRAM_E_INVALID;
    if (a->extra_params > VRAM_ARCH_MAX_EXTRA) return VRAM_E_INVALID;
    return VRAM_OK;
}

/* Resolved widths of an arch that passed vram_arch_check: attention width (heads x
 * head_dim), key/value width (kv_heads x head_dim). */
/*@ requires \valid_read(a) && \valid(q) && \valid(kv) && \separated(q, kv);
    requires a->heads >= 1 && a->heads <= VRAM_ARCH_MAX_HEADS;
    requires a->kv_heads <= a->heads;
    requires a->head_dim <= VRAM_ARCH_MAX_WIDTH / a->heads;
    requires a->hidden <= VRAM_ARCH_MAX_WIDTH;
    assigns *q, *kv;
    ensures *q <= VRAM_ARCH_MAX_WIDTH && *kv <= *q; */
VRAM_DEF void vram_arch_widths(const vram_arch *a, uint64_t *q, uint64_t *kv) {
    uint64_t hd = a->head_dim != 0 ? a->head_dim : a->hidden / a->heads;
    uint64_t kvh = a->kv_heads != 0 ? a->kv_heads : a->heads;
    /*@ assert hd * a->heads <= VRAM_ARCH_MAX_WIDTH; */
    *q = a->heads * hd;
    *kv = kvh * hd;
}

/* One attention (self or cross) of width h: q, k, v, o matrices and their biases. Adds
 * matrix elements, rows and count to *mp, *mr, *mc. Bounded: every width <= 10^6. */
/*@ requires h <= VRAM_ARCH_MAX_WIDTH && q <= VRAM_ARCH_MAX_WIDTH && kv <= q;
    requires \valid(mp) && \valid(mr) && \valid(mc) && \separated(mp, mr, mc);
    requires *mp <= 100000000000000 && *mr <= 100000000 && *mc <= 100;
    assigns *mp, *mr, *mc;
    ensures \result <= 4000000000000 + 4000000;
    ensures *mp <= \old(*mp) + 4000000000000 && *mr <= \old(*mr) + 4000000;
    ensures *mc == \old(*mc) + 4; */
VRAM_DEF uint64_t vram__attn_params(uint64_t h, uint64_t q, uint64_t kv, uint32_t flags,
                                    uint64_t *mp, uint64_t *mr, uint64_t *mc) {
    uint64_t m = h * q + h * kv + h * kv + q * h; /* q, k, v, o */
    uint64_t b = 0;
    if (flags & VRAM_ARCH_QKV_BIAS) b += q + kv + kv;
    if (flags & VRAM_ARCH_OUT_BIAS) b += h;
    *mp += m;
    *mr += q + kv + kv + h;
    *mc += 4;
    return m + b;
}

/* One MLP of width h and inner width i, with its matrices added to *mp, *mr, *mc. */
/*@ requires h <= VRAM_ARCH_MAX_WIDTH && i <= VRAM_ARCH_MAX_WIDTH;
    requires mlp == VRAM_MLP_PLAIN || mlp == VRAM_MLP_GATED;
    requires \valid(mp) && \valid(mr) && \valid(mc) && \separated(mp, mr, mc);
    requires *mp <= 100000000000000 && *mr <= 100000000 && *mc <= 100;
    assigns *mp, *mr, *mc;
    ensures \result <= 3000000000000 + 3000000;
    ensures *mp <= \old(*mp) + 3000000000000 && *mr <= \old(*mr) + 3000000;
    ensures *mc <= \old(*mc) + 3; */
VRAM_DEF uint64_t vram__mlp_params(uint64_t h, uint64_t i, vram_mlp mlp, uint32_t flags,
                                   uint64_t *mp, uint64_t *mr, uint64_t *mc) {
    uint64_t up = mlp == VRAM_MLP_GATED ? 2u : 1u; /* gate and up, or up alone */
    uint64_t m = up * h * i + i * h;
    uint64_t b = (flags & VRAM_ARCH_MLP_BIAS) ? up * i + h : 0u;
    *mp += m;
    *mr += up * i + h;
    *mc += up + 1u;
    return m + b;
}

/* vram_arch_params' two steps (split so that the prover handles one at a time). The blocks:
 * every block's parameters and matrices, times the blocks of each stack. */
/*@ requires \valid_read(a) && \valid(c) && \separated(a, c);
    requires vram_arch_ok(a) && q <= VRAM_ARCH_MAX_WIDTH && kv <= q;
    assigns c->encoder_block, c->decoder_block, c->blocks, c->matrix_params, c->matrix_rows,
            c->matrices, c->block_count;
    ensures c->blocks <= 240000000000000000; */
VRAM_DEF void vram__arch_blocks(const vram_arch *a, uint64_t q, uint64_t kv, vram_param_count *c) {
    uint64_t h = a->hidden, norm, enc_layers, dec_layers, dec_i, eb, db;
    uint64_t emp = 0, emr = 0, emc = 0, dmp = 0, dmr = 0, dmc = 0; /* per-block matrices */
    norm = a->norm == VRAM_NORM_LAYER ? 2u * h : h;
    dec_i = a->decoder_intermediate != 0 ? a->decoder_intermediate : a->intermediate;
    if (a->family == VRAM_FAMILY_ENCODER_DECODER) {
        enc_layers = a->encoder_layers;
        dec_layers = a->decoder_layers;
    } else if (a->family == VRAM_FAMILY_ENCODER) {
        enc_layers = a->layers;
        dec_layers = 0;
    } else {
        enc_layers = 0;
        dec_layers = a->layers;
    }
    /*@ assert h <= VRAM_ARCH_MAX_WIDTH && norm <= 2 * VRAM_ARCH_MAX_WIDTH &&
               dec_i <= VRAM_ARCH_MAX_WIDTH && enc_layers <= VRAM_ARCH_MAX_LAYERS &&
               dec_layers <= VRAM_ARCH_MAX_LAYERS; */
    /* an encoder block (and a decoder-only block): self-attention, MLP, two norms */
    eb = vram__attn_params(h, q, kv, a->flags, &emp, &emr, &emc) +
         vram__mlp_params(h, a->intermediate, a->mlp, a->flags, &emp, &emr, &emc) + 2u * norm;
    if (a->family == VRAM_FAMILY_ENCODER_DECODER) {
        db = vram__attn_params(h, q, kv, a->flags, &dmp, &dmr, &dmc) +
             vram__attn_params(h, q, kv, a->flags, &dmp, &dmr, &dmc) +
             vram__mlp_params(h, dec_i, a->mlp, a->flags, &dmp, &dmr, &dmc) + 3u * norm;
    } else if (a->family == VRAM_FAMILY_DECODER) {
        db = eb;
        eb = 0;
        dmp = emp;
        dmr = emr;
        dmc = emc;
        emp = emr = emc = 0;
    } else {
        db = 0;
    }
    /* a block <= 1.2 * 10^13 parameters and 2 * 10^4 blocks: far below 2^64 */
    /*@ assert eb <= 12000000000000 && db <= 12000000000000 &&
               emp <= 12000000000000 && dmp <= 12000000000000 &&
               emr <= 12000000 && dmr <= 12000000 && emc <= 12 && dmc <= 12; */
    /*@ ghost vram__lemma_mul_le(enc_layers, VRAM_ARCH_MAX_LAYERS, eb, 12000000000000);
              vram__lemma_mul_le(dec_layers, VRAM_ARCH_MAX_LAYERS, db, 12000000000000);
              vram__lemma_mul_le(enc_layers, VRAM_ARCH_MAX_LAYERS, emp, 12000000000000);
              vram__lemma_mul_le(dec_layers, VRAM_ARCH_MAX_LAYERS, dmp, 12000000000000);
              vram__lemma_mul_le(enc_layers, VRAM_ARCH_MAX_LAYERS, emr, 12000000);
              vram__lemma_mul_le(dec_layers, VRAM_ARCH_MAX_LAYERS, dmr, 12000000);
              vram__lemma_mul_le(enc_layers, VRAM_ARCH_MAX_LAYERS, emc, 12);
              vram__lemma_mul_le(dec_layers, VRAM_ARCH_MAX_LAYERS, dmc, 12); */
    c->encoder_block = eb;
    c->decoder_block = db;
    c->blocks = enc_layers * eb + dec_layers * db;
    c->matrix_params = enc_layers * emp + dec_layers * dmp;
    c->matrix_rows = enc_layers * emr + dec_layers * dmr;
    c->matrices = enc_layers * emc + dec_layers * dmc;
    c->block_count = enc_layers + dec_layers;
}

/* The rest: embeddings (and their norm), final norms, the head, extra parameters, and the
 * total of all parts (c->blocks from vram__arch_blocks). */
/*@ requires \valid_read(a) && \valid(c) && \separated(a, c);
    requires vram_arch_ok(a) && c->blocks <= 240000000000000000;
    assigns c->embedding, c->final_norms, c->head, c->outer_params, c->outer_rows,
            c->outer_matrices, c->extra, c->total; */
VRAM_DEF void vram__arch_outer(const vram_arch *a, vram_param_count *c) {
    uint64_t h = a->hidden, norm, rows, head, emb, fin;
    norm = a->norm == VRAM_NORM_LAYER ? 2u * h : h;
    /* embedding rows <= 3 * 10^8 of width <= 10^6; the head 10^8 x 10^6 */
    rows = a->vocab + a->positions + a->type_vocab;
    /*@ ghost vram__lemma_mul_le(rows, 3 * VRAM_ARCH_MAX_VOCAB, h, VRAM_ARCH_MAX_WIDTH);
              vram__lemma_mul_le(a->vocab, VRAM_ARCH_MAX_VOCAB, h, VRAM_ARCH_MAX_WIDTH); */
    emb = rows * h + ((a->flags & VRAM_ARCH_EMB_NORM) ? norm : 0u);
    fin = (a->flags & VRAM_ARCH_FINAL_NORM)
              ? (a->family == VRAM_FAMILY_ENCODER_DECODER ? 2u * norm : norm)
              : 0u;
    head = (a->flags & (VRAM_ARCH_TIED | VRAM_ARCH_NO_HEAD)) ? 0u : a->vocab * h;
    c->embedding = emb;
    c->final_norms = fin;
    c->head = head;
    c->outer_params = rows * h + head;
    c->outer_rows = rows + (head != 0 ? a->vocab : 0u);
    c->outer_matrices = 1u + (a->positions != 0) + (a->type_vocab != 0) + (head != 0);
    c->extra = a->extra_params;
    c->total = emb + c->blocks + fin + head + a->extra_params;
}

/* Parameters of an architecture, part by part: the weights a checkpoint of it holds.
 * Blocks: attention (q, k, v, o; grouped-query k/v), MLP (2 or 3 matrices), two norms
 * (three in a decoder block with cross-attention, which adds a second attention).
 * Embeddings: vocab + positions + type_vocab rows of width hidden, plus a norm with
 * EMB_NORM. One final norm per stack with FINAL_NORM; a vocab x hidden head unless TIED or
 * NO_HEAD; extra_params as given. Requires: a, out valid. Guarantees: VRAM_OK with *out
 * filled and out->total the sum of its parts; VRAM_E_INVALID when vram_arch_check fails.
 * Never overflows: the limits of vram_arch_check bound every product. */
/*@ requires \valid_read(a) && \valid(out) && \separated(a, out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> vram_arch_ok(a); */
VRAM_DEF VRAM_NODISCARD vram_status vram_arch_params(const vram_arch *a, vram_param_count *out) {
    uint64_t q, kv;
    vram_param_count c;
    if (vram_arch_check(a) != VRAM_OK) return VRAM_E_INVALID;
    vram_arch_widths(a, &q, &kv);
    vram__arch_blocks(a, q, kv, &c);
    vram__arch_outer(a, &c);
    *out = c;
    return VRAM_OK;
}

#endif /* VRAMKIT_MODEL_H */
