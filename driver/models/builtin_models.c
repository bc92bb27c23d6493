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
     VRAM_DTYPE_F32, 0},
    /* XLM-RoBERTa large; the checkpoint has the pooler (1024 x 1024 + 1024) and no LM
       head; 560M parameters */
    {"multilingual-e5-large", "intfloat/multilingual-e5-large",
     "text embeddings, 100 languages; encoder, 24 layers (user-report 001)",
     {.family = VRAM_FAMILY_ENCODER, .layers = 24, .hidden = 1024, .heads = 16,
      .intermediate = 4096, .vocab = 250002, .positions = 514, .type_vocab = 1, .context = 512,
      .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = BIASES | VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD, .extra_params = 1049600},
     VRAM_DTYPE_F32, 0},
    /* the masked-LM checkpoint: vocab_transform 768 x 768 + 768, its LayerNorm 1536, the
       projector's bias 30522 (its weight is the tied embedding); 67M parameters */
    {"distilbert-base-uncased", "distilbert/distilbert-base-uncased",
     "English encoder, 6 layers; the base of many classifiers (user-report 001)",
     {.family = VRAM_FAMILY_ENCODER, .layers = 6, .hidden = 768, .heads = 12,
      .intermediate = 3072, .vocab = 30522, .positions = 512, .context = 512,
      .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = BIASES | VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD, .extra_params = 622650},
     VRAM_DTYPE_F32, 0},
    /* 124M parameters (OpenAI's "124M"; the hub's 137M counts the attention-mask buffers) */
    {"gpt2", "openai-community/gpt2", "GPT-2 small; decoder, 12 layers",
     {.family = VRAM_FAMILY_DECODER, .layers = 12, .hidden = 768, .heads = 12,
      .intermediate = 3072, .vocab = 50257, .positions = 1024, .context = 1024,
      .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = BIASES | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_F32, 0},
    /* 8.03B parameters */
    {"Llama-3-8B", "meta-llama/Meta-Llama-3-8B", "decoder, 32 layers, grouped-query attention",
     {.family = VRAM_FAMILY_DECODER, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
      .intermediate = 14336, .vocab = 128256, .context = 8192, .mlp = VRAM_MLP_GATED,
      .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16, 0},
    /* 7.24B parameters */
    {"Mistral-7B", "mistralai/Mistral-7B-v0.1", "decoder, 32 layers, grouped-query attention",
     {.family = VRAM_FAMILY_DECODER, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
      .intermediate = 14336, .vocab = 32000, .context = 32768, .mlp = VRAM_MLP_GATED,
      .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16, 0},
    /* 0.49B parameters (494,032,768); q/k/v biases, tied embeddings */
    {"Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", "small decoder, 24 layers, 2 key/value heads",
     {.family = VRAM_FAMILY_DECODER, .layers = 24, .hidden = 896, .heads = 14, .kv_heads = 2,
      .intermediate = 4864, .vocab = 151936, .context = 32768, .mlp = VRAM_MLP_GATED,
      .norm = VRAM_NORM_RMS,
      .flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16, 0},
    /* 22.2B parameters; head_dim 128 (48 x 128 = 6144) */
    {"Mistral-Small-22B", "mistralai/Mistral-Small-Instruct-2409",
     "22B-class decoder, 56 layers (the size of user-report 002's models)",
     {.family = VRAM_FAMILY_DECODER, .layers = 56, .hidden = 6144, .heads = 48, .kv_heads = 8,
      .head_dim = 128, .intermediate = 16384, .vocab = 32768, .context = 32768,
      .mlp = VRAM_MLP_GATED, .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM},
     VRAM_DTYPE_BF16, 0},
    /* mixture of experts: 128 experts of width 768 per block, 8 per token; q_norm and
       k_norm (2 x 128 per layer) in extra_params; 30.5B parameters, 3.3B active */
    {"Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B",
     "mixture of experts, 48 layers, 128 experts (8 per token): 30.5B total, 3.3B active",
     {.family = VRAM_FAMILY_DECODER, .layers = 48, .hidden = 2048, .heads = 32, .kv_heads = 4,
      .head_dim = 128, .intermediate = 6144, .vocab = 151936, .context = 40960,
      .mlp = VRAM_MLP_GATED, .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM,
      .extra_params = 48 * 2 * 128, .experts = 128, .experts_per_token = 8,
      .expert_intermediate = 768},
     VRAM_DTYPE_BF16, 0},
    /* speech recognition, 12 + 12 layers; learned positions in both stacks (1500 + 448
       rows); extra_params: the two convolutions of the audio front end (80 x 768 x 3 + 768,
       768 x 768 x 3 + 768) and the q and v biases of its 36 attentions (the k projections
       have none), 2 x 768 each; 242M parameters (241,734,912) */
    {"whisper-small", "openai/whisper-small",
     "speech recognition, 30 s of audio (1500 frames) to 448 tokens; encoder-decoder",
     {.family = VRAM_FAMILY_ENCODER_DECODER, .encoder_layers = 12, .decoder_layers = 12,
      .hidden = 768, .heads = 12, .intermediate = 3072, .decoder_intermediate = 3072,
      .vocab = 51865, .positions = 1948, .context = 448, .source_context = 1500,
      .mlp = VRAM_MLP_PLAIN, .norm = VRAM_NORM_LAYER,
      .flags = VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_TIED | VRAM_ARCH_FINAL_NORM,
      .extra_params = 2010624},
     VRAM_DTYPE_F32, 0},
    /* a Llama-2-7B-shaped (Vicuna) language model, vocab 32064, and in extra_params the
       CLIP ViT-L/14 vision tower at 336 px (303,507,456) and the projector (1024 x 4096 +
       4096, 4096 x 4096 + 4096: 20,979,712); each image is 576 tokens (24 x 24 patches);
       7.06B parameters (7,063,427,072) */
    {"llava-1.5-7b", "llava-hf/llava-1.5-7b-hf",
     "vision-language: CLIP ViT-L/14-336 + a 7B Llama decoder; 576 tokens per image",
     {.family = VRAM_FAMILY_DECODER, .layers = 32, .hidden = 4096, .heads = 32,
      .intermediate = 11008, .vocab = 32064, .context = 4096, .mlp = VRAM_MLP_GATED,
      .norm = VRAM_NORM_RMS, .flags = VRAM_ARCH_FINAL_NORM, .extra_params = 324487168},
     VRAM_DTYPE_F16, 576},
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
    m->image_tokens = b->image_tokens;
}
