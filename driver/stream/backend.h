/* driver/stream/backend.h — the device a stream runs on, chosen and opened in one place: host
 * memory, or a GPU through the CUDA backend (the one asked for, or the launcher's local rank
 * modulo the GPUs), with the device gather of the kernels library when it is built and the
 * consumer's stream (given, or made here). What `vramkit stream` and the Python streamer
 * share. Prints nothing. */
#ifndef VRAMKIT_DRIVER_STREAM_BACKEND_H
#define VRAMKIT_DRIVER_STREAM_BACKEND_H

#include <stddef.h>

#include <vramkit/device.h>
#include <vramkit/ranks.h>

#include "stream.h"

typedef enum vram_stream_device {
    VRAM_STREAM_DEVICE_AUTO = 0, /* a GPU when one can be used (the local rank's under a
                                    launcher, else `ordinal`), else host memory */
    VRAM_STREAM_DEVICE_CPU,      /* host memory */
    VRAM_STREAM_DEVICE_CUDA,     /* cuda:ordinal */
    VRAM_STREAM_DEVICE_LOCAL     /* the GPU of the local rank (cuda:0 without a launcher) */
} vram_stream_device;

typedef struct vram_stream_backend {
    vram_device_ops ops;
    int cuda;             /* 1: a GPU (ops is the CUDA backend) */
    int device;           /* the ordinal on ops (0 for host memory) */
    char label[64];       /* "cpu (host memory)" or "cuda:0 (NVIDIA H100 80GB HBM3)" */
    vram_gather_fn gather; /* the device gather of the kernels library (GPU; NULL without) */
    vram_stream consumer; /* the consumer's stream on a GPU (NULL on the host) */
    int own_consumer;     /* made by vram_stream_backend_consumer */
} vram_stream_backend;

/* Opens the device. VRAM_OK with *out; else a status and err one line naming --device:
 * VRAM_E_NO_DEVICE (no such GPU), VRAM_E_NOT_BUILT (a build without CUDA), the backend's
 * failure. */
vram_status vram_stream_backend_open(vram_stream_device kind, int ordinal, const vram_ranks *ranks,
                                     vram_stream_backend *out, char *err, size_t cap);

/* On a GPU: the consumer's stream, `given` or (NULL) one made here. VRAM_OK, or the failure
 * with err. Nothing on the host. */
vram_status vram_stream_backend_consumer(vram_stream_backend *b, vram_stream given, char *err,
                                         size_t cap);

/* Destroys what was made here (the consumer's stream). */
void vram_stream_backend_close(vram_stream_backend *b);

#endif /* VRAMKIT_DRIVER_STREAM_BACKEND_H */
