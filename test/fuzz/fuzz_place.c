/* Fuzzes vramkit/place.h: random machines, components, settings, global setting and fixed
 * bytes through vram_place, and random text through vram_setting_parse.
 * Invariants: the status is the one an oracle predicts (INVALID for bad input, OVERFLOW
 * when gpu_bytes + fixed or the sum of cpu_bytes passes 2^64, else OK) and nothing is
 * written on error; on OK every GPU's used bytes equal, recomputed in 128 bits, the fixed
 * bytes once (when it holds a component) plus its components' bytes, and are <= its
 * budget; the host's used bytes are <= its budget when known; every component either fits
 * on a device that exists or is marked (fits 0, a reason that says why, a shortfall > 0
 * where there is one); fallbacks are AUTO components only; explicit GPU components are
 * never moved; placing again gives the same plan (deterministic).
 *
 * Input bytes, in order (missing bytes read as 0):
 *   gpus(1: mod 18, 17 is invalid), margin(1, MiB; 0 = default), host_free(2, MiB; 0 =
 *   unknown), fixed(2, MiB; 0xFFFF = 2^64 - 1), global setting(1), n(1: mod 67, past 64
 *   is invalid), then per GPU (16): free(2, MiB); then per component: setting(1),
 *   gpu_bytes(1 + width: width byte mod 4 -> 1, 2, 4 or 8 bytes, scaled by 1 MiB when 1 or
 *   2), cpu_bytes(2, MiB); then the rest of the input as text for the setting parser.
 *   A setting byte: bits 0-2 kind (0-3 as the enum, 4-7 out of range), bits 3-7 the GPU
 *   index (0-31; 31 reads as -1). */
#include <vramkit/place.h>

#include "fuzz_common.h"

__extension__ typedef unsigned __int128 u128;

static vram_device_setting draw_setting(fuzz_in *in) {
    uint64_t v = fuzz_u64(in, 1);
    vram_device_setting s;
    s.kind = (vram_setting_kind)(v & 7u);
    s.gpu = (int)(v >> 3) == 31 ? -1 : (int)(v >> 3);
    return s;
}

static uint64_t draw_bytes(fuzz_in *in) {
    static const unsigned widths[4] = {1, 2, 4, 8};
    unsigned w = widths[fuzz_u64(in, 1) & 3u];
    uint64_t v = fuzz_u64(in, w);
    return w <= 2 ? v << 20 : v;
}

static int setting_ok(vram_device_setting s) {
    return (s.kind >= VRAM_SETTING_INHERIT && s.kind <= VRAM_SETTING_CPU) ||
           (s.kind == VRAM_SETTING_GPU && s.gpu >= 0);
}

