/* Unit tests of vramkit/place.h: user-reports/001's service (an embedding model of ~1.3 GB
 * and two DistilBERT classifiers of ~550 MB on an 8 GB RTX 4060 where Ollama holds ~4.7 GB),
 * then a card too small for the third: fallback to the host (AUTO) or the exact shortfall
 * (explicit GPU); settings that inherit; the setting parser; every bad input. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <string.h>

#include <vramkit/place.h>

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
#define FIXED (UINT64_C(462) * MIB) /* the default: 430 MiB context + 32 MiB workspace */
#define MARGIN (UINT64_C(256) * MIB)

static vram_device_setting set(vram_setting_kind k, int gpu) {
    vram_device_setting s;
    s.kind = k;
    s.gpu = gpu;
    return s;
}
#define INHERIT set(VRAM_SETTING_INHERIT, 0)
#define AUTO set(VRAM_SETTING_AUTO, 0)
#define CPU set(VRAM_SETTING_CPU, 0)
#define GPU(n) set(VRAM_SETTING_GPU, (n))

static vram_component comp(uint64_t gpu_bytes, uint64_t cpu_bytes, vram_device_setting s) {
    vram_component c;
    c.gpu_bytes = gpu_bytes;
    c.cpu_bytes = cpu_bytes;
    c.setting = s;
    return c;
}

/* 001's card: 8 GiB, of which `used` bytes are held by other processes. */
static vram_devices card(uint64_t free_bytes) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    d.gpus = 1;
    d.gpu[0].total = 8 * GIB;
    d.gpu[0].free = free_bytes;
    d.gpu[0].cc_major = 8;
    d.gpu[0].cc_minor = 9;
    d.host_free = 32 * GIB;
    return d;
}

/* e5-large, DistilBERT (ja), DistilBERT (en); the host copies are the same models in fp32 */
static void service(vram_component c[3], vram_device_setting s) {
    c[0] = comp(1300000000u, 2240000000u, s);
    c[1] = comp(550000000u, 268000000u, s);
    c[2] = comp(550000000u, 268000000u, s);
}

static vram_place_summary place(const vram_devices *d, vram_device_setting global,
                                const vram_component *c, size_t n, vram_placement *out) {
    vram_place_summary s;
    vram_status st = vram_place(d, global, 0, c, n, out, &s);
    cr_assert_eq(st, VRAM_OK, "place: %s", vram_status_name(st));
    /* invariants of every plan */
    cr_assert_eq(s.gpus, d->gpus);
    cr_assert_eq(s.fixed_bytes, FIXED);
    int on_gpu = 0, on_cpu = 0, not_placed = 0;
    for (int g = 0; g < d->gpus; g++) {
        uint64_t used = 0;
        int k = 0;
        for (size_t i = 0; i < n; i++)
            if (out[i].fits && out[i].device == g) {
                used += out[i].bytes;
                k++;
            }
        if (k > 0) used += FIXED;
        cr_assert_eq(s.gpu[g].used, used, "GPU %d", g);
        cr_assert_eq(s.gpu[g].components, k);
        cr_assert_leq(s.gpu[g].used, s.gpu[g].budget);
        cr_assert_eq(s.gpu[g].budget, vram_devices_budget(d, g));
    }
    for (size_t i = 0; i < n; i++) {
        cr_assert_neq(out[i].setting.kind, VRAM_SETTING_INHERIT);
        if (!out[i].fits) not_placed++;
        else if (out[i].device == VRAM_PLAN_CPU) on_cpu++;
        else on_gpu++;
        cr_assert_str_neq(vram_place_reason_name(out[i].reason), "unknown");
    }
    cr_assert_eq(s.on_gpu, on_gpu);
    cr_assert_eq(s.on_cpu, on_cpu);
    cr_assert_eq(s.not_placed, not_placed);
    cr_assert_eq(s.all_fit, not_placed == 0);
    if (s.host_known) cr_assert_leq(s.host_used, s.host_budget);
    return s;
}

/* ---- user-reports/001 ------------------------------------------------------------------ */

