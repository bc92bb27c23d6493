/* driver/isolate/peak.c — see peak.h. */
#include "peak.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nvml/nvml.h"
#include "util/clock.h"
#include "util/text.h"

void vram_peak_init(vram_peak *p, const struct vram_gpumem_ops *mem, const char *why) {
    memset(p, 0, sizeof *p);
    p->mem = mem;
    p->no_nvml = mem ? "" : (why && why[0] ? why : "NVML is not available");
    p->reported_device = -1;
}

void vram_peak_tick(vram_peak *p, pid_t group) {
    const vram_gpumem_ops *m = p->mem;
    uint64_t per[VRAM_PEAK_MAX_GPUS] = {0}, sum = 0;
    int ndev = 0, found = 0;
    double t = vram_now_s();
    if (m == NULL || group <= 0 || t < p->next_s) return;
    p->next_s = t + VRAM_PEAK_EVERY_S;
    if (m->device_count(m->ctx, &ndev) != VRAM_OK) return;
    if (ndev > VRAM_PEAK_MAX_GPUS) ndev = VRAM_PEAK_MAX_GPUS;
    for (int d = 0; d < ndev; d++) {
        vram_gpumem_proc procs[VRAM_GPUMEM_MAX_PROCS];
        int n = 0;
        if (m->processes(m->ctx, d, procs, VRAM_GPUMEM_MAX_PROCS, &n) != VRAM_OK) return;
        for (int i = 0; i < n; i++) {
            if (procs[i].used_bytes == VRAM_GPUMEM_UNKNOWN) continue;
            if (procs[i].pid != (uint32_t)group && getpgid((pid_t)procs[i].pid) != group) continue;
            per[d] += procs[i].used_bytes;
            found = 1;
        }
    }
    for (int d = 0; d < ndev; d++) {
        sum += per[d];
        if (per[d] > p->gpu_peak[d]) p->gpu_peak[d] = per[d];
    }
    p->last_total = sum;
    if (sum > p->total_peak) p->total_peak = sum;
    p->seen |= found;
    p->samples++;
}

/* A whole decimal number at *s, at most 2^64 - 1; advances *s. 0 when there is none. */
static int number(const char **s, uint64_t *out) {
    const char *q = *s;
    uint64_t v = 0;
    if (*q < '0' || *q > '9') return 0;
    for (; *q >= '0' && *q <= '9'; q++) {
        uint64_t dgt = (uint64_t)(*q - '0');
        if (v > (UINT64_MAX - dgt) / 10u) return 0;
        v = v * 10u + dgt;
    }
    *s = q;
    *out = v;
    return 1;
}

/* One line (NUL-terminated, without its newline). */
static void look_at(vram_peak *p, const char *s) {
    static const char pre[] = VRAM_PEAK_LINE;
    uint64_t bytes, dev = 0;
    int have_dev = 0;
    if (strncmp(s, pre, sizeof pre - 1) != 0) return;
    s += sizeof pre - 1;
    if (!number(&s, &bytes)) return;
    while (*s == ' ' || *s == '\t') s++;
    if (strncmp(s, "device=", 7) == 0) {
        s += 7;
        if (!number(&s, &dev) || dev >= VRAM_PEAK_MAX_GPUS) return;
        have_dev = 1;
    }
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (*s != '\0') return; /* anything else on the line: not a report */
    if (!p->reported || bytes >= p->reported_bytes) {
        p->reported_bytes = bytes;
        p->reported_device = have_dev ? (int)dev : -1;
    }
    p->reported = 1;
}

void vram_peak_output(vram_peak *p, const char *data, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (c == '\n') {
            p->line[p->line_len] = '\0';
            if (!p->line_skip) look_at(p, p->line);
            p->line_len = 0;
            p->line_skip = 0;
        } else if (p->line_len + 1 < sizeof p->line) {
            p->line[p->line_len++] = c;
        } else {
            p->line_skip = 1;
        }
    }
}

void vram_peak_finish(vram_peak *p) {
    vram_peak_output(p, "\n", p->line_len > 0 || p->line_skip ? 1u : 0u);
}

int vram_peak_gpu(const vram_peak *p) {
    int best = -1;
    if (!p->seen) return -1;
    for (int d = 0; d < VRAM_PEAK_MAX_GPUS; d++)
        if (p->gpu_peak[d] > 0 && (best < 0 || p->gpu_peak[d] > p->gpu_peak[best])) best = d;
    return best;
}

uint64_t vram_peak_bytes(const vram_peak *p) {
    uint64_t nv = p->seen ? p->total_peak : 0;
    uint64_t rep = p->reported ? p->reported_bytes : 0;
    return nv > rep ? nv : rep;
}

void vram_peak_json(vram_json *j, const vram_peak *p) {
    int g = vram_peak_gpu(p);
    vram_json_begin_object(j);
    vram_json_key_u64_or_null(j, "nvml_peak_bytes", p->seen, p->total_peak);
    vram_json_key_i64_or_null(j, "nvml_peak_gpu", g >= 0, g);
    vram_json_key_u64_or_null(j, "reported_peak_bytes", p->reported, p->reported_bytes);
    vram_json_key_i64_or_null(j, "reported_device", p->reported && p->reported_device >= 0,
                              p->reported_device);
    vram_json_key_u64(j, "samples", p->samples);
    vram_json_key_string(j, "source", p->mem ? "nvml" : "none");
    vram_json_key_string(j, "nvml_unavailable", p->mem ? NULL : p->no_nvml);
    vram_json_end_object(j);
}

void vram_peak_text(const vram_peak *p, char *buf, size_t cap) {
    char a[32], b[32], on[24] = "";
    int g = vram_peak_gpu(p);
    size_t n;
    if (g >= 0) snprintf(on, sizeof on, " on GPU %d", g);
    if (p->seen)
        snprintf(buf, cap, "measured peak: %s%s (NVML, %u sample%s)",
                 vram_fmt_size(p->total_peak, a, sizeof a), on, p->samples, p->samples == 1 ? "" : "s");
    else if (p->mem)
        snprintf(buf, cap, "measured peak: none on any GPU (NVML, %u sample%s)", p->samples,
                 p->samples == 1 ? "" : "s");
    else
        snprintf(buf, cap, "measured peak: not known (no NVML: %s)", p->no_nvml);
    n = strlen(buf);
    if (p->reported && n < cap)
        snprintf(buf + n, cap - n, "; the child reported %s", vram_fmt_size(p->reported_bytes, b, sizeof b));
}
