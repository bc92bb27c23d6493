/* vramkit/perm.h — a keyed permutation of [0, n), computed one position at a time.
 * perm(x) for one x costs O(1) time and no memory, so a shuffle of any length can be
 * printed, resumed or gathered from any position without materialising the whole order.
 * A Feistel network on the smallest power of two >= n, walked back into [0, n). No
 * allocation, no I/O. */
#ifndef VRAMKIT_PERM_H
#define VRAMKIT_PERM_H

#include "base.h"
#include "rng.h"

/* How it works, and why it is a bijection.
 *
 * Domain. w is the smallest number of bits with 2^w >= n (w = 0 for n = 1). A w-bit value
 * x is two halves: lo, its low b = floor(w / 2) bits, and hi, the w - b bits above them.
 *
 * Rounds. R rounds (vram__perm_rounds: 8 for w >= 12, more for smaller domains), round
 * i = 0 .. R-1 with the function f_i(v) = mix((key ^ v) + (i + 1) * GAMMA), draw i + 1 of
 * the SplitMix64 stream seeded with key ^ v (rng.h's vram_rng_draw):
 *   even i:  lo ^= f_i(hi)  (the low b bits of it)
 *   odd i:   hi ^= f_i(lo)  (its bits b .. w-1, in place: no shift)
 * A round changes one half by a function of the other, which it leaves alone, so applying
 * the same round twice gives x back: every round is an involution, the network (the rounds
 * in order) is a permutation of [0, 2^w), and the rounds in reverse order are its inverse.
 * No balance is needed: b and w - b may differ by one.
 *
 * Cycle-walking. For x < n, perm(x) applies the network until the value falls below n. The
 * network is a permutation of [0, 2^w), so the values it visits from x form x's cycle, which
 * returns to x (< n): the walk always ends. It passes only values >= n before it ends, each
 * at most once, so it takes at most 2^w - n + 1 <= 2^w - 1 steps (walk_max, the loop's
 * bound; none for n = 1, where w = 0 and 0 is the only value); since 2^w < 2n, fewer than
 * 2 on average over x. The restriction of a permutation by cycle-walking is a permutation of
 * [0, n) (each value < n has exactly one predecessor in the walk), and the inverse walks the
 * inverse network.
 *
 * Key. The state of rng.h's stream keyed by (seed, domain, epoch, stream) (vram_rng_key), so
 * a permutation is named by the same four numbers as a Fisher-Yates shuffle over that stream
 * would be. Every constant here (the rounds, which half goes first, the round function) is
 * part of every shuffled order vramkit produces: changing one changes them all.
 *
 * Proved (test/proof/proof_perm.c): results are below n, the walk ends within walk_max
 * steps, no shift past 63 bits. Tested (test/unit/test_perm.c): the bijection itself,
 * exhaustively for every n up to 2^12 and on samples for n up to 2^64 - 1, and the spread of
 * the orders over keys. */

/* Rounds of the network on w bits: 2 * ceil(48 / w), at least 8. Eight are past the four
 * that make a Feistel network with random round functions indistinguishable from a random
 * permutation (Luby-Rackoff) for wide halves; halves of a few bits need many more before
 * every order of a small n is about equally likely (measured: test_perm.c's spread tests;
 * 6 rounds leave n = 5 .. 7 far from uniform, 32 do not). Small domains are cheap, so they
 * get them. */
#define VRAM_PERM_MIN_ROUNDS 8u

/* A permutation of [0, n). Filled by vram_perm_make; read only through vram_perm_at and
 * vram_perm_index_of. */
typedef struct vram_perm {
    uint64_t n;        /* it permutes [0, n), n >= 1 */
    uint64_t lo_mask;  /* 2^b - 1: the low half's bits */
    uint64_t hi_mask;  /* 2^w - 2^b: the high half's bits, in place */
    uint64_t lo_bits;  /* b = floor(w / 2), <= 32 */
    uint64_t walk_max; /* 2^w - 1: network steps a walk may take (it needs 2^w - n + 1 at
                          most, fewer than 2 on average) */
    uint64_t rounds;   /* of the network, 8 .. 96 */
    uint64_t key;      /* the keyed stream's state */
    int keyed;         /* 0: the identity (perm(x) = x) */
} vram_perm;

/* The permutation's invariant: what vram_perm_make establishes and the walk relies on. */
/*@ predicate vram_perm_ok(vram_perm *p) =
      \valid_read(p) && p->n >= 1 && p->lo_bits <= 32 && p->rounds <= 96; */

/* w: the bits of n - 1 (the smallest w with 2^w >= n). */
/*@ requires n >= 1;
    assigns \nothing;
    ensures \result <= 64; */
VRAM_HD VRAM_DEF uint64_t vram__perm_bits(uint64_t n) {
    uint64_t w = 0;
    /*@ loop invariant 0 <= w <= 64;
        loop assigns w;
        loop variant 64 - w; */
    while (w < 64u && ((n - 1u) >> w) != 0) w++;
    return w;
}

