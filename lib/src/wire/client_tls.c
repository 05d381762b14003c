/* SPDX-License-Identifier: MIT */
/* client_tls.h: a blocking TLS client over memory BIOs. Each SSL call runs until OpenSSL wants
 * socket bytes; what it wrote is sent with send(MSG_NOSIGNAL) (a library must not raise SIGPIPE),
 * what it wants is received with poll under a deadline. libssl is opened on first use. */
#include "wire/client_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "wire/wire_internal.h"

#ifdef RECD_HAVE_LIBSSL
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "base/dl_table.h"

/* libcrypto's functions (ERR_*, X509_*) are found through libssl, which depends on it. */
#define SSL_FUNCTIONS(X)                                                                           \
    X(TLS_client_method) X(SSL_CTX_new) X(SSL_CTX_free) X(SSL_CTX_ctrl) X(SSL_CTX_set_options)    \
    X(SSL_CTX_load_verify_locations) X(SSL_CTX_set_default_verify_paths)                          \
    X(SSL_CTX_use_certificate_chain_file) X(SSL_CTX_use_PrivateKey_file)                          \
    X(SSL_CTX_check_private_key) X(SSL_CTX_set_verify) X(SSL_new) X(SSL_free) X(SSL_ctrl)         \
    X(SSL_set_bio) X(SSL_set1_host) X(SSL_get0_param) X(SSL_connect) X(SSL_write) X(SSL_read)     \
    X(SSL_shutdown) X(SSL_get_error) X(SSL_get_verify_result) X(BIO_new) X(BIO_s_mem)             \
    X(BIO_free) X(BIO_read) X(BIO_write) X(BIO_ctrl_pending) X(X509_VERIFY_PARAM_set1_ip_asc)                \
    X(X509_verify_cert_error_string) X(ERR_get_error) X(ERR_error_string_n) X(ERR_clear_error)
static struct {
    SSL_FUNCTIONS(DL_POINTER)
} ossl;
#define SSL_SYMBOL(fn) DL_SYMBOL(ossl, fn)
static const dl_symbol ssl_symbols[] = {SSL_FUNCTIONS(SSL_SYMBOL)};
static dl_library libssl = DL_LIBRARY("libssl", RECD_SSL_SONAME, RECD_SSL_PACKAGE,
                                      "tls:// URLs", ssl_symbols);

#define CHUNK 16384u /* one TLS record's plaintext at most */

