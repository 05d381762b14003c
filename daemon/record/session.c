/* Sessions: the registry entry points (open, samples, flush, close), buffering and flushing by
 * time and size, parts and their rotation, the writer hand-off, and the session lifecycle. What
 * a format does its own way goes through the session's format table (s->ops, session.h); the
 * binary frames' .rec samples go straight to session_rec_block(). */
#include "session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/log.h"
#include "recd/path_template.h"
#include "app/server.h"
#include "session_formats.h"
#include "session_rec.h"

static void on_written(void *ctx, const writer_result *r);

int session_refuse(session_input *in, recd_m_reason reason, char *why, size_t whylen,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    in->reason_set = true;
    in->reason = reason;
    return -EBADMSG;
}

/* The message was refused with why already written: set the metric label only. */
static int refuse_as(session_input *in, recd_m_reason reason)
{
    in->reason_set = true;
    in->reason = reason;
    return -EBADMSG;
}

static void update_open_gauge(recd_server *srv)
{
    recd_metric_set(srv->metrics.sessions_open, 0, (int64_t)srv->table.count);
}

recd_msg_format session_format_of(void *ctx, const char *key, size_t len, void **handle)
{
    session_input *in = ctx;
    recd_session *s = session_table_find(&in->srv->table, key, len);
    if (!s) {
        /* An invalid key is also missed (its bytes are checked after this): that error is a
         * schema error, not an unknown session. */
        in->lookup_missed = recd_session_key_valid(key, len);
        return RECD_MSG_FMT_NONE;
    }
    *handle = s;
    return s->format;
}

/* ---- buffering ------------------------------------------------------------------------------- */

void session_account(recd_session *s, int64_t delta)
{
    recd_server *srv = s->srv;
    if (delta < 0 && (uint64_t)-delta > s->buffered)
        delta = -(int64_t)s->buffered;
    s->buffered += (uint64_t)delta;
    srv->buffered += (uint64_t)delta; /* the gauge is set from this at each scrape */
}

void session_note_pending(recd_session *s, uint64_t now_ms)
{
    if (!s->pending_since_ms)
        s->pending_since_ms = now_ms ? now_ms : 1;
}

uint8_t *session_reserve(recd_session *s, size_t len)
{
    if (!s->part)
        return NULL;
    uint8_t *at = writer_reserve(&s->srv->writer, &s->queue, s->part, len);
    if (!at)
        return NULL;
    s->part_pending += len;
    session_account(s, (int64_t)len);
    session_note_pending(s, server_now_ms(s->srv));
    return at;
}

int session_put(recd_session *s, const void *data, size_t len)
{
    if (!s->part)
        return -EINVAL;
    if (len == 0)
        return 0;
    uint8_t *at = session_reserve(s, len);
    if (!at)
        return -ENOMEM;
    memcpy(at, data, len);
    return 0;
}

static void kick(recd_session *s)
{
    int rc = writer_kick(&s->srv->writer, &s->queue, on_written, s);
    if (rc < 0)
        log_err("session '%s': cannot start a writer job: %s (retrying at the next flush)", s->key,
                recd_strerror(rc));
}

/* Seals what is pending and starts its write. A flush for size may carry up to a block's bytes
 * over into the next batch (writer_seal_aligned()); every other flush writes everything. */
static void flush(recd_session *s, bool for_size)
{
    uint64_t now = server_now_ms(s->srv);
    if (s->ops->flush)
        s->ops->flush(s, now);
    if (for_size)
        writer_seal_aligned(&s->srv->writer, &s->queue);
    else
        writer_seal(&s->queue);
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
    if (pending >= s->srv->cfg.flush.buffer_size)
        flush(s, true);
}

/* ---- parts ----------------------------------------------------------------------------------- */

int session_start_part(recd_session *s, int64_t start_epoch_ms, int gzip_level)
{
    const recd_config *cfg = &s->srv->cfg;
    recd_path_vars v = {recd_msg_format_name(s->format), recd_msg_format_ext(s->format), s->key,
                        start_epoch_ms, s->part_no};
    char rel[RECD_PATH_MAX];
    int rc = recd_path_render(&cfg->output.path_template, &v, rel, sizeof rel);
    if (rc == -ERANGE) { /* a start time strftime cannot show: name the part by arrival */
        v.start_ms = server_epoch_ms();
        rc = recd_path_render(&cfg->output.path_template, &v, rel, sizeof rel);
    }
    if (rc < 0) {
        log_err("session '%s': cannot name part %u from the path template: %s", s->key, s->part_no,
                recd_strerror(rc));
        return rc;
    }
    writer_part *p = writer_part_new(rel, gzip_level);
    if (!p)
        return -ENOMEM;
    s->part = p;
    s->part_no++;
    s->part_written = 0;
    s->part_pending = 0;
    return 0;
}

