/* SPDX-License-Identifier: MIT */
/* recd_client's JetStream publisher (client_nats.h): the nats:// URL and its options, then
 * libnats when the build has it (RECD_HAVE_NATS), else a clear -ENOTSUP. The only librecd file
 * that calls libnats, so rectool send and every program linking librecd share one publisher;
 * libnats is loaded with dlopen on the first connect. */
#include "wire/client_nats.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/fleet.h"
#include "recd/units.h"
#include "recd/wire.h"
#include "wire/nats_nkey.h"
#include "wire/wire_internal.h"

#define DEFAULT_MAX_IN_FLIGHT 1024u
#define MAX_IN_FLIGHT_MAX 1000000u
#define DEFAULT_BUFFER (8ull << 20)
#define BUFFER_MIN (1ull << 10)
#define BUFFER_MAX (1ull << 30)
#define DEFAULT_ACK_TIMEOUT_MS 10000u
#define ACK_TIMEOUT_MAX_MS 3600000u
#define URL_MAX 1024u
#define VALUE_MAX 47u
#define SIGNED_CONNECT_TRIES 4 /* connect_js: four refusals by libnats' fault are 1 in 2^32 */

bool client_nats_url(const char *url) { return url && strncmp(url, "nats://", 7) == 0; }

enum {
    OPT_PARTITIONS,
    OPT_MAX_IN_FLIGHT,
    OPT_BUFFER,
    OPT_ACK_TIMEOUT,
    OPT_ENCODING,
    OPT_TLS_CA,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_CREDS,
    OPT_NKEY,
    OPT_COUNT
};
#define OPT_FIRST_FILE OPT_TLS_CA
static const char *const option_names[OPT_COUNT] = {
    "partitions", "max_in_flight", "buffer", "ack_timeout", "encoding",
    "tls_ca",     "tls_cert",      "tls_key", "creds",      "nkey"};
