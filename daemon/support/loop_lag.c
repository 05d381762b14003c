/* SPDX-License-Identifier: MIT */
/* Loop-lag measurement from the loop's prepare phase (see loop_lag.h). */
#include "loop_lag.h"

int loop_lag_configure(uv_loop_t *loop) { return uv_loop_configure(loop, UV_METRICS_IDLE_TIME); }

/* Runs once per iteration, just before the poll: the time since the last call, less what the
 * poll slept in between, is how long the loop was busy with callbacks, timers and closes. */
static void on_prepare(uv_prepare_t *p)
{
    loop_lag *l = p->data;
    uint64_t now = uv_hrtime(), idle = uv_metrics_idle_time(p->loop);
    if (l->last_ns) {
        uint64_t span = now - l->last_ns, slept = idle - l->last_idle_ns;
        uint64_t busy = span > slept ? span - slept : 0;
        if (busy > l->max_ns)
            l->max_ns = busy;
        recd_metric_observe(l->histogram, 0, (double)busy / 1e9);
    }
    l->last_ns = now;
    l->last_idle_ns = idle;
}

int loop_lag_start(loop_lag *l, uv_loop_t *loop, recd_metric *histogram)
{
    l->histogram = histogram;
    l->last_ns = 0;
    int rc = uv_prepare_init(loop, &l->prepare);
    if (rc < 0)
        return rc;
    l->prepare.data = l;
    l->started = 1;
    uv_unref((uv_handle_t *)&l->prepare);
    return uv_prepare_start(&l->prepare, on_prepare);
}

void loop_lag_close(loop_lag *l)
{
    if (l->started && !uv_is_closing((uv_handle_t *)&l->prepare))
        uv_close((uv_handle_t *)&l->prepare, NULL);
}
