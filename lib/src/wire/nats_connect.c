/* SPDX-License-Identifier: MIT */
/* recd/nats_connect.h: the nats:// URL's user part and connection options, and the connect
 * through libnats (loaded with dlopen on the first one), for the publisher and the daemon alike. */
#include "recd/nats_connect.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "wire/wire_internal.h"

#define URL_MAX 1024u

enum { OPT_TLS_CA, OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_NAME, OPT_CREDS, OPT_NKEY, OPT_COUNT };
static const char *const option_names[OPT_COUNT] = {"tls_ca",   "tls_cert", "tls_key",
                                                    "tls_name", "creds",    "nkey"};

static char *option_field(recd_nats_auth *a, int which, size_t *cap)
{
    *cap = RECD_NATS_PATH_MAX;
    switch (which) {
    case OPT_TLS_CA:
        return a->tls_ca;
    case OPT_TLS_CERT:
        return a->tls_cert;
    case OPT_TLS_KEY:
        return a->tls_key;
    case OPT_TLS_NAME:
        *cap = RECD_NATS_NAME_MAX;
        return a->tls_name;
    case OPT_CREDS:
        return a->creds;
    default:
        return a->nkey;
    }
}

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

int recd_nats_percent_decode(const char *src, size_t len, char *out, size_t cap)
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

/* The user part of any "scheme://USERINFO@host..." URL: where it starts and the '@' after it. */
static const char *any_userinfo_end(const char *url, const char **start)
{
    const char *sep = strstr(url, "://");
    if (!sep)
        return NULL;
    *start = sep + 3;
    const char *at = NULL;
    for (const char *c = *start; *c && *c != '/' && *c != '?'; c++)
        if (*c == '@')
            at = c;
    return at;
}

/* A query value that is a secret: a token or password, or an nkey given as a seed rather than as
 * the path of a seed file. */
static bool secret_option(const char *key, size_t klen, const char *value, size_t vlen)
{
    static const char *const secrets[] = {"token", "password", "pass", "secret"};
    for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
        if (strlen(secrets[i]) == klen && memcmp(secrets[i], key, klen) == 0)
            return true;
    return klen == 4 && memcmp(key, "nkey", 4) == 0 && !memchr(value, '/', vlen);
}

static void put(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
    while (len-- && *n + 1 < cap)
        out[(*n)++] = *s++;
    out[*n] = '\0';
}

void recd_nats_redacted(const char *url, char *out, size_t cap)
{
    size_t n = 0, len = strnlen(url, 200);
    const char *start = NULL, *at = any_userinfo_end(url, &start), *q = memchr(url, '?', len);
    if (!cap)
        return;
    out[0] = '\0';
    if (at && at < url + len) {
        put(out, cap, &n, url, (size_t)(start - url));
        put(out, cap, &n, "***", 3);
    }
    const char *from = at && at < url + len ? at : url, *end = q ? q + 1 : url + len;
    put(out, cap, &n, from, (size_t)(end - from));
    while (q && end < url + len) { /* each KEY=VALUE of the query, a secret's VALUE as *** */
        const char *amp = memchr(end, '&', (size_t)(url + len - end));
        const char *stop = amp ? amp : url + len, *eq = memchr(end, '=', (size_t)(stop - end));
        if (eq && secret_option(end, (size_t)(eq - end), eq + 1, (size_t)(stop - eq - 1))) {
            put(out, cap, &n, end, (size_t)(eq + 1 - end));
            put(out, cap, &n, "***", 3);
        } else {
            put(out, cap, &n, end, (size_t)(stop - end));
        }
        if (amp)
            put(out, cap, &n, "&", 1);
        end = amp ? amp + 1 : url + len;
    }
}

void recd_nats_server_url(const recd_fleet_url *fu, char *out, size_t cap)
{
    snprintf(out, cap, strchr(fu->host, ':') ? "nats://[%s]:%u" : "nats://%s:%u", fu->host,
             fu->port);
}

