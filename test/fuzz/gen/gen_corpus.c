/* test/fuzz/gen/gen_corpus.c — writes the seed corpora of the model-reader fuzzers:
 * corpus/safetensors/, corpus/gguf/, corpus/config/ and corpus/st_index/ (real-shaped files from
 * model_fixtures.h, kept small, plus malformed ones). Names say what the readers must
 * answer, and test_model_read.c checks that they do:
 *   ok_*   a whole file that parses (safetensors: as an image; GGUF: from memory)
 *   hdr_*  a header whose data is not there: safetensors as [u64 data size][JSON], GGUF as
 *          the head of a larger file; parses in the harness's second mode
 *   bad_*  malformed: refused as a whole file (a header defect also in the second mode)
 * Regenerate (from the repository root), then commit the files:
 *   cc -std=c11 -D_GNU_SOURCE -Iinclude test/fuzz/gen/gen_corpus.c -o /tmp/gen_corpus
 *   /tmp/gen_corpus test/fuzz/corpus */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_fixtures.h"

static const char *root;

static void out(const char *dir, const char *name, const void *p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", root, dir, name);
    if (fx_write_file(path, p, n) != 0) {
        perror(path);
        exit(1);
    }
    printf("%8zu  %s\n", n, path);
}

/* ---- safetensors -------------------------------------------------------------------------- */

/* [u64 data size][JSON] */
static void st_header_seed(const char *name, const fx_list *l, size_t from, size_t to, int meta) {
    fx_buf json = {0}, f = {0};
    uint64_t data = fx_st_header(l->t + from, to - from, meta, &json);
    fx_u64(&f, data);
    fx_put(&f, json.p, json.n);
    out("safetensors", name, f.p, f.n);
    fx_free(&json);
    fx_free(&f);
}

/* a whole file image: [u64 N][JSON padded][data as zeros] */
static void st_image(const char *name, const char *json, uint64_t data) {
    fx_buf f = {0};
    size_t n = strlen(json), pad = (8 - n % 8) % 8;
    fx_u64(&f, (uint64_t)(n + pad));
    fx_put(&f, json, n);
    for (size_t i = 0; i < pad; i++)
        fx_put(&f, " ", 1);
    for (uint64_t i = 0; i < data; i++)
        fx_put(&f, "", 1);
    out("safetensors", name, f.p, f.n);
    fx_free(&f);
}

