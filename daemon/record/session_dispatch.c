/* SPDX-License-Identifier: MIT */
/* Dispatch of decoded messages to the sessions (see sessions.h): opening a session in its
 * format, UDP sequence numbers, the buffer limits a sample is checked against, and the hand-off
 * to the format through its descriptor: its sample hook for decoded messages, its state_fast
 * hook for states the wire handed over as records. */
#include "sessions.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_formats.h"
#include "session_ring.h"
#include "support/clock.h"
#include "support/identity.h"
#include "session_live.h"
#include "support/log.h"

/* The message was refused with why already written: set the metric label only. */
static int refuse_as(session_input *in, recd_m_reason reason)
{
    in->reason_set = true;
    in->reason = reason;
    return -EBADMSG;
}

/* Why an open with ring: true or a save is refused: the format keeps no ring (no save hook). */
static void say_no_ring(const char *type, const char *key, recd_msg_format f, char *why,
                        size_t whylen)
{
    snprintf(why, whylen, "%s of session '%s': %s sessions keep no instant-replay ring", type, key,
             recd_msg_format_name(f));
}

recd_msg_format session_format_of(void *ctx, const char *key, size_t len, void **handle)
{
    session_input *in = ctx;
    recd_session *s = session_table_find(&in->sessions->table, key, len);
    if (!s) {
        /* An invalid key is also missed (its bytes are checked after this): that error is a
         * schema error, not an unknown session. */
        in->lookup_missed = recd_session_key_valid(key, len);
        return RECD_MSG_FMT_NONE;
    }
    *handle = s;
    return s->format;
}

void *session_lend_state(void *ctx, void *handle)
{
    (void)ctx;
    recd_session *s = handle;
    return s->ops->lend_state ? s->ops->lend_state(s) : NULL;
}

/* ---- ownership ------------------------------------------------------------------------------- */

/* This input's number as a session owner: a stream connection gets one at its first message,
 * datagrams are all 0. */
static uint64_t owner_of(session_input *in)
{
    if (!in->owner && !in->datagram)
        in->owner = ++in->sessions->owners;
    return in->owner;
}

/* A session takes messages from its owner only (and, with auth.token set, datagrams only after
 * its open or resume with the token in the same datagram): the refusal, or 0. */
static int check_owner(session_input *in, const recd_session *s, const char *type, char *why,
                       size_t whylen)
{
    if (s->owner == owner_of(in) &&
        !(in->datagram && s->env->cfg->auth.token && in->datagram_opened != s))
        return 0;
    return session_refuse(in, RECD_M_NOT_OWNER, why, whylen,
                          in->datagram && s->owner == 0
                              ? "%s for session '%s' without its open (with the auth token) earlier "
                                "in the datagram"
                              : "%s for session '%s', which belongs to another connection (an "
                                "open with resume and the auth token takes it over)",
                          type, s->key);
}

void session_hand_to(session_input *in, recd_session *s) { s->owner = owner_of(in); }

/* ---- UDP sequence numbers (session_seq.h) ---------------------------------------------------- */

/* Counts what the sequence window said of a datagram's seq: false for a duplicate (or reordered)
 * message, which is dropped. */
static bool sequence_counted(session_input *in, recd_session *s, seq_verdict v, uint64_t seq,
                             uint64_t lost)
{
    recd_daemon_metrics *mt = in->sessions->env.metrics;
    switch (v) {
    case SEQ_NEXT:
        if (lost)
            recd_metric_add(mt->udp_gaps_total, 0, lost);
        return true;
    case SEQ_DUPLICATE: recd_metric_add(mt->udp_duplicates_total, 0, 1); return false;
    case SEQ_EPOCH_WINDOW:
    case SEQ_EPOCH_RESUME: {
        bool resume = v == SEQ_EPOCH_RESUME;
        recd_metric_add(mt->udp_seq_epochs_total,
                        resume ? RECD_M_SEQ_EPOCH_RESUME : RECD_M_SEQ_EPOCH_WINDOW, 1);
        log_notice("%s: session '%s': sequence numbers start again at %llu (%s)",
                   session_input_peer(in), s->key, (unsigned long long)seq,
                   resume ? "restarted after an open with resume"
                          : "far outside the window of the last accepted ones");
        return true;
    }
    }
    return true;
}

