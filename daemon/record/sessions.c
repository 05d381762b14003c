/* SPDX-License-Identifier: MIT */
/* The session registry and each session's lifecycle (see sessions.h): flushing by time and size,
 * the writer hand-off and its completion, dormancy after the idle timeout, close and freeing.
 * What a format does its own way goes through the session's format table (s->ops). */
#include "sessions.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "session_ring.h"
#include "session_live.h"
#include "support/log.h"

static void on_written(void *ctx, const writer_result *r);

static recd_sessions *registry_of(const recd_session *s) { return sessions_of(s->env); }

/* Session s entered or left the table: the open gauges, total and by format. */
static void update_open_gauge(recd_sessions *r, const recd_session *s, bool entered)
{
    recd_daemon_metrics *m = r->env.metrics;
    recd_metric_set(m->sessions_open, 0, (int64_t)r->table.count);
    size_t f = recd_metrics_format_of(s->format);
    if (entered)
        recd_metric_add(m->sessions_open_by_format, f, 1);
    else
        recd_metric_sub(m->sessions_open_by_format, f, 1);
}

int sessions_init(recd_sessions *r, uv_loop_t *loop, const recd_config *cfg,
                  recd_daemon_metrics *metrics, writer_stage *writer, sessions_events on)
{
    memset(r, 0, sizeof *r);
    r->env.loop = loop;
    r->env.cfg = cfg;
    r->env.metrics = metrics;
    r->env.writer = writer;
    LIST_INIT(&r->live);
    TAILQ_INIT(&r->dormant);
    r->on = on;
    return session_table_init(&r->table);
}

void sessions_free(recd_sessions *r)
{
    if (r->table.buckets)
        session_table_free(&r->table);
    peer_counts_free(&r->peers);
}

bool session_peer_over_share(const recd_session *s)
{
    return s->peer && s->peer->bytes > recd_config_peer_buffer(s->env->cfg);
}

bool sessions_over_limit(recd_sessions *r, const char *key)
{
    const recd_config *cfg = r->env.cfg;
    if (session_env_used(&r->env) > cfg->limits.process_buffer)
        return true;
    if (!key[0])
        return false;
    recd_session *s = session_table_get(&r->table, key);
    return s && (s->buffered > cfg->limits.session_buffer || s->write_failing ||
                 session_peer_over_share(s));
}

/* ---- flushing -------------------------------------------------------------------------------- */

static void kick(recd_session *s)
{
    if (s->write_failing && session_now_ms(s) < s->retry_at_ms)
        return; /* the backoff: session_tick() kicks when it is over */
    int rc = writer_kick(s->env->writer, &s->queue, on_written, s);
    if (rc < 0)
        log_err("session '%s': cannot start a writer job: %s (retrying at the next flush)", s->key,
                recd_strerror(rc));
}

/* Seals what is pending and starts its write. A flush for size may carry up to a block's bytes
 * over into the next batch (writer_seal_aligned()); every other flush writes everything. */
static void flush(recd_session *s, bool for_size)
{
    uint64_t now = session_now_ms(s);
    if (s->ops->flush)
        s->ops->flush(s, now);
    if (for_size) {
        writer_seal_aligned(s->env->writer, &s->queue);
    } else {
        session_note_progress(s);
        writer_seal(&s->queue);
    }
    s->last_flush_ms = now;
    /* What the format still holds keeps its own clock; carried bytes are the newest. */
    s->pending_since_ms = s->ops->pending_since ? s->ops->pending_since(s) : 0;
    if (writer_open_bytes(&s->queue))
        session_note_pending(s, now);
    kick(s);
}

void session_flush(recd_session *s) { flush(s, false); }

void session_maybe_flush(recd_session *s)
{
    uint64_t pending = writer_open_bytes(&s->queue);
    if (s->ops->encoder_bytes)
        pending += s->ops->encoder_bytes(s);
    if (pending >= s->env->cfg->flush.buffer_size)
        flush(s, true);
}

