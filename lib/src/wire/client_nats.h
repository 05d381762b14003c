/* SPDX-License-Identifier: MIT */
/* recd_client's JetStream publisher, behind nats://HOST:PORT/PREFIX URLs (client.c dispatches to
 * it). Each message is one binary wire frame, packed with its session's next ones (recd/
 * fleet_pack.h) or alone (pack_bytes=0), published on PREFIX.<partition>.~ (recd/fleet.h)
 * with at most max_in_flight publishes waiting for their acks; a publish JetStream never confirmed
 * is counted and reported by flush and close, never dropped in silence. */
#ifndef RECD_WIRE_CLIENT_NATS_H
#define RECD_WIRE_CLIENT_NATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"
#include "recd/nats_connect.h"

typedef struct client_nats client_nats;

/* The URL's options, defaults filled in (client_nats_parse). */
typedef struct client_nats_options {
    uint32_t partitions;     /* ?partitions=N, 1..1024 (8): must match the fleet's */
    uint32_t max_in_flight;  /* ?max_in_flight=N, 1..1000000 (1024): publishes awaiting an ack */
    uint64_t buffer_bytes;   /* ?buffer=SIZE, 1KiB..1GiB (8MiB): kept while the server is away */
    uint64_t ack_timeout_ms; /* ?ack_timeout=DUR, 1ms..1h (10s): longest wait for a window slot,
                                and for the last acks in flush and close */
    uint32_t pack_bytes;     /* ?pack_bytes=SIZE, 0 or 256..512KiB (64KiB): a session's frames
                                are packed into one message until it holds this much */
    uint32_t linger_ms;      /* ?linger=DUR, 1ms..10s (20ms): or until its first frame is this old */
    bool session_subjects;   /* ?subjects=session: PREFIX.<p>.<key>, not PREFIX.<p>.~ (partition) */
    recd_nats_auth auth;     /* the user part, TLS and credentials (recd/nats_connect.h) */
} client_nats_options;

/* True when url starts with nats:// (the build may still lack libnats). */
bool client_nats_url(const char *url);

/* Parses nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT]/PREFIX[?KEY=VALUE&...] with KEY one of
 * partitions, max_in_flight, buffer, ack_timeout, pack_bytes, linger, encoding (binary only),
 * subjects (partition or session), or a connection option
 * of recd_nats_url_parse (tls_ca, tls_cert, tls_key, tls_name, creds, nkey; values
 * percent-decoded). Fills base (the URL without its user part and query, for
 * recd_fleet_url_parse) and opt. 0 or -EINVAL with err, which never shows a password or token. */
int client_nats_parse(const char *url, char *base, size_t base_cap, client_nats_options *opt,
                      char *err, size_t errlen);

/* Connects and sets up JetStream. 0, -EINVAL (bad URL), -ENOTSUP (librecd built without libnats)
 * or -ECONNREFUSED, with err saying why. */
int client_nats_open(client_nats **out, const char *url, size_t max_frame, char *err,
                     size_t errlen);
/* Encodes m (with its time) as one binary frame into its session's pack, published when full
 * (or linger old: a thread watches), or publishes it alone with pack_bytes=0; blocks while max_in_flight
 * publishes wait for acks, up to ack_timeout. 0 or a negative errno; after an error, or once
 * JetStream refused an earlier publish, every later call returns -EIO. */
int client_nats_publish(client_nats *n, const recd_msg *m);
/* Waits for every ack (up to ack_timeout). 0, or -EIO when a publish failed or was never
 * confirmed (they are counted as lost). */
int client_nats_flush(client_nats *n);
/* Flushes, then frees n. 0, or -EIO with err naming how many messages JetStream did not confirm
 * and the first reason. */
int client_nats_close(client_nats *n, char *err, size_t errlen);
uint64_t client_nats_bytes(const client_nats *n); /* frame bytes handed to libnats */
/* Publishes that JetStream did not confirm so far (refused, or no ack within ack_timeout). */
uint64_t client_nats_lost(client_nats *n);

#endif
