/* driver/device/machine.c — this machine's GPUs and host memory as a plan sees them (see
 * machine.h): NVML first, since it makes no CUDA context and names who holds what; the CUDA
 * runtime where NVML is missing or cannot number the GPUs as CUDA does. */
#include "machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda_device.h"
#include "device/snapshot.h"
#include "util/text.h"

int vram_machine_nvml_numbering(const char *visible_devices, const char *device_order, int count,
                                const char *const *names, char *why, size_t cap) {
    if (cap) why[0] = '\0';
    if (visible_devices != NULL) {
        snprintf(why, cap, "CUDA_VISIBLE_DEVICES is set, so the CUDA runtime numbers only the GPUs "
                           "it lists while NVML numbers them all");
        return 0;
    }
    if (count <= 1 || (device_order != NULL && strcmp(device_order, "PCI_BUS_ID") == 0)) return 1;
    for (int i = 1; i < count; i++)
        if (strcmp(names[i], names[0]) != 0) {
            snprintf(why, cap, "GPUs of different models (%s, %s): the CUDA runtime numbers them "
                               "fastest first, NVML by PCI bus (CUDA_DEVICE_ORDER=PCI_BUS_ID makes "
                               "the two agree)", names[0], names[i]);
            return 0;
        }
    return 1;
}

