/* Fuzzes vramkit/diagnose.h: random facts (a snapshot of any status with up to 8 described
 * GPUs, platform flags, probe verdicts, a model size, and random text for
 * CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, the PyTorch allocator setting, LD_LIBRARY_PATH
 * and an architecture list) through vram_diagnose and the parsers.
 * Invariants: no crash; VRAM_OK with every finding kept when the array is
 * VRAM_DIAG_MAX_FINDINGS long, at most VRAM_DIAG_MACHINE_MAX about the machine and
 * VRAM_DIAG_PER_DEVICE_MAX per GPU; findings sorted (severity down, then id, then device);
 * every id in the table with its table severity, a device of the snapshot or -1, unused
 * evidence 0; no finding whose trigger is absent (checked for: launch blocking, the model,
 * the co-tenant threshold recomputed in 128 bits, the allocator setting, CUDA_VISIBLE_DEVICES,
 * WSL2, forward compatibility, the kernel probe, no driver on a complete snapshot); the same
 * facts give the same findings; a smaller array gives VRAM_E_BUFFER and the same first
 * findings; the parsers' own guarantees (offsets inside the text, visible <= entries, ...).
 *
 * Input bytes, in order (missing bytes read as 0):
 *   status(1: index into statuses[] mod 10), cuda_error(1: index into errors[] mod 10; the
 *   last index reads 2 more bytes as the raw code), driver_version(2), runtime_version(2),
 *   device_count(1, signed), flags(1: bit0 wsl2, bit1 jetson, bit2 vgpu, bit3 forked),
 *   physical_gpus(1, signed), driver_branch(2), model_bytes(1 + width: width byte mod 4 ->
 *   none, 1, 2 (MiB) or 8 bytes), permille(2), described GPUs(1: mod 9), then per GPU:
 *   name(1: index into names[] mod 8; 7 = 255 bytes with no NUL), cc(1), total(1 + width),
 *   free(1 + width), mode(1: bits0-2 compute mode (5-7 out of range), bit3 integrated),
 *   tristates(1: 2 bits each for vmm, pools, host register, posix fd: 0 no, 1 yes, 2-3
 *   unknown), then 5 probes of 2 bytes (bit0 ran, bits1-3 status index; cuda error);
 *   then 5 texts -- visible devices, launch blocking, allocator setting, library path,
 *   architectures -- each a length byte (0xFF = not set) and that many bytes; then cap(1). */
#include <vramkit/diagnose.h>

#include "fuzz_common.h"

__extension__ typedef unsigned __int128 u128;

static const vram_status statuses[10] = {VRAM_OK, VRAM_E_NO_DRIVER, VRAM_E_NO_DEVICE, VRAM_E_CUDA,
                                         VRAM_E_CUDA_STICKY, VRAM_E_FORKED, VRAM_E_RANGE,
                                         VRAM_E_VERSION, VRAM_E_NOT_BUILT, VRAM_E_OOM};
static const int errors[9] = {0, 35, 46, 100, 700, 801, 803, 804, 3};
static const char *const names[7] = {"NVIDIA H100 80GB HBM3", "NVIDIA A40-48C", "NVIDIA GeForce RTX 4090",
                                     "GRID T4-16Q", "", "NVIDIA TITAN V", "Orin (nvgpu)"};

static uint64_t draw_bytes(fuzz_in *in) {
    unsigned w = (unsigned)(fuzz_u64(in, 1) & 3u);
    if (w == 0) return 0;
    if (w == 1) return fuzz_u64(in, 1) << 20;
    if (w == 2) return fuzz_u64(in, 2) << 20;
    return fuzz_u64(in, 8);
}

static vram_tristate draw_tri(unsigned v) {
    v &= 3u;
    return v == 0 ? VRAM_NO : v == 1 ? VRAM_YES : VRAM_UNKNOWN;
}

/* A text of the input, NUL-terminated in buf (cap 257), or NULL for "not set". */
static const char *draw_text(fuzz_in *in, char *buf) {
    uint64_t n = fuzz_u64(in, 1);
    if (n == 0xFF) return NULL;
    size_t i = 0;
    for (; i < n && in->n > 0; i++) {
        buf[i] = (char)in->p[0];
        in->p++;
        in->n--;
    }
    buf[i] = '\0';
    return buf;
}

