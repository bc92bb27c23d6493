/* Unit tests of vramkit/perm.h, the keyed permutation every shuffle of vramkit uses: the
 * bijection (exhaustively for every n up to 4096, on samples for n up to 2^64 - 1), its
 * inverse, the identity, the refusal of n = 0, and the statistical quality of the orders
 * over keys — tests a trivial permutation (a rotation, an xor or an affine map by the key)
 * cannot pass. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/perm.h>
#include <vramkit/rng.h>

static vram_perm make(uint64_t n, uint64_t seed, uint64_t domain, uint64_t epoch, uint64_t stream) {
    vram_perm p;
    vram_status st = vram_perm_make(&p, n, 1, seed, domain, epoch, stream);
    cr_assert_eq(st, VRAM_OK, "n=%llu: %s", (unsigned long long)n, vram_status_name(st));
    cr_assert_eq(p.n, n);
    return p;
}

/* z of a chi-square statistic with dof degrees of freedom (normal approximation). */
static double chi_z(double chi, double dof) { return (chi - dof) / sqrt(2.0 * dof); }

Test(perm, draw_is_the_stream_read_at_a_position) {
    /* vram_rng_draw(s, i) is what the (i+1)-th vram_rng_next returns from state s */
    vram_rng r;
    vram_rng_seed(&r, UINT64_C(0x1234567890abcdef));
    for (uint64_t i = 0; i < 100; i++)
        cr_assert_eq(vram_rng_next(&r), vram_rng_draw(UINT64_C(0x1234567890abcdef), i));
}

Test(perm, every_n_up_to_4096_is_a_bijection_with_its_inverse) {
    static unsigned char seen[4096];
    for (uint64_t n = 1; n <= 4096; n++) {
        vram_perm p = make(n, n * 7919u, 2, n % 5u, n * 31u);
        memset(seen, 0, sizeof seen);
        for (uint64_t x = 0; x < n; x++) {
            uint64_t y = vram_perm_at(&p, x);
            cr_assert_lt(y, n, "n=%llu: perm(%llu) = %llu", (unsigned long long)n,
                         (unsigned long long)x, (unsigned long long)y);
            cr_assert_eq(seen[y], 0, "n=%llu: %llu twice", (unsigned long long)n,
                         (unsigned long long)y);
            seen[y] = 1;
            cr_assert_eq(vram_perm_index_of(&p, y), x);
        }
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

Test(perm, large_n_up_to_2_64_minus_1_on_samples) {
    /* below 2^64 - 1 and around the powers of two, where the walk is longest (n = 2^k + 1)
     * or absent (n = 2^k): in range, the inverse gives each position back (so no two
     * positions share a value), and the sampled values are distinct */
    static const uint64_t ns[] = {UINT64_C(1) << 32, (UINT64_C(1) << 32) + 1, UINT64_C(1000000007),
                                  UINT64_C(1000000000000), UINT64_C(1) << 63,
                                  (UINT64_C(1) << 63) + 1, UINT64_MAX - 1, UINT64_MAX};
    enum { SAMPLES = 20000 };
    static uint64_t got[SAMPLES];
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        uint64_t n = ns[t];
        vram_perm p = make(n, t, 2, 1, 3);
        vram_rng r;
        vram_rng_seed(&r, 99 + t);
        for (int k = 0; k < SAMPLES; k++) {
            /* half the positions at the ends of the range, half anywhere */
            uint64_t x = k < SAMPLES / 4 ? (uint64_t)k
                       : k < SAMPLES / 2 ? n - 1u - (uint64_t)(k - SAMPLES / 4)
                                         : vram_rng_below(&r, n);
            uint64_t y = vram_perm_at(&p, x);
            cr_assert_lt(y, n);
            cr_assert_eq(vram_perm_index_of(&p, y), x, "n=%llu x=%llu", (unsigned long long)n,
                         (unsigned long long)x);
            got[k] = k < SAMPLES / 2 ? y : 0; /* the random half may repeat a position */
        }
        qsort(got, SAMPLES / 2, sizeof got[0], cmp_u64);
        for (int k = 1; k < SAMPLES / 2; k++) cr_assert_neq(got[k], got[k - 1]);
    }
}

Test(perm, identity_one_and_zero) {
    vram_perm p;
    cr_assert_eq(vram_perm_make(&p, 1000, 0, 5, 6, 7, 8), VRAM_OK);
    for (uint64_t x = 0; x < 1000; x++) {
        cr_assert_eq(vram_perm_at(&p, x), x);
        cr_assert_eq(vram_perm_index_of(&p, x), x);
    }
    /* n = 1: the one position, keyed or not */
    cr_assert_eq(vram_perm_make(&p, 1, 1, 5, 6, 7, 8), VRAM_OK);
    cr_assert_eq(vram_perm_at(&p, 0), 0);
    /* n = 0 is refused, and leaves the permutation of [0, 1) (still readable) */
    memset(&p, 0xab, sizeof p);
    cr_assert_eq(vram_perm_make(&p, 0, 1, 5, 6, 7, 8), VRAM_E_INVALID);
    cr_assert_eq(p.n, 1);
    cr_assert_eq(vram_perm_at(&p, 0), 0);
}

Test(perm, every_key_part_changes_the_order) {
    enum { N = 1000 };
    static uint64_t a[N], b[N];
    vram_perm p = make(N, 42, 2, 7, 1234);
    for (uint64_t x = 0; x < N; x++) a[x] = vram_perm_at(&p, x);
    const uint64_t keys[4][4] = {{43, 2, 7, 1234}, {42, 1, 7, 1234}, {42, 2, 8, 1234}, {42, 2, 7, 1235}};
    for (int k = 0; k < 4; k++) {
        vram_perm q = make(N, keys[k][0], keys[k][1], keys[k][2], keys[k][3]);
        unsigned same = 0;
        for (uint64_t x = 0; x < N; x++) {
            b[x] = vram_perm_at(&q, x);
            same += a[x] == b[x];
        }
        /* two independent random orders agree at about one position */
        cr_assert_lt(same, 10, "key %d: %u positions agree", k, same);
    }
    /* the same key, the same order */
    vram_perm r = make(N, 42, 2, 7, 1234);
    for (uint64_t x = 0; x < N; x++) cr_assert_eq(vram_perm_at(&r, x), a[x]);
}

Test(perm, orders_are_far_from_the_identity) {
    /* a random order of n has one fixed point on average and moves a position by
     * (n^2 - 1) / 3n on average; over 200 keys of n = 1000 both must come out so */
    enum { N = 1000, KEYS = 200 };
    double fixed = 0, moved = 0;
    for (uint64_t s = 0; s < KEYS; s++) {
        vram_perm p = make(N, s, 2, 0, 0);
        for (uint64_t x = 0; x < N; x++) {
            uint64_t y = vram_perm_at(&p, x);
            fixed += y == x;
            moved += y > x ? (double)(y - x) : (double)(x - y);
        }
    }
    fixed /= KEYS;
    moved /= (double)KEYS * N;
    cr_assert(fixed > 0.7 && fixed < 1.3, "%.3f fixed points per order", fixed);
    double want = (double)(N * N - 1) / (3.0 * N);
    cr_assert(fabs(moved - want) < 0.02 * want, "mean move %.1f, want %.1f", moved, want);
}

/* Lehmer code: the index of an order of n among the n! orders. */
static unsigned order_index(const uint64_t *o, unsigned n) {
    unsigned r = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned c = 0;
        for (unsigned j = i + 1; j < n; j++) c += o[j] < o[i];
        r = r * (n - i) + c;
    }
    return r;
}

