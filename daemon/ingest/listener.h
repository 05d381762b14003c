/* SPDX-License-Identifier: MIT */
/* The ingest layer: listeners and connections, and the state they share (recd_ingest). A listener
 * is one bound socket from the configuration or from systemd socket activation: TCP and Unix
 * stream listeners accept connections, each read through its own wire decoder; a UDP listener
 * reads datagrams in recvmmsg batches and decodes each one on its own. Decoded messages go down to
 * the record layer (session_dispatch(), sessions.h); what the app layer needs to hear goes up
 * through the callbacks it installed (ingest_events). */
#ifndef RECD_DAEMON_LISTENER_H
#define RECD_DAEMON_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <uv.h>

#include "support/peer_counts.h"
#include "record/sessions.h"
#include "support/config.h"
#include "support/metrics.h"
#include "support/sd_notify.h"
#include "recd/wire_reason.h"

#define INGEST_READ_BUFFER (64u * 1024u) /* one read at a time on the loop thread */

#define LISTENER_BACKLOG 511
/* One recvmmsg slot: the largest datagram, or the largest run of datagrams UDP GRO joins. */
#define LISTENER_UDP_DATAGRAM_MAX (64u * 1024u)
#define LISTENER_UDP_DRAIN_MAX 100000u /* slots read at shutdown, at most */
#define INGEST_SWEEP_MS 250u           /* how often connection deadlines are checked */
#define INGEST_ERROR_DRAIN_MS 5000u    /* after an error reply: read and discard this long, at most */

typedef struct recd_ingest recd_ingest;
typedef struct listener_udp_rx listener_udp_rx;
struct nats_source; /* listener_nats.c */

typedef struct recd_listener {
    LIST_ENTRY(recd_listener) link;
    recd_ingest *ingest;
    recd_listen_config cfg;
    bool activated; /* passed by systemd: kept across reloads */
    bool closing;
    bool remove_path; /* a Unix socket file we created */
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
        uv_udp_t udp;
        uv_async_t async; /* nats:// (listener_nats.c) */
    } h;
    struct nats_source *nats; /* nats:// only */
    uv_poll_t udp_poll;                /* reads the udp handle's socket (listener_udp.c) */
    bool udp_polling;                  /* udp_poll is initialised: closed before the socket */
    uv_close_cb udp_closed;            /* called once both are closed */
    listener_udp_rx *udp_rx;           /* recvmmsg slots, one allocation */
    input_tally udp_tally; /* published after each batch of datagrams */
    uint32_t udp_kernel_drops; /* the socket's drop count last added to the metric */
    char bound[RECD_CONFIG_URL_MAX + 64]; /* "tcp://127.0.0.1:40123" */
} recd_listener;

typedef struct recd_conn {
    TAILQ_ENTRY(recd_conn) link; /* least recently read first */
    recd_ingest *ingest;
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    recd_wire_decoder *dec;
    session_input in;
    input_tally tally;
    char peer[96];
    peer_key key;  /* its address or Unix uid, for limits.max_connections_per_peer */
    bool paused, closing, reading;
    bool live;     /* counted in live_conns and the peer table */
    bool draining; /* answered with an error: reading and discarding until EOF or drain_until_ms */
    char blocked_on[RECD_SESSION_KEY_MAX + 1]; /* session that paused us; "" = the process limit */
    uint64_t max_frame; /* limits.max_frame its decoder holds: a reload changes it on the next read */
    uint64_t fed; /* bytes given to the decoder */
    uint64_t last_read_ms, drain_until_ms;
    uint64_t partial_start;    /* stream offset where the unfinished frame or line starts */
    uint64_t partial_since_ms; /* when it started (0: none) */
    size_t partial_bytes;      /* its bytes held by the decoder, counted in ingest.partial_bytes */
    uint32_t sessions_held;    /* opens accepted minus closes: idle rules spare it while > 0 */
    struct tls_conn *tls;      /* tls:// only (listener_tls.c) */
    uint64_t handshake_until_ms; /* the TLS handshake's deadline (tls.handshake_timeout) */
    char identity[RECD_IDENTITY_MAX + 1]; /* its client certificate's name, "" none */
} recd_conn;

