/* SPDX-License-Identifier: MIT */
/* The daemon's lifecycle: startup (output root, recovery of .part files, metrics endpoint,
 * listeners, READY=1), the periodic timers (flush/rotation tick, retention, watchdog), and the
 * shutdown sequence (STOPPING=1, drain, finalize every session, close every handle). */
#include "server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/nats_connect.h"
#include "recd/recovery.h"
#include "record/seek_index_recover.h"
#include "recd/units.h"
#include "console.h"
#include "record/part_manifest.h"
#include "record/session_formats.h"
#include "support/clock.h"
#include "support/log.h"
#include "support/tls_server.h"
#include "support/sd_notify.h"

#define HEALTH_ERROR_WINDOW_MS 60000u /* a write error makes /healthz fail this long */
#define HTTP_HEADER_TIMEOUT_MS 2000u  /* a monitoring request must arrive within this */
#define HTTP_HEALTH_RESERVE 4u        /* connections beyond the 16 kept for GET /healthz */


/* ---- startup --------------------------------------------------------------------------------- */

/* Each stream connection is a descriptor: the soft limit (often 1024) is raised to the hard one so
 * that limits.max_connections, not EMFILE, decides which connections are kept. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
        return;
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        log_warn("cannot raise the open file limit from %llu to %llu: %s", (unsigned long long)was,
                 (unsigned long long)rl.rlim_max, strerror(errno));
    else
        log_debug("open file limit raised from %llu to %llu", (unsigned long long)was,
                  (unsigned long long)rl.rlim_max);
}

static void recover(recd_server *s)
{
    recd_recover_options opt;
    memset(&opt, 0, sizeof opt);
    recd_recover_summary sum;
    memset(&sum, 0, sizeof sum);
    int rc = recd_recover_root(s->root_fd, &opt, &sum);
    for (size_t i = 0; i < sum.count; i++) {
        const recd_recover_file *f = &sum.files[i];
        switch (f->action) {
        case RECD_RECOVER_FINALIZED:
            log_info("recovery: %s -> %s (%s, kept %llu, dropped %llu bytes)", f->part, f->final,
                     f->kind, (unsigned long long)f->size_after, (unsigned long long)f->bytes_dropped);
            break;
        case RECD_RECOVER_REMOVED: log_info("recovery: removed %s (%s)", f->part, f->message); break;
        case RECD_RECOVER_QUARANTINED:
            log_warn("recovery: %s is not a recording: moved to %s (%s)", f->part, f->final, f->message);
            break;
        case RECD_RECOVER_FAILED:
            log_err("recovery: %s left as it is: %s (%s)", f->part, f->message, recd_strerror(f->error));
            break;
        }
    }
    if (rc < 0)
        log_err("recovery: scanning %s failed: %s", s->cfg.output.root, recd_strerror(rc));
    else if (sum.found)
        log_notice("recovery: %zu .part files: %zu finalized, %zu removed, %zu quarantined, %zu failed",
                   sum.found, sum.finalized, sum.removed, sum.quarantined, sum.failed);
    int mrc = rc >= 0 ? part_manifests_recover(s->root_fd, &sum) : 0;
    int src = rc >= 0 ? seek_indexes_recover(s->root_fd, &sum) : 0;
    if (src < 0)
        log_err("recovery: scanning %s for seek indexes failed: %s", s->cfg.output.root,
                recd_strerror(src));
    if (mrc < 0)
        log_err("recovery: scanning %s for part manifests failed: %s", s->cfg.output.root,
                recd_strerror(mrc));
    recd_recover_summary_free(&sum);
    /* What the formats left unfinished (manifests...), now that their parts are final. */
    sessions_recover_root(s->root_fd);
}

