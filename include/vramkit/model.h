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

/* The families' names, as vramkit writes them (a model's "family" in JSON). X(id, name) */
#define VRAM_FAMILY_LIST(X)                 \
    X(VRAM_FAMILY_DECODER, "decoder")       \
    X(VRAM_FAMILY_ENCODER, "encoder")       \
    X(VRAM_FAMILY_ENCODER_DECODER, "encoder-decoder")

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
#define VRAM_ARCH_PARALLEL 0x80u  /* a parallel block with one norm: attention and MLP both
                                     read the same normed input (phi-1/2, falcon-7b, GPT-J),
                                     so each block has one norm, not two */
#define VRAM_ARCH_NO_MLP 0x100u   /* blocks have no MLP: a norm and a token mixer only
                                     (Mamba-1, Mamba-2, Falcon-Mamba) */
#define VRAM_ARCH_MIXER_ALSO 0x200u /* the mixer blocks keep their attention too, side by
                                       side (Falcon-H1): every block has attention */
#define VRAM_ARCH_STATE_COMPUTE 0x400u /* the recurrent mixers' state is kept in the compute
                                         format (MiniMax's lightning attention), not in
                                         fp32 as the state-space and delta-rule mixers keep it
                                         in transformers and llama.cpp */
#define VRAM_ARCH_FLAGS_ALL 0x7ffu

/* vram_arch.ops: how a block computes, where it changes the activations an estimate counts
 * (transformers' implementations, as test/truth/ measures them) */
#define VRAM_OPS_QK_NORM 0x1u   /* q and k normalised per head before the rotary embedding
                                   (Qwen3, OLMoE, Gemma 3): an fp32 copy and a normalised
                                   copy of q and k kept for the backward pass */
#define VRAM_OPS_GELU_OPS 0x2u  /* the MLP's activation written as elementwise operations
                                   (GPT-2's gelu_new: 0.5 x (1 + tanh(...))): its pieces are
                                   kept or alive together, 3 more tensors of the MLP width */
#define VRAM_OPS_SOFTCAP 0x4u   /* attention scores and final logits soft-capped (Gemma 2):
                                   attention runs unfused (its s x s scores exist) and the
                                   capped logits are one more tensor of their size */
#define VRAM_OPS_FUSED_PROJ 0x8u /* q, k, v in one projection and gate, up in another
                                   (Phi-3): the fused outputs stay alive whole */
#define VRAM_OPS_ALL 0xfu

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
    uint64_t vocab;        /* vocabulary rows of the token embedding (0: none, for a vision
                              tower, which has NO_HEAD) */
    uint64_t positions;    /* rows of a learned position embedding (0: rotary/sinusoidal) */
    uint64_t type_vocab;   /* rows of a token-type embedding (BERT; 0: none) */
    uint64_t context;      /* longest sequence the model was built for (0: unknown) */
    vram_mlp mlp;
    vram_norm norm;
    uint32_t flags;        /* VRAM_ARCH_* */
    uint64_t extra_params; /* parameters outside this pattern (task heads, poolers, the
                              masked-LM head's transform), kept in the weights' format */
    /* Mixture of experts (decoders only; experts 0: every MLP is dense). A MoE block's MLP
       is a router (hidden x experts), `experts` routed MLPs of width expert_intermediate of
       which each token goes through experts_per_token, and a shared MLP of width
       shared_intermediate that every token goes through (0: none). The first dense_layers
       blocks keep a dense MLP of width intermediate (DeepSeek's first_k_dense_replace). */
    uint64_t experts;             /* routed experts per MoE block */
    uint64_t experts_per_token;   /* top-k: routed experts each token goes through */
    uint64_t expert_intermediate; /* one routed expert's inner width; 0 = intermediate */
    uint64_t shared_intermediate; /* the shared expert(s)' inner width, all together */
    uint64_t dense_layers;        /* leading blocks with a dense MLP */
    uint32_t moe_flags;           /* VRAM_MOE_* */
    vram_dtype expert_format;     /* the routed experts' storage when the file says it
                                     differs from the rest (gpt-oss: MXFP4); NONE = same */
    /* Multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank 0: ordinary attention).
       q: hidden -> q_lora_rank -> heads x head_dim (direct when q_lora_rank is 0); k, v:
       hidden -> kv_lora_rank + rope_dim, then kv_lora_rank -> heads x (head_dim - rope_dim
       + v_head_dim); o: heads x v_head_dim -> hidden. The KV cache keeps kv_lora_rank +
       rope_dim numbers per token and block (the compressed KV and the rotary key). */
    uint64_t q_lora_rank;
    uint64_t kv_lora_rank;
    uint64_t rope_dim;   /* qk_rope_head_dim (part of head_dim) */
    uint64_t v_head_dim; /* 0 = head_dim - rope_dim */
    uint64_t source_context; /* encoder-decoder: the length its encoder always takes, whatever
                                the input (whisper: 1500 frames, 30 s of audio); 0 = none,
                                the source is as long as the workload says */
    /* Sliding-window attention (decoders only): window_layers of the blocks attend over the
       last sliding_window tokens only, so an engine with a sliding-window cache keeps that
       many tokens of their keys and values (gpt-oss, Gemma 2 and 3, Mistral-7B-v0.1).
       0 and 0: every block attends over the whole sequence. Both 0 or neither. */
    uint64_t sliding_window; /* tokens */
    uint64_t window_layers;  /* how many blocks use the window, at most layers */
    uint32_t ops;            /* VRAM_OPS_* (0: the plain operations of the family) */
    /* Recurrent token mixers (state-space and hybrid models, decoders only): mixer_layers of
       the blocks mix tokens with a recurrent mixer instead of attention (Mamba, Jamba's
       Mamba blocks, LFM2's short convolutions, Qwen3-Next's gated delta rule); the others
       keep attention (all of them keep it as well with MIXER_ALSO). One mixer: an input
       projection hidden -> mix_in, a depthwise causal convolution over mix_conv channels
       with mix_kernel taps, mix_matrix elements of other matrices (Mamba-1's x_proj and
       dt_proj), an output projection mix_out -> hidden, and mix_vectors other parameters
       (A, D, the time-step bias, the gated norm, the biases). In place of keys and values
       it keeps, per sequence and whatever its length, (mix_kernel - 1) x mix_conv numbers
       of the convolution and mix_state numbers of the recurrence. 0: no mixer. */
    uint64_t mixer_layers;
    uint64_t mix_in, mix_out, mix_conv, mix_kernel; /* widths; mix_kernel taps */
    uint64_t mix_matrix, mix_vectors, mix_state;   /* elements */
    /* Numbers a token keeps in the cache beside the keys and values, all blocks together,
       over the whole sequence (decoders only; 0: none): DeepSeek-V3.2's and GLM-5's
       indexer keys, index_head_dim in each block with an indexer. */
    uint64_t kv_extra;
    /* An indexer's heads (DeepSeek-V3.2, GLM-5; 0: none): at inference each scores every
       query against every key in fp32, head by head, beside attention's working set. */
    uint64_t index_heads;
} vram_arch;

/* vram_arch.moe_flags */
#define VRAM_MOE_ROUTER_BIAS 0x1u /* the router has a bias (gpt-oss) */
#define VRAM_MOE_EXPERT_BIAS 0x2u /* every routed expert's matrices have biases (gpt-oss) */
#define VRAM_MOE_ROUTE_FP32 0x4u  /* the routing weights reach the experts in fp32 (a softmax
                                     or sigmoid kept in fp32: Mixtral, DeepSeek, GLM-4.5,
                                     MiniMax): transformers' experts' outputs, scaled by them,
                                     are fp32 too (measured: test/models/moe_route.py) */
#define VRAM_MOE_GATE_CLAMP 0x8u  /* gpt-oss's clamped GLU: gate and up clamped, up shifted,
                                     the gate scaled: 3 more tensors of the expert width
                                     alive at the experts' gate */
#define VRAM_MOE_EVERY_EXPERT 0x10u /* transformers' Llama 4: every expert runs over every
                                       token, the router's scores zero for the rest (its
                                       working set E / k times the routed one; engines that
                                       route, vLLM, llama.cpp, are the estimate's low) */
#define VRAM_MOE_FLAGS_ALL 0x1fu

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
    uint64_t expert_params;  /* elements of the routed experts' tensors (vram_tensor_class
                                .expert): what experts_cpu keeps in host memory */
    uint64_t expert_bytes;   /* their stored bytes */
} vram_tensor_stats;

/* A model as vramkit sees it. Either part may be missing (family NONE, tensors 0); the
 * estimate says what it could not count because of that. */