/* The rounds for w bits (see VRAM_PERM_MIN_ROUNDS). */
/*@ requires w <= 64;
    assigns \nothing;
    ensures VRAM_PERM_MIN_ROUNDS <= \result <= 96; */
VRAM_HD VRAM_DEF uint64_t vram__perm_rounds(uint64_t w) {
    uint64_t r = w == 0 ? 96u : 2u * ((48u + w - 1u) / w);
    return r < VRAM_PERM_MIN_ROUNDS ? VRAM_PERM_MIN_ROUNDS : r;
}

/* 2^k - 1 for k <= 64, without a shift by 64. */
/*@ requires k <= 64;
    assigns \nothing; */
VRAM_HD VRAM_DEF uint64_t vram__perm_mask(uint64_t k) {
    return k == 0 ? 0u : UINT64_MAX >> (64u - k);
}

/* A permutation of [0, n): the identity when keyed is 0, else the network keyed by
 * (seed, domain, epoch, stream). VRAM_E_INVALID for n == 0 (nothing to permute: *p is then
 * the permutation of [0, 1), so that reading it is still defined). */
/*@ requires \valid(p);
    assigns *p;
    ensures vram_perm_ok(p);
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK <==> n >= 1;
    ensures \result == VRAM_OK ==> p->n == n; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_perm_make(vram_perm *p, uint64_t n, int keyed,
                                                           uint64_t seed, uint64_t domain,
                                                           uint64_t epoch, uint64_t stream) {
    vram_rng r;
    uint64_t w, m = n == 0 ? 1u : n;
    w = vram__perm_bits(m);
    p->n = m;
    p->lo_bits = w / 2u;
    p->lo_mask = vram__perm_mask(w / 2u);
    p->hi_mask = vram__perm_mask(w) ^ p->lo_mask;
    p->walk_max = vram__perm_mask(w);
    p->rounds = vram__perm_rounds(w);
    p->keyed = keyed != 0;
    vram_rng_key(&r, seed, domain, epoch, stream);
    p->key = r.state;
    return n == 0 ? VRAM_E_INVALID : VRAM_OK;
}

/* Round i of the network on x (an involution: the same round again gives x back). */
/*@ requires vram_perm_ok(p);
    assigns \nothing; */
VRAM_HD VRAM_DEF uint64_t vram__perm_round(const vram_perm *p, uint64_t i, uint64_t x) {
    uint64_t b = p->lo_bits;
    if (i % 2u == 0) return x ^ (vram_rng_draw(p->key ^ (x >> b), i) & p->lo_mask);
    return x ^ (vram_rng_draw(p->key ^ (x & p->lo_mask), i) & p->hi_mask);
}

/* The network on x: the rounds in order, or in reverse order (its inverse). */
/*@ requires vram_perm_ok(p);
    assigns \nothing; */
VRAM_HD VRAM_DEF uint64_t vram__perm_network(const vram_perm *p, uint64_t x, int inverse) {
    uint64_t i, r = p->rounds;
    /*@ loop invariant 0 <= i <= r;
        loop assigns i, x;
        loop variant r - i; */
    for (i = 0; i < r; i++) x = vram__perm_round(p, inverse ? r - 1u - i : i, x);
    return x;
}

/* The walk: the network (or its inverse) until the value is below n, at most walk_max
 * times. */
/*@ requires vram_perm_ok(p) && x < p->n;
    assigns \nothing;
    ensures \result < p->n; */
VRAM_HD VRAM_DEF uint64_t vram__perm_walk(const vram_perm *p, uint64_t x, int inverse) {
    uint64_t y = x, steps;
    if (!p->keyed) return x;
    /*@ loop invariant 0 <= steps <= p->walk_max;
        loop assigns steps, y;
        loop variant p->walk_max - steps; */
    for (steps = 0; steps < p->walk_max; steps++) {
        y = vram__perm_network(p, y, inverse);
        if (y < p->n) return y;
    }
    /* Not reached: x's cycle returns below n within walk_max steps (see the top of this
     * file). The bound makes the end provable; x keeps the result in range all the same. */
    return x;
}

/* The value at position x of the permutation, for x < n (a result < n; every result once
 * over x in [0, n)). O(1): on average fewer than two passes of the network. */
/*@ requires vram_perm_ok(p) && x < p->n;
    assigns \nothing;
    ensures \result < p->n; */
VRAM_HD VRAM_DEF uint64_t vram_perm_at(const vram_perm *p, uint64_t x) {
    return vram__perm_walk(p, x, 0);
}

/* The position of value y, for y < n: vram_perm_at(p, vram_perm_index_of(p, y)) == y. */
/*@ requires vram_perm_ok(p) && y < p->n;
    assigns \nothing;
    ensures \result < p->n; */
VRAM_HD VRAM_DEF uint64_t vram_perm_index_of(const vram_perm *p, uint64_t y) {
    return vram__perm_walk(p, y, 1);
}

#endif /* VRAMKIT_PERM_H */