static const char *const option_ranges[OPT_FIRST_FILE] = {
    "a number from 1 to 1024", "a number from 1 to 1000000",
    "a size from 1KiB to 1GiB (e.g. 8MiB)", "a duration from 1ms to 1h (e.g. 10s)", "binary"};

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes src[0..len) into out (a '%' not followed by two hex digits stays as it is, as
 * Python's unquote does). -ENAMETOOLONG when it does not fit in cap, -EINVAL for a %00. */
static int percent_decode(const char *src, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        int hi, lo;
        if (c == '%' && i + 2 < len && (hi = hex_digit(src[i + 1])) >= 0 &&
            (lo = hex_digit(src[i + 2])) >= 0) {
            c = (char)(hi << 4 | lo);
            i += 2;
            if (c == '\0')
                return -EINVAL;
        }
        if (n + 1 >= cap)
            return -ENAMETOOLONG;
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

static char *file_option(client_nats_options *o, int which)
{
    switch (which) {
    case OPT_TLS_CA:
        return o->tls_ca;
    case OPT_TLS_CERT:
        return o->tls_cert;
    case OPT_TLS_KEY:
        return o->tls_key;
    case OPT_CREDS:
        return o->creds;
    default:
        return o->nkey;
    }
}

/* Plain decimal digits, lo..hi. */
static int parse_count(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x = 0;
    if (!*v)
        return -EINVAL;
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9')
            return -EINVAL;
        x = x * 10 + (uint64_t)(*c - '0');
        if (x > hi)
            return -EINVAL;
    }
    if (x < lo)
        return -EINVAL;
    *out = x;
    return 0;
}

static int set_option(int which, const char *v, client_nats_options *o, char *err, size_t errlen)
{
    uint64_t x = 0;
    const char *why = NULL;
    int rc = -EINVAL;
    switch (which) {
    case OPT_PARTITIONS:
        if ((rc = parse_count(v, 1, RECD_FLEET_PARTITIONS_MAX, &x)) == 0)
            o->partitions = (uint32_t)x;
        break;
    case OPT_MAX_IN_FLIGHT:
        if ((rc = parse_count(v, 1, MAX_IN_FLIGHT_MAX, &x)) == 0)
            o->max_in_flight = (uint32_t)x;
        break;
    case OPT_BUFFER:
        rc = recd_parse_size(v, &x, &why);
        if (rc == 0 && (x < BUFFER_MIN || x > BUFFER_MAX))
            rc = -EINVAL;
        if (rc == 0)
            o->buffer_bytes = x;
        break;
    case OPT_ACK_TIMEOUT:
        rc = recd_parse_duration_ms(v, &x, &why);
        if (rc == 0 && (x < 1 || x > ACK_TIMEOUT_MAX_MS))
            rc = -EINVAL;
        if (rc == 0)
            o->ack_timeout_ms = x;
        break;
    default: { /* a stream message is one binary frame: NDJSON has no place here */
        recd_wire_encoding e;
        if (recd_wire_encoding_parse(v, &e) == 0 && e == RECD_WIRE_BINARY)
            rc = 0;
        break;
    }
    }
    if (rc < 0)
        wire_why(err, errlen, "%s=%s: expected %s%s%s", option_names[which], v,
                 option_ranges[which], why ? "; " : "", why ? why : "");
    return rc < 0 ? -EINVAL : 0;
}

/* Where the user part of a nats:// URL ends: its last '@' before the path, or NULL. */
static const char *userinfo_end(const char *url)
{
    if (strncmp(url, "nats://", 7) != 0)
        return NULL;
    const char *at = NULL;
    for (const char *c = url + 7; *c && *c != '/' && *c != '?'; c++)
        if (*c == '@')
            at = c;
    return at;
}

/* Moves "USER:PASSWORD@" or "TOKEN@" out of base into o. */
static int take_userinfo(char *base, client_nats_options *o, char *err, size_t errlen)
{
    char *at = (char *)userinfo_end(base), *info = base + 7;
    if (!at)
        return 0;
    size_t len = (size_t)(at - info);
    const char *colon = memchr(info, ':', len);
    size_t name_len = colon ? (size_t)(colon - info) : len;
    if (name_len == 0) {
        wire_why(err, errlen, "the user (or token) before '@' is empty");
        return -EINVAL;
    }
    int rc = percent_decode(info, name_len, colon ? o->user : o->token, CLIENT_NATS_SECRET_MAX);
    if (rc == 0 && colon)
        rc = percent_decode(colon + 1, len - name_len - 1, o->password, CLIENT_NATS_SECRET_MAX);
    if (rc < 0) {
        wire_why(err, errlen, "the %s before '@' is longer than %u bytes or holds %%00",
                 colon ? "user or password" : "token", CLIENT_NATS_SECRET_MAX - 1);
        return -EINVAL;
    }
    memmove(info, at + 1, strlen(at + 1) + 1);
    return 0;
}

/* One query option KEY=VALUE (p, len) into o; seen tracks the ones given. */
static int take_option(const char *p, size_t len, unsigned *seen, client_nats_options *o,
                       char *err, size_t errlen)
{
    const char *eq = memchr(p, '=', len);
    size_t klen = eq ? (size_t)(eq - p) : len;
    int which = -1;
    for (int i = 0; i < OPT_COUNT; i++)
        if (strlen(option_names[i]) == klen && memcmp(option_names[i], p, klen) == 0)
            which = i;
    if (which < 0) {
        wire_why(err, errlen,
                 "unknown option '%.*s' (partitions, max_in_flight, buffer, ack_timeout, "
                 "encoding, tls_ca, tls_cert, tls_key, creds, nkey)",
                 (int)(klen > 40 ? 40 : klen), p);
        return -EINVAL;
    }
    if (*seen & (1u << which)) {
        wire_why(err, errlen, "%s is given twice", option_names[which]);
        return -EINVAL;
    }
    *seen |= 1u << which;
    const char *raw = eq ? eq + 1 : p + len;
    size_t vlen = eq ? len - klen - 1 : 0;
    if (which >= OPT_FIRST_FILE) { /* a path, percent-encoded in the URL */
        int rc = vlen ? percent_decode(raw, vlen, file_option(o, which), CLIENT_NATS_PATH_MAX)
                      : -EINVAL;
        if (rc < 0)
            wire_why(err, errlen, "%s=%.*s: expected a file path of 1..%u bytes", option_names[which],
                     (int)(vlen > 80 ? 80 : vlen), raw, CLIENT_NATS_PATH_MAX - 1);
        return rc < 0 ? -EINVAL : 0;
    }
    char v[VALUE_MAX + 1];
    if (vlen == 0 || vlen > VALUE_MAX || percent_decode(raw, vlen, v, sizeof v) < 0) {
        wire_why(err, errlen, "%s needs a value of 1..%u characters: %s=%s", option_names[which],
                 VALUE_MAX, option_names[which], option_ranges[which]);
        return -EINVAL;
    }
    return set_option(which, v, o, err, errlen);
}

int client_nats_parse(const char *url, char *base, size_t base_cap, client_nats_options *o,
                      char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->partitions = RECD_FLEET_DEFAULT_PARTITIONS;
    o->max_in_flight = DEFAULT_MAX_IN_FLIGHT;
    o->buffer_bytes = DEFAULT_BUFFER;
    o->ack_timeout_ms = DEFAULT_ACK_TIMEOUT_MS;
    const char *q = strchr(url, '?');
    size_t n = q ? (size_t)(q - url) : strlen(url);
    if (n >= base_cap) {
        wire_why(err, errlen, "the URL is longer than %lu bytes", (unsigned long)base_cap - 1);
        return -EINVAL;
    }
    memcpy(base, url, n);
    base[n] = '\0';
    if (take_userinfo(base, o, err, errlen) < 0)
        return -EINVAL;
    unsigned seen = 0;
    for (const char *p = q ? q + 1 : NULL; p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (take_option(p, len, &seen, o, err, errlen) < 0)
            return -EINVAL;
        p = amp ? amp + 1 : NULL;
    }
    if (o->tls_key[0] && !o->tls_cert[0]) {
        wire_why(err, errlen, "tls_key needs tls_cert (the client certificate it belongs to)");
        return -EINVAL;
    }
    const char *given[4];
    size_t ngiven = 0;
    if (o->creds[0])
        given[ngiven++] = "creds";
    if (o->nkey[0])
        given[ngiven++] = "nkey";
    if (o->user[0])
        given[ngiven++] = "USER:PASSWORD@";
    if (o->token[0])
        given[ngiven++] = "TOKEN@";
    if (ngiven > 1) {
        wire_why(err, errlen, "credentials: give one of %s, %s%s%s, not several", given[0],
                 given[1], ngiven > 2 ? ", " : "", ngiven > 2 ? given[2] : "");
        return -EINVAL;
    }
    return 0;
}

/* url for messages: its user part (a password or token) shown as "***". */
static void redacted(const char *url, char *out, size_t cap)
{
    const char *at = userinfo_end(url);
    if (at)
        snprintf(out, cap, "nats://***%.200s", at);
    else
        snprintf(out, cap, "%.200s", url);
}

/* The URL's parts: options, then host, port and prefix. err names the URL. */
static int parse_url(const char *url, recd_fleet_url *fu, client_nats_options *o, char *err,
                     size_t errlen)
{
    char base[URL_MAX], why[300], shown[220];
    redacted(url, shown, sizeof shown);
    if (client_nats_parse(url, base, sizeof base, o, why, sizeof why) < 0) {
        wire_why(err, errlen, "bad URL '%s': %s", shown, why);
        return -EINVAL;
    }
    if (recd_fleet_url_parse(base, fu, why, sizeof why) < 0) {
        wire_why(err, errlen, "bad URL %s", why);
        return -EINVAL;
    }
    return 0;
}

#ifndef RECD_HAVE_NATS

struct client_nats {
    int unused;
};

int client_nats_open(client_nats **out, const char *url, size_t max_frame, char *err,
                     size_t errlen)
{
    (void)max_frame;
    *out = NULL;
    recd_fleet_url fu;
    client_nats_options o;
    int rc = parse_url(url, &fu, &o, err, errlen);
    if (rc < 0)
        return rc;
    char shown[220];
    redacted(url, shown, sizeof shown);
    wire_why(err, errlen, "%s: this librecd was built without NATS support (libnats-dev)", shown);
    return -ENOTSUP;
}
int client_nats_publish(client_nats *n, const recd_msg *m) { return (void)n, (void)m, -ENOTSUP; }
int client_nats_flush(client_nats *n) { return (void)n, -ENOTSUP; }
int client_nats_close(client_nats *n, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    free(n);
    return 0;
}
uint64_t client_nats_bytes(const client_nats *n) { return (void)n, 0; }
uint64_t client_nats_lost(client_nats *n) { return (void)n, 0; }

#else

#include <nats/nats.h>
#include <pthread.h>

#include "base/dl_table.h"

/* libnats is opened by the first client_nats_open (base/dl_table.h): programs that never publish
 * to nats:// do not map it, nor the libssl and libcrypto it pulls in. */
#define NATS_FUNCTIONS(X)                                                                          \
    X(jsCtx_Destroy) X(jsOptions_Init) X(jsPubOptions_Init) X(js_PublishAsync)                     \
    X(js_PublishAsyncComplete) X(js_PublishAsyncGetPendingList) X(natsConnection_Connect)          \
    X(natsConnection_Destroy) X(natsConnection_JetStream) X(natsMsgList_Destroy)                   \
    X(natsMsg_GetSubject) X(natsOptions_Create) X(natsOptions_Destroy)                             \
    X(natsOptions_LoadCATrustedCertificates) X(natsOptions_LoadCertificatesChain)                  \
    X(natsOptions_SetMaxReconnect) X(natsOptions_SetNKeyFromSeed)                                  \
    X(natsOptions_SetReconnectBufSize) X(natsOptions_SetSecure) X(natsOptions_SetToken)            \
    X(natsOptions_SetURL) X(natsOptions_SetUserCredentialsFromFiles) X(natsOptions_SetUserInfo)    \
    X(natsStatus_GetText) X(nats_GetLastError)
static struct {
    NATS_FUNCTIONS(DL_POINTER)
} nats;
#define NATS_SYMBOL(fn) DL_SYMBOL(nats, fn)
static const dl_symbol nats_symbols[] = {NATS_FUNCTIONS(NATS_SYMBOL)};
static dl_library libnats = DL_LIBRARY("libnats", RECD_NATS_SONAME, RECD_NATS_PACKAGE,
                                       "nats:// URLs", nats_symbols);

struct client_nats {
    recd_fleet_url url;
    client_nats_options opt;
    size_t max_frame;
    natsConnection *nc;
    jsCtx *js;
    recd_buf frame;
    uint64_t bytes;
    int broken;    /* sticky: a publish libnats refused, or a loss */
    char why[300]; /* what libnats said when it refused a publish */
    pthread_mutex_t lock; /* lost, first_lost: the ack error handler runs on a libnats thread */
    uint64_t lost;
    char first_lost[200];
};

static void count_lost(client_nats *n, uint64_t count, const char *reason, const char *detail)
{
    pthread_mutex_lock(&n->lock);
    if (!n->lost)
        wire_why(n->first_lost, sizeof n->first_lost, "%s%s", reason, detail);
    n->lost += count;
    pthread_mutex_unlock(&n->lock);
}

/* libnats thread: JetStream refused a publish (no stream for the subject, storage full...). */
static void on_pub_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
    (void)js;
    char on[RECD_FLEET_SUBJECT_MAX + 8];
    wire_why(on, sizeof on, " on %s", nats.natsMsg_GetSubject(pae->Msg));
    count_lost(closure, 1, pae->ErrText ? pae->ErrText : nats.natsStatus_GetText(pae->Err), on);
}

