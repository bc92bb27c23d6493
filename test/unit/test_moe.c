/* Unit tests of mixtures of experts (issue 16, part 1): the parameter counts of Mixtral,
 * Qwen3-MoE, DeepSeek-V2/V3 (latent attention, shared experts, dense first layers),
 * gpt-oss (MXFP4 experts), Qwen1.5-MoE (a shared expert of its own width, gated) and OLMoE
 * read from their public config.json, against counts derived by hand
 * from the reference implementation's classes; the routed experts in tensor names; the
 * estimate's active parameters, expert bytes and latent KV cache; and experts_cpu.
 *
 * How the reference counts were established: transformers and torch could not be installed
 * here (no network to the package index), so each count below is the sum of the parameter
 * shapes that the model's transformers classes create (modeling_mixtral.py,
 * modeling_qwen3_moe.py, modeling_deepseek_v2.py / modeling_deepseek_v3.py,
 * modeling_gpt_oss.py: every nn.Linear / nn.Parameter / RMSNorm weight in __init__, buffers
 * such as DeepSeek-V3's e_score_correction_bias and rotary inv_freq not counted), written out
 * shape by shape so that the arithmetic can be checked by reading. They agree with the
 * published totals (46.7B, 30.5B, 236B, 671B, 21B). Active = total less the routed experts a
 * token is not sent to (num_experts - num_experts_per_tok of them in every MoE block). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/strategy.h>

#include "../fuzz/gen/model_fixtures.h"
#include "models/builtin_models.h"
#include "models/model_read.h"

static vram_model parse(const char *json) {
    char err[512];
    vram_model m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_eq(err[0], '\0', "no note expected: %s", err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    return m;
}

/* a config whose note is expected: it says `note` */
#define DSV3_MTP_NOTE                                                                        \
    "num_nextn_predict_layers 1: the checkpoint's multi-token-prediction block (from block 61 " \
    "on) is not counted"
static vram_model parse_noted(const char *json, const char *note) {
    char err[512];
    vram_model m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "%s", err);
    cr_assert_not_null(strstr(err, note), "note '%s' expected: '%s'", note, err);
    return m;
}

static vram_param_count count(const vram_model *m) {
    vram_param_count pc;
    memset(&pc, 0, sizeof pc);
    cr_assert_eq(vram_arch_params(&m->arch, &pc), VRAM_OK);
    return pc;
}

/* |got - want| <= want * permille / 1000 */
static void near(const char *what, uint64_t got, uint64_t want, uint64_t permille) {
    uint64_t d = got > want ? got - want : want - got;
    cr_assert(d * 1000u <= want * permille, "%s: %llu, reference %llu (more than %llu/1000 off)",
              what, (unsigned long long)got, (unsigned long long)want,
              (unsigned long long)permille);
}

/* ---- public configs, reference counts ---------------------------------------------- */

/* mistralai/Mixtral-8x7B-v0.1 config.json */
static const char mixtral_cfg[] =
    "{\"architectures\":[\"MixtralForCausalLM\"],\"attention_dropout\":0.0,\"bos_token_id\":1,"
    "\"eos_token_id\":2,\"hidden_act\":\"silu\",\"hidden_size\":4096,\"initializer_range\":0.02,"
    "\"intermediate_size\":14336,\"max_position_embeddings\":32768,\"model_type\":\"mixtral\","
    "\"num_attention_heads\":32,\"num_experts_per_tok\":2,\"num_hidden_layers\":32,"
    "\"num_key_value_heads\":8,\"num_local_experts\":8,\"output_router_logits\":false,"
    "\"rms_norm_eps\":1e-05,\"rope_theta\":1000000.0,\"router_aux_loss_coef\":0.02,"
    "\"sliding_window\":null,\"tie_word_embeddings\":false,\"torch_dtype\":\"bfloat16\","
    "\"transformers_version\":\"4.36.0.dev0\",\"use_cache\":true,\"vocab_size\":32000}";

Test(moe, mixtral_8x7b) {
    /* MixtralForCausalLM: embed_tokens 32000 x 4096, lm_head 32000 x 4096, norm 4096; each of
       32 MixtralDecoderLayer: q_proj 4096x4096, k_proj and v_proj 1024x4096 (8 kv heads of
       128), o_proj 4096x4096, input_layernorm and post_attention_layernorm 4096 each,
       block_sparse_moe.gate 8x4096 (no bias), 8 experts of w1, w3 14336x4096 and w2
       4096x14336 (no biases). */
    const uint64_t attn = 4096ull * 4096 * 2 + 1024ull * 4096 * 2;
    const uint64_t expert = 3ull * 14336 * 4096;
    const uint64_t layer_fixed = attn + 2 * 4096 + 8ull * 4096;
    const uint64_t outer = 2ull * 32000 * 4096 + 4096;
    const uint64_t total = 32 * (layer_fixed + 8 * expert) + outer;
    const uint64_t active = 32 * (layer_fixed + 2 * expert) + outer;
    cr_assert_eq(total, 46702792704ull); /* the sum as written in the issue */
    vram_model m = parse(mixtral_cfg);
    cr_assert_eq(m.arch.experts, 8);
    cr_assert_eq(m.arch.experts_per_token, 2);
    vram_param_count pc = count(&m);
    near("Mixtral-8x7B total", pc.total, total, 5);
    near("Mixtral-8x7B active", pc.active, active, 10);
    cr_assert_eq(pc.expert_params, 32 * 8 * expert);
}

/* Qwen/Qwen3-30B-A3B config.json */
static const char qwen3_moe_cfg[] =
    "{\"architectures\":[\"Qwen3MoeForCausalLM\"],\"attention_bias\":false,"
    "\"attention_dropout\":0.0,\"bos_token_id\":151643,\"decoder_sparse_step\":1,"
    "\"eos_token_id\":151645,\"head_dim\":128,\"hidden_act\":\"silu\",\"hidden_size\":2048,"
    "\"initializer_range\":0.02,\"intermediate_size\":6144,\"max_position_embeddings\":40960,"
    "\"max_window_layers\":48,\"mlp_only_layers\":[],\"model_type\":\"qwen3_moe\","
    "\"moe_intermediate_size\":768,\"norm_topk_prob\":true,\"num_attention_heads\":32,"
    "\"num_experts\":128,\"num_experts_per_tok\":8,\"num_hidden_layers\":48,"
    "\"num_key_value_heads\":4,\"output_router_logits\":false,\"rms_norm_eps\":1e-06,"
    "\"rope_scaling\":null,\"rope_theta\":1000000.0,\"router_aux_loss_coef\":0.001,"
    "\"sliding_window\":null,\"tie_word_embeddings\":false,\"torch_dtype\":\"bfloat16\","
    "\"transformers_version\":\"4.51.0\",\"use_cache\":true,\"use_sliding_window\":false,"
    "\"vocab_size\":151936}";

Test(moe, qwen3_30b_a3b) {
    /* Qwen3MoeForCausalLM: embed_tokens and lm_head 151936 x 2048, norm 2048; each of 48
       layers: q_proj 4096x2048 (32 heads of 128), k_proj and v_proj 512x2048, o_proj
       2048x4096, q_norm and k_norm 128 each, two layer norms 2048, mlp.gate 128x2048, 128
       experts of gate_proj, up_proj 768x2048 and down_proj 2048x768 (decoder_sparse_step 1,
       no mlp_only_layers: every layer sparse; intermediate_size 6144 is unused). */
    const uint64_t attn = 4096ull * 2048 * 2 + 512ull * 2048 * 2 + 2 * 128;
    const uint64_t expert = 3ull * 768 * 2048;
    const uint64_t layer_fixed = attn + 2 * 2048 + 128ull * 2048;
    const uint64_t outer = 2ull * 151936 * 2048 + 2048;
    const uint64_t total = 48 * (layer_fixed + 128 * expert) + outer;
    const uint64_t active = 48 * (layer_fixed + 8 * expert) + outer;
    vram_model m = parse(qwen3_moe_cfg);
    vram_param_count pc = count(&m);
    near("Qwen3-30B-A3B total", pc.total, total, 5);
    near("Qwen3-30B-A3B active", pc.active, active, 10);
    cr_assert(total > 30400000000ull && total < 30600000000ull, "published 30.5B");
}

