/* The loss scaler across ranks (vram_comm_scaler_end_step over MPI): overflows injected on one
 * rank only make every rank skip that step and back off alike, so the scales stay identical,
 * bit for bit, and equal to one scaler fed with the flags of all ranks together. */
#include <string.h>

#include "mpi_check.h"

#define STEPS 300

/* rank r finds an overflow at step t (only one rank at a time, and a NaN flag once) */
static float flag_of(int r, int world, int t) {
    if (r == 2 % world && t % 17 == 5) return 1.0f;
    if (r == world - 1 && t == 50) return __builtin_nanf("");
    if (r == 0 && t >= 120 && t < 124) return 1.0f; /* a run of overflows: hysteresis */
    return 0.0f;
}

int main(void) {
    vram_comm_ops c = check_comm();
    vram_scaler s, ref;
    vram_scaler_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.growth_interval = 10;
    cfg.hysteresis = 2;
    CHECK(vram_scaler_init(&s, &cfg) == VRAM_OK, "init");
    CHECK(vram_scaler_init(&ref, &cfg) == VRAM_OK, "init");
    unsigned skipped = 0;
    for (int t = 0; t < STEPS; t++) {
        float flags[2] = {flag_of(c.rank, c.world, t), 0.0f};
        vram_scaler_report rep, rrep;
        vram_status st = vram_comm_scaler_end_step(&c, &s, flags, 2, VRAM_SCALER_FLAGS_STEP, &rep);
        CHECK(st == VRAM_OK, "step %d: %s (%s)", t, vram_status_str(st), c.last_error(c.ctx));
        /* the one-process reference: the flags of every rank, or'ed */
        float all[2] = {0.0f, 0.0f};
        for (int r = 0; r < c.world; r++)
            if (flag_of(r, c.world, t) != 0.0f) all[0] = 1.0f;
        CHECK(vram_scaler_end_step(&ref, all, 2, VRAM_SCALER_FLAGS_STEP, &rrep) == VRAM_OK, "ref");
        CHECK(rep.skip_mask == rrep.skip_mask, "step %d: skip mask %x, the reference's %x", t,
              rep.skip_mask, rrep.skip_mask);
        CHECK(memcmp(&s.scale, &ref.scale, sizeof s.scale) == 0, "step %d: scale %g, reference %g",
              t, (double)s.scale, (double)ref.scale);
        CHECK((rep.skip_mask != 0) == (all[0] != 0.0f), "step %d skips only where a rank overflowed", t);
        skipped += rep.skip_mask != 0;
        /* every rank holds the same scale and skipped the same steps */
        float hi[2] = {s.scale, -s.scale};
        CHECK(c.all_reduce(c.ctx, hi, hi, 2, VRAM_COMM_F32, VRAM_COMM_MAX, NULL) == VRAM_OK, "max");
        CHECK(hi[0] == s.scale && -hi[1] == s.scale, "step %d: scales differ across ranks: %g .. %g",
              t, (double)-hi[1], (double)hi[0]);
        uint32_t sk = rep.skip_mask != 0, sum = sk;
        CHECK(c.all_reduce(c.ctx, &sum, &sum, 1, VRAM_COMM_U32, VRAM_COMM_SUM, NULL) == VRAM_OK, "sum");
        CHECK(sum == 0 || sum == (uint32_t)c.world, "step %d: %u of %d ranks skipped", t, sum, c.world);
    }
    CHECK(skipped >= 20, "only %u steps skipped: the injection did not happen", skipped);
    CHECK(s.scale != VRAM_SCALER_DEFAULT_INIT, "the scale never moved");
    return check_finish(&c);
}
