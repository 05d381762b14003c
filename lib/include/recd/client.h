/* SPDX-License-Identifier: MIT */
/* A blocking C client for recd: connect by URL, open sessions, send states and events with
 * batching, close. Game-server plugins and rectool send use it. One client is one connection
 * (or one connected UDP socket) and must be used from one thread at a time. */
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
 * (default binary). IPv6 as tcp://[::1]:7070. 0 or a negative errno; err explains. opt may be NULL. */
RECD_API int recd_client_connect(recd_client **out, const char *url, const recd_client_options *opt,
                                 char *err, size_t errlen);

/* Queues one message (session must be set); sends when the batch is full. Over a stream, binary
 * frames of the same session as the previous frame are sent with the short key_len 0 form.
 * Queued bytes leave only when a batch fills, on flush() or on close(): call flush() whenever the
 * data should reach the server now. After a send error every later call returns that error;
 * close() then tells whether the server explained it. */
RECD_API int recd_client_send(recd_client *c, const recd_msg *m);
/* Binary only: a STATE or EVENT without its time, stamped by the daemon on arrival (-EINVAL on an
 * NDJSON client or for other message types). */
RECD_API int recd_client_send_untimed(recd_client *c, const recd_msg *m);
RECD_API int recd_client_flush(recd_client *c);

/* Flushes, shuts the write side down and, for streams, waits for the server to close; returns a
 * negative errno and copies the server's error reply into err when it sent one (-EPROTO), or says
 * what failed (send error, -ETIMEDOUT). Frees c. */
RECD_API int recd_client_close(recd_client *c, char *err, size_t errlen);

RECD_API recd_wire_encoding recd_client_encoding(const recd_client *c);
RECD_API recd_wire_transport recd_client_transport(const recd_client *c);
/* Bytes handed to the kernel so far (frames or lines, not counting TCP/IP overhead). */
RECD_API uint64_t recd_client_bytes_sent(const recd_client *c);

#ifdef __cplusplus
}
#endif
#endif