/* deepseek-ai/DeepSeek-V2 config.json (auto_map and rope_scaling left out) */
static const char deepseek_v2_cfg[] =
    "{\"architectures\":[\"DeepseekV2ForCausalLM\"],\"attention_bias\":false,"
    "\"attention_dropout\":0.0,\"aux_loss_alpha\":0.001,\"bos_token_id\":100000,"
    "\"eos_token_id\":100001,\"first_k_dense_replace\":1,\"hidden_act\":\"silu\","
    "\"hidden_size\":5120,\"initializer_range\":0.02,\"intermediate_size\":12288,"
    "\"kv_lora_rank\":512,\"max_position_embeddings\":163840,\"model_type\":\"deepseek_v2\","
    "\"moe_intermediate_size\":1536,\"moe_layer_freq\":1,\"n_group\":8,\"n_routed_experts\":160,"
    "\"n_shared_experts\":2,\"norm_topk_prob\":false,\"num_attention_heads\":128,"
    "\"num_experts_per_tok\":6,\"num_hidden_layers\":60,\"num_key_value_heads\":128,"
    "\"q_lora_rank\":1536,\"qk_nope_head_dim\":128,\"qk_rope_head_dim\":64,"
    "\"rms_norm_eps\":1e-06,\"routed_scaling_factor\":16.0,\"scoring_func\":\"softmax\","
    "\"seq_aux\":true,\"tie_word_embeddings\":false,\"topk_group\":3,"
    "\"topk_method\":\"group_limited_greedy\",\"torch_dtype\":\"bfloat16\",\"v_head_dim\":128,"
    "\"vocab_size\":102400}";

/* Latent attention of DeepseekV2Attention / DeepseekV3Attention (no biases): q_a_proj
   q_lora x hidden, q_a_layernorm q_lora, q_b_proj heads*(nope+rope) x q_lora,
   kv_a_proj_with_mqa (kv_lora+rope) x hidden, kv_a_layernorm kv_lora, kv_b_proj
   heads*(nope+v) x kv_lora, o_proj hidden x heads*v. */
static uint64_t mla(uint64_t hidden, uint64_t heads, uint64_t q_lora, uint64_t kv_lora,
                    uint64_t nope, uint64_t rope, uint64_t v) {
    return q_lora * hidden + q_lora + heads * (nope + rope) * q_lora + (kv_lora + rope) * hidden +
           kv_lora + heads * (nope + v) * kv_lora + hidden * heads * v;
}

Test(moe, deepseek_v2) {
    /* DeepseekV2ForCausalLM: embed_tokens and lm_head 102400 x 5120, norm 5120; 60 layers of
       latent attention and two norms; layer 0 (first_k_dense_replace 1) a dense MLP of
       3 x 12288 x 5120; layers 1-59: gate 160 x 5120, 160 experts of 3 x 1536 x 5120,
       shared_experts an MLP of 3 x (2 x 1536) x 5120. */
    const uint64_t attn = mla(5120, 128, 1536, 512, 128, 64, 128) + 2 * 5120;
    const uint64_t expert = 3ull * 1536 * 5120;
    const uint64_t dense = attn + 3ull * 12288 * 5120;
    const uint64_t moe_fixed = attn + 160ull * 5120 + 3ull * 3072 * 5120;
    const uint64_t outer = 2ull * 102400 * 5120 + 5120;
    const uint64_t total = dense + 59 * (moe_fixed + 160 * expert) + outer;
    const uint64_t active = dense + 59 * (moe_fixed + 6 * expert) + outer;
    vram_model m = parse(deepseek_v2_cfg);
    cr_assert_eq(m.arch.kv_lora_rank, 512);
    cr_assert_eq(m.arch.head_dim, 192);
    cr_assert_eq(m.arch.dense_layers, 1);
    cr_assert_eq(m.arch.shared_intermediate, 3072);
    vram_param_count pc = count(&m);
    near("DeepSeek-V2 total", pc.total, total, 5);
    near("DeepSeek-V2 active", pc.active, active, 10);
    cr_assert(total > 235000000000ull && total < 237000000000ull, "published 236B");
}

/* deepseek-ai/DeepSeek-V3 config.json (auto_map and rope_scaling left out) */
static const char deepseek_v3_cfg[] =
    "{\"architectures\":[\"DeepseekV3ForCausalLM\"],\"attention_bias\":false,"
    "\"attention_dropout\":0.0,\"bos_token_id\":0,\"eos_token_id\":1,"
    "\"ep_size\":1,\"first_k_dense_replace\":3,\"hidden_act\":\"silu\",\"hidden_size\":7168,"
    "\"initializer_range\":0.02,\"intermediate_size\":18432,\"kv_lora_rank\":512,"
    "\"max_position_embeddings\":163840,\"model_type\":\"deepseek_v3\","
    "\"moe_intermediate_size\":2048,\"moe_layer_freq\":1,\"n_group\":8,"
    "\"n_routed_experts\":256,\"n_shared_experts\":1,\"norm_topk_prob\":true,"
    "\"num_attention_heads\":128,\"num_experts_per_tok\":8,\"num_hidden_layers\":61,"
    "\"num_key_value_heads\":128,\"num_nextn_predict_layers\":1,\"q_lora_rank\":1536,"
    "\"qk_nope_head_dim\":128,\"qk_rope_head_dim\":64,\"quantization_config\":"
    "{\"activation_scheme\":\"dynamic\",\"fmt\":\"e4m3\",\"quant_method\":\"fp8\","
    "\"weight_block_size\":[128,128]},\"rms_norm_eps\":1e-06,\"rope_theta\":10000,"
    "\"routed_scaling_factor\":2.5,\"scoring_func\":\"sigmoid\",\"tie_word_embeddings\":false,"
    "\"topk_group\":4,\"topk_method\":\"noaux_tc\",\"torch_dtype\":\"bfloat16\","
    "\"transformers_version\":\"4.33.1\",\"use_cache\":true,\"v_head_dim\":128,"
    "\"vocab_size\":129280}";

Test(moe, deepseek_v3) {
    /* DeepseekV3ForCausalLM: embed_tokens and lm_head 129280 x 7168, norm 7168; 61 layers
       of latent attention and two norms; layers 0-2 a dense MLP of 3 x 18432 x 7168;
       layers 3-60: gate.weight 256 x 7168 (e_score_correction_bias is a buffer), 256
       experts of 3 x 2048 x 7168, shared_experts 3 x 2048 x 7168. The multi-token-
       prediction layer of the checkpoint (num_nextn_predict_layers) is not built by the
       class: 671B, not 685B. */
    const uint64_t attn = mla(7168, 128, 1536, 512, 128, 64, 128) + 2 * 7168;
    const uint64_t expert = 3ull * 2048 * 7168;
    const uint64_t dense = attn + 3ull * 18432 * 7168;
    const uint64_t moe_fixed = attn + 256ull * 7168 + expert;
    const uint64_t outer = 2ull * 129280 * 7168 + 7168;
    const uint64_t total = 3 * dense + 58 * (moe_fixed + 256 * expert) + outer;
    const uint64_t active = 3 * dense + 58 * (moe_fixed + 8 * expert) + outer;
    vram_model m = parse_noted(deepseek_v3_cfg, DSV3_MTP_NOTE);
    /* quantization_config fp8: published in float8 e4m3 (torch_dtype says bfloat16) */
    cr_assert_eq(m.dtype, VRAM_DTYPE_F8_E4M3);
    vram_param_count pc = count(&m);
    near("DeepSeek-V3 total", pc.total, total, 5);
    near("DeepSeek-V3 active", pc.active, active, 10);
    cr_assert(total > 670000000000ull && total < 672000000000ull, "published 671B");
    cr_assert(active > 37000000000ull && active < 38000000000ull, "published 37B active");
}

