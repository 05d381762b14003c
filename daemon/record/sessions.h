/* SPDX-License-Identifier: MIT */
/* The session registry: every live session by key (session_table.h) and in one list for the
 * timers, the process-wide byte total, dispatch of decoded messages (session_dispatch.c), and
 * the session lifecycle: flushing by time and size, the writer hand-off, dormancy, close
 * (sessions.c). It calls nothing above it: what the layers above need to hear (bytes were
 * written, a session is gone) goes to the callbacks the app layer installed. */
#ifndef RECD_DAEMON_SESSIONS_H
#define RECD_DAEMON_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <uv.h>

#include "session.h"
#include "session_table.h"

/* A failed write is tried again after WRITE_RETRY_FIRST_MS, doubling up to WRITE_RETRY_MAX_MS.
 * At shutdown a session gives up after WRITE_RETRY_AT_STOP more failures (about 3 s), and so
 * does a store a session leaves behind (a manifest its format keeps). */
#define WRITE_RETRY_FIRST_MS 100u
#define WRITE_RETRY_MAX_MS 5000u
#define WRITE_RETRY_STOP_MAX_MS 1000u
#define WRITE_RETRY_AT_STOP 5u

/* Events for the layer above, as {callback, data} pairs (either callback may be NULL). */
typedef struct sessions_events {
    void (*room)(void *data); /* a write completed: input paused for the limits may go on */
    /* A session was freed (live_count fell), or a store it left behind (stores_pending fell). */
    void (*gone)(void *data);
    /* Just before s is freed: everything it queued was written, unless lost_total says otherwise
     * or it was given up (its bytes then count in bytes_lost). */
    void (*freed)(void *data, const recd_session *s);
    void *data;
} sessions_events;

typedef struct recd_sessions {
    session_env env; /* first: a session reaches its registry through s->env */
    session_table table;
    LIST_HEAD(session_list, recd_session) live; /* open or finishing */
    size_t live_count;
    /* Stores freed sessions left behind that still have lines to write (a manifest):
     * the shutdown waits for them as for sessions (sessions_finished()). */
    size_t stores_pending;
    /* Dormant sessions (file finalized after rotation.idle_timeout, key still known), the one
     * dormant longest first: forgotten after rotation.forget_after, or first when there are more
     * than limits.max_dormant_sessions, or to make room for a new open at limits.max_sessions. */
    TAILQ_HEAD(dormant_list, recd_session) dormant;
    size_t dormant_count;
    uint64_t last_write_error_ms; /* for /healthz */
    uint64_t owners;              /* stream connections numbered as session owners so far */
    bool stopping;                /* shutdown: writes that keep failing are given up */
    uint64_t parts_left;          /* parts left as .part after write errors */
    uint64_t parts_vanished;      /* files removed behind recd's back (their parts started again) */
    uint64_t bytes_lost;          /* accepted bytes that never reached a file */
    peer_counts peers;            /* sessions and their bytes per peer, for the fair shares */
    /* Why recd cannot create files under the output root now ("" when it can), set by the layer
     * above from its probes: opens of new sessions are refused with it. */
    char root_refusal[320];
    sessions_events on;
} recd_sessions;

/* 0 or -ENOMEM. cfg, metrics and writer stay the caller's and must outlive the registry. */
int sessions_init(recd_sessions *r, uv_loop_t *loop, const recd_config *cfg,
                  recd_daemon_metrics *metrics, writer_stage *writer, sessions_events on);
void sessions_free(recd_sessions *r); /* after every session is gone */
/* At start, after .part recovery: each format's recover_root step (session_formats.c), logged. */
void sessions_recover_root(int root_fd);

static inline uint64_t sessions_now_ms(const recd_sessions *r) { return uv_now(r->env.loop); }

/* The registry a session's environment belongs to. */
static inline recd_sessions *sessions_of(session_env *env)
{
    return (recd_sessions *)((char *)env - offsetof(recd_sessions, env));
}

/* No session is left, and nothing a freed one left behind still writes: a stop may finish. */
static inline bool sessions_finished(const recd_sessions *r)
{
    return r->live_count == 0 && r->stores_pending == 0;
}

/* True when the process, or the session named key ("" for none) or the peer that opened it, holds
 * more unwritten bytes than its limit: input paused for it stays paused. */
bool sessions_over_limit(recd_sessions *r, const char *key);

/* Timer work for every session: flush by time, idle rotation, forgetting dormant sessions. */
void sessions_tick(recd_sessions *r, uint64_t now_ms);
/* Room for one more session under limits.max_sessions: true when there is, if need be after
 * forgetting the sessions dormant longest (their files are finalized); false when there is not. */
bool sessions_make_room(recd_sessions *r);
/* The same for one peer at its share (limits.max_sessions_per_peer): its own sessions dormant
 * longest are forgotten first; false when it holds its share with none dormant. */
bool sessions_make_peer_room(recd_sessions *r, const struct peer_entry *peer, uint32_t share);
/* Finalizes every session (shutdown); each is freed once written, then on.gone runs. */
void sessions_close_all(recd_sessions *r, const char *why);

/* ---- dispatch (session_dispatch.c) ---- */

/* Applies one decoded message. Returns 0 when it was accepted, or dropped and counted; a negative
 * errno when it violates the protocol (why says how; in->reason says which metric): a TCP
 * connection is then answered with an error and closed, a UDP datagram is dropped. */
int session_dispatch(session_input *in, const recd_msg *m, const recd_wire_meta *meta, char *why,
                     size_t whylen);
/* The same for a state the wire handed over as its fixed-size record (the binary frames' fast
 * lane, recd_wire_decoder_config.on_rec_state): given to the format's state_fast hook. */
int session_dispatch_fast(session_input *in, const recd_wire_rec_state *st,
                          const recd_wire_meta *meta, char *why, size_t whylen);
/* Makes in the owner of s, as a resume would: for an input started again in place of the one
 * that opened s (a nats:// input restarted by a reload). */
void session_hand_to(session_input *in, recd_session *s);
/* recd_wire_format_fn over the registry (ctx is a session_input); the handle is the session. */
recd_msg_format session_format_of(void *ctx, const char *key, size_t len, void **handle);
/* recd_wire_lend_fn (recd/wire_lend.h) for session_format_of's handles: the format's lend_state. */
void *session_lend_state(void *ctx, void *handle);
/* Instant replay asked for outside the wire (POST /sessions/KEY/save): as a save message for the
 * open session key (checked by the caller). 0, -ENOENT (no such session), -EBADMSG (no ring, or
 * nothing in it) with why, -ENOMEM. */
int sessions_save(recd_sessions *r, const char *key, uint32_t last_ms, const char *label,
                  char *why, size_t whylen);

/* ---- one session's lifecycle (sessions.c), for dispatch ---- */

/* Adds a new session (its format opened it) to the table and the live list. 0 or -ENOMEM. */
int sessions_add(recd_sessions *r, recd_session *s);
void session_discard(recd_session *s); /* frees a session that was never added */
/* True when the peer that opened s holds more unwritten bytes than its share, limits.peer_buffer. */
bool session_peer_over_share(const recd_session *s);
/* A dormant session got input again: it leaves the dormant list (its next bytes start a part). */
void session_wake(recd_session *s);
/* Writes what is buffered now (flush messages, shutdown). */
void session_flush(recd_session *s);
void session_maybe_flush(recd_session *s); /* flush when over flush.buffer_size */
/* Finalizes the current part, detaches the session and frees it once written (close message,
 * shutdown, forgetting a dormant session). */
void session_close(recd_session *s, const char *why);

#endif
