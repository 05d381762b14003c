/* SPDX-License-Identifier: MIT */
/* Wall-clock time for file names and headers (the loop's monotonic clock is uv_now()). */
#ifndef RECD_DAEMON_CLOCK_H
#define RECD_DAEMON_CLOCK_H

#include <stdint.h>

int64_t recd_epoch_ms(void); /* Unix milliseconds */

#endif
