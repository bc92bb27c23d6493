/* Fuzzes the reads of a model.safetensors.index.json's weight_map
 * (driver/models/model_st_index.c): the input is the index's text, read by the streaming read
 * (which leaves what is outside the common form to the cJSON tree) and by the tree alone; the
 * two must agree on the status, the message, every tensor with its shard and every shard with
 * its count (gen/st_index_agree.h), and an error must be one line naming the input.
 * Seeds: corpus/st_index/ (written by test/fuzz/gen/gen_corpus.c). */
#include <string.h>

#include "fuzz_common.h"
#include "gen/st_index_agree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int streamed;
    FUZZ_CHECK(st_index_disagree((const char *)data, size, &streamed) == NULL);
    vram__st_index ix;
    char err[512] = "";
    vram_status st = vram__st_index_parse((const char *)data, size, "index", &ix, err, sizeof err);
    if (st == VRAM_OK) {
        FUZZ_CHECK(ix.tensors.n > 0 && ix.shards.n > 0 && ix.shards.n <= ix.tensors.n);
        size_t sum = 0;
        for (size_t i = 0; i < ix.shards.n; i++) {
            FUZZ_CHECK(ix.shards.v[i].val > 0);
            sum += ix.shards.v[i].val;
        }
        FUZZ_CHECK(sum == ix.tensors.n);
        for (size_t i = 0; i < ix.tensors.n; i++) {
            FUZZ_CHECK(ix.tensors.v[i].val < ix.shards.n);
            FUZZ_CHECK(vram__st_names_get(&ix.tensors, ix.tensors.v[i].s, ix.tensors.v[i].len) ==
                       &ix.tensors.v[i]);
        }
    } else {
        FUZZ_CHECK(strncmp(err, "index: ", 7) == 0 && strchr(err, '\n') == NULL);
    }
    vram__st_index_free(&ix);
    return 0;
}
