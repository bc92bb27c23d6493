/* h5_mutate.h — corrupts valid HDF5 files where HDF5 is most fragile: the superblock, the
 * datasets' object headers and their messages (dataspace, datatype, layout, filters, fill),
 * chunk indexes (v1 B-tree nodes; the fixed/extensible arrays and v2 B-trees of the newer
 * format), heaps, and raw chunks; truncation at many offsets; huge dimensions; odd types.
 * Structures are found on the pristine file (object header addresses from HDF5, the rest by
 * their signatures); a checksummed structure's length is found from its checksum, so a
 * mutation can re-seal it and reach the code behind the checksum. No HDF5 calls here: the
 * base files come from h5_bases.h. */
#ifndef VRAMKIT_FUZZ_H5_MUTATE_H
#define VRAMKIT_FUZZ_H5_MUTATE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Jenkins' lookup3 (hashlittle), the checksum of HDF5's newer structures --------- */

static inline uint32_t h5m_rot(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

static inline uint32_t h5m_lookup3(const uint8_t *k, size_t len) {
    uint32_t a, b, c;
    a = b = c = 0xdeadbeefu + (uint32_t)len;
    while (len > 12) {
        a += k[0] + ((uint32_t)k[1] << 8) + ((uint32_t)k[2] << 16) + ((uint32_t)k[3] << 24);
        b += k[4] + ((uint32_t)k[5] << 8) + ((uint32_t)k[6] << 16) + ((uint32_t)k[7] << 24);
        c += k[8] + ((uint32_t)k[9] << 8) + ((uint32_t)k[10] << 16) + ((uint32_t)k[11] << 24);
        a -= c; a ^= h5m_rot(c, 4); c += b;
        b -= a; b ^= h5m_rot(a, 6); a += c;
        c -= b; c ^= h5m_rot(b, 8); b += a;
        a -= c; a ^= h5m_rot(c, 16); c += b;
        b -= a; b ^= h5m_rot(a, 19); a += c;
        c -= b; c ^= h5m_rot(b, 4); b += a;
        len -= 12;
        k += 12;
    }
    switch (len) { /* the tail, high bytes first; every case falls through */
    case 12: c += (uint32_t)k[11] << 24; /* fall through */
    case 11: c += (uint32_t)k[10] << 16; /* fall through */
    case 10: c += (uint32_t)k[9] << 8; /* fall through */
    case 9: c += k[8]; /* fall through */
    case 8: b += (uint32_t)k[7] << 24; /* fall through */
    case 7: b += (uint32_t)k[6] << 16; /* fall through */
    case 6: b += (uint32_t)k[5] << 8; /* fall through */
    case 5: b += k[4]; /* fall through */
    case 4: a += (uint32_t)k[3] << 24; /* fall through */
    case 3: a += (uint32_t)k[2] << 16; /* fall through */
    case 2: a += (uint32_t)k[1] << 8; /* fall through */
    case 1: a += k[0]; break;
    case 0: return c;
    }
    c ^= b; c -= h5m_rot(b, 14);
    a ^= c; a -= h5m_rot(c, 11);
    b ^= a; b -= h5m_rot(a, 25);
    c ^= b; c -= h5m_rot(b, 16);
    a ^= c; a -= h5m_rot(c, 4);
    b ^= a; b -= h5m_rot(a, 14);
    c ^= b; c -= h5m_rot(b, 24);
    return c;
}

static inline uint64_t h5m_le(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8u * i);
    return v;
}

static inline void h5m_put_le(uint8_t *p, unsigned n, uint64_t v) {
    for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8u * i));
}

/* ---- regions of a file ------------------------------------------------------------------ */

enum h5m_kind {
    H5M_SUPERBLOCK, H5M_OHDR, H5M_DATASPACE, H5M_DATATYPE, H5M_LAYOUT, H5M_FILTERS, H5M_FILL,
    H5M_MESSAGE, H5M_BTREE1, H5M_INDEX, H5M_HEAP, H5M_CHUNK, H5M_KINDS
};