/* Bytes the current part will hold once everything queued for it is written. A plain part gets
 * exactly what was queued; a packed one (Recap) is still to be compressed, so this session's
 * ratio so far is assumed (1:2 before its first member). */
static uint64_t expected_part_size(const recd_session *s)
{
    if (!s->ops->packed)
        return s->part_written + s->part_pending;
    uint64_t held = s->ops->encoder_bytes ? s->ops->encoder_bytes(s) : 0;
    double pending = (double)(s->part_pending + held);
    pending *= s->packed_in ? (double)s->packed_out / (double)s->packed_in : 0.5;
    return s->part_written + (uint64_t)pending;
}

bool session_should_rotate(const recd_session *s, uint64_t add_bytes, uint64_t span_ms)
{
    const recd_config *cfg = &s->srv->cfg;
    if (!s->part)
        return false;
    if (cfg->rotation.max_size) {
        uint64_t size = expected_part_size(s);
        if (size && size + add_bytes > cfg->rotation.max_size)
            return true;
    }
    return cfg->rotation.max_duration_ms && span_ms >= cfg->rotation.max_duration_ms;
}

void session_end_part(recd_session *s, uint8_t *header, size_t header_len)
{
    if (!s->part)
        return;
    int rc = writer_end_part(&s->queue, s->part, header, header_len);
    if (rc < 0) {
        free(header);
        log_crit("session '%s': out of memory ending a part; its .part file is left for recovery",
                 s->key);
    }
    s->part = NULL;
    s->part_written = s->part_pending = 0;
}

/* Ends the current part in the format's way (Recap: last member, header patch). */
static void end_format_part(recd_session *s, bool session_end)
{
    s->ops->end_part(s, session_end);
}

