/* `vramkit chunks` as a user runs it: the built binary with good plans (text and JSON,
 * the JSON parsed and its numbers checked), every kind of bad input (exit 2, one line on
 * stderr naming the option, nothing on stdout), a budget too small (exit 1 with both
 * numbers), and --help. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "json_check.h"

/* ---- running the binary -------------------------------------------------------------- */

/* 004: 51,779 samples of 360 x 167 x 4 + 36 x 4 bytes, batch 128, 12 GiB in two buffers. */
#define ARGS_004 "--samples", "51779", "--sample-bytes", "240624", "--batch", "128", \
                 "--budget", "12GiB"

static void expect_clean_success(const cli_result *r) {
    cr_assert_eq(r->signal, 0);
    cr_assert_eq(r->exit_code, 0, "exit %d, stderr: %s", r->exit_code, r->err);
    cr_assert_str_empty(r->err);
    cr_assert_not_null(r->out);
}

Test(cli_chunks, help_explains_everything) {
    const char *args[] = {"chunks", "--help", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    const char *must[] = {"--samples", "--sample-bytes", "--batch", "--budget", "--free",
                          "--fraction", "--reserve", "--buffers", "--drop-last", "--world",
                          "--rank", "--pad", "--no-pad", "--shuffle", "--seed", "--epoch",
                          "--json", "default 0.75", "default 2", "exit codes", "0 planned",
                          "1 a batch does not fit", "2 bad usage", "3 environment",
                          "docs/chunks.md"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_assert(strstr(r.out, must[i]), "--help does not mention '%s'", must[i]);
    cli_result_free(&r);
}

Test(cli_chunks, text_plan_of_report_004) {
    const char *args[] = {"chunks", ARGS_004, NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    const char *must[] = {"51779 samples", "batch 128", "12.00 GiB in 2 buffers",
                          "6.00 GiB per buffer", "2 of up to 26752 samples", "405",
                          "the last of 67 samples", "[0, 26752)", "[26752, 51779)",
                          "209: [0, 128) [128, 256) ... [26624, 26752)",
                          "196: [26752, 26880)", "[51712, 51779)", "shuffle         off"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_assert(strstr(r.out, must[i]), "text plan lacks '%s':\n%s", must[i], r.out);
    cli_result_free(&r);
}

Test(cli_chunks, json_plan_of_report_004) {
    const char *args[] = {"chunks", ARGS_004, "--json", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    cJSON *doc = jparse(r.out);
    cr_assert_eq(cli_count_lines(r.out), 1);
    cr_assert_eq(jcount(doc, "samples_per_chunk"), 26752);
    cr_assert_eq(jcount(doc, "chunk_count"), 2);
    cr_assert_eq(jcount(doc, "total_samples"), 51779);
    cr_assert_eq(jcount(doc, "total_batches"), 405);
    cr_assert_eq(jcount(doc, "budget_bytes"), UINT64_C(12884901888));
    cr_assert_eq(jcount(doc, "bytes_per_chunk"), UINT64_C(6437173248));
    cr_assert_eq(jcount(doc, "buffer_bytes"), UINT64_C(6442450944));
    cr_assert_eq(jcount(doc, "needed_bytes"), 2 * 128 * UINT64_C(240624));
    cr_assert_eq(jcount(doc, "total_bytes"), UINT64_C(12459270096));
    cr_assert_eq(jcount(doc, "last_batch_samples"), 67);
    cr_assert_eq(jcount(doc, "rank_start"), 0);
    cr_assert_eq(jcount(doc, "rank_end"), 51779);
    cr_assert(cJSON_IsFalse(jget(doc, "shuffle")));
    const cJSON *chunks = jarr(doc, "chunks"), *ch;
    cr_assert_eq(cJSON_GetArraySize(chunks), 2);
    uint64_t next = 0, batches = 0, i = 0;
    cJSON_ArrayForEach(ch, chunks) {
        cr_assert_eq(jcount(ch, "index"), i++);
        cr_assert_eq(jcount(ch, "start"), next);
        const cJSON *bs = jarr(ch, "batches"), *b;
        uint64_t pos = next;
        cJSON_ArrayForEach(b, bs) {
            cr_assert(cJSON_IsArray(b) && cJSON_GetArraySize(b) == 2);
            cr_assert_eq(jcount_at(b, 0), pos);
            cr_assert_leq(jcount_at(b, 1) - jcount_at(b, 0), 128);
            pos = jcount_at(b, 1);
        }
        cr_assert_eq(pos, jcount(ch, "end"));
        cr_assert_null(cJSON_GetObjectItemCaseSensitive(ch, "order"));
        batches += (uint64_t)cJSON_GetArraySize(bs);
        next = jcount(ch, "end");
    }
    cr_assert_eq(next, 51779);
    cr_assert_eq(batches, 405);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_chunks, json_shuffled_sharded_plan_has_orders) {
    const char *args[] = {"chunks", "--samples", "1000", "--sample-bytes", "1KiB", "--batch",
                          "16", "--free", "400KiB", "--reserve", "100KiB", "--fraction", "50%",
                          "--world", "3", "--rank", "2", "--shuffle", "--seed", "7", "--epoch",
                          "2", "--drop-last", "--json", NULL};
    cli_result r = cli_run(args);
    static unsigned char seen[1002];
    expect_clean_success(&r);
    cJSON *doc = jparse(r.out);
    /* 0.5 x 300 KiB = 150 KiB in two buffers: 75 rows -> 64 per chunk; 334 per rank */
    cr_assert_eq(jcount(doc, "budget_bytes"), 150 * 1024);
    cr_assert_eq(jcount(doc, "samples_per_chunk"), 64);
    cr_assert_eq(jcount(doc, "rank_samples"), 334);
    cr_assert_eq(jcount(doc, "rank_start"), 668);
    cr_assert_eq(jcount(doc, "rank_end"), 1002);
    cr_assert_eq(jcount(doc, "padded_samples"), 2);
    cr_assert_eq(jcount(doc, "total_batches"), 20);
    cr_assert_eq(jcount(doc, "dropped_last"), 14);
    const cJSON *order = jarr(doc, "chunk_order");
    const cJSON *chunks = jarr(doc, "chunks"), *ch;
    cr_assert_eq((uint64_t)cJSON_GetArraySize(order), jcount(doc, "chunk_count"));
    cr_assert_eq(cJSON_GetArraySize(chunks), cJSON_GetArraySize(order));
    memset(seen, 0, sizeof seen);
    int k = 0;
    cJSON_ArrayForEach(ch, chunks) {
        cr_assert_eq(jcount(ch, "index"), jcount_at(order, k++), "chunks not in visiting order");
        uint64_t start = jcount(ch, "start"), end = jcount(ch, "end");
        const cJSON *o = jarr(ch, "order");
        cr_assert_eq((uint64_t)cJSON_GetArraySize(o), end - start);
        for (int q = 0; q < cJSON_GetArraySize(o); q++) {
            uint64_t p = jcount_at(o, q);
            cr_assert(p >= start && p < end && !seen[p], "order is not a permutation");
            seen[p] = 1;
        }
        int samples = cJSON_GetArraySize(jarr(ch, "samples"));
        cr_assert(samples == 1 || samples == 2);
    }
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_chunks, text_elides_huge_plans) {
    const char *args[] = {"chunks", "--samples", "100000", "--sample-bytes", "4", "--batch",
                          "10", "--budget", "800", "--shuffle", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "chunks not shown (--json lists all)"), "%s", r.out);
    cr_assert(strstr(r.out, "984 chunks not shown"), "%s", r.out);
    cr_assert(strstr(r.out, "order:"), "%s", r.out);
    cr_assert_lt(cli_count_lines(r.out), 60);
    cli_result_free(&r);
}

/* ---- bad input ----------------------------------------------------------------------- */

/* Arrays, not pointers: Criterion hands parameters to a fresh worker process, where the
 * parent's pointers mean nothing. An empty string ends the argument list. */
struct bad_case {
    char args[16][40];
    int exit_code;
    char names[96]; /* text the one stderr line must contain */
};

ParameterizedTestParameters(cli_chunks, bad_input) {
    static struct bad_case cases[] = {
        {{"chunks", ""}, 2, "--samples"},
        {{"chunks", "--samples", "10", "--batch", "2", "--budget", "1GiB", ""}, 2,
         "--sample-bytes"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--budget", "1GiB", ""}, 2,
         "--batch"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", ""}, 2,
         "--budget"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--frobnicate", ""}, 2, "--frobnicate"},
        {{"chunks", "--samples", "10", "--sample-bytes", "12XB", "--batch", "2", "--budget",
          "1GiB", ""}, 2, "--sample-bytes: '12XB'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "12XB",
          ""}, 2, "--budget: '12XB'"},
        {{"chunks", "--samples", "-5", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--samples: '-5' is negative"},
        {{"chunks", "--samples", "10", "--sample-bytes", "-4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--sample-bytes: '-4' is negative"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "0", "--budget", "1GiB",
          ""}, 2, "--batch"},
        {{"chunks", "--samples", "0", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--samples"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "0",
          ""}, 2, "--budget"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--world", "2", "--rank", "2", ""}, 2, "--rank 2 is not below --world 2"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--rank", "1", ""}, 2, "--rank 1 is not below --world 1"},
        {{"chunks", "--samples", "ten", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          ""}, 2, "--samples: 'ten'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2.5", "--budget",
          "1GiB", ""}, 2, "--batch: '2.5'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--world", "x", ""}, 2, "--world: 'x'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--buffers", "0", ""}, 2, "--buffers"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--seed", "-1", "--shuffle", ""}, 2, "--seed"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--free", "1GiB",
          "--fraction", "1.5", ""}, 2, "--fraction: '1.5'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--free", "1GiB",
          "--fraction", "0", ""}, 2, "--fraction: '0'"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--fraction", "0.5", ""}, 2, "--fraction"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--reserve", "1MiB", ""}, 2, "--reserve"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "--free", "2GiB", ""}, 2, "--budget or --free"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--free", "1GiB",
          "--reserve", "2GiB", ""}, 2, "--reserve"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "1GiB",
          "stray", ""}, 2, "'stray'"},
        {{"chunks", "--samples", ""}, 2, "'--samples' needs a value"},
        {{"chunks", "--samples", "18446744073709551615", "--sample-bytes", "2", "--batch", "1",
          "--budget", "1GiB", ""}, 2, "overflows"},
        {{"chunks", "--samples", "18446744073709551616", "--sample-bytes", "2", "--batch", "1",
          "--budget", "1GiB", ""}, 2, "--samples"},
        {{"chunks", "--samples", "3", "--sample-bytes", "4", "--batch", "1", "--budget", "1GiB",
          "--world", "4", "--no-pad", ""}, 2, "--no-pad"},
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "20", "--budget", "1GiB",
          "--drop-last", ""}, 2, "--drop-last"},
        /* does not fit: exit 1 with what is needed and what there is */
        {{"chunks", "--samples", "10", "--sample-bytes", "4", "--batch", "2", "--budget", "15",
          ""}, 1, "needs 2 x 8 B = 16 B (16 bytes), the budget is 15 B (15 bytes)"},
        {{"chunks", ARGS_004, "--budget", "50MiB", ""}, 1,
         "(61599744 bytes), the budget is 50.00 MiB (52428800 bytes)"},
        {{"chunks", "--samples", "10", "--sample-bytes", "1MiB", "--batch", "4", "--free",
          "8MiB", "--reserve", "2MiB", ""}, 1, "(8388608 bytes), the budget is 4.50 MiB"},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, cli_chunks, bad_input) {
    const char *args[17];
    int n = 0;
    while (n < 16 && c->args[n][0] != '\0') {
        args[n] = c->args[n];
        n++;
    }
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_assert_eq(r.signal, 0);
    cr_assert_eq(r.exit_code, c->exit_code, "%s %s: exit %d, stderr: %s", c->args[1],
                 c->args[2], r.exit_code, r.err);
    cr_assert_str_empty(r.out, "stdout must be empty on failure, got: %s", r.out);
    cr_assert_eq(cli_count_lines(r.err), 1, "want one line on stderr, got: %s", r.err);
    cr_assert(strncmp(r.err, "vramkit: chunks: ", 17) == 0, "%s", r.err);
    cr_assert(strstr(r.err, c->names), "stderr '%s' does not name '%s'", r.err, c->names);
    cli_result_free(&r);
}

