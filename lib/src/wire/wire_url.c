/* SPDX-License-Identifier: MIT */
/* Transport URLs: tcp://HOST:PORT, udp://HOST:PORT, unix:///path, [IPv6] hosts and the optional
 * ?encoding= query, parsed strictly so a typo is an error rather than a surprise. */
#include <errno.h>
#include <string.h>

#include "wire/wire_internal.h"

static bool host_char(char c, bool bracketed)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
        c == '-' || c == '_')
        return true;
    return bracketed && (c == ':' || c == '%');
}

static int parse_port(const char *s, size_t n, uint16_t *port, char *err, size_t errlen)
{
    unsigned long v = 0;
    if (n == 0 || n > 5) {
        recd_why(err, errlen, "the port must be a number from 0 to 65535");
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            recd_why(err, errlen, "the port must be a number from 0 to 65535");
            return -EINVAL;
        }
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > 65535) {
        recd_why(err, errlen, "the port must be a number from 0 to 65535, not %lu", v);
        return -EINVAL;
    }
    *port = (uint16_t)v;
    return 0;
}

static int parse_host_port(const char *s, size_t n, recd_wire_url *u, char *err, size_t errlen)
{
    const char *host = s, *colon;
    size_t hlen;
    bool bracketed = n && s[0] == '[';
    if (bracketed) {
        const char *close = memchr(s, ']', n);
        if (!close) {
            recd_why(err, errlen, "missing ']' after an IPv6 address");
            return -EINVAL;
        }
        host = s + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
        if (colon >= s + n || *colon != ':') {
            recd_why(err, errlen, "expected ':PORT' after ']'");
            return -EINVAL;
        }
    } else {
        colon = NULL;
        for (size_t i = n; i > 0; i--)
            if (s[i - 1] == ':') {
                colon = s + i - 1;
                break;
            }
        if (!colon) {
            recd_why(err, errlen, "missing ':PORT'");
            return -EINVAL;
        }
        hlen = (size_t)(colon - s);
    }
    if (hlen == 0 || hlen > RECD_WIRE_HOST_MAX) {
        recd_why(err, errlen, "the host must be 1..%d characters", RECD_WIRE_HOST_MAX);
        return -EINVAL;
    }
    for (size_t i = 0; i < hlen; i++) {
        if (!host_char(host[i], bracketed)) {
            if (host[i] == ':')
                recd_why(err, errlen, "write IPv6 addresses in brackets, e.g. [::1]:7070");
            else
                recd_why(err, errlen, "invalid character in the host");
            return -EINVAL;
        }
    }
    memcpy(u->host, host, hlen);
    u->host[hlen] = 0;
    return parse_port(colon + 1, (size_t)(s + n - (colon + 1)), &u->port, err, errlen);
}

static int parse_query(const char *q, recd_wire_url *u, char *err, size_t errlen)
{
    static const char key[] = "encoding=";
    if (strncmp(q, key, sizeof key - 1) != 0) {
        recd_why(err, errlen, "unknown query: only ?encoding=binary|ndjson|auto is understood");
        return -EINVAL;
    }
    if (recd_wire_encoding_parse(q + sizeof key - 1, &u->encoding) < 0) {
        recd_why(err, errlen, "encoding must be binary, ndjson or auto");
        return -EINVAL;
    }
    return 0;
}

int recd_wire_url_parse(const char *url, recd_wire_url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    if (!url) {
        recd_why(err, errlen, "no URL");
        return -EINVAL;
    }
    static const struct {
        const char *prefix;
        recd_wire_transport t;
    } schemes[] = {{"tcp://", RECD_WIRE_TCP}, {"udp://", RECD_WIRE_UDP}, {"unix://", RECD_WIRE_UNIX}};
    const char *rest = NULL;
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        size_t n = strlen(schemes[i].prefix);
        if (strncmp(url, schemes[i].prefix, n) == 0) {
            u->transport = schemes[i].t;
            rest = url + n;
        }
    }
    if (!rest) {
        recd_why(err, errlen, "the URL must start with tcp://, udp:// or unix://");
        return -EINVAL;
    }
    const char *q = strchr(rest, '?');
    size_t n = q ? (size_t)(q - rest) : strlen(rest);
    int rc = 0;
    if (u->transport == RECD_WIRE_UNIX) {
        if (n == 0 || n > RECD_WIRE_PATH_MAX) {
            recd_why(err, errlen, "the socket path must be 1..%d bytes", RECD_WIRE_PATH_MAX);
            rc = -EINVAL;
        } else {
            memcpy(u->path, rest, n);
            u->path[n] = 0;
        }
    } else {
        rc = parse_host_port(rest, n, u, err, errlen);
    }
    if (rc == 0 && q)
        rc = parse_query(q + 1, u, err, errlen);
    if (rc < 0)
        memset(u, 0, sizeof *u);
    return rc;
}