static const char *const h5m_kind_names[H5M_KINDS] = {
    "superblock", "object-header", "dataspace", "datatype", "layout", "filters", "fill",
    "message", "btree-v1", "chunk-index", "heap", "chunk-data"};

typedef struct h5m_region {
    uint64_t off, len;  /* bytes to mutate */
    int kind;
    uint64_t seal_off;  /* a checksummed structure: [seal_off, seal_off + seal_len) ends */
    uint64_t seal_len;  /* with its 4-byte checksum; 0 when none */
    int version;        /* message version, B-tree level, ... (kind-specific, -1 unknown) */
} h5m_region;

#define H5M_MAX_REGIONS 512

typedef struct h5m_file {
    uint8_t *bytes;
    size_t len;
    uint64_t base; /* where the superblock is (the user block's size) */
    h5m_region r[H5M_MAX_REGIONS];
    int nr;
} h5m_file;

static inline void h5m_add(h5m_file *f, uint64_t off, uint64_t len, int kind, uint64_t seal_off,
                           uint64_t seal_len, int version) {
    if (f->nr >= H5M_MAX_REGIONS || off >= f->len || len == 0) return;
    if (len > f->len - off) len = f->len - off;
    h5m_region *r = &f->r[f->nr++];
    r->off = off;
    r->len = len;
    r->kind = kind;
    r->seal_off = seal_off;
    r->seal_len = seal_len;
    r->version = version;
}

/* The length (checksum included) of the checksummed structure at off: the first length
 * whose last 4 bytes are the lookup3 of the bytes before them; 0 when none up to max. */
static inline uint64_t h5m_sealed_len(const h5m_file *f, uint64_t off, uint64_t max) {
    for (uint64_t L = 12; L <= max && off + L <= f->len; L++) {
        uint32_t want = (uint32_t)h5m_le(f->bytes + off + L - 4, 4);
        if (h5m_lookup3(f->bytes + off, (size_t)(L - 4)) == want) return L;
    }
    return 0;
}

/* Re-seals every checksummed region that contains [off, off + n). */
static inline void h5m_reseal(h5m_file *f, uint64_t off, uint64_t n) {
    for (int i = 0; i < f->nr; i++) {
        const h5m_region *r = &f->r[i];
        if (r->seal_len == 0 || off + n <= r->seal_off || off >= r->seal_off + r->seal_len) continue;
        if (r->seal_off + r->seal_len > f->len) continue;
        uint32_t c = h5m_lookup3(f->bytes + r->seal_off, (size_t)(r->seal_len - 4));
        h5m_put_le(f->bytes + r->seal_off + r->seal_len - 4, 4, c);
    }
}

/* Messages of an object header's first chunk, as regions by message type. */
static inline void h5m_messages(h5m_file *f, uint64_t p, uint64_t end, int v2, int crt_order,
                                uint64_t seal_off, uint64_t seal_len) {
    while (p + (v2 ? 4u : 8u) <= end && p + (v2 ? 4u : 8u) <= f->len) {
        unsigned type, size, hdr;
        if (v2) {
            type = f->bytes[p];
            size = (unsigned)h5m_le(f->bytes + p + 1, 2);
            hdr = 4u + (crt_order ? 2u : 0u);
        } else {
            type = (unsigned)h5m_le(f->bytes + p, 2);
            size = (unsigned)h5m_le(f->bytes + p + 2, 2);
            hdr = 8u;
        }
        uint64_t data = p + hdr;
        if (data + size > end) break;
        int kind = type == 1 ? H5M_DATASPACE : type == 3 ? H5M_DATATYPE : type == 8 ? H5M_LAYOUT
                 : type == 11 ? H5M_FILTERS : type == 5 || type == 4 ? H5M_FILL : H5M_MESSAGE;
        if (size > 0) h5m_add(f, data, size, kind, seal_off, seal_len, f->bytes[data]);
        p = data + size;
    }
}

