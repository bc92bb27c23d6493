/* vramkit/vramkit.h — the whole header-only core in one include.
 * Vendoring is `-I include` and `#include <vramkit/vramkit.h>`; nothing to link.
 * C11 and C++ (17 and newer) alike. */
#ifndef VRAMKIT_VRAMKIT_H
#define VRAMKIT_VRAMKIT_H

#include "base.h"
#include "cudaerr.h"
#include "device.h"
#include "comm.h"
#include "chunks.h"
#include "ranks.h"
#include "scaler.h"
#include "kref.h"
#include "attempt.h"
#include "supervise.h"
#include "dtype.h"
#include "model.h"
#include "estimate.h"
#include "layout.h"
#include "strategy.h"
#include "place.h"
#include "plan.h"
#include "diagnose.h"
#include "emit.h"
#include "monitor.h"

#endif /* VRAMKIT_VRAMKIT_H */
