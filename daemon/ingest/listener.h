/* Listeners and connections. A listener is one bound socket from the configuration or from
 * systemd socket activation: TCP and Unix stream listeners accept connections, each read through
 * its own wire decoder; a UDP listener reads datagrams in recvmmsg batches and decodes each one on
 * its own. Decoded messages go to session_dispatch(). */
#ifndef RECD_DAEMON_LISTENER_H
#define RECD_DAEMON_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "support/config.h"
#include "support/sd_notify.h"
#include "record/session.h"

typedef struct recd_server recd_server;

/* libuv's recvmmsg takes one 64 KiB slot per datagram and at most 20 slots per call. */
#define LISTENER_UDP_BUFFER (20u * 64u * 1024u)
#define LISTENER_UDP_RCVBUF (8 * 1024 * 1024)     /* asked of the kernel (it may give less) */
#define LISTENER_BACKLOG 511
#define LISTENER_UDP_DATAGRAM_MAX (64u * 1024u)
#define LISTENER_UDP_DRAIN_MAX 100000u /* datagrams read at shutdown, at most */

typedef struct recd_listener {
    struct recd_listener *next;
    recd_server *srv;
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
    } h;
    uint8_t *udp_buf;
    input_tally udp_tally; /* published after each batch of datagrams */
    char bound[RECD_CONFIG_URL_MAX + 64]; /* "tcp://127.0.0.1:40123" */
} recd_listener;

typedef struct recd_conn {
    struct recd_conn *prev, *next;
    recd_server *srv;
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
    bool paused, closing, reading;
    char blocked_on[RECD_SESSION_KEY_MAX + 1]; /* session that paused us; "" = the process limit */
    uint64_t fed; /* bytes given to the decoder */
} recd_conn;

/* Binds a listener from the configuration and starts it. 0, or a negative errno with why. */
int listener_open(recd_server *s, const recd_listen_config *cfg, recd_listener **out, char *why,
                  size_t whylen);
/* Starts a listener on a socket passed by systemd. */
int listener_adopt(recd_server *s, const recd_sd_listen_fd *fd, recd_listener **out, char *why,
                   size_t whylen);
/* Stops and closes it; it unlinks itself from the server and frees itself once closed. */
void listener_close(recd_listener *l);

/* Stream connections (listener_stream.c). */
int listener_stream_start(recd_listener *l);
void conn_close(recd_conn *c);         /* immediate close (drain timeout, shutdown) */
void conn_try_resume(recd_conn *c);    /* resume reading when its limits allow it */

/* UDP (listener_udp.c). */
int listener_udp_start(recd_listener *l);
/* Reads and records what is queued on the socket now (shutdown: before it is closed). */
void listener_udp_drain(recd_listener *l);

/* Decoded-message handling shared by both (listener_input.c): dispatch to the sessions with
 * input byte accounting for the metrics. */
int listener_on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                    size_t errlen);
/* The same for .rec samples taken as blocks (recd_wire_decoder_config.on_rec_state). */
int listener_on_rec_state(void *ctx, const recd_wire_rec_state *st, const recd_wire_meta *meta,
                          char *err, size_t errlen);
/* The message in flight ends at end_offset (stream offset, or datagram length): tallies it. */
void listener_account_end(session_input *in, uint64_t end_offset);
/* Adds a tally to the samples and bytes metrics and clears it. */
void listener_tally_publish(recd_server *srv, recd_m_transport t, input_tally *tally);
/* Metric label of a refused input from the decoder's error code and text. */
recd_m_reason listener_error_reason(const session_input *in, int rc, const char *err);

#endif
