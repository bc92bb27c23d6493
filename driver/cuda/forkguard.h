/* driver/cuda/forkguard.h — CUDA state does not survive fork(); say so instead of crashing.
 * A pthread_atfork child handler notes that this process is a fork of one that had
 * initialised CUDA through vramkit; a guarded device table then answers every call in
 * that child with VRAM_E_FORKED ("use spawn/exec, or initialise CUDA after the fork"). */
#ifndef VRAMKIT_FORKGUARD_H
#define VRAMKIT_FORKGUARD_H

#include <vramkit/device.h>

/* What cudart itself reports for a context a fork did not carry over
 * (cudaErrorInitializationError): the guarded table's last_error says it in a tripped child. */
#define VRAM_FORK_GUARD_CUDA_CODE 3

/* Registers the pthread_atfork child handler, once per process (later calls and calls from
 * other threads return the first result). Guarantees: VRAM_OK, or VRAM_E_STATE when
 * pthread_atfork refused (out of memory). */
vram_status vram_fork_guard_install(void);

/* The CUDA backend calls this once it has initialised CUDA in this process (the first
 * successful runtime or driver call); it installs the guard too. From then on a fork of
 * this process is a process where CUDA cannot work. Thread-safe, idempotent. */
vram_status vram_fork_guard_note_init(void);

/* 1 in a process forked (at any depth) from one that had noted a CUDA initialisation,
 * else 0. Async-signal-safe. */
int vram_fork_guard_tripped(void);

/* VRAM_E_FORKED when tripped, else VRAM_OK: for driver code that talks to CUDA without
 * going through a device table. */
vram_status vram_fork_guard_check(void);

/* The wrapper's state: a copy of the inner table. Owned by the caller; must outlive the
 * guarded table. */
typedef struct vram_fork_guarded {
    vram_device_ops inner;
} vram_fork_guarded;

/* Makes *out a table that calls through to *inner, except in a tripped child, where every
 * slot returns VRAM_E_FORKED without touching the inner table (last_error returns
 * VRAM_FORK_GUARD_CUDA_CODE). out->backend and out->flags are inner's, out->ctx is g. Installs the guard.
 * Requires: inner passes vram_device_ops_check; g and out valid.
 * Guarantees: VRAM_OK, or the vram_device_ops_check error (then *g and *out untouched),
 * or VRAM_E_STATE when the guard cannot be installed. */
vram_status vram_fork_guard_wrap(const vram_device_ops *inner, vram_fork_guarded *g,
                                 vram_device_ops *out);

#endif /* VRAMKIT_FORKGUARD_H */
