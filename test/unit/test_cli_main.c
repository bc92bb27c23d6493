/* test_cli_main.c — the `vramkit` entry point: help, version, unknown commands.
 * What a newcomer types first must answer clearly and with the documented exit codes. */
#include <criterion/criterion.h>

#include <vramkit/base.h>

#include "cli_run.h"

Test(cli_main, no_arguments_is_usage_error) {
    const char *args[] = {NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 2);
    cr_assert_str_empty(r.out);
    cr_assert(strstr(r.err, "usage: vramkit <command>") != NULL, "stderr: %s", r.err);
    cli_result_free(&r);
}

Test(cli_main, help_lists_commands_and_exit_codes) {
    const char *forms[] = {"--help", "-h", "help"};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {forms[i], NULL};
        cli_result r = cli_run(args);
        cr_assert_eq(r.exit_code, 0, "%s", forms[i]);
        cr_assert(strstr(r.out, "chunks") != NULL);
        cr_assert(strstr(r.out, "exit codes") != NULL);
        cr_assert_str_empty(r.err);
        cli_result_free(&r);
    }
}

Test(cli_main, version) {
    const char *args[] = {"--version", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0);
    cr_assert_str_eq(r.out, "vramkit " VRAM_VERSION_STRING "\n");
    cli_result_free(&r);
}

Test(cli_main, unknown_command_is_one_line_naming_it) {
    const char *args[] = {"frobnicate", "--x", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 2);
    cr_assert_str_empty(r.out);
    cr_assert_eq(cli_count_lines(r.err), 1, "stderr: %s", r.err);
    cr_assert(strstr(r.err, "frobnicate") != NULL);
    cli_result_free(&r);
}

/* Every command's --help answers in one screen or so (the manual is docs/COMMAND.md, which
 * it names and which is there), with its exit codes. */
Test(cli_main, every_help_is_short_and_names_its_manual) {
    const char *cmds[] = {"plan", "estimate", "chunks", "stream", "try", "run", "doctor", "watch"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *args[] = {cmds[i], "--help", NULL};
        char page[64], path[512];
        cli_result r = cli_run(args);
        int lines = 0;
        cr_assert_eq(r.exit_code, 0, "%s", cmds[i]);
        for (const char *p = r.out; *p; p++) lines += *p == '\n';
        cr_expect(lines <= 70, "%s --help has %d lines", cmds[i], lines);
        cr_expect(strstr(r.out, "exit codes") != NULL, "%s --help lacks its exit codes", cmds[i]);
        snprintf(page, sizeof page, "docs/%s.md", cmds[i]);
        cr_expect(strstr(r.out, page) != NULL, "%s --help does not name %s", cmds[i], page);
        snprintf(path, sizeof path, "%s/%s", VRAMKIT_SOURCE_DIR, page);
        cr_expect(access(path, R_OK) == 0, "%s is missing", path);
        cli_result_free(&r);
    }
}
