/* driver/stream/backend.c — see backend.h. */
#include "backend.h"

#include <stdio.h>
#include <string.h>

#include "cuda/cuda_device.h"
#include "device/host_device.h"
#include "util/text.h"

/* The device gather for a shuffled stream on a GPU: the kernels library's, when the driver is
 * built against it (its header is then on the include path); without it a shuffled stream on
 * a GPU is refused by the streamer with a message that says why. */
#if defined(VRAMKIT_HAVE_CUDA) && defined(__has_include)
#if __has_include(<vramkit_kernels.h>)
#include <vramkit_kernels.h>
#define DEVICE_GATHER vram_k_gather_rows
#endif
#endif
#ifndef DEVICE_GATHER
#define DEVICE_GATHER NULL
#endif

/* Is there a launcher's local rank to pick the GPU by? */
static int launched(const vram_ranks *r) {
    return r != NULL && r->launcher != VRAM_LAUNCHER_NONE && r->launcher != VRAM_LAUNCHER_FLAGS;
}

vram_status vram_stream_backend_open(vram_stream_device kind, int ordinal, const vram_ranks *ranks,
                                     vram_stream_backend *out, char *err, size_t cap) {
    memset(out, 0, sizeof *out);
    if (kind != VRAM_STREAM_DEVICE_CPU) {
        int count = 0;
        vram_status st = vram_cuda_ops(&out->ops);
        if (st == VRAM_OK) st = out->ops.device_count(out->ops.ctx, &count);
        if (st == VRAM_OK && count > 0) {
            vram_device_info info;
            /* one GPU a process, by the launcher's local rank */
            if ((kind == VRAM_STREAM_DEVICE_LOCAL || (kind == VRAM_STREAM_DEVICE_AUTO && launched(ranks))) &&
                (ranks == NULL || vram_ranks_gpu(ranks, count, &ordinal) != VRAM_OK))
                ordinal = 0;
            if (ordinal >= count)
                return vram_errorf(err, cap, VRAM_E_NO_DEVICE, "--device cuda:%d: this machine has %d GPU%s",
                                   ordinal, count, count == 1 ? "" : "s");
            out->cuda = 1;
            out->device = ordinal;
            out->gather = DEVICE_GATHER;
            if (out->ops.device_info(out->ops.ctx, ordinal, &info) == VRAM_OK)
                snprintf(out->label, sizeof out->label, "cuda:%d (%.40s)", ordinal, info.name);
            else
                snprintf(out->label, sizeof out->label, "cuda:%d", ordinal);
            return VRAM_OK;
        }
        if (kind != VRAM_STREAM_DEVICE_AUTO) {
            if (st == VRAM_E_NOT_BUILT)
                return vram_errorf(err, cap, st, "--device cuda:%d: this vramkit was built without CUDA",
                                   ordinal);
            return vram_errorf(err, cap, st == VRAM_OK ? VRAM_E_NO_DEVICE : st,
                               "--device cuda:%d: no usable GPU (%s)", ordinal,
                               st == VRAM_OK ? "no device" : vram_status_str(st));
        }
    }
    out->ops = vram_host_ops();
    out->device = 0;
    snprintf(out->label, sizeof out->label, "cpu (host memory)");
    return VRAM_OK;
}

vram_status vram_stream_backend_consumer(vram_stream_backend *b, vram_stream given, char *err,
                                         size_t cap) {
    vram_status st;
    if (!b->cuda) return VRAM_OK;
    if (given != NULL) {
        b->consumer = given;
        return VRAM_OK;
    }
    if ((st = b->ops.stream_create(b->ops.ctx, b->device, &b->consumer)) != VRAM_OK)
        return vram_errorf(err, cap, st, "%s: cannot create a stream: %s", b->label, vram_status_str(st));
    b->own_consumer = 1;
    return VRAM_OK;
}

void vram_stream_backend_close(vram_stream_backend *b) {
    if (b->own_consumer) (void)b->ops.stream_destroy(b->ops.ctx, b->consumer);
    b->own_consumer = 0;
    b->consumer = NULL;
}