typedef struct vram_model {
    vram_arch arch;
    vram_tensor_stats stats;
    uint64_t blocks;   /* blocks counted from tensor names (readers), 0 when unknown */
    vram_dtype dtype;  /* the format the weights are published in (torch_dtype, or the
                          format most stored bytes are in); NONE = unknown */
    uint64_t guess_low;  /* when the arch was guessed from a config's keys (a model type
                            vramkit does not know): the fewest and the most parameters of the
                            readings it could be (plain or gated MLP, tied or untied head,
                            biases or none), for the estimate's range; 0 when not guessed */
    uint64_t guess_high;
    uint64_t image_tokens; /* a vision-language model: the tokens one image adds to arch's
                              sequence (its vision tower's patches after the projector);
                              0 = images add none */
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
    uint64_t active;         /* parameters one token goes through: total less the routed
                                experts it is not sent to (= total for a dense model) */
    uint64_t expert_params;  /* the routed experts' parameters, all blocks (0: dense) */
    uint64_t expert_matrix_params; /* of which in their matrices */
    uint64_t expert_matrix_rows;   /* those matrices' output rows */
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
    int expert;        /* a routed expert's tensor: a segment "experts" (Hugging Face:
                          "mlp.experts.3.w1.weight", gpt-oss's fused "mlp.experts.gate_up_proj")
                          or "ffn_*_exps" (GGUF: "blk.0.ffn_up_exps.weight"); shared experts
                          ("shared_experts", "ffn_*_shexp") are not routed */
} vram_tensor_class;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* A family's name ("encoder-decoder"), NUL-padded to 16 bytes (VRAM__PAD16); "unknown" for
 * NONE and outside the enum. */
/*@ assigns \nothing;
    ensures \valid_read(\result + (0 .. 15)); */
VRAM_DEF const char *vram_family_name(vram_family f) {
    VRAM_X_NAME(f, VRAM_FAMILY_LIST, VRAM_X_PAD2, VRAM__PAD16("unknown"));
}

/* A family from its name (exact, lower case; text need not be NUL-terminated, len bytes are
 * read). VRAM_E_UNHANDLED ("unknown" included) leaves *out untouched. */
/*@ requires \valid_read(text + (0 .. len - 1)) && \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_UNHANDLED;
    ensures \result == VRAM_OK ==> VRAM_FAMILY_DECODER <= *out <= VRAM_FAMILY_ENCODER_DECODER; */
VRAM_DEF VRAM_NODISCARD vram_status vram_family_from_name(const char *text, size_t len,
                                                          vram_family *out) {
    VRAM_X_FROM_NAME(VRAM_FAMILY_LIST, VRAM_X_MATCH2);
}

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

/* Is name[seg .. end) a routed experts' segment: "experts" exactly, or "ffn_" ... "_exps"
 * (GGUF's ffn_gate_exps, ffn_up_exps, ffn_down_exps, ffn_gate_up_exps)? */
/*@ requires seg <= end <= len && \valid_read(name + (0 .. len - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram__expert_word(const char *name, size_t len, size_t seg, size_t end) {
    size_t n = end - seg;
    if (n == 7) return vram__word_at(name, len, seg, "experts", 7);
    if (n >= 9)
        return vram__word_at(name, len, seg, "ffn_", 4) &&
               vram__word_at(name, len, end - 5, "_exps", 5);
    return 0;
}

/* Does any dot-separated segment of name[0 .. len) name routed experts (vram__expert_word)? */
/*@ requires \valid_read(name + (0 .. len - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram__expert_name(const char *name, size_t len) {
    size_t seg = 0, end;
    /*@ loop invariant 0 <= seg <= len;
        loop assigns seg, end;
        loop variant len - seg; */
    while (seg < len) {
        end = seg;
        /*@ loop invariant seg <= end <= len;
            loop assigns end;
            loop variant len - end; */
        while (end < len && name[end] != '.') end++;
        if (vram__expert_word(name, len, seg, end)) return 1;
        if (end >= len) break;
        seg = end + 1;
    }
    return 0;
}

/* vram_tensor_classify's scan for the block index (values out, for the prover): range 1
 * when the index has more than 18 digits; else in_block, block and stack_len as
 * vram_tensor_class has them. */
typedef struct vram__block_at {
    int range, in_block;
    uint64_t block;
    size_t stack_len;
} vram__block_at;

/*@ requires \valid_read(name + (0 .. len - 1));
    assigns \nothing;
    ensures \result.stack_len <= len; */
VRAM_DEF vram__block_at vram__block_of(const char *name, size_t len) {
    size_t seg = 0; /* start of the current segment */
    vram__block_at r = {0, 0, 0, 0};
    /*@ loop invariant 0 <= seg <= len && r.stack_len <= len;
        loop assigns seg, r;
        loop variant len - seg; */
    while (seg < len && !r.in_block) {
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
            int k = vram__digits(name, len, end + 1, &v, &d);
            if (k < 0) {
                r.range = 1;
                return r;
            }
            if (k > 0 && (d >= len || name[d] == '.')) {
                r.in_block = 1;
                r.block = v;
                r.stack_len = seg;
            }
        }
        if (end >= len) break; /* the last segment */
        seg = end + 1;
    }
    return r;
}

/* vram_tensor_classify's matrices: a 2-D weight ("...weight") inside a block or outside, a
 * block's experts fused into one 3-D tensor ("...weight" or "..._proj"; rows = experts x
 * rows of one, range 1 when that passes 2^64). */
typedef struct vram__matrix_at {
    int range, matrix, outer;
    uint64_t rows;
} vram__matrix_at;

/*@ requires \valid_read(name + (0 .. len - 1));
    requires ndims == 0 || \valid_read(dims + (0 .. ndims - 1));
    assigns \nothing; */
VRAM_DEF vram__matrix_at vram__matrix_of(const char *name, size_t len, uint32_t ndims,
                                         const uint64_t *dims, int in_block, int expert) {
    vram__matrix_at m = {0, 0, 0, 0};
    if (ndims == 2 && len >= 6 && vram__word_at(name, len, len - 6, "weight", 6)) {
        if (in_block)
            m.matrix = 1;
        else
            m.outer = 1;
        m.rows = dims[0];
    } else if (ndims == 3 && expert &&
               ((len >= 6 && vram__word_at(name, len, len - 6, "weight", 6)) ||
                (len >= 5 && vram__word_at(name, len, len - 5, "_proj", 5)))) {
        /* the experts of a block fused into one tensor (GGUF's ffn_up_exps, gpt-oss's
           gate_up_proj): a matrix per expert, rows = experts x rows of one */
        uint64_t rows;
        if (vram__mul_u64(dims[0], dims[1], &rows) != VRAM_OK) {
            m.range = 1;
            return m;
        }
        m.matrix = 1;
        m.rows = rows;
    }
    return m;
}

/* Sort a tensor by name and shape. The block index is the first dot-separated segment of
 * digits that follows a segment "layers", "layer", "h", "blk", "block" or "blocks" (the
 * names of Hugging Face, GPT-2, GGUF and timm checkpoints); a matrix is a 2-D tensor inside
 * a block whose name ends in "weight"; an outer matrix the same outside the blocks. name
 * need not be NUL-terminated, and nothing past len is read; dims holds ndims sizes
 * outermost first (PyTorch's order: rows, then columns; GGUF readers reverse ne[]).
 * VRAM_E_RANGE when the index has more than 18 digits. */
/*@ requires \valid(out) && \valid_read(name + (0 .. len - 1));
    requires ndims == 0 || \valid_read(dims + (0 .. ndims - 1));
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==> out->stack_len <= len; */
VRAM_DEF VRAM_NODISCARD vram_status vram_tensor_classify(const char *name, size_t len,
                                                         uint32_t ndims, const uint64_t *dims,
                                                         vram_tensor_class *out) {
    vram__block_at k;
    vram__matrix_at m;
    out->in_block = 0;
    out->block = 0;
    out->stack_len = 0;
    out->matrix = 0;
    out->outer_matrix = 0;
    out->rows = 0;
    out->expert = 0;
    k = vram__block_of(name, len);
    if (k.range) return VRAM_E_RANGE;
    out->in_block = k.in_block;
    out->block = k.block;
    out->stack_len = k.stack_len;
    out->expert = k.in_block && vram__expert_name(name, len);
    m = vram__matrix_of(name, len, ndims, dims, k.in_block, out->expert);
    if (m.range) return VRAM_E_RANGE;
    out->matrix = m.matrix;
    out->outer_matrix = m.outer;
    out->rows = m.rows;
    return VRAM_OK;
}

/* vram_tensor_stats_add's steps (each a short path for the prover: the check, then the sums).
 * What one tensor adds: n elements in `bytes` bytes of format slot ti, the rows of a matrix,
 * and its class. */
typedef struct vram__stats_in {
    uint64_t n, bytes, rows;
    int ti, in_block, matrix, outer, expert;
} vram__stats_in;

