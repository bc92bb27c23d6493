/* driver/models/model_arch.h — the one description of the architectures vramkit knows: a row
 * per architecture, read by the config.json reader (by model_type) and by the GGUF reader (by
 * general.architecture). A row says, as data, what the transformers config class (and
 * llama.cpp's converter) would build: the defaults of the keys, the block's pattern (MLP and
 * norm kinds, biases, a tied head), the parameters beyond model.h's pattern (q/k norms,
 * post-norms, xIELU's, attention sinks, gates), which blocks route to experts and with which
 * keys, which blocks attend through a sliding window, and which token mixer replaces
 * attention in which blocks. Adding an architecture is adding a row (and its test in
 * test/models/configs/). Families whose config reads differently (encoders with task heads,
 * encoder-decoders, vision towers, vision-language models) name their reader in the row. */
#ifndef VRAMKIT_MODEL_ARCH_H
#define VRAMKIT_MODEL_ARCH_H

#include <stdint.h>

#include <vramkit/model.h>

/* How config.json is read (model_config.c): the row's keys and defaults, or a family's own
 * reader. */
typedef enum {
    VRAM__READ_DECODER = 0, /* the row: common keys, experts, window, mixer */
    VRAM__READ_GPT2,
    VRAM__READ_NEOX,
    VRAM__READ_PHI,
    VRAM__READ_FALCON,
    VRAM__READ_GPTJ,
    VRAM__READ_BIGCODE,
    VRAM__READ_OPT,
    VRAM__READ_BLOOM,
    VRAM__READ_GPT_NEO,
    VRAM__READ_MPT,
    VRAM__READ_XGLM,
    VRAM__READ_NEOX_JP,
    VRAM__READ_OPENAI_GPT,
    VRAM__READ_CTRL,
    VRAM__READ_WHISPER,
    VRAM__READ_VIT,
    VRAM__READ_CLIP_VISION,
    VRAM__READ_SIGLIP_VISION,
    VRAM__READ_CLIP,
    VRAM__READ_SIGLIP,
    VRAM__READ_LLAVA,
    VRAM__READ_QWEN2_VL,
    VRAM__READ_QWEN2_5_VL,
    VRAM__READ_QWEN3_VL,
    VRAM__READ_GEMMA3,
    VRAM__READ_MISTRAL3,
    VRAM__READ_LLAMA4,
    VRAM__READ_QWEN2_AUDIO,
    VRAM__READ_BERT,
    VRAM__READ_ROBERTA,
    VRAM__READ_XLM_ROBERTA,
    VRAM__READ_DISTILBERT,
    VRAM__READ_MODERNBERT,
    VRAM__READ_M2M,
    VRAM__READ_BART,
    VRAM__READ_T5,
    VRAM__READ_MT5,
    VRAM__READ_UNMODELLED, /* a mixture of experts vramkit does not model: a note */
    VRAM__READ_GGUF_ONLY   /* a GGUF architecture without a config.json row */
} vram__read;

/* Parameters beyond model.h's pattern, per block (vram__arch_extra counts them). */
#define VRAM__HAS_QK_NORM 0x1u      /* q_norm, k_norm over head_dim in each attention block */
#define VRAM__HAS_QK_NORM_FULL 0x2u /* q_norm over heads x head_dim, k_norm over kv width */
#define VRAM__HAS_POST_NORMS 0x4u   /* two more norms a block (Gemma 2 and 3) */
#define VRAM__HAS_XIELU 0x8u        /* xIELU's two parameters a block (Apertus) */
#define VRAM__HAS_HEAD_BIAS 0x10u   /* the vocabulary head has a bias (phi, GPT-J; Phi-3.5-MoE
                                       with lm_head_bias) */
#define VRAM__HAS_SINKS 0x20u       /* one attention sink per head and block (gpt-oss) */
#define VRAM__HAS_SHARED_GATE 0x40u /* the shared expert's gate hidden -> 1, each MoE block */
#define VRAM__HAS_SCORE_BIAS 0x80u  /* a routing-score bias of `experts`, each MoE block, kept
                                       as a parameter (ERNIE-4.5) */
#define VRAM__HAS_GATED_Q 0x100u    /* the q projection also makes the output gate: heads x
                                       head_dim more rows (Qwen3-Next) */
#define VRAM__HAS_QK_NORM_KEY 0x200u /* q/k norms over head_dim when use_qk_norm (GLM-4.5) */
#define VRAM__HAS_QKV_BIAS_ONLY 0x400u /* the attention bias key biases q, k and v, not o
                                          (GLM-4.5) */
