/* Unit tests of the config.json reader (driver/models/model_config.c): the public configs of the
 * models vramkit's users run, read into architecture numbers whose parameter count
 * (vram_arch_params) must equal the published one exactly; the defaults of each config
 * class; the fallback and notes; and every bad number with the key it names. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/gen/model_fixtures.h"
#include "models/model_read.h"

/* ---- public configs ------------------------------------------------------------------- */

struct cfg_case {
    char name[32];
    char json[1600];
    vram_family family;
    uint64_t layers, enc, dec, hidden, heads, kv, head_dim, inter, dec_inter, vocab, positions,
        type_vocab, context;
    vram_mlp mlp;
    vram_norm norm;
    uint32_t flags;
    uint64_t extra;
    vram_dtype dtype;
    uint64_t total; /* the published parameter count */
};

#define QOM (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS)

ParameterizedTestParameters(config, public_models) {
    static struct cfg_case cases[] = {
        {"gpt2",
         FX_CFG_GPT2,
         VRAM_FAMILY_DECODER,
         12,
         0,
         0,
         768,
         12,
         0,
         0,
         3072,
         0,
         50257,
         1024,
         0,
         1024,
         VRAM_MLP_PLAIN,
         VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED,
         0,
         VRAM_DTYPE_NONE,
         124439808ull},
        {"Meta-Llama-3-8B",
         FX_CFG_META_LLAMA_3_8B,
         VRAM_FAMILY_DECODER,
         32,
         0,
         0,
         4096,
         32,
         8,
         0,
         14336,
         0,
         128256,
         0,
         0,
         8192,
         VRAM_MLP_GATED,
         VRAM_NORM_RMS,
         VRAM_ARCH_FINAL_NORM,
         0,
         VRAM_DTYPE_BF16,
         8030261248ull},
        {"Mistral-7B-v0.1",
         FX_CFG_MISTRAL_7B_V0_1,
         VRAM_FAMILY_DECODER,
         32,
         0,
         0,
         4096,
         32,
         8,
         0,
         14336,
         0,
         32000,
         0,
         0,
         32768,
         VRAM_MLP_GATED,
         VRAM_NORM_RMS,
         VRAM_ARCH_FINAL_NORM,
         0,
         VRAM_DTYPE_BF16,
         7241732096ull},
        {"Qwen2.5-0.5B",
         FX_CFG_QWEN2_5_0_5B,
         VRAM_FAMILY_DECODER,
         24,
         0,
         0,
         896,
         14,
         2,
         0,
         4864,
         0,
         151936,
         0,
         0,
         32768,
         VRAM_MLP_GATED,
         VRAM_NORM_RMS,
         VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED | VRAM_ARCH_QKV_BIAS,
         0,
         VRAM_DTYPE_BF16,
         494032768ull},
        {"multilingual-e5-large",
         FX_CFG_MULTILINGUAL_E5_LARGE,
         VRAM_FAMILY_ENCODER,
         24,
         0,
         0,
         1024,
         16,
         0,
         0,
         4096,
         0,
         250002,
         514,
         1,
         512,
         VRAM_MLP_PLAIN,
         VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD,
         1024ull * 1024 + 1024,
         VRAM_DTYPE_F32,
         559890432ull},
        {"distilbert-base-uncased",
         FX_CFG_DISTILBERT_BASE_UNCASED,
         VRAM_FAMILY_ENCODER,
         6,
         0,
         0,
         768,
         12,
         0,
         0,
         3072,
         0,
         30522,
         512,
         0,
         512,
         VRAM_MLP_PLAIN,
         VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_EMB_NORM | VRAM_ARCH_TIED,
         768ull * 768 + 768 + 2 * 768 + 30522,
         VRAM_DTYPE_NONE,
         66985530ull},
        {"nllb-200-distilled-600M",
         FX_CFG_NLLB_200_DISTILLED_600M,
         VRAM_FAMILY_ENCODER_DECODER,
         0,
         12,
         12,
         1024,
         16,
         0,
         0,
         4096,
         4096,
         256206,
         0,
         0,
         1024,
         VRAM_MLP_PLAIN,
         VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED,
         0,
         VRAM_DTYPE_F32,
         615073792ull},
        {"t5-small",
         FX_CFG_T5_SMALL,
         VRAM_FAMILY_ENCODER_DECODER,
         0,
         6,
         6,
         512,
         8,
         0,
         64,
         2048,
         0,
         32128,
         0,
         0,
         512,
         VRAM_MLP_PLAIN,
         VRAM_NORM_RMS,
         VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED,
         2 * 32 * 8,
         VRAM_DTYPE_NONE,
         60506624ull},
        {"bart-large",
         FX_CFG_BART_LARGE,
         VRAM_FAMILY_ENCODER_DECODER,
         0,
         12,
         12,
         1024,
         16,
         0,
         0,
         4096,
         4096,
         50265,
         1026,
         0,
         1024,
         VRAM_MLP_PLAIN,
         VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_EMB_NORM | VRAM_ARCH_TIED,
         1026ull * 1024 + 2048,
         VRAM_DTYPE_NONE,
         406291456ull},
        {"bert-base-uncased",
         FX_CFG_BERT_BASE_UNCASED,
         VRAM_FAMILY_ENCODER,
         12,
         0,
         0,
         768,
         12,
         0,
         0,
         3072,
         0,
         30522,
         512,
         2,
         512,
         VRAM_MLP_PLAIN,
         VRAM_NORM_LAYER,
         QOM | VRAM_ARCH_EMB_NORM | VRAM_ARCH_TIED,
         768ull * 768 + 768 + 2 * 768 + 30522,
         VRAM_DTYPE_NONE,
         109514298ull},
        {"gemma-2-2b",
         FX_CFG_GEMMA_2_2B,
         VRAM_FAMILY_DECODER,
         26,
         0,
         0,
         2304,
         8,
         4,
         256,
         9216,
         0,
         256000,
         0,
         0,
         8192,
         VRAM_MLP_GATED,
         VRAM_NORM_RMS,
         VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED,
         26ull * 2 * 2304,
         VRAM_DTYPE_F32,
         2614341888ull},
    };
    return cr_make_param_array(struct cfg_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct cfg_case *c, config, public_models) {
    vram_model m;
    char err[512];
    memset(&m, 0x42, sizeof m);
    vram_status st =
        vram_config_parse(c->json, strlen(c->json), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "[%s] %s", c->name, err);
    cr_assert_str_empty(err, "[%s] no note: %s", c->name, err);
    const vram_arch *a = &m.arch;
    cr_assert_eq(a->family, c->family, "[%s] family", c->name);
    cr_assert_eq(a->layers, c->layers, "[%s] layers %llu", c->name, (unsigned long long)a->layers);
    cr_assert_eq(a->encoder_layers, c->enc, "[%s] encoder_layers", c->name);
    cr_assert_eq(a->decoder_layers, c->dec, "[%s] decoder_layers", c->name);
    cr_assert_eq(a->hidden, c->hidden, "[%s] hidden", c->name);
    cr_assert_eq(a->heads, c->heads, "[%s] heads", c->name);
    cr_assert_eq(a->kv_heads, c->kv, "[%s] kv_heads %llu", c->name,
                 (unsigned long long)a->kv_heads);
    cr_assert_eq(a->head_dim, c->head_dim, "[%s] head_dim", c->name);
    cr_assert_eq(a->intermediate, c->inter, "[%s] intermediate", c->name);
    cr_assert_eq(a->decoder_intermediate, c->dec_inter, "[%s] decoder_intermediate", c->name);
    cr_assert_eq(a->vocab, c->vocab, "[%s] vocab", c->name);
    cr_assert_eq(a->positions, c->positions, "[%s] positions", c->name);
    cr_assert_eq(a->type_vocab, c->type_vocab, "[%s] type_vocab", c->name);
    cr_assert_eq(a->context, c->context, "[%s] context %llu", c->name,
                 (unsigned long long)a->context);
    cr_assert_eq(a->mlp, c->mlp, "[%s] mlp", c->name);
    cr_assert_eq(a->norm, c->norm, "[%s] norm", c->name);
    cr_assert_eq(a->flags, c->flags, "[%s] flags %#x, wanted %#x", c->name, a->flags, c->flags);
    cr_assert_eq(a->extra_params, c->extra, "[%s] extra %llu", c->name,
                 (unsigned long long)a->extra_params);
    cr_assert_eq(m.dtype, c->dtype, "[%s] dtype", c->name);
    cr_assert_eq(m.stats.tensors, 0, "[%s] no tensors from a config", c->name);
    cr_assert_eq(m.blocks, 0);
    vram_param_count pc = {0};
    cr_assert_eq(vram_arch_params(a, &pc), VRAM_OK, "[%s] the core takes the arch", c->name);
    cr_assert_eq(pc.total, c->total, "[%s] %llu parameters, published %llu", c->name,
                 (unsigned long long)pc.total, (unsigned long long)c->total);
}

/* ---- defaults, heads and notes ------------------------------------------------------- */

static vram_model parse_ok(const char *json, char *err, size_t cap) {
    vram_model m;
    vram_status st = vram_config_parse(json, strlen(json), "config.json", &m, err, cap);
    cr_assert_eq(st, VRAM_OK, "%s: %s", json, err);
    return m;
}

static uint64_t total(const vram_model *m) {
    vram_param_count pc = {0};
    cr_assert_eq(vram_arch_params(&m->arch, &pc), VRAM_OK);
    return pc.total;
}

Test(config, class_defaults) {
    char err[512];
    /* GPT2Config() is GPT-2 small */
    vram_model m = parse_ok("{\"model_type\":\"gpt2\"}", err, sizeof err);
    cr_assert_eq(total(&m), 124439808ull);
    /* M2M100Config(): 128112 x 1024, 12 + 12 layers, ffn 4096, tied */
    m = parse_ok("{\"model_type\":\"m2m_100\"}", err, sizeof err);
    cr_assert_eq(m.arch.vocab, 128112);
    cr_assert_eq(m.arch.encoder_layers, 12);
    cr_assert_eq(m.arch.decoder_intermediate, 4096);
    cr_assert(m.arch.flags & VRAM_ARCH_TIED);
    /* LlamaConfig(): Llama-2-7B's shape, 6,738,415,616 parameters */
    m = parse_ok("{\"model_type\":\"llama\",\"num_key_value_heads\":null,\"head_dim\":null}", err,
                 sizeof err);
    cr_assert_eq(m.arch.kv_heads, 32);
    cr_assert_eq(m.arch.context, 2048);
    cr_assert_eq(total(&m), 6738415616ull);
    /* MistralConfig(): 8 KV heads, a 131072-token context */
    m = parse_ok("{\"model_type\":\"mistral\"}", err, sizeof err);
    cr_assert_eq(m.arch.kv_heads, 8);
    cr_assert_eq(m.arch.context, 131072);
    /* T5Config(): num_decoder_layers follows num_layers */
    m = parse_ok("{\"model_type\":\"t5\",\"num_layers\":24,\"feed_forward_proj\":\"gated-gelu\","
                 "\"tie_word_embeddings\":false}",
                 err, sizeof err);
    cr_assert_eq(m.arch.decoder_layers, 24);
    cr_assert_eq(m.arch.mlp, VRAM_MLP_GATED);
    cr_assert_eq(m.arch.flags & VRAM_ARCH_TIED, 0);
    /* qwen3's per-head norms, gpt_neox's biases */
    m = parse_ok("{\"model_type\":\"qwen3\",\"num_hidden_layers\":28}", err, sizeof err);
    cr_assert_eq(m.arch.extra_params, 28 * 2 * 128);
    m = parse_ok("{\"model_type\":\"gpt_neox\",\"attention_bias\":false}", err, sizeof err);
    cr_assert_eq(m.arch.flags, VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM);
    cr_assert_eq(m.arch.mlp, VRAM_MLP_PLAIN);
    /* phi3: kv follows heads */
    m = parse_ok("{\"model_type\":\"phi3\"}", err, sizeof err);
    cr_assert_eq(m.arch.kv_heads, 32);
    cr_assert_eq(m.arch.vocab, 32064);
}

Test(config, encoder_heads) {
    char err[512];
    const uint64_t h = 1024;
    vram_model m = parse_ok("{\"model_type\":\"xlm-roberta\",\"hidden_size\":1024,"
                            "\"num_attention_heads\":16,\"architectures\":"
                            "[\"XLMRobertaForSequenceClassification\"],"
                            "\"id2label\":{\"0\":\"neg\",\"1\":\"neu\",\"2\":\"pos\"}}",
                            err, sizeof err);
    cr_assert_eq(m.arch.extra_params, h * h + h + h * 3 + 3);
    cr_assert(m.arch.flags & VRAM_ARCH_NO_HEAD);
    m = parse_ok("{\"model_type\":\"bert\",\"architectures\":[\"BertForTokenClassification\"],"
                 "\"num_labels\":9}",
                 err, sizeof err);
    cr_assert_eq(m.arch.extra_params, 768 * 9 + 9);
    m = parse_ok("{\"model_type\":\"distilbert\",\"architectures\":[\"DistilBertModel\"]}", err,
                 sizeof err);
    cr_assert_eq(m.arch.extra_params, 0, "DistilBERT has no pooler");
    m = parse_ok("{\"model_type\":\"bert\",\"architectures\":[\"BertForMaskedLM\"],"
                 "\"tie_word_embeddings\":false}",
                 err, sizeof err);
    cr_assert_eq(m.arch.flags & (VRAM_ARCH_TIED | VRAM_ARCH_NO_HEAD), 0, "an own head");
    m = parse_ok("{\"model_type\":\"bert\",\"architectures\":[\"BertForQuestionAnswering\"]}", err,
                 sizeof err);
    cr_assert_not_null(strstr(err, "'BertForQuestionAnswering': its task head is not counted"),
                       "%s", err);
    cr_assert(m.arch.flags & VRAM_ARCH_NO_HEAD);
}

Test(config, dtypes) {
    char err[512];
    struct {
        const char *json;
        vram_dtype want;
    } cases[] = {
        {"{\"model_type\":\"llama\",\"torch_dtype\":\"float16\"}", VRAM_DTYPE_F16},
        {"{\"model_type\":\"llama\",\"torch_dtype\":\"torch.bfloat16\"}", VRAM_DTYPE_BF16},
        {"{\"model_type\":\"llama\",\"dtype\":\"float32\"}", VRAM_DTYPE_F32},
        {"{\"model_type\":\"llama\",\"torch_dtype\":\"auto\"}", VRAM_DTYPE_NONE},
        {"{\"model_type\":\"llama\",\"torch_dtype\":null,\"dtype\":\"float8_e4m3fn\"}",
         VRAM_DTYPE_F8_E4M3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vram_model m = parse_ok(cases[i].json, err, sizeof err);
        cr_assert_eq(m.dtype, cases[i].want, "%s", cases[i].json);
    }
}

Test(config, notes_for_what_is_not_modelled) {
    char err[512];
    /* mixtral, qwen2_moe, qwen3_moe, deepseek_v2/v3, gpt_oss and olmoe are modelled
       (test_moe.c); others not */
    vram_model m =
        parse_ok("{\"model_type\":\"dbrx\",\"num_experts\":16}", err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "config.json: model_type 'dbrx' (mixture of experts)"),
                       "%s", err);
    m = parse_ok("{\"model_type\":\"my_moe\",\"num_experts\":64}", err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "num_experts is 64"), "%s", err);
    /* the fallback: every key of a pattern, or nothing */
    m = parse_ok("{\"model_type\":\"my_llama\",\"num_hidden_layers\":4,\"hidden_size\":256,"
                 "\"num_attention_heads\":4,\"intermediate_size\":512,\"vocab_size\":1000}",
                 err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
    cr_assert_eq(m.arch.mlp, VRAM_MLP_GATED);
    cr_assert_eq(m.arch.flags, VRAM_ARCH_FINAL_NORM, "untied by default: %#x", m.arch.flags);
    cr_assert_not_null(strstr(err, "'my_llama' is not in vramkit's table; read as a Llama-like"),
                       "%s", err);
    m = parse_ok("{\"d_model\":512,\"encoder_layers\":6,\"decoder_layers\":6,"
                 "\"encoder_attention_heads\":8,\"encoder_ffn_dim\":2048,\"vocab_size\":1000}",
                 err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_ENCODER_DECODER);
    cr_assert_eq(m.arch.decoder_intermediate, 4096, "decoder_ffn_dim: M2M100's default");
    cr_assert_not_null(strstr(err, "no model_type; read as an M2M100-like"), "%s", err);
    m = parse_ok("{\"model_type\":\"rwkv\",\"hidden_size\":768,\"num_hidden_layers\":12}", err,
                 sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "'rwkv' is not in vramkit's table and its keys match no known"),
                       "%s", err);
}