/*@ predicate vram_stats_fit(vram_tensor_stats x, vram__stats_in a) =
      0 <= a.ti < VRAM_DTYPE_COUNT &&
      x.tensors < UINT64_MAX && a.n <= UINT64_MAX - x.params &&
      a.bytes <= UINT64_MAX - x.bytes &&
      (a.in_block != 0 ==>
         a.n <= UINT64_MAX - x.block_params && a.bytes <= UINT64_MAX - x.block_bytes) &&
      (a.matrix != 0 ==>
         a.n <= UINT64_MAX - x.matrix_params && a.rows <= UINT64_MAX - x.matrix_rows &&
         x.matrices < UINT64_MAX) &&
      (a.matrix == 0 && a.outer != 0 ==>
         a.n <= UINT64_MAX - x.outer_params && a.rows <= UINT64_MAX - x.outer_rows &&
         x.outer_matrices < UINT64_MAX) &&
      a.bytes <= UINT64_MAX - x.dtype_bytes[a.ti] &&
      (a.expert != 0 ==>
         a.n <= UINT64_MAX - x.expert_params && a.bytes <= UINT64_MAX - x.expert_bytes); */

/* 1 when every sum of the tensor's addition to *x fits (a + b wraps iff b > UINT64_MAX - a).
 * The statistics are read through a pointer: the struct is 504 bytes, a copy a call cost
 * more than the checks. */
/*@ requires \valid_read(x);
    requires 0 <= a.ti < VRAM_DTYPE_COUNT;
    assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> vram_stats_fit(*x, a); */
VRAM_DEF int vram__stats_fit(const vram_tensor_stats *x, vram__stats_in a) {
    if (x->tensors == UINT64_MAX || a.n > UINT64_MAX - x->params ||
        a.bytes > UINT64_MAX - x->bytes)
        return 0;
    if (a.in_block &&
        (a.n > UINT64_MAX - x->block_params || a.bytes > UINT64_MAX - x->block_bytes))
        return 0;
    if (a.matrix && (a.n > UINT64_MAX - x->matrix_params ||
                     a.rows > UINT64_MAX - x->matrix_rows || x->matrices == UINT64_MAX))
        return 0;
    if (!a.matrix && a.outer &&
        (a.n > UINT64_MAX - x->outer_params || a.rows > UINT64_MAX - x->outer_rows ||
         x->outer_matrices == UINT64_MAX))
        return 0;
    if (a.bytes > UINT64_MAX - x->dtype_bytes[a.ti]) return 0;
    if (a.expert &&
        (a.n > UINT64_MAX - x->expert_params || a.bytes > UINT64_MAX - x->expert_bytes))
        return 0;
    return 1;
}

/* Add the tensor to *s, in place (vram__stats_fit said every sum fits). */
/*@ requires \valid(s);
    requires vram_stats_fit(*s, a);
    assigns *s; */
VRAM_DEF void vram__stats_plus(vram_tensor_stats *s, vram__stats_in a) {
    s->tensors += 1u;
    s->params += a.n;
    s->bytes += a.bytes;
    if (a.in_block) {
        s->block_params += a.n;
        s->block_bytes += a.bytes;
    }
    if (a.matrix) {
        s->matrix_params += a.n;
        s->matrix_rows += a.rows;
        s->matrices += 1u;
    } else if (a.outer) {
        s->outer_params += a.n;
        s->outer_rows += a.rows;
        s->outer_matrices += 1u;
    }
    s->dtype_bytes[a.ti] += a.bytes;
    if (a.expert) {
        s->expert_params += a.n;
        s->expert_bytes += a.bytes;
    }
    if (a.bytes > s->largest_bytes) s->largest_bytes = a.bytes;
}

/* Add one tensor to the statistics: n elements, stored in `bytes` bytes of format t (NONE
 * when the format is unknown to vramkit's table — its bytes still count). VRAM_E_OVERFLOW
 * when a sum would wrap. */
/*@ requires \valid(s) && \valid_read(c) && \separated(s, c);
    assigns *s;
    ensures \result == VRAM_OK || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_E_OVERFLOW ==> *s == \old(*s); */