/* The object header at file offset off (v1 or "OHDR"), its messages as regions. */
static inline void h5m_object_header(h5m_file *f, uint64_t off) {
    if (off + 16 > f->len) return;
    if (memcmp(f->bytes + off, "OHDR", 4) == 0) {
        uint8_t flags = f->bytes[off + 5];
        uint64_t p = off + 6;
        if (flags & 0x20) p += 16;
        if (flags & 0x10) p += 4;
        unsigned w = 1u << (flags & 3u);
        if (p + w > f->len) return;
        uint64_t size = h5m_le(f->bytes + p, w);
        p += w;
        uint64_t seal = p + size + 4 - off;
        if (p + size + 4 > f->len) return;
        h5m_add(f, off, seal - 4, H5M_OHDR, off, seal, 2);
        h5m_messages(f, p, p + size, 1, (flags & 0x04) != 0, off, seal);
    } else if (f->bytes[off] == 1) {
        uint64_t size = h5m_le(f->bytes + off + 8, 4);
        if (off + 16 + size > f->len) size = f->len - off - 16;
        h5m_add(f, off, 16 + size, H5M_OHDR, 0, 0, 1);
        h5m_messages(f, off + 16, off + 16 + size, 0, 0, 0, 0);
    }
}

/* Finds the regions of f (bytes and len set): the superblock, the object headers at the
 * given addresses (HDF5's, relative to the superblock), structures by signature, and raw
 * chunks at the given file offsets. */