/* /proc/PID/comm without its newline; "" when it cannot be read. */
static void process_name(uint32_t pid, char *out, size_t cap) {
    char path[64];
    out[0] = '\0';
    snprintf(path, sizeof path, "/proc/%u/comm", (unsigned)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    if (fgets(out, (int)cap, f) == NULL) out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* The GPUs through NVML; 0 (and why) when NVML cannot stand for the runtime here. */
static int through_nvml(const vram_gpumem_ops *mem, vram_gpu_budget *out, int max,
                        vram_machine_view *view, char *why, size_t cap) {
    char names[VRAM_MAX_DEVICES][96];
    const char *name_ptr[VRAM_MAX_DEVICES];
    int count = 0, n;
    vram_status st;
    if ((st = vram_gpumem_ops_check(mem)) != VRAM_OK) {
        snprintf(why, cap, "the NVML table cannot be used: %s", vram_status_str(st));
        return 0;
    }
    if ((st = mem->open(mem->ctx)) != VRAM_OK || (st = mem->device_count(mem->ctx, &count)) != VRAM_OK) {
        snprintf(why, cap, "NVML: %s", mem->error(mem->ctx));
        return 0;
    }
    if (count <= 0) {
        snprintf(why, cap, "NVML sees no GPU");
        return 0;
    }
    if (count > VRAM_MAX_DEVICES) count = VRAM_MAX_DEVICES;
    for (int d = 0; d < count; d++) {
        int mig = 0;
        if (mem->device_name(mem->ctx, d, names[d], sizeof names[d]) != VRAM_OK ||
            mem->mig_mode(mem->ctx, d, &mig) != VRAM_OK) {
            snprintf(why, cap, "NVML: %s", mem->error(mem->ctx));
            return 0;
        }
        if (mig) {
            snprintf(why, cap, "GPU %d is in MIG mode: the CUDA runtime numbers its instances, "
                               "NVML the whole GPU", d);
            return 0;
        }
        name_ptr[d] = names[d];
    }
    if (!vram_machine_nvml_numbering(getenv("CUDA_VISIBLE_DEVICES"), getenv("CUDA_DEVICE_ORDER"),
                                     count, name_ptr, why, cap))
        return 0;
    n = count < max ? count : max;
    for (int d = 0; d < n; d++) {
        uint64_t total = 0, free_b = 0, used = 0;
        int ma = 0, mi = 0;
        if (mem->memory(mem->ctx, d, &total, &free_b, &used) != VRAM_OK) {
            snprintf(why, cap, "NVML: %s", mem->error(mem->ctx));
            return 0;
        }
        if (mem->compute_capability(mem->ctx, d, &ma, &mi) != VRAM_OK) ma = mi = 0;
        out[d].total = total;
        out[d].free = free_b <= total ? free_b : total;
        out[d].cc_major = ma;
        out[d].cc_minor = mi;
    }
    if (view == NULL) return n;
    view->tenants_known = 1;
    for (int d = 0; d < n; d++) {
        vram_gpumem_proc procs[VRAM_GPUMEM_MAX_PROCS];
        int np = 0;
        if (mem->processes(mem->ctx, d, procs, VRAM_GPUMEM_MAX_PROCS, &np) != VRAM_OK) {
            view->tenants_known = 0; /* the memory is known; who holds it is not */
            snprintf(view->note, sizeof view->note, "the GPUs' processes cannot be listed: %s",
                     mem->error(mem->ctx));
            view->ntenants = view->tenants_more = 0;
            break;
        }
        for (int k = 0; k < np; k++) {
            if (procs[k].pid == (uint32_t)getpid()) continue;
            if (view->ntenants == VRAM_MACHINE_MAX_TENANTS) {
                view->tenants_more++;
                continue;
            }
            vram_machine_tenant *t = &view->tenants[view->ntenants++];
            t->gpu = d;
            t->pid = procs[k].pid;
            t->bytes = procs[k].used_bytes;
            process_name(t->pid, t->name, sizeof t->name);
        }
    }
    return n;
}

/* The GPUs through the CUDA runtime (the way before NVML). */
static int through_cuda(const vram_machine_cuda *cuda, vram_gpu_budget *out, int max, char *why,
                        size_t cap) {
    vram_device_snapshot *snap;
    vram_status st;
    uint64_t keep;
    int n = 0;
    if (cuda == NULL || cuda->ops == NULL) {
        snprintf(why, cap, "this vramkit was built without CUDA");
        return 0;
    }
    snap = calloc(1, sizeof *snap);
    if (snap == NULL) {
        snprintf(why, cap, "out of memory");
        return 0;
    }
    keep = cuda->live ? cuda->live() : 0;
    st = vram_snapshot_take(cuda->ops, snap);
    for (int d = 0; d < snap->device_count && n < max; d++) {
        const vram_device_info *di = &snap->devices[d];
        if (di->total_bytes == 0) break; /* keep indices: GPU n is cuda:n */
        out[n].total = di->total_bytes;
        out[n].free = di->free_bytes <= di->total_bytes ? di->free_bytes : di->total_bytes;
        out[n].cc_major = di->cc_major;
        out[n].cc_minor = di->cc_minor;
        n++;
    }
    if (n == 0) snprintf(why, cap, "%s", st == VRAM_OK ? "no GPU found" : vram_status_str(st));
    if (cuda->release_except) cuda->release_except(keep);
    free(snap);
    return n;
}

int vram_machine_gpus_from(const vram_gpumem_ops *mem, const vram_machine_cuda *cuda,
                           vram_gpu_budget *out, int max, vram_machine_view *view, char *why,
                           size_t cap) {
    char nv_why[192] = "NVML is not available";
    int n = 0;
    if (cap) why[0] = '\0';
    if (view) {
        memset(view, 0, sizeof *view);
        view->source = "";
    }
    if (max <= 0) return 0;
    if (mem != NULL) n = through_nvml(mem, out, max, view, nv_why, sizeof nv_why);
    if (n > 0) {
        if (view) view->source = "nvml";
        return n;
    }
    if (view) {
        view->tenants_known = view->ntenants = view->tenants_more = 0;
        snprintf(view->note, sizeof view->note, "%s", nv_why);
    }
    n = through_cuda(cuda, out, max, why, cap);
    if (view && n > 0) view->source = "cuda";
    return n;
}

int vram_machine_gpus_view(vram_gpu_budget *out, int max, vram_machine_view *view, char *why,
                           size_t cap) {
    static vram_gpumem_ops nvml;
    vram_device_ops ops;
    vram_machine_cuda cuda = {NULL, vram_cuda_live_contexts, vram_cuda_release_except};
    nvml = vram_nvml_ops(NULL);
    if (vram_cuda_ops(&ops) == VRAM_OK) cuda.ops = &ops;
    return vram_machine_gpus_from(&nvml, &cuda, out, max, view, why, cap);
}

/* The reader's NVML table: one per process (nvml.h), so it lives here. */
static vram_gpumem_ops reader_nvml;

static void reader_cuda(vram_machine_reader *r) {
    r->nvml_open = 0;
    r->ops_status = vram_cuda_ops(&r->ops);
}

void vram_machine_reader_open(vram_machine_reader *r) {
    memset(r, 0, sizeof *r);
    reader_nvml = vram_nvml_ops(NULL);
    r->nvml = reader_nvml;
    if ((r->nvml_status = r->nvml.open(r->nvml.ctx)) == VRAM_OK) {
        r->nvml_open = 1;
        r->ops = vram_gpumem_device_ops(&reader_nvml);
        return;
    }
    snprintf(r->why_not_nvml, sizeof r->why_not_nvml, "%s", r->nvml.error(r->nvml.ctx));
    reader_cuda(r);
}

void vram_machine_reader_fallback(vram_machine_reader *r, const char *why) {
    if (r->nvml_open) r->nvml.close(r->nvml.ctx);
    snprintf(r->why_not_nvml, sizeof r->why_not_nvml, "%s", why);
    reader_cuda(r);
}

void vram_machine_reader_close(vram_machine_reader *r) {
    if (r->nvml_open) r->nvml.close(r->nvml.ctx);
    r->nvml_open = 0;
}

int vram_machine_gpus(vram_gpu_budget *out, int max, char *why, size_t cap) {
    return vram_machine_gpus_view(out, max, NULL, why, cap);
}

uint64_t vram_machine_host_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    if (f == NULL) return 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    }
    fclose(f);
    return (uint64_t)kb * 1024u;
}