/* openai/gpt-oss-20b config.json (layer_types and rope_scaling left out) */
static const char gpt_oss_cfg[] =
    "{\"architectures\":[\"GptOssForCausalLM\"],\"attention_bias\":true,"
    "\"attention_dropout\":0.0,\"eos_token_id\":200002,\"experts_per_token\":4,"
    "\"head_dim\":64,\"hidden_act\":\"silu\",\"hidden_size\":2880,"
    "\"initial_context_length\":4096,\"initializer_range\":0.02,\"intermediate_size\":2880,"
    "\"max_position_embeddings\":131072,\"model_type\":\"gpt_oss\","
    "\"num_attention_heads\":64,\"num_experts_per_tok\":4,\"num_hidden_layers\":24,"
    "\"num_key_value_heads\":8,\"num_local_experts\":32,\"output_router_logits\":false,"
    "\"pad_token_id\":199999,\"quantization_config\":{\"modules_to_not_convert\":"
    "[\"model.layers.*.self_attn\",\"model.layers.*.mlp.router\",\"model.embed_tokens\","
    "\"lm_head\"],\"quant_method\":\"mxfp4\"},\"rms_norm_eps\":1e-05,\"rope_theta\":150000,"
    "\"router_aux_loss_coef\":0.9,\"sliding_window\":128,\"swiglu_limit\":7.0,"
    "\"tie_word_embeddings\":false,\"transformers_version\":\"4.55.0.dev0\","
    "\"use_cache\":true,\"vocab_size\":201088}";

/* gpt-oss-20b's count, and its routed experts' matrix elements */
#define GPT_OSS_EXPERT_MATRIX (2880ull * 5760 + 2880ull * 2880)

Test(moe, gpt_oss_20b) {
    /* GptOssForCausalLM: embed_tokens and lm_head 201088 x 2880, norm 2880; each of 24
       layers: q_proj 4096x2880 + 4096, k_proj and v_proj 512x2880 + 512, o_proj 2880x4096 +
       2880 (attention_bias), sinks 64, two norms 2880, router weight 32x2880 + bias 32,
       experts gate_up_proj 32x2880x5760 + gate_up_proj_bias 32x5760, down_proj 32x2880x2880
       + down_proj_bias 32x2880. */
    const uint64_t attn = 4096ull * 2880 + 4096 + 2 * (512ull * 2880 + 512) + 2880ull * 4096 +
                          2880 + 64;
    const uint64_t expert = GPT_OSS_EXPERT_MATRIX + 5760 + 2880;
    const uint64_t layer_fixed = attn + 2 * 2880 + 32ull * 2880 + 32;
    const uint64_t outer = 2ull * 201088 * 2880 + 2880;
    const uint64_t total = 24 * (layer_fixed + 32 * expert) + outer;
    const uint64_t active = 24 * (layer_fixed + 4 * expert) + outer;
    vram_model m = parse(gpt_oss_cfg);
    cr_assert_eq(m.arch.expert_format, VRAM_DTYPE_MXFP4);
    vram_param_count pc = count(&m);
    near("gpt-oss-20b total", pc.total, total, 5);
    near("gpt-oss-20b active", pc.active, active, 10);
    cr_assert(total > 20800000000ull && total < 21000000000ull, "published 21B");
    /* OpenAI's 3.6B active leaves the input embedding out (a lookup, not a product) */
    near("gpt-oss-20b active without the embedding", pc.active - 201088ull * 2880,
         3610000000ull, 10);
    cr_assert_eq(pc.expert_matrix_params, 24 * 32 * GPT_OSS_EXPERT_MATRIX);
}

/* Qwen/Qwen1.5-MoE-A2.7B config.json */
static const char qwen2_moe_cfg[] =
    "{\"architectures\":[\"Qwen2MoeForCausalLM\"],\"attention_dropout\":0.0,"
    "\"bos_token_id\":151643,\"decoder_sparse_step\":1,\"eos_token_id\":151643,"
    "\"hidden_act\":\"silu\",\"hidden_size\":2048,\"initializer_range\":0.02,"
    "\"intermediate_size\":5632,\"max_position_embeddings\":8192,\"max_window_layers\":21,"
    "\"model_type\":\"qwen2_moe\",\"moe_intermediate_size\":1408,\"norm_topk_prob\":false,"
    "\"num_attention_heads\":16,\"num_experts\":60,\"num_experts_per_tok\":4,"
    "\"num_hidden_layers\":24,\"num_key_value_heads\":16,\"output_router_logits\":false,"
    "\"rms_norm_eps\":1e-06,\"rope_theta\":1000000.0,\"router_aux_loss_coef\":0.001,"
    "\"shared_expert_intermediate_size\":5632,\"sliding_window\":32768,"
    "\"tie_word_embeddings\":false,\"torch_dtype\":\"bfloat16\","
    "\"transformers_version\":\"4.39.0.dev0\",\"use_cache\":true,\"use_sliding_window\":false,"
    "\"vocab_size\":151936}";

Test(moe, qwen1_5_moe_a2_7b) {
    /* Qwen2MoeForCausalLM (transformers' modular_qwen2_moe.py / configuration_qwen2_moe.py):
       embed_tokens and lm_head 151936 x 2048 (untied), norm 2048; each of 24
       Qwen2MoeDecoderLayer (decoder_sparse_step 1, mlp_only_layers []: all sparse):
       Qwen2MoeAttention q_proj 2048x2048 + bias 2048, k_proj and v_proj 2048x2048 + 2048
       (16 kv heads of 128; qkv_bias defaults to true), o_proj 2048x2048 (no bias);
       input_layernorm and post_attention_layernorm 2048 each; Qwen2MoeSparseMoeBlock:
       gate.weight (Qwen2MoeTopKRouter) 60 x 2048, experts 60 x (gate_up_proj 2 x 1408 x 2048
       + down_proj 2048 x 1408), shared_expert a Qwen2MoeMLP of gate/up 5632 x 2048 and down
       2048 x 5632, shared_expert_gate 1 x 2048 (no bias). */
    const uint64_t attn = 4ull * 2048 * 2048 + 3 * 2048;
    const uint64_t expert = 3ull * 1408 * 2048;
    const uint64_t layer_fixed = attn + 2 * 2048 + 60ull * 2048 + 3ull * 5632 * 2048 + 2048;
    const uint64_t outer = 2ull * 151936 * 2048 + 2048;
    const uint64_t total = 24 * (layer_fixed + 60 * expert) + outer;
    const uint64_t active = 24 * (layer_fixed + 4 * expert) + outer;
    cr_assert_eq(total, 14315784192ull);  /* published: 14.3B */
    cr_assert_eq(active, 2689173504ull);  /* published: 2.7B activated */
    vram_model m = parse(qwen2_moe_cfg);
    cr_assert_eq(m.arch.experts, 60);
    cr_assert_eq(m.arch.experts_per_token, 4);
    cr_assert_eq(m.arch.expert_intermediate, 1408);
    cr_assert_eq(m.arch.shared_intermediate, 5632);
    cr_assert_eq(m.arch.flags & VRAM_ARCH_QKV_BIAS, VRAM_ARCH_QKV_BIAS);
    cr_assert_eq(m.arch.context, 8192);
    vram_param_count pc = count(&m);
    cr_assert_eq(pc.total, total);
    cr_assert_eq(pc.active, active);
    cr_assert_eq(pc.expert_params, 24ull * 60 * expert);
    /* the first two blocks dense (mlp_only_layers [0, 1]): a Qwen2MoeMLP of
       intermediate_size there, no router, experts, shared expert or gate */
    const char *two =
        "{\"model_type\":\"qwen2_moe\",\"mlp_only_layers\":[0,1],\"intermediate_size\":4096}";
    m = parse(two);
    cr_assert_eq(m.arch.dense_layers, 2);
    pc = count(&m);
    const uint64_t dense_layer = attn + 2 * 2048 + 3ull * 4096 * 2048;
    const uint64_t default_outer = 2ull * 151936 * 2048 + 2048;
    cr_assert_eq(pc.total, 2 * dense_layer + 22 * (layer_fixed + 60 * expert) + default_outer);
}

/* allenai/OLMoE-1B-7B-0924 config.json */
static const char olmoe_cfg[] =
    "{\"architectures\":[\"OlmoeForCausalLM\"],\"attention_bias\":false,"
    "\"attention_dropout\":0.0,\"clip_qkv\":null,\"eos_token_id\":50279,"
    "\"hidden_act\":\"silu\",\"hidden_size\":2048,\"initializer_range\":0.02,"
    "\"intermediate_size\":1024,\"max_position_embeddings\":4096,\"model_type\":\"olmoe\","
    "\"norm_topk_prob\":false,\"num_attention_heads\":16,\"num_experts\":64,"
    "\"num_experts_per_tok\":8,\"num_hidden_layers\":16,\"num_key_value_heads\":16,"
    "\"output_router_logits\":false,\"pad_token_id\":1,\"rms_norm_eps\":1e-05,"
    "\"rope_scaling\":null,\"rope_theta\":10000.0,\"router_aux_loss_coef\":0.01,"
    "\"tie_word_embeddings\":false,\"torch_dtype\":\"bfloat16\","
    "\"transformers_version\":\"4.43.0.dev0\",\"use_cache\":true,\"vocab_size\":50304}";