static void gen_safetensors(void) {
    fx_list gpt2 = {0}, llama = {0};
    fx_gpt2(&gpt2);
    st_header_seed("hdr_gpt2", &gpt2, 0, gpt2.n, 1);
    /* TinyLlama's second shard: block 11's MLP, blocks 12-21, the norm and the head */
    llama.dtype = "BF16";
    fx_llama_hf_layer(&llama, &FX_TINYLLAMA, 11, 0, 1);
    for (uint64_t i = 12; i < FX_TINYLLAMA.layers; i++)
        fx_llama_hf_layer(&llama, &FX_TINYLLAMA, i, 1, 1);
    FX_1(&llama, "model.norm.weight", 2048);
    FX_2(&llama, "lm_head.weight", 32000, 2048);
    st_header_seed("hdr_tinyllama_shard2", &llama, 0, llama.n, 1);
    fx_list_free(&gpt2);
    fx_list_free(&llama);

    /* a small model, whole: embeddings, two blocks, every plain dtype family */
    fx_list tiny = {0};
    fx_buf json = {0};
    tiny.dtype = "BF16";
    FX_2(&tiny, "model.embed_tokens.weight", 16, 8);
    for (int i = 0; i < 2; i++) {
        char n[96];
        tiny.dtype = "F16";
        snprintf(n, sizeof n, "model.layers.%d.self_attn.q_proj.weight", i);
        FX_2(&tiny, n, 8, 8);
        snprintf(n, sizeof n, "model.layers.%d.mlp.down_proj.weight", i);
        FX_2(&tiny, n, 8, 12);
        tiny.dtype = "F32";
        snprintf(n, sizeof n, "model.layers.%d.input_layernorm.weight", i);
        FX_1(&tiny, n, 8);
    }
    tiny.dtype = "I64";
    FX_1(&tiny, "position_ids", 4);
    tiny.dtype = "BOOL";
    fx_add(&tiny, "mask", 3, 1, 2, 3, 0);
    tiny.dtype = "F8_E4M3";
    FX_2(&tiny, "lm_head.weight", 16, 8);
    uint64_t data = fx_st_header(tiny.t, tiny.n, 1, &json);
    st_image("ok_tiny", (const char *)json.p, data);
    fx_free(&json);
    fx_list_free(&tiny);
    st_image("ok_empty", "{}", 0);
    st_image("ok_scalar_and_empty",
             "{\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]},"
             "\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,8]}}",
             8);

    /* malformed images */
    st_image("bad_overlap",
             "{\"a.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
             "\"b.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
             12);
    st_image("bad_gap",
             "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
             "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}",
             20);
    st_image("bad_dtype", "{\"w\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1);
    st_image("bad_size_vs_shape",
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", 20);
    st_image("bad_fraction", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}",
             4);
    st_image("bad_dims_overflow",
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[4503599627370496,4503599627370496],"
             "\"data_offsets\":[0,4]}}",
             4);
    st_image("bad_metadata", "{\"__metadata__\":{\"format\":[\"pt\"]}}", 0);
    st_image("bad_json", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],", 4);
    st_image("bad_duplicate",
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
             "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
             8);
    {
        fx_buf f = {0};
        fx_u64(&f, 123456789012ull); /* header length past the end */
        fx_put(&f, "{}", 2);
        out("safetensors", "bad_header_past_end", f.p, f.n);
        fx_free(&f);
    }
}

/* ---- GGUF ---------------------------------------------------------------------------------- */

/* a whole GGUF: header then zeros for the data */
static void gguf_whole(const char *name, const fx_gguf *g, const fx_list *l) {
    fx_buf b = {0};
    uint64_t size = fx_gguf_build(g, l, &b, NULL);
    while (b.n < size)
        fx_put(&b, "", 1);
    out("gguf", name, b.p, b.n);
    fx_free(&b);
}

static void gguf_head(const char *name, const fx_gguf *g, const fx_list *l, size_t cut) {
    fx_buf b = {0};
    fx_gguf_build(g, l, &b, NULL);
    out("gguf", name, b.p, cut && cut < b.n ? cut : b.n);
    fx_free(&b);
}

static void gen_gguf(void) {
    /* a tiny Llama, whole: Q8_0 matrices (blocks of 32), F16 embedding, F32 norms */
    const fx_llama tiny = {2, 32, 64, 4, 2, 16};
    fx_gguf g = {0};
    fx_list l = {0};
    fx_gguf_llama_meta(&g, &tiny, 128, 16);
    fx_llama_gguf(&l, &tiny);
    for (size_t i = 0; i < l.n; i++)
        l.t[i].ggml = l.t[i].ggml == 12 || l.t[i].ggml == 14 ? 8 : l.t[i].ggml;
    l.t[0].ggml = 1;
    gguf_whole("ok_tiny_llama", &g, &l);
    /* the same as v2 with 64-byte alignment */
    fx_gguf g2 = {0};
    g2.version = 2;
    g2.alignment = 64;
    fx_gguf_u32(&g2, "general.alignment", 64);
    fx_gguf_llama_meta(&g2, &tiny, 128, 16);
    gguf_whole("ok_tiny_llama_v2_align64", &g2, &l);
    fx_free(&g2.kv);
    fx_list_free(&l);
    fx_free(&g.kv);

    /* a tiny GPT-2, whole: biases, learned positions, tied head */
    memset(&g, 0, sizeof g);
    fx_gguf_str(&g, "general.architecture", "gpt2");
    fx_gguf_u32(&g, "gpt2.block_count", 1);
    fx_gguf_u32(&g, "gpt2.context_length", 16);
    fx_gguf_u32(&g, "gpt2.embedding_length", 32);
    fx_gguf_u32(&g, "gpt2.feed_forward_length", 128);
    fx_gguf_u32(&g, "gpt2.attention.head_count", 4);
    fx_gguf_f32(&g, "gpt2.attention.layer_norm_epsilon", 1e-5f);
    fx_gguf_bool(&g, "general.tied", 1);
    l.ggml = 1; /* F16 */
    FX_2(&l, "token_embd.weight", 20, 32);
    FX_2(&l, "position_embd.weight", 16, 32);
    l.ggml = 0;
    FX_1(&l, "blk.0.attn_norm.weight", 32);
    FX_1(&l, "blk.0.attn_norm.bias", 32);
    l.ggml = 1;
    FX_2(&l, "blk.0.attn_qkv.weight", 96, 32);
    l.ggml = 0;
    FX_1(&l, "blk.0.attn_qkv.bias", 96);
    l.ggml = 1;
    FX_2(&l, "blk.0.attn_output.weight", 32, 32);
    l.ggml = 0;
    FX_1(&l, "blk.0.attn_output.bias", 32);
    l.ggml = 1;
    FX_2(&l, "blk.0.ffn_up.weight", 128, 32);
    FX_2(&l, "blk.0.ffn_down.weight", 32, 128);
    l.ggml = 0;
    FX_1(&l, "blk.0.ffn_up.bias", 128);
    FX_1(&l, "blk.0.ffn_down.bias", 32);
    FX_1(&l, "output_norm.weight", 32);
    FX_1(&l, "output_norm.bias", 32);
    gguf_whole("ok_tiny_gpt2", &g, &l);
    fx_list_free(&l);
    fx_free(&g.kv);

    /* TinyLlama-1.1B Q4_K_M: the header only (a 64-token vocabulary keeps it small) */
    memset(&g, 0, sizeof g);
    fx_gguf_llama_meta(&g, &FX_TINYLLAMA, 2048, 64);
    fx_llama_gguf(&l, &FX_TINYLLAMA);
    gguf_head("hdr_tinyllama_q4km", &g, &l, 0);
    /* ... cut in the middle of its tensor infos */
    gguf_head("bad_truncated_header", &g, &l, 6000);
    fx_list_free(&l);
    fx_free(&g.kv);

    /* tiny DeepSeek-V2 shapes (latent attention with a q rank, a dense first block, routed
       and shared experts), whole: llama.cpp's MLA form (attn_k_b, attn_v_b) and the older
       one (attn_kv_b) */
    const fx_mla mla = {2, 1, 32, 2, 16, 16, 8, 8, 8, 64, 4, 2, 16, 1, 16, 0};
    for (int split = 0; split <= 1; split++) {
        memset(&g, 0, sizeof g);
        fx_gguf_deepseek2_meta(&g, &mla, split, 16);
        fx_deepseek2_gguf(&l, &mla, split);
        gguf_whole(split ? "ok_tiny_deepseek2" : "ok_tiny_deepseek2_kv_b", &g, &l);
        fx_list_free(&l);
        fx_free(&g.kv);
    }
    /* ... whose rotary part is as wide as the key (refused, naming the key) */
    fx_mla bad = mla;
    bad.nope = 0;
    memset(&g, 0, sizeof g);
    fx_gguf_deepseek2_meta(&g, &bad, 1, 16);
    fx_deepseek2_gguf(&l, &mla, 1);
    gguf_whole("bad_deepseek2_rope", &g, &l);
    fx_list_free(&l);
    fx_free(&g.kv);
    /* tiny gpt-oss shapes: biases everywhere, sinks, MXFP4 experts, a sliding window */
    const fx_oss oss = {2, 32, 2, 1, 16, 4, 2, 32, 16, 8};
    memset(&g, 0, sizeof g);
    fx_gguf_gpt_oss_meta(&g, &oss, 16);
    fx_gpt_oss_gguf(&l, &oss);
    gguf_whole("ok_tiny_gpt_oss", &g, &l);
    fx_list_free(&l);
    fx_free(&g.kv);

    /* malformed, byte by byte */
    fx_buf b = {0};
#define HEAD(magic, version, nt, nkv)                                                              \
    do {                                                                                           \
        fx_free(&b);                                                                               \
        fx_put(&b, magic, 4);                                                                      \
        fx_u32(&b, version);                                                                       \
        fx_u64(&b, nt);                                                                            \
        fx_u64(&b, nkv);                                                                           \
    } while (0)
#define KEY(k, type)                                                                               \
    do {                                                                                           \
        fx_u64(&b, strlen(k));                                                                     \
        fx_put(&b, k, strlen(k));                                                                  \
        fx_u32(&b, type);                                                                          \
    } while (0)
#define TINFO(name, ne0, type, off)                                                                \
    do {                                                                                           \
        fx_u64(&b, strlen(name));                                                                  \
        fx_put(&b, name, strlen(name));                                                            \
        fx_u32(&b, 1);                                                                             \
        fx_u64(&b, ne0);                                                                           \
        fx_u32(&b, type);                                                                          \
        fx_u64(&b, off);                                                                           \
    } while (0)
#define PAD(align, extra)                                                                          \
    do {                                                                                           \
        while (b.n % (align))                                                                      \
            fx_put(&b, "", 1);                                                                     \
        for (int i_ = 0; i_ < (extra); i_++)                                                       \
            fx_put(&b, "", 1);                                                                     \
    } while (0)
    HEAD("GGML", 3, 0, 0);
    out("gguf", "bad_magic", b.p, b.n);
    HEAD("GGUF", 1, 0, 0);
    out("gguf", "bad_version1", b.p, b.n);
    HEAD("GGUF", 4, 0, 0);
    out("gguf", "bad_version4", b.p, b.n);
    HEAD("GGUF", 3, 5000000, 0);
    out("gguf", "bad_absurd_tensor_count", b.p, b.n);
    HEAD("GGUF", 3, 0, 1);
    KEY("general.name", 8);
    fx_u64(&b, 1000);
    fx_put(&b, "tiny", 4);
    out("gguf", "bad_string_past_end", b.p, b.n);
    HEAD("GGUF", 3, 0, 1);
    KEY("tokenizer.ggml.tokens", 9);
    fx_u32(&b, 8);
    fx_u64(&b, 100000000);
    PAD(1, 32);
    out("gguf", "bad_array_count", b.p, b.n);
    HEAD("GGUF", 3, 0, 1);
    KEY("x.deep", 9);
    fx_u32(&b, 9);
    fx_u64(&b, 1);
    fx_u32(&b, 9);
    fx_u64(&b, 1);
    fx_u32(&b, 0);
    fx_u64(&b, 0);
    out("gguf", "bad_nested_arrays", b.p, b.n);
    HEAD("GGUF", 3, 1, 0);
    TINFO("w", 8, 0, 16);
    PAD(32, 64);
    out("gguf", "bad_misaligned", b.p, b.n);
    HEAD("GGUF", 3, 1, 0);
    TINFO("w", 64, 4, 0);
    PAD(32, 64);
    out("gguf", "bad_ggml_type", b.p, b.n);
    HEAD("GGUF", 3, 1, 0);
    TINFO("w", 8, 0, 0);
    PAD(32, 16);
    out("gguf", "bad_tensor_past_end", b.p, b.n);
    HEAD("GGUF", 3, 2, 0);
    TINFO("a", 16, 0, 0);
    TINFO("b", 8, 0, 32);
    PAD(32, 96);
    out("gguf", "bad_overlap", b.p, b.n);
    HEAD("GGUF", 3, 0, 1);
    KEY("general.alignment", 4);
    fx_u32(&b, 48);
    out("gguf", "bad_alignment", b.p, b.n);
    fx_free(&b);
}

/* ---- config.json ---------------------------------------------------------------------------- */

static void cfg(const char *name, const char *json) { out("config", name, json, strlen(json)); }

static void gen_config(void) {
    cfg("ok_gpt2", FX_CFG_GPT2);
    cfg("ok_llama3_8b", FX_CFG_META_LLAMA_3_8B);
    cfg("ok_mistral_7b", FX_CFG_MISTRAL_7B_V0_1);
    cfg("ok_qwen2_5_0_5b", FX_CFG_QWEN2_5_0_5B);
    cfg("ok_multilingual_e5_large", FX_CFG_MULTILINGUAL_E5_LARGE);
    cfg("ok_distilbert", FX_CFG_DISTILBERT_BASE_UNCASED);
    cfg("ok_nllb_200_distilled_600m", FX_CFG_NLLB_200_DISTILLED_600M);
    cfg("ok_t5_small", FX_CFG_T5_SMALL);
    cfg("ok_bart_large", FX_CFG_BART_LARGE);
    cfg("ok_bert_base", FX_CFG_BERT_BASE_UNCASED);
    cfg("ok_gemma2_2b", FX_CFG_GEMMA_2_2B);
    cfg("ok_mixtral_note", "{\"model_type\":\"mixtral\",\"num_local_experts\":8,"
                           "\"hidden_size\":4096}");
    cfg("ok_unknown_llama_like", "{\"model_type\":\"my_llama\",\"num_hidden_layers\":4,"
                                 "\"hidden_size\":256,\"num_attention_heads\":4,"
                                 "\"intermediate_size\":512,\"vocab_size\":1000}");
    cfg("ok_roberta_classifier",
        "{\"model_type\":\"roberta\",\"architectures\":"
        "[\"RobertaForSequenceClassification\"],\"id2label\":"
        "{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"},\"torch_dtype\":\"float16\"}");
    cfg("ok_flan_t5", "{\"model_type\":\"t5\",\"d_model\":768,\"d_ff\":2048,\"num_layers\":12,"
                      "\"num_heads\":12,\"feed_forward_proj\":\"gated-gelu\","
                      "\"tie_word_embeddings\":false,\"vocab_size\":32128}");
    cfg("ok_phi_2", FX_CFG_PHI_2);
    cfg("ok_falcon_7b", FX_CFG_FALCON_7B);
    cfg("ok_whisper_small", FX_CFG_WHISPER_SMALL);
    cfg("ok_vit_base", FX_CFG_VIT_BASE_PATCH16_224);
    cfg("ok_clip_vit_base", FX_CFG_CLIP_VIT_BASE_PATCH32);
    cfg("ok_llava_1_5_7b", FX_CFG_LLAVA_1_5_7B);
    cfg("ok_qwen2_vl_7b", FX_CFG_QWEN2_VL_7B_INSTRUCT);
    cfg("ok_unknown_phi_like",
        "{\"model_type\":\"my_phi\",\"hidden_size\":2560,\"intermediate_size\":10240,"
        "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"max_position_embeddings\":2048,"
        "\"vocab_size\":51200,\"torch_dtype\":\"float16\"}");
    cfg("bad_negative", "{\"model_type\":\"gpt2\",\"n_layer\":-12}");
    cfg("bad_fraction", "{\"model_type\":\"llama\",\"num_hidden_layers\":12.5}");
    cfg("bad_huge", "{\"model_type\":\"llama\",\"hidden_size\":1e30}");
    cfg("bad_kv_heads", "{\"model_type\":\"llama\",\"num_key_value_heads\":5}");
    cfg("bad_json", "{\"model_type\":\"llama\",");
    cfg("bad_string_number", "{\"model_type\":\"bert\",\"vocab_size\":\"30522\"}");
    /* sliding windows (issue 16): gemma3_text's pattern, qwen2's use_sliding_window and
       layer_types, and their bad values */
    cfg("ok_gemma3_1b", "{\"model_type\":\"gemma3_text\",\"hidden_size\":1152,"
                        "\"intermediate_size\":6912,\"num_hidden_layers\":26,"
                        "\"num_attention_heads\":4,\"num_key_value_heads\":1,\"head_dim\":256,"
                        "\"max_position_embeddings\":32768,\"sliding_window\":512,"
                        "\"sliding_window_pattern\":6,\"vocab_size\":262144,"
                        "\"torch_dtype\":\"bfloat16\"}");
    cfg("ok_qwen3_swa", "{\"model_type\":\"qwen3\",\"num_hidden_layers\":4,"
                        "\"use_sliding_window\":true,\"sliding_window\":1024,"
                        "\"layer_types\":[\"full_attention\",\"sliding_attention\","
                        "\"full_attention\",\"sliding_attention\"]}");
    cfg("bad_layer_types", "{\"model_type\":\"gpt_oss\",\"num_hidden_layers\":2,"
                           "\"layer_types\":[\"sliding_attention\",\"hash_attention\"]}");
    cfg("bad_sliding_window", "{\"model_type\":\"gemma2\",\"sliding_window\":-4096}");
    /* the architecture table's rows of 2025-2026 (issue 28), cut small: state-space models
       and hybrids, MoE layouts, nested multimodal configs, and their bad values */
    cfg("ok_mamba2", "{\"model_type\":\"mamba2\",\"hidden_size\":256,\"num_hidden_layers\":4,"
                     "\"num_heads\":8,\"head_dim\":64,\"n_groups\":2,\"state_size\":16,"
                     "\"vocab_size\":1000}");
    cfg("ok_jamba", "{\"model_type\":\"jamba\",\"hidden_size\":256,\"intermediate_size\":512,"
                    "\"num_hidden_layers\":8,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
                    "\"num_experts\":4,\"num_experts_per_tok\":2,\"vocab_size\":1000}");
    cfg("ok_granite_4_h", "{\"model_type\":\"granitemoehybrid\",\"hidden_size\":256,"
                          "\"num_hidden_layers\":3,\"num_attention_heads\":4,"
                          "\"layer_types\":[\"mamba\",\"attention\",\"mamba\"],"
                          "\"mamba_n_heads\":8,\"mamba_d_state\":16,\"num_local_experts\":0,"
                          "\"vocab_size\":1000}");
    cfg("ok_lfm2", "{\"model_type\":\"lfm2\",\"hidden_size\":256,\"intermediate_size\":768,"
                   "\"num_hidden_layers\":3,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
                   "\"layer_types\":[\"conv\",\"full_attention\",\"conv\"],\"vocab_size\":1000}");
    cfg("ok_qwen3_next", "{\"model_type\":\"qwen3_next\",\"hidden_size\":256,"
                         "\"num_hidden_layers\":4,\"num_attention_heads\":4,\"head_dim\":64,"
                         "\"num_experts\":8,\"num_experts_per_tok\":2,\"vocab_size\":1000}");
    cfg("ok_llama4", "{\"model_type\":\"llama4\",\"text_config\":{\"model_type\":"
                     "\"llama4_text\",\"hidden_size\":256,\"num_hidden_layers\":4,"
                     "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":64,"
                     "\"interleave_moe_layer_step\":2,\"num_local_experts\":4,"
                     "\"vocab_size\":1000},\"vision_config\":{\"hidden_size\":64,"
                     "\"num_hidden_layers\":2,\"num_attention_heads\":4}}");
    cfg("ok_gemma3_4b", "{\"model_type\":\"gemma3\",\"text_config\":{\"hidden_size\":2560,"
                        "\"intermediate_size\":10240,\"model_type\":\"gemma3_text\","
                        "\"num_hidden_layers\":34,\"sliding_window\":1024},\"vision_config\":"
                        "{\"hidden_size\":1152,\"image_size\":896,\"intermediate_size\":4304,"
                        "\"model_type\":\"siglip_vision_model\",\"num_attention_heads\":16,"
                        "\"num_hidden_layers\":27,\"patch_size\":14,\"vision_use_head\":false}}");
    cfg("ok_modernbert", "{\"model_type\":\"modernbert\",\"architectures\":"
                         "[\"ModernBertForMaskedLM\"]}");
    cfg("bad_layer_types_mixer", "{\"model_type\":\"lfm2\",\"num_hidden_layers\":2,"
                                 "\"layer_types\":[\"conv\",\"rwkv\"]}");
    cfg("bad_moe_end_index", "{\"model_type\":\"ernie4_5_moe\",\"moe_layer_end_index\":-2}");
    cfg("bad_mamba_rank", "{\"model_type\":\"mamba\",\"time_step_rank\":\"big\"}");
}

