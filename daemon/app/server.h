/* SPDX-License-Identifier: MIT */
/* The recd daemon's app layer: one libuv loop, the layers below it (ingest, record, write) wired
 * together through their callbacks, and the lifecycle around them: startup recovery of .part
 * files, binding, readiness, reload, watchdog, retention, and on SIGTERM a drain that reads open
 * connections to their end, then flushes and finalizes every file before the process exits. */
#ifndef RECD_DAEMON_SERVER_H
#define RECD_DAEMON_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "ingest/listener.h"
#include "record/sessions.h"
#include "server_options.h"
#include "support/config.h"
#include "support/http_server.h"
#include "support/loop_lag.h"
#include "support/metrics.h"
#include "support/signals.h"
#include "write/heap.h"
#include "write/writer.h"

typedef struct recd_server recd_server;

typedef enum server_phase {
    SERVER_RUNNING = 0,
    SERVER_DRAINING,   /* SIGTERM: no new connections; open ones are read until EOF or timeout */
    SERVER_FINALIZING, /* every session is being flushed and finalized */
    SERVER_CLOSING     /* handles are closing; the loop ends when they are */
} server_phase;

struct recd_server {
    uv_loop_t *loop;
    recd_config cfg;
    const recd_cli *cli; /* reapplied on reload */
    server_phase phase;
    int exit_code;

    recd_daemon_metrics metrics;
    recd_http_server *http;
    int metrics_port; /* bound port, -1 when off */
    struct console *console; /* the web console on it (console.h), or NULL */

    writer_stage writer;
    int root_fd;
    int retired_root_fd;  /* a removed root's fd, closed once no job can be using it, or -1 */
    bool root_lost;       /* the output root was removed and is not back yet */
    uint64_t root_checked_ms;
    recd_sessions sessions; /* the record layer */
    recd_ingest ingest;     /* the ingest layer */
    heap_release heap; /* when freed memory goes back to the kernel (heap.h) */

    uv_timer_t tick_timer, retention_timer, watchdog_timer, drain_timer;
    uint64_t tick_period_ms;
    bool retention_running;
    uint64_t drain_started_ms;    /* when the stop signal came */
    uint64_t shutdown_said_ms;    /* when the shutdown last said what it waits for */
    unsigned base_umask;          /* the umask recd started with */
    recd_signals signals;
    loop_lag lag; /* recd_loop_lag_seconds */
};

/* Runs the daemon until it has shut down. Takes cfg over. Returns the process exit code. */
int recd_server_run(recd_config *cfg, const recd_cli *cli);

/* The app layer's own files (server.c, server_reload.c, server_retention.c, server_timers.c,
 * server_setup.c, server_root_watch.c). */
void server_reload(recd_server *s);   /* SIGHUP */
void server_run_retention(recd_server *s); /* on the thread pool; one run at a time */
void server_watch_root(recd_server *s, uint64_t now); /* from the tick: a removed root */
/* Tries to create a file under the output root: when permissions forbid it, opens of new sessions
 * are refused and /healthz says why, until a later probe succeeds (at start, then with every
 * check of the root from the tick). */
void server_probe_root(recd_server *s);
int server_start_timers(recd_server *s);    /* tick, retention, watchdog; 0 or a libuv error */
void server_retune_tick(recd_server *s);   /* after flush.interval changed */
void server_apply_modes(recd_server *s);   /* output.file_mode / dir_mode through the umask */
/* True when a socket passed by systemd already serves cfg (recd does not bind it again). */
bool server_activated_covers(const recd_server *s, const recd_listen_config *cfg);
void server_announce_listener(recd_server *s, const recd_listener *l); /* log + --print-ports */
/* Loads the TLS context the configuration needs (tls.cert and tls.key set, or a tls:// listener
 * or metrics.tls asking for them); *out NULL when none. 0 or a negative errno with why. */
int server_tls_context(const recd_config *cfg, struct tls_server_ctx **out, char *why, size_t cap);

#endif
