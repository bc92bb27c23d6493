/* driver/util/json.h — the one JSON writer of the driver: a document streamed to a FILE*
 * (stdout, a file, or memory through open_memstream), valid output, strings escaped, commas
 * handled. Every --json document, the plan file, the try/run reports and the Python API's
 * answers are written with it; JSON is read (cJSON) only where another program wrote it. */
#ifndef VRAMKIT_DRIVER_UTIL_JSON_H
#define VRAMKIT_DRIVER_UTIL_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Nesting deeper than this is written, but its commas are no longer tracked. */
#define VRAM_JSON_MAX_DEPTH 64

typedef struct vram_json {
    FILE *out;
    int depth;
    unsigned char need_comma[VRAM_JSON_MAX_DEPTH];
    int after_key;
} vram_json;

void vram_json_init(vram_json *j, FILE *out);
void vram_json_begin_object(vram_json *j);
void vram_json_end_object(vram_json *j);
void vram_json_begin_array(vram_json *j);
void vram_json_end_array(vram_json *j);
void vram_json_key(vram_json *j, const char *key);
void vram_json_string(vram_json *j, const char *s); /* NULL is written as null */
void vram_json_u64(vram_json *j, uint64_t v);
void vram_json_i64(vram_json *j, int64_t v);
void vram_json_double(vram_json *j, double v); /* non-finite values are written as null */
void vram_json_bool(vram_json *j, int v);
void vram_json_null(vram_json *j);
/* Ends the document with a newline and flushes. */
void vram_json_finish(vram_json *j);

/* Keyed shorthands for the common members of an open object. */
void vram_json_key_u64(vram_json *j, const char *key, uint64_t v);
void vram_json_key_i64(vram_json *j, const char *key, int64_t v);
void vram_json_key_string(vram_json *j, const char *key, const char *s);
void vram_json_key_bool(vram_json *j, const char *key, int v);
void vram_json_key_double(vram_json *j, const char *key, double v);
/* The same for a member that may have no value: null when !have (v is not looked at then). A
 * string member without a value is vram_json_key_string with NULL. */
void vram_json_key_u64_or_null(vram_json *j, const char *key, int have, uint64_t v);
void vram_json_key_i64_or_null(vram_json *j, const char *key, int have, int64_t v);
void vram_json_key_bool_or_null(vram_json *j, const char *key, int have, int v);
void vram_json_key_double_or_null(vram_json *j, const char *key, int have, double v);

/* ---- reading: JSON as Python reads it ------------------------------------------------------ */

struct cJSON;
/* Resolves duplicate keys in a parsed document as Python's json (and so transformers) does: in
 * every object, members that share a name become one, at the first one's place with the last
 * one's value (cJSON's lookups would find the first value; Python's dict keeps the first
 * insertion's place and the last assignment's value). Recursive through objects and arrays; O(n log n) an object. Call it once
 * after parsing a document another program wrote (config.json, a plan file). */
void vram_json_last_wins(struct cJSON *doc);
/* The same by the path it takes when there is no memory for the sort (for the tests). */
void vram__json_last_wins_pairwise(struct cJSON *doc);

#endif /* VRAMKIT_DRIVER_UTIL_JSON_H */
