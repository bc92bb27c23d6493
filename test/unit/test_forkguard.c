/* test_forkguard.c — the fork guard (driver/cuda/forkguard.h) over the mocked device: after a
 * (mocked) CUDA initialisation, a forked child gets VRAM_E_FORKED from every slot of the
 * guarded table without the inner table being called, and reports back through its exit
 * code; without an initialisation, or in the parent, every call goes through. Each
 * Criterion test runs in a process of its own, so the process-wide flags start clear. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda/forkguard.h"
#include "mock_device.h"

/* Calls every slot of the table. Returns 0 when each returned `want` (for the slots that
 * can return it), else the 1-based number of the first slot that did not. */
static int call_every_slot(const vram_device_ops *t, vram_status want) {
    int v = 0, slot = 0;
    uint64_t a = 0, b = 0;
    vram_device_info info;
    void *p = NULL;
    vram_stream s = NULL;
    vram_event e = NULL;
    static char host[64];
#define EXPECT(call)             \
    do {                         \
        slot++;                  \
        if ((call) != want) return slot; \
    } while (0)
    EXPECT(t->driver_version(t->ctx, &v));
    EXPECT(t->runtime_version(t->ctx, &v));
    EXPECT(t->device_count(t->ctx, &v));
    EXPECT(t->device_info(t->ctx, 0, &info));
    EXPECT(t->mem_info(t->ctx, 0, &a, &b));
    EXPECT(t->attribute(t->ctx, 0, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &v));
    EXPECT(t->set_device(t->ctx, 0));
    EXPECT(t->dev_alloc(t->ctx, 0, 4096, &p));
    EXPECT(t->memcpy_async(t->ctx, p, host, sizeof host, VRAM_COPY_H2D, NULL));
    EXPECT(t->dev_free(t->ctx, 0, p));
    EXPECT(t->host_alloc_pinned(t->ctx, 4096, &p));
    EXPECT(t->host_free_pinned(t->ctx, p));
    EXPECT(t->host_register(t->ctx, host, sizeof host));
    EXPECT(t->host_unregister(t->ctx, host));
    EXPECT(t->stream_create(t->ctx, 0, &s));
    EXPECT(t->event_create(t->ctx, &e));
    EXPECT(t->event_record(t->ctx, e, s));
    EXPECT(t->stream_wait_event(t->ctx, s, e));
    EXPECT(t->event_query(t->ctx, e));
    EXPECT(t->event_sync(t->ctx, e));
    EXPECT(t->stream_sync(t->ctx, s));
    EXPECT(t->event_destroy(t->ctx, e));
    EXPECT(t->stream_destroy(t->ctx, s));
    EXPECT(t->release_device(t->ctx, 0));
#undef EXPECT
    return 0;
}

/* Forks; the child runs `body` and exits with its result. Returns the child's exit code. */
static int in_child(int (*body)(void *), void *arg) {
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) _exit(body(arg));
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return WEXITSTATUS(status);
}

typedef struct fixture {
    vram_mock mock;
    vram_device_ops inner, guarded;
    vram_fork_guarded g;
} fixture;

static void setup(fixture *f) {
    vram_mock_init(&f->mock, 1);
    f->inner = vram_mock_ops(&f->mock);
    cr_assert_eq(vram_fork_guard_wrap(&f->inner, &f->g, &f->guarded), VRAM_OK);
    cr_assert_eq(vram_device_ops_check(&f->guarded), VRAM_OK);
    cr_assert_str_eq(f->guarded.backend, "mock");
    cr_assert_eq(f->guarded.flags, f->inner.flags, "the flags are the inner table's");
}

/* In a child after an initialisation: every slot says FORKED, the mock is never called. */
static int forked_child(void *arg) {
    fixture *f = (fixture *)arg;
    uint64_t before = f->mock.total_calls;
    if (!vram_fork_guard_tripped()) return 100;
    if (vram_fork_guard_check() != VRAM_E_FORKED) return 101;
    int slot = call_every_slot(&f->guarded, VRAM_E_FORKED);
    if (slot) return slot;
    if (f->guarded.last_error(f->guarded.ctx) != VRAM_FORK_GUARD_CUDA_CODE) return 102;
    if (f->mock.total_calls != before) return 103; /* the inner table was not touched */
    return 0;
}

static int grandchild_too(void *arg) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 110;
    if (pid == 0) _exit(forked_child(arg));
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 111;
    return WEXITSTATUS(status);
}

