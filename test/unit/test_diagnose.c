/* Unit tests of vramkit/diagnose.h: every rule on snapshots of the mock (no driver, a driver
 * too old, an sm_50 GPU under CUDA 13, user-reports/003's vGPU with expandable segments,
 * WSL2, pools off, a co-tenant at 4.7 of 8 GB, compute modes, the environment variables),
 * the parsers (PYTORCH_CUDA_ALLOC_CONF, CUDA_VISIBLE_DEVICES, architecture lists), the order
 * of findings and the caller's fixed array. Expected numbers are written out by hand. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include <vramkit/diagnose.h>

#include "mock_device.h"
#include "device/snapshot.h"

#define GB UINT64_C(1000000000)
#define GiB (UINT64_C(1) << 30)

static vram_mock m;
static vram_device_ops ops;
static vram_device_snapshot snap;
static vram_diag_facts facts;
static vram_finding out[VRAM_DIAG_MAX_FINDINGS + 1];
static size_t nout, ntotal;

static void start(int n) {
    vram_mock_init(&m, n);
    ops = vram_mock_ops(&m);
}

/* Snapshot of the mock as scripted, then fresh facts over it. */
static void take(void) {
    vram_status st = vram_snapshot_take(&ops, &snap);
    (void)st; /* the status is in snap.status: the rules read it */
    vram_diag_facts_init(&facts, &snap);
}

static void finish(void) { cr_assert_eq(vram_mock_fini(&m, stderr), 0); }

static size_t diagnose(void) {
    vram_status st = vram_diagnose(&facts, out, VRAM_DIAG_MAX_FINDINGS, &nout, &ntotal);
    cr_assert_eq(st, VRAM_OK, "%s", vram_status_name(st));
    cr_assert_eq(nout, ntotal);
    return nout;
}

static const vram_finding *find(vram_finding_id id, int device) {
    for (size_t i = 0; i < nout; i++)
        if (out[i].id == id && out[i].device == device) return &out[i];
    return NULL;
}

static int count_id(vram_finding_id id) {
    int n = 0;
    for (size_t i = 0; i < nout; i++) n += out[i].id == id;
    return n;
}

static int count_sev(vram_severity s) {
    int n = 0;
    for (size_t i = 0; i < nout; i++) n += out[i].severity == s;
    return n;
}

static const vram_finding *must(vram_finding_id id, int device) {
    const vram_finding *f = find(id, device);
    cr_assert(f != NULL, "no %s for device %d (%zu findings)", vram_finding_name(id), device, nout);
    cr_assert_eq(f->severity, vram_finding_severity(id));
    return f;
}

static void expect_ev(const vram_finding *f, int64_t e0, int64_t e1, int64_t e2, int64_t e3) {
    cr_expect_eq(f->ev[0], e0, "%s ev0 %lld", vram_finding_name(f->id), (long long)f->ev[0]);
    cr_expect_eq(f->ev[1], e1, "%s ev1 %lld", vram_finding_name(f->id), (long long)f->ev[1]);
    cr_expect_eq(f->ev[2], e2, "%s ev2 %lld", vram_finding_name(f->id), (long long)f->ev[2]);
    cr_expect_eq(f->ev[3], e3, "%s ev3 %lld", vram_finding_name(f->id), (long long)f->ev[3]);
}

/* ---- the table ---------------------------------------------------------------------- */

/* Every {placeholder} of a template names an evidence slot of its finding. */
static void check_placeholders(vram_finding_id id, const char *t) {
    for (const char *p = strchr(t, '{'); p != NULL; p = strchr(p + 1, '{')) {
        const char *close = strchr(p, '}');
        cr_assert(close != NULL, "%s: unclosed '{' in \"%s\"", vram_finding_name(id), t);
        int found = 0;
        for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
            vram_evidence_spec s = vram_finding_evidence(id, k);
            if (s.name && strlen(s.name) == (size_t)(close - p - 1) && strncmp(s.name, p + 1, strlen(s.name)) == 0)
                found = 1;
        }
        cr_expect(found, "%s: placeholder %.*s has no evidence", vram_finding_name(id), (int)(close - p + 1), p);
    }
}

Test(diagnose_table, every_finding_is_complete_and_named_once) {
    for (int i = 0; i < VRAM_FINDING_COUNT; i++) {
        vram_finding_id id = (vram_finding_id)i;
        const char *name = vram_finding_name(id);
        cr_assert(name != NULL && name[0] != '\0', "id %d", i);
        for (int j = 0; j < i; j++) cr_expect_str_neq(name, vram_finding_name((vram_finding_id)j));
        vram_severity s = vram_finding_severity(id);
        cr_expect(s >= VRAM_SEV_INFO && s <= VRAM_SEV_ERROR, "%s", name);
        cr_assert(vram_finding_summary(id) != NULL && vram_finding_remedy(id) != NULL, "%s", name);
        check_placeholders(id, vram_finding_summary(id));
        check_placeholders(id, vram_finding_remedy(id));
        int used = 1;
        for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
            vram_evidence_spec e = vram_finding_evidence(id, k);
            /* used slots first, named, each name once */
            if (e.unit == VRAM_EVU_NONE) {
                cr_expect(e.name == NULL, "%s slot %d", name, k);
                used = 0;
                continue;
            }
            cr_expect(used, "%s: slot %d used after an unused one", name, k);
            cr_expect(e.name != NULL, "%s slot %d", name, k);
            for (int q = 0; q < k; q++) cr_expect_str_neq(e.name, vram_finding_evidence(id, q).name);
        }
    }
    cr_expect_str_eq(vram_finding_name(VRAM_FINDING_COUNT), "unknown");
    cr_expect_str_eq(vram_finding_name((vram_finding_id)-1), "unknown");
    cr_expect_null(vram_finding_summary(VRAM_FINDING_COUNT));
    cr_expect_null(vram_finding_remedy(VRAM_FINDING_COUNT));
    cr_expect_eq(vram_finding_severity(VRAM_FINDING_COUNT), VRAM_SEV_NONE);
    cr_expect_eq(vram_finding_evidence(VRAM_FINDING_NO_DRIVER, -1).unit, VRAM_EVU_NONE);
    cr_expect_eq(vram_finding_evidence(VRAM_FINDING_NO_DRIVER, VRAM_FINDING_EVIDENCE).unit, VRAM_EVU_NONE);
    cr_expect_str_eq(vram_severity_name(VRAM_SEV_ERROR), "error");
    cr_expect_str_eq(vram_severity_name(VRAM_SEV_WARNING), "warning");
    cr_expect_str_eq(vram_severity_name(VRAM_SEV_INFO), "info");
    cr_expect_str_eq(vram_severity_name(VRAM_SEV_NONE), "none");
    cr_expect_str_eq(vram_severity_name((vram_severity)4), "unknown");
    cr_expect_str_eq(vram_severity_name((vram_severity)-1), "unknown");
    cr_expect_str_eq(vram_diag_probe_name(VRAM_DIAG_PROBE_VMM), "vmm");
    cr_expect_str_eq(vram_diag_probe_name(VRAM_DIAG_PROBE_ALLOC90), "alloc90");
    cr_expect_str_eq(vram_diag_probe_name(VRAM_DIAG_PROBE_COUNT), "unknown");
    cr_expect_str_eq(vram_diag_probe_name((vram_diag_probe_kind)-1), "unknown");
    cr_expect_str_eq(vram_visible_stop_name(VRAM_VISIBLE_INVALID), "invalid");
    cr_expect_str_eq(vram_visible_stop_name(VRAM_VISIBLE_NONEXISTENT), "nonexistent");
    cr_expect_str_eq(vram_visible_stop_name(VRAM_VISIBLE_REPEATED), "repeated");
    cr_expect_str_eq(vram_visible_stop_name(VRAM_VISIBLE_COMPLETE), "complete");
    cr_expect_str_eq(vram_visible_stop_name((vram_visible_stop)-1), "unknown");
    cr_expect_str_eq(vram_visible_stop_name((vram_visible_stop)100), "unknown");
    /* the bound the CLI allocates by */
    cr_expect_geq(VRAM_DIAG_MAX_FINDINGS, 24 + 16 * VRAM_MAX_DEVICES);
}

