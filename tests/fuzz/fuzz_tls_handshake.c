/* SPDX-License-Identifier: MIT */
/* libFuzzer target for what a tls:// client sends first (issue 40): handshake bytes fed to the
 * daemon's TLS state (daemon/support/tls_server.c) in pieces whose sizes the input chooses, with
 * and without client CAs asked for. Whatever comes in, a feed ends in "wait", "established" or a
 * refusal with a reason, plaintext only ever follows an established handshake, and the names of
 * a client certificate are terminated and within bounds. The server's key and certificate are
 * made once, in memory, and written to a temporary directory for tls_server_ctx_new. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "support/tls_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tls_server_ctx *contexts[2]; /* without, with client CAs */

static void write_pem(const char *path, EVP_PKEY *key, X509 *cert)
{
    FILE *f = fopen(path, "w");
    if (!f || (key && !PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)) ||
        (cert && !PEM_write_X509(f, cert)))
        abort();
    fclose(f);
}

static void make_contexts(void)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509 *cert = X509_new();
    if (!key || !cert)
        abort();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400L * 365);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1, -1, 0);
    X509_set_issuer_name(cert, name);
    if (!X509_sign(cert, key, EVP_sha256()))
        abort();
    char dir[] = "/tmp/fuzz_tls.XXXXXX", cpath[64], kpath[64];
    if (!mkdtemp(dir))
        abort();
    snprintf(cpath, sizeof cpath, "%s/c.pem", dir);
    snprintf(kpath, sizeof kpath, "%s/k.pem", dir);
    write_pem(cpath, NULL, cert);
    write_pem(kpath, key, NULL);
    char why[400];
    tls_server_settings set = {.cert = cpath, .key = kpath, .min_version = 12};
    if (tls_server_ctx_new(&set, &contexts[0], why, sizeof why) < 0)
        abort();
    set.client_ca = cpath; /* its own certificate as the client CA: a client must show one */
    if (tls_server_ctx_new(&set, &contexts[1], why, sizeof why) < 0)
        abort();
    unlink(cpath);
    unlink(kpath);
    rmdir(dir);
    X509_free(cert);
    EVP_PKEY_free(key);
}

typedef struct seen {
    const tls_conn *t;
    size_t plain;
} seen;

static int on_plain(void *ctx, const uint8_t *p, size_t n)
{
    seen *s = ctx;
    (void)p;
    if (!tls_conn_established(s->t))
        abort(); /* plaintext before the handshake ended */
    s->plain += n;
    return 0;
}

static void check_names(const tls_conn *t)
{
    const char *const *names;
    size_t n = tls_conn_names(t, &names);
    if (n > TLS_NAMES_MAX)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!memchr(names[i], 0, TLS_NAME_MAX + 1))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!contexts[0])
        make_contexts();
    if (size < 2 || size > 65536)
        return 0;
    tls_conn *t = tls_conn_new(contexts[data[0] & 1], (data[0] & 2) != 0);
    if (!t)
        return 0;
    size_t piece = (size_t)data[1] + 1, at = 2;
    seen s = {t, 0};
    recd_buf out = {0};
    char why[400];
    while (at < size) {
        size_t n = size - at < piece ? size - at : piece;
        bool closed = false;
        int rc = tls_conn_feed(t, data + at, n, on_plain, &s, &closed, why, sizeof why);
        if (rc == TLS_FEED_ESTABLISHED) {
            check_names(t);
            rc = tls_conn_feed(t, NULL, 0, on_plain, &s, &closed, why, sizeof why);
        }
        at += n;
        if (tls_conn_take_output(t, &out) < 0)
            break;
        if (rc < 0) {
            if (!memchr(why, 0, sizeof why))
                abort();
            break;
        }
        if (rc != 0 || closed)
            break;
    }
    recd_buf_free(&out);
    tls_conn_free(t);
    return 0;
}