uint64_t client_nats_lost(client_nats *n)
{
    pthread_mutex_lock(&n->lock);
    uint64_t lost = n->lost;
    pthread_mutex_unlock(&n->lock);
    return lost;
}

uint64_t client_nats_bytes(const client_nats *n) { return n->bytes; }

/* Each file option must be a readable file: said here, with its name, rather than as a
 * connection error. */
static int check_files(const client_nats_options *o, char *err, size_t errlen)
{
    static const int files[] = {OPT_TLS_CA, OPT_TLS_CERT, OPT_TLS_KEY, OPT_CREDS, OPT_NKEY};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *path = file_option((client_nats_options *)o, files[i]);
        if (!path[0])
            continue;
        FILE *f = fopen(path, "rb");
        if (!f) {
            wire_why(err, errlen, "%s %.200s: %s", option_names[files[i]], path, strerror(errno));
            return -EINVAL;
        }
        fclose(f);
    }
    return 0;
}

/* TLS and credentials from the URL. err names the option (and file) that did not load. */
static natsStatus set_security(natsOptions *no, const client_nats_options *o, char *pub,
                               size_t pub_cap, char *err, size_t errlen)
{
    natsStatus s = NATS_OK;
    const char *what = "TLS", *path = "";
    if (o->tls_ca[0] || o->tls_cert[0]) /* TLS or nothing: libnats refuses a server without */
        s = nats.natsOptions_SetSecure(no, true);
    if (s == NATS_OK && o->tls_ca[0]) {
        what = "tls_ca", path = o->tls_ca;
        s = nats.natsOptions_LoadCATrustedCertificates(no, o->tls_ca);
    }
    if (s == NATS_OK && o->tls_cert[0]) { /* without tls_key, the key is in the same PEM file */
        what = "tls_cert", path = o->tls_cert;
        s = nats.natsOptions_LoadCertificatesChain(no, o->tls_cert,
                                                   o->tls_key[0] ? o->tls_key : o->tls_cert);
    }
    if (s == NATS_OK && o->creds[0]) {
        what = "creds", path = o->creds;
        s = nats.natsOptions_SetUserCredentialsFromFiles(no, o->creds, NULL);
    }
    if (s == NATS_OK && o->nkey[0]) {
        what = "nkey", path = o->nkey;
        if (nats_nkey_public_of_seed_file(o->nkey, pub, pub_cap, err, errlen) < 0)
            return NATS_INVALID_ARG;
        s = nats.natsOptions_SetNKeyFromSeed(no, pub, o->nkey);
    }
    if (s == NATS_OK && o->user[0]) {
        what = "USER:PASSWORD@", path = "";
        s = nats.natsOptions_SetUserInfo(no, o->user, o->password);
    }
    if (s == NATS_OK && o->token[0]) {
        what = "TOKEN@", path = "";
        s = nats.natsOptions_SetToken(no, o->token);
    }
    if (s != NATS_OK)
        wire_why(err, errlen, "%s%s%.200s: %s (%s)", what, path[0] ? " " : "", path,
                 nats.natsStatus_GetText(s), nats.nats_GetLastError(NULL));
    return s;
}

