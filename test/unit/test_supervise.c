/* test_supervise.c — the supervision policy (vramkit/supervise.h): defaults and bad configs;
 * the backoff doubles from its base to its cap without overflow; the chain before ready
 * (next, chain exhausted); after ready: restart with the delays in a row, a stable period
 * resets them, a crash loop gives up, no restart exits, degrade on OOM and sticky errors only
 * and only while a strategy is left; stop and clean exit win; nothing changes on error. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <vramkit/supervise.h>

static vram_supervise_end ended(vram_attempt_outcome o, int ready, uint64_t ready_ms) {
    vram_supervise_end e = {o, ready, ready_ms, 0};
    return e;
}

static vram_supervise_decision step(vram_supervise *s, vram_supervise_end e) {
    vram_supervise_decision d;
    cr_assert_eq(vram_supervise_ended(s, &e, &d), VRAM_OK);
    return d;
}

Test(supervise, defaults_fill_zero_fields_only) {
    vram_supervise_config z = {0};
    vram_supervise_config r = vram_supervise_defaults(&z);
    cr_expect_eq(r.backoff_ms, VRAM_SUPERVISE_DEFAULT_BACKOFF_MS);
    cr_expect_eq(r.backoff_max_ms, VRAM_SUPERVISE_DEFAULT_BACKOFF_MAX_MS);
    cr_expect_eq(r.stable_ms, VRAM_SUPERVISE_DEFAULT_STABLE_MS);
    cr_expect_eq(r.restarts, 0u);
    cr_expect_eq(r.degrade, 0);
    vram_supervise_config c = {5u, 1, 200u, 100u, 3000u};
    r = vram_supervise_defaults(&c);
    cr_expect_eq(r.restarts, 5u);
    cr_expect_eq(r.degrade, 1);
    cr_expect_eq(r.backoff_ms, 200u);
    cr_expect_eq(r.backoff_max_ms, 200u, "a cap below the base is raised to it");
    cr_expect_eq(r.stable_ms, 3000u);
}

Test(supervise, init_rejects_bad_input_and_leaves_state) {
    vram_supervise s, before;
    memset(&s, 0x5a, sizeof s);
    before = s;
    vram_supervise_config big = {VRAM_SUPERVISE_MAX_RESTARTS + 1u, 0, 0u, 0u, 0u};
    cr_expect_eq(vram_supervise_init(&s, NULL, 0), VRAM_E_INVALID);
    cr_expect_eq(vram_supervise_init(&s, NULL, -1), VRAM_E_INVALID);
    cr_expect_eq(vram_supervise_init(&s, NULL, VRAM_SUPERVISE_MAX_STRATEGIES + 1), VRAM_E_INVALID);
    cr_expect_eq(vram_supervise_init(&s, &big, 3), VRAM_E_INVALID);
    cr_expect_eq(memcmp(&s, &before, sizeof s), 0, "untouched on error");
    big.restarts = VRAM_SUPERVISE_MAX_RESTARTS;
    cr_expect_eq(vram_supervise_init(&s, &big, VRAM_SUPERVISE_MAX_STRATEGIES), VRAM_OK);
    cr_expect_eq(s.current, 0);
    cr_expect_eq(s.count, VRAM_SUPERVISE_MAX_STRATEGIES);
    cr_expect_eq(s.done, 0);
    cr_expect_eq(vram_supervise_init(&s, NULL, 1), VRAM_OK);
    cr_expect_eq(s.cfg.restarts, 0u);
    cr_expect_eq(s.cfg.backoff_ms, VRAM_SUPERVISE_DEFAULT_BACKOFF_MS);
}

Test(supervise, backoff_doubles_to_the_cap_without_overflow) {
    cr_expect_eq(vram_supervise_backoff(100u, 1000u, 0u), 0u);
    cr_expect_eq(vram_supervise_backoff(100u, 1000u, 1u), 100u);
    cr_expect_eq(vram_supervise_backoff(100u, 1000u, 2u), 200u);
    cr_expect_eq(vram_supervise_backoff(100u, 1000u, 3u), 400u);
    cr_expect_eq(vram_supervise_backoff(100u, 1000u, 4u), 800u);
    cr_expect_eq(vram_supervise_backoff(100u, 1000u, 5u), 1000u, "capped, not 1600");
    cr_expect_eq(vram_supervise_backoff(100u, 1000u, UINT32_MAX), 1000u);
    /* a base near the top of uint32_t: doubling would wrap; it saturates at the cap */
    cr_expect_eq(vram_supervise_backoff(3000000000u, UINT32_MAX, 2u), UINT32_MAX);
    cr_expect_eq(vram_supervise_backoff(UINT32_MAX, UINT32_MAX, 40u), UINT32_MAX);
    cr_expect_eq(vram_supervise_backoff(7u, 7u, 9u), 7u);
}