/* ---- ranks from the launcher (--world auto) ----------------------------------------- */

#define SMALL "--samples", "1003", "--sample-bytes", "1KiB", "--batch", "32", "--budget", "100KiB"

Test(cli_chunks, ranks_from_torchrun) {
    const char *args[] = {"chunks", SMALL, "--json", NULL};
    const char *env[] = {"RANK=3", "WORLD_SIZE=4", "LOCAL_RANK=1", NULL};
    cli_result r = cli_run_env(args, env);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "\"world\":4,\"rank\":3,\"launcher\":\"torchrun\",\"local_rank\":1"), "%s", r.out);
    cr_assert(strstr(r.out, "\"rank_start\":753"), "rank 3 of 4 of 1003 (251 each) starts at 753");
    cli_result_free(&r);
}

Test(cli_chunks, ranks_default_without_a_launcher) {
    const char *args[] = {"chunks", SMALL, "--json", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "\"world\":1,\"rank\":0,\"launcher\":\"none\",\"local_rank\":null"), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_chunks, ranks_text_names_the_launcher) {
    const char *args[] = {"chunks", SMALL, "--world", "auto", NULL};
    const char *env[] = {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "SLURM_PROCID=0",
                         "SLURM_NTASKS=1", NULL};
    cli_result r = cli_run_env(args, env);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "rank            2 of 4"), "%s", r.out);
    cr_assert(strstr(r.out, "launcher        Open MPI: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE\n"), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_chunks, ranks_explicit_flags_win) {
    /* a number for --world: the variables (even broken ones) are not read */
    const char *args[] = {"chunks", SMALL, "--world", "2", "--rank", "1", "--json", NULL};
    const char *env[] = {"RANK=9", "WORLD_SIZE=x", NULL};
    cli_result r = cli_run_env(args, env);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "\"world\":2,\"rank\":1,\"launcher\":\"flags\""), "%s", r.out);
    cli_result_free(&r);
    /* --rank over the launcher's rank, with the launcher's world */
    const char *args2[] = {"chunks", SMALL, "--rank", "0", "--json", NULL};
    const char *env2[] = {"SLURM_PROCID=3", "SLURM_NTASKS=4", NULL};
    r = cli_run_env(args2, env2);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "\"world\":4,\"rank\":0,\"launcher\":\"Slurm\""), "%s", r.out);
    cli_result_free(&r);
}

