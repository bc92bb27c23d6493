/* driver/util/text.h — text that every part of the driver writes the same way: a byte count
 * as a size ("1.50 GiB") and a template whose {name} placeholders are filled by the caller
 * (reasons of plans and placements, doctor's remedies, watch's warnings, try's commands). */
#ifndef VRAMKIT_DRIVER_UTIL_TEXT_H
#define VRAMKIT_DRIVER_UTIL_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/base.h>

/* Text to numbers, for options, environment variables and files alike. Each returns VRAM_OK
 * with *out set, or VRAM_E_INVALID with *out untouched. */
/* An unsigned decimal integer <= max: digits only (no sign, space or junk), no overflow. */
vram_status vram_parse_u64(const char *text, uint64_t max, uint64_t *out);
/* A size: bytes ("4096"), or a number with a unit B, KB/MB/GB/TB (powers of 1000),
 * KiB/MiB/GiB/TiB (powers of 1024), K/M/G/T (as KB...), case-insensitive, spaces allowed
 * before it; a fraction only with a unit ("7.5GB"); whole bytes; no overflow. */
vram_status vram_parse_size(const char *text, uint64_t *out);
/* A fraction in (0, 1], as "0.75" or "75%" (starts with a digit or '.'). */
vram_status vram_parse_fraction(const char *text, double *out);
/* A percentage in (0, 100], as "90" or "92.5%" (no sign or leading space). */
vram_status vram_parse_percent(const char *text, double *out);

/* The documented exit code of a status, whose fault it says: 0 ok; 1 the answer is "no"
 * (VRAM_E_NOSPACE: does not fit); 3 the environment's (I/O, memory, no driver or GPU, CUDA,
 * a part not built, ranks that fail); 2 the input's (anything else). What the CLI exits with
 * and the Python package's VramkitError.exit_code. */
int vram_exit_code(vram_status st);

/* ---- option values: the value TEXT of option --NAME, or one line saying what is wrong ----
 * Each returns VRAM_OK with *out set, or VRAM_E_INVALID with err one line ("--NAME: ...")
 * and *out untouched. The commands word some defects differently, and those lines are part
 * of what they do (the golden test pins them), so the flags keep each command's words: */
enum {
    /* a value starting with '-' is "'TEXT' is negative" (else the malformed line) */
    VRAM_OPT_NEGATIVE = 1u << 0,
    /* a value below the minimum has its own line: counts "must be at least MIN", sizes
     * "must be more than 0 bytes" (else the malformed line) */
    VRAM_OPT_AT_LEAST = 1u << 1,
    /* sizes: the malformed line is short, "'TEXT' is not a size" (" above 0" when 0 is not
     * allowed), instead of listing the units */
    VRAM_OPT_BRIEF = 1u << 2
};
/* A whole number in [min, max]; malformed: "'TEXT' is not a whole number from MIN to MAX". */
vram_status vram_opt_count(const char *name, const char *text, uint64_t min, uint64_t max,
                           unsigned flags, uint64_t *out, char *err, size_t cap);
/* A size (vram_parse_size), 0 only when allow_zero; malformed: "'TEXT' is not a size (bytes,
 * or a number with B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)". */
vram_status vram_opt_size(const char *name, const char *text, int allow_zero, unsigned flags,
                          uint64_t *out, char *err, size_t cap);
/* A fraction in (0, 1] (vram_parse_fraction). */
vram_status vram_opt_fraction(const char *name, const char *text, double *out, char *err,
                              size_t cap);
/* A percentage in (0, 100] (vram_parse_percent); *out is the percentage (90 for "90%"). */
vram_status vram_opt_percent(const char *name, const char *text, double *out, char *err,
                             size_t cap);
/* Seconds: digits with at most one '.' between digits, > 0 and <= VRAM_OPT_MAX_SECONDS. */
#define VRAM_OPT_MAX_SECONDS 1000000.0
vram_status vram_opt_seconds(const char *name, const char *text, double *out, char *err,
                             size_t cap);

/* `bytes` as "512 B" below 1 KiB, else with two decimals and the largest binary unit that
 * keeps the number at least 1 ("1.50 GiB"), into buf (cut to cap - 1 bytes). Returns buf. */
const char *vram_fmt_size(uint64_t bytes, char *buf, size_t cap);

/* Looks up placeholder `key` (klen bytes, not NUL-terminated): writes its value into
 * val[0 .. vcap) NUL-terminated and returns 1, or returns 0 when `key` is not one. */
typedef int (*vram_expand_fn)(void *ctx, const char *key, size_t klen, char *val, size_t vcap);

/* `tpl` with every {key} that `lookup` knows replaced by its value (at most 255 bytes each);
 * any other brace is copied as written and scanning goes on after it, so "{a{key}" keeps
 * "{a" and fills {key}. Writes at most cap - 1 bytes and a NUL into out (nothing when cap
 * is 0; out may then be NULL). Returns the length of the whole result, as snprintf does:
 * a result >= cap was cut. */
size_t vram_expand(const char *tpl, vram_expand_fn lookup, void *ctx, char *out, size_t cap);

/* One line into dst[0 .. cap), cut there; nothing when dst is NULL or cap is 0. */
void vram_msgf(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The same, and `st` back, so a failure reads
 * `return vram_errorf(err, cap, VRAM_E_INVALID, "--x: '%s' ...", text);`. */
vram_status vram_errorf(char *err, size_t cap, vram_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* VRAMKIT_DRIVER_UTIL_TEXT_H */
