/* SPDX-License-Identifier: MIT */
/* A recording session and what its format modules use of it. A session is one recording keyed by
 * the client's session key: it outlives connections (a reconnecting TCP client or a UDP client
 * resumes it), turns samples into file bytes on the loop thread in its format's way
 * (formats/NAME/) and queues them for the writer stage. This header is the bottom of the record
 * layer: the session, its environment, the input it is given, the format descriptor's type, and
 * the buffering and part helpers (session.c). The registry that owns sessions, with
 * dispatch, flushing and the lifecycle, is sessions.h. */
#ifndef RECD_DAEMON_SESSION_H
#define RECD_DAEMON_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <uv.h>

#include "part_manifest.h"
#include "session_seq.h"
#include "recd/message.h"
#include "recd/wire.h"
#include "support/config.h"
#include "support/metrics.h"
#include "support/peer_counts.h"
#include "write/writer.h"

struct sockaddr;
struct recd_sessions;
typedef struct session_format session_format;
typedef struct session_ring session_ring;
struct session_ring_entry;

/* What every session of a registry shares (the first member of recd_sessions, sessions.h). */
typedef struct session_env {
    uv_loop_t *loop;          /* its cached time is the sessions' clock */
    const recd_config *cfg;   /* the running configuration (reload changes it in place) */
    recd_daemon_metrics *metrics;
    writer_stage *writer;
    uint64_t buffered;        /* bytes accepted and not yet written, all sessions */
    /* The part of buffered that formats hold until a unit of input is complete (a tick being
     * collected): no write releases it. */
    uint64_t collecting;
    /* State sessions keep because of what their peers sent, which no write releases (live
     * actors): counts toward limits.process_buffer, bounded apart (session_hold()). */
    uint64_t held;
    uint64_t ring_bytes;    /* memory of every instant-replay ring (session_ring.c) */
    uint64_t ring_sessions; /* sessions keeping one */
} session_env;

typedef struct recd_session {
    /* First the fields every sample touches, packed into as few cache lines as possible: with
     * thousands of interleaved sessions each sample finds its session out of cache, and every
     * further line is another miss (docs/performance.md). */
    struct recd_session *hnext; /* session_table chain */
    session_env *env;
    uint8_t key_len;
    bool in_table; /* false once closed: the key may be opened again while this one finishes */
    bool closing;  /* no more input; freed when the writer is done */
    bool dormant;  /* idle: file finalized, buffers freed, resumes on the next sample */
    bool write_failing;  /* its last write failed and waits for a retry (see session_input.shared) */
    recd_msg_format format;
    char key[RECD_SESSION_KEY_MAX + 1];

    /* Who may send to it: the connection that opened or last resumed it (session_input.owner),
     * or 0 for datagrams. On the line last_input_ms is on: checked with every sample. */
    uint64_t owner;
    uint64_t last_input_ms;    /* monotonic time of the last message */
    uint64_t live_ms;          /* when the console's view last took a sample (session_live.h) */
    uint64_t pending_since_ms; /* oldest unflushed input; 0 when nothing is pending */
    uint64_t buffered; /* bytes accepted and not yet written (queued, in flight, in the encoder) */
    /* The peer that opened it (its share of sessions and bytes), or NULL: not counted per peer. */
    peer_entry *peer;

    /* Current part: NULL until the first bytes of a part are produced. */
    writer_part *part;
    uint64_t part_written; /* its size on disk after the last job that wrote it */
    uint64_t part_pending; /* bytes queued for it and not yet written (uncompressed) */
    writer_queue queue;


    /* Colder: per part, per flush, per timer tick. */
    LIST_ENTRY(recd_session) live; /* every live session, for the timers */
    int64_t start_epoch_ms;   /* session start, Unix ms (open's start_time or arrival) */
    char identity[RECD_IDENTITY_MAX + 1]; /* the client certificate that owns it; "" none */
    uint64_t start_mono_ms;   /* monotonic clock at open: arrival stamps count from here */
    uint64_t last_flush_ms;
    uint64_t dormant_since_ms;
    TAILQ_ENTRY(recd_session) dormant_link; /* while dormant: the registry's list, oldest first */
    seq_window seq; /* UDP sequence numbers (session_seq.h) */
    uint32_t part_no;      /* parts started so far (the next one gets this number) */
    /* Messages of a nats:// input that fed it and wait for their acknowledgement: only while
     * there are any does freeing it look for them (listener_nats.c). */
    uint32_t input_pending;
    part_tally tally; /* output.part_manifest: what the current part holds */
    /* Its samples refused as unwritable (told to a stream sender) or dropped after they arrived
     * (a datagram over the buffer limits, a tick that could not be written): a datagram
     * sender hears no reply, so the count is logged with the key when the session closes. */
    uint64_t refused;
    /* Its refused messages by reason (recd_m_reason) and then its dropped samples by reason
     * (recd_m_drop), for the console; NULL until the first (most sessions never have one). */
    uint64_t *drops_by;
    uint64_t retry_at_ms;     /* while write_failing: when the writer tries again */
    uint32_t retry_delay_ms;  /* the backoff: doubles with each failure up to a cap */
    uint32_t stop_retries;    /* failed tries since the shutdown began */
    uint64_t packed_in, packed_out; /* members compressed so far: the ratio to expect */
    /* Bytes handed to the writer queue so far and bytes of it the writer consumed: input that
     * led to queued_total bytes is in a file once written_total reaches that (input that waits
     * for acknowledgement, nats://, uses it). lost_total: bytes of it that never reached a file. */
    uint64_t queued_total, written_total, lost_total;
    /* Samples dispatched to it so far, and how many of the first of them the format holds no
     * more: their bytes count in queued_total. */
    uint64_t inputs, inputs_queued;
    uint64_t held;              /* its part of env->held (session_hold()) */
    const session_format *ops;  /* what the session does in its format's way */
    /* The format's own state, or NULL: ops->state_size bytes allocated, zeroed, with the session
     * (right behind it), or what the format's open allocated itself. */
    void *format_data;
    /* The input's own record of it, or NULL: a nats:// input keeps what another instance needs
     * to take the session over (listener_nats.c); freed by that input when the session is. */
    void *input_record;
    /* Instant replay (session_ring.h): its samples are kept in memory, not written, until a save;
     * NULL when it writes as usual. */
    session_ring *ring;
    struct session_live *view; /* the console's view of its latest samples, or NULL */
} recd_session;