Test(diagnose_table, minimum_drivers_and_architectures_by_cuda_major) {
    cr_expect_str_eq(vram_diag_min_driver(11080), "450.80.02");
    cr_expect_str_eq(vram_diag_min_driver(12000), "525.60.13");
    cr_expect_str_eq(vram_diag_min_driver(12090), "525.60.13");
    cr_expect_str_eq(vram_diag_min_driver(13000), "580");
    cr_expect_null(vram_diag_min_driver(10020));
    cr_expect_null(vram_diag_min_driver(14000));
    cr_expect_eq(vram_diag_min_driver_branch(12040), 525);
    cr_expect_eq(vram_diag_min_driver_branch(13010), 580);
    cr_expect_eq(vram_diag_min_driver_branch(0), 0);
    cr_expect_eq(vram_diag_min_cc(11080), 35);
    cr_expect_eq(vram_diag_min_cc(12040), 50);
    cr_expect_eq(vram_diag_min_cc(13000), 75);
    cr_expect_eq(vram_diag_min_cc(9000), 0);
}

/* ---- the machine ---------------------------------------------------------------------- */

Test(diagnose, clean_machine_has_no_finding) {
    start(2);
    take();
    cr_assert_eq(snap.status, VRAM_OK);
    cr_expect_eq(diagnose(), 0);
    cr_expect_eq(vram_findings_worst(out, nout), VRAM_SEV_NONE);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 2);
    /* settings that are fine on a GPU that has what they need stay quiet */
    facts.alloc_conf = "expandable_segments:True,backend:cudaMallocAsync,pinned_use_cuda_host_register:True";
    facts.cuda_visible_devices = "0,1";
    facts.physical_gpus = 2;
    facts.cuda_launch_blocking = "0";
    facts.n_archs = 0;
    cr_assert_eq(vram_diag_parse_archs("90", &facts), VRAM_OK);
    cr_expect_eq(diagnose(), 0);
    finish();
}

Test(diagnose, no_driver) {
    start(1);
    vram_mock_no_driver(&m);
    take();
    cr_assert_eq(snap.status, VRAM_E_NO_DRIVER);
    diagnose();
    const vram_finding *f = must(VRAM_FINDING_NO_DRIVER, -1);
    expect_ev(f, 13000, 35, 0, 0);
    cr_expect_eq(out[0].id, VRAM_FINDING_NO_DRIVER, "the root cause comes first");
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 1, "no driver explains everything else");
    cr_expect_null(find(VRAM_FINDING_DRIVER_TOO_OLD, -1));
    cr_expect_null(find(VRAM_FINDING_NO_DEVICE, -1));
    cr_expect_null(find(VRAM_FINDING_SNAPSHOT_FAILED, -1));
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    /* the kernel module's branch, when known, is evidence */
    facts.driver_branch = 580;
    diagnose();
    expect_ev(must(VRAM_FINDING_NO_DRIVER, -1), 13000, 35, 580, 0);
    finish();
}

Test(diagnose, build_without_cuda) {
    vram_device_snapshot s2;
    memset(&s2, 0, sizeof s2);
    s2.status = VRAM_E_NOT_BUILT; /* what the driver records when vram_cuda_ops says so */
    s2.cuda_error = 35;
    vram_diag_facts_init(&facts, &s2);
    diagnose();
    must(VRAM_FINDING_NO_CUDA_IN_BUILD, -1);
    cr_expect_eq(nout, 1, "not 'no driver', not 'snapshot failed'");
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
}

Test(diagnose, driver_older_major_than_runtime) {
    start(1);
    vram_mock_driver_older(&m, 12020, 13000); /* driver 12.2 under runtime 13.0 */
    take();
    cr_assert_neq(snap.status, VRAM_OK);
    facts.driver_branch = 535;
    diagnose();
    expect_ev(must(VRAM_FINDING_DRIVER_TOO_OLD, -1), 12020, 13000, 580, 535);
    cr_expect_null(find(VRAM_FINDING_NO_DRIVER, -1), "a driver that answers is not 'no driver'");
    cr_expect_null(find(VRAM_FINDING_SNAPSHOT_FAILED, -1));
    cr_expect_null(find(VRAM_FINDING_NO_DEVICE, -1));
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 1);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    finish();
}

Test(diagnose, driver_older_minor_is_a_warning) {
    start(1);
    vram_mock_driver_older(&m, 12020, 12040); /* minor-version compatibility: it works */
    take();
    cr_assert_eq(snap.status, VRAM_OK);
    diagnose();
    expect_ev(must(VRAM_FINDING_DRIVER_OLDER_MINOR, -1), 12020, 12040, 525, 0);
    cr_expect_null(find(VRAM_FINDING_DRIVER_TOO_OLD, -1));
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 1);
    finish();
}

Test(diagnose, newer_driver_is_fine) {
    start(1);
    m.driver_version = 13020;
    m.runtime_version = 12040;
    take();
    cr_expect_eq(diagnose(), 0);
    finish();
}

Test(diagnose, no_device_behind_a_driver) {
    start(0);
    take();
    cr_assert_eq(snap.status, VRAM_E_NO_DEVICE);
    diagnose();
    expect_ev(must(VRAM_FINDING_NO_DEVICE, -1), 13000, 100, 0, 0);
    cr_expect_eq(nout, 1);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    finish();
}

Test(diagnose, sticky_snapshot_failure) {
    start(1);
    vram_mock_sticky_from(&m, 4, 700); /* the device's first read hits an illegal address */
    take();
    cr_assert_eq(snap.status, VRAM_E_CUDA_STICKY);
    diagnose();
    expect_ev(must(VRAM_FINDING_SNAPSHOT_FAILED, -1), VRAM_E_CUDA_STICKY, 700, 0, 0);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    finish();
}

Test(diagnose, device_unavailable_stops_the_snapshot) {
    start(2);
    vram_mock_fail_nth(&m, VRAM_MOCK_OP_MEM_INFO, 2, 46); /* GPU 1 refuses a context */
    take();
    cr_assert_eq(snap.device_count, 1);
    cr_assert_eq(snap.cuda_error, 46);
    diagnose();
    expect_ev(must(VRAM_FINDING_DEVICE_UNAVAILABLE, -1), 1, 46, 0, 0);
    cr_expect_null(find(VRAM_FINDING_SNAPSHOT_FAILED, -1));
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0, "an incomplete snapshot is not used");
    finish();
}

