/* plan.h: what changed between a saved plan and the plan made now. */
#include <criterion/criterion.h>
#include <string.h>

#include <vramkit/plan.h>

static vram_outcome at(int component, int device, int fits) {
    vram_outcome o = {component, device, fits};
    return o;
}

Test(plan, same_chosen) {
    char long_a[100], long_b[100];
    cr_expect(vram_plan_same_chosen(NULL, NULL));
    cr_expect_not(vram_plan_same_chosen("bf16", NULL));
    cr_expect_not(vram_plan_same_chosen(NULL, "bf16"));
    cr_expect(vram_plan_same_chosen("bf16", "bf16"));
    cr_expect_not(vram_plan_same_chosen("bf16", "fp16"));
    cr_expect_not(vram_plan_same_chosen("int4", "int4x"), "a prefix is another name");
    /* names longer than VRAM_PLAN_NAME_MAX compare on that many bytes */
    memset(long_a, 'a', sizeof long_a);
    memcpy(long_b, long_a, sizeof long_b);
    long_a[99] = long_b[99] = '\0';
    long_b[VRAM_PLAN_NAME_MAX + 1] = 'b';
    cr_expect(vram_plan_same_chosen(long_a, long_b));
    long_b[VRAM_PLAN_NAME_MAX - 1] = 'b';
    cr_expect_not(vram_plan_same_chosen(long_a, long_b));
}

Test(plan, nothing_changed) {
    vram_outcome then[2] = {at(0, 0, 1), at(1, VRAM_PLAN_CPU, 1)};
    vram_outcome now[2] = {at(0, 0, 1), at(1, VRAM_PLAN_CPU, 1)};
    vram_change out[4];
    size_t n = 99;
    cr_expect_eq(vram_plan_changes("bf16", "bf16", then, 2, now, 2, out, 4, &n), VRAM_OK);
    cr_expect_eq(n, 0);
    cr_expect_eq(vram_plan_changes(NULL, NULL, NULL, 0, NULL, 0, NULL, 0, &n), VRAM_OK);
    cr_expect_eq(n, 0);
}

Test(plan, chosen_first_then_components_in_saved_order) {
    /* saved: b on gpu0, a on gpu0, c on the host; now: a on the host, b as before, c not
       placed; an entry naming no current component (-1) and one out of range are skipped */
    vram_outcome then[5] = {at(1, 0, 1), at(0, 0, 1), at(-1, 3, 1), at(2, VRAM_PLAN_CPU, 1),
                            at(7, 0, 1)};
    vram_outcome now[3] = {at(0, VRAM_PLAN_CPU, 1), at(1, 0, 1), at(2, VRAM_PLAN_CPU, 0)};
    vram_change out[8];
    size_t n = 0;
    cr_assert_eq(vram_plan_changes("bf16", "int8", then, 5, now, 3, out, 8, &n), VRAM_OK);
    cr_assert_eq(n, 3);
    cr_expect_eq(out[0].component, -1, "the chosen strategy first");
    cr_expect_eq(out[1].component, 0);
    cr_expect_eq(out[1].then.device, 0);
    cr_expect_eq(out[1].now.device, VRAM_PLAN_CPU);
    cr_expect_eq(out[1].now.fits, 1);
    cr_expect_eq(out[2].component, 2, "fits changed, the device did not");
    cr_expect_eq(out[2].then.fits, 1);
    cr_expect_eq(out[2].now.fits, 0);
    cr_expect_eq(out[2].now.device, VRAM_PLAN_CPU);
}

Test(plan, a_change_of_chosen_to_or_from_none) {
    vram_change out[1];
    size_t n = 0;
    cr_expect_eq(vram_plan_changes(NULL, "cpu", NULL, 0, NULL, 0, out, 1, &n), VRAM_OK);
    cr_expect_eq(n, 1);
    cr_expect_eq(vram_plan_changes("cpu", NULL, NULL, 0, NULL, 0, out, 1, &n), VRAM_OK);
    cr_expect_eq(n, 1);
}

Test(plan, too_small_an_output_says_so_and_counts_all) {
    vram_outcome then[3] = {at(0, 0, 1), at(1, 0, 1), at(2, 0, 1)};
    vram_outcome now[3] = {at(0, 1, 1), at(1, 1, 1), at(2, 1, 1)};
    vram_change out[2];
    memset(out, 0xab, sizeof out);
    size_t n = 0;
    cr_expect_eq(vram_plan_changes(NULL, NULL, then, 3, now, 3, out, 1, &n), VRAM_E_BUFFER);
    cr_expect_eq(n, 3);
    cr_expect_eq(out[0].component, 0);
    unsigned char *guard = (unsigned char *)&out[1];
    for (size_t i = 0; i < sizeof out[1]; i++) cr_assert_eq(guard[i], 0xab, "wrote past cap");
    cr_expect_eq(vram_plan_changes(NULL, NULL, then, 3, now, 3, NULL, 0, &n), VRAM_E_BUFFER);
    cr_expect_eq(n, 3, "cap 0 counts");
}

Test(plan, null_pointers_with_counts_are_refused) {
    vram_outcome one[1] = {at(0, 0, 1)};
    vram_change out[1];
    size_t n = 5;
    cr_expect_eq(vram_plan_changes(NULL, NULL, NULL, 1, one, 1, out, 1, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_plan_changes(NULL, NULL, one, 1, NULL, 1, out, 1, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_plan_changes(NULL, NULL, one, 1, one, 1, NULL, 1, &n), VRAM_E_INVALID);
    cr_expect_eq(vram_plan_changes(NULL, NULL, one, 1, one, 1, out, 1, NULL), VRAM_E_INVALID);
    cr_expect_eq(n, 5, "nothing written");
}
