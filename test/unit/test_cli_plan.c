/* `vramkit plan`: the strategy chain of a model, the placement of a service's components
 * (user-report 001's card), device settings from the command line and the environment,
 * plans saved and loaded, and one clear error line for every bad input. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli/cli_model.h"
#include "cli_run.h"
#include "device/machine.h"
#include "json_check.h"
#include "../fuzz/gen/model_fixtures.h"

static cJSON *parse(const cli_result *r) {
    cr_expect_str_empty(r->err);
    cJSON *doc = jparse(r->out);
    cr_expect_eq(cli_count_lines(r->out), 1);
    return doc;
}

#define GIB 1073741824.0

Test(cli_plan, help_answers_the_questions) {
    const char *args[] = {"plan", "--help", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0);
    static const char *const must[] = {"--model", "--component", "@DEVICE", "VRAMKIT_DEVICE",
                                       "VRAMKIT_<NAME>_DEVICE", "--assume-gpu", "--margin",
                                       "--save", "--load", "--json", "several GPUs", "exit codes",
                                       "--host-memory", "--lora-rank"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_expect(strstr(r.out, must[i]) != NULL, "help lacks %s", must[i]);
    cli_result_free(&r);
}

Test(cli_plan, readme_main_job_without_a_gpu_chooses_cpu_and_says_why) {
    const char *args[] = {"plan", "--model", "nllb-200-distilled-600M", "--host-memory", "16GiB",
                          NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "no GPU") != NULL);
    cr_expect(strstr(r.out, "chosen: cpu") != NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(cli_plan, strategy_chain_json_on_one_card) {
    const char *args[] = {"plan", "--model", "nllb-200-distilled-600M", "--seq", "256",
                          "--assume-gpu", "8GiB,used=4.7GB,cc=8.9", "--host-memory", "16GiB",
                          "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse(&r);
    const cJSON *st = jget(doc, "strategies");
    cr_expect_eq(cJSON_GetArraySize(st), 7);
    static const char *const order[] = {"bf16",        "int8",    "int4", "multi_gpu",
                                        "experts_cpu", "gpu_cpu", "cpu"};
    for (int i = 0; i < 7; i++) {
        const cJSON *c = cJSON_GetArrayItem(st, i);
        cr_expect_str_eq(jget(c, "name")->valuestring, order[i]);
        cr_expect(cJSON_IsBool(jget(c, "fits")) && cJSON_IsString(jget(c, "reason_text")));
    }
    cr_expect_str_eq(jget(doc, "chosen")->valuestring, "bf16", "cc 8.9 has bf16");
    const cJSON *multi = jfind(st, "name", "multi_gpu");
    cr_expect(cJSON_IsFalse(jget(multi, "fits")));
    cr_expect_str_eq(jget(multi, "reason")->valuestring, "one_gpu");
    /* the chosen one is placed on GPU 0 with its bytes, within the free memory less margin */
    const cJSON *pl = cJSON_GetArrayItem(jget(doc, "placement"), 0);
    cr_expect_str_eq(jget(pl, "device")->valuestring, "gpu0");
    cr_expect_str_eq(jget(pl, "strategy")->valuestring, "bf16");
    double bytes = jget(pl, "bytes")->valuedouble;
    cr_expect(bytes > 1.0 * GIB && bytes <= 8 * GIB - 4.7e9 - 256 * 1048576.0);
    cr_expect_eq(bytes, jget(jfind(st, "name", "bf16"), "bytes")->valuedouble);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_plan, a_card_without_bf16_gets_fp16_and_nothing_fits_exits_1) {
    const char *args[] = {"plan", "--model", "Mistral-Small-22B", "--assume-gpu", "6GiB,cc=7.5",
                          "--host-memory", "8GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 1, "nothing fits: %s", r.err);
    cJSON *doc = parse(&r);
    cr_expect_str_eq(jget(cJSON_GetArrayItem(jget(doc, "strategies"), 0), "name")->valuestring,
                     "fp16");
    cr_expect(cJSON_IsNull(jget(doc, "chosen")));
    cr_expect_eq(cJSON_GetArraySize(jget(doc, "placement")), 0);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_plan, two_gpus_split_a_22b_model) {
    const char *args[] = {"plan", "--model", "Mistral-Small-22B", "--seq", "4096",
                          "--assume-gpu", "24GB,cc=8.9", "--assume-gpu", "24GB,cc=8.9",
                          "--assume-gpu", "24GB,cc=8.9", "--host-memory", "16GiB", "--json",
                          NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse(&r);
    /* 16-bit needs ~44 GiB: not one 24 GB card, int4 fits one; the multi-GPU split fits
       three cards, each within its budget */
    const cJSON *multi = jfind(jget(doc, "strategies"), "name", "multi_gpu");
    cr_expect(cJSON_IsTrue(jget(multi, "fits")));
    const cJSON *d;
    double blocks = 0;
    cJSON_ArrayForEach(d, jget(multi, "per_device")) {
        cr_expect(jget(d, "bytes")->valuedouble <= 24e9 - 256 * 1048576.0);
        blocks += jget(d, "blocks")->valuedouble;
    }
    cr_expect_eq(blocks, 56);
    cr_expect_str_eq(jget(doc, "chosen")->valuestring, "int4");
    cJSON_Delete(doc);
    cli_result_free(&r);
}

/* user-report 001: e5-large and two DistilBERT classifiers on an 8 GB RTX 4060 (cc 8.9)
   where Ollama holds 4.7 GB */
#define SERVICE "--component", "embed=multilingual-e5-large", "--component", \
                "cls-a=distilbert-base-uncased", "--component", "cls-b=distilbert-base-uncased"

Test(cli_plan, user_report_001_service_fits_beside_ollama) {
    const char *args[] = {"plan", SERVICE, "--assume-gpu", "8GiB,used=4.7GB,cc=8.9", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse(&r);
    const cJSON *pl = jget(doc, "placement"), *e;
    double sum = 0;
    cr_expect_eq(cJSON_GetArraySize(pl), 3);
    cJSON_ArrayForEach(e, pl) {
        cr_expect_str_eq(jget(e, "device")->valuestring, "gpu0");
        cr_expect(cJSON_IsTrue(jget(e, "fits")));
        cr_expect_str_eq(jget(e, "setting_from")->valuestring, "default");
        sum += jget(e, "bytes")->valuedouble;
    }
    /* the three models and one CUDA context + workspace (430 + 32 MiB) within free - margin */
    cr_expect(sum + 462 * 1048576.0 <= 8 * GIB - 4.7e9 - 256 * 1048576.0, "sum %.0f", sum);
    cr_expect(cJSON_IsTrue(jget(doc, "chosen")));
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_plan, smaller_card_the_embedder_falls_back_or_is_short_by_the_exact_amount) {
    /* 6 GiB with 4.7 GB used: 1.37 GiB after the margin; e5-large (1.07 GiB) plus the
       fixed 462 MiB does not fit, the classifiers do */
    const char *args[] = {"plan", SERVICE, "--assume-gpu", "6GiB,used=4.7GB,cc=8.9", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "AUTO falls back to the CPU: %s", r.err);
    cJSON *doc = parse(&r);
    const cJSON *embed = jfind(jget(doc, "placement"), "component", "embed");
    cr_expect_str_eq(jget(embed, "device")->valuestring, "cpu");
    cr_expect_str_eq(jget(embed, "reason")->valuestring, "fell_back");
    cr_expect(jget(embed, "short_by_bytes")->valuedouble > 0);
    cr_expect_str_eq(jget(jfind(jget(doc, "placement"), "component", "cls-a"), "device")->valuestring,
                     "gpu0");
    cJSON_Delete(doc);
    cli_result_free(&r);
    /* pinned to the GPU: not placed, exit 1, short by exactly needed - room */
    const char *pinned[] = {"plan", "--component", "embed=multilingual-e5-large@cuda:0",
                            "--assume-gpu", "6GiB,used=4.7GB,cc=8.9", "--json", NULL};
    r = cli_run(pinned);
    cr_expect_eq(r.exit_code, 1);
    doc = parse(&r);
    embed = jfind(jget(doc, "placement"), "component", "embed");
    cr_expect(cJSON_IsFalse(jget(embed, "fits")));
    cr_expect_str_eq(jget(embed, "reason")->valuestring, "gpu_short");
    double budget = 6 * GIB - 4.7e9 - 256 * 1048576.0;
    double needed = jget(embed, "bytes")->valuedouble + 462 * 1048576.0;
    cr_expect_eq(jget(embed, "short_by_bytes")->valuedouble, needed - budget);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_plan, device_settings_from_the_environment_inherit_and_override) {
    const char *args[] = {"plan", SERVICE, "--component", "extra=gpt2@auto", "--assume-gpu",
                          "8GiB,used=4.7GB,cc=8.9", "--json", NULL};
    const char *env[] = {"VRAMKIT_DEVICE=cpu", "VRAMKIT_CLS_B_DEVICE=cuda:0", NULL};
    cli_result r = cli_run_env(args, env);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse(&r);
    const cJSON *pl = jget(doc, "placement");
    /* embed and cls-a inherit the global cpu; cls-b has its own; extra's @auto wins */
    cr_expect_str_eq(jget(jfind(pl, "component", "embed"), "device")->valuestring, "cpu");
    cr_expect_str_eq(jget(jfind(pl, "component", "embed"), "setting_from")->valuestring,
                     "VRAMKIT_DEVICE");
    cr_expect_str_eq(jget(jfind(pl, "component", "cls-a"), "device")->valuestring, "cpu");
    cr_expect_str_eq(jget(jfind(pl, "component", "cls-b"), "device")->valuestring, "gpu0");
    cr_expect_str_eq(jget(jfind(pl, "component", "cls-b"), "setting_from")->valuestring,
                     "VRAMKIT_CLS_B_DEVICE");
    cr_expect_str_eq(jget(jfind(pl, "component", "extra"), "device")->valuestring, "gpu0");
    cr_expect_str_eq(jget(jfind(pl, "component", "extra"), "setting_from")->valuestring,
                     "command line");
    cJSON_Delete(doc);
    cli_result_free(&r);
    /* a bad setting in the environment is an error naming the variable */
    const char *bad_env[] = {"VRAMKIT_EMBED_DEVICE=tpu:3", NULL};
    r = cli_run_env(args, bad_env);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "VRAMKIT_EMBED_DEVICE") && strstr(r.err, "tpu:3"), "%s", r.err);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
}

Test(cli_plan, save_then_load_replans_and_reports_changes) {
    char path[] = "/tmp/vramkit-plan-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    const char *save[] = {"plan", "--component", "embed=multilingual-e5-large@cuda:0",
                          "--component", "cls=distilbert-base-uncased", "--seq", "256",
                          "--assume-gpu", "6GiB,used=4.7GB,cc=8.9", "--save", path, NULL};
    cli_result r = cli_run(save);
    cr_expect_eq(r.exit_code, 1, "embed does not fit there: %s", r.err);
    cli_result_free(&r);
    /* the saved file is the JSON plan */
    FILE *f = fopen(path, "r");
    char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *saved = jparse(text);
    cr_expect_eq(jget(saved, "version")->valuedouble, 1);
    const cJSON *in = jget(saved, "inputs");
    cr_expect_eq(jget(jget(in, "workload"), "seq")->valuedouble, 256);
    cr_expect_eq(cJSON_GetArraySize(jget(jget(in, "machine"), "gpus")), 1);
    cJSON_Delete(saved);
    /* loaded as saved: unchanged, same exit */
    const char *load[] = {"plan", "--load", path, NULL};
    r = cli_run(load);
    cr_expect_eq(r.exit_code, 1);
    cr_expect(strstr(r.out, "unchanged since the plan was saved") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "from saved plan") != NULL, "%s", r.out);
    cli_result_free(&r);
    /* on a bigger card: the embedder now fits, and the change is reported */
    const char *bigger[] = {"plan", "--load", path, "--assume-gpu", "8GiB,used=4.7GB,cc=8.9",
                            "--json", NULL};
    r = cli_run(bigger);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse(&r);
    const cJSON *ch = jget(doc, "changes");
    cr_expect_eq(cJSON_GetArraySize(ch), 1);
    cr_expect(strstr(cJSON_GetArrayItem(ch, 0)->valuestring, "embed") != NULL);
    cr_expect_eq(jget(jget(jget(doc, "inputs"), "workload"), "seq")->valuedouble, 256,
                 "the workload came back");
    cJSON_Delete(doc);
    cli_result_free(&r);
    /* a single-model plan round-trips too */
    const char *msave[] = {"plan", "--model", "gpt2", "--assume-gpu", "4GiB", "--save", path,
                           "--json", NULL};
    r = cli_run(msave);
    cr_expect_eq(r.exit_code, 0);
    cli_result_free(&r);
    r = cli_run(load);
    cr_expect_eq(r.exit_code, 0);
    cr_expect(strstr(r.out, "chosen: fp16") && strstr(r.out, "unchanged"), "%s", r.out);
    cli_result_free(&r);
    unlink(path);
}

