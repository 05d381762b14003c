/* SPDX-License-Identifier: MIT */
/* Process signals on the event loop: SIGTERM and SIGINT stop the daemon (drain, flush, finalize),
 * SIGHUP reloads the configuration; SIGPIPE is ignored so a vanished peer is a write error. */
#ifndef RECD_DAEMON_SIGNALS_H
#define RECD_DAEMON_SIGNALS_H

#include <stdbool.h>
#include <uv.h>

typedef void (*recd_signal_fn)(void *ctx);

typedef struct recd_signals {
    uv_signal_t term, intr, hup;
    recd_signal_fn on_stop, on_reload;
    void *ctx;
    bool started;
} recd_signals;

/* 0 or a libuv error. */
int recd_signals_start(recd_signals *sig, uv_loop_t *loop, recd_signal_fn on_stop,
                       recd_signal_fn on_reload, void *ctx);
/* Closes the handles (the loop must run once more to finish closing them). */
void recd_signals_close(recd_signals *sig);

#endif
