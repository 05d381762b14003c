/* Recording sessions. A session is one recording keyed by the client's session key: it outlives
 * connections (a reconnecting TCP client or a UDP client resumes it), turns samples into file
 * bytes on the loop thread (a .rec block, or Recap delta actions through the encoder) and queues
 * them for the writer stage, which it flushes by time and size. It rotates to a new part by size,
 * duration and idle time, and finalizes its file on close and shutdown. */
#ifndef RECD_DAEMON_SESSION_H
#define RECD_DAEMON_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/metrics.h"
#include "recd/message.h"
#include "recd/samp_rec.h"
#include "recd/wire.h"
#include "write/writer.h"

typedef struct recd_server recd_server;
struct sockaddr;
typedef struct session_format session_format;

typedef struct recd_session {
    /* First the fields every sample touches, packed into as few cache lines as possible: with
     * thousands of interleaved sessions each sample finds its session out of cache, and every
     * further line is another miss (docs/performance.md). */
    struct recd_session *hnext; /* session_table chain */
    recd_server *srv;
    uint8_t key_len;
    bool in_table; /* false once closed: the key may be opened again while this one finishes */
    bool closing;  /* no more input; freed when the writer is done */
    bool dormant;  /* idle: file finalized, buffers freed, resumes on the next sample */
    bool rec_any;  /* .rec: a block was accepted in this session */
    bool rec_header_due; /* .rec: the current part's file header goes with its next block */
    recd_msg_format format;
    char key[RECD_SESSION_KEY_MAX + 1];

    uint64_t last_input_ms;    /* monotonic time of the last message */
    uint64_t pending_since_ms; /* oldest unflushed input; 0 when nothing is pending */
    uint64_t buffered; /* bytes accepted and not yet written (queued, in flight, in the encoder) */

    /* Current part: NULL until the first bytes of a part are produced. */
    writer_part *part;
    uint64_t part_written; /* its size on disk after the last job that wrote it */
    uint64_t part_pending; /* bytes queued for it and not yet written (uncompressed) */
    writer_queue queue;

    /* .rec */
    uint32_t rec_last;     /* last accepted time (session clock) */
    uint32_t rec_base;     /* subtracted in this part (rebased parts) */
    uint32_t rec_part_first;

    /* Colder: per part, per flush, per timer tick. */
    struct recd_session *prev, *next; /* every live session, for the timers */
    int64_t start_epoch_ms;   /* session start, Unix ms (open's start_time or arrival) */
    uint64_t start_mono_ms;   /* monotonic clock at open: arrival stamps count from here */
    uint64_t last_flush_ms;
    uint64_t dormant_since_ms;
    bool have_seq; /* UDP: highest sequence number seen */
    uint64_t last_seq;
    uint32_t part_no;      /* parts started so far (the next one gets this number) */
    uint64_t packed_in, packed_out; /* members compressed so far: the ratio to expect */
    void *format_data;          /* the format's own state (session_recap.c), or NULL */
    const session_format *ops;  /* what the session does in its format's way */
} recd_session;

/* Accepted input not yet added to the metrics: published once per read, not per message. */
typedef struct input_tally {
    uint64_t samples[RECD_M_FORMATS], bytes[RECD_M_FORMATS];
} input_tally;

/* How a message reached the daemon; filled by the listener, read and written by dispatch. */
typedef struct session_input {
    recd_server *srv;
    recd_m_transport transport;
    bool datagram;        /* UDP rules: sequence numbers, drop instead of backpressure */
    const char *peer;     /* for log lines (session_input_peer()); NULL for a datagram: */
    const struct sockaddr *peer_addr; /* its sender, formatted only when a line is logged */
    char peer_buf[96];
    input_tally *tally;
    bool reason_set;      /* dispatch refused a message and chose the metric label: */
    recd_m_reason reason;
    bool accepted;        /* the last message was applied (not dropped): count its bytes */
    char over_key[RECD_SESSION_KEY_MAX + 1]; /* a session over its buffer limit ("" none) */
    bool over_process;                       /* the process is over its buffer limit */
    bool lookup_missed;   /* format_of found no session: an unknown-session error follows */
    /* Input byte accounting: a message's size is known when the next one starts. */
    bool acct_open, acct_sample;
    recd_msg_format acct_format;
    uint64_t acct_offset;
} session_input;

