/* SPDX-License-Identifier: MIT */
/* TLS server contexts and connections over memory BIOs (tls_server.h). OpenSSL reads from rbio
 * what the socket gave and writes to wbio what the socket must send; nothing here touches a
 * socket, so the event loop stays libuv's and a slow peer costs no more than a plain one. */
#include "tls_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct tls_server_ctx {
    SSL_CTX *ssl;
    bool client_cert;
};

struct tls_conn {
    SSL *ssl;
    BIO *rbio, *wbio; /* owned by ssl */
    bool established;
    size_t name_count;
    const char *name_ptrs[TLS_NAMES_MAX];
    char names[TLS_NAMES_MAX][TLS_NAME_MAX + 1];
};

/* OpenSSL's queued error as text (and the queue cleared). */
static void say_ssl_error(const char *what, char *why, size_t cap)
{
    unsigned long e = ERR_get_error();
    char text[256] = "";
    if (e)
        ERR_error_string_n(e, text, sizeof text);
    ERR_clear_error();
    snprintf(why, cap, "%s%s%s", what, text[0] ? ": " : "", text);
}

static int load_files(SSL_CTX *ssl, const tls_server_settings *set, char *why, size_t cap)
{
    char what[400];
    if (SSL_CTX_use_certificate_chain_file(ssl, set->cert) != 1) {
        snprintf(what, sizeof what, "tls.cert '%.300s' cannot be loaded", set->cert);
        say_ssl_error(what, why, cap);
        return -EINVAL;
    }
    if (SSL_CTX_use_PrivateKey_file(ssl, set->key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ssl) != 1) {
        snprintf(what, sizeof what, "tls.key '%.300s' cannot be loaded or does not match tls.cert",
                 set->key);
        say_ssl_error(what, why, cap);
        return -EINVAL;
    }
    if (!set->client_ca)
        return 0;
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(set->client_ca);
    if (!names || SSL_CTX_load_verify_locations(ssl, set->client_ca, NULL) != 1) {
        sk_X509_NAME_pop_free(names, X509_NAME_free);
        snprintf(what, sizeof what, "tls.client_ca '%.300s' cannot be loaded", set->client_ca);
        say_ssl_error(what, why, cap);
        return -EINVAL;
    }
    SSL_CTX_set_client_CA_list(ssl, names);
    SSL_CTX_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    return 0;
}

int tls_server_ctx_new(const tls_server_settings *set, tls_server_ctx **out, char *why, size_t cap)
{
    *out = NULL;
    tls_server_ctx *ctx = calloc(1, sizeof *ctx);
    SSL_CTX *ssl = ctx ? SSL_CTX_new(TLS_server_method()) : NULL;
    if (!ssl) {
        free(ctx);
        snprintf(why, cap, "out of memory for a TLS context");
        return -ENOMEM;
    }
    SSL_CTX_set_min_proto_version(ssl, set->min_version == 13 ? TLS1_3_VERSION : TLS1_2_VERSION);
    SSL_CTX_set_options(ssl, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                 SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS); /* an idle connection holds no record buffers */
    SSL_CTX_set_session_cache_mode(ssl, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ssl, 0);
    int rc = load_files(ssl, set, why, cap);
    if (rc < 0) {
        SSL_CTX_free(ssl);
        free(ctx);
        return rc;
    }
    ctx->ssl = ssl;
    ctx->client_cert = set->client_ca != NULL;
    *out = ctx;
    return 0;
}

void tls_server_ctx_free(tls_server_ctx *ctx)
{
    if (!ctx)
        return;
    SSL_CTX_free(ctx->ssl); /* SSL objects hold their own references */
    free(ctx);
}

bool tls_server_ctx_wants_client_cert(const tls_server_ctx *ctx) { return ctx && ctx->client_cert; }

tls_conn *tls_conn_new(tls_server_ctx *ctx, bool require_client_cert)
{
    tls_conn *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ssl = SSL_new(ctx->ssl);
    t->rbio = BIO_new(BIO_s_mem());
    t->wbio = BIO_new(BIO_s_mem());
    if (!t->ssl || !t->rbio || !t->wbio) {
        BIO_free(t->rbio);
        BIO_free(t->wbio);
        SSL_free(t->ssl);
        free(t);
        ERR_clear_error();
        return NULL;
    }
    BIO_set_mem_eof_return(t->rbio, -1); /* an empty rbio means "wait for more", not EOF */
    SSL_set_bio(t->ssl, t->rbio, t->wbio);
    SSL_set_accept_state(t->ssl);
    if (ctx->client_cert && !require_client_cert)
        SSL_set_verify(t->ssl, SSL_VERIFY_PEER, NULL);
    return t;
}