struct env_case {
    char env[3][48];
    char args[3][16];
    char line[128]; /* the whole stderr line after "vramkit: chunks: " */
};

ParameterizedTestParameters(cli_chunks, ranks_inconsistent) {
    static struct env_case cases[] = {
        {{"RANK=1"}, {""}, "RANK is set but WORLD_SIZE is not (torchrun sets both)"},
        {{"RANK=4", "WORLD_SIZE=4"}, {""}, "RANK=4 is not below WORLD_SIZE=4 (torchrun)"},
        {{"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=7"}, {""}, "LOCAL_RANK=7 is not below WORLD_SIZE=2 (torchrun)"},
        {{"SLURM_PROCID=1", "SLURM_NTASKS=0"}, {""},
         "SLURM_NTASKS=0 (Slurm) is not a whole number from 1 to 2147483647"},
        {{"PMI_RANK=one", "PMI_SIZE=2"}, {""},
         "PMI_RANK='one' (MPICH/PMI) is not a whole number from 0 to 2147483646"},
        {{"OMPI_COMM_WORLD_SIZE=2"}, {""},
         "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not (Open MPI sets both)"},
        {{"SLURM_PROCID=1", "SLURM_NTASKS=2"}, {"--rank", "5", ""}, "--rank 5 is not below SLURM_NTASKS=2 (Slurm)"},
        {{""}, {"--rank", "1", ""}, "--rank 1 is not below --world 1"},
        {{"RANK=0", "WORLD_SIZE=1"}, {"--world", "0", ""}, "--world: must be at least 1"},
    };
    return cr_make_param_array(struct env_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct env_case *c, cli_chunks, ranks_inconsistent) {
    const char *args[16] = {"chunks", SMALL};
    int n = 9;
    for (int i = 0; i < 3 && c->args[i][0] != '\0'; i++) args[n++] = c->args[i];
    args[n] = NULL;
    const char *env[4];
    int k = 0;
    for (int i = 0; i < 3 && c->env[i][0] != '\0'; i++) env[k++] = c->env[i];
    env[k] = NULL;
    cli_result r = cli_run_env(args, env);
    cr_assert_eq(r.exit_code, 2, "exit %d, stderr: %s", r.exit_code, r.err);
    cr_assert_str_empty(r.out, "nothing on stdout: %s", r.out);
    char want[192];
    snprintf(want, sizeof want, "vramkit: chunks: %s\n", c->line);
    cr_assert_str_eq(r.err, want);
    cli_result_free(&r);
}

/* Bounded work (issue 29): a plan whose JSON would list millions of entries is refused before a
   byte is written (it once wrote 1.33 GB in 20 s), and the largest --samples is planned in text
   at once. */
Test(cli_chunks, output_is_bounded) {
    const char *big[] = {"chunks", "--samples", "10000000", "--sample-bytes", "1", "--batch", "1",
                         "--budget", "2", "--json", NULL};
    cli_result r = cli_run(big);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: chunks: --json: the plan has 10000000 chunks and 10000000 "
                            "batches, over the 1000000 entries"), "%s", r.err);
    cr_expect_str_empty(r.out, "nothing written");
    cli_result_free(&r);
    const char *most[] = {"chunks", "--samples", "18446744073709551615", "--sample-bytes", "1",
                          "--batch", "1", "--budget", "2", "--json", NULL};
    r = cli_run(most);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
    most[9] = NULL; /* text: 16 chunks shown whatever the count */
    r = cli_run(most);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "chunks not shown"), "%s", r.out);
    cli_result_free(&r);
}