Test(diagnose, driver_mismatch_803) {
    start(1);
    vram_mock_fail_nth(&m, VRAM_MOCK_OP_DEVICE_COUNT, 1, 803);
    take();
    diagnose();
    expect_ev(must(VRAM_FINDING_DRIVER_MISMATCH, -1), 803, 0, 0, 0);
    cr_expect_null(find(VRAM_FINDING_SNAPSHOT_FAILED, -1));
    finish();
}

Test(diagnose, forked_after_init) {
    start(1);
    take();
    facts.forked_after_init = 1;
    diagnose();
    must(VRAM_FINDING_FORKED_AFTER_INIT, -1);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    /* the same from a snapshot that the fork guard refused */
    vram_device_snapshot s2;
    memset(&s2, 0, sizeof s2);
    s2.status = VRAM_E_FORKED;
    s2.cuda_error = 3;
    vram_diag_facts_init(&facts, &s2);
    diagnose();
    must(VRAM_FINDING_FORKED_AFTER_INIT, -1);
    cr_expect_eq(nout, 1, "no 'snapshot failed' beside it");
    finish();
}

/* ---- architectures ---------------------------------------------------------------- */

Test(diagnose, sm50_gpu_with_a_cuda13_build_for_90) {
    start(1);
    vram_mock_set_name(&m, 0, "Quadro M4000");
    m.dev[0].info.cc_major = 5;
    m.dev[0].info.cc_minor = 0;
    take();
    cr_assert_eq(vram_diag_parse_archs("90", &facts), VRAM_OK);
    diagnose();
    expect_ev(must(VRAM_FINDING_ARCH_NOT_IN_BUILD, 0), 50, 90, 90, 0);
    expect_ev(must(VRAM_FINDING_GPU_TOO_OLD_FOR_RUNTIME, 0), 50, 75, 13000, 0);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    /* under CUDA 12 the same GPU is in range, only the build lacks it */
    vram_mock_fini(&m, NULL);
    start(1);
    m.runtime_version = 12040;
    m.driver_version = 12040;
    m.dev[0].info.cc_major = 5;
    m.dev[0].info.cc_minor = 0;
    take();
    cr_assert_eq(vram_diag_parse_archs("50,90", &facts), VRAM_OK);
    cr_expect_eq(diagnose(), 0);
    finish();
}

typedef struct arch_case {
    char list[40];
    int cc;
    int covered;
} arch_case;

