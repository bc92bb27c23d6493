/* test_base.c — status codes and checked arithmetic of vramkit/base.h.
 * Every size in vramkit passes through these helpers, so overflow must be reported exactly
 * at the edge and must leave the output untouched; every status must have a usable name. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <criterion/theories.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <vramkit/base.h>

/* 128-bit reference arithmetic, independent of the helpers under test. */
__extension__ typedef unsigned __int128 u128;

#define SENTINEL 0x5EA5EA5EA5EA5EA5ull

/* ---- status codes ------------------------------------------------------------------ */

typedef struct status_case {
    vram_status s;
    const char *name;
} status_case;

/* Written out by hand: a code dropped from the X-macro, or renamed, fails here. */
static const status_case all_status[] = {
    {VRAM_OK, "VRAM_OK"},
    {VRAM_E_INVALID, "VRAM_E_INVALID"},
    {VRAM_E_OVERFLOW, "VRAM_E_OVERFLOW"},
    {VRAM_E_RANGE, "VRAM_E_RANGE"},
    {VRAM_E_NOSPACE, "VRAM_E_NOSPACE"},
    {VRAM_E_STATE, "VRAM_E_STATE"},
    {VRAM_E_BUFFER, "VRAM_E_BUFFER"},
    {VRAM_E_MIN_SCALE, "VRAM_E_MIN_SCALE"},
    {VRAM_E_VERSION, "VRAM_E_VERSION"},
    {VRAM_E_NO_DRIVER, "VRAM_E_NO_DRIVER"},
    {VRAM_E_NO_DEVICE, "VRAM_E_NO_DEVICE"},
    {VRAM_E_OOM, "VRAM_E_OOM"},
    {VRAM_E_NOT_SUPPORTED, "VRAM_E_NOT_SUPPORTED"},
    {VRAM_E_CUDA, "VRAM_E_CUDA"},
    {VRAM_E_CUDA_STICKY, "VRAM_E_CUDA_STICKY"},
    {VRAM_E_FORKED, "VRAM_E_FORKED"},
    {VRAM_E_NOT_READY, "VRAM_E_NOT_READY"},
    {VRAM_E_IO, "VRAM_E_IO"},
    {VRAM_E_FORMAT, "VRAM_E_FORMAT"},
    {VRAM_E_UNHANDLED, "VRAM_E_UNHANDLED"},
    {VRAM_E_NOT_BUILT, "VRAM_E_NOT_BUILT"},
    {VRAM_E_NOMEM, "VRAM_E_NOMEM"},
    {VRAM_E_COMM, "VRAM_E_COMM"},
    {VRAM_E_TIMEOUT, "VRAM_E_TIMEOUT"},
};
#define N_STATUS (sizeof all_status / sizeof all_status[0])

Test(status, table_matches_the_header) {
    size_t n = 0;
#define COUNT(name, value, text) n++;
    VRAM_STATUS_LIST(COUNT)
#undef COUNT
    cr_assert_eq(n, N_STATUS, "the header has %zu codes, this test knows %zu", n, N_STATUS);
}

Test(status, ok_is_zero_and_errors_are_negative) {
    cr_assert_eq((int)VRAM_OK, 0);
    for (size_t i = 1; i < N_STATUS; i++)
        cr_assert_lt((int)all_status[i].s, 0, "%s is not negative", all_status[i].name);
}

Test(status, names_and_texts) {
    for (size_t i = 0; i < N_STATUS; i++) {
        const char *text = vram_status_str(all_status[i].s);
        const char *name = vram_status_name(all_status[i].s);
        cr_assert_not_null(text);
        cr_assert_not_null(name);
        cr_assert_str_not_empty(text, "%s has an empty text", all_status[i].name);
        cr_assert_str_eq(name, all_status[i].name);
        cr_assert_null(strchr(text, '\n'), "%s: text is not one line", name);
        cr_assert_str_neq(text, "unknown status", "%s falls through to unknown", name);
    }
}

Test(status, values_names_and_texts_are_distinct) {
    for (size_t i = 0; i < N_STATUS; i++) {
        for (size_t j = i + 1; j < N_STATUS; j++) {
            const char *a = all_status[i].name, *b = all_status[j].name;
            cr_assert_neq((int)all_status[i].s, (int)all_status[j].s, "%s == %s", a, b);
            cr_assert_str_neq(vram_status_str(all_status[i].s), vram_status_str(all_status[j].s),
                              "%s and %s share a text", a, b);
            cr_assert_str_neq(vram_status_name(all_status[i].s),
                              vram_status_name(all_status[j].s));
        }
    }
}