/* Moves "USER:PASSWORD@" or "TOKEN@" out of base into a. */
static int take_userinfo(char *base, recd_nats_auth *a, char *err, size_t errlen)
{
    char *at = (char *)userinfo_end(base), *info = base + 7;
    if (!at)
        return 0;
    size_t len = (size_t)(at - info);
    const char *colon = memchr(info, ':', len);
    size_t name_len = colon ? (size_t)(colon - info) : len;
    if (name_len == 0) {
        recd_why(err, errlen, "the user (or token) before '@' is empty");
        return -EINVAL;
    }
    int rc = recd_nats_percent_decode(info, name_len, colon ? a->user : a->token,
                                      RECD_NATS_SECRET_MAX);
    if (rc == 0 && colon)
        rc = recd_nats_percent_decode(colon + 1, len - name_len - 1, a->password,
                                      RECD_NATS_SECRET_MAX);
    if (rc < 0) {
        recd_why(err, errlen, "the %s before '@' is longer than %u bytes or holds %%00",
                 colon ? "user or password" : "token", RECD_NATS_SECRET_MAX - 1);
        return -EINVAL;
    }
    memmove(info, at + 1, strlen(at + 1) + 1);
    return 0;
}

static int option_index(const char *key, size_t klen)
{
    for (int i = 0; i < OPT_COUNT; i++)
        if (strlen(option_names[i]) == klen && memcmp(option_names[i], key, klen) == 0)
            return i;
    return -1;
}

/* A connection option's value: a path (or tls_name), percent-encoded in the URL. */
static int take_value(int which, const char *raw, size_t vlen, recd_nats_auth *a, char *err,
                      size_t errlen)
{
    size_t cap;
    char *field = option_field(a, which, &cap);
    int rc = vlen ? recd_nats_percent_decode(raw, vlen, field, cap) : -EINVAL;
    if (rc < 0)
        recd_why(err, errlen, "%s=%.*s: expected %s of 1..%u bytes", option_names[which],
                 (int)(vlen > 80 ? 80 : vlen), raw,
                 which == OPT_TLS_NAME ? "a host name" : "a file path", (unsigned)cap - 1);
    return rc < 0 ? -EINVAL : 0;
}

/* Query options: the same key twice is refused, whoever takes it. */
typedef struct query_state {
    recd_nats_auth *auth;
    recd_nats_option_fn more;
    void *ctx;
    const char *more_names;
    const char *query; /* after '?' */
} query_state;

/* An earlier option of the query has this key (it was taken: a known one). */
static bool given_before(const query_state *q, const char *p, size_t klen)
{
    for (const char *o = q->query; o < p;) {
        const char *end = strchr(o, '&');
        size_t olen = (size_t)(end - o); /* o < p: an '&' follows */
        const char *eq = memchr(o, '=', olen);
        size_t oklen = eq ? (size_t)(eq - o) : olen;
        if (oklen == klen && memcmp(o, p, klen) == 0)
            return true;
        o = end + 1;
    }
    return false;
}

/* One query option KEY=VALUE (p, len): ours into auth, any other through more. */
static int take_option(const query_state *q, const char *p, size_t len, char *err, size_t errlen)
{
    const char *eq = memchr(p, '=', len);
    size_t klen = eq ? (size_t)(eq - p) : len;
    const char *raw = eq ? eq + 1 : p + len;
    size_t vlen = eq ? len - klen - 1 : 0;
    if (given_before(q, p, klen)) {
        recd_why(err, errlen, "%.*s is given twice", (int)klen, p);
        return -EINVAL;
    }
    int which = option_index(p, klen);
    if (which >= 0)
        return take_value(which, raw, vlen, q->auth, err, errlen);
    int rc = q->more ? q->more(q->ctx, p, klen, raw, vlen, err, errlen) : 0;
    if (rc == 0)
        recd_why(err, errlen, "unknown option '%.*s' (%s" RECD_NATS_OPTION_NAMES ")",
                 (int)(klen > 40 ? 40 : klen), p, q->more_names ? q->more_names : "");
    return rc > 0 ? 0 : -EINVAL;
}