/* UDP sequence numbers: false for a duplicate (or reordered) message, which is dropped. */
static bool sequence_ok(session_input *in, recd_session *s, uint64_t seq)
{
    uint64_t lost;
    seq_verdict v = seq_window_take(&s->seq, seq, &lost);
    if (v == SEQ_NEXT && !lost)
        return true;
    return sequence_counted(in, s, v, seq, lost);
}

/* A datagram open with resume of a live session: the sender may have restarted its numbering. */
static void sequence_resumed(session_input *in, recd_session *s, const recd_msg *m)
{
    uint64_t lost;
    seq_verdict v = seq_window_resume(&s->seq, m->has_seq, m->seq, &lost);
    sequence_counted(in, s, v, m->seq, lost);
}

/* ---- dispatch -------------------------------------------------------------------------------- */

/* Where a format's state starts in the session's allocation: behind the session, aligned for
 * any type. */
#define SESSION_STATE_OFFSET                                                                       \
    ((sizeof(recd_session) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) *                 \
     _Alignof(max_align_t))

static recd_session *session_new(recd_sessions *r, const recd_msg *m, const session_format *ops,
                                 uint64_t now_ms)
{
    recd_session *s = calloc(1, SESSION_STATE_OFFSET + ops->state_size);
    if (!s)
        return NULL;
    s->env = &r->env;
    s->ops = ops;
    if (ops->state_size)
        s->format_data = (char *)s + SESSION_STATE_OFFSET;
    memcpy(s->key, m->session, sizeof s->key);
    s->key[RECD_SESSION_KEY_MAX] = 0;
    s->key_len = (uint8_t)strlen(s->key);
    s->format = m->format;
    s->start_epoch_ms = m->open.has_start_time ? m->open.start_time_ms : recd_epoch_ms();
    s->start_mono_ms = now_ms;
    s->last_input_ms = now_ms;
    s->last_flush_ms = now_ms;
    return s;
}

/* Whether one more session fits: limits.max_sessions, and the opening peer's share of it
 * (limits.max_sessions_per_peer), so that one peer cannot keep every other one out. The refusal
 * names the limit, or 0. */
static int check_session_limits(session_input *in, const recd_msg *m, char *why, size_t whylen)
{
    recd_sessions *r = in->sessions;
    const recd_config *cfg = r->env.cfg;
    if (in->datagram)
        peer_key_from_sockaddr(in->peer_addr, &in->key);
    const peer_entry *p = peer_counts_find(&r->peers, &in->key);
    uint32_t share = recd_config_peer_sessions(cfg);
    if (p && p->open >= share && !sessions_make_peer_room(r, p, share)) {
        char name[64];
        return session_refuse(in, RECD_M_PEER_SESSIONS, why, whylen,
                              "open of session '%s' refused: %s holds %u sessions, and its share "
                              "is %u (limits.max_sessions_per_peer)",
                              m->session, peer_key_name(&in->key, name, sizeof name), p->open,
                              share);
    }
    if (!sessions_make_room(r)) /* forgets the dormant session idle longest, if one is kept */
        return session_refuse(in, RECD_M_MAX_SESSIONS, why, whylen,
                              "open of session '%s' refused: %u sessions are open (limits.max_sessions)",
                              m->session, cfg->limits.max_sessions);
    return 0;
}

/* The new session counts toward its peer's share (not counted when the peer is unknown, as for
 * nats://, or when there is no memory for its entry). */
static void charge_peer(session_input *in, recd_session *s)
{
    s->peer = peer_counts_ref(&in->sessions->peers, &in->key);
}

/* A client certificate's identity may open only the keys of its identities pattern (when the
 * section is set), and a session that an identity owns is that identity's alone. 0 or the
 * refusal. */