ParameterizedTestParameters(status, unknown_values) {
    static int values[] = {1, 2, -24, -25, -100, 12345, INT_MIN, INT_MAX};
    return cr_make_param_array(int, values, sizeof values / sizeof values[0]);
}

ParameterizedTest(int *v, status, unknown_values) {
    vram_status s = (vram_status)*v;
    cr_assert_str_eq(vram_status_str(s), "unknown status");
    cr_assert_str_eq(vram_status_name(s), "VRAM_E_UNKNOWN");
}

/* ---- checked arithmetic: theories over the edges ------------------------------------ */

#define EDGES                                                                             \
    0ull, 1ull, 2ull, 3ull, 255ull, 4096ull, 0xFFFFFFFFull, 0x100000000ull,               \
        0x100000001ull, UINT64_MAX / 3, UINT64_MAX / 2, UINT64_MAX / 2 + 1, UINT64_MAX - 1, \
        UINT64_MAX

TheoryDataPoints(arith, add) = {DataPoints(uint64_t, EDGES), DataPoints(uint64_t, EDGES)};
Theory((uint64_t a, uint64_t b), arith, add) {
    uint64_t out = SENTINEL;
    u128 ref = (u128)a + b;
    vram_status st = vram__add_u64(a, b, &out);
    if (ref > UINT64_MAX) {
        cr_assert_eq(st, VRAM_E_OVERFLOW);
        cr_assert_eq(out, SENTINEL, "overflow wrote the output");
    } else {
        cr_assert_eq(st, VRAM_OK);
        cr_assert_eq(out, (uint64_t)ref);
    }
}

TheoryDataPoints(arith, mul) = {DataPoints(uint64_t, EDGES), DataPoints(uint64_t, EDGES)};
Theory((uint64_t a, uint64_t b), arith, mul) {
    uint64_t out = SENTINEL;
    u128 ref = (u128)a * b;
    vram_status st = vram__mul_u64(a, b, &out);
    if (ref > UINT64_MAX) {
        cr_assert_eq(st, VRAM_E_OVERFLOW);
        cr_assert_eq(out, SENTINEL, "overflow wrote the output");
    } else {
        cr_assert_eq(st, VRAM_OK);
        cr_assert_eq(out, (uint64_t)ref);
    }
}

TheoryDataPoints(arith, sub) = {DataPoints(uint64_t, EDGES), DataPoints(uint64_t, EDGES)};
Theory((uint64_t a, uint64_t b), arith, sub) {
    uint64_t out = SENTINEL;
    vram_status st = vram__sub_u64(a, b, &out);
    if (b > a) {
        cr_assert_eq(st, VRAM_E_RANGE);
        cr_assert_eq(out, SENTINEL, "underflow wrote the output");
    } else {
        cr_assert_eq(st, VRAM_OK);
        cr_assert_eq((u128)out + b, (u128)a);
    }
}

TheoryDataPoints(arith, div_ceil) = {DataPoints(uint64_t, EDGES), DataPoints(uint64_t, EDGES)};
Theory((uint64_t a, uint64_t b), arith, div_ceil) {
    cr_assume_neq(b, 0);
    uint64_t q = vram__div_ceil_u64(a, b);
    u128 ref = ((u128)a + b - 1) / b;
    cr_assert_eq((u128)q, ref);
    /* the defining property: the smallest q with q * b >= a */
    cr_assert_geq((u128)q * b, (u128)a);
    if (q > 0) cr_assert_lt((u128)(q - 1) * b, (u128)a);
}

TheoryDataPoints(arith, min_max) = {DataPoints(uint64_t, EDGES), DataPoints(uint64_t, EDGES)};
Theory((uint64_t a, uint64_t b), arith, min_max) {
    uint64_t lo = vram__min_u64(a, b), hi = vram__max_u64(a, b);
    cr_assert(lo <= a && lo <= b && (lo == a || lo == b));
    cr_assert(hi >= a && hi >= b && (hi == a || hi == b));
    cr_assert_eq((u128)lo + hi, (u128)a + b);
}

/* ---- the same edges, spelled out ----------------------------------------------------- */

Test(arith, add_edges) {
    uint64_t out = SENTINEL;
    cr_assert_eq(vram__add_u64(UINT64_MAX, 0, &out), VRAM_OK);
    cr_assert_eq(out, UINT64_MAX);
    cr_assert_eq(vram__add_u64(0, UINT64_MAX, &out), VRAM_OK);
    cr_assert_eq(out, UINT64_MAX);
    cr_assert_eq(vram__add_u64(UINT64_MAX - 5, 5, &out), VRAM_OK);
    cr_assert_eq(out, UINT64_MAX);
    out = 7;
    cr_assert_eq(vram__add_u64(UINT64_MAX, 1, &out), VRAM_E_OVERFLOW);
    cr_assert_eq(vram__add_u64(1, UINT64_MAX, &out), VRAM_E_OVERFLOW);
    cr_assert_eq(vram__add_u64(UINT64_MAX, UINT64_MAX, &out), VRAM_E_OVERFLOW);
    cr_assert_eq(out, 7);
    cr_assert_eq(vram__add_u64(0, 0, &out), VRAM_OK);
    cr_assert_eq(out, 0);
}

