/* SPDX-License-Identifier: MIT */
/* TLS for recd's listeners: OpenSSL 3 over memory BIOs, so that libuv keeps owning the sockets.
 * A tls_server_ctx is built from the tls: section (certificate, key, client CA, minimum version)
 * and replaced whole by a reload: connections keep the context they started with (each SSL holds
 * a reference to it). A tls_conn is one connection's TLS state: the caller feeds it the bytes it
 * read, gets the plaintext through a callback, and sends what tls_conn_take_output() hands out.
 * TLS 1.2 and 1.3 only, renegotiation off. */
#ifndef RECD_DAEMON_TLS_SERVER_H
#define RECD_DAEMON_TLS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#define TLS_NAMES_MAX 8      /* names of a client certificate kept: its CN and DNS SANs */
#define TLS_NAME_MAX 64      /* longer names are not identities (a CN is at most 64 bytes) */

typedef struct tls_server_ctx tls_server_ctx;
typedef struct tls_conn tls_conn;

typedef struct tls_server_settings {
    const char *cert;      /* PEM chain, leaf first */
    const char *key;       /* PEM private key */
    const char *client_ca; /* PEM CAs of client certificates; NULL = none asked for */
    int min_version;       /* 12 or 13 */
} tls_server_settings;

/* Loads the certificate and key (and client CAs): 0, or a negative errno with why. */
int tls_server_ctx_new(const tls_server_settings *set, tls_server_ctx **out, char *why, size_t cap);
/* Frees the context; connections that use it keep it until they end. */
void tls_server_ctx_free(tls_server_ctx *ctx);
bool tls_server_ctx_wants_client_cert(const tls_server_ctx *ctx);

/* One connection. With client CAs, a client certificate is required (require_client_cert) or
 * only asked for; one that is given must verify. NULL when out of memory. */
tls_conn *tls_conn_new(tls_server_ctx *ctx, bool require_client_cert);
void tls_conn_free(tls_conn *t);

/* Plaintext as it is decrypted: 0 goes on, a negative value stops the feed and is returned. */
typedef int (*tls_plain_cb)(void *ctx, const uint8_t *data, size_t len);

#define TLS_FEED_ESTABLISHED 1
/* Takes bytes read from the peer: handshake, then plaintext to on_plain. 0, the negative value
 * on_plain returned, or -EPROTO (handshake or record failure: why says what; an alert for the
 * peer waits in the output) or -ENOMEM. Sets *closed when the peer sent close_notify. When the
 * handshake ends it returns TLS_FEED_ESTABLISHED with the rest unread: call it again (len 0)
 * for the plaintext that came with it. */
int tls_conn_feed(tls_conn *t, const uint8_t *data, size_t len, tls_plain_cb on_plain, void *ctx,
                  bool *closed, char *why, size_t cap);
bool tls_conn_established(const tls_conn *t);
/* Encrypts plaintext for the peer (after the handshake): 0, -ENOTCONN before, -EPROTO, -ENOMEM. */
int tls_conn_write(tls_conn *t, const uint8_t *data, size_t len);
/* Queues close_notify. */
void tls_conn_shutdown(tls_conn *t);
/* Moves the bytes waiting to be sent onto out (appended): 0 or -ENOMEM. */
int tls_conn_take_output(tls_conn *t, recd_buf *out);
bool tls_conn_has_output(const tls_conn *t);

/* The client certificate's names once established (a verified certificate only): its subject CN
 * first, then its DNS SANs; count 0 without one. */
size_t tls_conn_names(const tls_conn *t, const char *const **names);
/* Its protocol ("TLSv1.3"), for log lines. */
const char *tls_conn_version(const tls_conn *t);

#endif