/* A config of a type not in the table whose keys say it has what no guessed reading counts:
   refused (family NONE) with the key named, never guessed. Each is the key set of a held-out
   family of transformers (test/models/heldout.py) whose Llama-like guess missed. */
Test(config, guess_refused_on_unseen_structure) {
    char err[512];
    static const char base[] = "\"num_hidden_layers\":4,\"hidden_size\":256,"
                               "\"num_attention_heads\":4,\"intermediate_size\":512,"
                               "\"vocab_size\":1000";
    static const struct {
        const char *extra, *key, *what;
    } cases[] = {
        {"\"mamba_d_state\":128", "mamba_d_state", "a Mamba mixer"},          /* bamba */
        {"\"linear_num_key_heads\":16", "linear_num_key_heads", "linear-attention"}, /* qwen3_5 */
        {"\"hidden_size_per_layer_input\":256", "hidden_size_per_layer_input",
         "per-layer embeddings"},                                             /* gemma4 */
        {"\"per_layer_config\":{\"05\":{\"head_dim\":512}}", "per_layer_config",
         "different widths"},
        {"\"global_head_dim\":512", "global_head_dim", "different widths"},  /* gemma4 */
        {"\"num_global_key_value_heads\":2", "num_global_key_value_heads", "different widths"},
        {"\"num_kv_shared_layers\":20", "num_kv_shared_layers", "reuse another block's keys"},
        {"\"layer_types\":[\"conv\",\"full_attention\",\"conv\",\"full_attention\"]",
         "layer_types", "not attention blocks"},                              /* lfm3 */
        {"\"block_types\":[\"recurrent\",\"attention\"]", "block_types", "several kinds"},
        {"\"kv_lora_rank\":512", "kv_lora_rank", "latent attention"},          /* minicpm3 */
        {"\"vision_config\":{\"hidden_size\":768}", "vision_config", "a vision tower"}, /* git */
        {"\"num_layers_per_stack\":16", "num_layers_per_stack", "looped blocks"}, /* hrm */
        {"\"embedding_size\":128", "embedding_size", "factorized embeddings"}, /* electra */
        {"\"adapter_reduction_factor\":2", "adapter_reduction_factor", "adapters"}, /* xmod */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[512];
        snprintf(json, sizeof json, "{\"model_type\":\"my_new\",%s,%s}", base, cases[i].extra);
        vram_model m = parse_ok(json, err, sizeof err);
        cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE, "%s", json);
        cr_assert_eq(m.guess_low, 0, "%s: no range", json);
        cr_assert_not_null(strstr(err, cases[i].key), "%s: %s", json, err);
        cr_assert_not_null(strstr(err, cases[i].what), "%s: %s", json, err);
        cr_assert_not_null(strstr(err, "architecture left unknown"), "%s: %s", json, err);
    }
    /* null, false and 0 say nothing; layer_types of attention kinds only, an embedding_size
       equal to hidden_size, neither */
    parse_ok("{\"model_type\":\"my_new\",\"num_hidden_layers\":2,\"hidden_size\":256,"
             "\"num_attention_heads\":4,\"intermediate_size\":512,\"vocab_size\":1000,"
             "\"vision_config\":null,\"kv_lora_rank\":0,\"mamba_enabled\":false,"
             "\"embedding_size\":256,"
             "\"layer_types\":[\"sliding_attention\",\"full_attention\"]}",
             err, sizeof err);
    cr_assert_not_null(strstr(err, "read as a Llama-like decoder"), "%s", err);
}