/* Accepted input not yet added to the metrics: published once per read, not per message. */
typedef struct input_tally {
    uint64_t samples[RECD_M_FORMATS], bytes[RECD_M_FORMATS];
} input_tally;

/* How a message reached the daemon; filled by the listener, read and written by dispatch. */
typedef struct session_input {
    struct recd_sessions *sessions;
    recd_m_transport transport;
    bool datagram;        /* UDP rules: sequence numbers, drop instead of backpressure */
    /* One input carries many publishers' sessions (a nats:// partition): a session whose writes
     * fail holds it up only past its buffer limits, not at the first failure, so one unwritable
     * folder does not stop everyone else's sessions. A connection is its peer's own and waits at
     * once. */
    bool shared;
    const char *peer;     /* for log lines (session_input_peer()); NULL for a datagram: */
    const struct sockaddr *peer_addr; /* its sender, formatted only when a line is logged */
    /* The peer for the fair shares: set at accept for a stream (family 0: not counted, as for
     * nats://); taken from peer_addr by an open for a datagram. */
    peer_key key;
    char peer_buf[96];
    input_tally *tally;
    bool reason_set;      /* dispatch refused a message and chose the metric label: */
    recd_m_reason reason;
    bool accepted;        /* the last message was applied (not dropped): count its bytes */
    char over_key[RECD_SESSION_KEY_MAX + 1]; /* a session over its buffer limit ("" none) */
    bool over_process;                       /* the process is over its buffer limit */
    bool lookup_missed;   /* format_of found no session: an unknown-session error follows */
    /* The session the last message fed (a sample, flush or close), or NULL: input that is
     * acknowledged once written (nats://) waits for it. Cleared by the caller. */
    struct recd_session *touched;
    /* Streams: this connection's number as an owner of sessions, given at its first message
     * (0 until then; datagrams stay 0). */
    uint64_t owner;
    /* A TLS connection's verified client certificate name (identities), or NULL: a session it
     * opens belongs to it, and only it may resume the session. */
    const char *identity;
    /* Datagrams with auth.token set: the session whose open or resume, with the token, came
     * earlier in this datagram; only its messages are taken. */
    struct recd_session *datagram_opened;
    /* The wire sequence number of the message being dispatched, when it has one (set by
     * dispatch for every message): formats note it in the part's tally. */
    bool has_seq;
    uint64_t seq;
    /* The message's save flag (recd_msg.save_now): a ring session saves its window once the
     * sample is kept (session_ring_save_flagged()); other sessions ignore it. */
    bool save_now;
    /* Input byte accounting: a message's size is known when the next one starts. */
    bool acct_open, acct_sample;
    recd_msg_format acct_format;
    uint64_t acct_offset;
} session_input;

