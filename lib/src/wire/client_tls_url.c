/* SPDX-License-Identifier: MIT */
/* client_tls.h: a tls:// URL's options, parsed strictly (an unknown or repeated option is an
 * error, never ignored), and the tcp:// URL of the socket underneath. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recd/nats_connect.h"
#include "wire/client_tls.h"
#include "wire/wire_internal.h"

#define SCHEME "tls://"
#define OPTION_NAMES "ca, cert, key, servername, encoding"

bool client_tls_url_is(const char *url)
{
    return url && strncmp(url, SCHEME, strlen(SCHEME)) == 0;
}

/* The field an option fills, with its capacity; NULL for encoding (kept in tcp_url). */
static char *option_field(client_tls_url *u, const char *key, size_t klen, size_t *cap,
                          bool *known)
{
    static const char *const names[] = {"ca", "cert", "key", "servername", "encoding"};
    char *fields[] = {u->ca, u->cert, u->key, u->servername, NULL};
    *known = false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == klen && memcmp(names[i], key, klen) == 0) {
            *known = true;
            *cap = i == 3 ? CLIENT_TLS_NAME_MAX : CLIENT_TLS_PATH_MAX;
            return fields[i];
        }
    return NULL;
}

/* One KEY=VALUE of the query; encoding= is appended to tcp_url as is. */
static int take_option(client_tls_url *u, const char *p, size_t len, char *err, size_t errlen)
{
    const char *eq = memchr(p, '=', len);
    size_t klen = eq ? (size_t)(eq - p) : len, vlen = eq ? len - klen - 1 : 0, cap = 0;
    bool known;
    char *field = option_field(u, p, klen, &cap, &known);
    if (!known) {
        recd_why(err, errlen, "unknown option '%.*s' (" OPTION_NAMES ")",
                 (int)(klen > 40 ? 40 : klen), p);
        return -EINVAL;
    }
    if (vlen == 0) {
        recd_why(err, errlen, "%.*s= needs a value", (int)klen, p);
        return -EINVAL;
    }
    if (!field) {
        if (strstr(u->tcp_url, "?encoding=")) {
            recd_why(err, errlen, "encoding is given twice");
            return -EINVAL;
        }
        size_t have = strlen(u->tcp_url);
        int n = snprintf(u->tcp_url + have, sizeof u->tcp_url - have, "?%.*s", (int)len, p);
        return n > 0 && (size_t)n < sizeof u->tcp_url - have ? 0 : -EINVAL;
    }
    if (field[0]) {
        recd_why(err, errlen, "%.*s is given twice", (int)klen, p);
        return -EINVAL;
    }
    if (recd_nats_percent_decode(eq + 1, vlen, field, cap) < 0) {
        recd_why(err, errlen, "%.*s: expected %s of 1..%u bytes", (int)klen, p,
                 cap == CLIENT_TLS_NAME_MAX ? "a host name" : "a file path", (unsigned)cap - 1);
        return -EINVAL;
    }
    return 0;
}

static int check_options(const client_tls_url *u, char *err, size_t errlen)
{
    if (u->key[0] && !u->cert[0]) {
        recd_why(err, errlen, "key= without cert=: the key belongs to a client certificate");
        return -EINVAL;
    }
    for (const char *c = u->servername; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-' || *c == '_' || *c == ':')) {
            recd_why(err, errlen, "servername: invalid character '%c' in a host name", *c);
            return -EINVAL;
        }
    return 0;
}

int client_tls_url_parse(const char *url, client_tls_url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    if (!client_tls_url_is(url)) {
        recd_why(err, errlen, "the URL must start with " SCHEME);
        return -EINVAL;
    }
    const char *rest = url + strlen(SCHEME), *q = strchr(rest, '?');
    size_t hostport = q ? (size_t)(q - rest) : strlen(rest);
    if (hostport + 7 >= sizeof u->tcp_url) {
        recd_why(err, errlen, "the host and port are too long");
        return -EINVAL;
    }
    snprintf(u->tcp_url, sizeof u->tcp_url, "tcp://%.*s", (int)hostport, rest);
    for (const char *p = q ? q + 1 : NULL; p && *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        int rc = len ? take_option(u, p, len, err, errlen) : 0;
        if (rc < 0) {
            memset(u, 0, sizeof *u);
            return rc;
        }
        p = amp ? amp + 1 : NULL;
    }
    int rc = check_options(u, err, errlen);
    if (rc < 0)
        memset(u, 0, sizeof *u);
    return rc;
}