ParameterizedTestParameters(diagnose_arch, coverage) {
    static arch_case cases[] = {
        {"90", 90, 1},           {"90", 100, 1}, /* PTX 9.0 JITs on 10.0 */
        {"90", 89, 0},           {"sm_90", 100, 0},      {"sm_90", 90, 1},
        {"sm_80", 86, 1},        {"sm_80", 89, 1},       {"sm_80", 90, 0},
        {"sm_86", 80, 0},        {"sm_90a", 90, 1},      {"sm_90a", 100, 0},
        {"90a", 90, 1},          {"compute_80", 75, 0},  {"compute_80", 120, 1},
        {"80-real", 89, 1},      {"80-real", 90, 0},     {"90-virtual", 90, 1},
        {"90-virtual", 120, 1},  {"9.0", 90, 1},         {"8.6", 86, 1},
        {"75;80;90", 75, 1},     {"sm_75 sm_86", 80, 0},  {"75 86", 80, 1},       {"sm_75,sm_80", 89, 1},
        {"sm_100f", 103, 1},     {"12.0", 120, 1},       {"120-real", 100, 0},
    };
    return cr_make_param_array(arch_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(arch_case *c, diagnose_arch, coverage) {
    static vram_diag_facts f;
    vram_diag_facts_init(&f, NULL);
    cr_assert_eq(vram_diag_parse_archs(c->list, &f), VRAM_OK, "%s", c->list);
    cr_expect_eq(vram_diag_arch_covered(&f, c->cc), c->covered, "%s on %d", c->list, c->cc);
}

Test(diagnose_arch, bad_lists) {
    static vram_diag_facts f;
    vram_diag_facts_init(&f, NULL);
    const char *bad[] = {"", " , ", "9", "sm_", "sm_9", "90x", "2000", "05", "compute_", "90-rea",
                         "90-real-virtual", "9.", "9.0.1", "sm90", "all", "-90", "90a-real"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f.n_archs = 7;
        cr_expect_eq(vram_diag_parse_archs(bad[i], &f), VRAM_E_FORMAT, "'%s'", bad[i]);
        cr_expect_eq(f.n_archs, 0, "'%s' leaves no half list", bad[i]);
    }
    char many[400] = "";
    for (int i = 0; i < VRAM_DIAG_MAX_ARCHS + 1; i++) strcat(many, "90,");
    cr_expect_eq(vram_diag_parse_archs(many, &f), VRAM_E_RANGE);
    cr_expect_eq(f.n_archs, 0);
    many[strlen(many) - 4] = '\0'; /* exactly the maximum */
    cr_expect_eq(vram_diag_parse_archs(many, &f), VRAM_OK);
    cr_expect_eq(f.n_archs, VRAM_DIAG_MAX_ARCHS);
    cr_expect_eq(vram_diag_parse_archs(NULL, &f), VRAM_E_INVALID);
    cr_expect_eq(vram_diag_parse_archs("90", NULL), VRAM_E_INVALID);
    vram_diag_facts_init(&f, NULL);
    cr_expect_eq(vram_diag_arch_covered(&f, 90), -1, "no list: unknown");
    cr_assert_eq(vram_diag_parse_archs("sm_80,compute_90", &f), VRAM_OK);
    cr_expect_eq(f.n_archs, 2);
    cr_expect(f.archs[0].cc == 80 && f.archs[0].sass && !f.archs[0].ptx);
    cr_expect(f.archs[1].cc == 90 && !f.archs[1].sass && f.archs[1].ptx);
}

/* ---- VMM, pools, pinned: user-reports/003 ------------------------------------------- */

Test(diagnose, vgpu_without_vmm_with_expandable_segments_user_report_003) {
    start(1);
    vram_mock_set_name(&m, 0, "NVIDIA A40-48C");
    vram_mock_set_memory(&m, 0, 48 * GiB, 47 * GiB);
    m.dev[0].info.cc_major = 8;
    m.dev[0].info.cc_minor = 6;
    vram_mock_set_attr(&m, 0, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
    vram_mock_set_attr(&m, 0, VRAM_ATTR_MEMORY_POOLS_SUPPORTED, 0);
    take();
    facts.alloc_conf = "expandable_segments:True";
    diagnose();
    const vram_finding *f = must(VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, 0);
    expect_ev(f, VRAM_NO, VRAM_UNKNOWN, 0, 0);
    cr_expect_eq(out[0].id, VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, "the error comes first");
    /* the finding names the failure the team saw and the fix */
    cr_expect(strstr(vram_finding_summary(f->id), "CUDA driver error: operation not supported") != NULL);
    cr_expect(strstr(vram_finding_summary(f->id), "virtual memory management") != NULL);
    cr_expect(strstr(vram_finding_remedy(f->id), "expandable_segments:False") != NULL);
    expect_ev(must(VRAM_FINDING_PLATFORM_VGPU, -1), 0, 0, 0, 0);
    must(VRAM_FINDING_POOLS_UNSUPPORTED, 0);
    cr_expect_null(find(VRAM_FINDING_VMM_UNSUPPORTED, 0), "the error says it already");
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 1);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 1, "the GPU works once the setting is fixed");

    /* without the setting: only the capability, as info */
    facts.alloc_conf = "expandable_segments:False";
    diagnose();
    cr_expect_null(find(VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, 0));
    expect_ev(must(VRAM_FINDING_VMM_UNSUPPORTED, 0), VRAM_NO, 0, 0, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    /* a lower-case true is no setting at all for PyTorch: it refuses it */
    facts.alloc_conf = "expandable_segments:true";
    diagnose();
    cr_expect_null(find(VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, 0));
    expect_ev(must(VRAM_FINDING_ALLOC_CONF_INVALID, -1), 20, 0, 0, 0);
    finish();
}

Test(diagnose, probe_wins_over_an_attribute_that_lies) {
    start(1);
    take(); /* the mock says VMM yes */
    facts.alloc_conf = " expandable_segments : True ";
    facts.probe[0][VRAM_DIAG_PROBE_VMM].ran = 1;
    facts.probe[0][VRAM_DIAG_PROBE_VMM].status = VRAM_E_NOT_SUPPORTED;
    facts.probe[0][VRAM_DIAG_PROBE_VMM].cuda_error = 801;
    diagnose();
    expect_ev(must(VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, 0), VRAM_YES, VRAM_NO, 801, 0);
    expect_ev(must(VRAM_FINDING_PROBE_CONTRADICTS_ATTRIBUTE, 0), VRAM_DIAG_PROBE_VMM, VRAM_YES, VRAM_NO, 801);
    /* the other way: the attribute says no pools, the pool probe worked: no pool finding */
    vram_mock_fini(&m, NULL);
    start(1);
    vram_mock_set_attr(&m, 0, VRAM_ATTR_MEMORY_POOLS_SUPPORTED, 0);
    take();
    facts.alloc_conf = "backend:cudaMallocAsync";
    facts.probe[0][VRAM_DIAG_PROBE_POOL].ran = 1;
    facts.probe[0][VRAM_DIAG_PROBE_POOL].status = VRAM_OK;
    diagnose();
    expect_ev(must(VRAM_FINDING_PROBE_CONTRADICTS_ATTRIBUTE, 0), VRAM_DIAG_PROBE_POOL, VRAM_NO, VRAM_YES, 0);
    cr_expect_null(find(VRAM_FINDING_ASYNC_ALLOC_NO_POOLS, 0));
    cr_expect_null(find(VRAM_FINDING_POOLS_UNSUPPORTED, 0));
    /* a probe that agrees says nothing */
    facts.probe[0][VRAM_DIAG_PROBE_POOL].status = VRAM_E_NOT_SUPPORTED;
    diagnose();
    cr_expect_null(find(VRAM_FINDING_PROBE_CONTRADICTS_ATTRIBUTE, 0));
    must(VRAM_FINDING_ASYNC_ALLOC_NO_POOLS, 0);
    finish();
}

Test(diagnose, wsl2) {
    start(1);
    vram_mock_set_name(&m, 0, "NVIDIA GeForce RTX 4070");
    take();
    facts.wsl2 = 1;
    diagnose();
    must(VRAM_FINDING_PLATFORM_WSL2, -1);
    cr_expect_eq(nout, 1);
    /* expandable segments on WSL2, VMM not probed: the attribute is not to be trusted */
    facts.alloc_conf = "expandable_segments:True";
    diagnose();
    expect_ev(must(VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED, 0), VRAM_YES, 0, 0, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    /* probed and working: nothing left to verify */
    facts.probe[0][VRAM_DIAG_PROBE_VMM].ran = 1;
    facts.probe[0][VRAM_DIAG_PROBE_VMM].status = VRAM_OK;
    diagnose();
    cr_expect_null(find(VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED, 0));
    /* the same setting on bare metal with VMM yes: no warning */
    facts.wsl2 = 0;
    facts.probe[0][VRAM_DIAG_PROBE_VMM].ran = 0;
    diagnose();
    cr_expect_eq(nout, 0);
    finish();
}

Test(diagnose, memory_pools_off_with_cuda_malloc_async) {
    start(1);
    vram_mock_set_attr(&m, 0, VRAM_ATTR_MEMORY_POOLS_SUPPORTED, 0);
    take();
    facts.alloc_conf = "max_split_size_mb:128, backend:cudaMallocAsync";
    diagnose();
    expect_ev(must(VRAM_FINDING_ASYNC_ALLOC_NO_POOLS, 0), VRAM_NO, VRAM_UNKNOWN, 0, 0);
    cr_expect_null(find(VRAM_FINDING_POOLS_UNSUPPORTED, 0));
    facts.alloc_conf = "backend:native";
    diagnose();
    cr_expect_null(find(VRAM_FINDING_ASYNC_ALLOC_NO_POOLS, 0));
    expect_ev(must(VRAM_FINDING_POOLS_UNSUPPORTED, 0), VRAM_NO, 0, 0, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    finish();
}

Test(diagnose, pinned_memory_unavailable) {
    start(1);
    vram_mock_set_attr(&m, 0, VRAM_ATTR_HOST_REGISTER_SUPPORTED, 0);
    take();
    diagnose();
    expect_ev(must(VRAM_FINDING_PINNED_UNAVAILABLE, 0), VRAM_NO, VRAM_UNKNOWN, 0, 0);
    facts.alloc_conf = "pinned_use_cuda_host_register:True";
    diagnose();
    expect_ev(must(VRAM_FINDING_HOST_REGISTER_CONF_UNSUPPORTED, 0), VRAM_NO, 0, 0, 0);
    vram_mock_fini(&m, NULL);
    /* registration fine, but the pinned probe failed (out of memory) */
    start(1);
    take();
    facts.probe[0][VRAM_DIAG_PROBE_PINNED].ran = 1;
    facts.probe[0][VRAM_DIAG_PROBE_PINNED].status = VRAM_E_OOM;
    facts.probe[0][VRAM_DIAG_PROBE_PINNED].cuda_error = 2;
    diagnose();
    expect_ev(must(VRAM_FINDING_PINNED_UNAVAILABLE, 0), VRAM_YES, VRAM_NO, 2, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    finish();
}

Test(diagnose, kernel_and_alloc_probes) {
    start(2);
    take();
    facts.probe[1][VRAM_DIAG_PROBE_KERNEL].ran = 1;
    facts.probe[1][VRAM_DIAG_PROBE_KERNEL].status = VRAM_E_CUDA;
    facts.probe[1][VRAM_DIAG_PROBE_KERNEL].cuda_error = 209;
    facts.probe[0][VRAM_DIAG_PROBE_ALLOC90].ran = 1;
    facts.probe[0][VRAM_DIAG_PROBE_ALLOC90].status = VRAM_E_OOM;
    facts.probe[0][VRAM_DIAG_PROBE_ALLOC90].cuda_error = 2;
    facts.probe[0][VRAM_DIAG_PROBE_KERNEL].ran = 1;
    facts.probe[0][VRAM_DIAG_PROBE_KERNEL].status = VRAM_OK;
    diagnose();
    expect_ev(must(VRAM_FINDING_KERNEL_PROBE_FAILED, 1), VRAM_E_CUDA, 209, 0, 0);
    expect_ev(must(VRAM_FINDING_ALLOC_PROBE_FAILED, 0), (int64_t)(80 * GiB), 2, 0, 0);
    cr_expect_null(find(VRAM_FINDING_KERNEL_PROBE_FAILED, 0));
    cr_expect(vram_diag_gpu_usable(&facts, 0));
    cr_expect(!vram_diag_gpu_usable(&facts, 1), "no kernel runs on it");
    cr_expect(!vram_diag_gpu_usable(&facts, 2), "out of the snapshot");
    cr_expect(!vram_diag_gpu_usable(&facts, -1));
    cr_expect_eq(vram_diag_usable_gpus(&facts), 1);
    finish();
}

/* ---- compute modes ---------------------------------------------------------------------- */

Test(diagnose, compute_mode_prohibited) {
    start(1);
    m.dev[0].info.compute_mode = VRAM_COMPUTE_PROHIBITED;
    take();
    diagnose();
    expect_ev(must(VRAM_FINDING_COMPUTE_PROHIBITED, 0), VRAM_COMPUTE_PROHIBITED, 0, 0, 0);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    finish();
}

Test(diagnose, compute_mode_exclusive) {
    start(2);
    m.dev[0].info.compute_mode = VRAM_COMPUTE_EXCLUSIVE_PROCESS;
    m.dev[1].info.compute_mode = VRAM_COMPUTE_EXCLUSIVE_THREAD;
    take();
    diagnose();
    expect_ev(must(VRAM_FINDING_COMPUTE_EXCLUSIVE, 0), VRAM_COMPUTE_EXCLUSIVE_PROCESS, 0, 0, 0);
    expect_ev(must(VRAM_FINDING_COMPUTE_EXCLUSIVE, 1), VRAM_COMPUTE_EXCLUSIVE_THREAD, 0, 0, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 2);
    finish();
}

/* ---- memory and the model ------------------------------------------------------------ */

Test(diagnose, cotenant_at_4_7_of_8_gb) {
    start(1);
    vram_mock_set_name(&m, 0, "NVIDIA GeForce RTX 3070");
    vram_mock_set_memory(&m, 0, 8 * GB, 3300000000u); /* 4.7 GB held by another process */
    take();
    diagnose();
    expect_ev(must(VRAM_FINDING_COTENANT, 0), 4700000000, 8 * GB, 3300000000, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    /* a model of 2.5 GB fits beside it: 0.8 GB left */
    facts.model_bytes = 2500000000u;
    diagnose();
    expect_ev(must(VRAM_FINDING_COTENANT, 0), 4700000000, 8 * GB, 3300000000, 2500000000);
    expect_ev(must(VRAM_FINDING_MODEL_FITS, 0), 2500000000, 3300000000, 800000000, 8 * GB);
    cr_expect_null(find(VRAM_FINDING_MODEL_DOES_NOT_FIT, 0));
    /* 4 GB does not: 0.7 GB short, an error */
    facts.model_bytes = 4 * GB;
    diagnose();
    expect_ev(must(VRAM_FINDING_MODEL_DOES_NOT_FIT, 0), 4 * GB, 3300000000, 700000000, 8 * GB);
    cr_expect_eq(out[0].id, VRAM_FINDING_MODEL_DOES_NOT_FIT);
    /* exactly the free memory fits, with nothing left */
    facts.model_bytes = 3300000000u;
    diagnose();
    expect_ev(must(VRAM_FINDING_MODEL_FITS, 0), 3300000000, 3300000000, 0, 8 * GB);
    finish();
}

Test(diagnose, cotenant_threshold_is_strictly_more_than_half) {
    start(1);
    vram_mock_set_memory(&m, 0, 8 * GB, 4 * GB);
    take();
    diagnose();
    cr_expect_null(find(VRAM_FINDING_COTENANT, 0), "half in use is not 'most'");
    vram_mock_set_memory(&m, 0, 8 * GB, 4 * GB - 1);
    take();
    diagnose();
    must(VRAM_FINDING_COTENANT, 0);
    facts.cotenant_permille = 900; /* only above 90% */
    diagnose();
    cr_expect_null(find(VRAM_FINDING_COTENANT, 0));
    vram_mock_set_memory(&m, 0, 8 * GB, 799999999); /* 90.00000001% */
    take();
    facts.cotenant_permille = 900;
    diagnose();
    must(VRAM_FINDING_COTENANT, 0);
    finish();
}

Test(diagnose, model_goes_to_the_usable_gpu_with_most_free) {
    start(3);
    vram_mock_set_memory(&m, 0, 80 * GiB, 10 * GiB);
    vram_mock_set_memory(&m, 1, 80 * GiB, 70 * GiB);
    vram_mock_set_memory(&m, 2, 80 * GiB, 79 * GiB);
    m.dev[2].info.compute_mode = VRAM_COMPUTE_PROHIBITED; /* most free, but unusable */
    take();
    facts.model_bytes = 20 * GiB;
    diagnose();
    expect_ev(must(VRAM_FINDING_MODEL_FITS, 1), (int64_t)(20 * GiB), (int64_t)(70 * GiB),
              (int64_t)(50 * GiB), (int64_t)(80 * GiB));
    must(VRAM_FINDING_COTENANT, 0);
    cr_expect_null(find(VRAM_FINDING_COTENANT, 1));
    /* with no usable GPU there is no model finding: the CLI recommends the CPU */
    vram_mock_fini(&m, NULL);
    start(1);
    vram_mock_no_driver(&m);
    take();
    facts.model_bytes = 20 * GiB;
    diagnose();
    cr_expect_null(find(VRAM_FINDING_MODEL_FITS, 0));
    cr_expect_eq(count_id(VRAM_FINDING_MODEL_DOES_NOT_FIT), 0);
    finish();
}

/* ---- the environment ----------------------------------------------------------------- */

Test(diagnose, cuda_launch_blocking) {
    start(1);
    take();
    const struct {
        const char *v;
        int on;
    } cases[] = {{"1", 1}, {" 1", 1}, {"01", 1}, {"+1", 1}, {"2", 1}, {"0", 0}, {"", 0}, {"00", 0},
                 {"true", 0}, {"-1", 0}, {"1abc", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        facts.cuda_launch_blocking = cases[i].v;
        diagnose();
        cr_expect_eq(find(VRAM_FINDING_LAUNCH_BLOCKING, -1) != NULL, cases[i].on, "'%s'", cases[i].v);
        cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    }
    finish();
}

Test(diagnose, cuda_visible_devices_empty_on_a_one_gpu_machine) {
    start(0); /* CUDA enumerates nothing under CUDA_VISIBLE_DEVICES="" */
    take();
    facts.cuda_visible_devices = "";
    facts.physical_gpus = 1;
    diagnose();
    expect_ev(must(VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL, -1), 0, VRAM_VISIBLE_INVALID, 1, 1);
    cr_expect_null(find(VRAM_FINDING_NO_DEVICE, -1), "the variable explains it");
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 1);
    cr_expect_eq(vram_diag_usable_gpus(&facts), 0);
    finish();
}

Test(diagnose, cuda_visible_devices_names_a_gpu_that_does_not_exist) {
    start(0);
    take();
    facts.cuda_visible_devices = "7";
    facts.physical_gpus = 1;
    diagnose();
    expect_ev(must(VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL, -1), 0, VRAM_VISIBLE_NONEXISTENT, 1, 1);
    cr_expect_null(find(VRAM_FINDING_NO_DEVICE, -1));
    /* the GPU count unknown: the driver found none of the listed GPUs */
    facts.physical_gpus = 0;
    diagnose();
    expect_ev(must(VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL, -1), 0, VRAM_VISIBLE_NONEXISTENT, 1, 0);
    facts.cuda_visible_devices = "GPU-8e1c2f3a";
    diagnose();
    expect_ev(must(VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL, -1), 0, VRAM_VISIBLE_NONEXISTENT, 1, 0);
    finish();
}

Test(diagnose, cuda_visible_devices_partly_ignored) {
    start(1); /* "0,7" on a one-GPU machine: GPU 0 is seen, 7 and after are not */
    take();
    facts.cuda_visible_devices = "0,7,1";
    facts.physical_gpus = 1;
    diagnose();
    expect_ev(must(VRAM_FINDING_VISIBLE_DEVICES_IGNORED, -1), 3, 1, VRAM_VISIBLE_NONEXISTENT, 1);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    /* unknown count: judged by the snapshot's one device */
    facts.physical_gpus = 0;
    diagnose();
    expect_ev(must(VRAM_FINDING_VISIBLE_DEVICES_IGNORED, -1), 3, 1, VRAM_VISIBLE_NONEXISTENT, 1);
    facts.cuda_visible_devices = "0";
    diagnose();
    cr_expect_eq(nout, 0);
    finish();
}

typedef struct visible_case {
    char text[48];
    int physical;
    int entries, visible, stop_at;
    vram_visible_stop stop;
} visible_case;

ParameterizedTestParameters(diagnose_visible, parse) {
    static visible_case cases[] = {
        {"", 0, 1, 0, 0, VRAM_VISIBLE_INVALID},
        {"0", 0, 1, 1, -1, VRAM_VISIBLE_COMPLETE},
        {"0,1", 2, 2, 2, -1, VRAM_VISIBLE_COMPLETE},
        {" 1 , 0 ", 2, 2, 2, -1, VRAM_VISIBLE_COMPLETE},
        {"0,2,-1,1", 0, 4, 2, 2, VRAM_VISIBLE_INVALID}, /* the programming guide's example */
        {"-1", 4, 1, 0, 0, VRAM_VISIBLE_INVALID},
        {"NoDevFiles", 4, 1, 0, 0, VRAM_VISIBLE_INVALID},
        {"1gpu2,2ampere", 4, 2, 2, -1, VRAM_VISIBLE_COMPLETE}, /* strtoul: "1", "2" */
        {"0,0", 4, 2, 0, 1, VRAM_VISIBLE_REPEATED},
        {"1,0,1", 4, 3, 0, 2, VRAM_VISIBLE_REPEATED},
        {"7", 1, 1, 0, 0, VRAM_VISIBLE_NONEXISTENT},
        {"0,3,1", 2, 3, 1, 1, VRAM_VISIBLE_NONEXISTENT},
        {"3", 0, 1, 1, -1, VRAM_VISIBLE_COMPLETE}, /* count unknown: cannot tell */
        {"0,", 2, 2, 1, 1, VRAM_VISIBLE_INVALID},
        {",0", 2, 2, 0, 0, VRAM_VISIBLE_INVALID},
        {"+1", 2, 1, 1, -1, VRAM_VISIBLE_COMPLETE},
        {"-0", 2, 1, 1, -1, VRAM_VISIBLE_COMPLETE},
        {"GPU-aa,GPU-bb", 0, 2, 2, -1, VRAM_VISIBLE_COMPLETE},
        {"GPU-aa,1", 0, 2, 1, 1, VRAM_VISIBLE_INVALID},
        {"GPU-aa,GPU-aa", 0, 2, 0, 1, VRAM_VISIBLE_REPEATED},
        {"MIG-x,MIG-y,GPU-z", 0, 3, 2, 2, VRAM_VISIBLE_INVALID},
        {"99999999999999999999", 0, 1, 1, -1, VRAM_VISIBLE_COMPLETE},
    };
    return cr_make_param_array(visible_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(visible_case *c, diagnose_visible, parse) {
    vram_visible v;
    vram_visible_parse(c->text, c->physical, &v);
    cr_expect_eq(v.set, 1);
    cr_expect_eq(v.entries, c->entries, "'%s' entries %d", c->text, v.entries);
    cr_expect_eq(v.visible, c->visible, "'%s' visible %d", c->text, v.visible);
    cr_expect_eq(v.stop_at, c->stop_at, "'%s' stop_at %d", c->text, v.stop_at);
    cr_expect_eq(v.stop, c->stop, "'%s' stop %d", c->text, (int)v.stop);
}

Test(diagnose_visible, unset_and_many_entries) {
    vram_visible v;
    vram_visible_parse(NULL, 2, &v);
    cr_expect(v.set == 0 && v.entries == 0 && v.visible == 0 && v.stop_at == -1);
    /* more distinct indices than any machine has GPUs: the rest count as nonexistent */
    char buf[1024] = "";
    for (int i = 0; i < VRAM_MAX_DEVICES + 5; i++) {
        char one[8];
        snprintf(one, sizeof one, "%s%d", i ? "," : "", i);
        strcat(buf, one);
    }
    vram_visible_parse(buf, 0, &v);
    cr_expect_eq(v.entries, VRAM_MAX_DEVICES + 5);
    cr_expect_eq(v.visible, VRAM_MAX_DEVICES);
    cr_expect_eq(v.stop_at, VRAM_MAX_DEVICES);
    cr_expect_eq(v.stop, VRAM_VISIBLE_NONEXISTENT);
}

/* ---- PYTORCH_CUDA_ALLOC_CONF ---------------------------------------------------------- */

typedef struct conf_case {
    char text[96];
    vram_status st;
    size_t error_at;
    vram_tristate expandable;
    int async;
    vram_tristate hostreg;
    int pairs, unknown;
} conf_case;

#define U VRAM_UNKNOWN
#define Y VRAM_YES
#define N VRAM_NO
ParameterizedTestParameters(diagnose_conf, parse) {
    static conf_case cases[] = {
        {"expandable_segments:True", VRAM_OK, 0, Y, 0, U, 1, 0},
        {" expandable_segments : True ", VRAM_OK, 0, Y, 0, U, 1, 0},
        {"expandable_segments:Tr ue", VRAM_OK, 0, Y, 0, U, 1, 0}, /* spaces dropped inside */
        {"expandable_segments:\tFalse\n", VRAM_OK, 0, N, 0, U, 1, 0},
        {"expandable_segments:true", VRAM_E_FORMAT, 20, U, 0, U, 0, 0}, /* case-sensitive */
        {"expandable_segments:TRUE", VRAM_E_FORMAT, 20, U, 0, U, 0, 0},
        {"expandable_segments:1", VRAM_E_FORMAT, 20, U, 0, U, 0, 0},
        {"expandable_segments:False,backend:cudaMallocAsync", VRAM_OK, 0, N, 1, U, 2, 0},
        {"backend:native", VRAM_OK, 0, U, 0, U, 1, 0},
        {"backend:cudamallocasync", VRAM_E_FORMAT, 8, U, 0, U, 0, 0},
        {"max_split_size_mb:128,roundup_power2_divisions:[64:8,256:4,>:1],expandable_segments:True",
         VRAM_OK, 0, Y, 0, U, 3, 0},
        {"roundup_power2_divisions:4", VRAM_OK, 0, U, 0, U, 1, 0},
        {"garbage_collection_threshold:0.6", VRAM_OK, 0, U, 0, U, 1, 0},
        {"max_split_size_mb:abc", VRAM_E_FORMAT, 18, U, 0, U, 0, 0},
        {"expandable_segments", VRAM_E_FORMAT, 19, U, 0, U, 0, 0},
        {"expandable_segments:", VRAM_E_FORMAT, 20, U, 0, U, 0, 0},
        {"expandable_segments True", VRAM_E_FORMAT, 24, U, 0, U, 0, 0}, /* one key, no ':' */
        {"expandable_segments:True,", VRAM_OK, 0, Y, 0, U, 1, 0},
        {",expandable_segments:True", VRAM_E_FORMAT, 0, U, 0, U, 0, 0},
        {"expandable_segments:True,,max_split_size_mb:1", VRAM_E_FORMAT, 25, Y, 0, U, 1, 0},
        {"expandable_segments:True;max_split_size_mb:1", VRAM_E_FORMAT, 20, U, 0, U, 0, 0},
        {"expandable_segments:True max_split_size_mb:1", VRAM_E_FORMAT, 20, U, 0, U, 0, 0},
        {"some_new_option:7,expandable_segments:True", VRAM_OK, 0, Y, 0, U, 2, 1},
        {"new_list:[a,b],backend:cudaMallocAsync", VRAM_OK, 0, U, 1, U, 2, 1},
        {"pinned_use_cuda_host_register:True,pinned_num_register_threads:8", VRAM_OK, 0, U, 0, Y, 2, 0},
        {"expandable_segments:True,expandable_segments:False", VRAM_OK, 0, N, 0, U, 2, 0},
        {"roundup_power2_divisions:[64:8", VRAM_E_FORMAT, 30, U, 0, U, 0, 0},
        {"backend:[native]", VRAM_E_FORMAT, 8, U, 0, U, 0, 0},
        {"release_lock_on_cudamalloc:maybe", VRAM_E_FORMAT, 27, U, 0, U, 0, 0},
        {":True", VRAM_E_FORMAT, 0, U, 0, U, 0, 0},
        {"", VRAM_OK, 0, U, 0, U, 0, 0},
        {"   ", VRAM_OK, 0, U, 0, U, 0, 0},
    };
    return cr_make_param_array(conf_case, cases, sizeof cases / sizeof cases[0]);
}
#undef U
#undef Y
#undef N

ParameterizedTest(conf_case *c, diagnose_conf, parse) {
    vram_alloc_conf a;
    memset(&a, 0x5A, sizeof a);
    vram_status st = vram_alloc_conf_parse(c->text, &a);
    cr_expect_eq(st, c->st, "'%s': %s", c->text, vram_status_name(st));
    cr_expect_eq(a.valid, c->st == VRAM_OK, "'%s'", c->text);
    if (c->st != VRAM_OK) cr_expect_eq(a.error_at, c->error_at, "'%s' error_at %zu", c->text, a.error_at);
    cr_expect_eq(a.expandable_segments, c->expandable, "'%s' expandable %d", c->text, (int)a.expandable_segments);
    cr_expect_eq(a.backend_async, c->async, "'%s'", c->text);
    cr_expect_eq(a.pinned_host_register, c->hostreg, "'%s'", c->text);
    cr_expect_eq(a.pairs, c->pairs, "'%s' pairs %d", c->text, a.pairs);
    cr_expect_eq(a.unknown_keys, c->unknown, "'%s' unknown %d", c->text, a.unknown_keys);
}

Test(diagnose_conf, unset_and_null_out) {
    vram_alloc_conf a;
    cr_expect_eq(vram_alloc_conf_parse(NULL, &a), VRAM_OK);
    cr_expect(a.valid && a.expandable_segments == VRAM_UNKNOWN && !a.backend_async && a.pairs == 0);
    cr_expect_eq(vram_alloc_conf_parse("expandable_segments:True", NULL), VRAM_E_INVALID);
}

/* ---- LD_LIBRARY_PATH, names, platforms --------------------------------------------- */

Test(diagnose_platform, forward_compat_on_the_library_path) {
    size_t at = 99;
    cr_expect_eq(vram_diag_compat_on_path("/usr/local/cuda-12.4/compat:/usr/lib", &at), 1);
    cr_expect_eq(at, 0);
    cr_expect_eq(vram_diag_compat_on_path("/usr/lib:/opt/cuda-compat/lib", &at), 1);
    cr_expect_eq(at, 9);
    cr_expect_eq(vram_diag_compat_on_path("/a;/usr/local/cuda/compat/", &at), 1);
    cr_expect_eq(at, 3);
    cr_expect_eq(vram_diag_compat_on_path("compat", NULL), 1);
    cr_expect_eq(vram_diag_compat_on_path("/usr/lib/compatibility:/x/mycompat", NULL), 0);
    cr_expect_eq(vram_diag_compat_on_path("/usr/lib64::", NULL), 0);
    cr_expect_eq(vram_diag_compat_on_path("", NULL), 0);
    cr_expect_eq(vram_diag_compat_on_path(NULL, NULL), 0);
}

Test(diagnose, forward_compat_on_a_geforce_is_an_error) {
    start(1);
    vram_mock_set_name(&m, 0, "NVIDIA GeForce RTX 4090");
    take();
    facts.ld_library_path = "/usr/lib/x86_64-linux-gnu:/usr/local/cuda-13.0/compat";
    diagnose();
    expect_ev(must(VRAM_FINDING_FORWARD_COMPAT_UNSUPPORTED, -1), 0, 0, 26, 0);
    cr_expect_null(find(VRAM_FINDING_FORWARD_COMPAT_IN_USE, -1));
    vram_mock_fini(&m, NULL);
    /* on a data-centre GPU the same path is only noted */
    start(1);
    take();
    facts.ld_library_path = "/usr/local/cuda-13.0/compat";
    diagnose();
    expect_ev(must(VRAM_FINDING_FORWARD_COMPAT_IN_USE, -1), 0, 0, 0, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    vram_mock_fini(&m, NULL);
    /* error 804 says it whatever the path */
    start(1);
    vram_mock_fail_nth(&m, VRAM_MOCK_OP_DEVICE_COUNT, 1, 804);
    take();
    diagnose();
    expect_ev(must(VRAM_FINDING_FORWARD_COMPAT_UNSUPPORTED, -1), 804, -1, -1, 0);
    cr_expect_null(find(VRAM_FINDING_SNAPSHOT_FAILED, -1));
    finish();
}

Test(diagnose_platform, vgpu_and_consumer_names) {
    const char *vgpu[] = {"NVIDIA A40-48C", "NVIDIA L40S-48C", "GRID T4-16Q", "NVIDIA A100-4-20C",
                          "NVIDIA A16-1B", "NVIDIA A10-24A ", "GRID V100-8Q"};
    const char *not_vgpu[] = {"NVIDIA A100-SXM4-40GB", "Tesla V100-SXM2-16GB", "NVIDIA H100 80GB HBM3",
                              "NVIDIA GeForce RTX 4090", "Mock H100", "X-1234C", "-8C", "A-C", "", "GRID"};
    for (size_t i = 0; i < sizeof vgpu / sizeof vgpu[0]; i++)
        cr_expect(vram_diag_is_vgpu_name(vgpu[i]), "'%s'", vgpu[i]);
    for (size_t i = 0; i < sizeof not_vgpu / sizeof not_vgpu[0]; i++)
        cr_expect(!vram_diag_is_vgpu_name(not_vgpu[i]), "'%s'", not_vgpu[i]);
    cr_expect(!vram_diag_is_vgpu_name(NULL));
    cr_expect(vram_diag_is_consumer_name("NVIDIA GeForce GTX 1080 Ti"));
    cr_expect(vram_diag_is_consumer_name("NVIDIA TITAN RTX"));
    cr_expect(!vram_diag_is_consumer_name("NVIDIA RTX A6000"));
    cr_expect(!vram_diag_is_consumer_name("NVIDIA H200"));
    cr_expect(!vram_diag_is_consumer_name(NULL));
}

Test(diagnose, jetson_and_vgpu_flags) {
    start(1);
    m.dev[0].info.integrated = 1;
    take();
    diagnose();
    expect_ev(must(VRAM_FINDING_PLATFORM_JETSON, -1), 0, 0, 0, 0);
    /* the flag alone (the release file found) names no GPU */
    vram_mock_fini(&m, NULL);
    start(1);
    take();
    facts.jetson = 1;
    facts.vgpu = 1;
    diagnose();
    expect_ev(must(VRAM_FINDING_PLATFORM_JETSON, -1), -1, 0, 0, 0);
    expect_ev(must(VRAM_FINDING_PLATFORM_VGPU, -1), -1, 0, 0, 0);
    /* on such a platform, expandable segments without a VMM probe are unverified */
    facts.alloc_conf = "expandable_segments:True";
    diagnose();
    must(VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED, 0);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 0);
    finish();
}

/* ---- order and the caller's array --------------------------------------------------- */

/* A machine with findings of every severity on two GPUs. */
static void busy_machine(void) {
    start(2);
    vram_mock_set_name(&m, 1, "NVIDIA A40-48C");
    vram_mock_set_attr(&m, 1, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
    vram_mock_set_attr(&m, 1, VRAM_ATTR_MEMORY_POOLS_SUPPORTED, 0);
    vram_mock_set_attr(&m, 0, VRAM_ATTR_MEMORY_POOLS_SUPPORTED, 0);
    vram_mock_set_memory(&m, 0, 80 * GiB, 10 * GiB);
    m.dev[0].info.compute_mode = VRAM_COMPUTE_EXCLUSIVE_PROCESS;
    take();
    facts.alloc_conf = "expandable_segments:True,backend:cudaMallocAsync";
    facts.cuda_launch_blocking = "1";
    facts.wsl2 = 1;
    facts.model_bytes = 100 * GiB;
}

Test(diagnose_order, most_severe_first_then_table_order_then_device) {
    busy_machine();
    diagnose();
    cr_assert_geq(nout, 8);
    for (size_t i = 1; i < nout; i++) {
        const vram_finding *a = &out[i - 1], *b = &out[i];
        cr_expect_geq(a->severity, b->severity, "finding %zu", i);
        if (a->severity == b->severity) {
            cr_expect_leq(a->id, b->id, "finding %zu", i);
            if (a->id == b->id) cr_expect_leq(a->device, b->device);
        }
    }
    /* by hand: the errors, in table order */
    cr_expect_eq(out[0].id, VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM);
    cr_expect_eq(out[0].device, 1);
    cr_expect_eq(out[1].id, VRAM_FINDING_ASYNC_ALLOC_NO_POOLS);
    cr_expect_eq(out[1].device, 0);
    cr_expect_eq(out[2].id, VRAM_FINDING_ASYNC_ALLOC_NO_POOLS);
    cr_expect_eq(out[2].device, 1);
    cr_expect_eq(out[3].id, VRAM_FINDING_MODEL_DOES_NOT_FIT);
    cr_expect_eq(count_sev(VRAM_SEV_ERROR), 4);
    cr_expect_eq(out[4].severity, VRAM_SEV_WARNING);
    cr_expect_eq(out[nout - 1].severity, VRAM_SEV_INFO);
    cr_expect_eq(vram_findings_worst(out, nout), VRAM_SEV_ERROR);
    cr_expect_eq(vram_findings_worst(out + 4, nout - 4), VRAM_SEV_WARNING);
    cr_expect_eq(vram_findings_worst(NULL, 3), VRAM_SEV_NONE);
    finish();
}

Test(diagnose_order, too_small_array_keeps_the_most_severe) {
    busy_machine();
    static vram_finding all[VRAM_DIAG_MAX_FINDINGS];
    size_t n_all = 0, t_all = 0;
    cr_assert_eq(vram_diagnose(&facts, all, VRAM_DIAG_MAX_FINDINGS, &n_all, &t_all), VRAM_OK);
    cr_assert_geq(n_all, 5);
    for (size_t cap = 0; cap < n_all; cap++) {
        memset(out, 0xEE, sizeof out);
        size_t n = 77, t = 77;
        vram_status st = vram_diagnose(&facts, cap ? out : NULL, cap, &n, &t);
        cr_expect_eq(st, VRAM_E_BUFFER, "cap %zu", cap);
        cr_expect_eq(n, cap);
        cr_expect_eq(t, n_all);
        for (size_t i = 0; i < cap; i++) {
            cr_expect_eq(out[i].id, all[i].id, "cap %zu entry %zu", cap, i);
            cr_expect_eq(out[i].device, all[i].device, "cap %zu entry %zu", cap, i);
            cr_expect_eq(memcmp(out[i].ev, all[i].ev, sizeof out[i].ev), 0);
        }
        /* nothing written past cap */
        const unsigned char *p = (const unsigned char *)&out[cap];
        for (size_t b = 0; b < sizeof out[0]; b++) cr_assert_eq(p[b], 0xEE, "cap %zu byte %zu", cap, b);
    }
    /* exactly enough is OK */
    size_t n = 0;
    cr_expect_eq(vram_diagnose(&facts, out, n_all, &n, NULL), VRAM_OK);
    cr_expect_eq(n, n_all);
    finish();
}

Test(diagnose_order, bad_arguments) {
    start(1);
    take();
    size_t n = 5;
    cr_expect_eq(vram_diagnose(NULL, out, 4, &n, NULL), VRAM_E_INVALID);
    cr_expect_eq(vram_diagnose(&facts, NULL, 4, &n, NULL), VRAM_E_INVALID);
    cr_expect_eq(vram_diagnose(&facts, out, 4, NULL, NULL), VRAM_E_INVALID);
    cr_expect_eq(n, 5, "nothing written");
    vram_diag_facts nosnap;
    vram_diag_facts_init(&nosnap, NULL);
    cr_expect_eq(vram_diagnose(&nosnap, out, 4, &n, NULL), VRAM_E_INVALID);
    cr_expect_eq(vram_diag_usable_gpus(&nosnap), 0);
    /* a clean machine with no room at all is fine: nothing to hold */
    cr_expect_eq(vram_diagnose(&facts, NULL, 0, &n, NULL), VRAM_OK);
    cr_expect_eq(n, 0);
    finish();
}