Test(place, report_001_everything_fits_beside_ollama) {
    /* 8 GiB total, 4.7 GB held by Ollama */
    vram_devices d = card(8 * GIB - 4700000000u);
    vram_component c[3];
    vram_placement out[3];
    service(c, INHERIT);
    vram_place_summary s = place(&d, INHERIT, c, 3, out); /* nothing set: AUTO */
    uint64_t budget = 8 * GIB - 4700000000u - MARGIN;
    cr_assert_eq(s.gpu[0].budget, budget);
    cr_assert_eq(s.gpu[0].budget, 3621499136u);
    cr_assert(s.all_fit);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(out[i].device, 0);
        cr_assert_eq(out[i].fits, 1);
        cr_assert_eq(out[i].fell_back, 0);
        cr_assert_eq(out[i].reason, VRAM_PLACE_ON_GPU);
        cr_assert_eq(out[i].bytes, c[i].gpu_bytes);
        cr_assert_eq(out[i].setting.kind, VRAM_SETTING_AUTO);
    }
    /* one context for the three: 462 MiB + 2.4 GB = 2884442112 <= 3621499136 */
    cr_assert_eq(s.gpu[0].used, FIXED + 2400000000u);
    cr_assert_eq(s.gpu[0].used, 2884442112u);
    cr_assert_leq(s.gpu[0].used, s.gpu[0].budget);
    /* the largest went first and paid the context */
    cr_assert_eq(out[0].needed, 1300000000u + FIXED);
    cr_assert_eq(out[1].needed, 550000000u);
    cr_assert_eq(s.host_used, 0);
}

/* 001's own figure: ~2.7 GB free. Budget 2.7e9 - 256 MiB = 2431564544; e5 and the first
 * DistilBERT take 462 MiB + 1.85e9 = 2334442112, leaving 97122432: the second DistilBERT
 * (550e6) is 452877568 bytes short. */
#define FREE_27 2700000000u
#define SHORT_27 452877568u

Test(place, report_001_smaller_card_third_falls_back_to_cpu) {
    vram_devices d = card(FREE_27);
    vram_component c[3];
    vram_placement out[3];
    service(c, AUTO);
    vram_place_summary s = place(&d, INHERIT, c, 3, out);
    cr_assert_eq(s.gpu[0].budget, 2431564544u);
    cr_assert_eq(out[0].device, 0);
    cr_assert_eq(out[1].device, 0); /* equal sizes: input order */
    cr_assert_eq(out[2].device, VRAM_PLAN_CPU);
    cr_assert_eq(out[2].fits, 1);
    cr_assert_eq(out[2].fell_back, 1);
    cr_assert_eq(out[2].reason, VRAM_PLACE_FELL_BACK);
    cr_assert_eq(out[2].short_by, SHORT_27);
    cr_assert_eq(out[2].short_device, 0);
    cr_assert_eq(out[2].bytes, 268000000u); /* its host size */
    cr_assert_eq(s.gpu[0].used, 2334442112u);
    cr_assert_eq(s.gpu[0].budget - s.gpu[0].used + SHORT_27, 550000000u);
    cr_assert_eq(s.host_used, 268000000u);
    cr_assert_eq(s.fell_back, 1);
    cr_assert(s.all_fit); /* everything has a place */
}

Test(place, report_001_smaller_card_explicit_gpu_is_short_by_exact_amount) {
    vram_devices d = card(FREE_27);
    vram_component c[3];
    vram_placement out[3];
    service(c, INHERIT);
    vram_place_summary s = place(&d, GPU(0), c, 3, out); /* VRAMKIT_DEVICE=cuda:0 */
    cr_assert_eq(out[0].fits, 1);
    cr_assert_eq(out[1].fits, 1);
    cr_assert_eq(out[2].fits, 0);
    cr_assert_eq(out[2].device, 0); /* not moved */
    cr_assert_eq(out[2].fell_back, 0);
    cr_assert_eq(out[2].reason, VRAM_PLACE_GPU_SHORT);
    cr_assert_eq(out[2].needed, 550000000u);
    cr_assert_eq(out[2].short_by, SHORT_27);
    cr_assert_eq(out[2].short_device, 0);
    cr_assert_eq(s.gpu[0].used, 2334442112u); /* not counted */
    cr_assert_eq(s.not_placed, 1);
    cr_assert_eq(s.all_fit, 0);
    cr_assert_eq(s.host_used, 0);
}

Test(place, report_001_the_adr_fix_classifiers_on_cpu) {
    /* RECAP_SUBWORKER_DEVICE=cuda, RECAP_SUBWORKER_CLASSIFICATION_DEVICE=cpu */
    vram_devices d = card(FREE_27);
    vram_component c[3];
    vram_placement out[3];
    service(c, CPU);
    c[0].setting = INHERIT;
    vram_place_summary s = place(&d, GPU(0), c, 3, out);
    cr_assert_eq(out[0].device, 0);
    cr_assert_eq(out[0].setting.kind, VRAM_SETTING_GPU);
    cr_assert_eq(out[1].device, VRAM_PLAN_CPU);
    cr_assert_eq(out[2].device, VRAM_PLAN_CPU);
    cr_assert_eq(out[1].reason, VRAM_PLACE_ON_CPU);
    cr_assert_eq(out[1].fell_back, 0);
    cr_assert_eq(s.gpu[0].used, FIXED + 1300000000u);
    cr_assert_eq(s.host_used, 2 * 268000000u);
    cr_assert(s.all_fit);
}