/* The sender, for log lines. */
const char *session_input_peer(session_input *in);

/* Refuses the message being dispatched: writes why, sets the metric label, returns -EBADMSG. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int session_refuse(session_input *in, recd_m_reason reason, char *why, size_t whylen,
                   const char *fmt, ...);

/* The loop's cached time, refreshed once per loop iteration: samples read in one batch share an
 * arrival time, and a per-sample clock read (a fifth of the loop's time in the S1 profile) is
 * avoided. Monotonic milliseconds. */
static inline uint64_t session_now_ms(const recd_session *s) { return uv_now(s->env->loop); }

/* Buffering and parts, for the format modules and the registry. */
int session_start_part(recd_session *s, int64_t start_epoch_ms, int gzip_level);
int session_put(recd_session *s, const void *data, size_t len);
/* Queues len bytes (len > 0) for the current part and returns where to write them (valid until
 * the session's next put or reserve); NULL without a part or memory. */
uint8_t *session_reserve(recd_session *s, size_t len);
void session_account(recd_session *s, int64_t delta); /* buffered bytes, session and process */
/* The session's count of refusals and drops by reason (s->drops_by), beside the metrics'. */
#define SESSION_DROP_SLOTS ((size_t)RECD_M_REASONS + (size_t)RECD_M_DROPS)
void session_count_refusal(recd_session *s, recd_m_reason reason);
void session_count_drop(recd_session *s, recd_m_drop reason, uint64_t samples);
/* Bytes going into the writer queue (counted in queued_total as well as in buffered). */
static inline void session_queued(recd_session *s, uint64_t len)
{
    s->queued_total += len;
    session_account(s, (int64_t)len);
}
/* Bytes accepted and held by all sessions: buffered, and state kept (compared with
 * limits.process_buffer). */
static inline uint64_t session_env_used(const session_env *env) { return env->buffered + env->held; }
/* State the session keeps because of what its peer sent, which only the peer (or the session's
 * end) lets go, such as live actors and the frame a writer holds back:
 * bounded by limits.session_state per session and half of limits.process_buffer over all, and
 * counted toward limits.process_buffer. session_hold_over() names the bound bytes more would
 * pass (NULL: none); session_hold() counts them. */
const char *session_hold_over(const recd_session *s, uint64_t bytes);
void session_hold(recd_session *s, uint64_t bytes);
void session_release(recd_session *s, uint64_t bytes);
void session_note_pending(recd_session *s, uint64_t now_ms); /* starts the flush clock */
bool session_should_rotate(const recd_session *s, uint64_t add_bytes, uint64_t span_ms);
void session_end_part(recd_session *s, uint8_t *header, size_t header_len);
/* output.part_manifest: samples samples (first_seq .. last_seq when has_seq) went into the current
 * part, the last of them at session time time_ms (has_time false: the format has no time for
 * them). */
void session_tally_add(recd_session *s, uint64_t samples, bool has_seq, uint64_t first_seq,
                       uint64_t last_seq, bool has_time, uint64_t time_ms);
/* output.part_manifest: the open batch's bytes end where the current part's tally does, so its
 * write may store the in-progress manifest (writer_set_progress). Call just before a plain seal. */
void session_note_progress(recd_session *s);
/* The same for one sample of the message being dispatched. The option is read from the shared
 * config first: with it off, the session's tally (a colder cache line) is not touched. */
static inline void session_tally_input(recd_session *s, const session_input *in, bool has_time,
                                       uint64_t time_ms)
{
    if (s->env->cfg->output.part_manifest)
        session_tally_add(s, 1, in->has_seq, in->seq, in->seq, has_time, time_ms);
}
/* Gives the current part another name; only before its first job has created it (in the sample
 * call that started it). 0 or -ENOMEM. */
int session_rename_part(recd_session *s, const char *rel);
/* Splits a relative part name "DIR/STEM.EXT": returns the length of "DIR/STEM" (the name without
 * its extension) and sets *dir_len, when not NULL, to the length of "DIR/" (0 without one). */
size_t session_name_split(const char *rel, size_t *dir_len);

/* A format's part of a session: one descriptor per output format, defined in its folder
 * (formats/NAME/) and listed once in session_formats.c, which finds it by message format
 * (session_format_for()). The registry (sessions.c, session_dispatch.c) calls through it and
 * never asks which format a session has. An entry left NULL means the format has nothing to do
 * there. */