Test(supervise, names_and_texts) {
    cr_expect_str_eq(vram_supervise_action_name(VRAM_SUPERVISE_NEXT), "next");
    cr_expect_str_eq(vram_supervise_action_name(VRAM_SUPERVISE_RESTART), "restart");
    cr_expect_str_eq(vram_supervise_action_name(VRAM_SUPERVISE_EXIT), "exit");
    cr_expect_str_eq(vram_supervise_action_name(VRAM_SUPERVISE_GIVE_UP), "give_up");
    cr_expect_str_eq(vram_supervise_action_name(VRAM_SUPERVISE_ACTION_COUNT), "?");
    cr_expect_str_eq(vram_supervise_why_name(VRAM_SUPERVISE_WHY_CRASH_LOOP), "crash_loop");
    cr_expect_str_eq(vram_supervise_why_name(VRAM_SUPERVISE_WHY_COUNT), "?");
    for (int w = 0; w < (int)VRAM_SUPERVISE_WHY_COUNT; w++) {
        cr_expect_str_neq(vram_supervise_why_name((vram_supervise_why)w), "?");
        cr_expect(strlen(vram_supervise_why_text((vram_supervise_why)w)) > 10);
    }
    cr_expect_str_eq(vram_supervise_why_text((vram_supervise_why)-1), "?");
}

/* The scripted service of the issue: crash under 1, OOM under 2, ready under 3. */
Test(supervise, chain_before_ready) {
    vram_supervise s;
    cr_assert_eq(vram_supervise_init(&s, NULL, 3), VRAM_OK);
    vram_supervise_decision d = step(&s, ended(VRAM_ATTEMPT_CRASH, 0, 0));
    cr_expect_eq(d.action, VRAM_SUPERVISE_NEXT);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_FAILED_BEFORE_READY);
    cr_expect_eq(d.strategy, 1);
    cr_expect_eq(d.delay_ms, 0u);
    d = step(&s, ended(VRAM_ATTEMPT_TIMEOUT, 0, 0));
    cr_expect_eq(d.action, VRAM_SUPERVISE_NEXT);
    cr_expect_eq(d.strategy, 2);
    cr_expect_eq(s.current, 2);
    d = step(&s, ended(VRAM_ATTEMPT_OOM, 0, 0));
    cr_expect_eq(d.action, VRAM_SUPERVISE_GIVE_UP);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_CHAIN_EXHAUSTED);
    cr_expect_eq(d.strategy, 2, "the last one");
    cr_expect_eq(s.done, 1);
    /* nothing more once done, and nothing changes */
    vram_supervise before = s;
    vram_supervise_end e = ended(VRAM_ATTEMPT_CRASH, 1, 5);
    vram_supervise_decision keep = d;
    cr_expect_eq(vram_supervise_ended(&s, &e, &d), VRAM_E_STATE);
    cr_expect_eq(memcmp(&s, &before, sizeof s), 0);
    cr_expect_eq(memcmp(&d, &keep, sizeof d), 0);
}