/* The sender, for log lines. */
const char *session_input_peer(session_input *in);

/* Applies one decoded message. Returns 0 when it was accepted, or dropped and counted; a negative
 * errno when it violates the protocol (why says how; in->reason says which metric): a TCP
 * connection is then answered with an error and closed, a UDP datagram is dropped. */
int session_dispatch(session_input *in, const recd_msg *m, const recd_wire_meta *meta, char *why,
                     size_t whylen);
/* The same for a .rec state that arrived as its block (the binary frames' path). */
int session_dispatch_rec(session_input *in, const recd_wire_rec_state *st,
                         const recd_wire_meta *meta, char *why, size_t whylen);

/* Refuses the message being dispatched: writes why, sets the metric label, returns -EBADMSG. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int session_refuse(session_input *in, recd_m_reason reason, char *why, size_t whylen,
                   const char *fmt, ...);

/* recd_wire_format_fn over the registry (ctx is a session_input); the handle is the session. */
recd_msg_format session_format_of(void *ctx, const char *key, size_t len, void **handle);

/* Timer work for one session: flush by time, idle rotation, forgetting dormant sessions. */
void session_tick(recd_session *s, uint64_t now_ms);
/* Writes what is buffered now (flush.buffer_size, flush messages, shutdown). */
void session_flush(recd_session *s);
/* Finalizes the current part, detaches the session and frees it once written (close message,
 * shutdown, forgetting a dormant session). */
void session_close(recd_session *s, const char *why);

/* Used by the format modules. */
int session_start_part(recd_session *s, int64_t start_epoch_ms, int gzip_level);
int session_put(recd_session *s, const void *data, size_t len);
/* Queues len bytes (len > 0) for the current part and returns where to write them (valid until
 * the session's next put or reserve); NULL without a part or memory. */
uint8_t *session_reserve(recd_session *s, size_t len);
void session_account(recd_session *s, int64_t delta); /* buffered bytes, session and process */
void session_note_pending(recd_session *s, uint64_t now_ms); /* starts the flush clock */
void session_maybe_flush(recd_session *s);            /* flush when over flush.buffer_size */
bool session_should_rotate(const recd_session *s, uint64_t add_bytes, uint64_t span_ms);
void session_end_part(recd_session *s, uint8_t *header, size_t header_len);

/* A format's part of a session: one table per output format (session_rec.c, session_recap.c),
 * found by session_format_for() (session_formats.c). session.c calls through it and never asks
 * which format a session has. An entry left NULL means the format has nothing to do there (the
 * checks keep the .rec sample path free of indirect calls). */
struct session_format {
    bool events; /* takes event messages */
    bool packed; /* the writer compresses its bytes: a part's size is estimated from the ratio */
    /* The open message (a new session): keeps what the format needs of it. 0, -ENOMEM, or
     * -EBADMSG with why. */
    int (*open)(recd_session *s, const recd_msg *open, char *why, size_t whylen);
    /* A decoded state or event. 0 (also when dropped and logged), or a refusal / -ENOMEM. */
    int (*sample)(recd_session *s, session_input *in, const recd_msg *m,
                  const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen);
    /* A flush message, before the session flushes. 0 or -EBADMSG with why. */
    int (*flush_message)(recd_session *s, const recd_msg *m, char *why, size_t whylen);
    void (*close_message)(recd_session *s, const recd_msg *m); /* before the session closes */
    void (*flush)(recd_session *s, uint64_t now_ms); /* moves what it holds into the batch */
    /* After a flush: the clock flush.interval counts from for what it still holds, or 0. */
    uint64_t (*pending_since)(const recd_session *s);
    uint64_t (*encoder_bytes)(const recd_session *s); /* held outside the batch, estimated */
    bool (*pending)(const recd_session *s);           /* holds input not yet in the batch */
    void (*idle)(recd_session *s);                    /* no input for a while: keep less */
    void (*end_part)(recd_session *s, bool session_end); /* required */
    void (*free)(recd_session *s);
};

#endif