void tls_conn_free(tls_conn *t)
{
    if (!t)
        return;
    SSL_free(t->ssl);
    free(t);
}

static void keep_name(tls_conn *t, const unsigned char *text, int len)
{
    if (len <= 0 || len > TLS_NAME_MAX || t->name_count == TLS_NAMES_MAX ||
        memchr(text, 0, (size_t)len))
        return;
    memcpy(t->names[t->name_count], text, (size_t)len);
    t->names[t->name_count][len] = 0;
    t->name_ptrs[t->name_count] = t->names[t->name_count];
    t->name_count++;
}

/* The verified client certificate's subject CN and DNS SANs. */
static void read_names(tls_conn *t)
{
    X509 *cert = SSL_get0_peer_certificate(t->ssl);
    if (!cert || SSL_get_verify_result(t->ssl) != X509_V_OK)
        return;
    X509_NAME *subject = X509_get_subject_name(cert);
    int at = subject ? X509_NAME_get_index_by_NID(subject, NID_commonName, -1) : -1;
    if (at >= 0) {
        ASN1_STRING *cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
        keep_name(t, ASN1_STRING_get0_data(cn), ASN1_STRING_length(cn));
    }
    GENERAL_NAMES *sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans); i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
        if (g->type == GEN_DNS)
            keep_name(t, ASN1_STRING_get0_data(g->d.dNSName), ASN1_STRING_length(g->d.dNSName));
    }
    GENERAL_NAMES_free(sans);
}

/* What an SSL call's failure means: 0 = wait for more input, else -EPROTO with why. */
static int call_result(tls_conn *t, int ret, const char *stage, char *why, size_t cap)
{
    int err = SSL_get_error(t->ssl, ret);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();
        return 0;
    }
    char what[128];
    long verify = SSL_get_verify_result(t->ssl);
    if (verify != X509_V_OK)
        snprintf(what, sizeof what, "%s failed (client certificate: %s)", stage,
                 X509_verify_cert_error_string(verify));
    else
        snprintf(what, sizeof what, "%s failed", stage);
    say_ssl_error(what, why, cap);
    return -EPROTO;
}

static int read_plain(tls_conn *t, tls_plain_cb on_plain, void *ctx, bool *closed, char *why,
                      size_t cap)
{
    uint8_t plain[16384];
    for (;;) {
        size_t got = 0;
        int ret = SSL_read_ex(t->ssl, plain, sizeof plain, &got);
        if (ret == 1) {
            int rc = on_plain(ctx, plain, got);
            if (rc < 0)
                return rc;
            continue;
        }
        if (SSL_get_error(t->ssl, ret) == SSL_ERROR_ZERO_RETURN) {
            *closed = true;
            return 0;
        }
        return call_result(t, ret, "TLS read", why, cap);
    }
}

int tls_conn_feed(tls_conn *t, const uint8_t *data, size_t len, tls_plain_cb on_plain, void *ctx,
                  bool *closed, char *why, size_t cap)
{
    *closed = false;
    if (len && BIO_write(t->rbio, data, (int)len) != (int)len)
        return -ENOMEM;
    if (!t->established) {
        int ret = SSL_do_handshake(t->ssl);
        if (ret != 1)
            return call_result(t, ret, "TLS handshake", why, cap);
        t->established = true;
        read_names(t);
        return TLS_FEED_ESTABLISHED; /* the caller takes the identity before any plaintext */
    }
    return read_plain(t, on_plain, ctx, closed, why, cap);
}

bool tls_conn_established(const tls_conn *t) { return t->established; }

int tls_conn_write(tls_conn *t, const uint8_t *data, size_t len)
{
    if (!t->established)
        return -ENOTCONN;
    size_t done = 0;
    if (len && SSL_write_ex(t->ssl, data, len, &done) != 1) {
        ERR_clear_error();
        return -EPROTO;
    }
    return 0;
}

void tls_conn_shutdown(tls_conn *t)
{
    if (t->established)
        SSL_shutdown(t->ssl);
    ERR_clear_error();
}

int tls_conn_take_output(tls_conn *t, recd_buf *out)
{
    size_t pending = BIO_ctrl_pending(t->wbio);
    if (!pending)
        return 0;
    if (recd_buf_reserve(out, pending) < 0)
        return -ENOMEM;
    int got = BIO_read(t->wbio, out->data + out->len, (int)pending);
    if (got > 0)
        out->len += (size_t)got;
    return 0;
}

bool tls_conn_has_output(const tls_conn *t) { return BIO_ctrl_pending(t->wbio) > 0; }

size_t tls_conn_names(const tls_conn *t, const char *const **names)
{
    *names = t->name_ptrs;
    return t->name_count;
}

const char *tls_conn_version(const tls_conn *t) { return SSL_get_version(t->ssl); }