/* /healthz: each failing check with its reason (docs/operations.md). */
static void health(void *ctx, recd_health_report *r)
{
    recd_server *s = ctx;
    uint64_t now = uv_now(s->loop);
    uint64_t last = s->sessions.last_write_error_ms;
    char why[400];
    if (ingest_nats_unhealthy(&s->ingest, why, sizeof why))
        recd_health_fail(r, "nats", "%s", why);
    if (s->root_lost)
        recd_health_fail(r, "output_root",
                         "the output root %s was removed or replaced: files cannot be written until it "
                         "is there again",
                         s->cfg.output.root);
    else if (s->sessions.root_refusal[0])
        recd_health_fail(r, "output_root", "%s: new sessions are refused until it can",
                         s->sessions.root_refusal);
    else if (last && now - last < HEALTH_ERROR_WINDOW_MS)
        recd_health_fail(r, "writes",
                         "a write to a recording file failed %llu s ago (recd_write_errors_total has the "
                         "reason; this check fails for %u s after each write error)",
                         (unsigned long long)((now - last) / 1000), HEALTH_ERROR_WINDOW_MS / 1000);
}

/* Gauges kept as plain loop-thread counters are published when scraped (same thread). */
static void refresh_metrics(void *ctx)
{
    recd_server *s = ctx;
    recd_metric_set(s->metrics.buffered_bytes, 0, (int64_t)s->sessions.env.buffered);
    recd_metric_set(s->metrics.partial_frame_bytes, 0, (int64_t)s->ingest.partial_bytes);
    recd_metric_set(s->metrics.session_state_bytes, 0, (int64_t)s->sessions.env.held);
    recd_metric_set(s->metrics.ring_bytes, 0, (int64_t)s->sessions.env.ring_bytes);
    recd_metric_set(s->metrics.ring_sessions, 0, (int64_t)s->sessions.env.ring_sessions);
    recd_metric_set(s->metrics.connections_open, 0, (int64_t)s->ingest.live_conns);
    ingest_nats_refresh_metrics(&s->ingest);
    recd_metrics_refresh_process(&s->metrics);
}

/* Who may ask for a save: loopback clients (with the token when one is set), others only over
 * HTTPS with metrics.remote_save; a client certificate that verified counts like the token. The
 * refusal's status with text, or 0. */
static int save_refusal(const recd_server *s, const recd_http_save_request *q, char *text, size_t cap)
{
    const char *token = s->cfg.auth.token;
    bool token_ok = token && q->authorization && strncmp(q->authorization, "Bearer ", 7) == 0 &&
                    strcmp(q->authorization + 7, token) == 0;
    bool credential = token_ok || q->client_cert;
    if (!q->peer_loopback && (!s->cfg.metrics.remote_save || !q->tls || !credential)) {
        snprintf(text, cap, "saves are taken from loopback clients only (metrics.remote_save allows "
                            "others over HTTPS, metrics.tls, with auth.token or a client certificate)");
        return 403;
    }
    if (token && !credential) {
        snprintf(text, cap, "missing or wrong token: send \"Authorization: Bearer TOKEN\"");
        return 401;
    }
    return 0;
}

/* POST /sessions/KEY/save?last=DUR[&label=LABEL] (instant replay, docs/protocol.md 2.10). */
static int http_save(void *ctx, const recd_http_save_request *q, char *text, size_t cap)
{
    recd_server *s = ctx;
    int refused = save_refusal(s, q, text, cap);
    if (refused)
        return refused;
    if (!recd_session_key_valid(q->key, strlen(q->key))) {
        snprintf(text, cap, "no such session");
        return 404;
    }
    uint64_t ms = 0;
    const char *why = NULL;
    if (!q->last || recd_parse_duration_ms(q->last, &ms, &why) < 0 || ms == 0 || ms > UINT32_MAX) {
        snprintf(text, cap, "last=DURATION is required, 1ms to 49d (30s, 2m)%s%s", why ? ": " : "",
                 why ? why : "");
        return 400;
    }
    char label[RECD_SESSION_KEY_MAX + 1];
    if (q->label) {
        if (!recd_session_key_valid(q->label, strlen(q->label))) {
            snprintf(text, cap, "label: 1..64 bytes of A-Z a-z 0-9 . _ - (not starting with '.')");
            return 400;
        }
        snprintf(label, sizeof label, "%s", q->label);
    } else {
        snprintf(label, sizeof label, "replay-%lld", (long long)recd_epoch_ms());
    }
    char reason[300];
    int rc = sessions_save(&s->sessions, q->key, (uint32_t)ms, label, reason, sizeof reason);
    if (rc == 0) {
        snprintf(text, cap, "saved %s", label);
        return 200;
    }
    snprintf(text, cap, "%s", rc == -ENOMEM ? "out of memory" : reason);
    return rc == -ENOENT ? 404 : rc == -EBADMSG ? 409 : 503;
}