static void end_format_part(recd_session *s, bool session_end)
{
    s->ops->end_part(s, session_end);
}

static void free_format(recd_session *s)
{
    session_live_free(s);
    free(s->drops_by);
    s->drops_by = NULL;
    if (s->ops->free)
        s->ops->free(s);
    session_ring_free(s);
}

/* ---- dormancy -------------------------------------------------------------------------------- */

static void dormant_enter(recd_session *s, uint64_t now_ms)
{
    recd_sessions *r = registry_of(s);
    s->dormant = true;
    s->dormant_since_ms = now_ms;
    TAILQ_INSERT_TAIL(&r->dormant, s, dormant_link);
    r->dormant_count++;
    recd_metric_set(r->env.metrics->sessions_dormant, 0, (int64_t)r->dormant_count);
}

static void dormant_leave(recd_session *s)
{
    if (!s->dormant)
        return;
    recd_sessions *r = registry_of(s);
    s->dormant = false;
    TAILQ_REMOVE(&r->dormant, s, dormant_link);
    r->dormant_count--;
    recd_metric_set(r->env.metrics->sessions_dormant, 0, (int64_t)r->dormant_count);
}

void session_wake(recd_session *s) { dormant_leave(s); }

static const char *const forget_why[RECD_M_FORGETS] = {
    [RECD_M_FORGET_TIMEOUT] = "forgotten after being idle (rotation.forget_after)",
    [RECD_M_FORGET_LIMIT] = "forgotten: too many idle sessions (limits.max_dormant_sessions)",
    [RECD_M_FORGET_ROOM] =
        "forgotten to make room for a new session (limits.max_sessions or max_sessions_per_peer)",
};

/* A dormant session is forgotten: its key is unknown from now on (its file is finalized). */
static void forget(recd_session *s, recd_m_forget reason)
{
    recd_metric_add(s->env->metrics->sessions_forgotten_total, reason, 1);
    if (reason == RECD_M_FORGET_TIMEOUT)
        log_debug("session '%s' %s", s->key, forget_why[reason]);
    else
        log_notice("session '%s' %s", s->key, forget_why[reason]);
    session_close(s, forget_why[reason]);
}

bool sessions_make_peer_room(recd_sessions *r, const struct peer_entry *peer, uint32_t share)
{
    /* Cold: only an open from a peer at its share walks the list (at most max_dormant_sessions). */
    /* Counted here: forgetting the peer's last session may free its entry. */
    uint32_t open = peer->open;
    recd_session *s = TAILQ_FIRST(&r->dormant), *next;
    for (; s && open >= share; s = next) {
        next = TAILQ_NEXT(s, dormant_link);
        if (s->peer == peer) {
            forget(s, RECD_M_FORGET_ROOM);
            open--;
        }
    }
    return open < share;
}

bool sessions_make_room(recd_sessions *r)
{
    while (r->table.count >= r->env.cfg->limits.max_sessions && TAILQ_FIRST(&r->dormant))
        forget(TAILQ_FIRST(&r->dormant), RECD_M_FORGET_ROOM);
    return r->table.count < r->env.cfg->limits.max_sessions;
}

/* limits.max_dormant_sessions, after the timer pass (which must not free a session it is about to
 * visit) and after a reload that lowered it. */