Test(moe, olmoe_1b_7b) {
    /* OlmoeForCausalLM (transformers' modular_olmoe.py / configuration_olmoe.py): embed_tokens
       and lm_head 50304 x 2048, norm 2048; each of 16 OlmoeDecoderLayer: q, k, v, o_proj
       2048x2048 (attention_bias false), q_norm 2048 (over hidden_size), k_norm 2048 ((2048 /
       16) x 16 kv heads), two layer norms 2048, gate 64 x 2048 (no bias), 64 OlmoeMLP experts
       of gate/up 1024 x 2048 and down 2048 x 1024 (intermediate_size is the expert width; no
       shared expert, every block sparse). */
    const uint64_t layer_fixed = 4ull * 2048 * 2048 + 2048 + 2048 + 2 * 2048 + 64ull * 2048;
    const uint64_t expert = 3ull * 1024 * 2048;
    const uint64_t outer = 2ull * 50304 * 2048 + 2048;
    const uint64_t total = 16 * (layer_fixed + 64 * expert) + outer;
    const uint64_t active = 16 * (layer_fixed + 8 * expert) + outer;
    cr_assert_eq(total, 6919161856ull); /* published: 6.9B */
    cr_assert_eq(active, 1282017280ull); /* published: 1.3B active */
    vram_model m = parse(olmoe_cfg);
    cr_assert_eq(m.arch.expert_intermediate, 0, "the routed experts are intermediate_size wide");
    vram_param_count pc = count(&m);
    cr_assert_eq(pc.total, total);
    cr_assert_eq(pc.active, active);
    /* grouped-query: k_norm follows the kv heads */
    m = parse("{\"model_type\":\"olmoe\",\"num_key_value_heads\":4}");
    cr_assert_eq(m.arch.extra_params, 16ull * (2048 + 128 * 4));
}

/* gpt-oss as transformers saves it (the tensor names and shapes of openai/gpt-oss-20b's
 * model-*.safetensors, two of its 24 blocks): each expert matrix in MXFP4 as a pair of U8
 * tensors, "<w>_blocks" [experts, rows, cols/32, 16] (two 4-bit values a byte) and
 * "<w>_scales" [experts, rows, cols/32] (one exponent per 32 values); everything else bf16.
 * The count from the headers is the model's (the blocks 2 elements a byte, the scales none),
 * the same as gpt_oss_20b's by-hand count for two blocks; read as plain bytes it would be
 * 44% short. */
Test(moe, gpt_oss_safetensors_mxfp4_pairs) {
    fx_list l = {0};
    fx_buf json = {0};
    vram_model m;
    char err[512], n[160];
    static const char *const proj[4] = {"q_proj", "k_proj", "v_proj", "o_proj"};
    static const uint64_t rows[4] = {4096, 512, 512, 2880}, cols[4] = {2880, 2880, 2880, 4096};
    for (int i = 0; i < 2; i++) {
        l.dtype = "BF16";
        for (int p = 0; p < 4; p++) {
            snprintf(n, sizeof n, "model.layers.%d.self_attn.%s.weight", i, proj[p]);
            FX_2(&l, n, rows[p], cols[p]);
            snprintf(n, sizeof n, "model.layers.%d.self_attn.%s.bias", i, proj[p]);
            FX_1(&l, n, rows[p]);
        }
        snprintf(n, sizeof n, "model.layers.%d.self_attn.sinks", i);
        FX_1(&l, n, 64);
        snprintf(n, sizeof n, "model.layers.%d.input_layernorm.weight", i);
        FX_1(&l, n, 2880);
        snprintf(n, sizeof n, "model.layers.%d.post_attention_layernorm.weight", i);
        FX_1(&l, n, 2880);
        snprintf(n, sizeof n, "model.layers.%d.mlp.router.weight", i);
        FX_2(&l, n, 32, 2880);
        snprintf(n, sizeof n, "model.layers.%d.mlp.router.bias", i);
        FX_1(&l, n, 32);
        snprintf(n, sizeof n, "model.layers.%d.mlp.experts.gate_up_proj_bias", i);
        FX_2(&l, n, 32, 5760);
        snprintf(n, sizeof n, "model.layers.%d.mlp.experts.down_proj_bias", i);
        FX_2(&l, n, 32, 2880);
        l.dtype = "U8";
        snprintf(n, sizeof n, "model.layers.%d.mlp.experts.gate_up_proj_blocks", i);
        fx_add(&l, n, 4, 32, 5760, 90, 16);
        snprintf(n, sizeof n, "model.layers.%d.mlp.experts.gate_up_proj_scales", i);
        fx_add(&l, n, 3, 32, 5760, 90, 0);
        snprintf(n, sizeof n, "model.layers.%d.mlp.experts.down_proj_blocks", i);
        fx_add(&l, n, 4, 32, 2880, 90, 16);
        snprintf(n, sizeof n, "model.layers.%d.mlp.experts.down_proj_scales", i);
        fx_add(&l, n, 3, 32, 2880, 90, 0);
    }
    l.dtype = "BF16";
    FX_2(&l, "model.embed_tokens.weight", 201088, 2880);
    FX_2(&l, "lm_head.weight", 201088, 2880);
    FX_1(&l, "model.norm.weight", 2880);
    uint64_t data = fx_st_header(l.t, l.n, 1, &json);
    cr_assert_eq(vram_safetensors_parse((const char *)json.p, json.n, data, "gpt-oss", &m, err,
                                        sizeof err),
                 VRAM_OK, "%s", err);
    /* gpt_oss_20b's terms, for 2 blocks */
    const uint64_t attn = 4096ull * 2880 + 4096 + 2 * (512ull * 2880 + 512) + 2880ull * 4096 +
                          2880 + 64;
    const uint64_t expert = GPT_OSS_EXPERT_MATRIX + 5760 + 2880;
    const uint64_t layer_fixed = attn + 2 * 2880 + 32ull * 2880 + 32;
    const uint64_t outer = 2ull * 201088 * 2880 + 2880;
    cr_assert_eq(m.stats.params, 2 * (layer_fixed + 32 * expert) + outer);
    cr_assert_eq(m.stats.expert_params, 2 * 32 * expert);
    /* MXFP4: 16 bytes of values and 1 of scale per 32; the bytes are the file's */
    const uint64_t mx = 2 * 32 * GPT_OSS_EXPERT_MATRIX / 32 * 17;
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_MXFP4], mx);
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_U8], 0);
    cr_assert_eq(m.stats.bytes, data);
    cr_assert_eq(m.stats.expert_bytes, mx + 2 * (2 * 32 * (5760 + 2880)));
    cr_assert_eq(m.blocks, 2);
    fx_free(&json);
    fx_list_free(&l);
}

/* A U8 tensor that is not such a pair (a last dimension other than 16, or another suffix)
 * stays bytes: one element each. */
Test(moe, u8_tensors_that_are_not_mxfp4_stay_bytes) {
    fx_list l = {0};
    fx_buf json = {0};
    vram_model m;
    char err[512];
    l.dtype = "U8";
    fx_add(&l, "model.layers.0.mlp.experts.gate_up_proj_blocks", 3, 4, 8, 15, 0);
    FX_2(&l, "model.layers.0.mlp.mask", 8, 16);
    l.dtype = "BF16";
    FX_2(&l, "model.layers.0.mlp.experts.down_proj_blocks", 8, 16);
    uint64_t data = fx_st_header(l.t, l.n, 1, &json);
    cr_assert_eq(vram_safetensors_parse((const char *)json.p, json.n, data, "u8", &m, err,
                                        sizeof err),
                 VRAM_OK, "%s", err);
    cr_assert_eq(m.stats.params, 4 * 8 * 15 + 8 * 16 + 8 * 16);
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_U8], 4 * 8 * 15 + 8 * 16);
    cr_assert_eq(m.stats.dtype_bytes[VRAM_DTYPE_MXFP4], 0);
    fx_free(&json);
    fx_list_free(&l);
}

