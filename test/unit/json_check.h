/* json_check.h — read a command's JSON in a test: the text must be one JSON document, and a
 * member taken with these helpers must be there with the type asked for, else the test
 * fails naming the key. Shared by the tests that run `vramkit ... --json`. */
#ifndef VRAMKIT_TEST_JSON_CHECK_H
#define VRAMKIT_TEST_JSON_CHECK_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

/* The document text holds (white space may follow it, nothing else); owned by the caller. */
static inline cJSON *jparse(const char *text) {
    cr_assert_not_null(text, "no text to parse");
    cJSON *doc = cJSON_ParseWithOpts(text, NULL, 1);
    cr_assert_not_null(doc, "not one JSON document:\n%s", text);
    return doc;
}

/* Member `key` of object o, which must be there (null counts as there). */
static inline const cJSON *jget(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert_not_null(v, "no '%s'", key);
    return v;
}

static inline const char *jstr(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsString(v), "no string '%s'", key);
    return v->valuestring;
}

/* The string member, or NULL when it is missing or not a string (for "null or text"). */
static inline const char *jstr_or_null(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline int jis_null(const cJSON *o, const char *key) {
    return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

static inline double jnum(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "no number '%s'", key);
    return v->valuedouble;
}

/* A count: a number that is an exact integer in [0, 2^53), the range in which a JSON
 * reader's double holds every integer. */
static inline uint64_t jcount_of(const cJSON *v, const char *what) {
    cr_assert(cJSON_IsNumber(v), "%s is not a number", what);
    double d = v->valuedouble;
    cr_assert(d >= 0 && d < 9007199254740992.0 && d == (double)(uint64_t)d,
              "%s is not a count: %.17g", what, d);
    return (uint64_t)d;
}
static inline uint64_t jcount(const cJSON *o, const char *key) {
    return jcount_of(cJSON_GetObjectItemCaseSensitive(o, key), key);
}
/* Item i of an array, a count. */
static inline uint64_t jcount_at(const cJSON *arr, int i) {
    cr_assert(cJSON_IsArray(arr) && i < cJSON_GetArraySize(arr), "no item %d", i);
    return jcount_of(cJSON_GetArrayItem(arr, i), "an array item");
}

static inline const cJSON *jarr(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsArray(v), "no array '%s'", key);
    return v;
}

/* The element of array arr whose member `key` is the string `value`. */
static inline const cJSON *jfind(const cJSON *arr, const char *key, const char *value) {
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        const char *s = jstr_or_null(e, key);
        if (s != NULL && strcmp(s, value) == 0) return e;
    }
    cr_assert_fail("no element with %s = %s", key, value);
    return NULL;
}

#endif