static inline void h5m_scan(h5m_file *f, const uint64_t *ohdr, int nohdr, const uint64_t *chunk,
                            const uint64_t *chunk_len, int nchunk) {
    static const char sig[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    f->nr = 0;
    f->base = 0;
    for (uint64_t at = 0; at + 8 <= f->len; at = at ? at * 2 : 512) {
        if (memcmp(f->bytes + at, sig, 8) == 0) {
            unsigned v = f->bytes[at + 8];
            uint64_t L = v >= 2 ? h5m_sealed_len(f, at, 128) : 0;
            f->base = at;
            h5m_add(f, at, L ? L - 4 : 96, H5M_SUPERBLOCK, L ? at : 0, L, (int)v);
            break;
        }
        if (at > f->len / 2) break;
    }
    for (int i = 0; i < nohdr; i++) h5m_object_header(f, f->base + ohdr[i]);
    static const struct { const char *s; int kind; int sealed; } sigs[] = {
        {"TREE", H5M_BTREE1, 0}, {"BTHD", H5M_INDEX, 1}, {"BTIN", H5M_INDEX, 1},
        {"BTLF", H5M_INDEX, 1}, {"FAHD", H5M_INDEX, 1}, {"FADB", H5M_INDEX, 1},
        {"EAHD", H5M_INDEX, 1}, {"EAIB", H5M_INDEX, 1}, {"EASB", H5M_INDEX, 1},
        {"EADB", H5M_INDEX, 1}, {"HEAP", H5M_HEAP, 0}, {"SNOD", H5M_HEAP, 0},
        {"GCOL", H5M_HEAP, 0}, {"FRHP", H5M_HEAP, 1}, {"FHDB", H5M_HEAP, 1},
        {"FHIB", H5M_HEAP, 1}, {"OCHK", H5M_OHDR, 1}, {"FSHD", H5M_HEAP, 1},
        {"FSSE", H5M_HEAP, 1}, {"SMTB", H5M_HEAP, 1}, {"SMLI", H5M_HEAP, 1}};
    for (uint64_t p = 0; p + 8 <= f->len; p++) {
        for (size_t s = 0; s < sizeof sigs / sizeof sigs[0]; s++) {
            if (memcmp(f->bytes + p, sigs[s].s, 4) != 0) continue;
            if (sigs[s].sealed) {
                uint64_t L = h5m_sealed_len(f, p, 8192);
                if (L) h5m_add(f, p, L - 4, sigs[s].kind, p, L, f->bytes[p + 4]);
            } else {
                h5m_add(f, p, 512, sigs[s].kind, 0, 0, sigs[s].kind == H5M_BTREE1 ? f->bytes[p + 5] : -1);
            }
        }
    }
    for (int i = 0; i < nchunk; i++) h5m_add(f, chunk[i], chunk_len[i], H5M_CHUNK, 0, 0, -1);
}

/* ---- mutations ------------------------------------------------------------------------ */

typedef struct h5m_rng {
    uint64_t s;
} h5m_rng;

static inline uint64_t h5m_next(h5m_rng *r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t h5m_below(h5m_rng *r, uint64_t n) { return n ? h5m_next(r) % n : 0; }

/* A value a field should not hold. */
static inline uint64_t h5m_odd_value(h5m_rng *r, uint64_t old, unsigned width) {
    static const uint64_t v[] = {0, 1, 2, 3, 7, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000,
                                 0x7fffffff, 0x80000000u, 0xff000004u, 0xffffffffu,
                                 UINT64_C(1) << 32, UINT64_C(1) << 40, UINT64_C(1) << 62,
                                 UINT64_C(0x7fffffffffffffff), UINT64_MAX};
    uint64_t x;
    switch (h5m_below(r, 5)) {
    case 0: x = old + 1; break;
    case 1: x = old - 1; break;
    case 2: x = old * (2u + h5m_below(r, 1000)); break;
    case 3: x = h5m_next(r); break;
    default: x = v[h5m_below(r, sizeof v / sizeof v[0])]; break;
    }
    if (width < 8) x &= (UINT64_C(1) << (8u * width)) - 1u;
    return x;
}

/* Applies one mutation; writes a short description into what. Returns the new length
 * (truncation shortens the file; nothing grows it past cap). */
static inline size_t h5m_mutate(h5m_file *f, size_t cap, h5m_rng *rng, char *what, size_t wcap) {
    uint64_t op = h5m_below(rng, 100);
    const h5m_region *r = f->nr ? &f->r[h5m_below(rng, (uint64_t)f->nr)] : NULL;
    int seal = h5m_below(rng, 10) < 8; /* mostly re-seal, to get behind the checksum */
    if (r == NULL || r->off >= f->len) op = 90; /* nothing found: truncate */
    if (op < 35) { /* flip bits in a region */
        unsigned n = 1u + (unsigned)h5m_below(rng, 4);
        uint64_t len = r->len;
        if (r->off + len > f->len) len = f->len - r->off;
        for (unsigned i = 0; i < n; i++) {
            uint64_t at = r->off + h5m_below(rng, len);
            f->bytes[at] ^= (uint8_t)(1u << h5m_below(rng, 8));
            if (seal) h5m_reseal(f, at, 1);
        }
        snprintf(what, wcap, "flip %u bit%s in %s at %llu%s", n, n > 1 ? "s" : "", h5m_kind_names[r->kind],
                 (unsigned long long)r->off, seal && r->seal_len ? " (resealed)" : "");
    } else if (op < 65) { /* an odd value in a field: sizes, dims, classes, addresses */
        static const unsigned widths[] = {1, 2, 4, 8};
        unsigned w = widths[h5m_below(rng, 4)];
        uint64_t len = r->len < w ? 0 : r->len - w + 1;
        if (r->off + r->len > f->len || len == 0) return f->len;
        uint64_t at = r->off + h5m_below(rng, len);
        if (r->kind == H5M_DATATYPE && h5m_below(rng, 2) && r->len >= 8) {
            at = r->off + 4; /* the type's size */
            w = 4;
        } else if (r->kind == H5M_DATASPACE && h5m_below(rng, 2) && r->len >= 16) {
            at = r->off + (r->version == 1 ? 8u : 4u); /* the first dimension */
            w = 8;
        }
        uint64_t v = h5m_odd_value(rng, h5m_le(f->bytes + at, w), w);
        h5m_put_le(f->bytes + at, w, v);
        if (seal) h5m_reseal(f, at, w);
        snprintf(what, wcap, "set %u bytes of %s at %llu to %llu%s", w, h5m_kind_names[r->kind],
                 (unsigned long long)at, (unsigned long long)v, seal && r->seal_len ? " (resealed)" : "");
    } else if (op < 75 && r->kind == H5M_BTREE1 && r->off + 24 + 8 <= f->len) {
        /* a v1 B-tree node: a child pointer aimed at the node itself, at a sibling child, or
         * moved by some bytes (chunk addresses at level 0) */
        uint64_t used = h5m_le(f->bytes + r->off + 6, 2);
        uint64_t node_addr = r->off - f->base;
        /* the chunk B-tree's key is 8 bytes + 8 per dimension (rank + 1); find the stride by
         * the first child pointer that lands inside the file */
        uint64_t stride = 0, first = 0;
        for (uint64_t ks = 16; ks <= 8u + 8u * 33u && !stride; ks += 8) {
            uint64_t c0 = h5m_le(f->bytes + r->off + 24 + ks, 8);
            if (r->off + 24 + ks + 8 <= f->len && c0 > 0 && c0 < f->len) {
                stride = ks + 8;
                first = r->off + 24 + ks;
            }
        }
        if (!stride || used == 0) return f->len;
        uint64_t i = h5m_below(rng, used), j = h5m_below(rng, used);
        uint64_t at = first + i * stride, at2 = first + j * stride;
        if (at + 8 > f->len || at2 + 8 > f->len) return f->len;
        uint64_t old = h5m_le(f->bytes + at, 8), v;
        const char *how;
        switch (h5m_below(rng, 4)) {
        case 0: v = node_addr; how = "the node itself"; break;
        case 1: v = h5m_le(f->bytes + at2, 8); how = "a sibling's child"; break;
        case 2: v = old + 1u + h5m_below(rng, 64); how = "a few bytes on"; break;
        default: v = old - 1u - h5m_below(rng, old ? old : 1); how = "an earlier address"; break;
        }
        h5m_put_le(f->bytes + at, 8, v);
        snprintf(what, wcap, "b-tree node at %llu (level %d): child %llu -> %s (%llu)",
                 (unsigned long long)r->off, r->version, (unsigned long long)i, how, (unsigned long long)v);
    } else if (op < 80 && r->kind == H5M_BTREE1 && r->off + 24 + 8 <= f->len) {
        /* a leaf key's chunk size (the first 4 bytes of each key) */
        uint64_t used = h5m_le(f->bytes + r->off + 6, 2);
        if (used == 0 || r->version != 0) return f->len;
        uint64_t stride = 0;
        for (uint64_t ks = 16; ks <= 8u + 8u * 33u && !stride; ks += 8) {
            uint64_t c0 = h5m_le(f->bytes + r->off + 24 + ks, 8);
            if (r->off + 24 + ks + 8 <= f->len && c0 > 0 && c0 < f->len) stride = ks + 8;
        }
        if (!stride) return f->len;
        uint64_t at = r->off + 24 + h5m_below(rng, used) * stride;
        if (at + 4 > f->len) return f->len;
        uint64_t v = h5m_odd_value(rng, h5m_le(f->bytes + at, 4), 4);
        h5m_put_le(f->bytes + at, 4, v);
        snprintf(what, wcap, "b-tree leaf at %llu: a chunk's size -> %llu", (unsigned long long)r->off,
                 (unsigned long long)v);
    } else if (op < 95) { /* truncate: anywhere, or inside a structure */
        uint64_t at = h5m_below(rng, 2) && r ? r->off + h5m_below(rng, r->len + 1) : h5m_below(rng, f->len);
        if (at >= f->len) at = f->len ? f->len - 1 : 0;
        snprintf(what, wcap, "truncate at %llu of %zu", (unsigned long long)at, f->len);
        f->len = (size_t)at;
    } else { /* a block copied over another structure */
        const h5m_region *s = &f->r[h5m_below(rng, (uint64_t)f->nr)];
        uint64_t n = s->len < r->len ? s->len : r->len;
        if (s->off + n > f->len || r->off + n > f->len) return f->len;
        memmove(f->bytes + r->off, f->bytes + s->off, (size_t)n);
        if (seal) h5m_reseal(f, r->off, n);
        snprintf(what, wcap, "copy %s at %llu over %s at %llu (%llu bytes)", h5m_kind_names[s->kind],
                 (unsigned long long)s->off, h5m_kind_names[r->kind], (unsigned long long)r->off,
                 (unsigned long long)n);
    }
    (void)cap;
    return f->len;
}

#endif /* VRAMKIT_FUZZ_H5_MUTATE_H */