/* ---- the estimate ------------------------------------------------------------------- */

Test(moe, gpt_oss_mxfp4_experts_weights) {
    vram_model m = parse(gpt_oss_cfg);
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    /* the experts' matrices in MXFP4 (17 bytes per 32), everything else in the published
       16-bit format (f16 assumed: the config names none) */
    const uint64_t xq = 24 * 32 * GPT_OSS_EXPERT_MATRIX;
    const uint64_t mx = xq / 32 * 17;
    const uint64_t rest = 2 * (e.params - xq);
    cr_assert_eq(e.term[VRAM_TERM_WEIGHTS].expected, mx + rest, "%llu",
                 (unsigned long long)e.term[VRAM_TERM_WEIGHTS].expected);
    /* the routed experts' bytes: MXFP4 matrices and 16-bit biases */
    cr_assert_eq(e.expert_bytes, mx + 2 * (24 * 32 * (5760 + 2880)));
    vram_param_count pc = count(&m);
    cr_assert_eq(e.params, pc.total);
    cr_assert_eq(e.active_params, pc.active);
    /* about 13.8 GB, as the published checkpoint */
    cr_assert(e.term[VRAM_TERM_WEIGHTS].expected > 13500000000ull &&
              e.term[VRAM_TERM_WEIGHTS].expected < 14000000000ull);
    /* loaded in bf16, the experts stay MXFP4 (as vLLM and llama.cpp run them) */
    w.format = VRAM_DTYPE_BF16;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.term[VRAM_TERM_WEIGHTS].expected, mx + rest);
    /* converted to int4, the experts are NF4 like the other matrices */
    w.format = VRAM_DTYPE_NF4;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert(e.expert_bytes < e.term[VRAM_TERM_WEIGHTS].expected);
}

Test(moe, deepseek_latent_kv_cache) {
    vram_model m = parse_noted(deepseek_v3_cfg, DSV3_MTP_NOTE);
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    w.seq = 4096;
    w.batch = 2;
    w.compute = VRAM_DTYPE_BF16;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    /* per block and token: the compressed KV (512) and the rotary key (64), not 128 heads */
    cr_assert_eq(e.term[VRAM_TERM_KV_CACHE].expected, 61ull * (512 + 64) * 4096 * 2 * 2);
}

Test(moe, activations_follow_top_k) {
    /* the same Mixtral with every expert chosen has the wider MLP working set */
    vram_model m = parse(mixtral_cfg), all = m;
    vram_workload w;
    vram_estimate e, ea;
    memset(&w, 0, sizeof w);
    w.seq = 2048;
    w.flash_attention = 1;
    all.arch.experts_per_token = 8;
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(vram_estimate_model(&all, &w, &ea), VRAM_OK);
    /* bf16, flash: 4 hidden states (4 x b*s*h), and the experts' gate, the largest of
       their three moments here (wide experts): the tokens' copies (top-k x 4096) beside 4
       of top-k x 14336 (gate and up, the activation, the product) */
    cr_assert_eq(e.term[VRAM_TERM_ACTIVATIONS].expected,
                 2ull * 2048 * (4 * 4096 + 2 * 4096 + 4 * 2 * 14336));
    cr_assert(ea.term[VRAM_TERM_ACTIVATIONS].expected > e.term[VRAM_TERM_ACTIVATIONS].expected);
    /* weights by total parameters either way; active differs */
    cr_assert_eq(e.term[VRAM_TERM_WEIGHTS].expected, ea.term[VRAM_TERM_WEIGHTS].expected);
    cr_assert(e.active_params < ea.active_params && ea.active_params == ea.params);
}

Test(moe, dense_model_has_no_experts) {
    vram_model m = parse("{\"model_type\":\"mistral\"}");
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    cr_assert_eq(vram_estimate_model(&m, &w, &e), VRAM_OK);
    cr_assert_eq(e.active_params, e.params);
    cr_assert_eq(e.expert_bytes, 0);
}

/* ---- tensor names ------------------------------------------------------------------- */

static vram_tensor_class classify(const char *name, uint32_t nd, uint64_t d0, uint64_t d1,
                                  uint64_t d2) {
    vram_tensor_class c;
    const uint64_t dims[3] = {d0, d1, d2};
    cr_assert_eq(vram_tensor_classify(name, strlen(name), nd, dims, &c), VRAM_OK);
    return c;
}

Test(moe, expert_tensor_names) {
    struct {
        const char *name;
        uint32_t nd;
        int expert, matrix;
        uint64_t rows;
    } cases[] = {
        {"model.layers.3.block_sparse_moe.experts.7.w1.weight", 2, 1, 1, 14336},
        {"model.layers.0.mlp.experts.127.down_proj.weight", 2, 1, 1, 14336},
        {"model.layers.1.mlp.experts.gate_up_proj", 3, 1, 1, 32 * 14336},
        {"model.layers.1.mlp.experts.gate_up_proj_bias", 2, 1, 0, 0},
        {"blk.5.ffn_gate_exps.weight", 3, 1, 1, 32 * 14336},
        {"blk.5.ffn_gate_up_exps.weight", 3, 1, 1, 32 * 14336},
        {"blk.5.ffn_down_shexp.weight", 2, 0, 1, 14336},
        {"model.layers.4.mlp.shared_experts.up_proj.weight", 2, 0, 1, 14336},
        {"model.layers.4.mlp.gate.weight", 2, 0, 1, 14336},
        {"blk.5.ffn_gate_inp.weight", 2, 0, 1, 14336},
        {"model.experts.0.weight", 2, 0, 0, 0}, /* outside a block: not routed experts */
        {"model.layers.2.self_attn.q_proj.weight", 2, 0, 1, 14336},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vram_tensor_class c = classify(cases[i].name, cases[i].nd, cases[i].nd == 3 ? 32 : 14336,
                                       14336, 4096);
        cr_assert_eq(c.expert, cases[i].expert, "%s: expert %d", cases[i].name, c.expert);
        cr_assert_eq(c.matrix, cases[i].matrix, "%s: matrix %d", cases[i].name, c.matrix);
        if (c.matrix) cr_assert_eq(c.rows, cases[i].rows, "%s: rows", cases[i].name);
    }
    /* a fused tensor whose rows pass 2^64 is a range error, not a wrapped count */
    vram_tensor_class c;
    const uint64_t huge[3] = {UINT64_MAX, 3, 4};
    const char *n = "blk.0.ffn_up_exps.weight";
    cr_assert_eq(vram_tensor_classify(n, strlen(n), 3, huge, &c), VRAM_E_RANGE);
}

Test(moe, expert_stats) {
    vram_tensor_stats s;
    memset(&s, 0, sizeof s);
    vram_tensor_class c = classify("blk.0.ffn_up_exps.weight", 3, 8, 14336, 4096);
    const uint64_t n = 8ull * 14336 * 4096;
    cr_assert_eq(vram_tensor_stats_add(&s, &c, n, n / 32 * 18, VRAM_DTYPE_Q4_0), VRAM_OK);
    c = classify("blk.0.attn_q.weight", 2, 4096, 4096, 0);
    cr_assert_eq(vram_tensor_stats_add(&s, &c, 4096ull * 4096, 4096ull * 4096 * 2, VRAM_DTYPE_F16),
                 VRAM_OK);
    cr_assert_eq(s.expert_params, n);
    cr_assert_eq(s.expert_bytes, n / 32 * 18);
    cr_assert_eq(s.params, n + 4096ull * 4096);
    cr_assert_eq(s.matrices, 2);
}

/* ---- the strategy chain ------------------------------------------------------------ */

static vram_devices one_gpu(uint64_t free_bytes, uint64_t host) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    d.gpus = 1;
    d.gpu[0].total = free_bytes;
    d.gpu[0].free = free_bytes;
    d.gpu[0].cc_major = 9;
    d.host_free = host;
    return d;
}