int recd_nats_auth_check(const recd_nats_auth *a, char *err, size_t errlen)
{
    const char *given[4];
    size_t n = 0;
    if (a->creds[0])
        given[n++] = "creds";
    if (a->nkey[0])
        given[n++] = "nkey";
    if (a->user[0])
        given[n++] = "USER:PASSWORD@";
    if (a->token[0])
        given[n++] = "TOKEN@";
    if (n > 1) {
        recd_why(err, errlen, "credentials: give one of %s, %s%s%s, not several", given[0],
                 given[1], n > 2 ? ", " : "", n > 2 ? given[2] : "");
        return -EINVAL;
    }
    return 0;
}

int recd_nats_url_parse(const char *url, char *base, size_t base_cap, recd_nats_auth *auth,
                        recd_nats_option_fn more, void *ctx, const char *more_names, char *err,
                        size_t errlen)
{
    memset(auth, 0, sizeof *auth);
    const char *qmark = strchr(url, '?');
    size_t n = qmark ? (size_t)(qmark - url) : strlen(url);
    if (n >= base_cap) {
        recd_why(err, errlen, "the URL is longer than %lu bytes", (unsigned long)base_cap - 1);
        return -EINVAL;
    }
    memcpy(base, url, n);
    base[n] = '\0';
    if (take_userinfo(base, auth, err, errlen) < 0)
        return -EINVAL;
    query_state q = {auth, more, ctx, more_names, qmark ? qmark + 1 : NULL};
    for (const char *p = q.query; p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (take_option(&q, p, len, err, errlen) < 0)
            return -EINVAL;
        p = amp ? amp + 1 : NULL;
    }
    if (auth->tls_key[0] && !auth->tls_cert[0]) {
        recd_why(err, errlen, "tls_key needs tls_cert (the client certificate it belongs to)");
        return -EINVAL;
    }
    return recd_nats_auth_check(auth, err, errlen);
}

int recd_nats_url_split(const char *url, recd_fleet_url *fu, recd_nats_auth *auth, char *err,
                        size_t errlen)
{
    char base[URL_MAX], why[300], shown[220];
    if (recd_nats_url_parse(url, base, sizeof base, auth, NULL, NULL, NULL, why, sizeof why) < 0) {
        recd_nats_redacted(url, shown, sizeof shown);
        recd_why(err, errlen, "'%s': %s", shown, why);
        return -EINVAL;
    }
    return recd_fleet_url_parse(base, fu, err, errlen);
}

#ifdef RECD_HAVE_NATS

#include "base/dl_table.h"
#include "wire/nats_nkey.h"

#define SIGNED_CONNECT_TRIES 4 /* four refusals by libnats' fault are 1 in 2^32 */

/* libnats is opened by the first connect (base/dl_table.h): programs that never connect do not
 * map it, nor the libssl and libcrypto it pulls in. recd links it: there this finds it loaded. */
#define CONNECT_FUNCTIONS(X)                                                                       \
    X(natsConnection_Connect) X(natsOptions_Create) X(natsOptions_Destroy)                         \
    X(natsOptions_LoadCATrustedCertificates) X(natsOptions_LoadCertificatesChain)                  \
    X(natsOptions_SetClosedCB) X(natsOptions_SetDisconnectedCB) X(natsOptions_SetExpectedHostname) \
    X(natsOptions_SetMaxReconnect) X(natsOptions_SetNKeyFromSeed)                                  \
    X(natsOptions_SetReconnectBufSize) X(natsOptions_SetReconnectWait)                             \
    X(natsOptions_SetReconnectedCB) X(natsOptions_SetSecure) X(natsOptions_SetTimeout)             \
    X(natsOptions_SetToken) X(natsOptions_SetURL) X(natsOptions_SetUserCredentialsFromFiles)       \
    X(natsOptions_SetUserInfo) X(natsStatus_GetText) X(nats_GetLastError)
