/* driver/doctor/doctor_run.h — `doctor` as a function: the facts gathered (doctor.h), the
 * findings of vramkit/diagnose.h, the verdict, and for a model (--model or --need) the preset
 * that fits the usable GPU with the most room. Its JSON document and the findings' words are
 * written here, for the CLI and Python alike. Prints nothing. */
#ifndef VRAMKIT_DRIVER_DOCTOR_RUN_H
#define VRAMKIT_DRIVER_DOCTOR_RUN_H

#include <stddef.h>

#include <vramkit/diagnose.h>
#include <vramkit/estimate.h>

#include "doctor.h"
#include "util/json.h"

/* Kept free on the GPU for other tenants' growth, as estimate and plan keep it. */
#define VRAM_DOCTOR_MARGIN (256u * VRAM_MIB)

/* Zero means the real machine and no model. */
typedef struct vram_doctor_opts {
    vram_doctor_config cfg; /* the machine's sources (tests inject the mock) */
    int probe;              /* --probe */
    const char *model;      /* --model */
    vram_workload w;        /* its workload */
    int workload_given;
    uint64_t need;          /* --need */
    int need_given;
    const char *arch;       /* --arch */
} vram_doctor_opts;

/* Applies option `name` ("probe", "model", "need", "arch", or a workload option) with its
 * value. VRAM_OK; VRAM_E_INVALID with err one line naming the option; VRAM_E_UNHANDLED for
 * another name. */
vram_status vram_doctor_set(vram_doctor_opts *o, const char *name, const char *arg, char *err,
                            size_t cap);
/* After the options: --model and --need not both, workload options only with --model. */
vram_status vram_doctor_check(const vram_doctor_opts *o, char *err, size_t cap);

typedef struct vram_doctor_result {
    vram_doctor_report rep;
    vram_finding fs[VRAM_DIAG_MAX_FINDINGS]; /* most severe first */
    size_t nf;
    int usable;            /* usable GPUs */
    int exit_code;         /* 0 ready, 1 an error-level finding, 3 no usable GPU */
    const char *headline;  /* why no GPU can be used (exit_code 3) */
    /* the model of --model or --need */
    int model_given;
    char label[512];       /* the model's name, or "the model (--need)" */
    uint64_t need;         /* expected bytes */
    int rec_ok;            /* rec is filled */
    vram_recommendation rec;
    int rec_device;        /* GPU the preset is for; -1: the CPU */
} vram_doctor_result;

/* Runs the checkup. Requires o, r valid (r is large: allocate it). VRAM_OK with *r; else a
 * status and err one line: the model's errors (vram_model_find, the estimate), VRAM_E_INVALID
 * for an architecture list that does not parse, VRAM_E_NOMEM. */
vram_status vram_doctor_run(const vram_doctor_opts *o, vram_doctor_result *r, char *err, size_t cap);

/* The result as one JSON object: version, verdict, headline, exit_code, driver, runtime,
 * platform, environment, devices (with their probes), model, findings, counts. */
void vram_doctor_json(vram_json *j, const vram_doctor_result *r);

/* Words the text and the JSON share. */
const char *vram_doctor_compute_mode_name(long long mode);
const char *vram_doctor_tristate_name(long long v); /* "yes", "no", "unknown" */
void vram_doctor_cuda_version(long long v, char *buf, size_t cap); /* "13.0", "none" */
/* A finding's summary and remedy with their placeholders filled, and "name value, ..." of its
 * evidence. */
void vram_doctor_finding_text(const vram_finding *f, char *summary, size_t scap, char *remedy,
                              size_t rcap, char *evidence, size_t ecap);

#endif /* VRAMKIT_DRIVER_DOCTOR_RUN_H */