/* ---- settings ------------------------------------------------------------------------ */

Test(place, resolve_inherits_the_global_setting) {
    vram_device_setting r;
    r = vram_setting_resolve(INHERIT, CPU);
    cr_assert_eq(r.kind, VRAM_SETTING_CPU);
    r = vram_setting_resolve(INHERIT, GPU(3));
    cr_assert_eq(r.kind, VRAM_SETTING_GPU);
    cr_assert_eq(r.gpu, 3);
    r = vram_setting_resolve(INHERIT, INHERIT);
    cr_assert_eq(r.kind, VRAM_SETTING_AUTO);
    r = vram_setting_resolve(CPU, GPU(1)); /* its own wins */
    cr_assert_eq(r.kind, VRAM_SETTING_CPU);
    r = vram_setting_resolve(GPU(2), CPU);
    cr_assert_eq(r.kind, VRAM_SETTING_GPU);
    cr_assert_eq(r.gpu, 2);
    r = vram_setting_resolve(AUTO, CPU);
    cr_assert_eq(r.kind, VRAM_SETTING_AUTO);
}

Test(place, global_cpu_sends_inheriting_components_to_the_host) {
    vram_devices d = card(8 * GIB);
    vram_component c[3];
    vram_placement out[3];
    service(c, INHERIT);
    c[0].setting = AUTO; /* set on its own */
    vram_place_summary s = place(&d, CPU, c, 3, out);
    cr_assert_eq(out[0].device, 0);
    cr_assert_eq(out[1].device, VRAM_PLAN_CPU);
    cr_assert_eq(out[2].device, VRAM_PLAN_CPU);
    cr_assert_eq(out[1].setting.kind, VRAM_SETTING_CPU);
    cr_assert_eq(s.on_gpu, 1);
    cr_assert_eq(s.on_cpu, 2);
}

struct parse_case {
    char text[32];
    vram_status want;
    vram_setting_kind kind;
    int gpu;
};