/* A type not in the table whose class is an encoder's (or is_decoder false with no
   generating head) is guessed as a BERT-like encoder: no KV cache, a range that holds the
   BERT-pattern count. */
Test(config, guess_encoder) {
    char err[512];
    vram_param_count pc;
    /* CamembertConfig's defaults: BERT-base's shape, 109,514,298 as BertForMaskedLM */
    static const char camembert[] =
        "{\"model_type\":\"camembert\",\"architectures\":[\"CamembertForMaskedLM\"],"
        "\"num_hidden_layers\":12,\"hidden_size\":768,\"num_attention_heads\":12,"
        "\"intermediate_size\":3072,\"vocab_size\":30522,\"max_position_embeddings\":512,"
        "\"type_vocab_size\":2,\"is_decoder\":false}";
    vram_model m = parse_ok(camembert, err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_ENCODER);
    cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
    cr_assert_eq(pc.total, 109514298ull, "%llu", (unsigned long long)pc.total);
    cr_assert(m.guess_low <= pc.total && pc.total <= m.guess_high, "%llu..%llu",
              (unsigned long long)m.guess_low, (unsigned long long)m.guess_high);
    cr_assert_not_null(strstr(err, "read as a BERT-like encoder"), "%s", err);
    /* is_decoder false and a class that generates nothing: an encoder too */
    m = parse_ok("{\"model_type\":\"my_enc\",\"architectures\":[\"MyEncModel\"],"
                 "\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":4,"
                 "\"intermediate_size\":128,\"vocab_size\":100,\"is_decoder\":false}",
                 err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_ENCODER);
    /* a causal-LM class with is_decoder false (transformers' default on every config): a
       decoder */
    m = parse_ok("{\"model_type\":\"my_dec\",\"architectures\":[\"MyDecForCausalLM\"],"
                 "\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":4,"
                 "\"intermediate_size\":128,\"vocab_size\":100,\"is_decoder\":false}",
                 err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER);
}