Test(moe, experts_cpu_in_the_chain) {
    vram_model m = parse(qwen3_moe_cfg);
    vram_workload w;
    vram_chain ch;
    memset(&w, 0, sizeof w);
    w.seq = 4096;
    /* 24 GiB: 61 GB of bf16 weights do not fit; without the routed experts (58 GB on the
       host) the attention, embeddings and KV cache do */
    vram_devices d = one_gpu(24ull << 30, 256ull << 30);
    cr_assert_eq(vram_strategy_chain(&m, &w, &d, &ch), VRAM_OK);
    cr_assert_eq(ch.count, VRAM_STRATEGY_COUNT);
    const vram_candidate *x = &ch.cand[VRAM_STRATEGY_EXPERTS_CPU];
    cr_assert_str_eq(x->name, "experts_cpu");
    cr_assert_str_eq(vram_strategy_name(VRAM_STRATEGY_EXPERTS_CPU), "experts_cpu");
    cr_assert_eq(VRAM_STRATEGY_EXPERTS_CPU + 1, VRAM_STRATEGY_GPU_CPU, "before gpu_cpu");
    cr_assert_eq(x->status, VRAM_OK);
    cr_assert(x->estimate.expert_bytes > 0);
    cr_assert_eq(x->cpu_bytes, x->estimate.expert_bytes);
    cr_assert_eq(x->gpu_bytes[0] + x->cpu_bytes, x->estimate.expected);
    cr_assert_eq(x->fits, 1);
    cr_assert_eq(x->reason, VRAM_REASON_FITS);
    cr_assert_eq(ch.cand[VRAM_STRATEGY_16BIT].fits, 0);
    /* the host too small for the experts */
    d = one_gpu(24ull << 30, 8ull << 30);
    cr_assert_eq(vram_strategy_chain(&m, &w, &d, &ch), VRAM_OK);
    x = &ch.cand[VRAM_STRATEGY_EXPERTS_CPU];
    cr_assert_eq(x->fits, 0);
    cr_assert_eq(x->reason, VRAM_REASON_HOST_TOO_SMALL);
    cr_assert_eq(x->needed, x->estimate.expert_bytes);
    /* the GPU too small even for the rest */
    d = one_gpu(2ull << 30, 256ull << 30);
    cr_assert_eq(vram_strategy_chain(&m, &w, &d, &ch), VRAM_OK);
    x = &ch.cand[VRAM_STRATEGY_EXPERTS_CPU];
    cr_assert_eq(x->fits, 0);
    cr_assert_eq(x->reason, VRAM_REASON_TOO_BIG);
    cr_assert_eq(x->needed, x->estimate.expected - x->estimate.expert_bytes);
    /* no GPU */
    d.gpus = 0;
    cr_assert_eq(vram_strategy_chain(&m, &w, &d, &ch), VRAM_OK);
    cr_assert_eq(ch.cand[VRAM_STRATEGY_EXPERTS_CPU].reason, VRAM_REASON_NO_GPU);
}

Test(moe, experts_cpu_dense_model) {
    vram_model m = parse("{\"model_type\":\"mistral\"}");
    vram_workload w;
    vram_chain ch;
    memset(&w, 0, sizeof w);
    vram_devices d = one_gpu(8ull << 30, 0);
    cr_assert_eq(vram_strategy_chain(&m, &w, &d, &ch), VRAM_OK);
    cr_assert_eq(ch.cand[VRAM_STRATEGY_EXPERTS_CPU].fits, 0);
    cr_assert_eq(ch.cand[VRAM_STRATEGY_EXPERTS_CPU].reason, VRAM_REASON_NO_EXPERTS);
    cr_assert_str_eq(vram_reason_name(VRAM_REASON_NO_EXPERTS), "no_experts");
}

/* ---- the core's checks and the readers' errors ------------------------------------- */

Test(moe, arch_check) {
    vram_model m = parse(mixtral_cfg);
    vram_arch a = m.arch;
    vram_param_count pc;
    cr_assert_eq(vram_arch_check(&a), VRAM_OK);
    a.experts_per_token = 9; /* more than the experts */
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a = m.arch;
    a.experts_per_token = 0;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a = m.arch;
    a.dense_layers = 33;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a = m.arch;
    a.family = VRAM_FAMILY_ENCODER;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a = m.arch;
    a.moe_flags = 0x80;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a = m.arch;
    a.expert_format = VRAM_DTYPE_COUNT;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    a = m.arch;
    a.kv_lora_rank = 512; /* latent attention without a head_dim to hold the rope part */
    a.rope_dim = 64;
    cr_assert_eq(vram_arch_check(&a), VRAM_E_INVALID);
    /* an absurd count (100,000 experts of 10^6 x 10^6 in 10,000 layers) is refused */
    a = m.arch;
    a.experts = VRAM_ARCH_MAX_EXPERTS;
    a.expert_intermediate = VRAM_ARCH_MAX_WIDTH;
    a.hidden = 1000000;
    a.heads = 1000;
    a.kv_heads = 1000;
    a.layers = 10000;
    cr_assert_eq(vram_arch_check(&a), VRAM_OK);
    cr_assert_eq(vram_arch_params(&a, &pc), VRAM_E_INVALID);
}

static void bad_config(const char *json, const char *want) {
    char err[512];
    vram_model m;
    memset(&m, 0x5a, sizeof m);
    vram_model before = m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_E_FORMAT, "%s", json);
    cr_assert_not_null(strstr(err, want), "%s: %s", json, err);
    cr_assert_eq(strncmp(err, "config.json: ", 13), 0, "%s", err);
    cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "untouched on error");
}

Test(moe, config_errors) {
    bad_config("{\"model_type\":\"mixtral\",\"num_experts_per_tok\":9}",
               "num_experts_per_tok 9 is more than num_local_experts 8");
    bad_config("{\"model_type\":\"qwen3_moe\",\"num_experts\":0}", "num_experts is 0");
    bad_config("{\"model_type\":\"deepseek_v3\",\"first_k_dense_replace\":62}",
               "first_k_dense_replace 62 is more than num_hidden_layers 61");
    bad_config("{\"model_type\":\"deepseek_v2\",\"q_lora_rank\":\"x\"}", "q_lora_rank is a string");
    bad_config("{\"model_type\":\"deepseek_v3\",\"num_attention_heads\":10000}",
               "over the width limit");
    bad_config("{\"model_type\":\"deepseek_v3\",\"n_shared_experts\":1000}",
               "n_shared_experts 1000 x moe_intermediate_size 2048 is over the limit");
    bad_config("{\"model_type\":\"gpt_oss\",\"experts_per_token\":-4}",
               "experts_per_token is -4: negative");
    bad_config("{\"model_type\":\"qwen2_moe\",\"num_experts_per_tok\":61}",
               "num_experts_per_tok 61 is more than num_experts 60");
    bad_config("{\"model_type\":\"qwen2_moe\",\"shared_expert_intermediate_size\":-5632}",
               "shared_expert_intermediate_size is -5632: negative");
    bad_config("{\"model_type\":\"qwen2_moe\",\"shared_expert_intermediate_size\":1e9}",
               "shared_expert_intermediate_size is 1000000000, over the limit");
    bad_config("{\"model_type\":\"qwen2_moe\",\"qkv_bias\":1}", "qkv_bias is a number");
    bad_config("{\"model_type\":\"qwen2_moe\",\"mlp_only_layers\":[0,24]}",
               "mlp_only_layers holds 24, not a block index in 0..23");
    bad_config("{\"model_type\":\"qwen3_moe\",\"mlp_only_layers\":[-1]}",
               "mlp_only_layers holds -1, not a block index in 0..23");
    bad_config("{\"model_type\":\"qwen2_moe\",\"mlp_only_layers\":[\"0\"]}",
               "mlp_only_layers holds a string, not a block index");
    bad_config("{\"model_type\":\"qwen2_moe\",\"mlp_only_layers\":3}",
               "mlp_only_layers is a number, not a list of block indices");
    bad_config("{\"model_type\":\"olmoe\",\"num_experts\":-64}", "num_experts is -64: negative");
    bad_config("{\"model_type\":\"olmoe\",\"num_key_value_heads\":5}",
               "num_attention_heads 16 is not a multiple of num_key_value_heads 5");
}