static struct {
    CONNECT_FUNCTIONS(DL_POINTER)
} nats;
#define CONNECT_SYMBOL(fn) DL_SYMBOL(nats, fn)
static const dl_symbol connect_symbols[] = {CONNECT_FUNCTIONS(CONNECT_SYMBOL)};
static dl_library libnats = DL_LIBRARY("libnats", RECD_NATS_SONAME, RECD_NATS_PACKAGE,
                                       "nats:// URLs", connect_symbols);

int recd_nats_load(char *err, size_t errlen) { return recd__dl_load(&libnats, err, errlen); }

/* Each file option must be a readable file: said here, with its name, rather than as a
 * connection error. */
static int check_files(const recd_nats_auth *a, char *err, size_t errlen)
{
    static const int files[] = {OPT_TLS_CA, OPT_TLS_CERT, OPT_TLS_KEY, OPT_CREDS, OPT_NKEY};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t cap;
        const char *path = option_field((recd_nats_auth *)a, files[i], &cap);
        if (!path[0])
            continue;
        FILE *f = fopen(path, "rb");
        if (!f) {
            recd_why(err, errlen, "%s %.200s: %s", option_names[files[i]], path, strerror(errno));
            return -EINVAL;
        }
        fclose(f);
    }
    return 0;
}

static natsStatus set_tls(natsOptions *no, const recd_nats_auth *a, const char **what,
                          const char **path)
{
    natsStatus s = NATS_OK;
    if (a->tls_ca[0] || a->tls_cert[0]) /* TLS or nothing: libnats refuses a server without */
        s = nats.natsOptions_SetSecure(no, true);
    if (s == NATS_OK && a->tls_ca[0]) {
        *what = "tls_ca", *path = a->tls_ca;
        s = nats.natsOptions_LoadCATrustedCertificates(no, a->tls_ca);
    }
    if (s == NATS_OK && a->tls_cert[0]) { /* without tls_key, the key is in the same PEM file */
        *what = "tls_cert", *path = a->tls_cert;
        s = nats.natsOptions_LoadCertificatesChain(no, a->tls_cert,
                                                   a->tls_key[0] ? a->tls_key : a->tls_cert);
    }
    if (s == NATS_OK && a->tls_name[0]) {
        *what = "tls_name", *path = "";
        s = nats.natsOptions_SetExpectedHostname(no, a->tls_name);
    }
    return s;
}

/* TLS and credentials. err names the option (and file) that did not load. */
static natsStatus set_security(natsOptions *no, const recd_nats_auth *a, char *err, size_t errlen)
{
    const char *what = "TLS", *path = "";
    natsStatus s = set_tls(no, a, &what, &path);
    if (s == NATS_OK && a->creds[0]) {
        what = "creds", path = a->creds;
        s = nats.natsOptions_SetUserCredentialsFromFiles(no, a->creds, NULL);
    }
    if (s == NATS_OK && a->nkey[0]) {
        char pub[NATS_NKEY_PUBLIC_LEN + 8];
        what = "nkey", path = a->nkey;
        if (nats_nkey_public_of_seed_file(a->nkey, pub, sizeof pub, err, errlen) < 0)
            return NATS_INVALID_ARG;
        s = nats.natsOptions_SetNKeyFromSeed(no, pub, a->nkey);
    }
    if (s == NATS_OK && a->user[0]) {
        what = "USER:PASSWORD@", path = "";
        s = nats.natsOptions_SetUserInfo(no, a->user, a->password);
    }
    if (s == NATS_OK && a->token[0]) {
        what = "TOKEN@", path = "";
        s = nats.natsOptions_SetToken(no, a->token);
    }
    if (s != NATS_OK)
        recd_why(err, errlen, "%s%s%.200s: %s (%s)", what, path[0] ? " " : "", path,
                 nats.natsStatus_GetText(s), nats.nats_GetLastError(NULL));
    return s;
}

