/* SPDX-License-Identifier: MIT */
/* A blocking C client for recd: connect by URL, open sessions, send states and events with
 * batching, close. Game-server plugins and rectool send use it. One client is one connection
 * (or one connected UDP socket, or one NATS connection publishing to JetStream for a recd fleet)
 * and must be used from one thread at a time. */
#ifndef RECD_CLIENT_H
#define RECD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/message.h"
#include "recd/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct recd_client recd_client;

#define RECD_CLIENT_MAX_DATAGRAM 65507u /* largest UDP payload over IPv4 */

typedef struct recd_client_options {
    size_t batch_bytes;        /* TCP/Unix: send when this much is queued (0 = 64 KiB) */
    size_t datagram_bytes;     /* UDP: largest datagram built from several frames (0 = 1400) */
    size_t max_frame;          /* 0 = RECD_WIRE_DEFAULT_MAX_FRAME */
    unsigned close_timeout_ms; /* close(): wait this long for the server to close (0 = 5000) */
} recd_client_options;

/* url: tcp://HOST:PORT, udp://HOST:PORT, unix:///path, optionally ?encoding=ndjson|binary
 * (default binary). IPv6 as tcp://[::1]:7070. 0 or a negative errno; err explains. opt may be NULL.
 *
 * Or tls://HOST:PORT[?ca=FILE&cert=FILE&key=FILE&servername=NAME&encoding=E]: TCP with TLS 1.2+
 * (libssl, opened with dlopen on the first one). The server's certificate must chain to ca= (or
 * the system's CAs) and hold servername (default HOST); nothing turns that check off. -EPROTO
 * when the server's certificate is refused or the handshake fails (within close_timeout_ms),
 * -ENOENT when a file does not load, -ELIBACC when libssl cannot be loaded, -ENOTSUP when
 * librecd was built without it. docs/wire.md, section 6.1.
 *
 * Or nats://HOST[:PORT]/PREFIX[?partitions=N&max_in_flight=N&buffer=SIZE&ack_timeout=DUR&
 * pack_bytes=SIZE&linger=DUR]: each message is one binary frame, packed with the session's next
 * ones into one JetStream message until it holds pack_bytes (64KiB; 0: one frame per message) or
 * its first frame is linger (20ms) old, published on PREFIX.<partition>.<key> (recd/fleet.h), at
 * most max_in_flight (1024) waiting for their acks; while the server is away
 * up to buffer (8MiB) is kept; a full window or the last acks wait up to ack_timeout (10s).
 * partitions (8) must be the fleet's. Only opt->max_frame applies. -ENOTSUP when librecd was
 * built without libnats, -ELIBACC when libnats (opened with dlopen on the first nats:// connect)
 * cannot be loaded. docs/fleet.md, "Publishing". */
RECD_API int recd_client_connect(recd_client **out, const char *url, const recd_client_options *opt,
                                 char *err, size_t errlen);

/* Queues one message (session must be set); sends when the batch is full. Over a stream, binary
 * frames of the same session as the previous frame are sent with the short key_len 0 form.
 * Queued bytes leave only when a batch fills, on flush() or on close(): call flush() whenever the
 * data should reach the server now. After a send error every later call returns that error;
 * close() then tells whether the server explained it.
 * nats://: published at once; blocks while the window is full (-ETIMEDOUT after ack_timeout),
 * -ENOBUFS when the buffer kept for an unreachable server is used up, -EIO once JetStream
 * refused or never confirmed an earlier message. */
RECD_API int recd_client_send(recd_client *c, const recd_msg *m);
/* Binary only: a STATE or EVENT without its time, stamped by the daemon on arrival (-EINVAL on an
 * NDJSON or nats:// client, or for other message types). */
RECD_API int recd_client_send_untimed(recd_client *c, const recd_msg *m);
/* Sends what is queued. nats://: waits until JetStream acknowledged every publish (up to
 * ack_timeout); -EIO when any was refused or is still unconfirmed (counted as lost). */
RECD_API int recd_client_flush(recd_client *c);

/* Flushes, shuts the write side down and, for streams, waits for the server to close; returns a
 * negative errno and copies the server's error reply into err when it sent one (-EPROTO), or says
 * what failed (send error, -ETIMEDOUT). nats://: waits for the last acks; any message JetStream
 * did not confirm makes it fail (-EIO or the send error) with err naming how many and the first
 * reason ("N messages were not confirmed by JetStream (first: ...)"). Frees c. */
RECD_API int recd_client_close(recd_client *c, char *err, size_t errlen);

RECD_API recd_wire_encoding recd_client_encoding(const recd_client *c);
/* tls:// is RECD_WIRE_TCP: TCP underneath. */
RECD_API recd_wire_transport recd_client_transport(const recd_client *c);
/* Bytes handed to the kernel so far (frames or lines, not counting TCP/IP overhead); nats://:
 * frame bytes handed to libnats. */
RECD_API uint64_t recd_client_bytes_sent(const recd_client *c);

#ifdef __cplusplus
}
#endif
#endif
