/* fuzz_supervise.c — the supervision policy (include/vramkit/supervise.h) under random
 * configurations (restarts up to the maximum and beyond, any backoff, cap and stable period)
 * and random sequences of attempt ends (any outcome number, ready or not, any time after
 * ready, stop requests), against a shadow of the rules written out plainly. After every
 * call: the strategy stays in the chain and only moves down by one; a restart repeats it with
 * the delay base x 2^(k-1) capped (computed here in 128-bit-free arithmetic), k counting
 * restarts in a row that a stable period or a degrade starts again; exit and give-up end it
 * and nothing is accepted after; errors change nothing. */
#include "fuzz_common.h"
#include <vramkit/supervise.h>

#define MAX_ENDS 256

static uint32_t shadow_backoff(uint32_t base, uint32_t max, uint32_t k) {
    uint64_t d = base;
    if (k == 0) return 0;
    for (uint32_t i = 1; i < k && d < max; i++) d *= 2u;
    return d > max ? max : (uint32_t)d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    vram_supervise_config c;
    vram_supervise s;
    c.restarts = (uint32_t)fuzz_u64(&in, 1) % 8u;
    if (fuzz_u64(&in, 1) == 0xff) c.restarts = VRAM_SUPERVISE_MAX_RESTARTS + (uint32_t)fuzz_u64(&in, 1) % 2u;
    c.degrade = fuzz_bool(&in);
    c.backoff_ms = (uint32_t)fuzz_u64(&in, 4);
    c.backoff_max_ms = (uint32_t)fuzz_u64(&in, 4);
    c.stable_ms = (uint32_t)fuzz_u64(&in, 2);
    int count = (int)(fuzz_u64(&in, 2) % (VRAM_SUPERVISE_MAX_STRATEGIES + 2)) - 1;
    vram_status st = vram_supervise_init(&s, &c, count);
    int valid = count >= 1 && count <= VRAM_SUPERVISE_MAX_STRATEGIES &&
                c.restarts <= VRAM_SUPERVISE_MAX_RESTARTS;
    FUZZ_CHECK((st == VRAM_OK) == valid);
    if (st != VRAM_OK) return 0;
    vram_supervise_config r = vram_supervise_defaults(&c);
    FUZZ_CHECK(memcmp(&s.cfg, &r, sizeof r) == 0);
    FUZZ_CHECK(r.backoff_ms > 0 && r.backoff_max_ms >= r.backoff_ms && r.stable_ms > 0);
    uint32_t in_a_row = 0; /* the shadow */
    for (int i = 0; i < MAX_ENDS && in.n > 0; i++) {
        vram_supervise_end e;
        vram_supervise_decision d, d0;
        memset(&d, 0xa5, sizeof d);
        d0 = d;
        e.outcome = (vram_attempt_outcome)((int)(fuzz_u64(&in, 1) % (VRAM_ATTEMPT_OUTCOME_COUNT + 2)) - 1);
        e.ready = fuzz_bool(&in);
        e.ready_ms = fuzz_u64(&in, 3);
        e.stop_requested = (fuzz_u64(&in, 1) % 16u) == 0;
        vram_supervise before = s;
        st = vram_supervise_ended(&s, &e, &d);
        if (before.done) {
            FUZZ_CHECK(st == VRAM_E_STATE);
        } else if ((int)e.outcome < 0 || (int)e.outcome >= (int)VRAM_ATTEMPT_OUTCOME_COUNT) {
            FUZZ_CHECK(st == VRAM_E_INVALID);
        } else {
            FUZZ_CHECK(st == VRAM_OK);
        }
        if (st != VRAM_OK) {
            FUZZ_CHECK(memcmp(&s, &before, sizeof s) == 0 && memcmp(&d, &d0, sizeof d) == 0);
            continue;
        }
        int later = before.current < count - 1;
        int sticky = e.outcome == VRAM_ATTEMPT_OOM || e.outcome == VRAM_ATTEMPT_CUDA_STICKY;
        FUZZ_CHECK(d.strategy >= 0 && d.strategy < count && s.current == d.strategy);
        if (e.stop_requested) {
            FUZZ_CHECK(d.action == VRAM_SUPERVISE_EXIT && d.why == VRAM_SUPERVISE_WHY_STOPPED);
        } else if (e.outcome == VRAM_ATTEMPT_SUCCESS) {
            FUZZ_CHECK(d.action == VRAM_SUPERVISE_EXIT && d.why == VRAM_SUPERVISE_WHY_CLEAN_EXIT);
        } else if (!e.ready) {
            FUZZ_CHECK(d.action == (later ? VRAM_SUPERVISE_NEXT : VRAM_SUPERVISE_GIVE_UP));
            if (later) in_a_row = 0;
        } else {
            if (e.ready_ms >= r.stable_ms) in_a_row = 0;
            if (r.degrade && later && sticky) {
                FUZZ_CHECK(d.action == VRAM_SUPERVISE_NEXT && d.why == VRAM_SUPERVISE_WHY_DEGRADE);
                in_a_row = 0;
            } else if (in_a_row < r.restarts) {
                in_a_row++;
                FUZZ_CHECK(d.action == VRAM_SUPERVISE_RESTART && d.restart == in_a_row);
                FUZZ_CHECK(d.delay_ms == shadow_backoff(r.backoff_ms, r.backoff_max_ms, in_a_row));
            } else {
                FUZZ_CHECK(d.action == (r.restarts ? VRAM_SUPERVISE_GIVE_UP : VRAM_SUPERVISE_EXIT));
            }
        }
        if (d.action == VRAM_SUPERVISE_NEXT) FUZZ_CHECK(d.strategy == before.current + 1 && d.delay_ms == 0);
        if (d.action == VRAM_SUPERVISE_RESTART) {
            FUZZ_CHECK(d.strategy == before.current);
            FUZZ_CHECK(d.delay_ms >= r.backoff_ms && d.delay_ms <= r.backoff_max_ms);
            FUZZ_CHECK(s.restarts == before.restarts + 1u || before.restarts == UINT32_MAX);
        }
        FUZZ_CHECK(s.done == (d.action == VRAM_SUPERVISE_EXIT || d.action == VRAM_SUPERVISE_GIVE_UP));
        FUZZ_CHECK(s.in_a_row <= r.restarts);
        if (!s.done) FUZZ_CHECK(s.in_a_row == in_a_row);
    }
    return 0;
}