ParameterizedTestParameters(place, parse) {
    static struct parse_case cases[] = {
        {"auto", VRAM_OK, VRAM_SETTING_AUTO, 0},
        {"AUTO", VRAM_OK, VRAM_SETTING_AUTO, 0},
        {"cpu", VRAM_OK, VRAM_SETTING_CPU, 0},
        {"Cpu", VRAM_OK, VRAM_SETTING_CPU, 0},
        {"cuda", VRAM_OK, VRAM_SETTING_GPU, 0},
        {"CUDA", VRAM_OK, VRAM_SETTING_GPU, 0},
        {"cuda:0", VRAM_OK, VRAM_SETTING_GPU, 0},
        {"cuda:1", VRAM_OK, VRAM_SETTING_GPU, 1},
        {"cuda:15", VRAM_OK, VRAM_SETTING_GPU, 15},
        {"cuda:007", VRAM_OK, VRAM_SETTING_GPU, 7},
        {"gpu", VRAM_OK, VRAM_SETTING_GPU, 0},
        {"GPU:3", VRAM_OK, VRAM_SETTING_GPU, 3},
        {"cuda:16", VRAM_E_RANGE, VRAM_SETTING_INHERIT, 0},
        {"cuda:99999999999", VRAM_E_RANGE, VRAM_SETTING_INHERIT, 0},
        {"gpu:99999999999999999999999", VRAM_E_RANGE, VRAM_SETTING_INHERIT, 0},
        {"", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda:", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda:-1", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda:+1", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda: 1", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda:1 ", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda:1x", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda:99999999999x", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cuda0", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cudas", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {" cuda", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"tpu", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"cpu:0", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"autos", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"au", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"inherit", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"mps", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
        {"gp", VRAM_E_FORMAT, VRAM_SETTING_INHERIT, 0},
    };
    return cr_make_param_array(struct parse_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct parse_case *pc, place, parse) {
    vram_device_setting s = set((vram_setting_kind)99, -7); /* sentinel */
    vram_status st = vram_setting_parse(pc->text, strlen(pc->text), &s);
    cr_assert_eq(st, pc->want, "\"%s\": %s", pc->text, vram_status_name(st));
    if (st == VRAM_OK) {
        cr_assert_eq(s.kind, pc->kind, "\"%s\"", pc->text);
        if (s.kind == VRAM_SETTING_GPU) cr_assert_eq(s.gpu, pc->gpu, "\"%s\"", pc->text);
        cr_assert_eq(vram_setting_check(s), VRAM_OK);
    } else {
        cr_assert_eq((int)s.kind, 99, "\"%s\": written on error", pc->text);
        cr_assert_eq(s.gpu, -7);
    }
}

Test(place, parse_reads_only_len_bytes_and_checks_pointers) {
    vram_device_setting s;
    cr_assert_eq(vram_setting_parse("cuda:12", 6, &s), VRAM_OK); /* "cuda:1" */
    cr_assert_eq(s.gpu, 1);
    cr_assert_eq(vram_setting_parse("cpu", 2, &s), VRAM_E_FORMAT);
    char not_terminated[4] = {'a', 'u', 't', 'o'};
    cr_assert_eq(vram_setting_parse(not_terminated, 4, &s), VRAM_OK);
    cr_assert_eq(s.kind, VRAM_SETTING_AUTO);
    cr_assert_eq(vram_setting_parse("cpu", 3, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_setting_parse(NULL, 3, &s), VRAM_E_INVALID);
    cr_assert_eq(vram_setting_parse(NULL, 0, &s), VRAM_E_FORMAT); /* the empty text */
}

Test(place, setting_check) {
    cr_assert_eq(vram_setting_check(INHERIT), VRAM_OK);
    cr_assert_eq(vram_setting_check(AUTO), VRAM_OK);
    cr_assert_eq(vram_setting_check(CPU), VRAM_OK);
    cr_assert_eq(vram_setting_check(GPU(0)), VRAM_OK);
    cr_assert_eq(vram_setting_check(GPU(1000)), VRAM_OK); /* the machine decides */
    cr_assert_eq(vram_setting_check(GPU(-1)), VRAM_E_INVALID);
    cr_assert_eq(vram_setting_check(set((vram_setting_kind)4, 0)), VRAM_E_INVALID);
    cr_assert_eq(vram_setting_check(set((vram_setting_kind)-1, 0)), VRAM_E_INVALID);
}

/* ---- the placement rules --------------------------------------------------------------- */

Test(place, auto_largest_first_onto_most_room_fixed_once_per_gpu) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    d.gpus = 2;
    d.gpu[0].free = MARGIN + FIXED + 1000 * MIB; /* budget FIXED + 1000 MiB */
    d.gpu[1].free = MARGIN + FIXED + 900 * MIB;
    vram_component c[4] = {comp(300 * MIB, 1, AUTO), comp(800 * MIB, 1, AUTO),
                           comp(600 * MIB, 1, AUTO), comp(150 * MIB, 1, AUTO)};
    vram_placement out[4];
    vram_place_summary s = place(&d, INHERIT, c, 4, out);
    /* 800 -> GPU 0 (room 1000 vs 900); 600 -> GPU 1 (room 900 vs 200); 300 -> GPU 1 (300 vs
       200); 150 -> GPU 0 (200 vs 0) */
    cr_assert_eq(out[1].device, 0);
    cr_assert_eq(out[2].device, 1);
    cr_assert_eq(out[0].device, 1);
    cr_assert_eq(out[3].device, 0);
    cr_assert_eq(s.gpu[0].used, FIXED + 950 * MIB);
    cr_assert_eq(s.gpu[1].used, FIXED + 900 * MIB);
    cr_assert_eq(s.host_known, 0);
    cr_assert(s.all_fit);
    /* the first on each GPU paid the context */
    cr_assert_eq(out[1].needed, 800 * MIB + FIXED);
    cr_assert_eq(out[2].needed, 600 * MIB + FIXED);
    cr_assert_eq(out[3].needed, 150 * MIB);
}

Test(place, auto_prefers_a_used_gpu_over_paying_a_second_context) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    d.gpus = 2;
    d.gpu[0].free = MARGIN + FIXED + 1000 * MIB;
    d.gpu[1].free = MARGIN + FIXED + 1000 * MIB;
    vram_component c[2] = {comp(400 * MIB, 1, AUTO), comp(100 * MIB, 1, AUTO)};
    vram_placement out[2];
    vram_place_summary s = place(&d, INHERIT, c, 2, out);
    /* room on GPU 0 after the first: 600 MiB; on the empty GPU 1: 1000 MiB -> GPU 1 */
    cr_assert_eq(out[0].device, 0);
    cr_assert_eq(out[1].device, 1);
    /* with a GPU 1 of 500 MiB room: 600 > 500, stays on GPU 0 (no second context) */
    d.gpu[1].free = MARGIN + FIXED + 500 * MIB;
    s = place(&d, INHERIT, c, 2, out);
    cr_assert_eq(out[1].device, 0);
    cr_assert_eq(s.gpu[1].used, 0);
    cr_assert_eq(s.gpu[1].components, 0);
}

Test(place, explicit_gpus_go_first_and_auto_fills_around_them) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    d.gpus = 2;
    d.gpu[0].free = MARGIN + FIXED + 1000 * MIB;
    d.gpu[1].free = MARGIN + FIXED + 1000 * MIB;
    /* the AUTO one comes first in the input, but GPU 1's component is placed before it */
    vram_component c[2] = {comp(700 * MIB, 1, AUTO), comp(900 * MIB, 1, GPU(1))};
    vram_placement out[2];
    vram_place_summary s = place(&d, INHERIT, c, 2, out);
    cr_assert_eq(out[1].device, 1);
    cr_assert_eq(out[0].device, 0);
    cr_assert_eq(s.gpu[1].used, FIXED + 900 * MIB);
    /* exactly the budget fits */
    c[1].gpu_bytes = 1000 * MIB;
    s = place(&d, INHERIT, c, 2, out);
    cr_assert_eq(out[1].fits, 1);
    cr_assert_eq(s.gpu[1].used, s.gpu[1].budget);
    /* one byte more does not, and is not moved to GPU 0 */
    c[1].gpu_bytes = 1000 * MIB + 1;
    s = place(&d, INHERIT, c, 2, out);
    cr_assert_eq(out[1].fits, 0);
    cr_assert_eq(out[1].device, 1);
    cr_assert_eq(out[1].short_by, 1);
    cr_assert_eq(out[1].needed, FIXED + 1000 * MIB + 1);
    cr_assert_eq(s.gpu[1].used, 0);
    /* and the AUTO one may now use GPU 1 */
    cr_assert_eq(out[0].fits, 1);
}

