/* The built-in models: well-formed, and their parameter counts (computed by model.h from
 * the architecture numbers) agree with the published counts within 0.5%. */
#include <criterion/criterion.h>
#include <string.h>

#include "models/builtin_models.h"

/* Published counts: model cards and the hub's safetensors metadata. */
static const struct {
    const char *name;
    uint64_t published;
} counts[] = {
    {"nllb-200-distilled-600M", 615000000ull}, /* hub: 615M */
    {"multilingual-e5-large", 560000000ull},   /* hub: 560M */
    {"distilbert-base-uncased", 67000000ull},  /* hub: 67M (masked-LM checkpoint) */
    {"gpt2", 124000000ull},                    /* OpenAI: 124M */
    {"Llama-3-8B", 8030000000ull},             /* hub: 8.03B */
    {"Mistral-7B", 7240000000ull},             /* hub: 7.24B */
    {"Qwen2.5-0.5B", 494000000ull},            /* Qwen card: 0.49B; hub: 494M */
    {"Mistral-Small-22B", 22200000000ull},     /* hub: 22.2B */
    {"Qwen3-30B-A3B", 30500000000ull},         /* Qwen card: 30.5B (3.3B activated) */
    {"whisper-small", 242000000ull},           /* hub: 242M */
    {"llava-1.5-7b", 7060000000ull},           /* hub: 7.06B */
};

Test(builtin_models, every_preset_matches_its_published_parameter_count) {
    size_t n = 0;
    const vram_builtin_model *all = vram_builtin_models(&n);
    cr_assert_eq(n, sizeof counts / sizeof counts[0], "a count for every preset");
    for (size_t i = 0; i < n; i++) {
        const vram_builtin_model *b = vram_builtin_find(counts[i].name);
        vram_param_count c;
        cr_assert_not_null(b, "%s", counts[i].name);
        cr_assert_eq(vram_arch_params(&b->arch, &c), VRAM_OK, "%s", b->name);
        double rel = ((double)c.total - (double)counts[i].published) / (double)counts[i].published;
        cr_expect(rel < 0.005 && rel > -0.005, "%s: %llu vs %llu (%.3f%%)", b->name,
                  (unsigned long long)c.total, (unsigned long long)counts[i].published,
                  100.0 * rel);
        cr_expect(b->dtype != VRAM_DTYPE_NONE && b->summary && b->hf_id, "%s", b->name);
        cr_expect_eq(&all[i], b, "listing order matches");
    }
}

Test(builtin_models, exact_counts_where_the_checkpoint_states_them) {
    static const struct {
        const char *name;
        uint64_t exact;
    } exact[] = {
        {"gpt2", 124439808ull},               /* sum of GPT-2's state dict, no buffers */
        {"Llama-3-8B", 8030261248ull},        /* hub safetensors metadata */
        {"Mistral-7B", 7241732096ull},        /* hub safetensors metadata */
        {"Qwen2.5-0.5B", 494032768ull},       /* hub safetensors metadata */
        {"distilbert-base-uncased", 66985530ull}, /* hub safetensors metadata */
        /* transformers' class on the meta device (see test_model_shapes.c) */
        {"whisper-small", 241734912ull},
        {"llava-1.5-7b", 7063427072ull},
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        vram_param_count c;
        const vram_builtin_model *b = vram_builtin_find(exact[i].name);
        cr_assert_not_null(b);
        cr_assert_eq(vram_arch_params(&b->arch, &c), VRAM_OK);
        cr_expect_eq(c.total, exact[i].exact, "%s: %llu", b->name, (unsigned long long)c.total);
    }
}

Test(builtin_models, lookup_by_name_or_hub_id_case_insensitive) {
    const vram_builtin_model *b = vram_builtin_find("facebook/nllb-200-distilled-600m");
    cr_assert_not_null(b);
    cr_expect_str_eq(b->name, "nllb-200-distilled-600M");
    cr_expect_eq(vram_builtin_find("NLLB-200-DISTILLED-600M"), b);
    cr_expect_null(vram_builtin_find("nllb"));
    cr_expect_null(vram_builtin_find(""));
    cr_expect_null(vram_builtin_find(NULL));
    vram_model m;
    memset(&m, 0x77, sizeof m);
    vram_builtin_to_model(b, &m);
    cr_expect_eq(m.arch.encoder_layers, 12);
    cr_expect_eq(m.stats.tensors, 0, "no tensor list");
    cr_expect_eq(m.dtype, VRAM_DTYPE_F32);
}