#define VRAM__HAS_INDEXER 0x800u    /* DeepSeek-V3.2's lightning indexer in each attention
                                       block: wq_b (q_lora_rank -> index_n_heads x
                                       index_head_dim), wk (hidden -> index_head_dim), its
                                       LayerNorm, weights_proj (hidden -> index_n_heads) */
#define VRAM__HAS_INDEXER_TYPES 0x1000u /* with VRAM__HAS_INDEXER: only the blocks whose
                                           indexer_types entry is "full" have one (GLM-5; the
                                           others reuse its top-k) */

/* Which blocks route to experts (the rest have a dense MLP). */
typedef enum {
    VRAM__MOE_NONE = 0,
    VRAM__MOE_ALL,         /* every block */
    VRAM__MOE_FIRST_DENSE, /* all but the first first_k_dense_replace (DeepSeek, GLM-4.5) */
    VRAM__MOE_SPARSE_STEP, /* block i unless listed in mlp_only_layers, when (i + 1) %
                              decoder_sparse_step == 0 (Qwen2-/Qwen3-MoE, Qwen3-Next) */
    VRAM__MOE_INTERLEAVE,  /* moe_layers, else i = step - 1, 2 step - 1, ... with step
                              interleave_moe_layer_step (Llama 4) */
    VRAM__MOE_PERIOD,      /* i % expert_layer_period == expert_layer_offset (Jamba) */
    VRAM__MOE_ERNIE,       /* (i + 1) % moe_layer_interval == 0, moe_layer_start_index <= i
                              <= moe_layer_end_index (ERNIE-4.5) */
    VRAM__MOE_LAYER_TYPES  /* mlp_layer_types' "sparse" blocks, else all but the first
                              dense_def (no key: Glm4MoeLiteConfig has no
                              first_k_dense_replace) */
} vram__moe;

/* The shared expert's width. */
typedef enum {
    VRAM__SHARED_NONE = 0,
    VRAM__SHARED_N_EXPERTS, /* n_shared_experts x the routed width (DeepSeek, GLM-4.5) */
    VRAM__SHARED_KEY,       /* its own key (shared_key): Qwen2-MoE, Qwen3-Next, Granite-4.0-H */
    VRAM__SHARED_ERNIE,     /* moe_num_shared_experts x moe_intermediate_size */
    VRAM__SHARED_ONE        /* one more expert of the routed width (Llama 4) */
} vram__shared;

/* The recurrent token mixer, and in which blocks. */
typedef enum {
    VRAM__MIX_NONE = 0,
    VRAM__MIX_MAMBA,     /* Mamba-1 in every block, no MLP (mamba, falcon_mamba) */
    VRAM__MIX_MAMBA2,    /* Mamba-2 in every block, no MLP (mamba2) */
    VRAM__MIX_JAMBA,     /* Mamba-1 with dt/B/C norms; attention where i % attn_layer_period
                            == attn_layer_offset (jamba) */
    VRAM__MIX_GRANITE,   /* Mamba-2 where layer_types says "mamba" (granitemoehybrid) */
    VRAM__MIX_BAMBA,     /* the same mixer in the blocks attn_layer_indices does not list
                            (bamba) */
    VRAM__MIX_FALCON_H1, /* Mamba-2 beside attention in every block (falcon_h1) */
    VRAM__MIX_CONV,      /* a gated short convolution where layer_types says "conv" (lfm2) */
    VRAM__MIX_DELTA,     /* the gated delta rule where layer_types says "linear_attention"
                            (qwen3_next) */
    VRAM__MIX_LIGHTNING  /* lightning (linear) attention where layer_types says
                            "linear_attention", by default every second block (minimax): qkv
                            hidden -> 3 heads x head_dim, an output gate hidden -> heads x
                            head_dim, a norm over it, out heads x head_dim -> hidden; it keeps
                            heads x head_dim x head_dim a sequence */
} vram__mix;

/* Which blocks attend through a sliding window (model_config.c cfg_swa). */
typedef enum {
    VRAM__SWA_NONE = 0,
    VRAM__SWA_EVERY,   /* all blocks but each `every`-th (gpt-oss 2, gemma2 2) */
    VRAM__SWA_PATTERN, /* the same with sliding_window_pattern (default `every`) */
    VRAM__SWA_ALL,     /* every block (mistral; sliding_window null: none) */
    VRAM__SWA_QWEN,    /* with use_sliding_window, from max_window_layers on */
    VRAM__SWA_CHUNKED  /* Llama 4's chunked attention: attention_chunk_size tokens (null:
                          none) in all blocks but each `every`-th (the NoPE blocks of
                          no_rope_layers, whose zeros say which) */
} vram__swa;