Test(perm, every_order_of_a_small_n_about_equally_often) {
    /* all n! orders of n = 2 .. 7 (7: 5040 orders, walking from 8 values) over 200 keys an
     * order: chi-square within 5 sigma of its mean. A rotation, an xor or an affine map
     * reaches at most n^2 of the n! orders and fails this from n = 4 on. */
    static unsigned count[5040];
    for (unsigned n = 2; n <= 7; n++) {
        unsigned orders = 1;
        for (unsigned k = 2; k <= n; k++) orders *= k;
        uint64_t keys = 200u * orders;
        memset(count, 0, sizeof count);
        for (uint64_t s = 0; s < keys; s++) {
            uint64_t o[7];
            vram_perm p = make(n, s, 2, s % 3u, 11);
            for (unsigned x = 0; x < n; x++) o[x] = vram_perm_at(&p, x);
            count[order_index(o, n)]++;
        }
        double chi = 0;
        for (unsigned i = 0; i < orders; i++) chi += (count[i] - 200.0) * (count[i] - 200.0) / 200.0;
        double z = chi_z(chi, orders - 1.0);
        cr_assert_lt(fabs(z), 5.0, "n=%u: chi-square %.1f over %u orders (z %.1f)", n, chi, orders, z);
    }
}

Test(perm, neighbours_and_positions_spread_evenly) {
    /* n = 1000 over 2000 keys: (1) where position x goes, in 20 x 20 blocks of 50: every
     * block equally often; (2) the step perm(x + 1) - perm(x) mod n: every step 1 .. n-1
     * equally often (a rotation or an affine map has one step per key). Both chi-square
     * within 5 sigma. */
    enum { N = 1000, KEYS = 2000, B = 20 };
    static double block[B * B], step[N];
    memset(block, 0, sizeof block);
    memset(step, 0, sizeof step);
    for (uint64_t s = 0; s < KEYS; s++) {
        vram_perm p = make(N, s, 1, 3, s);
        uint64_t prev = vram_perm_at(&p, 0);
        block[prev / (N / B)]++;
        for (uint64_t x = 1; x < N; x++) {
            uint64_t y = vram_perm_at(&p, x);
            block[(x / (N / B)) * B + y / (N / B)]++;
            step[(y + N - prev) % N]++;
            prev = y;
        }
    }
    double chi = 0, e = (double)KEYS * N / (B * B);
    for (int i = 0; i < B * B; i++) chi += (block[i] - e) * (block[i] - e) / e;
    double z = chi_z(chi, (B - 1.0) * (B - 1.0));
    cr_assert_lt(fabs(z), 5.0, "positions: chi-square %.1f (z %.1f)", chi, z);
    cr_assert_eq(step[0], 0);
    chi = 0;
    e = (double)KEYS * (N - 1) / (N - 1);
    for (int d = 1; d < N; d++) chi += (step[d] - e) * (step[d] - e) / e;
    z = chi_z(chi, N - 2.0);
    cr_assert_lt(fabs(z), 5.0, "steps: chi-square %.1f (z %.1f)", chi, z);
}