static int check_identity(session_input *in, const recd_msg *m, const recd_session *s,
                          char *why, size_t whylen)
{
    const recd_config *cfg = in->sessions->env.cfg;
    const char *id = in->identity ? in->identity : "";
    if (s && strcmp(s->identity, id) != 0)
        return session_refuse(in, RECD_M_NOT_OWNER, why, whylen,
                              "open of session '%s' refused: it belongs to %s%s%s, not to %s%s%s",
                              m->session, s->identity[0] ? "identity '" : "no client certificate",
                              s->identity, s->identity[0] ? "'" : "", id[0] ? "identity '" : "",
                              id[0] ? id : "a sender without a client certificate", id[0] ? "'" : "");
    if (!id[0] || !cfg->identity_count)
        return 0;
    const recd_identity_rule *rule = identity_rule_for(cfg, id);
    if (rule && identity_may_open(rule, m->session))
        return 0;
    if (!rule)
        return session_refuse(in, RECD_M_AUTH, why, whylen,
                              "open of session '%s' refused: identity '%s' matches no pattern of "
                              "identities", m->session, id);
    return session_refuse(in, RECD_M_AUTH, why, whylen,
                          "open of session '%s' refused: identity '%s' (identities '%s') may open "
                          "sessions '%s' only", m->session, id, rule->pattern, rule->sessions);
}

static int dispatch_open(session_input *in, const recd_msg *m, uint64_t now_ms, char *why,
                         size_t whylen)
{
    recd_sessions *r = in->sessions;
    const recd_config *cfg = r->env.cfg;
    /* A verified client certificate stands for the token. */
    if (cfg->auth.token && !in->identity &&
        (!m->open.auth || strcmp(m->open.auth, cfg->auth.token) != 0))
        return session_refuse(in, RECD_M_AUTH, why, whylen, "open of session '%s': %s auth token", m->session,
                      m->open.auth ? "wrong" : "missing");
    int denied = check_identity(in, m, session_table_get(&r->table, m->session), why, whylen);
    if (denied < 0)
        return denied;
    const session_format *ops = session_format_for(m->format);
    if (!ops)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "open of session '%s' without a format",
                      m->session);
    if (m->open.ring && !ops->ring_save) {
        say_no_ring("open", m->session, m->format, why, whylen);
        return refuse_as(in, RECD_M_SCHEMA);
    }
    recd_session *s = session_table_get(&r->table, m->session);
    /* A nats:// message is acknowledged only once written: JetStream keeps it meanwhile, so it is
     * taken and waits like data on a full disk, rather than refused and acknowledged. */
    if (r->root_refusal[0] && !(s && m->open.resume) && in->transport != RECD_M_NATS)
        return session_refuse(in, RECD_M_UNWRITABLE, why, whylen, "open of session '%s' refused: %s",
                              m->session, r->root_refusal);
    if (s) {
        if (s->format != m->format)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                          "open of session '%s' as %s, but it is open as %s", m->session,
                          recd_msg_format_name(m->format), recd_msg_format_name(s->format));
        /* A resend after a restarted sender must not run into the live file: its clock starts
         * again and the times would be squashed behind the old ones. A dormant session's file
         * is finalized already, so the new open simply replaces it. */
        if (m->open.resume) {
            /* The token was checked above: the sender takes the session over, as it is. */
            if (s->owner != owner_of(in))
                log_info("session '%s' resumed from %s", s->key, session_input_peer(in));
            s->owner = owner_of(in);
            if (in->datagram) {
                in->datagram_opened = s;
                sequence_resumed(in, s, m);
            }
            s->last_input_ms = now_ms;
            in->accepted = true;
            return 0;
        }
        if (!s->dormant && cfg->sessions.second_open == RECD_SECOND_OPEN_REFUSE)
            return session_refuse(in, RECD_M_ALREADY_OPEN, why, whylen,
                                  "open of session '%s' refused: it is open already (close it "
                                  "first, or open it with resume to take it over; the server's "
                                  "sessions.second_open: new_file starts a new file instead)",
                                  m->session);
        log_info("session '%s' opened again from %s: %s", m->session, session_input_peer(in),
                 s->dormant ? "its idle session is replaced" : "the live one is closed and the new one gets a file of its own");
        session_close(s, "opened again");
    }
    int refused = check_session_limits(in, m, why, whylen);
    if (refused < 0)
        return refused;
    s = session_new(r, m, ops, now_ms);
    if (!s)
        return -ENOMEM;
    charge_peer(in, s);
    if (in->datagram && m->has_seq) {
        uint64_t lost;
        seq_window_take(&s->seq, m->seq, &lost); /* the first: starts the numbering */
    }
    s->owner = owner_of(in);
    if (in->identity)
        snprintf(s->identity, sizeof s->identity, "%s", in->identity);
    if (in->datagram)
        in->datagram_opened = s;
    if ((m->open.ring || cfg->ring.all) && ops->ring_save && session_ring_start(s) < 0) {
        peer_counts_unref(&r->peers, s->peer);
        free(s);
        return -ENOMEM;
    }
    if (ops->open) {
        int rc = ops->open(s, m, why, whylen);
        if (rc < 0) {
            session_ring_free(s);
            peer_counts_unref(&r->peers, s->peer);
            free(s);
            if (rc == -ENOMEM)
                return rc;
            return refuse_as(in, RECD_M_SCHEMA);
        }
    }
    if (sessions_add(r, s) < 0) {
        session_discard(s);
        return -ENOMEM;
    }
    in->accepted = true;
    log_debug("session '%s' opened (%s) from %s", s->key, recd_msg_format_name(s->format),
              session_input_peer(in));
    return 0;
}

