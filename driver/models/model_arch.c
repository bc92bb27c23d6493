/* driver/models/model_arch.c — the architecture table (model_arch.h): one row per
 * architecture, the defaults of its transformers config class (the class named in each
 * comment; a key the file leaves out takes this default), and its GGUF name as llama.cpp's
 * converter writes it. The config.json reader (model_config.c) and the GGUF reader
 * (model_gguf.c) both read their architectures from here; every row's count is checked
 * against transformers' own classes by test/models/ (truth.tsv, arch_truth.py). */
#include "model_arch.h"

#include <string.h>

#define DEC VRAM_FAMILY_DECODER
#define ENC VRAM_FAMILY_ENCODER
#define GATED VRAM_MLP_GATED
#define PLAIN VRAM_MLP_PLAIN
#define RMS VRAM_NORM_RMS
#define LN VRAM_NORM_LAYER
#define FIN VRAM_ARCH_FINAL_NORM

/* A decoder of the Llama pattern: gated MLP, RMS norm, a final norm. */
#define ROW(mlp_, norm_, flags_) \
    .read = VRAM__READ_DECODER, .family = DEC, .mlp = mlp_, .norm = norm_, .flags = flags_
#define LLAMA_LIKE ROW(GATED, RMS, FIN)

static const vram__arch_row rows[] = {
    /* ---- dense decoders of the Llama pattern ---- */
    {.type = "llama", .gguf = "llama", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32,
     .inter = 11008, .vocab = 32000, .max_pos = 2048}, /* LlamaConfig */
    {.type = "mistral", .gguf = "mistral", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32,
     .kv = 8, .inter = 14336, .vocab = 32000, .max_pos = 131072, .swa = VRAM__SWA_ALL,
     .window = 4096}, /* MistralConfig */
    {.type = "qwen2", .gguf = "qwen2", ROW(GATED, RMS, FIN | VRAM_ARCH_QKV_BIAS), .layers = 32,
     .hidden = 4096, .heads = 32, .kv = 32, .inter = 22016, .vocab = 151936, .max_pos = 32768,
     .swa = VRAM__SWA_QWEN, .window = 4096}, /* Qwen2Config: q, k, v always biased */
    {.type = "qwen3", .gguf = "qwen3", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32,
     .kv = 32, .head_dim = 128, .inter = 22016, .vocab = 151936, .max_pos = 32768,
     .has = VRAM__HAS_QK_NORM, .swa = VRAM__SWA_QWEN, .window = 4096}, /* Qwen3Config */
    {.type = "qwen2_vl_text", ROW(GATED, RMS, FIN | VRAM_ARCH_QKV_BIAS), .layers = 80,
     .hidden = 8192, .heads = 64, .kv = 8, .inter = 29568, .vocab = 152064, .max_pos = 32768},
    /* Qwen2VLTextConfig, Qwen2_5_VLTextConfig: the language model of qwen2_vl, qwen2_5_vl */
    {.type = "qwen2_5_vl_text", ROW(GATED, RMS, FIN | VRAM_ARCH_QKV_BIAS), .layers = 80,
     .hidden = 8192, .heads = 64, .kv = 8, .inter = 29568, .vocab = 152064, .max_pos = 32768},
    {.type = "qwen3_vl_text", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32, .kv = 32,
     .head_dim = 128, .inter = 22016, .vocab = 151936, .max_pos = 128000,
     .has = VRAM__HAS_QK_NORM}, /* Qwen3VLTextConfig: the language model of qwen3_vl */
    {.type = "gemma", .gguf = "gemma", LLAMA_LIKE, .layers = 28, .hidden = 3072, .heads = 16,
     .kv = 16, .head_dim = 256, .inter = 24576, .vocab = 256000, .max_pos = 8192,
     .tie = 1}, /* GemmaConfig */
    {.type = "gemma2", .gguf = "gemma2", LLAMA_LIKE, .layers = 26, .hidden = 2304, .heads = 8,
     .kv = 4, .head_dim = 256, .inter = 9216, .vocab = 256000, .max_pos = 8192, .tie = 1,
     .has = VRAM__HAS_POST_NORMS, .ops = VRAM_OPS_SOFTCAP, .swa = VRAM__SWA_EVERY,
     .window = 4096, .every = 2}, /* Gemma2Config: caps 50 and 30 */
    {.type = "gemma3_text", .gguf = "gemma3", LLAMA_LIKE, .layers = 26, .hidden = 2304,
     .heads = 8, .kv = 4, .head_dim = 256, .inter = 9216, .vocab = 262208, .max_pos = 131072,
     .tie = 1, .has = VRAM__HAS_POST_NORMS | VRAM__HAS_QK_NORM, .swa = VRAM__SWA_PATTERN,
     .window = 4096, .every = 6}, /* Gemma3TextConfig */
    {.type = "phi3", .gguf = "phi3", LLAMA_LIKE, .layers = 32, .hidden = 3072, .heads = 32,
     .inter = 8192, .vocab = 32064, .max_pos = 4096,
     .ops = VRAM_OPS_FUSED_PROJ,
     .gguf_kind = VRAM__GGUF_ROPE_FACTORS}, /* Phi3Config: qkv_proj; gate_up_proj = gate + up */
    {.type = "apertus", .gguf = "apertus", ROW(PLAIN, RMS, FIN), .layers = 32,
     .hidden = 4096, .heads = 32, .inter = 14336, .vocab = 131072, .max_pos = 65536,
     .has = VRAM__HAS_QK_NORM | VRAM__HAS_XIELU}, /* ApertusConfig: xIELU up/down MLP */
    {.type = "cohere2", .gguf = "cohere2", ROW(GATED, RMS, FIN | VRAM_ARCH_PARALLEL),
     .layers = 40, .hidden = 8192, .heads = 64, .inter = 22528, .vocab = 256000, .max_pos = 8192,
     .tie = 1, .swa = VRAM__SWA_PATTERN, .window = 4096,
     .every = 4}, /* Cohere2Config: one LayerNorm (weight only) feeds attention and MLP */
    /* ---- mixtures of experts ---- */
    {.type = "mixtral", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32, .kv = 8,
     .inter = 14336, .vocab = 32000, .max_pos = 131072, .moe = VRAM__MOE_ALL,
     .moe_flags = VRAM_MOE_ROUTE_FP32,
     .experts_key = "num_local_experts", .experts_alt = "num_experts", .experts = 8,
     .topk = 2}, /* Mixtral-8x7B */
    {.type = "qwen3_moe", .gguf = "qwen3moe", LLAMA_LIKE, .layers = 24, .hidden = 2048,
     .heads = 32, .kv = 4, .inter = 6144, .vocab = 151936, .max_pos = 32768,
     .has = VRAM__HAS_QK_NORM, .moe = VRAM__MOE_SPARSE_STEP, .experts_key = "num_experts",
     .experts_alt = "num_local_experts", .experts = 128, .topk = 8,
     .xinter_key = "moe_intermediate_size",
     .xinter = 768}, /* Qwen3MoeConfig: no head_dim attribute (hidden / heads unless the file
                        gives one, as Qwen3-30B-A3B's 128); num_experts is also
                        num_local_experts */
    {.type = "deepseek_v2", .gguf = "deepseek2", LLAMA_LIKE, .layers = 60, .hidden = 5120,
     .heads = 128, .kv = 128, .inter = 12288, .vocab = 102400, .max_pos = 163840,
     .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32, .experts_key = "n_routed_experts", .experts = 160, .topk = 6,
     .xinter_key = "moe_intermediate_size", .xinter = 1536, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_def = 2, .dense_def = 1, .mla = 1,
     .q_lora = 1536, .kv_lora = 512, .nope = 128, .rope = 64, .v = 128,
     .gguf_kind = VRAM__GGUF_MLA}, /* DeepSeek-V2 */
    {.type = "deepseek_v3", .gguf = "deepseek2", LLAMA_LIKE, .layers = 61, .hidden = 7168,
     .heads = 128, .kv = 128, .inter = 18432, .vocab = 129280, .max_pos = 163840,
     .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32, .experts_key = "n_routed_experts", .experts = 256, .topk = 8,
     .xinter_key = "moe_intermediate_size", .xinter = 2048, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_def = 1, .dense_def = 3, .mla = 1,
     .q_lora = 1536, .kv_lora = 512, .nope = 128, .rope = 64, .v = 128,
     .mtp_key = "num_nextn_predict_layers",
     .gguf_kind = VRAM__GGUF_MLA}, /* DeepSeek-V3 */
    {.type = "deepseek_v32", LLAMA_LIKE, .layers = 61, .hidden = 7168, .heads = 128, .kv = 128,
     .inter = 18432, .vocab = 129280, .max_pos = 163840, .has = VRAM__HAS_INDEXER,
     .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32, .experts_key = "n_routed_experts", .experts = 256, .topk = 8,
     .xinter_key = "moe_intermediate_size", .xinter = 2048, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_def = 1, .dense_def = 3, .mla = 1,
     .q_lora = 1536, .kv_lora = 512, .nope = 128, .rope = 64, .v = 128,
     .mtp_key = "num_nextn_predict_layers", .index_heads = 64,
     .index_dim = 128}, /* DeepseekV32Config: DeepSeek-V3 and the indexer; no GGUF architecture in
                   llama.cpp's gguf 0.19.0 */
    {.type = "gpt_oss", .gguf = "gpt-oss", LLAMA_LIKE, .layers = 24, .hidden = 2880, .heads = 64,
     .kv = 8, .head_dim = 64, .inter = 2880, .vocab = 201088, .max_pos = 131072, .attn_bias = 1,
     .has = VRAM__HAS_SINKS, .moe = VRAM__MOE_ALL, .experts_key = "num_local_experts",
     .experts_alt = "num_experts",
     .experts = 32, .topk = 4, .moe_flags = VRAM_MOE_ROUTER_BIAS | VRAM_MOE_EXPERT_BIAS |
     VRAM_MOE_GATE_CLAMP,
     .swa = VRAM__SWA_EVERY, .window = 128, .every = 2,
     .gguf_kind = VRAM__GGUF_OSS}, /* gpt-oss-20b */
    {.type = "qwen2_moe", .gguf = "qwen2moe", LLAMA_LIKE, .layers = 24, .hidden = 2048,
     .heads = 16, .kv = 16, .inter = 5632, .vocab = 151936, .max_pos = 32768,
     .has = VRAM__HAS_SHARED_GATE, .moe = VRAM__MOE_SPARSE_STEP, .experts_key = "num_experts",
     .experts = 60, .topk = 4, .xinter_key = "moe_intermediate_size", .xinter = 1408,
     .shared = VRAM__SHARED_KEY, .shared_key = "shared_expert_intermediate_size",
     .shared_def = 5632, .gguf_kind = VRAM__GGUF_SHEXP}, /* Qwen2MoeConfig (qkv_bias) */
    {.type = "olmoe", .gguf = "olmoe", LLAMA_LIKE, .layers = 16, .hidden = 2048, .heads = 16,
     .inter = 2048, .vocab = 50304, .max_pos = 4096, .has = VRAM__HAS_QK_NORM_FULL,
     .moe = VRAM__MOE_ALL, .experts_key = "num_experts", .experts_alt = "num_local_experts",
     .experts = 64, .topk = 8}, /* Olmoe */
    {.type = "phimoe", .gguf = "phimoe", ROW(GATED, LN, FIN), .layers = 32, .hidden = 4096,
     .heads = 32, .kv = 8, .inter = 6400, .vocab = 32064, .max_pos = 131072,
     .has = VRAM__HAS_HEAD_BIAS, .moe = VRAM__MOE_ALL, .experts_key = "num_local_experts",
     .experts = 16, .topk = 2}, /* PhimoeConfig: LayerNorms with biases, lm_head_bias */
    {.type = "granitemoe", .gguf = "granitemoe", LLAMA_LIKE, .layers = 32, .hidden = 4096,
     .heads = 32, .inter = 11008, .vocab = 32000, .max_pos = 2048, .moe = VRAM__MOE_ALL,
     .experts_key = "num_local_experts", .experts = 8, .topk = 2}, /* GraniteMoeConfig */
    {.type = "glm4_moe", .gguf = "glm4moe", LLAMA_LIKE, .layers = 46, .hidden = 4096,
     .heads = 96, .kv = 8, .inter = 10944, .vocab = 151552, .max_pos = 131072,
     .has = VRAM__HAS_QK_NORM_KEY | VRAM__HAS_QKV_BIAS_ONLY, .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32,
     .experts_key = "n_routed_experts", .experts = 128, .topk = 8,
     .xinter_key = "moe_intermediate_size", .xinter = 1408, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_def = 1, .dense_def = 1, .head_dim_floor = 1,
     .mtp_key = "num_nextn_predict_layers"}, /* Glm4MoeConfig: no head_dim attribute (the
                                                published GLM-4.5 files give 128) */
    {.type = "glm4_moe_lite", LLAMA_LIKE, .layers = 47, .hidden = 2048, .heads = 20, .kv = 20,
     .inter = 10240, .vocab = 154880, .max_pos = 202752, .moe = VRAM__MOE_LAYER_TYPES,
     .moe_flags = VRAM_MOE_ROUTE_FP32,
     .experts_key = "n_routed_experts", .experts = 64, .topk = 4,
     .xinter_key = "moe_intermediate_size", .xinter = 1536, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_def = 1, .dense_def = 1, .mla = 1,
     .q_lora = 768, .kv_lora = 512, .nope = 192, .rope = 64, .v = 256,
     .mtp_key = "num_nextn_predict_layers"}, /* Glm4MoeLiteConfig (GLM-4.7-Flash): DeepSeek-V3's
                                                blocks, the first dense by mlp_layer_types; no
                                                GGUF architecture of its own in llama.cpp's
                                                gguf 0.19.0 */
    {.type = "glm_moe_dsa", LLAMA_LIKE, .layers = 78, .hidden = 6144,
     .heads = 64, .kv = 64, .inter = 12288, .vocab = 154880, .max_pos = 202752,
     .has = VRAM__HAS_INDEXER | VRAM__HAS_INDEXER_TYPES, .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32,
     .experts_key = "n_routed_experts", .experts = 256, .topk = 8,
     .xinter_key = "moe_intermediate_size", .xinter = 2048, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_def = 1, .dense_def = 3, .mla = 1,
     .q_lora = 2048, .kv_lora = 512, .nope = 192, .rope = 64, .v = 256, .index_heads = 32,
     .index_dim = 128,
     .mtp_key = "num_nextn_predict_layers"}, /* GlmMoeDsaConfig (GLM-5): DeepSeek-V3.2's blocks, the indexer where
                           indexer_types says "full"; llama.cpp's gguf 0.19.0 names it glm-dsa,
                           which vramkit does not read */
    {.type = "minimax_m2", .gguf = "minimax-m2", LLAMA_LIKE, .layers = 62, .hidden = 3072, .heads = 48, .kv = 8,
     .head_dim = 128, .inter = 1536, .vocab = 200064, .max_pos = 196608,
     .has = VRAM__HAS_QK_NORM_FULL, .moe = VRAM__MOE_ALL,
     .moe_flags = VRAM_MOE_ROUTE_FP32, .experts_key = "num_local_experts",
     .experts_alt = "num_experts", .experts = 256,
     .topk = 8}, /* MiniMaxM2Config (MiniMax-M2): q/k norms over q and kv, experts of
                    intermediate_size in every block */
    {.type = "minimax", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32, .kv = 8,
     .inter = 14336, .vocab = 32000, .max_pos = 131072, .head_dim_floor = 1,
     .moe = VRAM__MOE_ALL,
     .moe_flags = VRAM_MOE_ROUTE_FP32, .experts_key = "num_local_experts",
     .experts_alt = "num_experts",
     .experts = 8, .topk = 2, .mix = VRAM__MIX_LIGHTNING}, /* MiniMaxConfig (MiniMax-Text-01):
                                                             lightning attention in every
                                                             second block, experts in all; no
                                                             GGUF architecture in llama.cpp's
                                                             gguf 0.19.0 */
    {.type = "sarvam_moe", LLAMA_LIKE, .layers = 19, .hidden = 4096, .heads = 64, .kv = 4,
     .head_dim = 64, .inter = 8192, .vocab = 262144, .max_pos = 131072, .bias_alt = "use_qkv_bias",
     .has = VRAM__HAS_QK_NORM_KEY | VRAM__HAS_QKV_BIAS_ONLY, .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32,
     .experts_key = "n_routed_experts", .experts_alt = "num_experts", .experts = 128, .topk = 6,
     .xinter_key = "moe_intermediate_size", .xinter = 1024, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_alt = "num_shared_experts", .shared_def = 1,
     .dense_def = 1, .qk_norm_def = 1,
     .mtp_key = "num_nextn_predict_layers"}, /* SarvamMoEConfig (Sarvam-30B): GLM-4.5's blocks,
                                                q/k norms on by default; the original config's
                                                names (num_experts, num_shared_experts,
                                                use_qkv_bias) read too; no GGUF architecture in
                                                llama.cpp's gguf 0.19.0 */
    {.type = "sarvam_mla", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 64,
     .inter = 16384, .vocab = 262144, .max_pos = 4096, .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32,
     .experts_key = "n_routed_experts", .experts_alt = "num_experts", .experts = 128, .topk = 8,
     .xinter_key = "moe_intermediate_size", .xinter = 2048, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "n_shared_experts", .shared_alt = "num_shared_experts", .shared_def = 1,
     .dense_def = 1, .mla = 1, .kv_lora = 512, .nope = 128, .rope = 64, .v = 128,
     .mtp_key = "num_nextn_predict_layers"}, /* SarvamMLAConfig (Sarvam-105B): DeepSeek-V3's
                                                blocks, q projected directly (q_lora_rank null);
                                                no GGUF architecture in gguf 0.19.0 */
    {.type = "solar_open", LLAMA_LIKE, .layers = 48, .hidden = 4096, .heads = 64, .kv = 8,
     .head_dim = 128, .inter = 1280, .vocab = 196608, .max_pos = 131072,
     .has = VRAM__HAS_QKV_BIAS_ONLY, .moe = VRAM__MOE_ALL, .moe_flags = VRAM_MOE_ROUTE_FP32,
     .experts_key = "n_routed_experts", .experts_alt = "num_local_experts", .experts = 128,
     .topk = 8, .xinter_key = "moe_intermediate_size", .xinter = 1280,
     .shared = VRAM__SHARED_N_EXPERTS, .shared_key = "n_shared_experts",
     .shared_def = 1}, /* SolarOpenConfig (Solar Open): experts and a shared one in every block;
                          no GGUF architecture in gguf 0.19.0 */
    {.type = "granitemoeshared", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32,
     .inter = 11008, .vocab = 32000, .max_pos = 2048, .moe = VRAM__MOE_ALL,
     .experts_key = "num_local_experts", .experts = 8, .topk = 2, .shared = VRAM__SHARED_KEY,
     .shared_key = "shared_intermediate_size"}, /* GraniteMoeSharedConfig: GraniteMoE and a
                                                   shared MLP of shared_intermediate_size (0:
                                                   none); no GGUF architecture of its own in
                                                   gguf 0.19.0 */
    {.type = "hy_v3", LLAMA_LIKE, .layers = 80, .hidden = 4096, .heads = 64, .kv = 8,
     .head_dim = 128, .inter = 13312, .vocab = 120832, .max_pos = 131072,
     .has = VRAM__HAS_QK_NORM, .moe = VRAM__MOE_LAYER_TYPES,
     .moe_flags = VRAM_MOE_ROUTE_FP32, .experts_key = "num_experts",
     .experts_alt = "num_local_experts", .experts = 192, .topk = 8,
     .xinter_key = "moe_intermediate_size", .xinter = 1536, .shared = VRAM__SHARED_N_EXPERTS,
     .shared_key = "num_shared_experts", .shared_def = 1,
     .dense_def = 1}, /* HYV3Config (Hunyuan 3): q/k norms, the first block dense by
                         mlp_layer_types; no GGUF architecture in gguf 0.19.0 (its hunyuan-moe
                         is Hunyuan-A13B's) */
    {.type = "exaone_moe", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32, .kv = 32,
     .inter = 16384, .vocab = 102400, .max_pos = 2048, .bias_key = "-", .head_dim_floor = 1,
     .has = VRAM__HAS_QK_NORM, .moe = VRAM__MOE_FIRST_DENSE,
     .moe_flags = VRAM_MOE_ROUTE_FP32, .experts_key = "num_experts",
     .experts = 64, .topk = 8, .xinter_key = "moe_intermediate_size", .xinter = 1024,
     .shared = VRAM__SHARED_N_EXPERTS, .shared_key = "num_shared_experts", .shared_def = 1,
     .dense_def = 1, .swa = VRAM__SWA_PATTERN, .window = 4096,
     .every = 4}, /* ExaoneMoeConfig: q/k norms, no biases, three sliding blocks in four; its
                     GGUF architecture exaone-moe (gguf 0.19.0) is not read */
    {.type = "flex_olmo", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32, .inter = 11008,
     .vocab = 100352, .max_pos = 4096, .has = VRAM__HAS_QK_NORM_FULL, .moe = VRAM__MOE_ALL,
     .experts_key = "num_experts", .experts_alt = "num_local_experts", .experts = 7,
     .topk = 5}, /* FlexOlmoConfig: OLMo 2's blocks (q/k norms over q and kv, the two norms
                    after attention and MLP) with experts; no GGUF architecture of its own in
                    gguf 0.19.0 */
    {.type = "ernie4_5_moe", .gguf = "ernie4_5-moe", LLAMA_LIKE, .layers = 28, .hidden = 2560,
     .heads = 20, .kv = 4, .inter = 12288, .vocab = 103424, .max_pos = 131072, .tie = 1,
     .bias_key = "use_bias", .has = VRAM__HAS_SCORE_BIAS, .moe = VRAM__MOE_ERNIE,
     .experts_key = "moe_num_experts", .experts = 64, .topk = 6, .topk_key = "moe_k",
     .xinter_key = "moe_intermediate_size", .xinter = 1536, .shared = VRAM__SHARED_ERNIE,
     .shared_key = "moe_num_shared_experts", .shared_def = 2}, /* Ernie4_5_MoeConfig */
    {.type = "llama4_text", .gguf = "llama4", LLAMA_LIKE, .layers = 48, .hidden = 5120,
     .heads = 40, .kv = 8, .head_dim = 128, .inter = 16384, .vocab = 202048, .max_pos = 131072,
     .inter_key = "intermediate_size_mlp", .moe = VRAM__MOE_INTERLEAVE,
     .experts_key = "num_local_experts", .experts = 16, .topk = 1,
     .xinter_key = "intermediate_size", .xinter = 8192, .shared = VRAM__SHARED_ONE,
     .moe_flags = VRAM_MOE_EVERY_EXPERT, .swa = VRAM__SWA_CHUNKED, .window = 8192, .every = 4,
     .gguf_kind = VRAM__GGUF_SHEXP}, /* Llama4TextConfig: dense blocks of
                                        intermediate_size_mlp, experts and the shared one of
                                        intermediate_size */
    {.type = "qwen3_next", .gguf = "qwen3next", LLAMA_LIKE, .layers = 48, .hidden = 2048,
     .heads = 16, .kv = 2, .head_dim = 256, .inter = 5632, .vocab = 151936, .max_pos = 32768,
     .has = VRAM__HAS_QK_NORM | VRAM__HAS_GATED_Q | VRAM__HAS_SHARED_GATE,
     .moe = VRAM__MOE_SPARSE_STEP, .experts_key = "num_experts", .experts = 512, .topk = 10,
     .xinter_key = "moe_intermediate_size", .xinter = 512, .shared = VRAM__SHARED_KEY,
     .shared_key = "shared_expert_intermediate_size", .shared_def = 512,
     .mix = VRAM__MIX_DELTA}, /* Qwen3NextConfig */
    {.type = "qwen3_5_text", .gguf = "qwen35", LLAMA_LIKE, .layers = 32, .hidden = 4096,
     .heads = 16, .kv = 4, .head_dim = 256, .inter = 12288, .vocab = 248320, .max_pos = 32768,
     .has = VRAM__HAS_QK_NORM | VRAM__HAS_GATED_Q,
     .mix = VRAM__MIX_DELTA}, /* Qwen3_5TextConfig: Qwen3-Next's blocks with a dense MLP (its
                                 in_proj_qkv, _z, _b, _a are in_proj_qkvz and _ba split) */
    {.type = "qwen3_5_moe_text", .gguf = "qwen35moe", LLAMA_LIKE, .layers = 40, .hidden = 2048,
     .heads = 16, .kv = 2, .head_dim = 256, .inter = 512, .vocab = 248320, .max_pos = 32768,
     .has = VRAM__HAS_QK_NORM | VRAM__HAS_GATED_Q | VRAM__HAS_SHARED_GATE,
     .moe = VRAM__MOE_ALL, .experts_key = "num_experts", .experts_alt = "num_local_experts",
     .experts = 256, .topk = 8, .xinter_key = "moe_intermediate_size", .xinter = 512,
     .shared = VRAM__SHARED_KEY, .shared_key = "shared_expert_intermediate_size",
     .shared_def = 512, .mix = VRAM__MIX_DELTA}, /* Qwen3_5MoeTextConfig: experts in every
                                                    block */
    /* ---- state-space models and hybrids ---- */
    {.type = "mamba", .gguf = "mamba", ROW(GATED, RMS, FIN | VRAM_ARCH_NO_MLP),
     .layers = 32, .hidden = 768, .vocab = 50280, .tie = 1,
     .mix = VRAM__MIX_MAMBA}, /* MambaConfig */
    {.type = "falcon_mamba", ROW(GATED, RMS, FIN | VRAM_ARCH_NO_MLP),
     .layers = 32, .hidden = 768, .vocab = 50280, .tie = 1,
     .mix = VRAM__MIX_MAMBA}, /* FalconMambaConfig: its dt/B/C norms have no weights */
    {.type = "mamba2", .gguf = "mamba2", ROW(GATED, RMS, FIN | VRAM_ARCH_NO_MLP),
     .layers = 64, .hidden = 4096, .vocab = 32768, .mix = VRAM__MIX_MAMBA2}, /* Mamba2Config */
    {.type = "jamba", .gguf = "jamba", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32,
     .kv = 8, .inter = 14336, .vocab = 65536, .max_pos = 262144, .moe = VRAM__MOE_PERIOD,
     .experts_key = "num_experts", .experts_alt = "num_local_experts", .experts = 16,
     .topk = 2, .mix = VRAM__MIX_JAMBA}, /* JambaConfig */
    {.type = "granitemoehybrid", .gguf = "granitehybrid", LLAMA_LIKE, .layers = 32,
     .hidden = 4096, .heads = 32, .inter = 11008, .vocab = 32000, .max_pos = 2048,
     .moe = VRAM__MOE_ALL, .experts_key = "num_local_experts", .experts = 8, .topk = 2,
     .shared = VRAM__SHARED_KEY, .shared_key = "shared_intermediate_size", .shared_def = 1024,
     .mix = VRAM__MIX_GRANITE}, /* GraniteMoeHybridConfig: every block's shared_mlp is the
                                   shared expert (the dense MLP without experts) */
    {.type = "falcon_h1", .gguf = "falcon-h1", ROW(GATED, RMS, FIN | VRAM_ARCH_MIXER_ALSO),
     .layers = 32, .hidden = 4096, .heads = 32, .kv = 8, .inter = 14336, .vocab = 128000,
     .max_pos = 8192, .mix = VRAM__MIX_FALCON_H1}, /* FalconH1Config */
    {.type = "bamba", LLAMA_LIKE, .layers = 32, .hidden = 4096, .heads = 32, .kv = 8,
     .inter = 14336, .vocab = 128000, .max_pos = 262144,
     .mix = VRAM__MIX_BAMBA}, /* BambaConfig: Granite-4.0-H's Mamba-2 mixer (gated norm) in
                                 the blocks attn_layer_indices leaves out (null: every block),
                                 a dense MLP; no GGUF architecture of its own in gguf 0.19.0 */
    {.type = "olmo_hybrid", LLAMA_LIKE, .layers = 32, .hidden = 3840, .heads = 30, .kv = 30,
     .inter = 11008, .vocab = 100352, .max_pos = 65536, .has = VRAM__HAS_QK_NORM_FULL,
     .mix = VRAM__MIX_DELTA}, /* OlmoHybridConfig: Qwen3-Next's gated delta rule (its q, k,
                                 v, g, a, b projections the same numbers as in_proj_qkvz and
                                 _ba) where layer_types says "linear_attention", OLMo 2's
                                 attention (q/k norms over q and kv) in the others, a dense
                                 MLP; no GGUF architecture in gguf 0.19.0 */
    {.type = "lfm2", .gguf = "lfm2", LLAMA_LIKE, .layers = 32, .hidden = 2560, .heads = 32,
     .kv = 8, .inter = 12288, .vocab = 65536, .max_pos = 128000, .tie = 1,
     .has = VRAM__HAS_QK_NORM, .mix = VRAM__MIX_CONV}, /* Lfm2Config */
    /* ---- other decoders (their own readers in model_config.c) ---- */
    {.type = "gpt2", .gguf = "gpt2", .read = VRAM__READ_GPT2, .family = DEC, .mlp = PLAIN,
     .norm = LN, .flags = FIN},
    {.type = "gpt_neox", .gguf = "gptneox", .read = VRAM__READ_NEOX, .family = DEC, .mlp = PLAIN,
     .norm = LN, .flags = FIN},
    {.type = "phi", .gguf = "phi2", .read = VRAM__READ_PHI, .family = DEC, .mlp = PLAIN,
     .norm = LN, .flags = FIN},
    {.type = "falcon", .gguf = "falcon", .read = VRAM__READ_FALCON, .family = DEC, .mlp = PLAIN,
     .norm = LN, .flags = FIN},
    {.type = "gptj", .read = VRAM__READ_GPTJ},
    {.type = "gpt_bigcode", .read = VRAM__READ_BIGCODE},
    /* the classic decoders (GPT-2's era): learned, sinusoidal or ALiBi positions, LayerNorms,
       biases; their readers in model_config.c say which */
    {.type = "codegen", .read = VRAM__READ_GPTJ}, /* CodeGenConfig: GPT-J's keys, defaults and
                                                     block (qkv_proj fused, no attention
                                                     biases, a head with a bias); no GGUF
                                                     architecture in gguf 0.19.0 */
    {.type = "opt", .read = VRAM__READ_OPT},      /* no GGUF architecture in gguf 0.19.0 */
    {.type = "bloom", .gguf = "bloom", .read = VRAM__READ_BLOOM, .family = DEC, .mlp = PLAIN,
     .norm = LN, .flags = FIN | VRAM_ARCH_EMB_NORM}, /* ALiBi: no position table */
    {.type = "gpt_neo", .read = VRAM__READ_GPT_NEO}, /* none in gguf 0.19.0 */
    {.type = "mpt", .gguf = "mpt", .read = VRAM__READ_MPT, .family = DEC, .mlp = PLAIN,
     .norm = RMS, .flags = FIN}, /* LayerNorms without a bias: a weight of hidden each, as an
                                    RMS norm's; ALiBi */
    {.type = "xglm", .read = VRAM__READ_XGLM},             /* none in gguf 0.19.0 */
    {.type = "gpt_neox_japanese", .read = VRAM__READ_NEOX_JP}, /* none in gguf 0.19.0 */
    {.type = "openai-gpt", .read = VRAM__READ_OPENAI_GPT}, /* none in gguf 0.19.0 */
    {.type = "ctrl", .read = VRAM__READ_CTRL},             /* none in gguf 0.19.0 */
    {.type = "whisper", .read = VRAM__READ_WHISPER},
    /* ---- vision towers, two-tower and vision-language models ---- */
    {.type = "vit", .read = VRAM__READ_VIT},
    {.type = "clip_vision_model", .read = VRAM__READ_CLIP_VISION},
    {.type = "siglip_vision_model", .read = VRAM__READ_SIGLIP_VISION},
    {.type = "clip", .read = VRAM__READ_CLIP},
    {.type = "siglip", .read = VRAM__READ_SIGLIP},
    {.type = "llava", .read = VRAM__READ_LLAVA},
    {.type = "qwen2_vl", .read = VRAM__READ_QWEN2_VL},
    {.type = "qwen2_5_vl", .read = VRAM__READ_QWEN2_5_VL},
    {.type = "qwen3_vl", .read = VRAM__READ_QWEN3_VL},
    {.type = "qwen3_5", .read = VRAM__READ_QWEN3_VL},     /* Qwen3_5Config: Qwen3-VL's tower */
    {.type = "qwen3_5_moe", .read = VRAM__READ_QWEN3_VL}, /* Qwen3_5MoeConfig */
    {.type = "gemma3", .read = VRAM__READ_GEMMA3},
    {.type = "mistral3", .gguf = "mistral3", .read = VRAM__READ_MISTRAL3, .family = DEC,
     .mlp = GATED, .norm = RMS, .flags = FIN},
    {.type = "llama4", .read = VRAM__READ_LLAMA4},
    {.type = "qwen2_audio", .read = VRAM__READ_QWEN2_AUDIO},
    /* ---- encoders ---- */
    {.type = "bert", .gguf = "bert", .read = VRAM__READ_BERT, .family = ENC, .mlp = PLAIN,
     .norm = LN, .flags = VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD},
    {.type = "roberta", .read = VRAM__READ_ROBERTA},
    {.type = "xlm-roberta", .read = VRAM__READ_XLM_ROBERTA},
    {.type = "distilbert", .read = VRAM__READ_DISTILBERT},
    {.type = "modernbert", .read = VRAM__READ_MODERNBERT},
    /* ---- encoder-decoders ---- */
    {.type = "m2m_100", .read = VRAM__READ_M2M},
    {.type = "nllb", .read = VRAM__READ_M2M},
    {.type = "bart", .read = VRAM__READ_BART},
    {.type = "t5", .read = VRAM__READ_T5},
    {.type = "mt5", .read = VRAM__READ_MT5},
    /* ---- mixtures of experts vramkit does not model ---- */
    {.type = "dbrx", .read = VRAM__READ_UNMODELLED},
    {.type = "nllb-moe", .read = VRAM__READ_UNMODELLED},
    {.type = "switch_transformers", .read = VRAM__READ_UNMODELLED},
    /* ---- GGUF architectures with no config.json row of their own ---- */
    {.gguf = "internlm2", .read = VRAM__READ_GGUF_ONLY, .family = DEC, .mlp = GATED, .norm = RMS,
     .flags = FIN},
    {.gguf = "granite", .read = VRAM__READ_GGUF_ONLY, .family = DEC, .mlp = GATED, .norm = RMS,
     .flags = FIN},
    {.gguf = "olmo2", .read = VRAM__READ_GGUF_ONLY, .family = DEC, .mlp = GATED, .norm = RMS,
     .flags = FIN, .has = VRAM__HAS_QK_NORM_FULL}, /* OLMo 2: q_norm and k_norm over q and kv */
    {.gguf = "stablelm", .read = VRAM__READ_GGUF_ONLY, .family = DEC, .mlp = GATED, .norm = LN,
     .flags = FIN},
    {.gguf = "starcoder2", .read = VRAM__READ_GGUF_ONLY, .family = DEC, .mlp = PLAIN, .norm = LN,
     .flags = FIN},
    {.gguf = "ernie4_5", .read = VRAM__READ_GGUF_ONLY, .family = DEC, .mlp = GATED, .norm = RMS,
     .flags = FIN}, /* ERNIE-4.5 dense (0.3B): the Llama pattern */
    {.gguf = "nomic-bert", .read = VRAM__READ_GGUF_ONLY, .family = ENC, .mlp = GATED, .norm = LN,
     .flags = VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD},
};

