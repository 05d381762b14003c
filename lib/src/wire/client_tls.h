/* SPDX-License-Identifier: MIT */
/* recd_client's TLS, behind tls://HOST:PORT?ca=FILE&cert=FILE&key=FILE&servername=NAME URLs
 * (client.c connects the TCP socket, then hands it here). OpenSSL's libssl is loaded with dlopen
 * on the first tls:// connect (base/dl_table.h); records go through memory BIOs so every byte
 * leaves by send(MSG_NOSIGNAL) and every wait has a deadline. The server's certificate is always
 * checked, against ca= or the system's trust store, and so is its name: there is no option that
 * turns either off. docs/wire.md, "TLS". */
#ifndef RECD_WIRE_CLIENT_TLS_H
#define RECD_WIRE_CLIENT_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CLIENT_TLS_PATH_MAX 1024u
#define CLIENT_TLS_NAME_MAX 256u
#define CLIENT_TLS_TCP_URL_MAX (CLIENT_TLS_PATH_MAX + 64u)

/* A tls:// URL taken apart (client_tls_url_parse); every value percent-decoded, "" when absent. */
typedef struct client_tls_url {
    char tcp_url[CLIENT_TLS_TCP_URL_MAX]; /* tcp://HOST:PORT[?encoding=E], for recd_wire_url_parse */
    char ca[CLIENT_TLS_PATH_MAX];         /* PEM CA bundle; "" = the system's trust store */
    char cert[CLIENT_TLS_PATH_MAX];       /* PEM client certificate (chain) */
    char key[CLIENT_TLS_PATH_MAX];        /* PEM private key; "" = in the cert file */
    char servername[CLIENT_TLS_NAME_MAX]; /* name the certificate must hold; "" = HOST */
} client_tls_url;

typedef struct client_tls client_tls;

/* True when url starts with tls:// (the build may still lack libssl). */
bool client_tls_url_is(const char *url);
/* 0 or -EINVAL with err saying which option is wrong. */
int client_tls_url_parse(const char *url, client_tls_url *out, char *err, size_t errlen);

/* Opens libssl (once): 0, -ENOTSUP without it at build time, -ELIBACC when it cannot be loaded,
 * with err saying which library and package. Called before connecting, so nothing is tried. */
int client_tls_load(char *err, size_t errlen);
/* TLS 1.2 or later over the connected socket fd, handshake included (at most timeout_ms). host is
 * the URL's host, checked when servername is "". 0; -ENOTSUP without libssl at build time;
 * -ELIBACC when it cannot be loaded; -EPROTO (refused certificate, failed handshake), -ENOENT (a
 * file) or the socket's errno, with err saying what failed. The fd stays the caller's. */
int client_tls_start(client_tls **out, int fd, const client_tls_url *u, const char *host,
                     unsigned timeout_ms, char *err, size_t errlen);
/* Encrypts and sends all n bytes: 0 or a negative errno. */
int client_tls_send(client_tls *t, const void *p, size_t n);
/* Sends close_notify: nothing more will be written. 0 or a negative errno. */
int client_tls_close_write(client_tls *t);
/* Up to n plaintext bytes, waiting until deadline_ms (CLOCK_MONOTONIC ms): the count, 0 when the
 * server closed, -ETIMEDOUT, or -EPROTO / the socket's errno (client_tls_why says more). */
ssize_t client_tls_recv(client_tls *t, void *p, size_t n, long long deadline_ms);
/* After a failed send or receive: takes what the server sent last without waiting, so that
 * client_tls_why gives its alert ("tlsv13 alert certificate required") when it sent one. */
void client_tls_explain(client_tls *t);
/* What the last failure was, "" when none. */
const char *client_tls_why(const client_tls *t);
void client_tls_free(client_tls *t);

#endif