/* The peer that opened s is over its share of buffered bytes: its stream waits like one over a
 * session's limit (sessions_over_limit() says when it may go on). Cold: once per paused read. */
__attribute__((cold, noinline)) static bool peer_over_share(session_input *in, recd_session *s)
{
    if (!session_peer_over_share(s))
        return false;
    char name[64];
    recd_metric_add(s->env->metrics->backpressure_events_total, 0, 1);
    log_warn("%s: %s holds more than its share of unwritten bytes (limits.peer_buffer, %llu "
             "bytes): its input waits for writes",
             session_input_peer(in), peer_key_name(&s->peer->key, name, sizeof name),
             (unsigned long long)recd_config_peer_buffer(s->env->cfg));
    return true;
}

static void note_limits(session_input *in, recd_session *s)
{
    const session_env *env = s->env;
    /* The peer's share is logged and counted once per read, not once per sample of it. */
    if (s->buffered > env->cfg->limits.session_buffer || (s->write_failing && !in->shared) ||
        (!in->over_key[0] && s->peer && s->peer->bytes > recd_config_peer_buffer(env->cfg) &&
         peer_over_share(in, s)))
        memcpy(in->over_key, s->key, sizeof in->over_key);
    if (session_env_used(env) > env->cfg->limits.process_buffer)
        in->over_process = true;
}

/* Kept out of line (cold), so that the checks every sample runs stay small enough to inline. */
__attribute__((cold, noinline)) static bool datagram_dropped(session_input *in, recd_session *s)
{
    const session_env *env = s->env;
    bool peer_over = s->buffered <= env->cfg->limits.session_buffer &&
                     session_env_used(env) <= env->cfg->limits.process_buffer;
    if (peer_over && !session_peer_over_share(s))
        return false;
    recd_metric_add(env->metrics->backpressure_events_total, 0, 1);
    recd_m_drop reason = peer_over ? RECD_M_DROP_PEER_BUFFER : RECD_M_DROP_BUFFER_FULL;
    recd_metric_add(env->metrics->samples_dropped_total, reason, 1);
    session_count_drop(s, reason, 1);
    s->refused++;
    if (peer_over) {
        char name[64];
        log_warn("%s: session '%s': %s is over its share of unwritten bytes (limits.peer_buffer): "
                 "datagram dropped",
                 session_input_peer(in), s->key, peer_key_name(&s->peer->key, name, sizeof name));
    } else {
        log_warn("%s: session '%s' is over its buffer limit: datagram dropped",
                 session_input_peer(in), s->key);
    }
    return true;
}

/* A datagram for a session over its buffer limits, or whose peer is over its share, is dropped:
 * UDP has no backpressure. */
static bool datagram_over_limits(session_input *in, recd_session *s)
{
    const session_env *env = s->env;
    if (!in->datagram || (s->buffered <= env->cfg->limits.session_buffer &&
                          session_env_used(env) <= env->cfg->limits.process_buffer &&
                          !(s->peer && s->peer->bytes > recd_config_peer_buffer(env->cfg))))
        return false;
    return datagram_dropped(in, s);
}