Test(arith, mul_edges) {
    uint64_t out = SENTINEL;
    cr_assert_eq(vram__mul_u64(0, UINT64_MAX, &out), VRAM_OK);
    cr_assert_eq(out, 0);
    cr_assert_eq(vram__mul_u64(UINT64_MAX, 0, &out), VRAM_OK);
    cr_assert_eq(out, 0);
    cr_assert_eq(vram__mul_u64(UINT64_MAX, 1, &out), VRAM_OK);
    cr_assert_eq(out, UINT64_MAX);
    cr_assert_eq(vram__mul_u64(0xFFFFFFFFull, 0x100000001ull, &out), VRAM_OK);
    cr_assert_eq(out, UINT64_MAX);
    cr_assert_eq(vram__mul_u64(1ull << 32, 1ull << 31, &out), VRAM_OK);
    cr_assert_eq(out, 1ull << 63);
    out = 7;
    cr_assert_eq(vram__mul_u64(1ull << 32, 1ull << 32, &out), VRAM_E_OVERFLOW);
    cr_assert_eq(vram__mul_u64(UINT64_MAX, 2, &out), VRAM_E_OVERFLOW);
    cr_assert_eq(vram__mul_u64(UINT64_MAX / 2 + 1, 2, &out), VRAM_E_OVERFLOW);
    cr_assert_eq(vram__mul_u64(0x100000000ull, 0x100000001ull, &out), VRAM_E_OVERFLOW);
    cr_assert_eq(out, 7);
}

Test(arith, sub_edges) {
    uint64_t out = SENTINEL;
    cr_assert_eq(vram__sub_u64(UINT64_MAX, UINT64_MAX, &out), VRAM_OK);
    cr_assert_eq(out, 0);
    cr_assert_eq(vram__sub_u64(UINT64_MAX, 0, &out), VRAM_OK);
    cr_assert_eq(out, UINT64_MAX);
    cr_assert_eq(vram__sub_u64(0, 0, &out), VRAM_OK);
    cr_assert_eq(out, 0);
    out = 7;
    cr_assert_eq(vram__sub_u64(0, 1, &out), VRAM_E_RANGE);
    cr_assert_eq(vram__sub_u64(UINT64_MAX - 1, UINT64_MAX, &out), VRAM_E_RANGE);
    cr_assert_eq(out, 7);
}

Test(arith, div_ceil_edges) {
    cr_assert_eq(vram__div_ceil_u64(0, 1), 0);
    cr_assert_eq(vram__div_ceil_u64(0, UINT64_MAX), 0);
    cr_assert_eq(vram__div_ceil_u64(1, UINT64_MAX), 1);
    cr_assert_eq(vram__div_ceil_u64(UINT64_MAX, 1), UINT64_MAX);
    cr_assert_eq(vram__div_ceil_u64(UINT64_MAX, UINT64_MAX), 1);
    cr_assert_eq(vram__div_ceil_u64(UINT64_MAX, 2), (UINT64_MAX / 2) + 1); /* no a+b-1 wrap */
    cr_assert_eq(vram__div_ceil_u64(UINT64_MAX - 1, UINT64_MAX), 1);
    cr_assert_eq(vram__div_ceil_u64(10, 5), 2);
    cr_assert_eq(vram__div_ceil_u64(11, 5), 3);
    cr_assert_eq(vram__div_ceil_u64(4, 5), 1);
}

Test(arith, min_max_edges) {
    cr_assert_eq(vram__min_u64(0, UINT64_MAX), 0);
    cr_assert_eq(vram__min_u64(UINT64_MAX, 0), 0);
    cr_assert_eq(vram__max_u64(0, UINT64_MAX), UINT64_MAX);
    cr_assert_eq(vram__max_u64(UINT64_MAX, 0), UINT64_MAX);
    cr_assert_eq(vram__min_u64(5, 5), 5);
    cr_assert_eq(vram__max_u64(5, 5), 5);
}

Test(version, string_matches_numbers) {
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d.%d", VRAM_VERSION_MAJOR, VRAM_VERSION_MINOR,
             VRAM_VERSION_PATCH);
    cr_assert_str_eq(buf, VRAM_VERSION_STRING);
}
