/* hw_run.c — `vramkit run` over a real PyTorch load on a real GPU: a service that crashes
 * under fp16 (os.abort after the load) moves to bf16, where it allocates 1 GiB on the GPU,
 * says VRAMKIT_READY and serves 3 s; vramkit exits 0 with it, and the ready/ended events
 * carry its GPU memory read through NVML (at least the 1 GiB). Skipped (cr_skip) where
 * python3 has no CUDA-enabled torch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "hw_common.h"

#define GIB 1073741824.0

static const char service[] =
    "import os, sys, time, torch\n"
    "x = torch.empty(1 << 30, dtype=torch.uint8, device='cuda:0')\n"
    "x.fill_(1); torch.cuda.synchronize()\n"
    "if os.environ['VRAMKIT_STRATEGY'] == 'fp16':\n"
    "    print('crashing under fp16', file=sys.stderr, flush=True); os.abort()\n"
    "print('VRAMKIT_READY', flush=True)\n"
    "time.sleep(3)\n";

Test(hw_run, supervises_a_pytorch_load) {
    if (system("python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' "
               ">/dev/null 2>&1") != 0)
        cr_skip_test("python3 with CUDA-enabled torch is not available");
    char dir[] = "/tmp/vramkit-hw-run-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char script[256], events[256], cmd[1024];
    snprintf(script, sizeof script, "%s/service.py", dir);
    snprintf(events, sizeof events, "%s/events.jsonl", dir);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fputs(service, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run --strategies fp16,bf16 --ready-timeout 120 --events %s "
                              "-- python3 %s >%s/out 2>%s/err",
             VRAMKIT_EXE, events, script, dir, dir);
    int rc = system(cmd);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "vramkit run: %d (see %s/err)", rc, dir);
    f = fopen(events, "r");
    cr_assert_not_null(f);
    char line[4096];
    int readies = 0, crash = 0;
    while (fgets(line, sizeof line, f)) {
        cJSON *o = cJSON_Parse(line);
        cr_assert_not_null(o, "%s", line);
        const char *ev = cJSON_GetObjectItem(o, "event")->valuestring;
        if (strcmp(ev, "ended") == 0 &&
            strcmp(cJSON_GetObjectItem(o, "outcome")->valuestring, "crash") == 0)
            crash++;
        if (strcmp(ev, "ready") == 0) {
            readies++;
            cr_expect_str_eq(cJSON_GetObjectItem(o, "strategy")->valuestring, "bf16");
            const cJSON *b = cJSON_GetObjectItem(o, "gpu_bytes");
            cr_expect(cJSON_IsNumber(b) && b->valuedouble >= GIB,
                      "the service's GPU memory through NVML: %s", line);
        }
        cJSON_Delete(o);
    }
    fclose(f);
    cr_expect_eq(crash, 1, "fp16 crashed (SIGABRT)");
    cr_expect_eq(readies, 1);
}

VRAM_HW_MAIN()