struct client_tls {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *in, *out; /* socket bytes for OpenSSL to read; bytes it wrote for the socket */
    bool bios_owned;  /* SSL_set_bio gave them to t->ssl */
    char why[400];
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* OpenSSL's queued errors as one line (the first is the cause). */
static void ssl_reason(char *out, size_t cap)
{
    unsigned long e = ossl.ERR_get_error();
    if (!e) {
        snprintf(out, cap, "no reason given");
        return;
    }
    ossl.ERR_error_string_n(e, out, cap);
    ossl.ERR_clear_error();
}

/* The first failure is the one worth telling: a dead connection fails every later call. */
__attribute__((format(printf, 2, 3))) static void set_why(client_tls *t, const char *fmt, ...)
{
    if (t->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
}

/* Sends what OpenSSL wrote into t->out. */
static int flush_out(client_tls *t)
{
    uint8_t buf[CHUNK];
    while (ossl.BIO_ctrl_pending(t->out) > 0) {
        int n = ossl.BIO_read(t->out, buf, sizeof buf);
        for (int off = 0; off < n;) {
            ssize_t w = send(t->fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                int e = errno;
                set_why(t, "send: %s", strerror(e));
                return -e;
            }
            off += (int)w;
        }
    }
    return 0;
}

/* Receives socket bytes for OpenSSL: 1, 0 when the server closed, or a negative errno. */
static int fill_in(client_tls *t, long long deadline_ms)
{
    uint8_t buf[CHUNK];
    for (;;) {
        long long left = deadline_ms - now_ms();
        struct pollfd p = {t->fd, POLLIN, 0};
        int n = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            set_why(t, "the server did not answer in time");
            return -ETIMEDOUT;
        }
        ssize_t r = n < 0 ? -1 : recv(t->fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            set_why(t, "receive: %s", strerror(e));
            return -e;
        }
        if (r > 0 && ossl.BIO_write(t->in, buf, (int)r) != (int)r)
            return -ENOMEM;
        return r > 0;
    }
}

/* Runs op (a handshake, read or write step) until it is done: its result (> 0), 0 when the
 * server closed, or a negative errno with t->why set. */
static int drive(client_tls *t, int (*op)(client_tls *, void *, int), void *p, int n,
                 long long deadline_ms)
{
    for (;;) {
        ossl.ERR_clear_error();
        int r = op(t, p, n);
        int e = r > 0 ? SSL_ERROR_NONE : ossl.SSL_get_error(t->ssl, r);
        int rc = flush_out(t);
        if (rc < 0)
            return rc;
        if (e == SSL_ERROR_NONE)
            return r;
        if (e == SSL_ERROR_ZERO_RETURN)
            return 0;
        if (e != SSL_ERROR_WANT_READ) {
            char reason[256];
            ssl_reason(reason, sizeof reason);
            set_why(t, "%s", reason);
            return -EPROTO;
        }
        if ((rc = fill_in(t, deadline_ms)) <= 0)
            return rc;
    }
}

static int op_connect(client_tls *t, void *p, int n)
{
    (void)p, (void)n;
    return ossl.SSL_connect(t->ssl);
}
static int op_write(client_tls *t, void *p, int n) { return ossl.SSL_write(t->ssl, p, n); }
static int op_read(client_tls *t, void *p, int n) { return ossl.SSL_read(t->ssl, p, n); }

static int fail(client_tls *t, int rc, char *err, size_t errlen, const char *what)
{
    char reason[256];
    ssl_reason(reason, sizeof reason);
    recd_why(err, errlen, "TLS: %s: %s", what, reason);
    client_tls_free(t);
    return rc;
}

/* Trust (ca= or the system's), the client certificate, TLS 1.2 at least, no renegotiation. */
static int make_context(client_tls *t, const client_tls_url *u, char *err, size_t errlen)
{
    t->ctx = ossl.SSL_CTX_new(ossl.TLS_client_method());
    if (!t->ctx)
        return fail(t, -ENOMEM, err, errlen, "cannot create a context");
    ossl.SSL_CTX_ctrl(t->ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
    ossl.SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    ossl.SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
    int ok = u->ca[0] ? ossl.SSL_CTX_load_verify_locations(t->ctx, u->ca, NULL)
                      : ossl.SSL_CTX_set_default_verify_paths(t->ctx);
    if (ok != 1) {
        char what[CLIENT_TLS_PATH_MAX + 40];
        snprintf(what, sizeof what, "cannot read the CA file %s", u->ca[0] ? u->ca : "(system)");
        return fail(t, -ENOENT, err, errlen, what);
    }
    if (!u->cert[0])
        return 0;
    const char *key = u->key[0] ? u->key : u->cert;
    if (ossl.SSL_CTX_use_certificate_chain_file(t->ctx, u->cert) != 1)
        return fail(t, -ENOENT, err, errlen, "cannot read the client certificate (cert=)");
    if (ossl.SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1 ||
        ossl.SSL_CTX_check_private_key(t->ctx) != 1)
        return fail(t, -ENOENT, err, errlen, u->key[0] ? "cannot use the private key (key=) with cert=" : "no private key for cert= in its file (give key=)");
    return 0;
}

/* The name the server's certificate must hold: a DNS name (also sent as SNI) or an address. */
static int set_server_name(client_tls *t, const char *name, char *err, size_t errlen)
{
    unsigned char addr[16];
    bool is_ip = inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
    int ok = is_ip ? ossl.X509_VERIFY_PARAM_set1_ip_asc(ossl.SSL_get0_param(t->ssl), name)
                   : ossl.SSL_set1_host(t->ssl, name) == 1 &&
                         ossl.SSL_ctrl(t->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
                                       TLSEXT_NAMETYPE_host_name, (void *)name) == 1;
    return ok == 1 ? 0 : fail(t, -EINVAL, err, errlen, "cannot set the server name");
}

static int handshake(client_tls *t, const char *name, unsigned timeout_ms, char *err,
                     size_t errlen)
{
    int rc = drive(t, op_connect, NULL, 0, now_ms() + timeout_ms);
    if (rc > 0)
        return 0;
    long v = ossl.SSL_get_verify_result(t->ssl);
    if (v != X509_V_OK)
        recd_why(err, errlen, "TLS: the server's certificate is refused for '%s': %s", name,
                 ossl.X509_verify_cert_error_string(v));
    else
        recd_why(err, errlen, "TLS handshake failed: %s%s",
                 rc == 0 ? "the server closed the connection" : t->why,
                 strstr(t->why, "wrong version number") ? " (does this port speak TLS? recd's "
                                                          "tcp:// listeners do not)"
                                                        : "");
    client_tls_free(t);
    return rc == 0 || rc == -EPROTO ? -EPROTO : rc;
}

int client_tls_load(char *err, size_t errlen) { return recd__dl_load(&libssl, err, errlen); }

int client_tls_start(client_tls **out, int fd, const client_tls_url *u, const char *host,
                     unsigned timeout_ms, char *err, size_t errlen)
{
    *out = NULL;
    int rc = client_tls_load(err, errlen);
    if (rc < 0)
        return rc;
    client_tls *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->fd = fd;
    if ((rc = make_context(t, u, err, errlen)) < 0)
        return rc;
    t->ssl = ossl.SSL_new(t->ctx);
    t->in = ossl.BIO_new(ossl.BIO_s_mem());
    t->out = ossl.BIO_new(ossl.BIO_s_mem());
    if (!t->ssl || !t->in || !t->out)
        return fail(t, -ENOMEM, err, errlen, "out of memory");
    ossl.SSL_set_bio(t->ssl, t->in, t->out);
    t->bios_owned = true;
    const char *name = u->servername[0] ? u->servername : host;
    if ((rc = set_server_name(t, name, err, errlen)) < 0 ||
        (rc = handshake(t, name, timeout_ms, err, errlen)) < 0)
        return rc;
    *out = t;
    return 0;
}

int client_tls_send(client_tls *t, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        int chunk = n > CHUNK ? (int)CHUNK : (int)n;
        /* a write into memory BIOs never waits for the server: no deadline needed */
        int rc = drive(t, op_write, (void *)b, chunk, now_ms() + 3600000LL);
        if (rc <= 0)
            return rc < 0 ? rc : -EPIPE;
        b += rc;
        n -= (size_t)rc;
    }
    return 0;
}

int client_tls_close_write(client_tls *t)
{
    ossl.ERR_clear_error();
    ossl.SSL_shutdown(t->ssl); /* the first call only queues close_notify */
    int rc = flush_out(t);
    if (rc < 0) /* the reply read next tells more: the server's alert, or the reset */
        t->why[0] = '\0';
    return rc;
}

ssize_t client_tls_recv(client_tls *t, void *p, size_t n, long long deadline_ms)
{
    return drive(t, op_read, p, n > CHUNK ? (int)CHUNK : (int)n, deadline_ms);
}

void client_tls_explain(client_tls *t)
{
    uint8_t buf[CHUNK];
    ssize_t r;
    while ((r = recv(t->fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
        ossl.BIO_write(t->in, buf, (int)r);
    for (;;) { /* application data before the alert is skipped */
        ossl.ERR_clear_error();
        int n = ossl.SSL_read(t->ssl, buf, sizeof buf);
        if (n > 0)
            continue;
        if (ossl.SSL_get_error(t->ssl, n) == SSL_ERROR_SSL) {
            char reason[256];
            ssl_reason(reason, sizeof reason);
            snprintf(t->why, sizeof t->why, "%s", reason);
        }
        return;
    }
}

const char *client_tls_why(const client_tls *t) { return t->why; }

void client_tls_free(client_tls *t)
{
    if (!t)
        return;
    if (!t->bios_owned) {
        if (t->in)
            ossl.BIO_free(t->in);
        if (t->out)
            ossl.BIO_free(t->out);
    }
    if (t->ssl)
        ossl.SSL_free(t->ssl);
    if (t->ctx)
        ossl.SSL_CTX_free(t->ctx);
    free(t);
}

#else /* built without libssl (libssl-dev) */

int client_tls_load(char *err, size_t errlen)
{
    recd_why(err, errlen, "tls:// is not available: librecd was built without libssl-dev");
    return -ENOTSUP;
}

int client_tls_start(client_tls **out, int fd, const client_tls_url *u, const char *host,
                     unsigned timeout_ms, char *err, size_t errlen)
{
    (void)fd, (void)u, (void)host, (void)timeout_ms;
    *out = NULL;
    return client_tls_load(err, errlen);
}
int client_tls_send(client_tls *t, const void *p, size_t n) { return (void)t, (void)p, (void)n, -ENOTSUP; }
int client_tls_close_write(client_tls *t) { return (void)t, -ENOTSUP; }
ssize_t client_tls_recv(client_tls *t, void *p, size_t n, long long deadline_ms)
{
    return (void)t, (void)p, (void)n, (void)deadline_ms, -ENOTSUP;
}
void client_tls_explain(client_tls *t) { (void)t; }
const char *client_tls_why(const client_tls *t) { return (void)t, ""; }
void client_tls_free(client_tls *t) { (void)t; }

#endif