struct row; /* a config schema row (support/config_schema.h) */
#define SESSION_FORMAT_MSGS 2 /* message formats one descriptor may record */
struct session_format {
    /* The message formats it records; the first names the descriptor in log lines. Unused
     * slots are 0 (no format). */
    recd_msg_format formats[SESSION_FORMAT_MSGS];
    /* Bytes of state the session gets with it as format_data (0: none, or open allocates its
     * own). One allocation with the session: bounded by limits.max_sessions as the session is. */
    size_t state_size;
    bool events; /* takes event messages */
    /* The open message (a new session): keeps what the format needs of it. 0, -ENOMEM, or
     * -EBADMSG with why. */
    int (*open)(recd_session *s, const recd_msg *open, char *why, size_t whylen);
    /* A decoded state or event. 0 (also when dropped and logged), or a refusal / -ENOMEM. */
    int (*sample)(recd_session *s, session_input *in, const recd_msg *m,
                  const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen);
    /* Optional, the fast lane: a state the wire handed over as its fixed-size record
     * (recd_wire_decoder_config.on_rec_state), given as its time (used when has_time, else the
     * arrival is stamped) and the checked bytes after it, stored as they are. Returns as sample
     * does. The hottest path: session_dispatch_fast() calls it through this pointer, with no
     * decode; a format without it gets such states decoded, through sample. */
    int (*state_fast)(recd_session *s, session_input *in, uint32_t time_ms, bool has_time,
                      const uint8_t *fields, uint64_t now_ms);
    /* A flush message, before the session flushes. 0 or -EBADMSG with why. */
    int (*flush_message)(recd_session *s, const recd_msg *m, char *why, size_t whylen);
    void (*close_message)(recd_session *s, const recd_msg *m); /* before the session closes */
    void (*flush)(recd_session *s, uint64_t now_ms); /* moves what it holds into the batch */
    /* After a flush: the clock flush.interval counts from for what it still holds, or 0. */
    uint64_t (*pending_since)(const recd_session *s);
    uint64_t (*encoder_bytes)(const recd_session *s); /* held outside the batch, estimated */
    /* The current part's size once everything queued for it is written, when that is not just
     * the bytes queued (a compressed format estimates it), for rotation by size. */
    uint64_t (*part_size)(const recd_session *s);
    bool (*pending)(const recd_session *s);           /* holds input not yet in the batch */
    void (*idle)(recd_session *s);                    /* no input for a while: keep less */
    /* Optional: gives up the session's spare state block to the decoder for its next state
     * (recd/wire_lend.h, through session_lend_state), or NULL. */
    void *(*lend_state)(recd_session *s);
    void (*end_part)(recd_session *s, bool session_end); /* required */
    void (*free)(recd_session *s);
    /* At start, after the .part files are recovered: completes what a crash left unfinished of
     * this format under the output root (recover_what names it for the log). The number of
     * things completed, or a negative errno. */
    int (*recover_root)(int root_fd);
    const char *recover_what;
    /* What the format writes, for recd --help ("CARLA recorder logs (.log)"); NULL: said by
     * another entry. */
    const char *files_what;
    /* What sessions_stores_pending counts, for the shutdown log line; NULL: it stores none. */
    const char *store_what;
    const recd_m_state_kind *state_kind; /* its state bound, for the metrics; NULL: none */
    /* Its own config section's schema rows (support/config_schema.h), installed by the top
     * layer through session_formats_install_config(); NULL: none. */
    const struct row *config_rows;
    size_t config_row_count;
    /* The bytes of recd_config.format_options its options take: [options_offset, + options_size);
     * size 0: none. Checked at start (session_formats_options_check): in range, no overlap. */
    size_t options_offset, options_size;
    /* Instant replay (session_ring.h): writes the ring's last last_ms as one file that stands
     * alone, named by label; NULL: the format keeps no ring. While s->ring is set, the format's
     * sample path puts its samples in the ring (session_ring_add) instead of a part. 0, -ENOMEM,
     * or -EBADMSG with why. */
    int (*ring_save)(recd_session *s, uint32_t last_ms, const char *label, char *why,
                     size_t whylen);
    /* An entry leaves the ring (window or memory bound): keeps what a later save needs of it
     * (the state it leaves behind). NULL: nothing. */
    void (*ring_dropped)(recd_session *s, const struct session_ring_entry *e);
};

#endif