/* DeepSeek-V3.2: V3 and the indexer in every block; mlp_layer_types, when given, says which
   blocks route (transformers builds by it). */
Test(config, deepseek_v32) {
    char err[512];
    vram_model v3 = parse_ok("{\"model_type\":\"deepseek_v3\"}", err, sizeof err);
    vram_model v32 = parse_ok("{\"model_type\":\"deepseek_v32\"}", err, sizeof err);
    /* 61 blocks of wq_b 1536 x 64 x 128, wk 7168 x 128, a LayerNorm of 128, weights_proj
       7168 x 64 */
    cr_assert_eq(v32.arch.extra_params - v3.arch.extra_params,
                 61ull * (1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64));
    cr_assert_eq(total(&v32), 671877929216ull, "DeepseekV32Config's count in transformers");
    char json[1024] = "{\"model_type\":\"deepseek_v32\",\"num_hidden_layers\":4,"
                      "\"mlp_layer_types\":[\"dense\",\"sparse\",\"dense\",\"sparse\"]}";
    vram_model m = parse_ok(json, err, sizeof err);
    cr_assert_eq(m.arch.dense_layers, 2);
}

/* Glm4MoeConfig has no head_dim: its attention takes hidden // heads, rounded down (the
   class's 4096 / 96 -> 42, 103481200640 parameters in transformers 5.24); a file's head_dim
   (GLM-4.5's 128) wins. num_nextn_predict_layers: the MTP block is named in a note, not
   counted. */