/* How a GGUF architecture's numbers beyond the common keys are read (model_gguf.c). */
typedef enum {
    VRAM__GGUF_PLAIN = 0, /* the common keys; experts when expert_count > 1 */
    VRAM__GGUF_MLA,       /* deepseek2: latent attention, shared experts, dense first blocks */
    VRAM__GGUF_OSS,       /* gpt-oss: attention sinks */
    VRAM__GGUF_SHEXP,     /* a shared expert of its own width (+ its gate when the file has
                             it): qwen2moe, llama4 */
    VRAM__GGUF_ROPE_FACTORS /* phi3: rope_factors_long/short tensors (every kind counts them,
                               and rope_freqs, as the file holds them) */
} vram__gguf_kind;

typedef struct vram__arch_row {
    const char *type; /* config.json model_type; NULL: a GGUF architecture only */
    const char *gguf; /* GGUF general.architecture; NULL: none */
    vram__read read;
    /* the config class's defaults (0: none) */
    uint64_t layers, hidden, heads, kv, head_dim, inter, vocab, max_pos;
    vram_family family;
    vram_mlp mlp;
    vram_norm norm;
    uint32_t flags;          /* VRAM_ARCH_* every such model has (FINAL_NORM, PARALLEL, ...) */
    int tie;                 /* tie_word_embeddings' default */
    int head_dim_floor;      /* no head_dim in the file: hidden_size // num_attention_heads,
                                rounded down, as the modelling code's getattr fallback builds
                                it (Glm4MoeConfig has no head_dim: 4096 / 96 -> 42) */
    const char *mtp_key;     /* the key counting the multi-token-prediction blocks a published
                                checkpoint holds beyond num_hidden_layers, which transformers
                                does not build (it ignores them on load) and the count leaves
                                out: a note says so (NULL: none) */
    int attn_bias;           /* the attention bias key's default: biases on q, k, v and o */
    int qk_norm_def;         /* VRAM__HAS_QK_NORM_KEY: use_qk_norm's default */
    const char *bias_key;    /* that key (NULL: "attention_bias"; "-": the class has none,
                                no biases whatever the file says) */
    const char *bias_alt;    /* its other name (attribute_map), read when it is absent */
    const char *inter_key;   /* the dense MLP's width (NULL: "intermediate_size") */
    uint32_t has;            /* VRAM__HAS_* */
    uint32_t ops;            /* VRAM_OPS_* every such model computes with (phi3's fused
                                projections); VRAM_OPS_SOFTCAP: soft-capped unless the config
                                sets both caps to null (gemma2's defaults) */
    /* mixture of experts */
    vram__moe moe;
    const char *experts_key; /* the expert count's key */
    const char *experts_alt; /* the same count's other name (the config class's
                                attribute_map), read when experts_key is absent */
    uint64_t experts, topk;
    const char *topk_key;    /* NULL: "num_experts_per_tok" */
    const char *xinter_key;  /* the routed expert's width; NULL: the dense width */
    uint64_t xinter;
    vram__shared shared;
    const char *shared_key;
    const char *shared_alt;  /* its other name (attribute_map), read when it is absent */
    uint64_t shared_def;     /* the shared width's (or count's) default */
    uint64_t dense_def;      /* first_k_dense_replace's default */
    int mla;                 /* DeepSeek's latent attention (its defaults below) */
    uint64_t q_lora, kv_lora, nope, rope, v;
    uint64_t index_heads, index_dim; /* VRAM__HAS_INDEXER: index_n_heads', index_head_dim's
                                        defaults */
    uint32_t moe_flags;      /* VRAM_MOE_* */
    /* sliding window */
    vram__swa swa;
    uint64_t window, every;
    /* token mixer */
    vram__mix mix;
    /* GGUF */
    vram__gguf_kind gguf_kind;
} vram__arch_row;

/* The row of a config.json model_type, or NULL. */
const vram__arch_row *vram__arch_by_type(const char *type);
/* The row of a GGUF general.architecture, or NULL. */
const vram__arch_row *vram__arch_by_gguf(const char *arch);

/* The parameters a row's VRAM__HAS_* add to an arch (its numbers filled): per attention
 * block, per block and per MoE block, all blocks together; what extra_params holds for them.
 * head_bias: the head's bias is there (VRAM__HAS_HEAD_BIAS and the key, for Phi-3.5-MoE);
 * qk_norm: use_qk_norm (VRAM__HAS_QK_NORM_KEY). Checked: UINT64_MAX when it does not fit. */
uint64_t vram__arch_extra(const vram__arch_row *r, const vram_arch *a, int head_bias,
                          int qk_norm);

/* Blocks with attention, and with experts, of an arch (vram_cache_shape's count; layers -
 * dense_layers). */
uint64_t vram__arch_attn_blocks(const vram_arch *a);

#endif /* VRAMKIT_MODEL_ARCH_H */