Test(supervise, every_failure_before_ready_moves_on) {
    const vram_attempt_outcome fails[] = {VRAM_ATTEMPT_START_FAILED, VRAM_ATTEMPT_TIMEOUT,
                                          VRAM_ATTEMPT_CUDA_STICKY,  VRAM_ATTEMPT_NOT_SUPPORTED,
                                          VRAM_ATTEMPT_OOM,          VRAM_ATTEMPT_CRASH,
                                          VRAM_ATTEMPT_FAILED};
    for (size_t i = 0; i < sizeof fails / sizeof fails[0]; i++) {
        vram_supervise s;
        vram_supervise_config c = {3u, 1, 0u, 0u, 0u};
        cr_assert_eq(vram_supervise_init(&s, &c, 2), VRAM_OK);
        vram_supervise_decision d = step(&s, ended(fails[i], 0, 0));
        cr_expect_eq(d.action, VRAM_SUPERVISE_NEXT, "%s", vram_attempt_outcome_name(fails[i]));
        cr_expect_eq(s.restarts, 0u, "not a restart");
        cr_expect_eq(s.degrades, 0u, "not a degrade");
    }
}

Test(supervise, restarts_back_off_then_crash_loop) {
    vram_supervise s;
    vram_supervise_config c = {3u, 0, 100u, 250u, 10000u};
    cr_assert_eq(vram_supervise_init(&s, &c, 2), VRAM_OK);
    const uint32_t delays[] = {100u, 200u, 250u};
    for (uint32_t k = 1; k <= 3; k++) {
        vram_supervise_decision d = step(&s, ended(VRAM_ATTEMPT_CRASH, 1, 500));
        cr_expect_eq(d.action, VRAM_SUPERVISE_RESTART, "restart %u", k);
        cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_RESTART);
        cr_expect_eq(d.strategy, 0, "the same strategy");
        cr_expect_eq(d.restart, k);
        cr_expect_eq(d.delay_ms, delays[k - 1]);
    }
    cr_expect_eq(s.restarts, 3u);
    vram_supervise_decision d = step(&s, ended(VRAM_ATTEMPT_CRASH, 1, 500));
    cr_expect_eq(d.action, VRAM_SUPERVISE_GIVE_UP);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_CRASH_LOOP);
    cr_expect_eq(d.strategy, 0);
    cr_expect_eq(s.done, 1);
}

Test(supervise, a_stable_period_starts_the_count_again) {
    vram_supervise s;
    vram_supervise_config c = {2u, 0, 100u, 1000u, 5000u};
    cr_assert_eq(vram_supervise_init(&s, &c, 1), VRAM_OK);
    cr_expect_eq(step(&s, ended(VRAM_ATTEMPT_FAILED, 1, 10)).restart, 1u);
    cr_expect_eq(step(&s, ended(VRAM_ATTEMPT_FAILED, 1, 10)).restart, 2u);
    /* ran 5 s after ready this time: the count starts again, so this is restart 1 again */
    vram_supervise_decision d = step(&s, ended(VRAM_ATTEMPT_FAILED, 1, 5000));
    cr_expect_eq(d.action, VRAM_SUPERVISE_RESTART);
    cr_expect_eq(d.restart, 1u);
    cr_expect_eq(d.delay_ms, 100u);
    /* just under the stable period does not reset */
    d = step(&s, ended(VRAM_ATTEMPT_FAILED, 1, 4999));
    cr_expect_eq(d.restart, 2u);
    d = step(&s, ended(VRAM_ATTEMPT_FAILED, 1, 4999));
    cr_expect_eq(d.action, VRAM_SUPERVISE_GIVE_UP);
    cr_expect_eq(s.restarts, 4u, "restarts in all");
}

Test(supervise, no_restart_exits_with_the_child) {
    vram_supervise s;
    cr_assert_eq(vram_supervise_init(&s, NULL, 3), VRAM_OK);
    vram_supervise_decision d = step(&s, ended(VRAM_ATTEMPT_CRASH, 1, 10));
    cr_expect_eq(d.action, VRAM_SUPERVISE_EXIT);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_NO_RESTART);
    cr_expect_eq(d.strategy, 0);
}