VRAM_DEF VRAM_NODISCARD vram_status vram_tensor_stats_add(vram_tensor_stats *s,
                                                          const vram_tensor_class *c,
                                                          uint64_t n, uint64_t bytes,
                                                          vram_dtype t) {
    vram__stats_in a;
    a.n = n;
    a.bytes = bytes;
    a.rows = c->rows;
    a.in_block = c->in_block;
    a.matrix = c->matrix;
    a.outer = c->outer_matrix;
    a.expert = c->expert;
    /* the format's slot, NONE's for a format outside the table (indexed by an int that is
       checked, not by the enum, so the bound is plain for the prover) */
    a.ti = (int)t;
    if (a.ti <= (int)VRAM_DTYPE_NONE || a.ti >= (int)VRAM_DTYPE_COUNT) a.ti = (int)VRAM_DTYPE_NONE;
    /* every sum checked before any is made, so that *s is written whole or not at all */
    if (!vram__stats_fit(s, a)) return VRAM_E_OVERFLOW;
    vram__stats_plus(s, a);
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
#define VRAM_ARCH_MAX_EXPERTS 100000u /* routed experts per block */
#define VRAM_ARCH_MAX_MIX_IN 4000000u   /* a recurrent mixer's input projection, convolution */
#define VRAM_ARCH_MAX_KERNEL 1024u      /* its convolution's taps */
/* A MoE or latent-attention model is counted with checked arithmetic (experts multiply the
 * bound above): one whose blocks pass this many parameters is rejected as absurd. */
#define VRAM_ARCH_MAX_BLOCK_PARAMS 240000000000000000u

/* A fact of integer arithmetic for the prover, as a ghost "lemma function" (as in chunks.h):
 * proved once from its contract (test/proof/proof_estimate.c) and called in ghost code where a
 * product of two bounded numbers must be bounded. Compilers never see it. */
/*@ ghost
  /@ requires x <= xmax && y <= ymax;
     assigns \nothing;
     ensures x * y <= xmax * ymax; @/
  void vram__lemma_mul_le(uint64_t x, uint64_t xmax, uint64_t y, uint64_t ymax) { }
*/

/* What vram_arch_check guarantees, for the prover: every number within its limit (in three
 * parts, one per step of the check). */
/*@ predicate vram_arch_shape_ok(vram_arch a) =
      (a.family == VRAM_FAMILY_DECODER || a.family == VRAM_FAMILY_ENCODER ||
       a.family == VRAM_FAMILY_ENCODER_DECODER) &&
      (a.mlp == VRAM_MLP_PLAIN || a.mlp == VRAM_MLP_GATED) &&
      (a.norm == VRAM_NORM_LAYER || a.norm == VRAM_NORM_RMS) &&
      a.layers <= VRAM_ARCH_MAX_LAYERS && a.encoder_layers <= VRAM_ARCH_MAX_LAYERS &&
      a.decoder_layers <= VRAM_ARCH_MAX_LAYERS;
    predicate vram_arch_heads_ok(vram_arch a) =
      a.heads >= 1 && a.heads <= VRAM_ARCH_MAX_HEADS &&
      a.kv_heads <= a.heads && a.head_dim <= VRAM_ARCH_MAX_WIDTH / a.heads &&
      1 <= a.hidden <= VRAM_ARCH_MAX_WIDTH;
    predicate vram_arch_sizes_ok(vram_arch a) =
      1 <= a.intermediate <= VRAM_ARCH_MAX_WIDTH &&
      a.decoder_intermediate <= VRAM_ARCH_MAX_WIDTH &&
      a.vocab <= VRAM_ARCH_MAX_VOCAB && a.positions <= VRAM_ARCH_MAX_VOCAB &&
      a.type_vocab <= VRAM_ARCH_MAX_VOCAB && a.context <= VRAM_ARCH_MAX_VOCAB &&
      a.source_context <= VRAM_ARCH_MAX_VOCAB && a.extra_params <= VRAM_ARCH_MAX_EXTRA;
    predicate vram_arch_moe_ok(vram_arch a) =
      a.experts <= VRAM_ARCH_MAX_EXPERTS && a.experts_per_token <= a.experts &&
      a.expert_intermediate <= VRAM_ARCH_MAX_WIDTH &&
      a.shared_intermediate <= VRAM_ARCH_MAX_WIDTH && a.dense_layers <= a.layers &&
      a.q_lora_rank <= VRAM_ARCH_MAX_WIDTH && a.kv_lora_rank <= VRAM_ARCH_MAX_WIDTH &&
      a.rope_dim <= VRAM_ARCH_MAX_WIDTH && a.v_head_dim <= VRAM_ARCH_MAX_WIDTH;
    predicate vram_arch_swa_ok(vram_arch a) =
      a.sliding_window <= VRAM_ARCH_MAX_VOCAB && a.window_layers <= a.layers;
    predicate vram_arch_mix_ok(vram_arch a) =
      a.mixer_layers <= a.layers && a.mix_in <= VRAM_ARCH_MAX_MIX_IN &&
      a.mix_out <= VRAM_ARCH_MAX_WIDTH && a.mix_conv <= VRAM_ARCH_MAX_MIX_IN &&
      a.mix_kernel <= VRAM_ARCH_MAX_KERNEL && a.mix_matrix <= VRAM_ARCH_MAX_EXTRA &&
      a.mix_vectors <= VRAM_ARCH_MAX_EXTRA && a.mix_state <= VRAM_ARCH_MAX_EXTRA &&
      a.kv_extra <= VRAM_ARCH_MAX_EXTRA && a.index_heads <= VRAM_ARCH_MAX_HEADS;
    predicate vram_arch_ok(vram_arch a) =
      vram_arch_shape_ok(a) && vram_arch_heads_ok(a) && vram_arch_sizes_ok(a) &&
      vram_arch_moe_ok(a) && vram_arch_swa_ok(a) && vram_arch_mix_ok(a); */

/* vram_arch_check's five steps (apart so that the prover takes one at a time; each returns
 * 1 when its part of the arch is well formed, else 0; the arch by value, so that the prover
 * reasons about its numbers, not about a struct read from memory). The family, MLP, norm, flags and the
 * block counts the family needs: */
/*@ assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> vram_arch_shape_ok(a); */
VRAM_DEF int vram__arch_check_shape(vram_arch a) {
    const vram_family family = a.family;
    const uint64_t enc = a.encoder_layers, dec = a.decoder_layers, lay = a.layers;
    const uint64_t layers = family == VRAM_FAMILY_ENCODER_DECODER ? enc : lay;
    if (family != VRAM_FAMILY_DECODER && family != VRAM_FAMILY_ENCODER &&
        family != VRAM_FAMILY_ENCODER_DECODER)
        return 0;
    if (a.mlp != VRAM_MLP_PLAIN && a.mlp != VRAM_MLP_GATED) return 0;
    if (a.norm != VRAM_NORM_LAYER && a.norm != VRAM_NORM_RMS) return 0;
    if ((a.flags & ~VRAM_ARCH_FLAGS_ALL) != 0 || (a.ops & ~VRAM_OPS_ALL) != 0) return 0;
    if (layers == 0 || lay > VRAM_ARCH_MAX_LAYERS || enc > VRAM_ARCH_MAX_LAYERS ||
        dec > VRAM_ARCH_MAX_LAYERS)
        return 0;
    if (family == VRAM_FAMILY_ENCODER_DECODER && dec == 0) return 0;
    return 1;
}

/* The width and the heads: kv_heads divides heads, head_dim given or hidden / heads whole. */
/*@ assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> vram_arch_heads_ok(a); */
VRAM_DEF int vram__arch_check_heads(vram_arch a) {
    const uint64_t heads = a.heads, hidden = a.hidden, head_dim = a.head_dim;
    const uint64_t kv = a.kv_heads != 0 ? a.kv_heads : heads;
    if (hidden == 0 || hidden > VRAM_ARCH_MAX_WIDTH) return 0;
    if (heads == 0 || heads > VRAM_ARCH_MAX_HEADS) return 0;
    if (kv > heads || heads % kv != 0) return 0;
    if (head_dim == 0 && hidden % heads != 0) return 0;
    if (head_dim > VRAM_ARCH_MAX_WIDTH / heads) return 0;
    return 1;
}

/* The MLP widths, the vocabulary and position tables, the context, the extra parameters. */
/*@ assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> vram_arch_sizes_ok(a); */
VRAM_DEF int vram__arch_check_sizes(vram_arch a) {
    const uint64_t inter = a.intermediate, dec_inter = a.decoder_intermediate;
    const uint64_t vocab = a.vocab, pos = a.positions, types = a.type_vocab;
    if (inter == 0 || inter > VRAM_ARCH_MAX_WIDTH) return 0;
    if (dec_inter > VRAM_ARCH_MAX_WIDTH) return 0;
    /* no vocabulary only without a head (a vision tower: patches, not tokens) */
    if ((vocab == 0 && (a.flags & VRAM_ARCH_NO_HEAD) == 0) || vocab > VRAM_ARCH_MAX_VOCAB)
        return 0;
    if (pos > VRAM_ARCH_MAX_VOCAB || types > VRAM_ARCH_MAX_VOCAB) return 0;
    if (a.context > VRAM_ARCH_MAX_VOCAB || a.source_context > VRAM_ARCH_MAX_VOCAB) return 0;
    if (a.extra_params > VRAM_ARCH_MAX_EXTRA) return 0;
    return 1;
}

/* The mixture of experts and the latent attention: within the limits; top-k at most the
 * experts (and at least 1 with experts); dense_layers at most the blocks; known flags and
 * expert format; latent attention with a head_dim that holds rope_dim; both for decoders
 * only. */
/*@ assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> vram_arch_moe_ok(a); */
VRAM_DEF int vram__arch_check_moe(vram_arch a) {
    const uint64_t e = a.experts, k = a.experts_per_token;
    const int xf = (int)a.expert_format;
    if (e > VRAM_ARCH_MAX_EXPERTS || k > e || (e != 0 && k == 0)) return 0;
    if (a.expert_intermediate > VRAM_ARCH_MAX_WIDTH ||
        a.shared_intermediate > VRAM_ARCH_MAX_WIDTH)
        return 0;
    if (a.dense_layers > a.layers) return 0;
    if ((a.moe_flags & ~VRAM_MOE_FLAGS_ALL) != 0) return 0;
    if (xf < (int)VRAM_DTYPE_NONE || xf >= (int)VRAM_DTYPE_COUNT) return 0;
    if (a.q_lora_rank > VRAM_ARCH_MAX_WIDTH || a.kv_lora_rank > VRAM_ARCH_MAX_WIDTH ||
        a.rope_dim > VRAM_ARCH_MAX_WIDTH || a.v_head_dim > VRAM_ARCH_MAX_WIDTH)
        return 0;
    if (a.kv_lora_rank != 0 && (a.head_dim == 0 || a.rope_dim > a.head_dim)) return 0;
    if ((e != 0 || a.kv_lora_rank != 0) && a.family != VRAM_FAMILY_DECODER) return 0;
    return 1;
}

/* The sliding window: at most VRAM_ARCH_MAX_VOCAB tokens, on at most `layers` blocks, the
 * window and its blocks both 0 or both not, and for a decoder only. */
/*@ assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> vram_arch_swa_ok(a); */
VRAM_DEF int vram__arch_check_swa(vram_arch a) {
    const uint64_t w = a.sliding_window, wl = a.window_layers;
    if (w > VRAM_ARCH_MAX_VOCAB || wl > a.layers) return 0;
    if ((w == 0) != (wl == 0)) return 0;
    if (wl != 0 && a.family != VRAM_FAMILY_DECODER) return 0;
    return 1;
}

/* The recurrent mixer: at most `layers` blocks, within the limits, with both projections
 * (and taps with a convolution); decoders only; NO_MLP and MIXER_ALSO for decoders only;
 * the cache's extra numbers (kv_extra) and an indexer's heads within the limits, decoders
 * only. */
/*@ assigns \nothing;
    ensures \result == 0 || \result == 1;
    ensures \result == 1 ==> vram_arch_mix_ok(a); */
VRAM_DEF int vram__arch_check_mix(vram_arch a) {
    const uint64_t n = a.mixer_layers;
    if (n > a.layers || a.mix_in > VRAM_ARCH_MAX_MIX_IN || a.mix_out > VRAM_ARCH_MAX_WIDTH ||
        a.mix_conv > VRAM_ARCH_MAX_MIX_IN || a.mix_kernel > VRAM_ARCH_MAX_KERNEL)
        return 0;
    if (a.mix_matrix > VRAM_ARCH_MAX_EXTRA || a.mix_vectors > VRAM_ARCH_MAX_EXTRA ||
        a.mix_state > VRAM_ARCH_MAX_EXTRA || a.kv_extra > VRAM_ARCH_MAX_EXTRA ||
        a.index_heads > VRAM_ARCH_MAX_HEADS)
        return 0;
    if ((a.kv_extra != 0 || a.index_heads != 0) && a.family != VRAM_FAMILY_DECODER) return 0;
    if (n != 0 && (a.mix_in == 0 || a.mix_out == 0 || (a.mix_conv != 0) != (a.mix_kernel != 0)))
        return 0;
    if ((n != 0 || (a.flags & (VRAM_ARCH_NO_MLP | VRAM_ARCH_MIXER_ALSO)) != 0) &&
        a.family != VRAM_FAMILY_DECODER)
        return 0;
    return 1;
}

/* Is a well-formed architecture? VRAM_OK when the family is known, every number the family
 * needs is present and within the limits above, kv_heads divides heads (grouped-query
 * attention), hidden / heads is whole when head_dim is 0, the mixture-of-experts and
 * latent-attention numbers are consistent (vram__arch_check_moe) and so is the sliding
 * window (vram__arch_check_swa) and so is the recurrent mixer (vram__arch_check_mix);
 * VRAM_E_INVALID otherwise (VRAM_FAMILY_NONE included). */
/*@ assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> vram_arch_ok(a); */
VRAM_DEF vram_status vram__arch_check_of(vram_arch a) {
    if (!vram__arch_check_shape(a) || !vram__arch_check_heads(a) || !vram__arch_check_sizes(a) ||
        !vram__arch_check_moe(a) || !vram__arch_check_swa(a) || !vram__arch_check_mix(a))
        return VRAM_E_INVALID;
    return VRAM_OK;
}

/*@ requires \valid_read(a);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> vram_arch_ok(*a); */
VRAM_DEF VRAM_NODISCARD vram_status vram_arch_check(const vram_arch *a) {
    return vram__arch_check_of(*a);
}

/* Resolved widths of an arch that passed vram_arch_check: attention width (heads x
 * head_dim), key/value width (kv_heads x head_dim). (The value form, for the steps below.) */
typedef struct vram__widths {
    uint64_t q, kv;
} vram__widths;

/*@ requires heads >= 1 && heads <= VRAM_ARCH_MAX_HEADS;
    requires kv_heads <= heads;
    requires head_dim <= VRAM_ARCH_MAX_WIDTH / heads;
    requires hidden <= VRAM_ARCH_MAX_WIDTH;
    assigns \nothing;
    ensures \result.q <= VRAM_ARCH_MAX_WIDTH && \result.kv <= \result.q; */
VRAM_DEF vram__widths vram__widths_of(uint64_t heads, uint64_t kv_heads, uint64_t head_dim,
                                      uint64_t hidden) {
    vram__widths r;
    const uint64_t hd = head_dim != 0 ? head_dim : hidden / heads;
    const uint64_t kvh = kv_heads != 0 ? kv_heads : heads;
    /*@ assert hd * heads <= VRAM_ARCH_MAX_WIDTH; */
    r.q = heads * hd;
    r.kv = kvh * hd;
    return r;
}

/* The same from an arch value. (Four numbers, not the whole arch, reach the arithmetic:
 * the prover then reasons about four numbers, not every field.) */
/*@ requires a.heads >= 1 && a.heads <= VRAM_ARCH_MAX_HEADS;
    requires a.kv_heads <= a.heads;
    requires a.head_dim <= VRAM_ARCH_MAX_WIDTH / a.heads;
    requires a.hidden <= VRAM_ARCH_MAX_WIDTH;
    assigns \nothing;
    ensures \result.q <= VRAM_ARCH_MAX_WIDTH && \result.kv <= \result.q; */
VRAM_DEF vram__widths vram__arch_widths(vram_arch a) {
    return vram__widths_of(a.heads, a.kv_heads, a.head_dim, a.hidden);
}

/* The same through pointers: for an arch that passed vram_arch_check, whose limits are
 * what this needs. */
/*@ requires \valid_read(a) && \valid(q) && \valid(kv) && \separated(q, kv);
    requires a->heads >= 1 && a->heads <= VRAM_ARCH_MAX_HEADS;
    requires a->kv_heads <= a->heads;
    requires a->head_dim <= VRAM_ARCH_MAX_WIDTH / a->heads;
    requires a->hidden <= VRAM_ARCH_MAX_WIDTH;
    assigns *q, *kv;
    ensures *q <= VRAM_ARCH_MAX_WIDTH && *kv <= *q; */
VRAM_DEF void vram_arch_widths(const vram_arch *a, uint64_t *q, uint64_t *kv) {
    vram__widths r = vram__widths_of(a->heads, a->kv_heads, a->head_dim, a->hidden);
    *q = r.q;
    *kv = r.kv;
}

/* One part of a block (an attention, an MLP, a whole block): its parameters, and its
 * matrices' elements, output rows and count. Values, not pointers, so that the prover
 * reasons about numbers only. */
typedef struct vram__part {
    uint64_t params, mp, mr, mc;
} vram__part;

/* One attention (self or cross) of width h: q, k, v, o matrices and their biases. Bounded:
 * every width <= 10^6. */
/*@ requires h <= VRAM_ARCH_MAX_WIDTH && q <= VRAM_ARCH_MAX_WIDTH && kv <= q;
    assigns \nothing;
    ensures \result.params <= 4000000000000 + 4000000;
    ensures \result.mp <= 4000000000000 && \result.mr <= 4000000 && \result.mc == 4; */
VRAM_DEF vram__part vram__attn_params(uint64_t h, uint64_t q, uint64_t kv, uint32_t flags) {
    vram__part p;
    uint64_t b = 0;
    p.mp = h * q + h * kv + h * kv + q * h; /* q, k, v, o */
    if (flags & VRAM_ARCH_QKV_BIAS) b += q + kv + kv;
    if (flags & VRAM_ARCH_OUT_BIAS) b += h;
    p.mr = q + kv + kv + h;
    p.mc = 4;
    p.params = p.mp + b;
    return p;
}

/* One MLP of width h and inner width i. */
/*@ requires h <= VRAM_ARCH_MAX_WIDTH && i <= VRAM_ARCH_MAX_WIDTH;
    requires mlp == VRAM_MLP_PLAIN || mlp == VRAM_MLP_GATED;
    assigns \nothing;
    ensures \result.params <= 3000000000000 + 3000000;
    ensures \result.mp <= 3000000000000 && \result.mr <= 3000000 && \result.mc <= 3; */
VRAM_DEF vram__part vram__mlp_params(uint64_t h, uint64_t i, vram_mlp mlp, uint32_t flags) {
    vram__part p;
    uint64_t up = mlp == VRAM_MLP_GATED ? 2u : 1u; /* gate and up, or up alone */
    p.mp = up * h * i + i * h;
    p.params = p.mp + ((flags & VRAM_ARCH_MLP_BIAS) ? up * i + h : 0u);
    p.mr = up * i + h;
    p.mc = up + 1u;
    return p;
}

/* One block: self-attention, MLP of inner width i, two norms of `norm` parameters (one with
 * VRAM_ARCH_PARALLEL); with cross (a decoder block of an encoder-decoder) a second
 * attention and one more norm. */
/*@ requires h <= VRAM_ARCH_MAX_WIDTH && q <= VRAM_ARCH_MAX_WIDTH && kv <= q;
    requires i <= VRAM_ARCH_MAX_WIDTH && norm <= 2 * VRAM_ARCH_MAX_WIDTH;
    requires mlp == VRAM_MLP_PLAIN || mlp == VRAM_MLP_GATED;
    assigns \nothing;
    ensures \result.params <= 12000000000000 && \result.mp <= 12000000000000;
    ensures \result.mr <= 12000000 && \result.mc <= 12; */
VRAM_DEF vram__part vram__block_params(uint64_t h, uint64_t q, uint64_t kv, uint64_t i,
                                       vram_mlp mlp, uint64_t norm, uint32_t flags, int cross) {
    vram__part at = vram__attn_params(h, q, kv, flags), m = vram__mlp_params(h, i, mlp, flags);
    vram__part r;
    r.params = at.params + m.params + ((flags & VRAM_ARCH_PARALLEL) ? norm : 2u * norm);
    r.mp = at.mp + m.mp;
    r.mr = at.mr + m.mr;
    r.mc = at.mc + m.mc;
    if (cross) {
        vram__part x = vram__attn_params(h, q, kv, flags);
        r.params += x.params + norm;
        r.mp += x.mp;
        r.mr += x.mr;
        r.mc += x.mc;
    }
    return r;
}

/* The blocks of two stacks: e blocks of x and d blocks of y, part by part. A block <= 1.2 *
 * 10^13 parameters and 2 * 10^4 blocks: far below 2^64, so plain arithmetic. */
/*@ requires e <= VRAM_ARCH_MAX_LAYERS && d <= VRAM_ARCH_MAX_LAYERS;
    requires x.params <= 12000000000000 && x.mp <= 12000000000000;
    requires x.mr <= 12000000 && x.mc <= 12;
    requires y.params <= 12000000000000 && y.mp <= 12000000000000;
    requires y.mr <= 12000000 && y.mc <= 12;
    assigns \nothing;
    ensures \result.params <= 240000000000000000; */
VRAM_DEF vram__part vram__stacks_sum(uint64_t e, vram__part x, uint64_t d, vram__part y) {
    vram__part r;
    /*@ ghost vram__lemma_mul_le(e, VRAM_ARCH_MAX_LAYERS, x.params, 12000000000000);
              vram__lemma_mul_le(d, VRAM_ARCH_MAX_LAYERS, y.params, 12000000000000);
              vram__lemma_mul_le(e, VRAM_ARCH_MAX_LAYERS, x.mp, 12000000000000);
              vram__lemma_mul_le(d, VRAM_ARCH_MAX_LAYERS, y.mp, 12000000000000);
              vram__lemma_mul_le(e, VRAM_ARCH_MAX_LAYERS, x.mr, 12000000);
              vram__lemma_mul_le(d, VRAM_ARCH_MAX_LAYERS, y.mr, 12000000);
              vram__lemma_mul_le(e, VRAM_ARCH_MAX_LAYERS, x.mc, 12);
              vram__lemma_mul_le(d, VRAM_ARCH_MAX_LAYERS, y.mc, 12); */
    r.params = e * x.params + d * y.params;
    r.mp = e * x.mp + d * y.mp;
    r.mr = e * x.mr + d * y.mr;
    r.mc = e * x.mc + d * y.mc;
    return r;
}

/* vram_arch_params' two steps (split so that the prover handles one at a time; values in,
 * values out). The blocks: every block's parameters and matrices, times the blocks of each
 * stack (the other fields of the result 0). */
/*@ requires vram_arch_ok(a) && q <= VRAM_ARCH_MAX_WIDTH && kv <= q;
    assigns \nothing;
    ensures \result.blocks <= 240000000000000000; */
VRAM_DEF vram_param_count vram__arch_blocks(vram_arch a, uint64_t q, uint64_t kv) {
    vram_param_count c = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const vram_family family = a.family;
    const uint64_t h = a.hidden, inter = a.intermediate;
    const uint64_t norm = a.norm == VRAM_NORM_LAYER ? 2u * h : h;
    const uint64_t dec_i = a.decoder_intermediate != 0 ? a.decoder_intermediate : inter;
    const vram__part zero = {0, 0, 0, 0};
    uint64_t enc_layers, dec_layers;
    vram__part eb, db, all;
    if (family == VRAM_FAMILY_ENCODER_DECODER) {
        enc_layers = a.encoder_layers;
        dec_layers = a.decoder_layers;
    } else if (family == VRAM_FAMILY_ENCODER) {
        enc_layers = a.layers;
        dec_layers = 0;
    } else {
        enc_layers = 0;
        dec_layers = a.layers;
    }
    /* an encoder block (and a decoder-only block): self-attention, MLP, two norms */
    eb = vram__block_params(h, q, kv, inter, a.mlp, norm, a.flags, 0);
    if (family == VRAM_FAMILY_ENCODER_DECODER) {
        db = vram__block_params(h, q, kv, dec_i, a.mlp, norm, a.flags, 1);
    } else if (family == VRAM_FAMILY_DECODER) {
        db = eb;
        eb = zero;
    } else {
        db = zero;
    }
    all = vram__stacks_sum(enc_layers, eb, dec_layers, db);
    c.encoder_block = eb.params;
    c.decoder_block = db.params;
    c.blocks = all.params;
    c.matrix_params = all.mp;
    c.matrix_rows = all.mr;
    c.matrices = all.mc;
    c.block_count = enc_layers + dec_layers;
    c.active = c.blocks; /* dense: every parameter of a block is used */
    return c;
}

/* Multi-head latent attention of width h (the layout in vram_arch): q_a (with its norm) and
 * q_b, or q alone; kv_a (with its norm) and kv_b; o. QKV_BIAS puts biases on q_a and kv_a,
 * OUT_BIAS on o (DeepSeek's attention_bias). */
/*@ requires \valid(ov);
    assigns *ov; */
VRAM_DEF vram__part vram__mla_params(vram__acc *ov, uint64_t h, uint64_t heads, uint64_t hd,
                                     uint64_t vd, uint64_t qr, uint64_t kvr, uint64_t rope,
                                     uint32_t flags) {
    vram__part p;
    const uint64_t nope = hd > rope ? hd - rope : 0u;
    const uint64_t q = vram__m(ov, heads, hd);
    const uint64_t kvb = vram__m(ov, heads, vram__a(ov, nope, vd));
    const uint64_t o = vram__m(ov, heads, vd);
    const uint64_t kva = vram__a(ov, kvr, rope);
    uint64_t b = kvr; /* kv_a's norm */
    if (qr != 0) {
        p.mp = vram__a(ov, vram__m(ov, h, qr), vram__m(ov, qr, q));
        p.mr = vram__a(ov, qr, q);
        p.mc = 2;
        b = vram__a(ov, b, qr); /* q_a's norm */
        if (flags & VRAM_ARCH_QKV_BIAS) b = vram__a(ov, b, qr);
    } else {
        p.mp = vram__m(ov, h, q);
        p.mr = q;
        p.mc = 1;
    }
    p.mp = vram__a(ov, p.mp, vram__m(ov, h, kva));
    p.mp = vram__a(ov, p.mp, vram__m(ov, kvr, kvb));
    p.mp = vram__a(ov, p.mp, vram__m(ov, o, h));
    p.mr = vram__a(ov, vram__a(ov, p.mr, kva), vram__a(ov, kvb, h));
    p.mc += 3u;
    if (flags & VRAM_ARCH_QKV_BIAS) b = vram__a(ov, b, kva);
    if (flags & VRAM_ARCH_OUT_BIAS) b = vram__a(ov, b, h);
    p.params = vram__a(ov, p.mp, b);
    return p;
}

/* n x a part, checked. */
/*@ requires \valid(ov);
    assigns *ov; */
VRAM_DEF vram__part vram__part_times(vram__acc *ov, uint64_t n, vram__part x) {
    vram__part r;
    r.params = vram__m(ov, n, x.params);
    r.mp = vram__m(ov, n, x.mp);
    r.mr = vram__m(ov, n, x.mr);
    r.mc = vram__m(ov, n, x.mc);
    return r;
}

/* x + y, checked. */
/*@ requires \valid(ov);
    assigns *ov; */
VRAM_DEF vram__part vram__part_add(vram__acc *ov, vram__part x, vram__part y) {
    vram__part r;
    r.params = vram__a(ov, x.params, y.params);
    r.mp = vram__a(ov, x.mp, y.mp);
    r.mr = vram__a(ov, x.mr, y.mr);
    r.mc = vram__a(ov, x.mc, y.mc);
    return r;
}

/* One recurrent mixer of width h (the layout in vram_arch): its two projections and other
 * matrices, the convolution's taps and the other parameters. Checked. */
/*@ requires \valid(ov);
    assigns *ov; */
VRAM_DEF vram__part vram__mixer_params(vram__acc *ov, uint64_t h, vram_arch a) {
    vram__part p;
    p.mp = vram__a(ov, vram__a(ov, vram__m(ov, h, a.mix_in),
                                         vram__m(ov, a.mix_out, h)),
                        a.mix_matrix);
    p.params = vram__a(ov, vram__a(ov, p.mp, vram__m(ov, a.mix_conv, a.mix_kernel)),
                            a.mix_vectors);
    p.mr = vram__a(ov, a.mix_in, h);
    p.mc = a.mix_matrix != 0 ? 3u : 2u;
    return p;
}

/* vram__arch_moe_blocks' steps (each a short path for the prover; values in, values out).
 * A block's MLP with experts: one routed expert (ex), all of them (all_ex), and the block's
 * MLP (moe: a router of hidden x experts, + experts with ROUTER_BIAS, the routed experts and
 * the shared MLP); moe and ex zero without experts or with NO_MLP. Checked. */
typedef struct vram__moe_mlp {
    vram__part ex, all_ex, moe;
} vram__moe_mlp;

/*@ requires h <= VRAM_ARCH_MAX_WIDTH && xi <= VRAM_ARCH_MAX_WIDTH;
    requires shared <= VRAM_ARCH_MAX_WIDTH;
    requires mlp == VRAM_MLP_PLAIN || mlp == VRAM_MLP_GATED;
    requires \valid(ov);
    assigns *ov; */
VRAM_DEF vram__moe_mlp vram__moe_mlp_of(vram__acc *ov, uint64_t h, uint64_t e, uint64_t xi,
                                        uint64_t shared, vram_mlp mlp, uint32_t flags,
                                        uint32_t moe_flags, int no_mlp) {
    const uint32_t xflags = (moe_flags & VRAM_MOE_EXPERT_BIAS) ? VRAM_ARCH_MLP_BIAS : 0u;
    const vram__part zero = {0, 0, 0, 0};
    vram__moe_mlp x;
    vram__part router;
    x.ex = vram__mlp_params(h, xi, mlp, xflags);
    x.all_ex = vram__part_times(ov, e, x.ex);
    router.mp = vram__m(ov, h, e);
    router.params = (moe_flags & VRAM_MOE_ROUTER_BIAS) ? vram__a(ov, router.mp, e) : router.mp;
    router.mr = e;
    router.mc = 1;
    x.moe = vram__part_add(ov, router, x.all_ex);
    if (shared != 0) x.moe = vram__part_add(ov, x.moe, vram__mlp_params(h, shared, mlp, flags));
    if (e == 0 || no_mlp) x.moe = zero;
    if (e == 0 || no_mlp) x.ex = zero;
    return x;
}

/* How many blocks hold each part: attention (attn), a recurrent mixer (mix), a dense MLP
 * (dense), a MoE MLP (moe), all of them (layers) their norms (norms parameters a block);
 * idle: the routed experts a token is not sent to. */
typedef struct vram__moe_n {
    uint64_t layers, attn, mix, dense, moe, idle, norms;
    int no_mlp;
} vram__moe_n;

/* The blocks' sum: each part times the blocks that hold it. Checked. */
/*@ requires \valid(ov);
    assigns *ov; */
VRAM_DEF vram__part vram__moe_sum(vram__acc *ov, vram__part at, vram__part mx, vram__part dense,
                                  vram__part moe, vram__moe_n n) {
    vram__part nrm, blocks;
    nrm.params = n.norms;
    nrm.mp = nrm.mr = nrm.mc = 0;
    blocks = vram__part_add(ov, vram__part_times(ov, n.attn, at), vram__part_times(ov, n.mix, mx));
    blocks = vram__part_add(ov, blocks, vram__part_times(ov, n.dense, dense));
    blocks = vram__part_add(ov, blocks, vram__part_times(ov, n.moe, moe));
    return vram__part_add(ov, blocks, vram__part_times(ov, n.layers, nrm));
}

/* The count from the blocks' sum and one block's parts. Checked. */
/*@ requires \valid(ov);
    assigns *ov; */
VRAM_DEF vram_param_count vram__moe_count(vram__acc *ov, vram__part at, vram__part dense,
                                          vram__moe_mlp x, vram__part blocks, vram__moe_n n) {
    vram_param_count c = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const uint64_t idle = vram__m(ov, n.moe, vram__m(ov, n.idle, x.ex.params));
    c.encoder_block = 0;
    /* one attention block: its MLP the routed one when there are experts */
    c.decoder_block = vram__a(ov, vram__a(ov, at.params, n.norms),
                              n.moe != 0 ? x.moe.params : dense.params);
    c.blocks = blocks.params;
    c.matrix_params = blocks.mp;
    c.matrix_rows = blocks.mr;
    c.matrices = blocks.mc;
    c.block_count = n.layers;
    c.active = c.blocks >= idle ? c.blocks - idle : c.blocks;
    c.expert_params = n.no_mlp ? 0u : vram__m(ov, n.moe, x.all_ex.params);
    c.expert_matrix_params = n.no_mlp ? 0u : vram__m(ov, n.moe, x.all_ex.mp);
    c.expert_matrix_rows = n.no_mlp ? 0u : vram__m(ov, n.moe, x.all_ex.mr);
    return c;
}

/* The blocks of a decoder with experts, latent attention or recurrent mixers
 * (vram__arch_blocks' fields, and active: the blocks' parameters one token goes through;
 * the routed experts' parameters). Each block has a token mixer, an MLP and norms:
 *   mixer: attention (latent with kv_lora_rank) in layers - mixer_layers blocks (in every
 *     block with MIXER_ALSO), the recurrent mixer in mixer_layers blocks;
 *   MLP: none with NO_MLP; else a dense MLP of width intermediate in dense_layers blocks
 *     (all without experts: DeepSeek's first blocks, Llama 4's interleaved ones), in the
 *     others a router of hidden x experts (+ experts with ROUTER_BIAS), the routed experts
 *     and the shared MLP (vram__moe_mlp_of);
 *   norms: two (one with PARALLEL or NO_MLP).
 * Checked: *ov set when a sum passes 2^64. */
/*@ requires vram_arch_ok(a) && q <= VRAM_ARCH_MAX_WIDTH && kv <= q && \valid(ov);
    assigns *ov; */
VRAM_DEF vram_param_count vram__arch_moe_blocks(vram_arch a, uint64_t q, uint64_t kv, vram__acc *ov) {
    const uint64_t h = a.hidden, e = a.experts, layers = a.layers;
    const uint64_t norm = a.norm == VRAM_NORM_LAYER ? 2u * h : h;
    const int no_mlp = (a.flags & VRAM_ARCH_NO_MLP) != 0;
    const uint64_t xi = a.expert_intermediate != 0 ? a.expert_intermediate : a.intermediate;
    const vram__part zero = {0, 0, 0, 0};
    vram__part at, mx, dense;
    vram__moe_mlp x;
    vram__moe_n n;
    n.layers = layers;
    n.norms = (no_mlp || (a.flags & VRAM_ARCH_PARALLEL)) ? norm : 2u * norm;
    n.dense = e != 0 ? a.dense_layers : layers;
    n.moe = layers - n.dense;
    n.mix = a.mixer_layers;
    n.attn = (a.flags & VRAM_ARCH_MIXER_ALSO) ? layers : layers - n.mix;
    n.idle = e - a.experts_per_token;
    n.no_mlp = no_mlp;
    if (a.kv_lora_rank != 0) {
        const uint64_t hd = a.head_dim;
        const uint64_t vd =
            a.v_head_dim != 0 ? a.v_head_dim : (hd > a.rope_dim ? hd - a.rope_dim : 0u);
        at = vram__mla_params(ov, h, a.heads, hd, vd, a.q_lora_rank, a.kv_lora_rank,
                              a.rope_dim, a.flags);
    } else {
        at = vram__attn_params(h, q, kv, a.flags);
    }
    mx = n.mix != 0 ? vram__mixer_params(ov, h, a) : zero;
    dense = no_mlp ? zero : vram__mlp_params(h, a.intermediate, a.mlp, a.flags);
    x = vram__moe_mlp_of(ov, h, e, xi, a.shared_intermediate, a.mlp, a.flags, a.moe_flags,
                         no_mlp);
    return vram__moe_count(ov, at, dense, x, vram__moe_sum(ov, at, mx, dense, x.moe, n), n);
}

/* vram__arch_outer's first step: the embedding rows (rh: their elements), the embeddings
 * with their norm, the final norms and the head, each with the bound the sums need. */
typedef struct vram__outer {
    uint64_t rows, rh, emb, fin, head;
} vram__outer;

/*@ requires h <= VRAM_ARCH_MAX_WIDTH && vocab <= VRAM_ARCH_MAX_VOCAB;
    requires positions <= VRAM_ARCH_MAX_VOCAB && types <= VRAM_ARCH_MAX_VOCAB;
    assigns \nothing;
    ensures \result.rows == vocab + positions + types && \result.rh <= 300000000000000;
    ensures \result.emb <= \result.rh + 2000000 && \result.fin <= 4000000;
    ensures \result.head <= 100000000000000; */
VRAM_DEF vram__outer vram__outer_parts(uint64_t h, uint64_t vocab, uint64_t positions,
                                       uint64_t types, uint32_t flags, int layer_norm,
                                       int enc_dec) {
    const uint64_t norm = layer_norm ? 2u * h : h;
    vram__outer o;
    /* embedding rows <= 3 * 10^8 of width <= 10^6; the head 10^8 x 10^6 */
    o.rows = vocab + positions + types;
    /*@ ghost vram__lemma_mul_le(o.rows, 3 * VRAM_ARCH_MAX_VOCAB, h, VRAM_ARCH_MAX_WIDTH);
              vram__lemma_mul_le(vocab, VRAM_ARCH_MAX_VOCAB, h, VRAM_ARCH_MAX_WIDTH); */
    o.rh = o.rows * h;
    o.emb = o.rh + ((flags & VRAM_ARCH_EMB_NORM) ? norm : 0u);
    o.fin = (flags & VRAM_ARCH_FINAL_NORM) ? (enc_dec ? 2u * norm : norm) : 0u;
    o.head = (flags & (VRAM_ARCH_TIED | VRAM_ARCH_NO_HEAD)) ? 0u : vocab * h;
    return o;
}

/* The rest: embeddings (and their norm), final norms, the head, extra parameters, and the
 * total of all parts (c.blocks from vram__arch_blocks); c with those fields filled. The
 * arch's few numbers it needs come by value, each with its bound from vram_arch_ok (short
 * functions for the prover: their goals then carry these bounds, not the whole predicate). */
/*@ requires h <= VRAM_ARCH_MAX_WIDTH && vocab <= VRAM_ARCH_MAX_VOCAB;
    requires positions <= VRAM_ARCH_MAX_VOCAB && types <= VRAM_ARCH_MAX_VOCAB;
    requires extra <= VRAM_ARCH_MAX_EXTRA && c.blocks <= 240000000000000000;
    assigns \nothing; */
VRAM_DEF vram_param_count vram__arch_outer(vram_param_count c, uint64_t h, uint64_t vocab,
                                           uint64_t positions, uint64_t types, uint64_t extra,
                                           uint32_t flags, int layer_norm, int enc_dec) {
    const vram__outer o = vram__outer_parts(h, vocab, positions, types, flags, layer_norm,
                                            enc_dec);
    c.embedding = o.emb;
    c.final_norms = o.fin;
    c.head = o.head;
    c.outer_params = o.rh + o.head;
    c.outer_rows = o.rows + (o.head != 0 ? vocab : 0u);
    c.outer_matrices = (vocab != 0) + (positions != 0) + (types != 0) + (o.head != 0);
    c.extra = extra;
    c.total = o.emb + c.blocks + o.fin + o.head + extra;
    return c;
}

/* vram_arch_params' count, for an arch that passed vram_arch_check, by value (the prover
 * then reasons about the arch's numbers, not about a struct read from memory: through the
 * pointer, z3 gave up on these goals). ok 0: the blocks pass VRAM_ARCH_MAX_BLOCK_PARAMS. */
typedef struct vram__arch_count {
    int ok;
    vram_param_count pc;
} vram__arch_count;

/*@ requires vram_arch_ok(x);
    assigns \nothing; */
VRAM_DEF vram__arch_count vram__arch_params_of(vram_arch x) {
    vram__arch_count out;
    vram__widths wd = vram__arch_widths(x);
    vram_param_count c;
    vram__acc ov = {0};
    out.ok = 0;
    if (x.experts == 0 && x.kv_lora_rank == 0 && x.mixer_layers == 0 &&
        (x.flags & (VRAM_ARCH_NO_MLP | VRAM_ARCH_MIXER_ALSO)) == 0) {
        c = vram__arch_blocks(x, wd.q, wd.kv);
    } else {
        c = vram__arch_moe_blocks(x, wd.q, wd.kv, &ov);
        if (ov.overflow || c.blocks > VRAM_ARCH_MAX_BLOCK_PARAMS) {
            out.pc = c; /* ok 0: the counts are not used */
            return out;
        }
    }
    out.pc = vram__arch_outer(c, x.hidden, x.vocab, x.positions, x.type_vocab, x.extra_params,
                              x.flags, x.norm == VRAM_NORM_LAYER,
                              x.family == VRAM_FAMILY_ENCODER_DECODER);
    /* c.active counted the blocks; everything outside them is used by every token */
    out.pc.active = c.active <= out.pc.blocks && out.pc.blocks <= out.pc.total
                        ? out.pc.total - (out.pc.blocks - c.active)
                        : out.pc.total;
    out.ok = 1;
    return out;
}

/* Parameters of an architecture, part by part: the weights a checkpoint of it holds.
 * With experts or latent attention (vram_arch's layout) the blocks follow
 * vram__arch_moe_blocks, out->active is what one token goes through and out->expert_* the
 * routed experts; VRAM_E_INVALID as well when such blocks pass VRAM_ARCH_MAX_BLOCK_PARAMS.
 * Blocks: attention (q, k, v, o; grouped-query k/v), MLP (2 or 3 matrices), two norms (one
 * with PARALLEL; one more in a decoder block with cross-attention, which adds a second
 * attention). Embeddings: vocab + positions + type_vocab rows of width hidden (vocab 0: a
 * vision tower's patches), plus a norm with EMB_NORM. One final norm per stack with FINAL_NORM; a vocab x hidden head unless TIED or
 * NO_HEAD; extra_params as given. out->total is the sum of the parts; VRAM_E_INVALID when
 * vram_arch_check fails. Never overflows: the limits of vram_arch_check bound every
 * product. */
/*@ requires \valid_read(a) && \valid(out) && \separated(a, out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> vram_arch_ok(\old(*a)); */
VRAM_DEF VRAM_NODISCARD vram_status vram_arch_params(const vram_arch *a, vram_param_count *out) {
    vram__arch_count r;
    if (vram_arch_check(a) != VRAM_OK) return VRAM_E_INVALID;
    r = vram__arch_params_of(*a);
    if (!r.ok) return VRAM_E_INVALID;
    *out = r.pc;
    return VRAM_OK;
}

/* What an architecture keeps while it generates, in numbers (the bytes are the estimate's:
 * times the compute format's size and the batch): attn_blocks blocks keep keys and values,
 * per_token numbers a token each (2 x kv_heads x head_dim; latent attention: kv_lora_rank +
 * rope_dim); the recurrent mixers keep `state` numbers a sequence whatever its length
 * (mixer_layers x (mix_state + (mix_kernel - 1) x mix_conv): the fewest, as vLLM keeps
 * them). Runtimes differ in how: `recurrent` is the state proper (mixer_layers x mix_state),
 * which transformers and llama.cpp keep in fp32; `conv` the convolution's numbers a tap
 * (mixer_layers x mix_conv), of which transformers keeps the whole kernel (`taps`
 * = mix_kernel) and vLLM and llama.cpp one tap less. An encoder keeps nothing; an
 * encoder-decoder's decoder blocks keep keys and values (its cross-attention's over the
 * source as well: the estimate adds the source's tokens). A decoder's `extra` numbers a
 * token (vram_arch's kv_extra) come on top, every token of the sequence. */
typedef struct vram_cache_shape {
    uint64_t attn_blocks; /* blocks with self-attention that keep keys and values */
    uint64_t per_token;   /* numbers one token keeps in one such block */
    uint64_t state;       /* recurrent-state numbers of one sequence, all blocks together */
    uint64_t recurrent;   /* of which the state proper (the rest: the convolution's taps) */
    uint64_t conv;        /* the convolution's numbers a tap, all blocks together */
    uint64_t taps;        /* the convolution's kernel (0: none) */
    uint64_t extra;       /* numbers a token keeps beside them, all blocks (vram_arch's
                             kv_extra: an indexer's keys) */
} vram_cache_shape;

/* vram_arch_cache's count, by value and for any arch: checked, a product or sum past 2^64
 * saturates at UINT64_MAX (so the estimate that multiplies it further reports overflow). */
/*@ assigns \nothing; */
VRAM_DEF vram_cache_shape vram__arch_cache_of(vram_arch a) {
    vram_cache_shape r = {0, 0, 0, 0, 0, 0, 0};
    vram__acc ov = {0};
    const uint64_t hd = a.head_dim != 0 ? a.head_dim : (a.heads != 0 ? a.hidden / a.heads : 0u);
    const uint64_t kvh = a.kv_heads != 0 ? a.kv_heads : a.heads;
    const uint64_t taps = a.mix_kernel != 0 ? a.mix_kernel - 1u : 0u;
    uint64_t mix_n = a.mixer_layers;
    if (a.family == VRAM_FAMILY_ENCODER_DECODER) {
        r.attn_blocks = a.decoder_layers;
        mix_n = 0;
    } else if (a.family == VRAM_FAMILY_DECODER) {
        if (mix_n > a.layers) mix_n = a.layers;
        r.attn_blocks = (a.flags & VRAM_ARCH_MIXER_ALSO) ? a.layers : a.layers - mix_n;
    } else {
        return r; /* an encoder, or no arch: nothing kept */
    }
    r.per_token = a.kv_lora_rank != 0 ? vram__a(&ov, a.kv_lora_rank, a.rope_dim)
                                      : vram__m(&ov, 2u, vram__m(&ov, kvh, hd));
    r.state = vram__m(&ov, mix_n,
                           vram__a(&ov, a.mix_state, vram__m(&ov, taps, a.mix_conv)));
    r.recurrent = vram__m(&ov, mix_n, a.mix_state);
    r.conv = vram__m(&ov, mix_n, a.mix_conv);
    r.taps = mix_n != 0 ? a.mix_kernel : 0u;
    r.extra = a.family == VRAM_FAMILY_DECODER ? a.kv_extra : 0u;
    return r;
}

/* What an arch keeps while it generates (vram_cache_shape), for an arch that passes
 * vram_arch_check; VRAM_E_INVALID otherwise, *out untouched. */
/*@ requires \valid_read(a) && \valid(out) && \separated(a, out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID; */
VRAM_DEF VRAM_NODISCARD vram_status vram_arch_cache(const vram_arch *a, vram_cache_shape *out) {
    if (vram_arch_check(a) != VRAM_OK) return VRAM_E_INVALID;
    *out = vram__arch_cache_of(*a);
    return VRAM_OK;
}

#endif /* VRAMKIT_MODEL_H */
