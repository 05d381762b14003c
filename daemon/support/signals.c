/* SPDX-License-Identifier: MIT */
/* SIGTERM/SIGINT/SIGHUP delivered as libuv signal handles (see signals.h). */
#include "signals.h"

#include <signal.h>
#include <string.h>

static void on_signal(uv_signal_t *h, int signum)
{
    recd_signals *sig = h->data;
    if (signum == SIGHUP)
        sig->on_reload(sig->ctx);
    else
        sig->on_stop(sig->ctx);
}

int recd_signals_start(recd_signals *sig, uv_loop_t *loop, recd_signal_fn on_stop,
                       recd_signal_fn on_reload, void *ctx)
{
    memset(sig, 0, sizeof *sig);
    sig->on_stop = on_stop;
    sig->on_reload = on_reload;
    sig->ctx = ctx;
    signal(SIGPIPE, SIG_IGN);
    uv_signal_t *handles[] = {&sig->term, &sig->intr, &sig->hup};
    int signums[] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        int rc = uv_signal_init(loop, handles[i]);
        if (rc < 0) {
            for (int j = 0; j < i; j++)
                uv_close((uv_handle_t *)handles[j], NULL);
            return rc;
        }
        handles[i]->data = sig;
        rc = uv_signal_start(handles[i], on_signal, signums[i]);
        if (rc < 0) {
            for (int j = 0; j <= i; j++)
                uv_close((uv_handle_t *)handles[j], NULL);
            return rc;
        }
    }
    sig->started = true;
    return 0;
}

void recd_signals_close(recd_signals *sig)
{
    if (!sig->started)
        return;
    sig->started = false;
    uv_close((uv_handle_t *)&sig->term, NULL);
    uv_close((uv_handle_t *)&sig->intr, NULL);
    uv_close((uv_handle_t *)&sig->hup, NULL);
}
