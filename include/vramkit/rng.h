/* vramkit/rng.h — a small, documented, deterministic random generator for shuffles.
 * SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): a 64-bit counter stepped by the golden
 * gamma, passed through a bijective mixer; keyed streams; unbiased bounded draws. */
#ifndef VRAMKIT_RNG_H
#define VRAMKIT_RNG_H

#include "base.h"

/* The arithmetic here wraps modulo 2^64 on purpose: that is the generator. Size math
 * never goes through this header (it is proved with unsigned-overflow checks off, see
 * test/proof/proof_rng.opts). Every constant below is part of the documented stream:
 * changing one changes every shuffle ever planned. */

/* The step added to the state per draw: 2^64 / golden ratio, odd. */
#define VRAM_RNG_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/* Generator state: one 64-bit counter. Zero is a valid state. */
typedef struct vram_rng {
    uint64_t state;
} vram_rng;

/* The SplitMix64 finaliser: z ^= z>>30; z *= 0xbf58476d1ce4e5b9; z ^= z>>27;
 * z *= 0x94d049bb133111eb; z ^= z>>31. Every step is invertible, so it is a bijection of
 * 2^64: distinct states never give the same draw. */
/*@ assigns \nothing; */
VRAM_HD VRAM_DEF uint64_t vram_rng_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Plain SplitMix64 seeding: the state is the seed, so the draws match every other
 * SplitMix64 implementation. */
/*@ requires \valid(r);
    assigns r->state;
    ensures r->state == seed; */
VRAM_HD VRAM_DEF void vram_rng_seed(vram_rng *r, uint64_t seed) { r->state = seed; }

/* A stream keyed by (seed, domain, epoch, stream), so every (epoch, chunk) gets its own
 * independent-looking sequence without storing anything:
 *   h = seed; for k in (domain, epoch, stream): h = mix((h ^ k) + GAMMA); state = h.
 * The old state plays no part: the new one is a function of the four keys only. */
/*@ requires \valid(r);
    assigns r->state; */
VRAM_HD VRAM_DEF void vram_rng_key(vram_rng *r, uint64_t seed, uint64_t domain, uint64_t epoch,
                                   uint64_t stream) {
    uint64_t h = seed;
    h = vram_rng_mix((h ^ domain) + VRAM_RNG_GAMMA);
    h = vram_rng_mix((h ^ epoch) + VRAM_RNG_GAMMA);
    h = vram_rng_mix((h ^ stream) + VRAM_RNG_GAMMA);
    r->state = h;
}

/* Next 64 random bits: state += GAMMA; return mix(state). */
/*@ requires \valid(r);
    assigns r->state;
    ensures r->state == (uint64_t)(\old(r->state) + VRAM_RNG_GAMMA); */
VRAM_HD VRAM_DEF uint64_t vram_rng_next(vram_rng *r) {
    r->state += VRAM_RNG_GAMMA;
    return vram_rng_mix(r->state);
}

/* Draw i + 1 of the stream whose state is s, without stepping through the draws before it:
 * mix(s + (i + 1) * GAMMA), what vram_rng_next returns the (i + 1)-th time after a state of
 * s. O(1): a stream read at random positions (perm.h's round functions). */
/*@ assigns \nothing; */
VRAM_HD VRAM_DEF uint64_t vram_rng_draw(uint64_t s, uint64_t i) {
    return vram_rng_mix(s + (i + 1u) * VRAM_RNG_GAMMA);
}

/* A uniform draw in [0, bound), unbiased: draws below 2^64 mod bound are rejected (that
 * short tail would favour small results), then the draw is reduced mod bound. Expected
 * draws < 2 for every bound. */
/*@ requires \valid(r);
    requires bound > 0;
    assigns r->state;
    ensures \result < bound; */
VRAM_HD VRAM_DEF uint64_t vram_rng_below(vram_rng *r, uint64_t bound) {
    uint64_t tail = (UINT64_C(0) - bound) % bound; /* == 2^64 mod bound */
    uint64_t x;
    /*@ loop assigns x, r->state; */
    do {
        x = vram_rng_next(r);
    } while (x < tail);
    return x % bound;
}

#endif /* VRAMKIT_RNG_H */