/* ---- corrupted copies (issue 16 §5) -------------------------------------------------------- */

/* root/dir/from with the bytes at the first `needle` + skip replaced, as root/dir/to: a
 * valid file corrupted the way a bad disk or copy does it. */
static void flip_seed(const char *dir, const char *from, const char *to, const char *needle,
                      size_t skip, const char *bytes, size_t nbytes) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", root, dir, from);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    fx_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fx_put(&b, chunk, n);
    fclose(f);
    size_t nl = strlen(needle), at = b.n;
    for (size_t i = 0; i + nl <= b.n; i++)
        if (memcmp(b.p + i, needle, nl) == 0) {
            at = i;
            break;
        }
    if (at == b.n || at + skip + nbytes > b.n) {
        fprintf(stderr, "%s: '%s' not found\n", path, needle);
        exit(1);
    }
    memcpy(b.p + at + skip, bytes, nbytes);
    out(dir, to, b.p, b.n);
    fx_free(&b);
}

static void gen_corrupted(void) {
    /* safetensors: a tensor name, the header's padding */
    flip_seed("safetensors", "ok_tiny", "bad_name_control", "\"model.layers.1.mlp", 7, "\x07", 1);
    flip_seed("safetensors", "ok_tiny", "bad_name_utf8", "\"lm_head.weight", 3, "\xff", 1);
    flip_seed("safetensors", "ok_tiny", "bad_name_escaped_control", "\"position_ids", 1,
              "\\u0007", 6);
    flip_seed("safetensors", "ok_tiny", "bad_vertical_tab", "}}  ", 2, "\x0b", 1);
    /* GGUF: a tensor name, a metadata key */
    flip_seed("gguf", "ok_tiny_llama", "bad_tensor_name_control", "blk.1.ffn_up.weight", 6, "\x07",
              1);
    flip_seed("gguf", "ok_tiny_llama", "bad_tensor_name_utf8", "output_norm.weight", 0, "\xc3", 1);
    flip_seed("gguf", "ok_tiny_llama", "bad_key_control", "llama.block_count", 11, "\x1b", 1);
    /* config.json: a key (read before as a missing key: a default), whitespace */
    flip_seed("config", "ok_gpt2", "bad_key_control", "\"n_layer\"", 3, "\x07", 1);
    flip_seed("config", "ok_gpt2", "bad_key_utf8", "\"vocab_size\"", 1, "\xff", 1);
    flip_seed("config", "ok_gpt2", "bad_vertical_tab", ", \"n_head\"", 1, "\x0b", 1);
    flip_seed("config", "ok_gpt2", "bad_value_control", "gelu_new", 2, "\x01", 1);
}