/* In a child without an initialisation: every call works as in the parent. */
static int clean_child(void *arg) {
    fixture *f = (fixture *)arg;
    if (vram_fork_guard_tripped()) return 100;
    if (vram_fork_guard_check() != VRAM_OK) return 101;
    int slot = call_every_slot(&f->guarded, VRAM_OK);
    if (slot) return slot;
    if (f->guarded.last_error(f->guarded.ctx) != 0) return 102;
    return 0;
}

Test(forkguard, child_after_init_gets_forked_status) {
    fixture f;
    setup(&f);
    cr_assert_eq(call_every_slot(&f.guarded, VRAM_OK), 0, "before the fork the table works");
    cr_assert_eq(vram_fork_guard_note_init(), VRAM_OK);
    int rc = in_child(forked_child, &f);
    cr_expect_eq(rc, 0, "child: slot %d did not return VRAM_E_FORKED (100+: see forked_child)", rc);
    cr_expect_eq(in_child(grandchild_too, &f), 0, "a fork of the fork is guarded too");
    /* the parent itself is not affected */
    cr_expect_eq(vram_fork_guard_tripped(), 0);
    cr_expect_eq(call_every_slot(&f.guarded, VRAM_OK), 0);
    cr_expect_eq(vram_mock_fini(&f.mock, stderr), 0);
}

Test(forkguard, child_without_init_works) {
    fixture f;
    setup(&f);
    int rc = in_child(clean_child, &f);
    cr_expect_eq(rc, 0, "child: slot %d failed", rc);
    cr_expect_eq(vram_mock_fini(&f.mock, stderr), 0);
}

Test(forkguard, init_after_the_fork_is_fine) {
    /* the remedy the message gives: fork first, initialise in the child */
    fixture f;
    setup(&f);
    cr_expect_eq(in_child(clean_child, &f), 0);
    cr_assert_eq(vram_fork_guard_note_init(), VRAM_OK);
    cr_expect_eq(vram_fork_guard_tripped(), 0);
    cr_expect_eq(vram_mock_fini(&f.mock, stderr), 0);
}

Test(forkguard, status_text_names_the_remedy) {
    const char *t = vram_status_str(VRAM_E_FORKED);
    cr_expect(strstr(t, "fork") && strstr(t, "spawn/exec") && strstr(t, "after the fork"), "%s", t);
    cr_expect_str_eq(vram_status_name(VRAM_E_FORKED), "VRAM_E_FORKED");
}

Test(forkguard, install_is_idempotent) {
    cr_expect_eq(vram_fork_guard_install(), VRAM_OK);
    cr_expect_eq(vram_fork_guard_install(), VRAM_OK);
    cr_expect_eq(vram_fork_guard_note_init(), VRAM_OK);
    cr_expect_eq(vram_fork_guard_note_init(), VRAM_OK);
    cr_expect_eq(vram_fork_guard_tripped(), 0);
}

Test(forkguard, wrap_refuses_bad_tables) {
    vram_mock m;
    vram_fork_guarded g;
    vram_device_ops out, t;
    vram_mock_init(&m, 1);
    memset(&out, 0x77, sizeof out);
    vram_device_ops untouched = out;
    cr_expect_eq(vram_fork_guard_wrap(NULL, &g, &out), VRAM_E_INVALID);
    t = vram_mock_ops(&m);
    t.api_version = VRAM_DEVICE_API_VERSION + 1;
    cr_expect_eq(vram_fork_guard_wrap(&t, &g, &out), VRAM_E_VERSION);
    t = vram_mock_ops(&m);
    t.dev_alloc = NULL;
    cr_expect_eq(vram_fork_guard_wrap(&t, &g, &out), VRAM_E_INVALID);
    cr_expect(memcmp(&out, &untouched, sizeof out) == 0, "a refused wrap writes nothing");
    t = vram_mock_ops(&m);
    cr_expect_eq(vram_fork_guard_wrap(&t, NULL, &out), VRAM_E_INVALID);
    cr_expect_eq(vram_fork_guard_wrap(&t, &g, NULL), VRAM_E_INVALID);
    cr_expect_eq(vram_mock_fini(&m, stderr), 0);
}

Test(forkguard, errors_pass_through) {
    /* the guard changes nothing about the inner table's own failures */
    fixture f;
    setup(&f);
    vram_mock_alloc_limit(&f.mock, 0, 1024);
    void *p = NULL;
    cr_expect_eq(f.guarded.dev_alloc(f.guarded.ctx, 0, 4096, &p), VRAM_E_OOM);
    cr_expect_eq(f.guarded.last_error(f.guarded.ctx), 2);
    cr_expect_eq(vram_mock_fini(&f.mock, stderr), 0);
}