Test(config, glm4_moe_defaults) {
    char err[512];
    vram_model m = parse_ok("{\"model_type\":\"glm4_moe\"}", err, sizeof err);
    cr_assert_eq(m.arch.head_dim, 42);
    cr_assert_eq(total(&m), 103481200640ull, "Glm4MoeConfig's count in transformers");
    cr_assert_str_empty(err, "no MTP key, no note: %s", err);
    m = parse_ok("{\"model_type\":\"glm4_moe\",\"head_dim\":128,"
                 "\"num_nextn_predict_layers\":1}",
                 err, sizeof err);
    cr_assert_eq(m.arch.head_dim, 128);
    cr_assert_eq(m.arch.layers, 46, "the MTP block is not a block of the count");
    cr_assert_not_null(strstr(err, "config.json: num_nextn_predict_layers 1: the checkpoint's "
                                   "multi-token-prediction block (from block 46 on) is not "
                                   "counted"),
                       "%s", err);
    m = parse_ok("{\"model_type\":\"glm4_moe\",\"num_nextn_predict_layers\":0}", err,
                 sizeof err);
    cr_assert_str_empty(err, "0 MTP blocks: no note: %s", err);
    /* a hidden width below the heads leaves no head width: refused, as before */
    const char *small = "{\"model_type\":\"glm4_moe\",\"hidden_size\":64}";
    vram_status st = vram_config_parse(small, strlen(small), "config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_E_FORMAT, "%s", err);
    cr_assert_not_null(strstr(err, "hidden_size 64 is not a multiple of num_attention_heads 96"),
                       "%s", err);
}

/* Glm4MoeLiteConfig (GLM-4.7-Flash): DeepSeek-V3's latent attention and experts; the first
   block dense by mlp_layer_types' default, and first_k_dense_replace is no key of the class
   (transformers builds by mlp_layer_types alone). */
Test(config, glm4_moe_lite) {
    char err[512];
    vram_model m = parse_ok("{\"model_type\":\"glm4_moe_lite\"}", err, sizeof err);
    cr_assert_eq(total(&m), 29943390976ull, "Glm4MoeLiteConfig's count in transformers 5.24");
    cr_assert_eq(m.arch.dense_layers, 1);
    cr_assert_eq(m.arch.kv_lora_rank, 512);
    cr_assert_eq(m.arch.head_dim, 192 + 64);
    m = parse_ok("{\"model_type\":\"glm4_moe_lite\",\"first_k_dense_replace\":3}", err,
                 sizeof err);
    cr_assert_eq(m.arch.dense_layers, 1, "first_k_dense_replace is not read");
    m = parse_ok("{\"model_type\":\"glm4_moe_lite\",\"num_hidden_layers\":3,"
                 "\"mlp_layer_types\":[\"dense\",\"dense\",\"sparse\"]}",
                 err, sizeof err);
    cr_assert_eq(m.arch.dense_layers, 2);
}

/* GlmMoeDsaConfig (GLM-5): DeepSeek-V3.2's blocks, the indexer in the blocks indexer_types
   calls "full", else by index_topk_pattern, else by index_topk_freq and index_skip_topk_offset.
   Counts are transformers 5.24's (12964528640 with indexers in 2 of 4 blocks, 12983272448 in
   all 4); the cache keeps each indexer's key (index_head_dim 128 a token) beside the latent. */
Test(config, glm_moe_dsa_counted_with_its_indexer_cache) {
    char err[512];
    static const struct {
        const char *json;
        uint64_t total, indexers;
    } cases[] = {
        {"{\"model_type\":\"glm_moe_dsa\",\"num_hidden_layers\":4,"
         "\"indexer_types\":[\"full\",\"shared\",\"full\",\"shared\"]}",
         12964528640ull, 2},
        {"{\"model_type\":\"glm_moe_dsa\",\"num_hidden_layers\":4}", 12983272448ull, 4},
        {"{\"model_type\":\"glm_moe_dsa\",\"num_hidden_layers\":4,"
         "\"index_topk_pattern\":\"FSSF\"}",
         12964528640ull, 2},
        {"{\"model_type\":\"glm_moe_dsa\",\"num_hidden_layers\":4,\"index_topk_freq\":3}",
         12964528640ull, 2},
        {"{\"model_type\":\"glm_moe_dsa\",\"num_hidden_layers\":4,\"index_topk_freq\":2,"
         "\"index_skip_topk_offset\":5}",
         12983272448ull, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vram_model m = parse_ok(cases[i].json, err, sizeof err);
        vram_param_count pc;
        vram_cache_shape cs;
        cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER, "%s: %s", cases[i].json, err);
        cr_assert_eq(vram_arch_params(&m.arch, &pc), VRAM_OK);
        cr_assert_eq(pc.total, cases[i].total, "%s: %llu", cases[i].json,
                     (unsigned long long)pc.total);
        cr_assert_eq(vram_arch_cache(&m.arch, &cs), VRAM_OK);
        cr_assert_eq(cs.per_token, 512 + 64, "the latent and the rotary key");
        cr_assert_eq(cs.extra, cases[i].indexers * 128, "%s", cases[i].json);
    }
    /* DeepSeek-V3.2: the indexer in each of its 61 blocks */
    vram_model d = parse_ok("{\"model_type\":\"deepseek_v32\"}", err, sizeof err);
    vram_cache_shape cs;
    cr_assert_eq(vram_arch_cache(&d.arch, &cs), VRAM_OK);
    cr_assert_eq(cs.extra, 61 * 128);
}

/* MiniMaxConfig (MiniMax-Text-01): lightning attention where layer_types says
   "linear_attention" (by default blocks 1, 3, ...), attention in the others, experts in all;
   counts are transformers 5.24's. The lightning blocks keep heads x head_dim x head_dim a
   sequence, the others keys and values. */
Test(config, minimax_lightning_attention) {
    char err[512];
    vram_model m = parse_ok("{\"model_type\":\"minimax\"}", err, sizeof err);
    cr_assert_eq(total(&m), 47373946880ull, "MiniMaxConfig's count in transformers");
    cr_assert_eq(m.arch.mixer_layers, 16);
    vram_cache_shape cs;
    cr_assert_eq(vram_arch_cache(&m.arch, &cs), VRAM_OK);
    cr_assert_eq(cs.attn_blocks, 16);
    cr_assert_eq(cs.per_token, 2 * 8 * 128);
    cr_assert_eq(cs.state, 16ull * 32 * 128 * 128);
    m = parse_ok("{\"model_type\":\"minimax\",\"num_hidden_layers\":4,\"layer_types\":["
                 "\"linear_attention\",\"linear_attention\",\"linear_attention\","
                 "\"full_attention\"]}",
                 err, sizeof err);
    cr_assert_eq(m.arch.mixer_layers, 3);
    cr_assert_eq(total(&m), 6193070080ull);
    /* 48 heads of 4096 / 48 -> 85 (rounded down, as its attention's fallback) */
    m = parse_ok("{\"model_type\":\"minimax\",\"num_hidden_layers\":2,"
                 "\"num_attention_heads\":48}",
                 err, sizeof err);
    cr_assert_eq(total(&m), 3203358704ull);
}

/* Rows of 2025-26 mixtures of experts on existing block patterns; counts are transformers
   5.24's. SarvamMoEConfig: GLM-4.5's blocks with use_qk_norm true by default, and the
   original config's names (num_experts, num_shared_experts, use_qkv_bias) read when the
   class's own are absent. GraniteMoeSharedConfig: shared_intermediate_size 0 is no shared MLP.
   SolarOpenConfig: attention_bias biases q, k and v, not o. */
Test(config, sarvam_solar_granite_shared) {
    char err[512];
    vram_model m = parse_ok("{\"model_type\":\"sarvam_moe\"}", err, sizeof err);
    cr_assert_eq(total(&m), 32152648064ull);
    cr_assert(m.arch.ops & VRAM_OPS_QK_NORM, "q/k norms by default");
    m = parse_ok("{\"model_type\":\"sarvam_moe\",\"num_hidden_layers\":3,\"num_experts\":16,"
                 "\"num_shared_experts\":2,\"use_qkv_bias\":true}",
                 err, sizeof err);
    cr_assert_eq(m.arch.experts, 16);
    cr_assert_eq(m.arch.shared_intermediate, 2 * 1024);
    cr_assert_eq(m.arch.flags & (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS), VRAM_ARCH_QKV_BIAS);
    cr_assert_eq(total(&m), 2808260480ull);
    m = parse_ok("{\"model_type\":\"sarvam_moe\",\"n_shared_experts\":3,"
                 "\"num_shared_experts\":2}",
                 err, sizeof err);
    cr_assert_eq(m.arch.shared_intermediate, 3 * 1024, "the class's own name first");
    m = parse_ok("{\"model_type\":\"sarvam_mla\"}", err, sizeof err);
    cr_assert_eq(total(&m), 106031763456ull);
    cr_assert_eq(m.arch.q_lora_rank, 0);
    m = parse_ok("{\"model_type\":\"granitemoeshared\"}", err, sizeof err);
    cr_assert_eq(m.arch.shared_intermediate, 0);
    cr_assert_eq(total(&m), 37039116288ull);
    m = parse_ok("{\"model_type\":\"granitemoeshared\",\"num_hidden_layers\":3,"
                 "\"shared_intermediate_size\":1024}",
                 err, sizeof err);
    cr_assert_eq(total(&m), 3747737600ull);
    m = parse_ok("{\"model_type\":\"solar_open\",\"num_hidden_layers\":3,"
                 "\"attention_bias\":true}",
                 err, sizeof err);
    cr_assert_eq(total(&m), 7925721088ull);
}

/* ExaoneMoeConfig has no bias key (its projections never have biases, whatever a file says)
   and no head_dim (hidden // heads); three sliding blocks in four by layer_types' default.
   HYV3Config and FlexOlmoConfig: counts are transformers 5.24's. */
Test(config, exaone_hy_flex) {
    char err[512];
    vram_model m = parse_ok("{\"model_type\":\"exaone_moe\",\"attention_bias\":true}", err,
                            sizeof err);
    cr_assert_eq(m.arch.flags & (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS), 0);
    cr_assert_eq(total(&m), 28550639616ull);
    cr_assert_eq(m.arch.sliding_window, 4096);
    cr_assert_eq(m.arch.window_layers, 24);
    m = parse_ok("{\"model_type\":\"hy_v3\"}", err, sizeof err);
    cr_assert_eq(total(&m), 295033528320ull);
    cr_assert_eq(m.arch.dense_layers, 1);
    m = parse_ok("{\"model_type\":\"flex_olmo\"}", err, sizeof err);
    cr_assert_eq(total(&m), 33270665216ull);
}

/* Qwen3MoeConfig has no head_dim of its own (hidden / heads), and reads num_local_experts as
   num_experts (its attribute_map; transformers 5 writes the former). */
Test(config, qwen3_moe_defaults) {
    char err[512];
    vram_model m = parse_ok("{\"model_type\":\"qwen3_moe\",\"num_local_experts\":64}", err,
                            sizeof err);
    cr_assert_eq(m.arch.head_dim == 0 ? m.arch.hidden / m.arch.heads : m.arch.head_dim, 64);
    cr_assert_eq(m.arch.experts, 64);
    cr_assert_eq(m.arch.layers, 24);
    m = parse_ok("{\"model_type\":\"qwen3_moe\",\"num_experts\":32,\"num_local_experts\":64,"
                 "\"head_dim\":128}",
                 err, sizeof err);
    cr_assert_eq(m.arch.experts, 32, "num_experts first");
    cr_assert_eq(m.arch.head_dim, 128);
}

/* The classic decoders: each config class's defaults count what transformers builds from
   them (test/models/heldout.py printed these totals, transformers 5.24), and the keys that
   change the block. */
Test(config, classic_decoders) {
    char err[512];
    static const struct {
        const char *type;
        uint64_t total;
    } defaults[] = {
        {"opt", 125239296ull},        {"bloom", 16156544ull},
        {"gpt_neo", 1315575808ull},   {"mpt", 1311213568ull},
        {"codegen", 6050882784ull},   {"xglm", 564463616ull},
        {"gpt_neox_japanese", 2598837760ull}, {"openai-gpt", 116534784ull},
        {"ctrl", 1637964550ull},
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        char json[96];
        snprintf(json, sizeof json, "{\"model_type\":\"%s\"}", defaults[i].type);
        vram_model m = parse_ok(json, err, sizeof err);
        cr_assert_eq(m.arch.family, VRAM_FAMILY_DECODER, "%s: %s", defaults[i].type, err);
        cr_assert_str_empty(err, "%s: no note: %s", defaults[i].type, err);
        cr_assert_eq(total(&m), defaults[i].total, "%s: %llu", defaults[i].type,
                     (unsigned long long)total(&m));
    }
    /* OPT: positions offset by 2; the post-norm form has no final norm; no biases */
    vram_model m = parse_ok("{\"model_type\":\"opt\",\"max_position_embeddings\":1024}", err,
                            sizeof err);
    cr_assert_eq(m.arch.positions, 1026);
    cr_assert_eq(m.arch.context, 1024);
    m = parse_ok("{\"model_type\":\"opt\",\"do_layer_norm_before\":false,"
                 "\"enable_bias\":false}",
                 err, sizeof err);
    cr_assert_eq(m.arch.flags, VRAM_ARCH_TIED);
    /* OPT-350m's narrower embeddings, norms without weights: refused, said */
    m = parse_ok("{\"model_type\":\"opt\",\"hidden_size\":1024,\"num_attention_heads\":16,"
                 "\"word_embed_proj_dim\":512}",
                 err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "word_embed_proj_dim differs from hidden_size"), "%s", err);
    m = parse_ok("{\"model_type\":\"opt\",\"layer_norm_elementwise_affine\":false}", err,
                 sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "norms without weights"), "%s", err);
    /* BLOOM: the attribute_map's names and the old n_embed; a norm after the embeddings;
       ALiBi: no positions, no context */
    m = parse_ok("{\"model_type\":\"bloom\",\"num_hidden_layers\":24,\"n_embed\":1024,"
                 "\"num_attention_heads\":16}",
                 err, sizeof err);
    cr_assert_eq(m.arch.layers, 24);
    cr_assert_eq(m.arch.hidden, 1024);
    cr_assert_eq(m.arch.heads, 16);
    cr_assert_eq(m.arch.intermediate, 4096);
    cr_assert_eq(m.arch.positions + m.arch.context, 0);
    cr_assert(m.arch.flags & VRAM_ARCH_EMB_NORM);
    /* GPT-Neo: every pattern expanded; no window (its cache keeps every token) */
    m = parse_ok("{\"model_type\":\"gpt_neo\",\"num_layers\":6,\"attention_types\":"
                 "[[[\"global\",\"local\",\"local\"],2]]}",
                 err, sizeof err);
    cr_assert_eq(m.arch.layers, 6);
    cr_assert_eq(m.arch.sliding_window + m.arch.window_layers, 0);
    cr_assert_eq(m.arch.flags & VRAM_ARCH_QKV_BIAS, 0);
    cr_assert(m.arch.flags & VRAM_ARCH_OUT_BIAS);
    /* MPT: no biases, a weight a norm, 4 x d_model whatever learned_pos_emb says; another
       expansion_ratio refused */
    m = parse_ok("{\"model_type\":\"mpt\",\"learned_pos_emb\":true}", err, sizeof err);
    cr_assert_eq(m.arch.norm, VRAM_NORM_RMS);
    cr_assert_eq(m.arch.positions, 0);
    cr_assert_eq(m.arch.flags, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_TIED);
    m = parse_ok("{\"model_type\":\"mpt\",\"expansion_ratio\":8}", err, sizeof err);
    cr_assert_eq(m.arch.family, VRAM_FAMILY_NONE);
    cr_assert_not_null(strstr(err, "expansion_ratio is not 4"), "%s", err);
    /* GPT-NeoX-Japanese: int(hidden x multiple); the last block's output bias */
    m = parse_ok("{\"model_type\":\"gpt_neox_japanese\",\"hidden_size\":1000,"
                 "\"num_attention_heads\":8,\"intermediate_multiple_size\":2.5}",
                 err, sizeof err);
    cr_assert_eq(m.arch.intermediate, 2500);
    cr_assert_eq(m.arch.extra_params, 1000);
    /* openai-gpt: learned positions, no final norm; CTRL: the head's bias, dff */
    m = parse_ok("{\"model_type\":\"openai-gpt\"}", err, sizeof err);
    cr_assert_eq(m.arch.positions, 512);
    cr_assert_eq(m.arch.flags & VRAM_ARCH_FINAL_NORM, 0);
    m = parse_ok("{\"model_type\":\"ctrl\",\"dff\":4096}", err, sizeof err);
    cr_assert_eq(m.arch.intermediate, 4096);
    cr_assert_eq(m.arch.extra_params, 246534);
    cr_assert_eq(m.arch.positions, 0);
}

