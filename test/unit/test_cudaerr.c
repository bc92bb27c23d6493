/* test_cudaerr.c — CUDA error classification (vramkit/cudaerr.h) against the reference.
 * The expected table below is copied by hand from shared/reference/cuda-diagnostics.md, not
 * generated from the header's X-macro, so a wrong or missing row in either one shows up. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <string.h>

#include <vramkit/cudaerr.h>

/* Parameters are copied into the worker process: strings live inside the struct, since a
 * pointer into the runner's address space means nothing there. */
typedef struct cuda_case {
    int code;
    char name[48];
    vram_cuda_class cls;
    vram_status status; /* what vram_status_from_cuda must give */
} cuda_case;

static const cuda_case reference[] = {
    {0, "cudaSuccess", VRAM_CUDA_OK, VRAM_OK},
    /* sticky: the context is corrupt */
    {700, "cudaErrorIllegalAddress", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {702, "cudaErrorLaunchTimeout", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {710, "cudaErrorAssert", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {714, "cudaErrorHardwareStackError", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {715, "cudaErrorIllegalInstruction", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {716, "cudaErrorMisalignedAddress", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {717, "cudaErrorInvalidAddressSpace", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {718, "cudaErrorInvalidPc", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {719, "cudaErrorLaunchFailure", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {721, "cudaErrorTensorMemoryLeak", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {226, "cudaErrorContained", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {911, "cudaErrorExternalDevice", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {810, "cudaErrorMpsClientTerminated", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    /* hardware faults that corrupt the context (not in the reference's table; numbers and
     * meaning from CUDA 13.0's driver_types.h: "an uncorrectable ECC error was detected
     * during execution", "an uncorrectable NVLink error was detected during the execution") */
    {214, "cudaErrorECCUncorrectable", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    {220, "cudaErrorNvlinkUncorrectable", VRAM_CUDA_STICKY, VRAM_E_CUDA_STICKY},
    /* recoverable */
    {2, "cudaErrorMemoryAllocation", VRAM_CUDA_RECOVERABLE, VRAM_E_OOM},
    {701, "cudaErrorLaunchOutOfResources", VRAM_CUDA_RECOVERABLE, VRAM_E_CUDA},
    {801, "cudaErrorNotSupported", VRAM_CUDA_RECOVERABLE, VRAM_E_NOT_SUPPORTED},
    /* setup: fix the installation */
    {35, "cudaErrorInsufficientDriver", VRAM_CUDA_SETUP, VRAM_E_CUDA},
    {36, "cudaErrorCallRequiresNewerDriver", VRAM_CUDA_SETUP, VRAM_E_CUDA},
    {209, "cudaErrorNoKernelImageForDevice", VRAM_CUDA_SETUP, VRAM_E_CUDA},
    {222, "cudaErrorUnsupportedPtxVersion", VRAM_CUDA_SETUP, VRAM_E_CUDA},
    {803, "cudaErrorSystemDriverMismatch", VRAM_CUDA_SETUP, VRAM_E_CUDA},
    {804, "cudaErrorCompatNotSupportedOnDevice", VRAM_CUDA_SETUP, VRAM_E_CUDA},
    {100, "cudaErrorNoDevice", VRAM_CUDA_SETUP, VRAM_E_NO_DEVICE},
};
#define N_REF (sizeof reference / sizeof reference[0])

ParameterizedTestParameters(cudaerr, reference_row) {
    return cr_make_param_array(cuda_case, (cuda_case *)reference, N_REF);
}

ParameterizedTest(cuda_case *c, cudaerr, reference_row) {
    cr_assert_eq(vram_cuda_error_class(c->code), c->cls, "%d %s: class %s", c->code, c->name,
                 vram_cuda_class_name(vram_cuda_error_class(c->code)));
    const char *name = vram_cuda_error_name(c->code);
    cr_assert_not_null(name, "%d has no name", c->code);
    cr_assert_str_eq(name, c->name);
    cr_assert_eq(vram_cuda_error_code(c->name), c->code, "%s does not round-trip", c->name);
    cr_assert_eq(vram_status_from_cuda(c->code), c->status, "%s -> %s", c->name,
                 vram_status_name(vram_status_from_cuda(c->code)));
    const char *remedy = vram_cuda_class_remedy(vram_cuda_error_class(c->code));
    cr_assert_not_null(remedy);
    cr_assert_str_not_empty(remedy);
}

/* Every header row is in the reference: same count, and each header code is found here. */
Test(cudaerr, header_has_no_extra_rows) {
    size_t n = 0;
    int codes[64];
#define COLLECT(c, nm, k) \
    if (n < 64) codes[n] = c; \
    n++;
    VRAM_CUDA_ERROR_LIST(COLLECT)
#undef COLLECT
    cr_assert_eq(n, N_REF, "header lists %zu codes, the reference %zu", n, N_REF);
    for (size_t i = 0; i < n && i < 64; i++) {
        int found = 0;
        for (size_t j = 0; j < N_REF; j++) found |= reference[j].code == codes[i];
        cr_assert(found, "header code %d is not in the reference", codes[i]);
    }
}

Test(cudaerr, reference_codes_are_distinct) {
    for (size_t i = 0; i < N_REF; i++)
        for (size_t j = i + 1; j < N_REF; j++) {
            cr_assert_neq(reference[i].code, reference[j].code);
            cr_assert_str_neq(reference[i].name, reference[j].name);
        }
}

ParameterizedTestParameters(cudaerr, unknown_code) {
    /* 1 InvalidValue, 3 InitializationError, 400 InvalidResourceHandle, 600 NotReady:
     * real codes the table deliberately leaves to "other" */
    static int codes[] = {1, 3, 46, 101, 400, 600, 712, 999, 10000, -1, INT_MIN, INT_MAX};
    return cr_make_param_array(int, codes, sizeof codes / sizeof codes[0]);
}

ParameterizedTest(int *code, cudaerr, unknown_code) {
    cr_assert_eq(vram_cuda_error_class(*code), VRAM_CUDA_OTHER);
    cr_assert_null(vram_cuda_error_name(*code));
    cr_assert_eq(vram_status_from_cuda(*code), VRAM_E_CUDA);
}

typedef struct name_case {
    char name[48];
} name_case;

ParameterizedTestParameters(cudaerr, unknown_name) {
    static name_case names[] = {
        {""},
        {"cudaError"},
        {"cudaErrorIllegal"},          /* a prefix of a real name */
        {"cudaErrorIllegalAddressX"},  /* a real name plus a suffix */
        {"cudaerrorillegaladdress"},   /* names are case-sensitive */
        {" cudaErrorIllegalAddress"},
        {"cudaErrorInvalidValue"},     /* real, but not in the table */
        {"CUDA_ERROR_ILLEGAL_ADDRESS"} /* the driver API spelling */
    };
    return cr_make_param_array(name_case, names, sizeof names / sizeof names[0]);
}

ParameterizedTest(name_case *c, cudaerr, unknown_name) {
    cr_assert_eq(vram_cuda_error_code(c->name), -1, "'%s' was recognised", c->name);
}

Test(cudaerr, null_name) { cr_assert_eq(vram_cuda_error_code(NULL), -1); }

Test(cudaerr, class_names_and_remedies) {
    static const struct {
        vram_cuda_class k;
        const char *name;
    } classes[] = {{VRAM_CUDA_OK, "ok"},
                   {VRAM_CUDA_STICKY, "sticky"},
                   {VRAM_CUDA_RECOVERABLE, "recoverable"},
                   {VRAM_CUDA_SETUP, "setup"},
                   {VRAM_CUDA_OTHER, "other"}};
    size_t n = sizeof classes / sizeof classes[0];
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(vram_cuda_class_name(classes[i].k), classes[i].name);
        const char *r = vram_cuda_class_remedy(classes[i].k);
        cr_assert_not_null(r);
        cr_assert_str_not_empty(r);
        cr_assert_null(strchr(r, '\n'));
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(r, vram_cuda_class_remedy(classes[j].k),
                              "classes %s and %s share a remedy", classes[i].name,
                              classes[j].name);
    }
    /* a value outside the enum still gets text, never NULL */
    cr_assert_str_eq(vram_cuda_class_name((vram_cuda_class)42), "other");
    cr_assert_str_not_empty(vram_cuda_class_remedy((vram_cuda_class)42));
}

Test(cudaerr, sticky_remedy_says_end_the_process) {
    /* the one remedy whose meaning matters to the isolation code: never retry in-process */
    const char *r = vram_cuda_class_remedy(VRAM_CUDA_STICKY);
    cr_assert_not_null(strstr(r, "never retry in-process"), "%s", r);
}

/* The verdict the driver's and the kernels' checks both follow: success does nothing, "not
 * ready" is an answer (cleared from the runtime's slot, never recorded), a sticky code retires
 * the context and cannot be cleared, every other failure is recorded and cleared. */
Test(cudaerr, verdict_of_every_kind_of_code) {
    vram_cuda_verdict v = vram_cuda_verdict_of(0);
    cr_assert(v.status == VRAM_OK && v.cls == VRAM_CUDA_OK && !v.record && !v.clear && !v.retire);
    v = vram_cuda_verdict_of(VRAM_CUDA_NOT_READY);
    cr_assert_eq(VRAM_CUDA_NOT_READY, 600);
    cr_assert(v.status == VRAM_E_NOT_READY && v.cls == VRAM_CUDA_OK && !v.record && v.clear && !v.retire);
    for (size_t i = 0; i < N_REF; i++) {
        const cuda_case *c = &reference[i];
        if (c->code == 0) continue;
        v = vram_cuda_verdict_of(c->code);
        cr_assert_eq(v.status, c->status, "%s", c->name);
        cr_assert_eq(v.cls, c->cls, "%s", c->name);
        cr_assert_eq(v.record, 1, "%s", c->name);
        cr_assert_eq(v.retire, c->cls == VRAM_CUDA_STICKY, "%s", c->name);
        cr_assert_eq(v.clear, c->cls != VRAM_CUDA_STICKY, "%s", c->name);
    }
    const int unknown[] = {1, 46, 101, 999, -3, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        v = vram_cuda_verdict_of(unknown[i]);
        cr_assert(v.status == VRAM_E_CUDA && v.cls == VRAM_CUDA_OTHER && v.record && v.clear && !v.retire,
                  "code %d", unknown[i]);
    }
}