static int start_metrics(recd_server *s)
{
    s->metrics_port = -1;
    if (!s->cfg.metrics.enabled)
        return 0;
    recd_http_options opt;
    memset(&opt, 0, sizeof opt);
    opt.metrics = s->metrics.registry;
    opt.health = health;
    opt.health_ctx = s;
    opt.before_metrics = refresh_metrics;
    opt.metrics_ctx = s;
    opt.save = http_save;
    opt.save_ctx = s;
    if (console_start(s, &opt) < 0)
        return -ENOMEM;
    /* Hanging clients must not starve liveness probes (docs/reliability.md, "Hostile peers"). */
    opt.header_timeout_ms = HTTP_HEADER_TIMEOUT_MS;
    opt.health_reserve = HTTP_HEALTH_RESERVE;
    opt.tls = s->cfg.metrics.tls ? (struct tls_server_ctx *const *)&s->ingest.tls : NULL;
    const recd_hostport *hp = &s->cfg.metrics.listen;
    int rc = recd_http_server_start(s->loop, hp->host, hp->port, &opt, &s->http);
    if (rc < 0) {
        log_crit("cannot serve metrics on %s%s%s:%u: %s", hp->family == AF_INET6 ? "[" : "", hp->host,
                 hp->family == AF_INET6 ? "]" : "", hp->port, recd_strerror(rc));
        return rc;
    }
    s->metrics_port = recd_http_server_port(s->http);
    const char *l = hp->family == AF_INET6 ? "[" : "", *r = hp->family == AF_INET6 ? "]" : "";
    log_info("metrics on %s://%s%s%s:%d/metrics", opt.tls ? "https" : "http", l, hp->host, r,
             s->metrics_port);
    if (s->cli && s->cli->print_ports) {
        printf("metrics %s%s%s:%d\n", l, hp->host, r, s->metrics_port);
        fflush(stdout);
    }
    return 0;
}

static int start_listeners(recd_server *s)
{
    recd_sd_listen_fd *fds = NULL;
    char why[512];
    int n = recd_sd_listen_fds(true, &fds);
    if (n < 0) {
        log_crit("socket activation: %s", recd_strerror(n));
        return n;
    }
    for (int i = 0; i < n; i++) {
        recd_listener *l;
        int rc = listener_adopt(&s->ingest, &fds[i], &l, why, sizeof why);
        if (rc < 0) {
            log_crit("socket activation: %s", why);
            free(fds);
            return rc;
        }
        server_announce_listener(s, l);
    }
    free(fds);
    for (size_t i = 0; i < s->cfg.listen_count; i++) {
        const recd_listen_config *cfg = &s->cfg.listen[i];
        if (server_activated_covers(s, cfg))
            continue;
        recd_listener *l;
        int rc = listener_open(&s->ingest, cfg, &l, why, sizeof why);
        if (rc < 0) {
            char shown[220]; /* a nats:// URL's password or token as *** */
            recd_nats_redacted(cfg->url, shown, sizeof shown);
            log_crit("cannot listen on %s: %s", shown, why);
            return rc;
        }
        server_announce_listener(s, l);
    }
    if (LIST_EMPTY(&s->ingest.listeners))
        log_warn("no listeners: nothing can be recorded (listen is empty and no sockets were passed)");
    return 0;
}


