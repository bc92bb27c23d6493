/* Gradient clipping across ranks (vram_comm_clip_grad_norm over MPI) against one process on
 * the concatenated gradients (the same call over the single-process table): the norm, the
 * coefficient and every clipped gradient agree; an inf on one rank makes every rank skip; and
 * vram_comm_average gives the mean of the ranks' gradients. */
#include <math.h>
#include <string.h>

#include "mpi_check.h"

#define TENSORS 3

static uint64_t size_of(int rank, int t) { return t == 0 ? 100u + 37u * (uint64_t)rank : t == 1 ? 4096u : 7u; }

/* a deterministic value of element e of tensor t on rank r, spread over magnitudes */
static float value(int r, int t, uint64_t e) {
    uint64_t x = ((uint64_t)r * 1000003u + (uint64_t)t * 7919u + e) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    float u = (float)(x % 2000001u) / 1000000.0f - 1.0f; /* [-1, 1] */
    return u * (t == 2 ? 1000.0f : 3.0f);
}

static float *make(int r, int t) {
    uint64_t n = size_of(r, t);
    float *g = (float *)malloc(n * sizeof(float));
    for (uint64_t e = 0; e < n; e++) g[e] = value(r, t, e);
    return g;
}

static int close_to(float a, float b) {
    return a == b || fabsf(a - b) <= 2e-7f * fmaxf(fabsf(a), fabsf(b));
}

static void one_case(const vram_comm_ops *c, float inv_scale, float max_norm, int poison) {
    float *mine[TENSORS];
    uint64_t counts[TENSORS];
    for (int t = 0; t < TENSORS; t++) {
        mine[t] = make(c->rank, t);
        counts[t] = size_of(c->rank, t);
    }
    if (poison && c->rank == c->world - 1) mine[0][3] = INFINITY;
    /* the one-process reference: every rank's tensors, in rank order */
    vram_comm_ops single;
    CHECK(vram_comm_single(&single) == VRAM_OK, "single");
    float *all[TENSORS * 16];
    uint64_t all_counts[TENSORS * 16];
    int k = 0;
    for (int r = 0; r < c->world && r < 16; r++)
        for (int t = 0; t < TENSORS; t++) {
            all[k] = make(r, t);
            all_counts[k] = size_of(r, t);
            if (poison && r == c->world - 1 && t == 0) all[k][3] = INFINITY;
            k++;
        }
    float rnorm = 0, rcoef = 0, rinf = 0, norm = 0, coef = 0, inf = 0;
    CHECK(vram_comm_clip_grad_norm(&single, all, all_counts, (size_t)k, inv_scale, max_norm, &rnorm,
                                   &rcoef, &rinf) == VRAM_OK, "reference");
    vram_status st = vram_comm_clip_grad_norm(c, mine, counts, TENSORS, inv_scale, max_norm, &norm,
                                              &coef, &inf);
    CHECK(st == VRAM_OK, "clip: %s (%s)", vram_status_str(st), c->last_error(c->ctx));
    CHECK(close_to(norm, rnorm) || (isnan(norm) && isnan(rnorm)), "norm %.9g, one process %.9g",
          (double)norm, (double)rnorm);
    CHECK(close_to(coef, rcoef), "coef %.9g, one process %.9g", (double)coef, (double)rcoef);
    CHECK(inf == rinf, "found_inf %g, one process %g", (double)inf, (double)rinf);
    if (poison) CHECK(inf == 1.0f, "an inf on rank %d must make every rank skip", c->world - 1);
    if (!poison && max_norm < rnorm) CHECK(coef < 1.0f, "the case clips");
    uint64_t off = 0;
    for (int t = 0; t < TENSORS; t++) {
        const float *ref = all[c->rank * TENSORS + t];
        uint64_t bad = 0;
        for (uint64_t e = 0; e < counts[t]; e++)
            bad += !(close_to(mine[t][e], ref[e]) || (isinf(mine[t][e]) && isinf(ref[e])));
        CHECK(bad == 0, "tensor %d: %llu gradients differ from the one-process result", t,
              (unsigned long long)bad);
        off += counts[t];
        free(mine[t]);
    }
    for (int i = 0; i < k; i++) free(all[i]);
}

int main(void) {
    vram_comm_ops c = check_comm();
    one_case(&c, 1.0f, 1.0f, 0);            /* clips */
    one_case(&c, 1.0f / 1024.0f, 0.5f, 0);  /* the loss scale's inverse folded in */
    one_case(&c, 1.0f, 1e30f, 0);           /* no clipping: coef 1 */
    one_case(&c, 1.0f, 1.0f, 1);            /* an inf on one rank */

    /* gradient averaging: rank r holds (r + 1) * g; the mean is (world + 1) / 2 * g */
    float g[1000], want[1000];
    for (int i = 0; i < 1000; i++) {
        g[i] = (float)(c.rank + 1) * value(0, 1, (uint64_t)i);
        want[i] = (float)(c.world + 1) / 2.0f * value(0, 1, (uint64_t)i);
    }
    CHECK(vram_comm_average(&c, g, 1000) == VRAM_OK, "average: %s", c.last_error(c.ctx));
    int bad = 0;
    for (int i = 0; i < 1000; i++) bad += fabsf(g[i] - want[i]) > 1e-6f * fmaxf(1.0f, fabsf(want[i]));
    CHECK(bad == 0, "%d averaged gradients are not the mean", bad);
    return check_finish(&c);
}