static void forget_over_limit(recd_sessions *r)
{
    while (r->dormant_count > r->env.cfg->limits.max_dormant_sessions)
        forget(TAILQ_FIRST(&r->dormant), RECD_M_FORGET_LIMIT);
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

/* s leaves the session table: it no longer counts toward limits.max_sessions or its peer's share. */
static void leave_table(recd_sessions *r, recd_session *s)
{
    session_table_remove(&r->table, s);
    s->in_table = false;
    if (s->peer)
        s->peer->open--;
    update_open_gauge(r, s, false);
}

/* s no longer holds its peer's entry (its bytes were released first). */
static void leave_peer(recd_session *s)
{
    peer_counts_unref(&registry_of(s)->peers, s->peer);
    s->peer = NULL;
}

static void destroy(recd_session *s)
{
    recd_sessions *r = registry_of(s);
    dormant_leave(s);
    LIST_REMOVE(s, live);
    if (s->in_table)
        leave_table(r, s);
    session_account(s, -(int64_t)s->buffered);
    writer_queue_discard(&s->queue);
    free_format(s);
    session_release(s, s->held); /* what the format did not let go itself */
    leave_peer(s);               /* after its bytes and held state were given back */
    if (r->on.freed)
        r->on.freed(r->on.data, s);
    free(s);
    r->live_count--;
    if (r->on.gone)
        r->on.gone(r->on.data);
}

void session_close(recd_session *s, const char *why)
{
    if (s->closing)
        return;
    log_debug("session '%s' closed: %s", s->key, why);
    dormant_leave(s);
    if (s->refused)
        log_warn("session '%s': %llu of its samples were refused or dropped "
                 "(recd_decode_errors_total and recd_samples_dropped_total count them by reason)",
                 s->key, (unsigned long long)s->refused);
    end_format_part(s, true);
    writer_seal(&s->queue);
    kick(s);
    if (s->in_table)
        leave_table(registry_of(s), s);
    s->closing = true;
    if (writer_idle(&s->queue))
        destroy(s);
}

static void go_dormant(recd_session *s, uint64_t now_ms)
{
    log_debug("session '%s' idle: finalizing its file", s->key);
    end_format_part(s, false);
    writer_seal(&s->queue);
    s->pending_since_ms = 0;
    kick(s);
    dormant_enter(s, now_ms);
    if (s->ops->idle)
        s->ops->idle(s);
}

static void session_tick(recd_session *s, uint64_t now_ms)
{
    const recd_config *cfg = s->env->cfg;
    if (s->write_failing && now_ms >= s->retry_at_ms)
        kick(s);
    if (s->closing)
        return;
    if (s->dormant) {
        if (cfg->rotation.forget_after_ms && now_ms - s->dormant_since_ms >= cfg->rotation.forget_after_ms)
            forget(s, RECD_M_FORGET_TIMEOUT);
        return;
    }
    bool pending = s->pending_since_ms != 0 || (s->ops->pending && s->ops->pending(s));
    if (pending && s->pending_since_ms && now_ms - s->pending_since_ms >= cfg->flush.interval_ms)
        session_flush(s);
    else if (pending && !s->pending_since_ms)
        session_note_pending(s, now_ms);
    if (s->ops->idle && !pending && now_ms - s->last_input_ms >= cfg->flush.interval_ms)
        s->ops->idle(s);
    if (cfg->rotation.idle_timeout_ms && now_ms - s->last_input_ms >= cfg->rotation.idle_timeout_ms)
        go_dormant(s, now_ms);
}

/* Shutdown, and the session's writes keep failing: what it still holds is lost. Only .part files
 * that exist are said to be left (a part whose create failed has none). */
static void give_up(recd_session *s)
{
    recd_sessions *reg = registry_of(s);
    unsigned left = writer_queue_parts_on_disk(&s->queue);
    log_err("session '%s': writes still fail at shutdown: %llu bytes are lost; %s",
            s->key, (unsigned long long)s->buffered,
            left ? "its .part file is left for recovery at the next start"
                 : "no file of it was created");
    reg->bytes_lost += s->buffered;
    recd_metrics_bytes_lost(reg->env.metrics, s->buffered);
    s->lost_total += s->buffered ? s->buffered : 1; /* whatever waits for it was not written */
    reg->parts_left += left;
    destroy(s);
}

/* The job stopped at a write that may pass: its batches wait in the queue for a retry. */
static void retry_later(recd_session *s, int error)
{
    recd_sessions *reg = registry_of(s);
    uint32_t cap = reg->stopping ? WRITE_RETRY_STOP_MAX_MS : WRITE_RETRY_MAX_MS;
    uint32_t delay = s->write_failing ? s->retry_delay_ms * 2 : WRITE_RETRY_FIRST_MS;
    s->retry_delay_ms = delay > cap ? cap : delay;
    s->retry_at_ms = session_now_ms(s) + s->retry_delay_ms;
    if (!s->write_failing)
        log_warn("session '%s': cannot write (%s): its data is kept, its stream input waits, and the "
                 "write retried",
                 s->key, recd_strerror(error));
    s->write_failing = true;
    if (reg->stopping)
        s->stop_retries++;
}

static void on_written(void *ctx, const writer_result *r)
{
    recd_session *s = ctx;
    recd_sessions *reg = registry_of(s);
    session_account(s, -(int64_t)r->released);
    s->written_total += r->released;
    s->lost_total += r->lost;
    recd_metrics_flush_done(reg->env.metrics, r->written, r->seconds);
    if (r->finalized)
        recd_metric_add(reg->env.metrics->files_finalized_total, 0, r->finalized);
    if (r->sidecars)
        recd_metric_add(reg->env.metrics->part_manifests_total, 0, r->sidecars);
    if (r->sidecar_failures)
        recd_metric_add(reg->env.metrics->part_manifest_failures_total, 0, r->sidecar_failures);
    if (r->failures) {
        reg->last_write_error_ms = sessions_now_ms(reg);
        recd_metrics_write_errors(reg->env.metrics, r->retry_error ? r->retry_error : EIO, r->failures);
    }
    if (r->lost) {
        reg->bytes_lost += r->lost;
        recd_metrics_bytes_lost(reg->env.metrics, r->lost);
    }
    reg->parts_left += r->abandoned;
    reg->parts_vanished += r->vanished;
    if (r->retry_error) {
        retry_later(s, r->retry_error);
    } else if (s->write_failing) {
        s->write_failing = false;
        s->retry_delay_ms = 0;
        log_notice("session '%s': writing again", s->key);
    }
    s->packed_in += r->members_in;
    s->packed_out += r->members_out;
    if (s->part && r->last == s->part) {
        s->part_written = r->last_size;
        s->part_pending -= r->last_released < s->part_pending ? r->last_released : s->part_pending;
    }
    if (s->part && r->broken == s->part && !s->closing) {
        /* The file failed: end it (left for recovery) and start a fresh part on the next sample. */
        end_format_part(s, false);
        writer_seal(&s->queue);
    }
    if (s->write_failing && s->closing && s->stop_retries >= WRITE_RETRY_AT_STOP)
        give_up(s);
    else if (s->queue.head)
        kick(s);
    else if (s->closing && writer_idle(&s->queue))
        destroy(s);
    if (reg->on.room)
        reg->on.room(reg->on.data);
}

int sessions_add(recd_sessions *r, recd_session *s)
{
    if (session_table_put(&r->table, s) < 0)
        return -ENOMEM;
    s->in_table = true;
    if (s->peer)
        s->peer->open++;
    LIST_INSERT_HEAD(&r->live, s, live);
    r->live_count++;
    update_open_gauge(r, s, true);
    return 0;
}

void session_discard(recd_session *s)
{
    free_format(s);
    session_account(s, -(int64_t)s->buffered);
    leave_peer(s);
    free(s);
}

void sessions_tick(recd_sessions *r, uint64_t now_ms)
{
    recd_session *next;
    for (recd_session *s = LIST_FIRST(&r->live); s; s = next) {
        next = LIST_NEXT(s, live);
        session_tick(s, now_ms);
    }
    forget_over_limit(r);
}

void sessions_close_all(recd_sessions *r, const char *why)
{
    r->stopping = true;
    recd_session *next;
    for (recd_session *s = LIST_FIRST(&r->live); s; s = next) {
        next = LIST_NEXT(s, live);
        session_close(s, why);
    }
}
