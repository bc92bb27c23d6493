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
