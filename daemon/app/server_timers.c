/* SPDX-License-Identifier: MIT */
/* The daemon's periodic timers: the tick that flushes, rotates and trims the heap (its period
 * follows flush.interval, also after a reload), retention once a minute, and the systemd
 * watchdog's keep-alive. */
#include "server.h"

#include "record/session_formats.h"
#include "support/alloc_stats.h"
#include "support/log.h"
#include "support/sd_notify.h"

static uint64_t tick_period(const recd_config *cfg)
{
    uint64_t p = cfg->flush.interval_ms / 4;
    return p < 10 ? 10 : p > 250 ? 250 : p;
}

#define SHUTDOWN_SAY_EVERY_MS 2000u /* how often a stop that waits says again what for */

/* While a stop waits (for clients, or for files to be written), says so every few seconds. */
static void report_shutdown(recd_server *s, uint64_t now)
{
    if ((s->phase != SERVER_DRAINING && s->phase != SERVER_FINALIZING) ||
        now - s->shutdown_said_ms < SHUTDOWN_SAY_EVERY_MS)
        return;
    s->shutdown_said_ms = now;
    if (s->phase == SERVER_DRAINING) {
        uint64_t spent = now - s->drain_started_ms, limit = s->cfg.shutdown.drain_timeout_ms;
        log_notice("shutting down: still waiting for %zu connection%s to finish (%llus left)",
                   s->ingest.conn_count, log_plural(s->ingest.conn_count),
                   (unsigned long long)(limit > spent ? (limit - spent + 999) / 1000 : 0));
    } else {
        log_notice("shutting down: still writing the files of %zu session%s", s->sessions.live_count,
                   log_plural(s->sessions.live_count));
        if (s->sessions.stores_pending)
            log_notice("shutting down: still storing %zu %s%s", s->sessions.stores_pending,
                       session_formats_store_what(), log_plural(s->sessions.stores_pending));
    }
}

static void on_tick(uv_timer_t *t)
{
    recd_server *s = t->data;
    uint64_t now = uv_now(s->loop);
    server_watch_root(s, now);
    report_shutdown(s, now);
    sessions_tick(&s->sessions, now);
    uint64_t pad;
    if (heap_release_due(&s->heap, s->sessions.env.buffered, now, &pad) ||
        heap_free_release_due(&s->heap, alloc_stats_read(), now, &pad))
        heap_trim(pad);
    recd_log_flush_suppressed(false);
}

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    recd_sd_notify_watchdog();
}

static void on_retention_timer(uv_timer_t *t) { server_run_retention(t->data); }

int server_start_timers(recd_server *s)
{
    uv_timer_t *timers[] = {&s->tick_timer, &s->retention_timer, &s->watchdog_timer, &s->drain_timer};
    for (size_t i = 0; i < sizeof timers / sizeof *timers; i++) {
        int rc = uv_timer_init(s->loop, timers[i]);
        if (rc < 0)
            return rc;
        timers[i]->data = s;
    }
    s->tick_period_ms = tick_period(&s->cfg);
    uv_timer_start(&s->tick_timer, on_tick, s->tick_period_ms, s->tick_period_ms);
    uv_timer_start(&s->retention_timer, on_retention_timer, 0, 60000);
    uint64_t usec;
    if (recd_sd_watchdog_usec(&usec) == 1) {
        uint64_t ms = usec / 2000;
        uv_timer_start(&s->watchdog_timer, on_watchdog, 0, ms ? ms : 1);
        log_info("watchdog: keep-alive every %llu ms", (unsigned long long)(ms ? ms : 1));
    }
    return 0;
}

void server_retune_tick(recd_server *s)
{
    uint64_t p = tick_period(&s->cfg);
    if (p == s->tick_period_ms)
        return;
    s->tick_period_ms = p;
    uv_timer_start(&s->tick_timer, on_tick, p, p);
}