Test(supervise, degrade_on_oom_and_sticky_only) {
    vram_supervise s;
    vram_supervise_config c = {1u, 1, 0u, 0u, 0u};
    cr_assert_eq(vram_supervise_init(&s, &c, 3), VRAM_OK);
    /* a crash after ready is restarted, not degraded */
    vram_supervise_decision d = step(&s, ended(VRAM_ATTEMPT_CRASH, 1, 10));
    cr_expect_eq(d.action, VRAM_SUPERVISE_RESTART);
    cr_expect_eq(s.in_a_row, 1u);
    d = step(&s, ended(VRAM_ATTEMPT_OOM, 1, 10));
    cr_expect_eq(d.action, VRAM_SUPERVISE_NEXT);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_DEGRADE);
    cr_expect_eq(d.strategy, 1);
    cr_expect_eq(s.in_a_row, 0u, "another strategy: the count starts again");
    cr_expect_eq(s.degrades, 1u);
    d = step(&s, ended(VRAM_ATTEMPT_CUDA_STICKY, 1, 10));
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_DEGRADE);
    cr_expect_eq(d.strategy, 2);
    /* the last strategy: an OOM after ready is restarted (the one restart allowed) */
    d = step(&s, ended(VRAM_ATTEMPT_OOM, 1, 10));
    cr_expect_eq(d.action, VRAM_SUPERVISE_RESTART);
    cr_expect_eq(d.strategy, 2);
    d = step(&s, ended(VRAM_ATTEMPT_OOM, 1, 10));
    cr_expect_eq(d.action, VRAM_SUPERVISE_GIVE_UP);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_CRASH_LOOP);
    cr_expect_eq(s.degrades, 2u);
}

Test(supervise, without_degrade_an_oom_after_ready_restarts) {
    vram_supervise s;
    vram_supervise_config c = {1u, 0, 0u, 0u, 0u};
    cr_assert_eq(vram_supervise_init(&s, &c, 3), VRAM_OK);
    vram_supervise_decision d = step(&s, ended(VRAM_ATTEMPT_OOM, 1, 10));
    cr_expect_eq(d.action, VRAM_SUPERVISE_RESTART);
    cr_expect_eq(d.strategy, 0);
}

Test(supervise, stop_and_clean_exit_win) {
    vram_supervise s;
    vram_supervise_config c = {5u, 1, 0u, 0u, 0u};
    cr_assert_eq(vram_supervise_init(&s, &c, 3), VRAM_OK);
    vram_supervise_end e = ended(VRAM_ATTEMPT_OOM, 1, 10);
    e.stop_requested = 1;
    vram_supervise_decision d = step(&s, e);
    cr_expect_eq(d.action, VRAM_SUPERVISE_EXIT);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_STOPPED);
    cr_assert_eq(vram_supervise_init(&s, &c, 3), VRAM_OK);
    e = ended(VRAM_ATTEMPT_CRASH, 0, 0);
    e.stop_requested = 1;
    cr_expect_eq(step(&s, e).why, VRAM_SUPERVISE_WHY_STOPPED, "before ready too");
    cr_assert_eq(vram_supervise_init(&s, &c, 3), VRAM_OK);
    d = step(&s, ended(VRAM_ATTEMPT_SUCCESS, 1, 10));
    cr_expect_eq(d.action, VRAM_SUPERVISE_EXIT);
    cr_expect_eq(d.why, VRAM_SUPERVISE_WHY_CLEAN_EXIT);
    cr_assert_eq(vram_supervise_init(&s, &c, 3), VRAM_OK);
    cr_expect_eq(step(&s, ended(VRAM_ATTEMPT_SUCCESS, 0, 0)).why, VRAM_SUPERVISE_WHY_CLEAN_EXIT);
}

Test(supervise, bad_outcome_changes_nothing) {
    vram_supervise s;
    cr_assert_eq(vram_supervise_init(&s, NULL, 2), VRAM_OK);
    vram_supervise before = s;
    vram_supervise_decision d = {VRAM_SUPERVISE_EXIT, VRAM_SUPERVISE_WHY_STOPPED, 9, 9u, 9u}, keep = d;
    vram_supervise_end e = ended((vram_attempt_outcome)VRAM_ATTEMPT_OUTCOME_COUNT, 0, 0);
    cr_expect_eq(vram_supervise_ended(&s, &e, &d), VRAM_E_INVALID);
    e.outcome = (vram_attempt_outcome)-1;
    cr_expect_eq(vram_supervise_ended(&s, &e, &d), VRAM_E_INVALID);
    cr_expect_eq(memcmp(&s, &before, sizeof s), 0);
    cr_expect_eq(memcmp(&d, &keep, sizeof d), 0);
}
