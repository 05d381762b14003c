/* SPDX-License-Identifier: MIT */
/* The one NATS connection module, shared by librecd's publisher (wire/client_nats.c) and recd's
 * nats:// inputs (daemon/ingest/nats_worker.c): the nats:// URL's user part and query options
 * that say how to connect (TLS, creds, nkey, USER:PASSWORD@, TOKEN@), their checks, and the
 * connect itself through libnats, which librecd loads with dlopen (base/dl_table.h). Internal to
 * librecd: not RECD_API. */
#ifndef RECD_NATS_CONNECT_H
#define RECD_NATS_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "recd/fleet.h"

#define RECD_NATS_PATH_MAX 1024u  /* a file option, with its NUL */
#define RECD_NATS_SECRET_MAX 256u /* user, password or token, with its NUL */
#define RECD_NATS_NAME_MAX 256u   /* tls_name, with its NUL */
#define RECD_NATS_SERVER_MAX 300u /* recd_nats_server_url's output */
/* The query options recd_nats_url_parse takes itself, for "unknown option" messages. */
#define RECD_NATS_OPTION_NAMES "tls_ca, tls_cert, tls_key, tls_name, creds, nkey"

/* How to connect: every field percent-decoded, "" when absent. */
typedef struct recd_nats_auth {
    char tls_ca[RECD_NATS_PATH_MAX];   /* ?tls_ca=: CA certificates (PEM); turns TLS on */
    char tls_cert[RECD_NATS_PATH_MAX]; /* ?tls_cert=: client certificate (PEM); turns TLS on */
    char tls_key[RECD_NATS_PATH_MAX];  /* ?tls_key=: its key; "" = in tls_cert's file */
    char tls_name[RECD_NATS_NAME_MAX]; /* ?tls_name=: the name the server's certificate must hold,
                                          when it is not the URL's host */
    char creds[RECD_NATS_PATH_MAX];    /* ?creds=: user JWT and nkey seed */
    char nkey[RECD_NATS_PATH_MAX];     /* ?nkey=: a user's nkey seed file (SU...) */
    /* nats://USER:PASSWORD@HOST (password maybe empty) or nats://TOKEN@HOST; at most one of
       these, creds and nkey. */
    char user[RECD_NATS_SECRET_MAX];
    char password[RECD_NATS_SECRET_MAX];
    char token[RECD_NATS_SECRET_MAX];
} recd_nats_auth;

/* An option of the query that recd_nats_url_parse does not take itself, for its caller:
 * key[0..klen), its raw (percent-encoded) value raw[0..vlen). 1 when taken, 0 when unknown, or
 * -EINVAL with err. */
typedef int (*recd_nats_option_fn)(void *ctx, const char *key, size_t klen, const char *raw,
                                   size_t vlen, char *err, size_t errlen);

/* Parses nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT]/PREFIX[?KEY=VALUE&...]: the user part and the
 * connection options into auth (zeroed first), any other KEY through more (NULL: none; its names,
 * listed before ours in the "unknown option" message, in more_names, e.g. "partitions, "). Fills
 * base (the URL without its user part and query, for recd_fleet_url_parse). 0 or -EINVAL with
 * err, which never shows a password or token. */
int recd_nats_url_parse(const char *url, char *base, size_t base_cap, recd_nats_auth *auth,
                        recd_nats_option_fn more, void *ctx, const char *more_names, char *err,
                        size_t errlen);
/* recd's listen URL: recd_nats_url_parse with no other option, then recd_fleet_url_parse into fu.
 * 0 or -EINVAL with err naming the URL (its user part shown as "***"). */
int recd_nats_url_split(const char *url, recd_fleet_url *fu, recd_nats_auth *auth, char *err,
                        size_t errlen);
/* Percent-decodes src[0..len) into out ("%" not followed by two hex digits stays as it is).
 * -ENAMETOOLONG when it does not fit in cap, -EINVAL for a %00. */
int recd_nats_percent_decode(const char *src, size_t len, char *out, size_t cap);
/* At most one credential (creds, nkey, USER:PASSWORD@, TOKEN@); 0 or -EINVAL with err. */
int recd_nats_auth_check(const recd_nats_auth *auth, char *err, size_t errlen);
/* Any URL (nats://, tcp://, ...) for messages and logs, its first 200 bytes: the user part
 * ("USER:PASSWORD@", "TOKEN@") and the values of secret query options (token, password, an nkey
 * seed; not a seed file's path) shown as "***". Every URL recd logs or prints goes through it. */
void recd_nats_redacted(const char *url, char *out, size_t cap);
/* "nats://HOST:PORT", IPv6 in brackets: what libnats is given. */
void recd_nats_server_url(const recd_fleet_url *fu, char *out, size_t cap);

#ifdef RECD_HAVE_NATS
#include <nats/nats.h>

/* What differs between the publisher and the daemon: 0 (or NULL) keeps libnats' default. */
typedef struct recd_nats_tuning {
    int max_reconnect;           /* -1: forever */
    int64_t reconnect_wait_ms;
    int64_t timeout_ms;          /* of the connect */
    uint64_t reconnect_buf;      /* bytes published while reconnecting kept, at most */
    natsConnectionHandler on_disconnected, on_reconnected, on_closed; /* on a libnats thread */
    void *closure;
} recd_nats_tuning;

/* Loads libnats (once). 0 or -ELIBACC with err naming the library and the package to install. */
int recd_nats_load(char *err, size_t errlen);
/* Connects to server (recd_nats_server_url) as auth says, after recd_nats_load. 0; -EINVAL with
 * err naming the option (and file) that did not load; or -ECONNREFUSED with err saying what
 * libnats said (and what TLS may want), *status its status. A connect with nkey or creds that
 * libnats' fault got refused is made again. */
int recd_nats_connect(natsConnection **nc, const char *server, const recd_nats_auth *auth,
                      const recd_nats_tuning *tuning, natsStatus *status, char *err,
                      size_t errlen);
#endif

#endif
