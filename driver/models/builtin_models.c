/* driver/models/builtin_models.c — the built-in models (see builtin_models.h). Numbers from each
 * model's config.json on the Hugging Face hub; comments give the published parameter
 * count the unit test compares with. */
#include "builtin_models.h"

#include <string.h>
#include <strings.h>

#define BIASES (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS)

static const vram_builtin_model models[] = {
    /* M2M100 architecture; shared (tied) embeddings, sinusoidal positions, LayerNorm after
       each stack; 615M parameters */
    {"nllb-200-distilled-600M", "facebook/nllb-200-distilled-600M",
     "translation, 200 languages; encoder-decoder, 12+12 layers (user-report 000)",
     {.family = VRAM_FAMILY_ENCODER_DECODER, .encoder_layers = 12, .decoder_layers = 12,
      .hidden = 1024, .heads = 16, .intermediate = 4096, .decoder_intermediate = 4096,
      .vocab = 256206, .context = 1024, .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = BIASES | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_F32},
    /* XLM-RoBERTa large; the checkpoint has the pooler (1024 x 1024 + 1024) and no LM
       head; 560M parameters */
    {"multilingual-e5-large", "intfloat/multilingual-e5-large",
     "text embeddings, 100 languages; encoder, 24 layers (user-report 001)",
     {.family = VRAM_FAMILY_ENCODER, .layers = 24, .hidden = 1024, .heads = 16,
      .intermediate = 4096, .vocab = 250002, .positions = 514, .type_vocab = 1, .context = 512,
      .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = BIASES | VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD, .extra_params = 1049600},
     VRAM_DTYPE_F32},
    /* the masked-LM checkpoint: vocab_transform 768 x 768 + 768, its LayerNorm 1536, the
       projector's bias 30522 (its weight is the tied embedding); 67M parameters */
    {"distilbert-base-uncased", "distilbert/distilbert-base-uncased",
     "English encoder, 6 layers; the base of many classifiers (user-report 001)",
     {.family = VRAM_FAMILY_ENCODER, .layers = 6, .hidden = 768, .heads = 12,
      .intermediate = 3072, .vocab = 30522, .positions = 512, .context = 512,
      .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = BIASES | VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD, .extra_params = 622650},
     VRAM_DTYPE_F32},
    /* 124M parameters (OpenAI's "124M"; the hub's 137M counts the attention-mask buffers) */
    {"gpt2", "openai-community/gpt2", "GPT-2 small; decoder, 12 layers",
     {.family = VRAM_FAMILY_DECODER, .layers = 12, .hidden = 768, .heads = 12,
      .intermediate = 3072, .vocab = 50257, .positions = 1024, .context = 1024,
      .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = BIASES | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_F32},
    /* 8.03B parameters */
    {"Llama-3-8B", "meta-llama/Meta-Llama-3-8B", "decoder, 32 layers, grouped-query attention",
     {.family = VRAM_FAMILY_DECODER, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
      .intermediate = 14336, .vocab = 128256, .context = 8192, .mlp = VRAM_MLP_GATED,
      .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16},
    /* 7.24B parameters */
    {"Mistral-7B", "mistralai/Mistral-7B-v0.1", "decoder, 32 layers, grouped-query attention",
     {.family = VRAM_FAMILY_DECODER, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
      .intermediate = 14336, .vocab = 32000, .context = 32768, .mlp = VRAM_MLP_GATED,
      .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16},
    /* 0.49B parameters (494,032,768); q/k/v biases, tied embeddings */
    {"Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", "small decoder, 24 layers, 2 key/value heads",
     {.family = VRAM_FAMILY_DECODER, .layers = 24, .hidden = 896, .heads = 14, .kv_heads = 2,
      .intermediate = 4864, .vocab = 151936, .context = 32768, .mlp = VRAM_MLP_GATED,
      .norm = VRAM_NORM_RMS,
      .flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16},
    /* 22.2B parameters; head_dim 128 (48 x 128 = 6144) */
    {"Mistral-Small-22B", "mistralai/Mistral-Small-Instruct-2409",
     "22B-class decoder, 56 layers (the size of user-report 002's models)",
     {.family = VRAM_FAMILY_DECODER, .layers = 56, .hidden = 6144, .heads = 48, .kv_heads = 8,
      .head_dim = 128, .intermediate = 16384, .vocab = 32768, .context = 32768,
      .mlp = VRAM_MLP_GATED, .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16},
};

const vram_builtin_model *vram_builtin_models(size_t *count) {
    *count = sizeof models / sizeof models[0];
    return models;
}

const vram_builtin_model *vram_builtin_find(const char *text) {
    if (text == NULL) return NULL;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        if (strcasecmp(text, models[i].name) == 0 || strcasecmp(text, models[i].hf_id) == 0)
            return &models[i];
    }
    return NULL;
}

void vram_builtin_to_model(const vram_builtin_model *b, vram_model *m) {
    memset(m, 0, sizeof *m);
    m->arch = b->arch;
    m->dtype = b->dtype;
}