Test(moe, config_layouts_interleaved) {
    char err[512];
    vram_model m;
    /* a MoE block every second one (Qwen's decoder_sparse_step): the others dense; only how
       many of each counts, not where they are */
    const char *j =
        "{\"model_type\":\"qwen3_moe\",\"num_hidden_layers\":48,\"decoder_sparse_step\":2}";
    m = parse(j);
    cr_assert_eq(m.arch.dense_layers, 24, "blocks 1, 3, ..., 47 routed: %llu dense",
                 (unsigned long long)m.arch.dense_layers);
    j = "{\"model_type\":\"qwen2_moe\",\"decoder_sparse_step\":3,\"mlp_only_layers\":[2]}";
    m = parse(j);
    cr_assert_eq(m.arch.dense_layers, 17, "blocks 5, 8, ..., 23 routed (2 listed dense)");
    /* dense blocks that are not the first ones */
    j = "{\"model_type\":\"qwen2_moe\",\"mlp_only_layers\":[1,3,3]}";
    m = parse(j);
    cr_assert_eq(m.arch.dense_layers, 2, "a block listed twice is one block");
    j = "{\"model_type\":\"qwen2_moe\",\"mlp_only_layers\":[24]}";
    cr_assert_eq(vram_config_parse(j, strlen(j), "config.json", &m, err, sizeof err),
                 VRAM_E_FORMAT);
    cr_assert_not_null(strstr(err, "mlp_only_layers holds 24, not a block index in 0..23"), "%s",
                       err);
    /* DeepSeek's moe_layer_freq: block i routes when i >= first_k_dense_replace and
       i % moe_layer_freq == 0 (DeepSeek's own modelling code; transformers' classes ignore
       the key). 6 blocks, the first dense, freq 2: experts in blocks 2 and 4 only */
    {
#define DS_SMALL                                                                              \
    "{\"model_type\":\"deepseek_v3\",\"num_hidden_layers\":6,\"first_k_dense_replace\":1,"       \
    "\"hidden_size\":64,\"intermediate_size\":96,\"moe_intermediate_size\":16,"                \
    "\"n_routed_experts\":8,\"num_experts_per_tok\":2,\"n_shared_experts\":1,"                 \
    "\"num_attention_heads\":4,\"num_key_value_heads\":4,\"q_lora_rank\":32,"                   \
    "\"kv_lora_rank\":16,\"qk_nope_head_dim\":8,\"qk_rope_head_dim\":8,\"v_head_dim\":8,"       \
    "\"vocab_size\":100"
        const char *j1 = DS_SMALL "}", *j2 = DS_SMALL ",\"moe_layer_freq\":2}";
        const char *j3 = DS_SMALL ",\"moe_layer_freq\":7}";
#undef DS_SMALL
        vram_model m1 = parse(j1);
        cr_assert_eq(m1.arch.dense_layers, 1, "freq 1: blocks 1-5 routed");
        cr_assert_eq(vram_config_parse(j2, strlen(j2), "config.json", &m, err, sizeof err),
                     VRAM_OK, "%s", err);
        cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
        cr_assert_eq(m.arch.experts, 8);
        cr_assert_eq(m.arch.dense_layers, 4, "blocks 0, 1, 3, 5 dense");
        cr_assert_not_null(strstr(err, "config.json: moe_layer_freq 2: experts in 2 of the 6 "
                                       "blocks"),
                           "%s", err);
        cr_assert_not_null(strstr(err, "transformers' DeepseekV2/V3 classes ignore the key"),
                           "%s", err);
        /* by hand: three blocks (1, 3, 5) trade their MoE MLP (a router 64 x 8, eight
           experts of 3 x 64 x 16 and the shared one) for a dense one (3 x 64 x 96) */
        const uint64_t moe_mlp = 64 * 8 + 8 * 3 * 64 * 16 + 3 * 64 * 16, dense = 3 * 64 * 96;
        vram_param_count p1 = count(&m1), p2 = count(&m);
        cr_assert_eq(p2.total, p1.total - 3 * (moe_mlp - dense));
        cr_assert_eq(p2.expert_params, 2ull * 8 * 3 * 64 * 16, "two routed blocks");
        cr_assert_eq(p2.active, p2.total - 2ull * 6 * 3 * 64 * 16, "6 of 8 experts idle");
        /* a frequency past the last block: no block routes */
        cr_assert_eq(vram_config_parse(j3, strlen(j3), "config.json", &m, err, sizeof err),
                     VRAM_OK, "%s", err);
        cr_assert_eq(m.arch.dense_layers, 6, "%s", err);
        /* 0 is not a frequency */
        j = "{\"model_type\":\"deepseek_v3\",\"moe_layer_freq\":0}";
        cr_assert_eq(vram_config_parse(j, strlen(j), "config.json", &m, err, sizeof err),
                     VRAM_E_FORMAT);
        cr_assert_not_null(strstr(err, "moe_layer_freq"), "%s", err);
    }
    /* DeepSeek-V2-Lite: q_lora_rank null, q projected directly */
    j = "{\"model_type\":\"deepseek_v2\",\"q_lora_rank\":null,\"hidden_size\":2048,"
        "\"num_attention_heads\":16,\"num_key_value_heads\":16,\"num_hidden_layers\":27,"
        "\"n_routed_experts\":64,\"moe_intermediate_size\":1408,\"intermediate_size\":10944,"
        "\"vocab_size\":102400}";
    m = parse(j);
    cr_assert_eq(m.arch.q_lora_rank, 0);
    vram_param_count pc = count(&m);
    /* published: 15.7B total, 2.4B active (without the input embedding, as gpt-oss's) */
    near("DeepSeek-V2-Lite total", pc.total, 15700000000ull, 10);
    near("DeepSeek-V2-Lite active", pc.active - 102400ull * 2048, 2400000000ull, 50);
}

/* ---- built-in models --------------------------------------------------------------- */

Test(moe, builtin_moe_model) {
    size_t n, found = 0;
    const vram_builtin_model *b = vram_builtin_models(&n);
    for (size_t i = 0; i < n; i++) {
        if (b[i].arch.experts == 0) continue;
        vram_model m;
        vram_builtin_to_model(&b[i], &m);
        vram_param_count pc = count(&m);
        cr_assert(pc.active < pc.total, "%s", b[i].name);
        found++;
    }
    cr_assert(found >= 1, "at least one built-in mixture of experts");
    /* the preset agrees with the count from the model's config.json */
    const vram_builtin_model *q = vram_builtin_find("Qwen3-30B-A3B");
    cr_assert_not_null(q);
    vram_model pm, cm = parse(qwen3_moe_cfg);
    vram_builtin_to_model(q, &pm);
    cr_assert_eq(count(&pm).total, count(&cm).total);
    cr_assert_eq(count(&pm).active, count(&cm).active);
}

/* ---- the working set beside the cache, against PyTorch's accounting ------------------ */

/* the activations term of an inference at batch b, seq s, bf16, fused attention or not */
static vram_term infer_act_of(const vram_model *m, uint64_t b, uint64_t s, int flash) {
    vram_workload w;
    vram_estimate e;
    memset(&w, 0, sizeof w);
    w.batch = b;
    w.seq = s;
    w.compute = VRAM_DTYPE_BF16;
    w.format = VRAM_DTYPE_BF16;
    w.flash_attention = flash;
    cr_assert_eq(vram_estimate_model(m, &w, &e), VRAM_OK);
    return e.term[VRAM_TERM_ACTIVATIONS];
}

static vram_term infer_act(const vram_model *m, uint64_t b, uint64_t s) {
    return infer_act_of(m, b, s, 1);
}

/* The "measured" bytes below are test/truth/'s: torch's MemTracker over transformers 5.23's
 * forward on fake tensors (bf16, experts_implementation "grouped_mm", fused attention), the
 * peak less the weights and the cache (test/truth/workloads.tsv rows; `test/truth/run.sh
 * build/driver/vramkit --only minimax-m2,gpt-oss-defaults,glm-5 --json F`). */