/* A hint for a failed TLS connection: what the server was checked against, what it may want. */
static const char *tls_hint(const client_nats_options *o, natsStatus s, char *buf, size_t cap)
{
    if (!o->tls_ca[0] && !o->tls_cert[0])
        return "";
    if (s == NATS_SECURE_CONNECTION_WANTED)
        snprintf(buf, cap, "; TLS was asked for (tls_ca, tls_cert) and the server offers none: "
                           "nothing is sent in clear text");
    else if (s == NATS_SSL_ERROR && o->tls_ca[0])
        snprintf(buf, cap, "; checked against tls_ca %.200s", o->tls_ca);
    else if (!o->tls_cert[0])
        snprintf(buf, cap, "; does the server want a client certificate? (tls_cert, tls_key)");
    else
        return "";
    return buf;
}

static int connect_js(client_nats *n, char *err, size_t errlen)
{
    char server[300], pub[64] = "";
    snprintf(server, sizeof server, strchr(n->url.host, ':') ? "nats://[%s]:%u" : "nats://%s:%u",
             n->url.host, n->url.port);
    int rc = check_files(&n->opt, err, errlen);
    if (rc < 0)
        return rc;
    natsOptions *o = NULL;
    natsStatus s = nats.natsOptions_Create(&o);
    if (s == NATS_OK)
        s = nats.natsOptions_SetURL(o, server);
    if (s == NATS_OK) /* what is published while reconnecting waits here, up to this size */
        s = nats.natsOptions_SetReconnectBufSize(o, (int)n->opt.buffer_bytes);
    if (s == NATS_OK)
        s = nats.natsOptions_SetMaxReconnect(o, 60);
    if (s == NATS_OK && set_security(o, &n->opt, pub, sizeof pub, err, errlen) != NATS_OK) {
        nats.natsOptions_Destroy(o);
        return -EINVAL;
    }
    /* libnats 3.4.1 sends no signature when the nonce's signature starts with a zero byte (its
     * base64 encoder takes that for an empty string): 1 connect in 256 with nkey or creds is
     * refused. A new connection gets a new nonce, so a refusal is retried; a wrong key is
     * refused every time. */
    if (s == NATS_OK) {
        int tries = n->opt.nkey[0] || n->opt.creds[0] ? SIGNED_CONNECT_TRIES : 1;
        do
            s = nats.natsConnection_Connect(&n->nc, o);
        while (s == NATS_CONNECTION_AUTH_FAILED && --tries > 0);
    }
    nats.natsOptions_Destroy(o);
    jsOptions jo;
    if (s == NATS_OK)
        s = nats.jsOptions_Init(&jo);
    if (s == NATS_OK) {
        jo.PublishAsync.MaxPending = n->opt.max_in_flight;
        jo.PublishAsync.ErrHandler = on_pub_error;
        jo.PublishAsync.ErrHandlerClosure = n;
        jo.PublishAsync.StallWait = (int64_t)n->opt.ack_timeout_ms;
        s = nats.natsConnection_JetStream(&n->js, n->nc, &jo);
    }
    if (s != NATS_OK) {
        const char *last = nats.nats_GetLastError(NULL);
        char hint[260];
        wire_why(err, errlen, "cannot connect to %s: %s%s%s%s%s", server,
                 nats.natsStatus_GetText(s),
                 tls_hint(&n->opt, s, hint, sizeof hint), last && *last ? " (" : "",
                 last && *last ? last : "", last && *last ? ")" : "");
        return -ECONNREFUSED;
    }
    return 0;
}