Test(place, no_such_gpu_no_gpu_and_host_short) {
    vram_devices d = card(8 * GIB);
    vram_component c[3] = {comp(100, 10, GPU(1)), comp(100, 20, AUTO), comp(100, 30, CPU)};
    vram_placement out[3];
    vram_place_summary s = place(&d, INHERIT, c, 3, out);
    cr_assert_eq(out[0].reason, VRAM_PLACE_NO_SUCH_GPU);
    cr_assert_eq(out[0].fits, 0);
    cr_assert_eq(out[0].device, 1);
    cr_assert_eq(out[0].needed, 100 + FIXED);
    cr_assert_eq(out[1].device, 0);
    /* no GPU at all: AUTO goes to the host as a fallback, nothing to be short on */
    d.gpus = 0;
    s = place(&d, INHERIT, c, 3, out);
    cr_assert_eq(out[1].device, VRAM_PLAN_CPU);
    cr_assert_eq(out[1].reason, VRAM_PLACE_NO_GPU);
    cr_assert_eq(out[1].fell_back, 1);
    cr_assert_eq(out[1].short_by, 0);
    cr_assert_eq(out[1].short_device, VRAM_PLAN_NONE);
    cr_assert_eq(out[1].fits, 1);
    cr_assert_eq(s.host_used, 50);
    /* a host with room for the CPU component only (30 + margin): the fallback is short */
    d.host_free = MARGIN + 30;
    s = place(&d, INHERIT, c, 3, out);
    cr_assert_eq(out[2].fits, 1);
    cr_assert_eq(out[2].reason, VRAM_PLACE_ON_CPU);
    cr_assert_eq(out[1].fits, 0);
    cr_assert_eq(out[1].reason, VRAM_PLACE_HOST_SHORT);
    cr_assert_eq(out[1].host_short_by, 20);
    cr_assert_eq(out[1].fell_back, 1);
    cr_assert_eq(s.host_used, 30);
    cr_assert_eq(s.host_budget, 30);
    cr_assert_eq(s.not_placed, 2);
    /* the CPU component itself one byte too big */
    d.host_free = MARGIN + 29;
    s = place(&d, INHERIT, c, 3, out);
    cr_assert_eq(out[2].fits, 0);
    cr_assert_eq(out[2].host_short_by, 1);
    cr_assert_eq(out[2].reason, VRAM_PLACE_HOST_SHORT);
    cr_assert_eq(out[1].fits, 1); /* 20 fit in the 29 left */
    cr_assert_eq(s.host_used, 20);
}