/* Events for the app layer, as {callback, data} pairs (the callback may be NULL). */
typedef struct ingest_events {
    void (*conn_gone)(void *data); /* a connection was freed (conn_count fell) */
    void *data;
} ingest_events;

/* Everything the ingest layer owns. */
struct recd_ingest {
    uv_loop_t *loop;
    const recd_config *cfg; /* the running configuration (reload changes it in place) */
    recd_daemon_metrics *metrics;
    recd_sessions *sessions; /* where decoded messages go */
    LIST_HEAD(listener_list, recd_listener) listeners;
    TAILQ_HEAD(conn_list, recd_conn) conns;
    size_t conn_count, paused_count;
    size_t live_conns;    /* conns not closing: what limits.max_connections counts */
    uint64_t partial_bytes; /* unfinished frames held by every decoder: count toward process_buffer */
    peer_counts peers;    /* live connections per peer (address or Unix uid) */
    LIST_HEAD(nats_list, nats_source) nats_sources; /* nats:// inputs, retiring ones too */
    uv_timer_t sweep;     /* idle, frame and drain deadlines */
    bool sweeping;        /* the sweep timer is initialised */
    bool resume_due;      /* unfinished frames were released: paused connections may read */
    bool accepting;    /* new connections are taken (false from the shutdown's drain on) */
    bool taking_datagrams; /* datagrams are recorded (false once sessions are being finalized) */
    ingest_events on;
    /* The TLS context of tls:// listeners' new connections (owned by the app layer, which
     * replaces it on reload; a connection keeps the one it started with). NULL: none. */
    struct tls_server_ctx *tls;
    uint8_t read_buf[INGEST_READ_BUFFER];
};

void ingest_init(recd_ingest *g, uv_loop_t *loop, const recd_config *cfg,
                 recd_daemon_metrics *metrics, recd_sessions *sessions, ingest_events on);
/* Starts the deadline sweep (0 or a libuv error); ingest_stop() closes its timer, and
 * ingest_free(), once every connection is gone, frees the peer table. */
int ingest_start(recd_ingest *g);
void ingest_stop(recd_ingest *g);
void ingest_free(recd_ingest *g);
/* True when buffered session bytes and unfinished frames together exceed limits.process_buffer. */
bool ingest_over_process_limit(const recd_ingest *g);

/* Binds a listener from the configuration and starts it. 0, or a negative errno with why. */
int listener_open(recd_ingest *g, const recd_listen_config *cfg, recd_listener **out, char *why,
                  size_t whylen);
/* Starts a listener on a socket passed by systemd. */
int listener_adopt(recd_ingest *g, const recd_sd_listen_fd *fd, recd_listener **out, char *why,
                   size_t whylen);
/* Stops and closes it; it unlinks itself from the ingest state and frees itself once closed. */
void listener_close(recd_listener *l);
void ingest_close_listeners(recd_ingest *g); /* every one of them */
void ingest_close_stream_listeners(recd_ingest *g); /* stop accepting; UDP goes on */

/* Stream connections (listener_stream.c). */
int listener_stream_start(recd_listener *l);
void ingest_close_conns(recd_ingest *g); /* every open connection, at once */
/* Resumes reading on paused connections whose limits allow it now (a write completed). */
void ingest_resume_paused(recd_ingest *g);
/* Closes connections past their deadlines (limits.idle_timeout, limits.frame_timeout, the drain
 * after an error reply); called every INGEST_SWEEP_MS. */
void ingest_sweep(recd_ingest *g, uint64_t now_ms);

/* TLS on stream connections (listener_tls.c). */
/* Starts TLS on a new connection of a tls:// listener: 0 or -ENOMEM (-ENOTCONN: no context). */
int stream_tls_start(recd_conn *c);
#define STREAM_TLS_DROP 1
#define STREAM_TLS_EOF 2 /* the client sent close_notify: the end of its input */
/* Feeds bytes read to its TLS state; on_plain gets the plaintext (0, or its negative value,
 * which is returned). STREAM_TLS_DROP: TLS gave up on the connection (a failed handshake, a
 * certificate no identities pattern takes, a broken record), counted and logged: the caller
 * sends the output that waits (an alert) and closes it. */
int stream_tls_read(recd_conn *c, const uint8_t *data, size_t len,
                    int (*on_plain)(void *ctx, const uint8_t *p, size_t n), void *ctx);