/* ---- shutdown -------------------------------------------------------------------------------- */

static void close_timer(uv_timer_t *t)
{
    if (t->loop && !uv_is_closing((uv_handle_t *)t))
        uv_close((uv_handle_t *)t, NULL);
}

static void finish_close(recd_server *s)
{
    if (s->phase == SERVER_CLOSING)
        return;
    s->phase = SERVER_CLOSING;
    close_timer(&s->tick_timer);
    close_timer(&s->retention_timer);
    close_timer(&s->watchdog_timer);
    close_timer(&s->drain_timer);
    loop_lag_close(&s->lag);
    ingest_stop(&s->ingest);
    recd_signals_close(&s->signals);
    if (s->http) {
        recd_http_server_close(s->http, NULL, NULL);
        s->http = NULL;
    }
    console_stop(s);
    ingest_close_listeners(&s->ingest);
    ingest_nats_close_all(&s->ingest);
    const recd_sessions *r = &s->sessions;
    if (r->parts_left || r->bytes_lost || r->parts_vanished) {
        /* The exit status says it too: a supervisor or script must not take this for a clean stop. */
        log_err("stopped with write errors: %llu files left as .part (recovered at the next "
                "start), %llu files removed behind recd's back (what they held is gone), %llu "
                "accepted bytes never written",
                (unsigned long long)r->parts_left, (unsigned long long)r->parts_vanished,
                (unsigned long long)r->bytes_lost);
        recd_sd_notify_status("stopped with write errors");
        s->exit_code = 1;
        return;
    }
    log_notice("stopped: every file is finalized");
    recd_sd_notify_status("stopped");
}

static void drain_done(recd_server *s)
{
    if (s->phase != SERVER_DRAINING)
        return;
    uv_timer_stop(&s->drain_timer);
    ingest_drain_datagrams(&s->ingest);
    s->phase = SERVER_FINALIZING;
    s->ingest.taking_datagrams = false;
    ingest_close_listeners(&s->ingest);
    if (s->ingest.conn_count)
        log_warn("shutdown: closing %zu connections still open after the drain",
                 s->ingest.conn_count);
    ingest_close_conns(&s->ingest);
    if (s->sessions.live_count)
        log_notice("shutdown: writing and finalizing the files of %zu sessions", s->sessions.live_count);
    s->shutdown_said_ms = uv_now(s->loop);
    recd_sd_notify_status("finalizing %zu sessions", s->sessions.live_count);
    sessions_close_all(&s->sessions, "shutdown");
    if (sessions_finished(&s->sessions))
        finish_close(s);
}

static void on_drain_timeout(uv_timer_t *t)
{
    recd_server *s = t->data;
    log_warn("shutdown: drain_timeout reached with %zu connections open", s->ingest.conn_count);
    drain_done(s);
}

static void server_shutdown(recd_server *s)
{
    if (s->phase == SERVER_DRAINING) {
        log_notice("second stop signal: closing %zu connection%s now", s->ingest.conn_count,
                   log_plural(s->ingest.conn_count));
        drain_done(s);
        return;
    }
    if (s->phase != SERVER_RUNNING)
        return;
    recd_sd_notify_stopping();
    s->phase = SERVER_DRAINING;
    s->ingest.accepting = false;
    s->drain_started_ms = s->shutdown_said_ms = uv_now(s->loop);
    char limit[32]; /* "10s", "1500ms": as recd.yaml writes it */
    recd_format_duration_ms(s->cfg.shutdown.drain_timeout_ms, limit, sizeof limit);
    if (s->ingest.conn_count)
        log_notice("shutting down: waiting for %zu connection%s to finish (up to %s)%s", s->ingest.conn_count,
                   log_plural(s->ingest.conn_count), limit,
                   recd_log_get_style() == RECD_LOG_STYLE_TERMINAL ? "; Ctrl-C again to stop at once" : "");
    else
        log_notice("shutting down: no connections open");
    recd_sd_notify_status("draining %zu connections", s->ingest.conn_count);
    /* Stop accepting; UDP keeps being read until the drain ends. */
    ingest_close_stream_listeners(&s->ingest);
    if (s->ingest.conn_count == 0) {
        drain_done(s);
        return;
    }
    uv_timer_start(&s->drain_timer, on_drain_timeout, s->cfg.shutdown.drain_timeout_ms, 0);
}