/* The parser against a plain restatement of its grammar. */
static void check_parse(const uint8_t *p, size_t n) {
    char low[64];
    vram_device_setting s;
    s.kind = (vram_setting_kind)77;
    s.gpu = -9;
    vram_status st = vram_setting_parse((const char *)p, n, &s);
    if (n > sizeof low) {
        /* longer than any valid form except digits: only a digit tail can be OK or RANGE */
        FUZZ_CHECK(st != VRAM_OK || s.kind == VRAM_SETTING_GPU);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char c = (char)p[i];
        low[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    vram_status want = VRAM_E_FORMAT;
    vram_setting_kind kind = VRAM_SETTING_INHERIT;
    u128 gpu = 0;
    size_t pre = 0;
    if (n == 4 && memcmp(low, "auto", 4) == 0) {
        want = VRAM_OK;
        kind = VRAM_SETTING_AUTO;
    } else if (n == 3 && memcmp(low, "cpu", 3) == 0) {
        want = VRAM_OK;
        kind = VRAM_SETTING_CPU;
    } else {
        if (n >= 4 && memcmp(low, "cuda", 4) == 0) pre = 4;
        else if (n >= 3 && memcmp(low, "gpu", 3) == 0) pre = 3;
        if (pre != 0 && n == pre) {
            want = VRAM_OK;
            kind = VRAM_SETTING_GPU;
        } else if (pre != 0 && n > pre + 1 && low[pre] == ':') {
            int digits = 1;
            for (size_t i = pre + 1; i < n; i++) {
                if (low[i] < '0' || low[i] > '9') digits = 0;
                else if (gpu < 1000) gpu = gpu * 10 + (u128)(low[i] - '0');
            }
            if (digits) {
                kind = VRAM_SETTING_GPU;
                want = gpu < VRAM_PLAN_MAX_GPUS ? VRAM_OK : VRAM_E_RANGE;
            }
        }
    }
    FUZZ_CHECK(st == want);
    if (st == VRAM_OK) {
        FUZZ_CHECK(s.kind == kind);
        if (kind == VRAM_SETTING_GPU) FUZZ_CHECK((u128)s.gpu == gpu);
    } else {
        FUZZ_CHECK((int)s.kind == 77 && s.gpu == -9);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    vram_devices d;
    vram_component comp[VRAM_PLACE_MAX + 3];
    vram_placement out[VRAM_PLACE_MAX + 3], again[VRAM_PLACE_MAX + 3];
    vram_place_summary s, s2;
    memset(&d, 0, sizeof d);
    d.gpus = (int)(fuzz_u64(&in, 1) % 18u);
    d.margin = fuzz_u64(&in, 1) << 20;
    d.host_free = fuzz_u64(&in, 2) << 20;
    uint64_t fixed = fuzz_u64(&in, 2);
    fixed = fixed == 0xFFFF ? UINT64_MAX : fixed << 20;
    vram_device_setting global = draw_setting(&in);
    size_t n = (size_t)(fuzz_u64(&in, 1) % (VRAM_PLACE_MAX + 3));
    for (int i = 0; i < VRAM_PLAN_MAX_GPUS; i++) {
        d.gpu[i].free = fuzz_u64(&in, 2) << 20;
        d.gpu[i].total = d.gpu[i].free;
    }
    for (size_t i = 0; i < n; i++) {
        comp[i].setting = draw_setting(&in);
        comp[i].gpu_bytes = draw_bytes(&in);
        comp[i].cpu_bytes = fuzz_u64(&in, 2) << 20;
    }

    /* the oracle of the status */
    uint64_t fx = fixed != 0 ? fixed : VRAM_PLACE_DEFAULT_FIXED;
    vram_status want = VRAM_OK;
    u128 cpu_sum = 0;
    if (d.gpus > VRAM_PLAN_MAX_GPUS || n > VRAM_PLACE_MAX || !setting_ok(global)) {
        want = VRAM_E_INVALID;
    } else {
        for (size_t i = 0; i < n && want == VRAM_OK; i++) {
            if (!setting_ok(comp[i].setting)) want = VRAM_E_INVALID;
        }
        for (size_t i = 0; i < n && want == VRAM_OK; i++) {
            cpu_sum += comp[i].cpu_bytes;
            if ((u128)comp[i].gpu_bytes + fx > UINT64_MAX || cpu_sum > UINT64_MAX)
                want = VRAM_E_OVERFLOW;
        }
    }
    memset(out, 0x77, sizeof out);
    memset(&s, 0x77, sizeof s);
    vram_status st = vram_place(&d, global, fixed, comp, n, out, &s);
    FUZZ_CHECK(st == want);
    if (st != VRAM_OK) {
        const unsigned char *p = (const unsigned char *)out;
        for (size_t i = 0; i < sizeof out; i++) FUZZ_CHECK(p[i] == 0x77);
        p = (const unsigned char *)&s;
        for (size_t i = 0; i < sizeof s; i++) FUZZ_CHECK(p[i] == 0x77);
        check_parse(in.p, in.n);
        return 0;
    }

    /* per GPU: recomputed used bytes within the budget */
    FUZZ_CHECK(s.gpus == d.gpus && s.fixed_bytes == fx);
    for (int g = 0; g < d.gpus; g++) {
        u128 used = 0;
        int k = 0;
        for (size_t i = 0; i < n; i++) {
            if (out[i].fits && out[i].device == g) {
                used += out[i].bytes;
                k++;
            }
        }
        if (k > 0) used += fx;
        FUZZ_CHECK(s.gpu[g].components == k);
        FUZZ_CHECK(s.gpu[g].used == used);
        FUZZ_CHECK(s.gpu[g].used <= s.gpu[g].budget);
        FUZZ_CHECK(s.gpu[g].budget == vram_devices_budget(&d, g));
    }
    /* the host */
    u128 host = 0;
    int on_gpu = 0, on_cpu = 0, fell = 0, not_placed = 0;
    for (size_t i = 0; i < n; i++) {
        const vram_placement *o = &out[i];
        vram_device_setting eff = vram_setting_resolve(comp[i].setting, global);
        FUZZ_CHECK(o->setting.kind == eff.kind);
        FUZZ_CHECK(o->setting.kind != VRAM_SETTING_INHERIT);
        FUZZ_CHECK(strcmp(vram_place_reason_name(o->reason), "unknown") != 0);
        if (o->fell_back) FUZZ_CHECK(eff.kind == VRAM_SETTING_AUTO);
        if (!o->fits) {
            not_placed++;
            FUZZ_CHECK(o->reason == VRAM_PLACE_GPU_SHORT || o->reason == VRAM_PLACE_NO_SUCH_GPU ||
                       o->reason == VRAM_PLACE_HOST_SHORT);
            if (o->reason == VRAM_PLACE_GPU_SHORT) {
                FUZZ_CHECK(eff.kind == VRAM_SETTING_GPU && o->device == eff.gpu);
                FUZZ_CHECK(o->short_by > 0 && o->short_by <= o->needed);
                FUZZ_CHECK(o->needed == comp[i].gpu_bytes ||
                           o->needed == (u128)comp[i].gpu_bytes + fx);
                /* short by exactly what the GPU lacked at its turn: never more than its
                   whole budget could explain */
                FUZZ_CHECK((u128)o->needed - o->short_by <= s.gpu[o->device].budget);
            }
            if (o->reason == VRAM_PLACE_NO_SUCH_GPU) FUZZ_CHECK(eff.gpu >= d.gpus);
            if (o->reason == VRAM_PLACE_HOST_SHORT) {
                FUZZ_CHECK(s.host_known && o->host_short_by > 0);
                FUZZ_CHECK(o->host_short_by <= comp[i].cpu_bytes);
            }
            continue;
        }
        if (o->device == VRAM_PLAN_CPU) {
            on_cpu++;
            host += o->bytes;
            FUZZ_CHECK(o->bytes == comp[i].cpu_bytes);
            FUZZ_CHECK(eff.kind == VRAM_SETTING_CPU || o->fell_back);
            if (o->fell_back) {
                fell++;
                if (d.gpus == 0) {
                    FUZZ_CHECK(o->reason == VRAM_PLACE_NO_GPU && o->short_by == 0);
                } else {
                    FUZZ_CHECK(o->reason == VRAM_PLACE_FELL_BACK);
                    FUZZ_CHECK(o->short_by > 0 && o->short_by <= (u128)comp[i].gpu_bytes + fx);
                    FUZZ_CHECK(o->short_device >= 0 && o->short_device < d.gpus);
                }
            }
        } else {
            on_gpu++;
            FUZZ_CHECK(o->device >= 0 && o->device < d.gpus);
            FUZZ_CHECK(o->bytes == comp[i].gpu_bytes && o->reason == VRAM_PLACE_ON_GPU);
            if (eff.kind == VRAM_SETTING_GPU) FUZZ_CHECK(o->device == eff.gpu);
            FUZZ_CHECK(eff.kind == VRAM_SETTING_GPU || eff.kind == VRAM_SETTING_AUTO);
        }
    }
    FUZZ_CHECK(s.host_used == host);
    if (s.host_known) FUZZ_CHECK(s.host_used <= s.host_budget);
    FUZZ_CHECK(s.host_known == (d.host_free != 0));
    FUZZ_CHECK(s.on_gpu == on_gpu && s.on_cpu == on_cpu && s.fell_back == fell);
    FUZZ_CHECK(s.not_placed == not_placed && s.all_fit == (not_placed == 0));
    /* an AUTO component that fell back while some GPU was empty all along was larger than
       that GPU's room for a first component */
    for (size_t i = 0; i < n; i++) {
        if (!out[i].fell_back || d.gpus == 0) continue;
        for (int g = 0; g < d.gpus; g++)
            if (s.gpu[g].components == 0)
                FUZZ_CHECK((u128)comp[i].gpu_bytes + fx > s.gpu[g].budget);
    }
    /* deterministic */
    FUZZ_CHECK(vram_place(&d, global, fixed, comp, n, again, &s2) == VRAM_OK);
    FUZZ_CHECK(s.host_used == s2.host_used && s.not_placed == s2.not_placed);
    for (int g = 0; g < d.gpus; g++)
        FUZZ_CHECK(s.gpu[g].used == s2.gpu[g].used && s.gpu[g].components == s2.gpu[g].components);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(out[i].device == again[i].device && out[i].fits == again[i].fits);
        FUZZ_CHECK(out[i].short_by == again[i].short_by && out[i].reason == again[i].reason);
    }
    check_parse(in.p, in.n);
    return 0;
}
