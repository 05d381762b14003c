/* SPDX-License-Identifier: MIT */
/* Loop lag: how long each event-loop iteration kept the loop from polling its sockets (the time
 * from the start of one iteration to the start of the next, less the time it slept in the
 * poll), observed into the recd_loop_lag_seconds histogram. A long iteration is a stall: a UDP
 * socket is not read during it, and at high rates its receive buffer overflows. */
#ifndef RECD_DAEMON_LOOP_LAG_H
#define RECD_DAEMON_LOOP_LAG_H

#include <stdint.h>
#include <uv.h>

#include "metrics.h"

typedef struct loop_lag {
    uv_prepare_t prepare;
    recd_metric *histogram;
    uint64_t last_ns;      /* uv_hrtime() at the previous iteration's prepare phase, 0 before */
    uint64_t last_idle_ns; /* uv_metrics_idle_time() then */
    uint64_t max_ns;       /* longest busy stretch seen (tests, logs) */
    int started;
} loop_lag;

/* Turns on the loop's idle-time accounting; call before the loop first runs. 0 or a libuv error. */
int loop_lag_configure(uv_loop_t *loop);
/* Starts observing into histogram (recd_loop_lag_seconds). The handle does not keep the loop
 * alive. 0 or a libuv error. */
int loop_lag_start(loop_lag *l, uv_loop_t *loop, recd_metric *histogram);
void loop_lag_close(loop_lag *l);

#endif