static void destroy(client_nats *n)
{
    if (n->js) /* set only after libnats loaded */
        nats.jsCtx_Destroy(n->js);
    if (n->nc)
        nats.natsConnection_Destroy(n->nc);
    recd_buf_free(&n->frame);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

int client_nats_open(client_nats **out, const char *url, size_t max_frame, char *err,
                     size_t errlen)
{
    *out = NULL;
    client_nats *n = calloc(1, sizeof *n);
    if (!n)
        return -ENOMEM;
    pthread_mutex_init(&n->lock, NULL);
    n->max_frame = wire_max_frame(max_frame);
    int rc = parse_url(url, &n->url, &n->opt, err, errlen);
    if (rc == 0)
        rc = recd__dl_load(&libnats, err, errlen);
    if (rc == 0)
        rc = connect_js(n, err, errlen);
    if (rc < 0) {
        destroy(n);
        return rc;
    }
    *out = n;
    return 0;
}

static int refused(client_nats *n, natsStatus s, const char *subject)
{
    char dur[32];
    recd_format_duration_ms(n->opt.ack_timeout_ms, dur, sizeof dur);
    switch (s) {
    case NATS_TIMEOUT:
        wire_why(n->why, sizeof n->why,
                 "publishing to %s: %u publishes waited more than %s for their acks (is the "
                 "server reachable?)",
                 subject, n->opt.max_in_flight, dur);
        return n->broken = -ETIMEDOUT;
    case NATS_INSUFFICIENT_BUFFER:
        wire_why(n->why, sizeof n->why,
                 "publishing to %s: the server is unreachable and the %llu bytes kept meanwhile "
                 "are used up",
                 subject, (unsigned long long)n->opt.buffer_bytes);
        return n->broken = -ENOBUFS;
    default:
        wire_why(n->why, sizeof n->why, "publishing to %s: %s (%s)", subject,
                 nats.natsStatus_GetText(s), nats.nats_GetLastError(NULL));
        return n->broken = s == NATS_CONNECTION_CLOSED ? -ENOTCONN : -EIO;
    }
}

int client_nats_publish(client_nats *n, const recd_msg *m)
{
    if (n->broken)
        return n->broken;
    if (client_nats_lost(n)) /* JetStream refused an earlier message: the session has a gap */
        return n->broken = -EIO;
    char subject[RECD_FLEET_SUBJECT_MAX];
    int rc = recd_fleet_subject(n->url.prefix, m->session, strnlen(m->session, sizeof m->session),
                                n->opt.partitions, subject, sizeof subject);
    if (rc < 0)
        return rc;
    recd_buf_reset(&n->frame);
    if ((rc = wire_binary_encode(m, n->max_frame, false, true, &n->frame)) < 0)
        return rc;
    if (n->frame.len > INT_MAX)
        return -EMSGSIZE;
    natsStatus s = nats.js_PublishAsync(n->js, subject, n->frame.data, (int)n->frame.len, NULL);
    if (s == NATS_MAX_PAYLOAD)
        return -EMSGSIZE; /* this message only: larger than the server takes */
    if (s != NATS_OK)
        return refused(n, s, subject);
    n->bytes += n->frame.len;
    return 0;
}

int client_nats_flush(client_nats *n)
{
    jsPubOptions po;
    nats.jsPubOptions_Init(&po);
    po.MaxWait = (int64_t)n->opt.ack_timeout_ms;
    natsStatus s = nats.js_PublishAsyncComplete(n->js, &po);
    if (s != NATS_OK) { /* still unconfirmed after the wait: each one counts as lost */
        natsMsgList pending = {0};
        if (nats.js_PublishAsyncGetPendingList(&pending, n->js) == NATS_OK) {
            char dur[32], reason[96];
            recd_format_duration_ms(n->opt.ack_timeout_ms, dur, sizeof dur);
            wire_why(reason, sizeof reason, "no ack within %s (%s)", dur,
                     nats.natsStatus_GetText(s));
            count_lost(n, (uint64_t)pending.Count, reason, "");
            nats.natsMsgList_Destroy(&pending);
        }
    }
    if (n->broken)
        return n->broken;
    return client_nats_lost(n) ? (n->broken = -EIO) : 0;
}

int client_nats_close(client_nats *n, char *err, size_t errlen)
{
    if (!n)
        return 0;
    int rc = client_nats_flush(n);
    uint64_t lost = client_nats_lost(n);
    if (lost)
        wire_why(err, errlen, "%s%s%llu messages were not confirmed by JetStream (first: %s)",
                 n->why, n->why[0] ? "; " : "", (unsigned long long)lost, n->first_lost);
    else if (rc < 0)
        wire_why(err, errlen, "%s", n->why[0] ? n->why : recd_strerror(rc));
    destroy(n);
    return rc;
}

#endif