/* What every sample passes before its format takes it: a state must be of the session's format,
 * and a datagram over the buffer limits is dropped. 1 to go on (the session's activity clock is
 * set), 0 when dropped, or a refusal. */
/* Inlined by force: the fast lane's per-sample cost (bench/callgrind.sh S1) paid ~22
 * instructions for the call when gcc chose to keep it out of line. */
static inline __attribute__((always_inline)) int admit_sample(session_input *in, recd_session *s,
                                                              bool is_state, recd_msg_format f,
                                                              uint64_t now_ms, char *why,
                                                              size_t whylen)
{
    if (is_state && f != s->format)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "a %s state for session '%s', which is %s",
                      recd_msg_format_name(f), s->key, recd_msg_format_name(s->format));
    if (datagram_over_limits(in, s))
        return 0;
    s->last_input_ms = now_ms;
    if (s->dormant)
        session_wake(s);
    s->inputs++;
    in->touched = s;
    return 1;
}

/* A message for s was refused (rc < 0): the session counts it by reason for the console. */
__attribute__((cold, noinline)) static int refused_by(session_input *in, recd_session *s, int rc)
{
    if (rc == -EBADMSG && in->reason_set)
        session_count_refusal(s, in->reason);
    return rc;
}

/* After a format took a sample (rc is what it returned). */
static int sample_taken(session_input *in, recd_session *s, int rc)
{
    if (rc < 0)
        return refused_by(in, s, rc);
    if (!s->ops->pending) /* the format keeps nothing back: the sample's bytes are queued */
        s->inputs_queued = s->inputs;
    note_limits(in, s);
    session_maybe_flush(s);
    return 0;
}

static int dispatch_sample(session_input *in, recd_session *s, const recd_msg *m,
                           const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen)
{
    if (m->type == RECD_MSG_EVENT && !s->ops->events)
        return refused_by(in, s, session_refuse(in, RECD_M_SCHEMA, why, whylen,
                                                "event for session '%s': %s sessions have no events",
                                                s->key, recd_msg_format_name(s->format)));
    int rc = admit_sample(in, s, m->type == RECD_MSG_STATE, m->format, now_ms, why, whylen);
    if (rc <= 0)
        return rc < 0 ? refused_by(in, s, rc) : rc;
    /* Before the format takes it: a format may move what the message owns (meta->movable). */
    if (m->type == RECD_MSG_EVENT || session_live_due(s->live_ms, now_ms))
        session_live_note(s, m, now_ms);
    rc = s->ops->sample(s, in, m, meta, now_ms, why, whylen);
    return sample_taken(in, s, rc);
}

/* The session a key of len bytes names, or a refusal. Sets the format its bytes count under. */
static recd_session *find(session_input *in, const char *type, const char *key, size_t len,
                          char *why, size_t whylen)
{
    recd_session *s = session_table_find(&in->sessions->table, key, len);
    if (!s) {
        session_refuse(in, RECD_M_UNKNOWN_SESSION, why, whylen,
                       "%s for unknown session '%.*s' (never opened, or closed)", type, (int)len,
                       key);
        return NULL;
    }
    in->acct_format = s->format;
    return s;
}

/* A fast-lane state for a session whose format has no state_fast hook: decoded and given to its
 * sample hook. Cold: a format whose states the wire hands over as records provides the hook. */
__attribute__((cold, noinline)) static int state_decoded(session_input *in, recd_session *s,
                                                         const recd_wire_rec_state *st,
                                                         const recd_wire_meta *meta,
                                                         uint64_t now_ms, char *why, size_t whylen)
{
    recd_msg m;
    if (recd_wire_rec_state_msg(st, &m) < 0)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "state for session '%s': a record its format does not take", s->key);
    return s->ops->sample(s, in, &m, meta, now_ms, why, whylen);
}