static void free_format(recd_session *s)
{
    if (s->ops->free)
        s->ops->free(s);
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static void destroy(recd_session *s)
{
    recd_server *srv = s->srv;
    if (s->prev)
        s->prev->next = s->next;
    else
        srv->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (s->in_table) {
        session_table_remove(&srv->table, s);
        update_open_gauge(srv);
    }
    session_account(s, -(int64_t)s->buffered);
    writer_queue_discard(&s->queue);
    free_format(s);
    free(s);
    srv->live_sessions--;
    server_session_gone(srv);
}

void session_close(recd_session *s, const char *why)
{
    if (s->closing)
        return;
    log_debug("session '%s' closed: %s", s->key, why);
    end_format_part(s, true);
    writer_seal(&s->queue);
    kick(s);
    if (s->in_table) {
        session_table_remove(&s->srv->table, s);
        s->in_table = false;
        update_open_gauge(s->srv);
    }
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
    s->dormant = true;
    s->dormant_since_ms = now_ms;
    if (s->ops->idle)
        s->ops->idle(s);
}

void session_tick(recd_session *s, uint64_t now_ms)
{
    const recd_config *cfg = &s->srv->cfg;
    if (s->closing)
        return;
    if (s->dormant) {
        if (cfg->rotation.idle_timeout_ms && now_ms - s->dormant_since_ms >= cfg->rotation.idle_timeout_ms)
            session_close(s, "forgotten after being idle");
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

static void on_written(void *ctx, const writer_result *r)
{
    recd_session *s = ctx;
    recd_server *srv = s->srv;
    session_account(s, -(int64_t)r->released);
    recd_metrics_flush_done(&srv->metrics, r->written, r->seconds);
    if (r->finalized)
        recd_metric_add(srv->metrics.files_finalized_total, 0, r->finalized);
    if (r->failures)
        srv->last_write_error_ms = server_now_ms(srv);
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
    if (s->queue.head)
        kick(s);
    else if (s->closing && writer_idle(&s->queue)) {
        destroy(s);
    }
    server_resume_paused(srv);
}

/* ---- dispatch -------------------------------------------------------------------------------- */

static recd_session *session_new(recd_server *srv, const recd_msg *m, const session_format *ops,
                                 uint64_t now_ms)
{
    recd_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->srv = srv;
    s->ops = ops;
    memcpy(s->key, m->session, sizeof s->key);
    s->key[RECD_SESSION_KEY_MAX] = 0;
    s->key_len = (uint8_t)strlen(s->key);
    s->format = m->format;
    s->start_epoch_ms = m->open.has_start_time ? m->open.start_time_ms : server_epoch_ms();
    s->start_mono_ms = now_ms;
    s->last_input_ms = now_ms;
    s->last_flush_ms = now_ms;
    return s;
}

static int dispatch_open(session_input *in, const recd_msg *m, uint64_t now_ms, char *why,
                         size_t whylen)
{
    recd_server *srv = in->srv;
    const recd_config *cfg = &srv->cfg;
    if (cfg->auth.token && (!m->open.auth || strcmp(m->open.auth, cfg->auth.token) != 0))
        return session_refuse(in, RECD_M_AUTH, why, whylen, "open of session '%s': %s auth token", m->session,
                      m->open.auth ? "wrong" : "missing");
    const session_format *ops = session_format_for(m->format);
    if (!ops)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "open of session '%s' without a format",
                      m->session);
    recd_session *s = session_table_get(&srv->table, m->session);
    if (s) {
        if (s->format != m->format)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                          "open of session '%s' as %s, but it is open as %s", m->session,
                          recd_msg_format_name(m->format), recd_msg_format_name(s->format));
        s->last_input_ms = now_ms; /* a resumed session: the repeated open changes nothing */
        in->accepted = true;
        return 0;
    }
    if (srv->table.count >= cfg->limits.max_sessions)
        return session_refuse(in, RECD_M_OTHER, why, whylen,
                      "open of session '%s' refused: %u sessions are open (limits.max_sessions)",
                      m->session, cfg->limits.max_sessions);
    s = session_new(srv, m, ops, now_ms);
    if (!s)
        return -ENOMEM;
    if (in->datagram && m->has_seq) {
        s->have_seq = true;
        s->last_seq = m->seq;
    }
    if (ops->open) {
        int rc = ops->open(s, m, why, whylen);
        if (rc < 0) {
            free(s);
            if (rc == -ENOMEM)
                return rc;
            return refuse_as(in, RECD_M_SCHEMA);
        }
    }
    if (session_table_put(&srv->table, s) < 0) {
        free_format(s);
        free(s);
        return -ENOMEM;
    }
    s->in_table = true;
    s->next = srv->sessions;
    if (srv->sessions)
        srv->sessions->prev = s;
    srv->sessions = s;
    srv->live_sessions++;
    update_open_gauge(srv);
    in->accepted = true;
    log_debug("session '%s' opened (%s) from %s", s->key, recd_msg_format_name(s->format),
              session_input_peer(in));
    return 0;
}

/* UDP sequence numbers: false for a duplicate (or reordered) message, which is dropped. */
static bool sequence_ok(session_input *in, recd_session *s, uint64_t seq)
{
    recd_daemon_metrics *mt = &in->srv->metrics;
    if (!s->have_seq) {
        s->have_seq = true;
        s->last_seq = seq;
        return true;
    }
    if (seq <= s->last_seq) {
        recd_metric_add(mt->udp_duplicates_total, 0, 1);
        return false;
    }
    if (seq - s->last_seq > 1)
        recd_metric_add(mt->udp_gaps_total, 0, seq - s->last_seq - 1);
    s->last_seq = seq;
    return true;
}

static void note_limits(session_input *in, recd_session *s)
{
    const recd_config *cfg = &in->srv->cfg;
    if (s->buffered > cfg->limits.session_buffer)
        memcpy(in->over_key, s->key, sizeof in->over_key);
    if (in->srv->buffered > cfg->limits.process_buffer)
        in->over_process = true;
}

/* A datagram for a session over its buffer limits is dropped: UDP has no backpressure. */
static bool datagram_over_limits(session_input *in, recd_session *s)
{
    const recd_config *cfg = &in->srv->cfg;
    if (!in->datagram || (s->buffered <= cfg->limits.session_buffer &&
                          in->srv->buffered <= cfg->limits.process_buffer))
        return false;
    recd_metric_add(in->srv->metrics.backpressure_events_total, 0, 1);
    log_warn("%s: session '%s' is over its buffer limit: datagram dropped", session_input_peer(in),
             s->key);
    return true;
}

/* What every sample passes before its format takes it: a state must be of the session's format,
 * and a datagram over the buffer limits is dropped. 1 to go on (the session's activity clock is
 * set), 0 when dropped, or a refusal. */
static int admit_sample(session_input *in, recd_session *s, bool is_state, recd_msg_format f,
                        uint64_t now_ms, char *why, size_t whylen)
{
    if (is_state && f != s->format)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "a %s state for session '%s', which is %s",
                      recd_msg_format_name(f), s->key, recd_msg_format_name(s->format));
    if (datagram_over_limits(in, s))
        return 0;
    s->last_input_ms = now_ms;
    s->dormant = false;
    return 1;
}