/* Bounded work (issue 29 item 8): text --shuffle costs O(what it prints). A chunk of 10^12
   samples prints its first 8 positions of the order at once: each is computed on its own
   (vramkit/perm.h), no order is materialised (it once shuffled a whole chunk first: 27 s and
   272 MB for 10^9 samples, and refused 2^27 or more). The positions are the chunk's, distinct,
   and the ones the JSON form lists for a plan small enough to list. */
Test(cli_chunks, shuffle_text_costs_what_it_prints) {
    const char *huge[] = {"chunks", "--samples", "1000000000000", "--sample-bytes", "1",
                          "--batch", "1000", "--budget", "2TB", "--shuffle", "--seed", "5", NULL};
    cli_result r = cli_run(huge);
    expect_clean_success(&r);
    cr_assert(strstr(r.out, "chunks          1 of up to 1000000000000 samples"), "%s", r.out);
    const char *o = strstr(r.out, "order:");
    cr_assert_not_null(o, "%s", r.out);
    uint64_t got[8];
    char *end = NULL;
    o += strlen("order:");
    for (int k = 0; k < 8; k++) {
        got[k] = strtoull(o, &end, 10);
        cr_assert(end != o, "8 positions: %s", r.out);
        cr_assert_lt(got[k], UINT64_C(1000000000000));
        for (int j = 0; j < k; j++) cr_assert_neq(got[k], got[j]);
        o = end;
    }
    cr_assert(strncmp(o, " ... (1000000000000 in all)\n", 28) == 0, "%s", o);
    cli_result_free(&r);
    /* its JSON would list every position: refused before a byte is written */
    const char *json[] = {"chunks", "--samples", "1000000000000", "--sample-bytes", "1",
                          "--batch", "1000", "--budget", "2TB", "--shuffle", "--json", NULL};
    r = cli_run(json);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    cr_expect(strstr(r.err, "an order of each position (--shuffle)"), "%s", r.err);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
    /* text and JSON print the same order */
    const char *small_text[] = {"chunks", "--samples", "5000", "--sample-bytes", "1", "--batch",
                                "10", "--budget", "2000", "--shuffle", "--seed", "5", "--epoch",
                                "3", NULL};
    const char *small_json[] = {"chunks", "--samples", "5000", "--sample-bytes", "1", "--batch",
                                "10", "--budget", "2000", "--shuffle", "--seed", "5", "--epoch",
                                "3", "--json", NULL};
    cli_result t = cli_run(small_text), j = cli_run(small_json);
    expect_clean_success(&t);
    expect_clean_success(&j);
    cJSON *doc = jparse(j.out);
    const cJSON *first = cJSON_GetArrayItem(jarr(doc, "chunks"), 0);
    const cJSON *ord = jarr(first, "order");
    char want[256] = "";
    size_t len = 0;
    len += (size_t)snprintf(want + len, sizeof want - len, "order:");
    for (int k = 0; k < 8; k++)
        len += (size_t)snprintf(want + len, sizeof want - len, " %llu",
                                (unsigned long long)jcount_at(ord, k));
    cr_assert(strstr(t.out, want), "text lacks '%s':\n%s", want, t.out);
    cJSON_Delete(doc);
    cli_result_free(&t);
    cli_result_free(&j);
}