typedef struct bad_case {
    char args[8][48];
    char needle[56];
} bad_case;

ParameterizedTestParameters(cli_plan, bad_input) {
    static bad_case cases[] = {
        {{"plan"}, "give --model"},
        {{"plan", "--model", "gpt2", "--model", "gpt2"}, "one model only"},
        {{"plan", "--model", "gpt2", "--component", "a=gpt2"}, "do not mix"},
        {{"plan", "--component", "a=gpt2", "--model", "gpt2"}, "do not mix"},
        {{"plan", "--model", "nope-7b"}, "nope-7b"},
        {{"plan", "--model", "gpt2", "extra"}, "unexpected argument 'extra'"},
        {{"plan", "--model", "gpt2", "--frobnicate"}, "--frobnicate"},
        {{"plan", "--component", "gpt2"}, "NAME=MODEL"},
        {{"plan", "--component", "=gpt2"}, "NAME=MODEL"},
        {{"plan", "--component", "a b=gpt2"}, "only letters"},
        {{"plan", "--component", "a="}, "has no model"},
        {{"plan", "--component", "a=gpt2@"}, "no device after '@'"},
        {{"plan", "--component", "a=gpt2@tpu"}, "'tpu' is not a device"},
        {{"plan", "--component", "a=gpt2@cuda:-1"}, "'cuda:-1'"},
        {{"plan", "--component", "a=gpt2", "--component", "a=gpt2"}, "given twice"},
        {{"plan", "--model", "gpt2", "--assume-gpu", "8GiB,used=9GiB"}, "more than the GPU"},
        {{"plan", "--model", "gpt2", "--host-memory", "0"}, "--host-memory: '0'"},
        {{"plan", "--model", "gpt2", "--margin", "x"}, "--margin: 'x'"},
        {{"plan", "--model", "gpt2", "--batch", "0"}, "--batch: '0'"},
        {{"plan", "--model", "gpt2", "--lora-rank", "8"}, "LoRA is for training"},
        {{"plan", "--load", "/nonexistent/plan.json"}, "no such file"},
        {{"plan", "--load", "/etc/hostname"}, "not valid JSON"},
        {{"plan", "--load", "/tmp/x.json", "--model", "gpt2"}, "drop --model/--component"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, cli_plan, bad_input) {
    cli_expect_usage_error(c->args, 8, c->needle, "vramkit: plan: ");
}

Test(cli_plan, malformed_saved_plans_are_rejected_by_name) {
    static const char *const docs[][2] = {
        {"[1, 2]", "not a vramkit plan"},
        {"{\"version\": 2, \"inputs\": {}}", "version 1"},
        {"{\"version\": 1}", "no \"inputs\""},
        {"{\"version\": 1, \"inputs\": {}}", "neither"},
        {"{\"version\": 1, \"inputs\": {\"components\": [{\"name\": \"a\"}]}}", "lacks name"},
        {"{\"version\": 1, \"inputs\": {\"model\": \"gpt2\", \"workload\": {\"batch\": -3}}}",
         "workload.batch"},
        {"{\"version\": 1, \"inputs\": {\"model\": \"gpt2\", \"workload\": {\"mode\": \"serve\"}}}",
         "--mode: 'serve'"},
        {"{\"version\": 1, \"inputs\": {\"model\": \"gpt2\", \"machine\": {\"gpus\": [{\"total_bytes\": 8, \"free_bytes\": 9}]}}}",
         "sane total_bytes"},
    };
    char path[] = "/tmp/vramkit-badplan-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(docs[i][0], f);
        fclose(f);
        const char *args[] = {"plan", "--load", path, NULL};
        cli_result r = cli_run(args);
        cr_expect_eq(r.exit_code, 2, "%s", docs[i][0]);
        cr_expect(strstr(r.err, docs[i][1]) != NULL, "'%s' -> %s", docs[i][0], r.err);
        cr_expect_eq(cli_count_lines(r.err), 1);
        cr_expect_str_empty(r.out);
        cli_result_free(&r);
    }
    unlink(path);
}

/* A plan whose inputs.model names a file that is not a model (a text file, /etc/passwd's
   kind): refused, and none of its bytes are echoed (they were once, as a header length). */
Test(cli_plan, a_loaded_plan_never_echoes_a_file_that_is_not_a_model) {
    char dir[] = "/tmp/vramkit-notmodel-XXXXXX", txt[128], gg[128], plan[128], doc[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(txt, sizeof txt, "%s/secret.safetensors", dir);
    snprintf(gg, sizeof gg, "%s/secret.gguf", dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    const char *paths[] = {txt, gg};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(paths[k], "w");
        cr_assert_not_null(f);
        fputs("root:x:0:0:root:/root:/bin/bash\n", f);
        fclose(f);
        f = fopen(plan, "w");
        snprintf(doc, sizeof doc, "{\"version\": 1, \"inputs\": {\"model\": \"%s\"}}", paths[k]);
        fputs(doc, f);
        fclose(f);
        const char *args[] = {"plan", "--load", plan, NULL};
        cli_result r = cli_run(args);
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        cr_expect(strstr(r.err, paths[k]) != NULL, "names the file: %s", r.err);
        cr_expect(strstr(r.err, "not a ") != NULL, "says what it is not: %s", r.err);
        /* "root:x:0" as a little-endian number, or "root" in hex */
        cr_expect(strstr(r.err, "3475222254926655346") == NULL && strstr(r.err, "72 6f") == NULL &&
                      strstr(r.err, "root") == NULL,
                  "echoes the file: %s", r.err);
        cr_expect_eq(cli_count_lines(r.err), 1);
        cli_result_free(&r);
        unlink(paths[k]);
    }
    unlink(plan);
    rmdir(dir);
}

/* plan --save through a link planted where the temporary used to be (P.tmp.PID, the pid known
   to whoever starts vramkit): the link's target is untouched, P is the plan, and nothing else
   is left in the directory (issue 29). The child waits on a pipe until the link is planted. */
Test(cli_plan, save_never_writes_through_a_planted_link) {
    char dir[] = "/tmp/vramkit-save-XXXXXX", path[128], victim[128], link[160];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/plan.json", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    fputs("precious\n", f);
    fclose(f);
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1) _exit(99);
        int z = open("/dev/null", O_RDWR);
        dup2(z, 0);
        dup2(z, 1);
        dup2(z, 2);
        execl(VRAMKIT_EXE, VRAMKIT_EXE, "plan", "--model", "gpt2", "--assume-gpu", "8GiB", "--save",
              path, (char *)NULL);
        _exit(127);
    }
    close(go[0]);
    snprintf(link, sizeof link, "%s.tmp.%ld", path, (long)pid);
    cr_assert_eq(symlink(victim, link), 0);
    cr_assert_eq(write(go[1], "g", 1), 1);
    close(go[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    char buf[64] = "";
    f = fopen(victim, "r");
    cr_assert_not_null(f);
    cr_expect_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    cr_expect_str_eq(buf, "precious\n", "the link's target was written");
    struct stat sb;
    cr_expect_eq(lstat(link, &sb), 0);
    cr_expect(S_ISLNK(sb.st_mode), "the planted link is left as it was");
    cr_expect_eq(lstat(path, &sb), 0);
    cr_expect(S_ISREG(sb.st_mode) && sb.st_size > 100, "the plan is a regular file");
    int entries = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; (e = readdir(d)) != NULL;) entries += e->d_name[0] != '.';
    closedir(d);
    cr_expect_eq(entries, 3, "plan.json, victim and the link; no temporary left");
    unlink(link);
    unlink(victim);
    unlink(path);
    rmdir(dir);
}

/* A key given twice in config.json means what Python's json (and so transformers) reads: the
   last (issue 29: vramkit read the first, 32 blocks where transformers builds 12). Python's own
   json module says which value that is. */
Test(cli_plan, a_duplicate_config_key_is_read_as_python_reads_it) {
    char dir[] = "/tmp/vramkit-dupkey-XXXXXX", cfg[128], cmd[300], py[32] = "";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    FILE *f = fopen(cfg, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"n_layer\": 32, %s", FX_CFG_GPT2 + 1); /* gpt2's own n_layer (12) comes later */
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"n_layer\"])' %s", cfg);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(py, sizeof py, p));
    cr_assert_eq(pclose(p), 0);
    const char *args[] = {"plan", "--model", dir, "--assume-gpu", "80GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = cJSON_Parse(r.out);
    const cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "strategies"), 0);
    const cJSON *pd = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "per_device"), 0);
    cr_assert_not_null(pd, "%s", r.out);
    cr_expect_eq((long)cJSON_GetObjectItem(pd, "blocks")->valuedouble, atol(py),
                 "vramkit's blocks vs Python's n_layer %s", py);
    cJSON_Delete(doc);
    cli_result_free(&r);
    unlink(cfg);
    rmdir(dir);
}