static natsStatus set_tuning(natsOptions *o, const recd_nats_tuning *t)
{
    natsStatus s = NATS_OK;
    if (t->reconnect_buf) /* what is published while reconnecting waits here, up to this size */
        s = nats.natsOptions_SetReconnectBufSize(o, (int)t->reconnect_buf);
    if (s == NATS_OK && t->max_reconnect)
        s = nats.natsOptions_SetMaxReconnect(o, t->max_reconnect);
    if (s == NATS_OK && t->reconnect_wait_ms)
        s = nats.natsOptions_SetReconnectWait(o, t->reconnect_wait_ms);
    if (s == NATS_OK && t->timeout_ms)
        s = nats.natsOptions_SetTimeout(o, t->timeout_ms);
    if (s == NATS_OK && t->on_disconnected)
        s = nats.natsOptions_SetDisconnectedCB(o, t->on_disconnected, t->closure);
    if (s == NATS_OK && t->on_reconnected)
        s = nats.natsOptions_SetReconnectedCB(o, t->on_reconnected, t->closure);
    if (s == NATS_OK && t->on_closed)
        s = nats.natsOptions_SetClosedCB(o, t->on_closed, t->closure);
    return s;
}

/* A hint for a failed TLS connection: what the server was checked against, what it may want. */
static const char *tls_hint(const recd_nats_auth *a, natsStatus s, char *buf, size_t cap)
{
    if (!a->tls_ca[0] && !a->tls_cert[0])
        return "";
    if (s == NATS_SECURE_CONNECTION_WANTED)
        snprintf(buf, cap, "; TLS was asked for (tls_ca, tls_cert) and the server offers none: "
                           "nothing is sent in clear text");
    else if (s == NATS_SSL_ERROR && a->tls_ca[0])
        snprintf(buf, cap, "; checked against tls_ca %.200s", a->tls_ca);
    else if (!a->tls_cert[0])
        snprintf(buf, cap, "; does the server want a client certificate? (tls_cert, tls_key)");
    else
        return "";
    return buf;
}

/* libnats 3.4.1 sends no signature when the nonce's signature starts with a zero byte (its base64
 * encoder takes that for an empty string): 1 connect in 256 with nkey or creds is refused. A new
 * connection gets a new nonce, so a refusal is retried; a wrong key is refused every time. */
static natsStatus connect_signed(natsConnection **nc, natsOptions *o, const recd_nats_auth *a)
{
    int tries = a->nkey[0] || a->creds[0] ? SIGNED_CONNECT_TRIES : 1;
    natsStatus s;
    do
        s = nats.natsConnection_Connect(nc, o);
    while (s == NATS_CONNECTION_AUTH_FAILED && --tries > 0);
    return s;
}

int recd_nats_connect(natsConnection **nc, const char *server, const recd_nats_auth *auth,
                      const recd_nats_tuning *tuning, natsStatus *status, char *err,
                      size_t errlen)
{
    *nc = NULL;
    *status = NATS_INVALID_ARG;
    int rc = check_files(auth, err, errlen);
    if (rc < 0)
        return rc;
    natsOptions *o = NULL;
    natsStatus s = nats.natsOptions_Create(&o);
    if (s == NATS_OK)
        s = nats.natsOptions_SetURL(o, server);
    if (s == NATS_OK)
        s = set_tuning(o, tuning);
    if (s == NATS_OK && set_security(o, auth, err, errlen) != NATS_OK) {
        nats.natsOptions_Destroy(o);
        return -EINVAL;
    }
    if (s == NATS_OK)
        s = connect_signed(nc, o, auth);
    nats.natsOptions_Destroy(o);
    *status = s;
    if (s == NATS_OK)
        return 0;
    const char *last = nats.nats_GetLastError(NULL);
    char hint[260];
    recd_why(err, errlen, "%s%s%s%s%s", nats.natsStatus_GetText(s), tls_hint(auth, s, hint, sizeof hint),
             last && *last ? " (" : "", last && *last ? last : "", last && *last ? ")" : "");
    return -ECONNREFUSED;
}

#endif