Test(moe, routed_outputs_in_fp32_are_the_peak_of_narrow_experts) {
    /* MiniMax-M2 (MiniMaxM2Config's defaults): hidden 3072, top-8 of 256 experts of 1536.
       Its router's weights are fp32, so transformers' grouped experts scale their outputs
       into fp32 and put them back in token order: copies and outputs (2 x top-k x h in
       bf16) beside two fp32 tensors of top-k x h (4 more units of 2 bytes): 6 x 8 x 3072 a
       token, above the gate (8 x 3072 + 4 x 8 x 1536); with the 4 hidden states, b1 s4096:
       2 x 4096 x (4 x 3072 + 6 x 8 x 3072) = 1,308,622,848. Measured beside the cache:
       1,314,326,528 (0.4% more: the router's fp32 scores, the indices). */
    vram_model m = parse("{\"model_type\":\"minimax_m2\"}");
    cr_assert(m.arch.moe_flags & VRAM_MOE_ROUTE_FP32);
    vram_term t = infer_act(&m, 1, 4096);
    cr_assert_eq(t.expected, 2ull * 4096 * (4 * 3072 + 6 * 8 * 3072));
    near("MiniMax-M2 working set against torch's", t.expected, 1314326528ull, 10);
    cr_assert(t.high >= 1314326528ull, "the measured peak inside the range");
    /* routed in bf16 the same experts' last moment is 4 x top-k x h: the count made before,
       905,969,664, a false fit against the measured */
    m.arch.moe_flags &= ~VRAM_MOE_ROUTE_FP32;
    cr_assert_eq(infer_act(&m, 1, 4096).expected, 2ull * 4096 * (4 * 3072 + 4 * 8 * 3072));
}

Test(moe, wide_experts_peak_at_the_gate) {
    /* Mixtral-8x7B (routed in fp32 too): top-2 of width 14336 at hidden 4096, the gate is
       the largest moment: copies 2 x 4096 beside 4 x 2 x 14336; b1 s4096 with the hidden
       states: 2 x 4096 x (4 x 4096 + 2 x 4096 + 8 x 14336) = 1,140,850,688; measured
       1,143,374,848 */
    vram_model m = parse(mixtral_cfg);
    vram_term t = infer_act(&m, 1, 4096);
    cr_assert_eq(t.expected, 2ull * 4096 * (4 * 4096 + 2 * 4096 + 8 * 14336));
    near("Mixtral working set against torch's", t.expected, 1143374848ull, 10);
}

Test(moe, biased_experts_and_gpt_oss_gate) {
    /* gpt-oss: top-4 of width 2880 at hidden 2880, biased experts (each token's row of the
       gate and up bias gathered, 2 x 2880) and a clamped gate (gate and up clamped, up
       shifted, the gate scaled: 3 more): at the gate, copies 4 x 2880 beside (4 + 2 + 3) x 4
       x 2880. b32 s128 (4096 tokens), fused attention: 2 x 4096 x (4 x 2880 + 4 x 2880 + 9
       x 4 x 2880) = 1,038,090,240. transformers runs gpt-oss's attention (with its sinks)
       eagerly, and the block keeps the probabilities (32 x 64 heads x 128 x 128) through
       the MLP: 67,108,864 more. Measured on GptOssConfig's defaults (gpt-oss-120b, the same
       block), eager: 1,109,453,824 */
    vram_model m = parse("{\"model_type\":\"gpt_oss\"}");
    cr_assert(m.arch.moe_flags & VRAM_MOE_GATE_CLAMP);
    vram_term t = infer_act(&m, 32, 128);
    cr_assert_eq(t.expected, 2ull * 4096 * (4 * 2880 + 4 * 2880 + 9 * 4 * 2880));
    vram_term eager = infer_act_of(&m, 32, 128, 0);
    cr_assert_eq(eager.expected, t.expected + 2ull * 32 * 64 * 128 * 128);
    near("gpt-oss eager working set against torch's", eager.expected, 1109453824ull, 10);
    /* without the clamp, 3 x 4 x 2880 less a token */
    m.arch.moe_flags &= ~VRAM_MOE_GATE_CLAMP;
    cr_assert_eq(infer_act(&m, 32, 128).expected,
                 2ull * 4096 * (4 * 2880 + 4 * 2880 + 6 * 4 * 2880));
}

Test(moe, an_indexer_scores_every_key_in_fp32) {
    /* GLM-5 (GlmMoeDsaConfig's defaults): 32 indexer heads score every query against every
       key in fp32, the product and its scaled copy alive together (8 bytes a score a head),
       beside attention's q, k and v (3 x (64 x 256 + 64 x 256) a token, latent attention
       expanded): b1 s4096: 2 x 4096 x 4 x 6144 + 2 x 4096 x 6 x 16384 + 8 x 4096 x 4096 x
       32 = 5,301,600,256. Measured: 5,275,451,392 (8.16 bytes a score a head, found by
       halving the heads) */
    vram_model m = parse("{\"model_type\":\"glm_moe_dsa\"}");
    cr_assert_eq(m.arch.index_heads, 32);
    vram_term t = infer_act(&m, 1, 4096);
    cr_assert_eq(t.expected, 2ull * 4096 * 4 * 6144 + 2ull * 4096 * 6 * 16384 +
                                 8ull * 4096 * 4096 * 32);
    near("GLM-5 working set against torch's", t.expected, 5275451392ull, 10);
    /* without the indexer's scores, attention's tensors alone: the experts' last moment is
       larger (2 x 4096 x (4 x 6144 + 6 x 8 x 6144)) and the count 2.6 GB, a false fit */
    m.arch.index_heads = 0;
    cr_assert_eq(infer_act(&m, 1, 4096).expected, 2ull * 4096 * (4 * 6144 + 6 * 8 * 6144));
}

/* Every row of the table with experts routes as transformers does: VRAM_MOE_ROUTE_FP32
 * exactly where test/models/moe_route.tsv (moe_route.py --write: the dtype of the routing
 * weights transformers' experts receive, the class defaults in bf16 on fake tensors; `ctest
 * -L truth` re-derives it) says f32. Types the table does not hold are refused or guessed
 * by the reader and left out here. */
Test(moe, routing_format_of_each_row_is_transformers) {
    FILE *f = fopen(VRAMKIT_SOURCE_DIR "/test/models/moe_route.tsv", "r");
    char line[256];
    int rows = 0, f32 = 0;
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f)) {
        char type[128], fmt[32], json[256], err[512];
        vram_model m;
        if (line[0] == '#') continue;
        cr_assert_eq(sscanf(line, "%127s %31s", type, fmt), 2, "%s", line);
        cr_assert(strcmp(fmt, "f32") == 0 || strcmp(fmt, "compute") == 0, "%s", line);
        snprintf(json, sizeof json, "{\"model_type\":\"%s\"}", type);
        if (vram_config_parse(json, strlen(json), "config.json", &m, err, sizeof err) != VRAM_OK ||
            m.arch.experts == 0 || m.guess_low != 0)
            continue; /* not a row of the table */
        const int want = strcmp(fmt, "f32") == 0;
        cr_expect_eq((m.arch.moe_flags & VRAM_MOE_ROUTE_FP32) != 0, want,
                     "%s: transformers routes in %s, the row says otherwise", type, fmt);
        rows++;
        f32 += want;
    }
    fclose(f);
    cr_assert_geq(rows, 24, "%d rows of the table checked", rows);
    cr_assert_geq(f32, 10, "%d of them in fp32", f32);
}

Test(moe, llama4_runs_every_expert_over_every_token) {
    /* Llama-4-Scout (Llama4TextConfig's defaults: hidden 5120, 16 experts of 8192, top-1).
       transformers' Llama4TextMoe copies every token for all 16 experts and runs them all,
       the router's scores zero for the rest: T = 16 x 4096 rows at b1 s4096; at the gate,
       the rows (5120) beside gate and up (2 x 8192), the activation and the product:
       T x (5120 + 4 x 8192); with the 4 hidden states, 2 x 4096 x (4 x 5120 + 16 x (5120 +
       4 x 8192)) = 5,133,828,096. Measured beside the cache: 5,178,214,400 (the routed count
       was 570,425,344: a false fit by 9x) */
    vram_model m = parse_noted("{\"model_type\":\"llama4_text\"}",
                               "transformers runs all 16 experts over every token");
    cr_assert(m.arch.moe_flags & VRAM_MOE_EVERY_EXPERT);
    vram_term t = infer_act(&m, 1, 4096);
    cr_assert_eq(t.expected, 2ull * 4096 * (4 * 5120 + 16 * (5120 + 4 * 8192)));
    near("Llama 4 Scout's working set against torch's", t.expected, 5178214400ull, 10);
    /* low: an engine that routes (vLLM, llama.cpp), as the routed count has it */
    m.arch.moe_flags &= ~VRAM_MOE_EVERY_EXPERT;
    vram_term routed = infer_act(&m, 1, 4096);
    cr_assert_eq(t.low, routed.low);
    cr_assert(routed.expected < t.expected / 8);
}