/* The README's first command (the newcomer's main job) runs and succeeds as written. */
Test(cli_plan, readme_main_command_is_true) {
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/README.md", VRAMKIT_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    const char *cmd = NULL;
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, "build/driver/vramkit ");
        if (at != NULL) {
            cmd = at + strlen("build/driver/vramkit ");
            break;
        }
    }
    fclose(f);
    cr_assert_not_null(cmd, "no vramkit command in the README");
    cr_expect(strncmp(cmd, "plan ", 5) == 0, "the main job is vramkit plan: %s", cmd);
    char buf[1024];
    const char *args[32];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", cmd);
    for (char *save = NULL, *tok = strtok_r(buf, " \n", &save); tok && n < 31;
         tok = strtok_r(NULL, " \n", &save))
        args[n++] = tok;
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "README command failed: %s", r.err);
    cr_expect(strstr(r.out, "chosen:") != NULL, "%s", r.out);
    cli_result_free(&r);
}

/* Without --assume-gpu the plan reads this machine's GPUs. Here (CI: no NVIDIA driver) that
 * is "no GPU" with the reason; on a GPU machine the GPUs are listed, not marked assumed.
 * Either way the text and the JSON agree with what vram_machine_gpus found. */
Test(cli_plan, reads_this_machines_gpus) {
    const char *args[] = {"plan", "--model", "gpt2", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse(&r);
    const cJSON *machine = jget(jget(doc, "inputs"), "machine");
    int ngpu = cJSON_GetArraySize(jget(machine, "gpus"));
    vram_gpu_budget found[VRAM_PLAN_MAX_GPUS];
    char why[128];
    int n = vram_machine_gpus(found, VRAM_PLAN_MAX_GPUS, why, sizeof why);
    cr_expect_eq(ngpu, n, "the plan saw %d GPUs, this machine has %d", ngpu, n);
    if (n == 0) {
        cr_expect(cJSON_IsTrue(jget(machine, "gpus_assumed")), "no GPU was read");
        cr_assert(cJSON_IsString(jget(machine, "no_gpu_reason")));
        cr_expect_str_eq(jget(machine, "no_gpu_reason")->valuestring, why);
        cr_expect_neq(why[0], '\0', "a reason is given");
    } else {
        cr_expect(cJSON_IsFalse(jget(machine, "gpus_assumed")));
        cr_expect(cJSON_IsNull(jget(machine, "no_gpu_reason")));
    }
    cJSON_Delete(doc);
    cli_result_free(&r);

    const char *text[] = {"plan", "--model", "gpt2", NULL};
    r = cli_run(text);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    if (n == 0) {
        char want[200];
        snprintf(want, sizeof want, "machine: no GPU (%s; --assume-gpu SPEC plans for one)", why);
        cr_expect(strstr(r.out, want), "'%s' not in %s", want, r.out);
    } else {
        cr_expect(strstr(r.out, "GPU 0: "), "%s", r.out);
        cr_expect_null(strstr(r.out, "(assumed)"), "%s", r.out);
    }
    cli_result_free(&r);

    /* with --assume-gpu nothing is read: the GPU is the one given */
    const char *assumed[] = {"plan", "--model", "gpt2", "--assume-gpu", "4GiB", NULL};
    r = cli_run(assumed);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "GPU 0 (assumed): 4.00 GiB, 4.00 GiB free"), "%s", r.out);
    cli_result_free(&r);
}

