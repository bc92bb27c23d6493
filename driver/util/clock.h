/* driver/util/clock.h — the monotonic clock every part times with: deadlines, durations, the
 * sampling interval. CLOCK_MONOTONIC: never set back, not counting a suspend. */
#ifndef VRAMKIT_DRIVER_UTIL_CLOCK_H
#define VRAMKIT_DRIVER_UTIL_CLOCK_H

#include <stdint.h>

/* Seconds since an unspecified start, with the clock's resolution. */
double vram_now_s(void);
/* The same in nanoseconds, for intervals counted in whole units. */
uint64_t vram_now_ns(void);

#endif /* VRAMKIT_DRIVER_UTIL_CLOCK_H */
