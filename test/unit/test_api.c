/* The flat C API (driver/api/api.h) that the Python package loads, called as ctypes does. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../driver/api/api.h"

/* What a caller's earlier calls leave on the stack: words that are neither NULL nor a valid
 * "NAME=value" (the pytest process on the GPU machine, after its CUDA tests, left such words
 * where vram_api_try kept its "env" list when the options had none). noinline, so its frame
 * lies where the next call's will. */
static const char not_an_env[] = "no-equals-sign";
__attribute__((noinline)) static void scribble_stack(void) {
    volatile const char *words[8192];
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) words[i] = not_an_env;
    __asm__ volatile("" : : "r"(words) : "memory");
}

__attribute__((noinline)) static int call_try(const char *options, char **out, char **err) {
    scribble_stack();
    return vram_api_try(options, out, err);
}

Test(api, try_without_env_is_not_what_the_stack_held) {
    /* options without "env": the attempts get the caller's environment and vramkit's variables,
       nothing read from uninitialised memory */
    for (int round = 0; round < 3; round++) {
        char *out = NULL, *err = NULL;
        int rc = call_try("{\"command\": [\"sh\", \"-c\", \"test {strategy} = int8\"], "
                          "\"strategies\": \"fp16,int8\"}",
                          &out, &err);
        cr_assert_eq(rc, 0, "round %d: rc %d, err: %s", round, rc, err ? err : "(none)");
        cr_assert_not_null(out);
        cr_assert(strstr(out, "\"chosen\": \"int8\"") || strstr(out, "\"chosen\":\"int8\""),
                  "round %d: %s", round, out);
        vram_api_free(out);
        vram_api_free(err);
    }
}

Test(api, try_with_env_passes_it_to_each_attempt) {
    char *out = NULL, *err = NULL;
    int rc = call_try("{\"command\": [\"sh\", \"-c\", \"test \\\"$VK_T\\\" = yes\"], "
                      "\"strategies\": \"cpu\", \"env\": [\"VK_T=yes\"]}",
                      &out, &err);
    cr_assert_eq(rc, 0, "rc %d, err: %s", rc, err ? err : "(none)");
    vram_api_free(out);
    vram_api_free(err);
}

Test(api, try_with_a_bad_env_entry_is_a_clear_error) {
    char *out = NULL, *err = NULL;
    int rc = call_try("{\"command\": [\"true\"], \"strategies\": \"cpu\", \"env\": [1]}", &out, &err);
    cr_assert_eq(rc, 2);
    cr_assert_not_null(err);
    cr_assert(strstr(err, "env: give a list of strings") != NULL, "%s", err);
    vram_api_free(out);
    vram_api_free(err);
}