/* Bamba: Mamba-2 in the blocks attn_layer_indices leaves out (each listed block once); none
   listed: every block Mamba-2. OLMo-Hybrid: the gated delta rule where layer_types says. */
Test(config, bamba_and_olmo_hybrid) {
    char err[512];
    vram_model m = parse_ok("{\"model_type\":\"bamba\",\"attn_layer_indices\":[9,18,27,9]}",
                            err, sizeof err);
    cr_assert_eq(m.arch.layers, 32);
    cr_assert_eq(m.arch.mixer_layers, 29, "3 blocks of attention: %llu",
                 (unsigned long long)m.arch.mixer_layers);
    vram_cache_shape cs;
    cr_assert_eq(vram_arch_cache(&m.arch, &cs), VRAM_OK);
    cr_assert_eq(cs.attn_blocks, 3);
    cr_assert_eq(cs.per_token, 2 * 8 * 128);
    /* 128 heads of 64 x 256 state, 3 taps of 8192 + 2 x 256 conv channels */
    cr_assert_eq(cs.state, 29ull * (128 * 64 * 256 + 3 * (8192 + 512)));
    m = parse_ok("{\"model_type\":\"bamba\"}", err, sizeof err);
    cr_assert_eq(m.arch.mixer_layers, 32);
    cr_assert_eq(total(&m), 9992765440ull, "BambaConfig(): transformers' count");
    m = parse_ok("{\"model_type\":\"olmo_hybrid\"}", err, sizeof err);
    cr_assert_eq(m.arch.mixer_layers, 24, "3 of each 4 blocks");
    cr_assert_eq(total(&m), 7430870688ull, "OlmoHybridConfig(): transformers' count");
}