int session_dispatch_fast(session_input *in, const recd_wire_rec_state *st,
                          const recd_wire_meta *meta, char *why, size_t whylen)
{
    /* format_of found it for this very frame: no second lookup. */
    recd_session *s = st->handle;
    if (s)
        in->acct_format = s->format;
    else if (!(s = find(in, "state", st->key, st->key_len, why, whylen)))
        return -EBADMSG;
    /* One compare per frame for a stream that owns the session (its number is never 0). */
    if ((!in->owner || s->owner != in->owner) && check_owner(in, s, "state", why, whylen) < 0)
        return refused_by(in, s, -EBADMSG);
    if (in->datagram && st->has_seq && !sequence_ok(in, s, st->seq))
        return 0;
    in->has_seq = st->has_seq;
    in->seq = st->seq;
    in->save_now = st->save_now;
    uint64_t now_ms = session_now_ms(s);
    int rc = admit_sample(in, s, true, st->format, now_ms, why, whylen);
    if (rc <= 0)
        return rc < 0 ? refused_by(in, s, rc) : rc;
    const session_format *ops = s->ops;
    rc = ops->state_fast ? ops->state_fast(s, in, st->time_ms, meta->has_time, st->fields, now_ms)
                         : state_decoded(in, s, st, meta, now_ms, why, whylen);
    if (__builtin_expect(session_live_due_fast(s->live_ms, now_ms), 0) && rc >= 0)
        session_live_note_fast(s, st, now_ms);
    return sample_taken(in, s, rc);
}

int sessions_save(recd_sessions *r, const char *key, uint32_t last_ms, const char *label,
                  char *why, size_t whylen)
{
    recd_session *s = session_table_get(&r->table, key);
    if (!s) {
        snprintf(why, whylen, "no open session '%s'", key);
        return -ENOENT;
    }
    if (!s->ops->ring_save) {
        say_no_ring("save", key, s->format, why, whylen);
        return -EBADMSG;
    }
    return session_ring_save(s, last_ms, label, why, whylen);
}

int session_dispatch(session_input *in, const recd_msg *m, const recd_wire_meta *meta, char *why,
                     size_t whylen)
{
    uint64_t now_ms = sessions_now_ms(in->sessions);
    if (m->type == RECD_MSG_OPEN) {
        in->acct_format = m->format;
        int rc = dispatch_open(in, m, now_ms, why, whylen);
        recd_session *open = rc < 0 ? session_table_get(&in->sessions->table, m->session) : NULL;
        return open ? refused_by(in, open, rc) : rc; /* a live session's key, refused to this open */
    }
    recd_session *s = find(in, recd_msg_type_name(m->type), m->session,
                           strnlen(m->session, RECD_SESSION_KEY_MAX), why, whylen);
    if (!s)
        return -EBADMSG;
    if (check_owner(in, s, recd_msg_type_name(m->type), why, whylen) < 0)
        return refused_by(in, s, -EBADMSG);
    if (in->datagram && m->has_seq && !sequence_ok(in, s, m->seq))
        return 0;
    in->has_seq = m->has_seq;
    in->seq = m->seq;
    in->save_now = m->save_now;
    switch (m->type) {
    case RECD_MSG_STATE:
    case RECD_MSG_EVENT: return dispatch_sample(in, s, m, meta, now_ms, why, whylen);
    case RECD_MSG_FLUSH:
        s->last_input_ms = now_ms;
        if (s->ops->flush_message && s->ops->flush_message(s, m, why, whylen) < 0)
            return refused_by(in, s, refuse_as(in, RECD_M_SCHEMA));
        session_flush(s);
        in->touched = s;
        in->accepted = true;
        return 0;
    case RECD_MSG_SAVE: {
        if (!s->ops->ring_save) {
            say_no_ring("save", s->key, s->format, why, whylen);
            return refused_by(in, s, refuse_as(in, RECD_M_SCHEMA));
        }
        s->last_input_ms = now_ms;
        int rc = session_ring_save(s, m->save.last_ms, m->save.label, why, whylen);
        if (rc == -EBADMSG)
            return refused_by(in, s, refuse_as(in, RECD_M_SCHEMA));
        if (rc < 0)
            return rc;
        in->accepted = true;
        return 0;
    }
    case RECD_MSG_CLOSE:
        if (s->ops->close_message)
            s->ops->close_message(s, m);
        in->touched = s; /* before: the close may free it (on.freed clears touched) */
        session_close(s, "close message");
        in->accepted = true;
        return 0;
    default:
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "unexpected message type %d", (int)m->type);
    }
}

