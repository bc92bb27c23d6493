/* test/fuzz/gen/st_index_agree.h — the two reads of a model.safetensors.index.json's weight_map
 * (driver/models/model_st_index.c: the streaming read, with its fallback, and the cJSON tree)
 * must give the same answer: status, message, tensors in order with their shards, shards in
 * order with their counts. Used by fuzz_st_index.c and test_model_safetensors.c. */
#ifndef VRAMKIT_ST_INDEX_AGREE_H
#define VRAMKIT_ST_INDEX_AGREE_H

#include <string.h>

#include "models/model_safetensors.h"

static inline int st_index_names_equal(const vram__st_names *a, const vram__st_names *b) {
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].len != b->v[i].len || a->v[i].val != b->v[i].val ||
            memcmp(a->v[i].s, b->v[i].s, a->v[i].len) != 0)
            return 0;
    return 1;
}

/* NULL when the reads agree, else what differs. *streamed: the streaming read decided (no
 * tree was built). */
static inline const char *st_index_disagree(const char *text, size_t len, int *streamed) {
    vram__st_index a, b;
    char ea[512] = "", eb[512] = "";
    const char *why = NULL;
    vram_status sa = vram__st_index_parse(text, len, "index", &a, ea, sizeof ea);
    vram_status sb = vram__st_index_parse_tree(text, len, "index", &b, eb, sizeof eb);
    *streamed = sa == VRAM_OK && a.doc == NULL;
    if (sa != sb)
        why = "status";
    else if (strcmp(ea, eb) != 0)
        why = "message";
    else if (sa == VRAM_OK && !st_index_names_equal(&a.tensors, &b.tensors))
        why = "tensors";
    else if (sa == VRAM_OK && !st_index_names_equal(&a.shards, &b.shards))
        why = "shards";
    else if (sa != VRAM_OK && (a.tensors.n != 0 || b.tensors.n != 0 || a.doc || b.doc))
        why = "something left after an error";
    else if (sa == VRAM_OK && a.tensors.n == 0)
        why = "no tensors";
    vram__st_index_free(&a);
    vram__st_index_free(&b);
    return why;
}

#endif /* VRAMKIT_ST_INDEX_AGREE_H */