/* ---- model.safetensors.index.json ----------------------------------------------------------- */

/* Indexes as transformers writes them (a 3-shard Llama-style map with its metadata), the
 * forms around them (blanks, other members, nested values) and what the streaming read must
 * leave to the tree (escapes, keys twice, paths, numbers cJSON reads its own way). */
static void gen_st_index(void) {
    static const char *const parts[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                        "self_attn.o_proj", "mlp.gate_proj",    "mlp.up_proj",
                                        "mlp.down_proj",    "input_layernorm"};
    fx_buf b = {0};
    fx_printf(&b, "{\n  \"metadata\": {\n    \"total_size\": 2200096768\n  },\n  \"weight_map\": {\n");
    fx_printf(&b, "    \"lm_head.weight\": \"model-00003-of-00003.safetensors\",\n");
    for (int l = 0; l < 6; l++)
        for (int k = 0; k < 8; k++)
            fx_printf(&b, "    \"model.layers.%d.%s.weight\": \"model-%05d-of-00003.safetensors\",\n",
                      l, parts[k], 1 + l / 3);
    fx_printf(&b, "    \"model.norm.weight\": \"model-00003-of-00003.safetensors\"\n  }\n}\n");
    out("st_index", "ok_llama_3_shards", b.p, b.n);
    fx_free(&b);
    static const struct {
        const char *name, *text;
    } seeds[] = {
        {"ok_compact", "{\"weight_map\":{\"a.weight\":\"s1.safetensors\",\"b\":\"s2.safetensors\"},"
                       "\"metadata\":{\"total_size\":8,\"format\":\"pt\",\"x\":[1,-2.5e3,true,null,{}]}}"},
        {"ok_utf8", "{\"weight_map\":{\"caf\xc3\xa9.w\":\"\xe6\xa8\xa1\xe5\x9e\x8b.safetensors\"}}"},
        {"tree_escape", "{\"weight_map\":{\"a\\u0062\":\"s1.safetensors\"}}"},
        {"tree_key_twice", "{\"weight_map\":{\"a\":\"s1.safetensors\",\"a\":\"s2.safetensors\"}}"},
        {"tree_map_twice", "{\"weight_map\":{\"a\":\"s1.safetensors\"},\"weight_map\":{\"b\":\"s2\"}}"},
        {"tree_number", "{\"metadata\":{\"total_size\":1E400},\"weight_map\":{\"a\":\"s\"}}"},
        {"bad_path", "{\"weight_map\":{\"a\":\"s1.safetensors\",\"b\":\"../s2.safetensors\"}}"},
        {"bad_absolute", "{\"weight_map\":{\"a\":\"/etc/passwd\"}}"},
        {"bad_not_string", "{\"weight_map\":{\"a\":[\"s1.safetensors\"]}}"},
        {"bad_empty", "{\"metadata\":{},\"weight_map\":{}}"},
        {"bad_truncated", "{\"weight_map\":{\"a\":\"s1.safetensors\""},
        {"bad_control", "{\"weight_map\":{\"a\x07\":\"s1.safetensors\"}}"},
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        out("st_index", seeds[i].name, seeds[i].text, strlen(seeds[i].text));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR (test/fuzz/corpus)\n", argv[0]);
        return 2;
    }
    root = argv[1];
    gen_safetensors();
    gen_gguf();
    gen_config();
    gen_corrupted();
    gen_st_index();
    return 0;
}