/* Queues our close_notify (in answer to the client's): true when there is output to send. */
bool stream_tls_close_notify(recd_conn *c);
/* Appends the bytes TLS has for the peer to out: 0 or -ENOMEM. */
int stream_tls_take_output(recd_conn *c, recd_buf *out);
/* Replaces the plaintext in buf by its records for the peer, with close_notify after them when
 * closing: 0, or -ENOTCONN before the handshake ended, -EPROTO, -ENOMEM. */
int stream_tls_seal(recd_conn *c, recd_buf *buf, bool closing);
/* The handshake deadline passed: counted and logged, true (the caller closes it). */
bool stream_tls_overdue(recd_conn *c, uint64_t now_ms);
void stream_tls_free(recd_conn *c);

/* UDP (listener_udp.c). */
int listener_udp_start(recd_listener *l);
/* Closes a UDP listener's handles, its reader first; done runs once the socket is closed. */
void listener_udp_close(recd_listener *l, uv_close_cb done);
/* Adds what the kernel dropped on every UDP socket since the last call to
 * recd_udp_kernel_drops_total (from the sweep, and at shutdown). */
void ingest_count_udp_drops(recd_ingest *g);
/* Reads and records what is queued on every UDP socket now (shutdown: before they are closed). */
void ingest_drain_datagrams(recd_ingest *g);

/* nats:// inputs (listener_nats.c): recd as a member of a fleet reading a NATS JetStream stream
 * (docs/fleet.md). A worker thread owns the libnats connection: it claims partitions through
 * leases in a key-value bucket, renews and releases them, and pulls from one durable consumer per
 * owned partition while that partition has room (nats.max_in_flight). Messages reach the loop
 * thread through a uv_async and a queue per partition; each is one wire frame, decoded and
 * dispatched like stream input, and acknowledged only once the bytes it produced are in a file.
 * Each session opened from a partition has a record in a second bucket (its open message, next
 * part number, last written stream sequence) from which the partition's next owner opens it. */
/* Starts a nats:// listener (cfg->nats). 0, or a negative errno with why (-ENOTSUP: recd was
 * built without libnats). The connection is made in the background: an unreachable server is
 * retried, and /healthz says so meanwhile. */
int listener_nats_open(recd_ingest *g, const recd_listen_config *cfg, recd_listener **out,
                       char *why, size_t whylen);
/* Stops pulling (listener_close); the listener finishes once every message it took is
 * acknowledged (their sessions written), then releases its leases and frees itself. */
void listener_nats_retire(recd_listener *l);

/* Upward events routed by the app layer: a write completed (acknowledge what is in files now,
 * go on with partitions that waited for room) and a session is about to be freed. */
void ingest_nats_progress(recd_ingest *g);
void ingest_nats_session_freed(recd_ingest *g, const recd_session *s);
/* Writes why and returns true when some nats:// input cannot reach its server now. */
bool ingest_nats_unhealthy(recd_ingest *g, char *why, size_t whylen);
/* Publishes the gauges (partitions owned, connected inputs, lag); at each scrape. */
void ingest_nats_refresh_metrics(recd_ingest *g);
/* Every nats:// listener stops at once, acknowledged or not (the last step of a shutdown). */
void ingest_nats_close_all(recd_ingest *g);

/* Decoded-message handling shared by both (listener_input.c): dispatch to the sessions with
 * input byte accounting for the metrics. */
int listener_on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                    size_t errlen);
/* The same for states the wire hands over as records, the fast lane
 * (recd_wire_decoder_config.on_rec_state). */
int listener_on_rec_state(void *ctx, const recd_wire_rec_state *st, const recd_wire_meta *meta,
                          char *err, size_t errlen);
/* The message in flight ends at end_offset (stream offset, or datagram length): tallies it. */
void listener_account_end(session_input *in, uint64_t end_offset);
/* Adds a tally to the samples and bytes metrics and clears it. */
void listener_tally_publish(recd_daemon_metrics *metrics, recd_m_transport t, input_tally *tally);
/* Metric label of a refused input: the sessions' own label, else the decoder's error code and
 * what it noted (recd_wire_decoder_reason(), RECD_WIRE_REASON_NONE when rc is not its error). */
recd_m_reason listener_error_reason(const session_input *in, int rc, recd_wire_reason noted);

#endif