/* Issue 16 §6: a GPU line adds up. For several component plans (one GPU, two GPUs, a GPU
 * left empty, a component pinned that does not fit, everything on the CPU), each gpu_use
 * entry's items sum to its used bytes, its components_bytes is the sum of the placement
 * entries on that device, the fixed items are paid once per GPU in use (the estimator's
 * expected CUDA context and workspace, 430 + 32 MiB) and none on an empty one, and the
 * text line shows the same items. */
struct plan_case {
    char args[12][64]; /* arrays, not pointers: parameters are copied into the test */
};

ParameterizedTestParameters(cli_plan, gpu_lines_add_up) {
    static struct plan_case cases[] = {
        {{"--component", "embed=multilingual-e5-large", "--component",
          "cls-a=distilbert-base-uncased", "--component", "cls-b=distilbert-base-uncased",
          "--assume-gpu", "8GiB,used=4.7GB,cc=8.9"}},
        {{"--component", "a=Mistral-7B", "--component", "b=Mistral-7B", "--component",
          "c=gpt2@cuda:1", "--assume-gpu", "24GiB", "--assume-gpu", "24GiB", "--host-memory",
          "64GiB"}},
        {{"--component", "a=gpt2", "--component", "b=Qwen2.5-0.5B", "--assume-gpu", "8GiB",
          "--assume-gpu", "2GiB,used=1.9GiB", "--host-memory", "16GiB"}},
        {{"--component", "big=Mistral-Small-22B@cuda:0", "--component", "small=gpt2",
          "--assume-gpu", "8GiB", "--host-memory", "64GiB"}},
        {{"--component", "a=gpt2@cpu", "--component", "b=distilbert-base-uncased@cpu",
          "--assume-gpu", "8GiB", "--host-memory", "16GiB"}},
    };
    return cr_make_param_array(struct plan_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct plan_case *c, cli_plan, gpu_lines_add_up) {
    const char *args[16] = {"plan"};
    int n = 1;
    for (int i = 0; i < 12 && c->args[i][0]; i++) args[n++] = c->args[i];
    args[n] = "--json";
    args[n + 1] = NULL;
    cli_result r = cli_run(args);
    cr_assert(r.exit_code == 0 || r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
    cJSON *doc = parse(&r);
    const cJSON *gu = jget(doc, "gpu_use"), *g, *e;
    int ngpu = 0, in_use = 0;
    cr_assert(cJSON_IsArray(gu));
    cJSON_ArrayForEach(g, gu) {
        char dev[16];
        snprintf(dev, sizeof dev, "gpu%d", ngpu);
        cr_expect_str_eq(jstr(g, "device"), dev);
        uint64_t used = jcount(g, "used_bytes"), comps = jcount(g, "components_bytes");
        uint64_t ctx = jcount(g, "cuda_context_bytes"), ws = jcount(g, "workspace_bytes");
        uint64_t k = jcount(g, "components");
        cr_expect_eq(comps + ctx + ws, used, "%s: %llu + %llu + %llu != %llu", dev,
                     (unsigned long long)comps, (unsigned long long)ctx, (unsigned long long)ws,
                     (unsigned long long)used);
        cr_expect_leq(used, jcount(g, "budget_bytes"), "%s", dev);
        /* the placement entries on this device, placed */
        uint64_t sum = 0, count = 0;
        cJSON_ArrayForEach(e, jget(doc, "placement")) {
            if (cJSON_IsTrue(jget(e, "fits")) && cJSON_IsString(jget(e, "device")) &&
                strcmp(jstr(e, "device"), dev) == 0) {
                sum += jcount(e, "bytes");
                count++;
            }
        }
        cr_expect_eq(sum, comps, "%s: placement bytes %llu, components_bytes %llu", dev,
                     (unsigned long long)sum, (unsigned long long)comps);
        cr_expect_eq(count, k, "%s", dev);
        if (k > 0) {
            cr_expect_eq(ctx, 430ull << 20, "%s", dev);
            cr_expect_eq(ws, 32ull << 20, "%s", dev);
            in_use++;
        } else {
            cr_expect_eq(used, 0, "%s: an empty GPU holds nothing", dev);
            cr_expect_eq(ctx + ws, 0, "%s: and pays no context", dev);
        }
        ngpu++;
    }
    cr_expect_eq(ngpu, cJSON_GetArraySize(jget(jget(jget(doc, "inputs"), "machine"), "gpus")));
    cJSON_Delete(doc);
    cli_result_free(&r);

    /* the text: one line per GPU, with its items */
    args[n] = NULL;
    r = cli_run(args);
    cr_assert(r.exit_code == 0 || r.exit_code == 1, "%s", r.err);
    int lines = 0, items = 0;
    for (const char *l = r.out; (l = strstr(l, "\nGPU ")) != NULL; l++) {
        const char *end = strchr(l + 1, '\n');
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(end ? end - l - 1 : 500), l + 1);
        if (strstr(line, " used of ") == NULL) continue;
        lines++;
        if (strstr(line, " + CUDA context 430.00 MiB + library workspace 32.00 MiB")) items++;
        else cr_expect_not_null(strstr(line, "(no component: no CUDA context either)"), "%s", line);
    }
    cr_expect_eq(lines, ngpu, "%s", r.out);
    cr_expect_eq(items, in_use, "%s", r.out);
    cli_result_free(&r);
}

/* A mixture of experts on a 12 GiB card: neither bf16 nor int4 fits, the routed experts in
   host memory do (experts_cpu, with its bytes per device and a reason). */
Test(cli_plan, mixture_of_experts_offers_experts_cpu) {
    const char *args[] = {"plan", "--model", "Qwen3-30B-A3B", "--seq", "4096", "--assume-gpu",
                          "12GiB,cc=8.9", "--host-memory", "128GiB", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse(&r);
    const cJSON *x = jfind(jget(doc, "strategies"), "name", "experts_cpu");
    cr_assert_not_null(x);
    cr_expect(cJSON_IsTrue(jget(x, "fits")));
    cr_expect_str_eq(jget(x, "reason")->valuestring, "fits");
    const cJSON *per = jget(x, "per_device");
    cr_assert_eq(cJSON_GetArraySize(per), 2);
    const cJSON *host = jfind(per, "device", "cpu"), *gpu0 = jfind(per, "device", "gpu0");
    cr_assert(host && gpu0);
    cr_expect(jnum(host, "bytes") > 50e9, "the 128 x 48 experts on the host");
    cr_expect(jnum(gpu0, "bytes") < 12e9);
    cr_expect_eq(jnum(x, "bytes"), jnum(host, "bytes") + jnum(gpu0, "bytes"));
    cr_expect_str_eq(jget(doc, "chosen")->valuestring, "experts_cpu");
    cJSON_Delete(doc);
    cli_result_free(&r);
}