/* After a format took a sample (rc is what it returned). */
static int sample_taken(session_input *in, recd_session *s, int rc)
{
    if (rc < 0)
        return rc;
    note_limits(in, s);
    session_maybe_flush(s);
    return 0;
}

static int dispatch_sample(session_input *in, recd_session *s, const recd_msg *m,
                           const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen)
{
    if (m->type == RECD_MSG_EVENT && !s->ops->events)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "event for session '%s': %s sessions have no events",
                      s->key, recd_msg_format_name(s->format));
    int rc = admit_sample(in, s, m->type == RECD_MSG_STATE, m->format, now_ms, why, whylen);
    if (rc <= 0)
        return rc;
    rc = s->ops->sample(s, in, m, meta, now_ms, why, whylen);
    return sample_taken(in, s, rc);
}

/* The session a key of len bytes names, or a refusal. Sets the format its bytes count under. */
static recd_session *find(session_input *in, const char *type, const char *key, size_t len,
                          char *why, size_t whylen)
{
    recd_session *s = session_table_find(&in->srv->table, key, len);
    if (!s) {
        session_refuse(in, RECD_M_UNKNOWN_SESSION, why, whylen,
                       "%s for unknown session '%.*s' (never opened, or closed)", type, (int)len,
                       key);
        return NULL;
    }
    in->acct_format = s->format;
    return s;
}

int session_dispatch_rec(session_input *in, const recd_wire_rec_state *st,
                         const recd_wire_meta *meta, char *why, size_t whylen)
{
    /* format_of found it for this very frame: no second lookup. */
    recd_session *s = st->handle;
    if (s)
        in->acct_format = s->format;
    else if (!(s = find(in, "state", st->key, st->key_len, why, whylen)))
        return -EBADMSG;
    if (in->datagram && st->has_seq && !sequence_ok(in, s, st->seq))
        return 0;
    uint64_t now_ms = server_now_ms(in->srv);
    int rc = admit_sample(in, s, true, st->format, now_ms, why, whylen);
    if (rc <= 0)
        return rc;
    rc = session_rec_block(s, in, st->time_ms, meta->has_time, st->fields, now_ms);
    return sample_taken(in, s, rc);
}

int session_dispatch(session_input *in, const recd_msg *m, const recd_wire_meta *meta, char *why,
                     size_t whylen)
{
    recd_server *srv = in->srv;
    uint64_t now_ms = server_now_ms(srv);
    if (m->type == RECD_MSG_OPEN) {
        in->acct_format = m->format;
        return dispatch_open(in, m, now_ms, why, whylen);
    }
    recd_session *s = find(in, recd_msg_type_name(m->type), m->session,
                           strnlen(m->session, RECD_SESSION_KEY_MAX), why, whylen);
    if (!s)
        return -EBADMSG;
    if (in->datagram && m->has_seq && !sequence_ok(in, s, m->seq))
        return 0;
    switch (m->type) {
    case RECD_MSG_STATE:
    case RECD_MSG_EVENT: return dispatch_sample(in, s, m, meta, now_ms, why, whylen);
    case RECD_MSG_FLUSH:
        s->last_input_ms = now_ms;
        if (s->ops->flush_message && s->ops->flush_message(s, m, why, whylen) < 0)
            return refuse_as(in, RECD_M_SCHEMA);
        session_flush(s);
        in->accepted = true;
        return 0;
    case RECD_MSG_CLOSE:
        if (s->ops->close_message)
            s->ops->close_message(s, m);
        session_close(s, "close message");
        in->accepted = true;
        return 0;
    default:
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "unexpected message type %d", (int)m->type);
    }
}