const vram__arch_row *vram__arch_by_type(const char *type) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].type != NULL && strcmp(rows[i].type, type) == 0) return &rows[i];
    return NULL;
}

const vram__arch_row *vram__arch_by_gguf(const char *arch) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].gguf != NULL && strcmp(rows[i].gguf, arch) == 0) return &rows[i];
    return NULL;
}

static uint64_t ck_mul(uint64_t a, uint64_t b) {
    uint64_t r;
    return vram__mul_u64(a, b, &r) == VRAM_OK ? r : UINT64_MAX;
}

static uint64_t ck_add(uint64_t a, uint64_t b) {
    uint64_t r;
    return vram__add_u64(a, b, &r) == VRAM_OK ? r : UINT64_MAX;
}

uint64_t vram__arch_attn_blocks(const vram_arch *a) {
    vram_cache_shape cs = vram__arch_cache_of(*a);
    return cs.attn_blocks;
}

uint64_t vram__arch_extra(const vram__arch_row *r, const vram_arch *a, int head_bias,
                          int qk_norm) {
    const uint64_t h = a->hidden, heads = a->heads != 0 ? a->heads : 1u;
    const uint64_t hd = a->head_dim != 0 ? a->head_dim : h / heads;
    const uint64_t kvh = a->kv_heads != 0 ? a->kv_heads : heads;
    const uint64_t attn = vram__arch_attn_blocks(a);
    const uint64_t moe_n = a->experts != 0 ? a->layers - a->dense_layers : 0u;
    uint64_t x = 0;
    if ((r->has & VRAM__HAS_QK_NORM) || ((r->has & VRAM__HAS_QK_NORM_KEY) && qk_norm))
        x = ck_add(x, ck_mul(attn, 2u * hd));
    if (r->has & VRAM__HAS_QK_NORM_FULL) x = ck_add(x, ck_mul(attn, ck_mul(heads + kvh, hd)));
    if (r->has & VRAM__HAS_POST_NORMS) x = ck_add(x, ck_mul(a->layers, 2u * h));
    if (r->has & VRAM__HAS_XIELU) x = ck_add(x, ck_mul(a->layers, 2u));
    if (r->has & VRAM__HAS_SINKS) x = ck_add(x, ck_mul(attn, a->heads));
    if (r->has & VRAM__HAS_SHARED_GATE) x = ck_add(x, ck_mul(moe_n, h));
    if (r->has & VRAM__HAS_SCORE_BIAS) x = ck_add(x, ck_mul(moe_n, a->experts));
    if (r->has & VRAM__HAS_GATED_Q) x = ck_add(x, ck_mul(attn, ck_mul(ck_mul(heads, hd), h)));
    if ((r->has & VRAM__HAS_HEAD_BIAS) && head_bias) x = ck_add(x, a->vocab);
    return x;
}