/* ---- bad numbers ------------------------------------------------------------------------ */

struct bad_cfg {
    char json[200];
    char n1[96], n2[64];
};

ParameterizedTestParameters(config, bad_numbers) {
    static struct bad_cfg cases[] = {
        {"{\"model_type\":\"gpt2\",\"n_layer\":-12}", "n_layer is -12: negative", ""},
        {"{\"model_type\":\"llama\",\"num_hidden_layers\":12.5}", "num_hidden_layers is 12.5",
         "not an integer"},
        {"{\"model_type\":\"llama\",\"hidden_size\":1e30}",
         "hidden_size is 1e+30, over the limit of 1000000", ""},
        {"{\"model_type\":\"llama\",\"num_hidden_layers\":20000}",
         "num_hidden_layers is 20000, over the limit of 10000", ""},
        {"{\"model_type\":\"llama\",\"vocab_size\":123456789}", "vocab_size is 123456789, over",
         ""},
        {"{\"model_type\":\"llama\",\"vocab_size\":\"32000\"}",
         "vocab_size is a string, not a number", ""},
        {"{\"model_type\":\"llama\",\"num_attention_heads\":0}",
         "num_attention_heads is 0, not a positive integer", ""},
        {"{\"model_type\":\"llama\",\"tie_word_embeddings\":\"yes\"}",
         "tie_word_embeddings is a string, not true or false", ""},
        {"{\"model_type\":\"llama\",\"num_key_value_heads\":5}",
         "num_attention_heads 32 is not a multiple of num_key_value_heads 5", ""},
        {"{\"model_type\":\"llama\",\"num_key_value_heads\":64}",
         "not a multiple of num_key_value_heads 64", ""},
        {"{\"model_type\":\"llama\",\"hidden_size\":4100}",
         "hidden_size 4100 is not a multiple of num_attention_heads 32", ""},
        {"{\"model_type\":\"m2m_100\",\"d_model\":1000}",
         "d_model 1000 is not a multiple of encoder_attention_heads 16", ""},
        {"{\"model_type\":\"llama\",\"head_dim\":100000}",
         "attention width 32 heads x 100000 head_dim", ""},
        {"{\"model_type\":\"bert\",\"hidden_size\":1000000,\"num_attention_heads\":1,"
         "\"architectures\":[\"BertForMaskedLM\"]}",
         "over 10^12", ""},
        {"{\"model_type\":3}", "model_type is a number, not a string", ""},
        {"{\"model_type\":\"llama\",\"torch_dtype\":16}", "torch_dtype is a number, not a string",
         ""},
        {"{\"model_type\":\"t5\",\"feed_forward_proj\":[1]}",
         "feed_forward_proj is an array, not a string", ""},
        {"{\"model_type\":\"qwen2\",\"num_experts\":-1}", "num_experts is -1: negative", ""},
        {"{\"model_type\":\"deepseek_v32\",\"q_lora_rank\":null}",
         "q_lora_rank is null, and the indexer's queries come from it", ""},
        {"{\"model_type\":\"deepseek_v32\",\"index_n_heads\":0}",
         "index_n_heads is 0, not a positive integer", ""},
        {"{\"model_type\":\"deepseek_v32\",\"index_head_dim\":4096,\"index_n_heads\":4096}",
         "index_n_heads 4096 x index_head_dim 4096 is over the width limit", ""},
        {"{\"model_type\":\"deepseek_v32\",\"mlp_layer_types\":[\"dense\"]}",
         "mlp_layer_types has 1 entries, not one per block (61)", ""},
        {"{\"model_type\":\"deepseek_v32\",\"mlp_layer_types\":\"dense\"}",
         "mlp_layer_types is a string, not a list", ""},
        {"{\"model_type\":\"deepseek_v32\",\"mlp_layer_types\":[\"moe\"]}",
         "mlp_layer_types[0] is not \"dense\" or \"sparse\"", ""},
        {"{\"model_type\":\"gpt_neo\",\"attention_types\":\"global\"}",
         "attention_types is a string, not a list", ""},
        {"{\"model_type\":\"gpt_neo\",\"attention_types\":[[\"global\",12]]}",
         "attention_types holds an array, not a [[\"global\" or \"local\"", ""},
        {"{\"model_type\":\"gpt_neo\",\"attention_types\":[[[\"global\"],-2]]}",
         "attention_types holds an array, not a", ""},
        {"{\"model_type\":\"gpt_neo\",\"attention_types\":[[[\"sparse\"],24]]}",
         "attention_types names a string, not \"global\" or \"local\"", ""},
        {"{\"model_type\":\"gpt_neo\",\"attention_types\":[[[\"global\",\"local\"],6]]}",
         "attention_types makes 12 blocks, not num_layers (24)", ""},
        {"{\"model_type\":\"gpt_neox_japanese\",\"intermediate_multiple_size\":\"4\"}",
         "intermediate_multiple_size is a string, not a number", ""},
        {"{\"model_type\":\"gpt_neox_japanese\",\"intermediate_multiple_size\":0}",
         "intermediate_multiple_size 0 makes an MLP of 0, not 1 to", ""},
        {"{\"model_type\":\"bloom\",\"n_layer\":-2}", "n_layer is -2: negative", ""},
        {"{\"model_type\":\"bloom\",\"num_hidden_layers\":\"24\"}",
         "num_hidden_layers is a string, not a number", ""},
        {"{\"model_type\":\"opt\",\"word_embed_proj_dim\":0}",
         "word_embed_proj_dim is 0, not a positive integer", ""},
        {"{\"model_type\":\"mpt\",\"d_model\":1000}",
         "d_model 1000 is not a multiple of n_heads 16", ""},
        {"{\"model_type\":\"bamba\",\"attn_layer_indices\":9}",
         "attn_layer_indices is a number, not a list of block indices", ""},
        {"{\"model_type\":\"bamba\",\"attn_layer_indices\":[32]}",
         "attn_layer_indices holds 32, not a block index in 0..31", ""},
        {"{\"model_type\":\"bamba\",\"attn_layer_indices\":[\"9\"]}",
         "attn_layer_indices holds a string, not a block index", ""},
        {"{\"model_type\":\"glm4_moe\",\"num_nextn_predict_layers\":\"1\"}",
         "num_nextn_predict_layers is a string, not a number", ""},
        {"{\"model_type\":\"glm4_moe\",\"num_nextn_predict_layers\":-1}",
         "num_nextn_predict_layers is -1: negative", ""},
        {"{\"model_type\":\"glm4_moe_lite\",\"mlp_layer_types\":[\"dense\"]}",
         "mlp_layer_types has 1 entries, not one per block (47)", ""},
        {"{\"model_type\":\"glm_moe_dsa\",\"indexer_types\":\"full\"}",
         "indexer_types is a string, not a list", ""},
        {"{\"model_type\":\"glm_moe_dsa\",\"indexer_types\":[\"half\"]}",
         "indexer_types[0] is not \"shared\" or \"full\"", ""},
        {"{\"model_type\":\"glm_moe_dsa\",\"indexer_types\":[\"full\"]}",
         "indexer_types has 1 entries, not one per block (78)", ""},
        {"{\"model_type\":\"glm_moe_dsa\",\"index_topk_pattern\":[1]}",
         "index_topk_pattern is an array, not a string of F and S", ""},
        {"{\"model_type\":\"glm_moe_dsa\",\"index_topk_pattern\":\"FX\"}",
         "index_topk_pattern[1] is not F or S", ""},
        {"{\"model_type\":\"glm_moe_dsa\",\"index_topk_pattern\":\"FS\"}",
         "index_topk_pattern has 2 entries, not one per block (78)", ""},
        {"{\"model_type\":\"glm_moe_dsa\",\"index_topk_freq\":-2}",
         "index_topk_freq is -2: negative", ""},
        {"{\"model_type\":\"minimax\",\"sliding_window\":4096}",
         "sliding_window is set: its full-attention blocks would attend through it", ""},
        {"{\"model_type\":\"minimax\",\"layer_types\":[\"lightning\"]}", "layer_types",
         ""},
        {"{\"model_type\":\"sarvam_moe\",\"num_shared_experts\":\"1\"}",
         "num_shared_experts is a string, not a number", ""},
        {"{\"model_type\":\"sarvam_moe\",\"use_qkv_bias\":1}",
         "use_qkv_bias is a number, not true or false", ""},
        {"{\"model_type\":\"granitemoeshared\",\"shared_intermediate_size\":-1}",
         "shared_intermediate_size is -1: negative", ""},
        {"{\"model_type\":\"llama\"", "not valid JSON", ""},
        {"[\"llama\"]", "is an array, not a JSON object", ""},
        {"{\"model_type\":\"llama\"} {}", "bytes after the JSON object", ""},
    };
    return cr_make_param_array(struct bad_cfg, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_cfg *c, config, bad_numbers) {
    vram_model m, before;
    char err[512];
    memset(&m, 0x5c, sizeof m);
    before = m;
    vram_status st =
        vram_config_parse(c->json, strlen(c->json), "llm/config.json", &m, err, sizeof err);
    cr_assert_eq(st, VRAM_E_FORMAT, "%s: %s (%s)", c->json, vram_status_name(st), err);
    cr_assert(strncmp(err, "llm/config.json: ", 17) == 0, "names the file: %s", err);
    cr_assert_not_null(strstr(err, c->n1), "\"%s\" lacks \"%s\"", err, c->n1);
    cr_assert_not_null(strstr(err, c->n2), "\"%s\" lacks \"%s\"", err, c->n2);
    cr_assert_eq(memcmp(&m, &before, sizeof m), 0, "nothing half-filled");
}