/* ---- the machine of an estimate or a plan ------------------------------------------------ */

#define SPEC_FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

vram_status vram_gpu_spec_parse(const char *text, vram_gpu_budget *out, char *err, size_t cap) {
    char buf[256];
    char *save = NULL, *tok;
    int first = 1, have_used = 0, have_free = 0;
    uint64_t used = 0, freeb = 0;
    memset(out, 0, sizeof *out);
    if (text == NULL || text[0] == '\0' || strlen(text) >= sizeof buf)
        SPEC_FAIL("--assume-gpu: '%s' is not SIZE[,used=SIZE][,cc=M.m]", text ? text : "");
    if (text[strlen(text) - 1] == ',' || strstr(text, ",,"))
        SPEC_FAIL("--assume-gpu: '%s' has an empty item", text);
    snprintf(buf, sizeof buf, "%s", text);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = 0) {
        char *eq = strchr(tok, '=');
        if (first) {
            if (eq != NULL || vram_parse_size(tok, &out->total) != 0 || out->total == 0)
                SPEC_FAIL("--assume-gpu: '%s': the first item is the GPU's size (e.g. 8GiB), not "
                          "'%s'", text, tok);
            continue;
        }
        if (eq == NULL) SPEC_FAIL("--assume-gpu: '%s': '%s' is not KEY=VALUE", text, tok);
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(tok, "used") == 0) {
            if (vram_parse_size(val, &used) != 0)
                SPEC_FAIL("--assume-gpu: '%s': used='%s' is not a size", text, val);
            have_used = 1;
        } else if (strcmp(tok, "free") == 0) {
            if (vram_parse_size(val, &freeb) != 0)
                SPEC_FAIL("--assume-gpu: '%s': free='%s' is not a size", text, val);
            have_free = 1;
        } else if (strcmp(tok, "cc") == 0) {
            unsigned maj = 0, min = 0;
            int n = 0;
            if (sscanf(val, "%2u.%1u%n", &maj, &min, &n) != 2 || val[n] != '\0' || maj == 0)
                SPEC_FAIL("--assume-gpu: '%s': cc='%s' is not a compute capability such as 8.9",
                          text, val);
            out->cc_major = (int)maj;
            out->cc_minor = (int)min;
        } else {
            SPEC_FAIL("--assume-gpu: '%s': unknown key '%s' (used, free, cc)", text, tok);
        }
    }
    if (have_used && have_free) SPEC_FAIL("--assume-gpu: '%s': give used= or free=, not both", text);
    if (have_used && used > out->total)
        SPEC_FAIL("--assume-gpu: '%s': used is more than the GPU's size", text);
    if (have_free && freeb > out->total)
        SPEC_FAIL("--assume-gpu: '%s': free is more than the GPU's size", text);
    out->free = have_free ? freeb : out->total - used;
    return VRAM_OK;
}

#undef SPEC_FAIL