Test(place, a_gpu_below_the_margin_has_no_room) {
    vram_devices d = card(100 * MIB); /* less than the margin: budget 0 */
    vram_component c[1] = {comp(1, 1, AUTO)};
    vram_placement out[1];
    vram_place_summary s = place(&d, INHERIT, c, 1, out);
    cr_assert_eq(s.gpu[0].budget, 0);
    cr_assert_eq(out[0].reason, VRAM_PLACE_FELL_BACK);
    cr_assert_eq(out[0].short_by, 1 + FIXED); /* the byte and the context it would need */
    /* a margin of one byte ("none") */
    d.margin = 1;
    d.gpu[0].free = FIXED + 2;
    s = place(&d, INHERIT, c, 1, out);
    cr_assert_eq(out[0].device, 0);
    cr_assert_eq(s.gpu[0].used, s.gpu[0].budget);
}

Test(place, a_gpu_whose_budget_is_below_the_fixed_bytes_takes_nothing) {
    /* budget 100 MiB < 462 MiB of context and workspace: not even a 0-byte component */
    vram_devices d = card(MARGIN + 100 * MIB);
    vram_component c[2] = {comp(0, 1, AUTO), comp(0, 1, GPU(0))};
    vram_placement out[2];
    vram_place_summary s = place(&d, INHERIT, c, 2, out);
    cr_assert_eq(out[1].reason, VRAM_PLACE_GPU_SHORT);
    cr_assert_eq(out[1].short_by, FIXED - 100 * MIB);
    cr_assert_eq(out[0].reason, VRAM_PLACE_FELL_BACK);
    cr_assert_eq(out[0].short_by, FIXED - 100 * MIB);
    cr_assert_eq(out[0].short_device, 0);
    cr_assert_eq(s.gpu[0].used, 0);
    /* the best GPU is the one missing least: GPU 1 short by 62 MiB beats GPU 0's 362 */
    d.gpus = 2;
    d.gpu[1].free = MARGIN + 400 * MIB;
    c[0].gpu_bytes = 1;
    s = place(&d, INHERIT, c, 1, out);
    cr_assert_eq(out[0].short_device, 1);
    cr_assert_eq(out[0].short_by, 1 + 62 * MIB);
}

Test(place, fixed_bytes_given) {
    vram_devices d = card(MARGIN + 1000);
    vram_component c[2] = {comp(600, 1, AUTO), comp(300, 1, AUTO)};
    vram_placement out[2];
    vram_place_summary s;
    cr_assert_eq(vram_place(&d, INHERIT, 100, c, 2, out, &s), VRAM_OK);
    cr_assert_eq(s.fixed_bytes, 100);
    cr_assert_eq(s.gpu[0].used, 1000);
    cr_assert(s.all_fit);
    cr_assert_eq(vram_place(&d, INHERIT, 101, c, 2, out, &s), VRAM_OK);
    cr_assert_eq(out[1].fell_back, 1);
    cr_assert_eq(out[1].short_by, 1);
    /* zero components: an empty plan */
    cr_assert_eq(vram_place(&d, INHERIT, 0, NULL, 0, NULL, &s), VRAM_OK);
    cr_assert_eq(s.gpu[0].used, 0);
    cr_assert(s.all_fit);
}

Test(place, sixty_four_components) {
    vram_devices d = card(8 * GIB);
    vram_component c[VRAM_PLACE_MAX];
    vram_placement out[VRAM_PLACE_MAX];
    for (int i = 0; i < VRAM_PLACE_MAX; i++) c[i] = comp((uint64_t)(i + 1) * 30 * MIB, 1, AUTO);
    vram_place_summary s = place(&d, INHERIT, c, VRAM_PLACE_MAX, out);
    /* largest first: the biggest ones are on the GPU, and a fallback is never larger than
       the smallest component that made it onto the GPU... unless it came later and fit */
    cr_assert(s.on_gpu > 0 && s.fell_back > 0);
    cr_assert_eq(out[VRAM_PLACE_MAX - 1].device, 0);
    cr_assert_eq(s.on_gpu + s.on_cpu, VRAM_PLACE_MAX);
}

/* ---- bad input ------------------------------------------------------------------------ */

enum pbad { P_NULL_D, P_NULL_SUM, P_NULL_COMP, P_NULL_OUT, P_TOO_MANY, P_BAD_DEVICES,
            P_BAD_KIND, P_NEG_GPU, P_BAD_GLOBAL, P_NEG_GLOBAL_GPU, P_GPU_OVF, P_FIXED_OVF,
            P_CPU_SUM_OVF, P_INVALID_AND_OVERFLOW };