/* Does s hold lit once whitespace is dropped (as PyTorch's tokenizer drops it)? */
static int contains(const char *s, const char *lit) {
    char dense[257];
    size_t n = 0;
    if (s == NULL) return 0;
    for (; *s && n + 1 < sizeof dense; s++)
        if (!(*s == ' ' || (*s >= '\t' && *s <= '\r'))) dense[n++] = *s;
    dense[n] = '\0';
    return strstr(dense, lit) != NULL;
}

/* CUDA_LAUNCH_BLOCKING restated: spaces, an optional '+', digits, one of them not '0'. */
static int blocking_on(const char *s) {
    if (s == NULL) return 0;
    while (*s == ' ' || (*s >= '\t' && *s <= '\r')) s++;
    if (*s == '+') s++;
    for (; *s >= '0' && *s <= '9'; s++)
        if (*s != '0') return 1;
    return 0;
}

/* Same findings, field by field (a struct's padding is not compared). */
static int same(const vram_finding *a, const vram_finding *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (a[i].id != b[i].id || a[i].severity != b[i].severity || a[i].device != b[i].device) return 0;
        if (memcmp(a[i].ev, b[i].ev, sizeof a[i].ev) != 0) return 0;
    }
    return 1;
}

static vram_device_snapshot snap;
static vram_diag_facts facts;
static vram_finding out[VRAM_DIAG_MAX_FINDINGS], again[VRAM_DIAG_MAX_FINDINGS], small[VRAM_DIAG_MAX_FINDINGS];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    char texts[5][257];
    memset(&snap, 0, sizeof snap);
    snap.status = statuses[fuzz_u64(&in, 1) % 10u];
    unsigned ei = (unsigned)(fuzz_u64(&in, 1) % 10u);
    snap.cuda_error = ei < 9 ? errors[ei] : (int)fuzz_u64(&in, 2);
    snap.driver_version = (int)fuzz_u64(&in, 2);
    snap.runtime_version = (int)fuzz_u64(&in, 2);
    snap.device_count = (int)(int8_t)fuzz_u64(&in, 1);
    vram_diag_facts_init(&facts, &snap);
    unsigned flags = (unsigned)fuzz_u64(&in, 1);
    facts.wsl2 = flags & 1u;
    facts.jetson = (flags >> 1) & 1u;
    facts.vgpu = (flags >> 2) & 1u;
    facts.forked_after_init = (flags >> 3) & 1u;
    facts.physical_gpus = (int)(int8_t)fuzz_u64(&in, 1);
    facts.driver_branch = (int)fuzz_u64(&in, 2);
    facts.model_bytes = draw_bytes(&in);
    facts.cotenant_permille = (uint32_t)fuzz_u64(&in, 2);
    int described = (int)(fuzz_u64(&in, 1) % 9u);
    for (int d = 0; d < described; d++) {
        vram_device_info *g = &snap.devices[d];
        unsigned ni = (unsigned)(fuzz_u64(&in, 1) % 8u);
        if (ni < 7) snprintf(g->name, sizeof g->name, "%s", names[ni]);
        else memset(g->name, 'X', sizeof g->name); /* no NUL: the core must stay inside */
        unsigned cc = (unsigned)fuzz_u64(&in, 1);
        g->cc_major = (int)(cc / 10u);
        g->cc_minor = (int)(cc % 10u);
        g->total_bytes = draw_bytes(&in);
        g->free_bytes = draw_bytes(&in);
        unsigned mode = (unsigned)fuzz_u64(&in, 1);
        g->compute_mode = (vram_compute_mode)(mode & 7u);
        g->integrated = (mode >> 3) & 1u;
        unsigned tri = (unsigned)fuzz_u64(&in, 1);
        g->vmm = draw_tri(tri);
        g->memory_pools = draw_tri(tri >> 2);
        g->host_register = draw_tri(tri >> 4);
        g->vmm_posix_fd = draw_tri(tri >> 6);
        for (int k = 0; k < VRAM_DIAG_PROBE_COUNT; k++) {
            unsigned pb = (unsigned)fuzz_u64(&in, 1);
            facts.probe[d][k].ran = pb & 1u;
            facts.probe[d][k].status = statuses[((pb >> 1) & 7u) % 10u];
            facts.probe[d][k].cuda_error = (int)fuzz_u64(&in, 1);
        }
    }
    facts.cuda_visible_devices = draw_text(&in, texts[0]);
    facts.cuda_launch_blocking = draw_text(&in, texts[1]);
    facts.alloc_conf = draw_text(&in, texts[2]);
    facts.ld_library_path = draw_text(&in, texts[3]);
    const char *archs = draw_text(&in, texts[4]);
    if (archs != NULL) {
        vram_status st = vram_diag_parse_archs(archs, &facts);
        FUZZ_CHECK(st == VRAM_OK || st == VRAM_E_FORMAT || st == VRAM_E_RANGE);
        FUZZ_CHECK((st == VRAM_OK) == (facts.n_archs > 0));
        FUZZ_CHECK(facts.n_archs >= 0 && facts.n_archs <= VRAM_DIAG_MAX_ARCHS);
        for (int i = 0; i < facts.n_archs; i++) {
            FUZZ_CHECK(facts.archs[i].cc >= 10 && facts.archs[i].cc <= 199);
            FUZZ_CHECK(facts.archs[i].sass || facts.archs[i].ptx);
        }
    }
    unsigned cap_sel = (unsigned)fuzz_u64(&in, 1);

    /* the parsers on their own */
    vram_alloc_conf ac;
    vram_status ast = vram_alloc_conf_parse(facts.alloc_conf, &ac);
    FUZZ_CHECK(ast == VRAM_OK || ast == VRAM_E_FORMAT);
    FUZZ_CHECK(ac.valid == (ast == VRAM_OK));
    if (facts.alloc_conf != NULL) FUZZ_CHECK(ac.error_at <= strlen(facts.alloc_conf));
    FUZZ_CHECK(ac.unknown_keys <= ac.pairs);
    if (ac.expandable_segments != VRAM_UNKNOWN) FUZZ_CHECK(contains(facts.alloc_conf, "expandable_segments:"));
    if (ac.pinned_host_register != VRAM_UNKNOWN)
        FUZZ_CHECK(contains(facts.alloc_conf, "pinned_use_cuda_host_register:"));
    if (ac.backend_async) FUZZ_CHECK(contains(facts.alloc_conf, "backend:cudaMallocAsync"));
    vram_visible vis;
    vram_visible_parse(facts.cuda_visible_devices, facts.physical_gpus, &vis);
    FUZZ_CHECK(vis.set == (facts.cuda_visible_devices != NULL));
    FUZZ_CHECK(vis.visible >= 0 && vis.visible <= vis.entries && vis.visible <= VRAM_MAX_DEVICES);
    FUZZ_CHECK((vis.stop_at == -1) == (vis.stop == VRAM_VISIBLE_COMPLETE));
    FUZZ_CHECK(vis.stop_at < vis.entries);
    if (vis.stop == VRAM_VISIBLE_REPEATED) FUZZ_CHECK(vis.visible == 0);
    if (vis.set) {
        int commas = 0;
        for (const char *p = facts.cuda_visible_devices; *p; p++) commas += *p == ',';
        FUZZ_CHECK(vis.entries == commas + 1);
        if (vis.stop == VRAM_VISIBLE_COMPLETE) FUZZ_CHECK(vis.visible == vis.entries);
    }
    size_t at = 0;
    if (vram_diag_compat_on_path(facts.ld_library_path, &at)) FUZZ_CHECK(at < strlen(facts.ld_library_path));

    /* the diagnosis */
    size_t n = 0, total = 0;
    vram_status st = vram_diagnose(&facts, out, VRAM_DIAG_MAX_FINDINGS, &n, &total);
    FUZZ_CHECK(st == VRAM_OK);
    FUZZ_CHECK(n == total && total <= VRAM_DIAG_MAX_FINDINGS);
    int count = vram_snapshot_count(&snap);
    int machine = 0, per_dev[VRAM_MAX_DEVICES] = {0};
    for (size_t i = 0; i < n; i++) {
        const vram_finding *f = &out[i];
        FUZZ_CHECK((int)f->id >= 0 && f->id < VRAM_FINDING_COUNT);
        FUZZ_CHECK(f->severity == vram_finding_severity(f->id));
        FUZZ_CHECK(f->device >= -1 && f->device < count);
        if (f->device < 0) machine++;
        else per_dev[f->device]++;
        for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++)
            if (vram_finding_evidence(f->id, k).unit == VRAM_EVU_NONE) FUZZ_CHECK(f->ev[k] == 0);
        if (i > 0) {
            const vram_finding *a = &out[i - 1];
            FUZZ_CHECK(a->severity >= f->severity);
            if (a->severity == f->severity) {
                FUZZ_CHECK(a->id <= f->id);
                if (a->id == f->id) FUZZ_CHECK(a->device <= f->device);
            }
        }
        /* no finding without its trigger */
        switch (f->id) {
        case VRAM_FINDING_LAUNCH_BLOCKING: FUZZ_CHECK(blocking_on(facts.cuda_launch_blocking)); break;
        case VRAM_FINDING_MODEL_FITS:
        case VRAM_FINDING_MODEL_DOES_NOT_FIT:
            FUZZ_CHECK(facts.model_bytes > 0);
            FUZZ_CHECK(vram_diag_gpu_usable(&facts, f->device));
            FUZZ_CHECK((f->id == VRAM_FINDING_MODEL_FITS) ==
                       (facts.model_bytes <= snap.devices[f->device].free_bytes));
            break;
        case VRAM_FINDING_COTENANT: {
            const vram_device_info *g = &snap.devices[f->device];
            u128 used = g->free_bytes > g->total_bytes ? 0 : (u128)(g->total_bytes - g->free_bytes);
            uint32_t pm = facts.cotenant_permille == 0 ? 500u : (facts.cotenant_permille > 1000u ? 1000u
                                                                                           : facts.cotenant_permille);
            FUZZ_CHECK(g->total_bytes > 0);
            /* the rule's threshold is floor-exact to the byte: used > total * pm / 1000 */
            FUZZ_CHECK(used * 1000u > (u128)g->total_bytes * pm - ((u128)g->total_bytes * pm) % 1000u);
            break;
        }
        case VRAM_FINDING_ALLOC_CONF_INVALID: FUZZ_CHECK(facts.alloc_conf != NULL && ast == VRAM_E_FORMAT); break;
        case VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM:
        case VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED: FUZZ_CHECK(ac.expandable_segments == VRAM_YES); break;
        case VRAM_FINDING_ASYNC_ALLOC_NO_POOLS: FUZZ_CHECK(ac.backend_async); break;
        case VRAM_FINDING_HOST_REGISTER_CONF_UNSUPPORTED: FUZZ_CHECK(ac.pinned_host_register == VRAM_YES); break;
        case VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL:
        case VRAM_FINDING_VISIBLE_DEVICES_IGNORED: FUZZ_CHECK(facts.cuda_visible_devices != NULL); break;
        case VRAM_FINDING_PLATFORM_WSL2: FUZZ_CHECK(facts.wsl2); break;
        case VRAM_FINDING_FORWARD_COMPAT_IN_USE: FUZZ_CHECK(facts.ld_library_path != NULL); break;
        case VRAM_FINDING_FORWARD_COMPAT_UNSUPPORTED:
            FUZZ_CHECK(facts.ld_library_path != NULL || snap.cuda_error == 804);
            break;
        case VRAM_FINDING_KERNEL_PROBE_FAILED:
            FUZZ_CHECK(facts.probe[f->device][VRAM_DIAG_PROBE_KERNEL].ran &&
                       facts.probe[f->device][VRAM_DIAG_PROBE_KERNEL].status != VRAM_OK);
            break;
        case VRAM_FINDING_NO_DRIVER: FUZZ_CHECK(snap.status != VRAM_OK); break;
        case VRAM_FINDING_FORKED_AFTER_INIT:
            FUZZ_CHECK(facts.forked_after_init || snap.status == VRAM_E_FORKED);
            break;
        case VRAM_FINDING_ARCH_NOT_IN_BUILD: FUZZ_CHECK(facts.n_archs > 0); break;
        default: break;
        }
    }
    FUZZ_CHECK(machine <= VRAM_DIAG_MACHINE_MAX);
    for (int d = 0; d < VRAM_MAX_DEVICES; d++) FUZZ_CHECK(per_dev[d] <= VRAM_DIAG_PER_DEVICE_MAX);
    FUZZ_CHECK(vram_diag_usable_gpus(&facts) <= count);

    /* deterministic */
    size_t n2 = 0;
    FUZZ_CHECK(vram_diagnose(&facts, again, VRAM_DIAG_MAX_FINDINGS, &n2, NULL) == VRAM_OK);
    FUZZ_CHECK(n2 == n && same(out, again, n));

    /* a smaller array keeps the most severe, in order */
    size_t cap = total == 0 ? 0 : cap_sel % (total + 1);
    size_t n3 = 99, t3 = 0;
    st = vram_diagnose(&facts, cap ? small : NULL, cap, &n3, &t3);
    FUZZ_CHECK(st == (cap < total ? VRAM_E_BUFFER : VRAM_OK));
    FUZZ_CHECK(n3 == cap && t3 == total);
    FUZZ_CHECK(same(small, out, cap));
    return 0;
}