vram_status vram_machine_add_gpu(vram_machine *m, const char *spec, char *err, size_t cap) {
    vram_status st;
    if (m->ngpu == VRAM_PLAN_MAX_GPUS)
        return vram_errorf(err, cap, VRAM_E_INVALID, "--assume-gpu: at most %d GPUs",
                           VRAM_PLAN_MAX_GPUS);
    if ((st = vram_gpu_spec_parse(spec, &m->gpus[m->ngpu], err, cap)) != VRAM_OK) return st;
    m->ngpu++;
    m->gpus_given = 1;
    return VRAM_OK;
}

vram_status vram_machine_set(vram_machine *m, const char *name, const char *arg, char *err,
                             size_t cap) {
    if (strcmp(name, "assume-gpu") == 0) return vram_machine_add_gpu(m, arg, err, cap);
    if (strcmp(name, "margin") == 0) {
        if (vram_parse_size(arg, &m->margin) != VRAM_OK)
            return vram_errorf(err, cap, VRAM_E_INVALID, "--margin: '%s' is not a size", arg);
        m->margin_given = 1;
        return VRAM_OK;
    }
    if (strcmp(name, "host-memory") == 0) {
        if (vram_parse_size(arg, &m->host) != VRAM_OK || m->host == 0)
            return vram_errorf(err, cap, VRAM_E_INVALID, "--host-memory: '%s' is not a size above 0",
                               arg);
        m->host_given = 1;
        return VRAM_OK;
    }
    return VRAM_E_UNHANDLED;
}

vram_status vram_machine_make(vram_machine *m, const char *no_read, char *err, size_t cap) {
    if (m->ngpu == 0 && !m->gpus_given && no_read == NULL) {
        m->ngpu = vram_machine_gpus_view(m->gpus, VRAM_PLAN_MAX_GPUS, &m->view, m->no_gpu,
                                         sizeof m->no_gpu);
        m->gpus_detected = m->ngpu > 0;
    } else if (m->ngpu == 0) {
        snprintf(m->no_gpu, sizeof m->no_gpu, "%s", no_read != NULL ? no_read : "none given");
    }
    memset(&m->dev, 0, sizeof m->dev);
    m->dev.gpus = m->ngpu;
    for (int g = 0; g < m->ngpu; g++) m->dev.gpu[g] = m->gpus[g];
    if (!m->host_given) m->host = vram_machine_host_available();
    m->dev.host_free = m->host;
    /* the core's margin field: 0 is its default, one byte stands for "none" */
    m->dev.margin = m->margin_given ? (m->margin == 0 ? 1u : m->margin) : 0u;
    if (vram_devices_check(&m->dev) != VRAM_OK)
        return vram_errorf(err, cap, VRAM_E_INVALID, "the machine described is not valid");
    return VRAM_OK;
}

uint64_t vram_machine_margin(const vram_machine *m) {
    return m->margin_given ? m->margin : VRAM_PLAN_DEFAULT_MARGIN;
}

int vram_machine_best(const vram_machine *m, uint64_t *budget) {
    int best = vram_devices_best_gpu(&m->dev);
    *budget = 0;
    if (best == VRAM_PLAN_NONE) return -1;
    *budget = vram_devices_budget(&m->dev, best);
    return best;
}

void vram_machine_view_json(vram_json *j, const vram_machine_view *v) {
    vram_json_key_string(j, "gpu_source", v->source);
    vram_json_key_string(j, "gpu_source_note", v->note[0] ? v->note : NULL);
    vram_json_key(j, "tenants");
    if (!v->tenants_known) {
        vram_json_null(j);
        return;
    }
    vram_json_begin_array(j);
    for (int i = 0; i < v->ntenants; i++) {
        const vram_machine_tenant *t = &v->tenants[i];
        vram_json_begin_object(j);
        vram_json_key_u64(j, "gpu", (uint64_t)t->gpu);
        vram_json_key_u64(j, "pid", t->pid);
        vram_json_key_string(j, "name", t->name[0] ? t->name : NULL);
        vram_json_key_u64_or_null(j, "bytes", t->bytes != VRAM_GPUMEM_UNKNOWN, t->bytes);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key_u64(j, "tenants_more", (uint64_t)v->tenants_more);
}