/* ---- the callbacks wired between the layers ---------------------------------------------------- */

/* ingest: a connection is gone; the drain ends with the last one. */
static void on_conn_gone(void *data)
{
    recd_server *s = data;
    if (s->phase == SERVER_DRAINING && s->ingest.conn_count == 0)
        drain_done(s);
}

/* record: a session (or a manifest store it left) is gone; the shutdown ends with the last. */
static void on_session_gone(void *data)
{
    recd_server *s = data;
    if (s->phase == SERVER_FINALIZING && sessions_finished(&s->sessions))
        finish_close(s);
}

/* record: a write completed, so there is room again: paused connections may read. */
static void on_room(void *data)
{
    recd_server *s = data;
    ingest_resume_paused(&s->ingest);
    ingest_nats_progress(&s->ingest); /* acknowledge what is in files now */
}

/* record: a session is about to be freed: stream messages waiting for it are written. */
static void on_session_freed(void *data, const recd_session *sess)
{
    recd_server *s = data;
    ingest_nats_session_freed(&s->ingest, sess);
}

static void on_stop_signal(void *ctx) { server_shutdown(ctx); }
static void on_reload_signal(void *ctx) { server_reload(ctx); }

/* ---- run ------------------------------------------------------------------------------------- */

static int startup(recd_server *s)
{
    int rc = recd_out_root_open(s->cfg.output.root, true);
    if (rc < 0) {
        log_crit("cannot open the output root '%s': %s", s->cfg.output.root, recd_strerror(rc));
        return rc;
    }
    s->root_fd = rc;
    raise_fd_limit();
    recover(s); /* before any listener exists: no writer has a .part open yet */
    sessions_events record_events = {
        .room = on_room, .gone = on_session_gone, .freed = on_session_freed, .data = s};
    if ((rc = writer_stage_init(&s->writer, s->loop, s->root_fd)) < 0 ||
        (rc = sessions_init(&s->sessions, s->loop, &s->cfg, &s->metrics, &s->writer,
                            record_events)) < 0) {
        log_crit("out of memory");
        return rc;
    }
    server_probe_root(s); /* before any listener: the first open is judged */
    s->writer.fsync = s->cfg.flush.fsync; /* also after each reload (server_reload.c) */
    s->writer.buffers.huge_pages = s->cfg.limits.batch_huge_pages;
    (void)buffer_pool_preload(&s->writer.buffers); /* best effort: batch memory faulted in early */
    ingest_events ingest_on = {.conn_gone = on_conn_gone, .data = s};
    ingest_init(&s->ingest, s->loop, &s->cfg, &s->metrics, &s->sessions, ingest_on);
    if ((rc = ingest_start(&s->ingest)) < 0) {
        log_crit("cannot set up the event loop: %s", uv_strerror(rc));
        return rc;
    }
    /* Handlers before the first bound socket: once a port is printed, a supervisor may send
     * SIGHUP or SIGTERM, and the default action would kill recd. They run from the loop, so a
     * reload or stop waits until startup is complete. */
    if ((rc = recd_signals_start(&s->signals, s->loop, on_stop_signal, on_reload_signal, s)) < 0 ||
        (rc = server_start_timers(s)) < 0 ||
        (rc = loop_lag_start(&s->lag, s->loop, s->metrics.loop_lag_seconds)) < 0) {
        log_crit("cannot set up the event loop: %s", uv_strerror(rc));
        return rc;
    }
    char why[512];
    if ((rc = server_tls_context(&s->cfg, &s->ingest.tls, why, sizeof why)) < 0) {
        log_crit("%s", why);
        return rc;
    }
    if ((rc = start_metrics(s)) < 0 || (rc = start_listeners(s)) < 0)
        return rc;
    recd_sd_notify_ready();
    if (s->cli && s->cli->print_ports) { /* after every port: scripts wait for this line */
        printf("ready\n");
        fflush(stdout);
    }
    /* The absolute path: "./recordings" says little in a log read later or elsewhere. */
    char *output = realpath(s->cfg.output.root, NULL);
    const char *shown = output ? output : s->cfg.output.root;
    recd_sd_notify_status("recording; output in %s", shown);
    log_notice("recd %s ready (output %s)", recd_version(), shown);
    free(output);
    if (recd_log_get_style() == RECD_LOG_STYLE_TERMINAL)
        log_notice("Ctrl-C to stop (twice to stop at once)");
    return 0;
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* recd_tls_connections_total, labelled by the identities patterns of the configuration at start. */
static int add_identity_metrics(recd_server *s)
{
    const char *patterns[RECD_CONFIG_MAX_IDENTITIES];
    size_t n = s->cfg.identity_count;
    for (size_t i = 0; i < n; i++)
        patterns[i] = s->cfg.identities[i].pattern;
    return recd_metrics_add_tls_identities(&s->metrics, patterns, n);
}

int recd_server_run(recd_config *cfg, const recd_cli *cli)
{
    recd_server *s = calloc(1, sizeof *s);
    uv_loop_t *loop = malloc(sizeof *loop);
    if (!s || !loop || uv_loop_init(loop) < 0 || loop_lag_configure(loop) < 0) {
        fprintf(stderr, "recd: out of memory\n");
        free(s);
        free(loop);
        recd_config_free(cfg);
        return 1;
    }
    s->loop = loop;
    s->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    s->cli = cli;
    s->root_fd = -1;
    s->retired_root_fd = -1;
    s->metrics_port = -1;
    recd_log_set_level(s->cfg.log.level);
    recd_log_set_style(recd_log_style_for_stderr());
    mode_t base = umask(0);
    s->base_umask = (unsigned)base;
    server_apply_modes(s);
    heap_configure(s->cfg.limits.process_buffer);
    const recd_m_state_kind *kinds[RECD_M_STATE_KINDS_MAX];
    recd_metrics_install_state_kinds(kinds, session_formats_state_kinds(kinds, RECD_M_STATE_KINDS_MAX));
    int rc = recd_daemon_metrics_init(&s->metrics);
    if (rc == 0)
        rc = add_identity_metrics(s);
    if (rc == 0)
        rc = startup(s);
    if (rc < 0) {
        s->exit_code = 1;
        s->phase = SERVER_CLOSING;
        s->ingest.taking_datagrams = false;
        recd_signals_close(&s->signals);
        if (s->http)
            recd_http_server_close(s->http, NULL, NULL);
        console_stop(s);
        ingest_close_listeners(&s->ingest);
        uv_walk(loop, close_walk, NULL);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    recd_log_flush_suppressed(true);
    if (uv_loop_close(loop) == UV_EBUSY) {
        uv_walk(loop, close_walk, NULL);
        uv_run(loop, UV_RUN_DEFAULT);
        uv_loop_close(loop);
    }
    int code = s->exit_code;
    sessions_free(&s->sessions);
    ingest_free(&s->ingest);
    tls_server_ctx_free(s->ingest.tls);
    if (s->writer.loop)
        writer_stage_free(&s->writer);
    if (s->root_fd >= 0)
        close(s->root_fd);
    if (s->retired_root_fd >= 0)
        close(s->retired_root_fd);
    recd_daemon_metrics_free(&s->metrics);
    recd_config_free(&s->cfg);
    free(loop);
    free(s);
    return code;
}
