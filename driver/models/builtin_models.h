/* driver/models/builtin_models.h — architecture numbers of well-known models, compiled into the
 * binary so a fresh machine plans without downloading anything. Each entry's numbers are
 * those of the model's public config.json; its parameter count is computed from them by
 * model.h (test_builtin_models.c checks it against the published count). */
#ifndef VRAMKIT_BUILTIN_MODELS_H
#define VRAMKIT_BUILTIN_MODELS_H

#include <stddef.h>

#include <vramkit/model.h>

typedef struct vram_builtin_model {
    const char *name;    /* what `--model` accepts, e.g. "nllb-200-distilled-600M" */
    const char *hf_id;   /* the Hugging Face repository, also accepted */
    const char *summary; /* one line for listings */
    vram_arch arch;
    vram_dtype dtype;    /* torch_dtype of the published weights */
    uint64_t image_tokens; /* a vision-language model: tokens one image adds (vram_model) */
} vram_builtin_model;

/* All built-in models, in listing order; *count receives how many. */
const vram_builtin_model *vram_builtin_models(size_t *count);

/* The model whose name or Hugging Face id equals text, ASCII case-insensitively; NULL
 * when none does. */
const vram_builtin_model *vram_builtin_find(const char *text);

/* Fill a vram_model from a built-in entry (arch, dtype, image tokens; no tensor list). */
void vram_builtin_to_model(const vram_builtin_model *b, vram_model *m);

#endif