struct pbad_case {
    enum pbad what;
    vram_status want;
};

ParameterizedTestParameters(place, bad_input) {
    static struct pbad_case cases[] = {
        {P_NULL_D, VRAM_E_INVALID},      {P_NULL_SUM, VRAM_E_INVALID},
        {P_NULL_COMP, VRAM_E_INVALID},   {P_NULL_OUT, VRAM_E_INVALID},
        {P_TOO_MANY, VRAM_E_INVALID},    {P_BAD_DEVICES, VRAM_E_INVALID},
        {P_BAD_KIND, VRAM_E_INVALID},    {P_NEG_GPU, VRAM_E_INVALID},
        {P_BAD_GLOBAL, VRAM_E_INVALID},  {P_NEG_GLOBAL_GPU, VRAM_E_INVALID},
        {P_GPU_OVF, VRAM_E_OVERFLOW},    {P_FIXED_OVF, VRAM_E_OVERFLOW},
        {P_CPU_SUM_OVF, VRAM_E_OVERFLOW}, {P_INVALID_AND_OVERFLOW, VRAM_E_INVALID},
    };
    return cr_make_param_array(struct pbad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct pbad_case *bc, place, bad_input) {
    vram_devices d = card(8 * GIB);
    vram_component c[3];
    vram_placement out[3];
    vram_place_summary s;
    const vram_devices *pd = &d;
    const vram_component *pc = c;
    vram_placement *po = out;
    vram_place_summary *ps = &s;
    vram_device_setting global = INHERIT;
    size_t n = 3;
    uint64_t fixed = 0;
    service(c, AUTO);
    memset(out, 0x5A, sizeof out);
    memset(&s, 0x5A, sizeof s);
    switch (bc->what) {
    case P_NULL_D: pd = NULL; break;
    case P_NULL_SUM: ps = NULL; break;
    case P_NULL_COMP: pc = NULL; break;
    case P_NULL_OUT: po = NULL; break;
    case P_TOO_MANY: n = VRAM_PLACE_MAX + 1; break;
    case P_BAD_DEVICES: d.gpus = -3; break;
    case P_BAD_KIND: c[2].setting = set((vram_setting_kind)5, 0); break;
    case P_NEG_GPU: c[1].setting = GPU(-1); break;
    case P_BAD_GLOBAL: global = set((vram_setting_kind)-2, 0); break;
    case P_NEG_GLOBAL_GPU: global = GPU(-5); break;
    case P_GPU_OVF: c[1].gpu_bytes = UINT64_MAX - FIXED + 1; break;
    case P_FIXED_OVF: fixed = UINT64_MAX; break;
    case P_CPU_SUM_OVF: c[0].cpu_bytes = UINT64_MAX - 1; break;
    case P_INVALID_AND_OVERFLOW: /* a bad setting after an overflow: bad input first */
        c[0].gpu_bytes = UINT64_MAX;
        c[2].setting = GPU(-2);
        break;
    }
    vram_status st = vram_place(pd, global, fixed, pc, n, po, ps);
    cr_assert_eq(st, bc->want, "case %d: %s", (int)bc->what, vram_status_name(st));
    const unsigned char *p = (const unsigned char *)out;
    for (size_t i = 0; i < sizeof out; i++) cr_assert_eq(p[i], 0x5A, "out written");
    p = (const unsigned char *)&s;
    for (size_t i = 0; i < sizeof s; i++) cr_assert_eq(p[i], 0x5A, "summary written");
}

Test(place, gpu_bytes_plus_fixed_at_the_edge) {
    /* gpu_bytes + fixed == 2^64 - 1 exactly is not an overflow: it just does not fit */
    vram_devices d = card(8 * GIB);
    vram_component c[1] = {comp(UINT64_MAX - FIXED, 1, GPU(0))};
    vram_placement out[1];
    vram_place_summary s = place(&d, INHERIT, c, 1, out);
    cr_assert_eq(out[0].fits, 0);
    cr_assert_eq(out[0].needed, UINT64_MAX);
    cr_assert_eq(out[0].short_by, UINT64_MAX - s.gpu[0].budget);
}

/* ---- names, and components from estimates ---------------------------------------------- */

Test(place, reason_names) {
    for (int r = 0; r < VRAM_PLACE_REASON_COUNT; r++) {
        cr_assert_str_neq(vram_place_reason_name((vram_place_reason)r), "unknown");
        cr_assert_not_null(vram_place_reason_text((vram_place_reason)r));
    }
    cr_assert_str_eq(vram_place_reason_name(VRAM_PLACE_REASON_COUNT), "unknown");
    cr_assert_str_eq(vram_place_reason_name((vram_place_reason)-1), "unknown");
    cr_assert_null(vram_place_reason_text(VRAM_PLACE_REASON_COUNT));
    cr_assert_str_eq(vram_place_reason_name(VRAM_PLACE_FELL_BACK), "fell_back");
    cr_assert(strstr(vram_place_reason_text(VRAM_PLACE_GPU_SHORT), "{short_by}") != NULL);
}

Test(place, component_from_estimates) {
    vram_model m;
    vram_workload w;
    vram_estimate eg, ec;
    vram_component c;
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    m.arch.family = VRAM_FAMILY_ENCODER; /* a DistilBERT-shaped encoder */
    m.arch.layers = 6;
    m.arch.hidden = 768;
    m.arch.heads = 12;
    m.arch.intermediate = 3072;
    m.arch.vocab = 30522;
    m.arch.positions = 512;
    m.arch.flags = VRAM_ARCH_EMB_NORM | VRAM_ARCH_NO_HEAD;
    m.dtype = VRAM_DTYPE_F32;
    w.seq = 128;
    cr_assert_eq(vram_estimate_model(&m, &w, &eg), VRAM_OK);
    w.cpu = 1;
    cr_assert_eq(vram_estimate_model(&m, &w, &ec), VRAM_OK);
    c.setting = CPU;
    cr_assert_eq(vram_component_from_estimates(&eg, &ec, &c), VRAM_OK);
    cr_assert_eq(c.gpu_bytes, eg.expected - 430 * MIB - 32 * MIB);
    cr_assert_eq(c.cpu_bytes, ec.expected);
    cr_assert_eq(c.setting.kind, VRAM_SETTING_CPU); /* left alone */
    cr_assert_eq(vram_component_from_estimates(NULL, &ec, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_component_from_estimates(&eg, NULL, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_component_from_estimates(&eg, &ec, NULL), VRAM_E_INVALID);
}

/* ---- the workloads a component is estimated under --------------------------------- */

Test(place, format16_is_bf16_only_when_every_gpu_has_it) {
    vram_devices d;
    memset(&d, 0, sizeof d);
    cr_expect_eq(vram_place_format16(&d), VRAM_DTYPE_F16, "no GPU");
    d.gpus = 2;
    d.gpu[0].cc_major = 8;
    d.gpu[1].cc_major = 9;
    cr_expect_eq(vram_place_format16(&d), VRAM_DTYPE_BF16);
    d.gpu[1].cc_major = 7;
    d.gpu[1].cc_minor = 5;
    cr_expect_eq(vram_place_format16(&d), VRAM_DTYPE_F16, "a Turing card among Ampere ones");
    d.gpu[1].cc_major = 0; /* unknown counts as < 8.0 */
    cr_expect_eq(vram_place_format16(&d), VRAM_DTYPE_F16);
}

Test(place, component_workloads_on_a_gpu_and_on_the_host) {
    vram_devices d;
    vram_workload w = {0}, g, c;
    memset(&d, 0, sizeof d);
    d.gpus = 1;
    d.gpu[0].cc_major = 9;
    w.mode = VRAM_MODE_TRAIN;
    w.batch = 4;
    w.compute = VRAM_DTYPE_F16;
    w.cpu = 1; /* ignored: each side sets its own */
    vram_component_workloads(&w, &d, &g, &c);
    cr_expect_eq(g.format, VRAM_DTYPE_BF16);
    cr_expect_eq(g.compute, VRAM_DTYPE_F16, "a compute format given stays");
    cr_expect_eq(g.cpu, 0);
    cr_expect_eq(g.batch, 4);
    cr_expect_eq(g.mode, VRAM_MODE_TRAIN);
    cr_expect_eq(c.format, VRAM_DTYPE_F32);
    cr_expect_eq(c.compute, VRAM_DTYPE_NONE);
    cr_expect_eq(c.cpu, 1);
    cr_expect_eq(c.batch, 4);
    w.format = VRAM_DTYPE_INT8;
    vram_component_workloads(&w, &d, &g, &c);
    cr_expect_eq(g.format, VRAM_DTYPE_INT8, "a weight format given stays on the GPU");
    cr_expect_eq(c.format, VRAM_DTYPE_F32, "and the host is fp32 whatever was given");
}
