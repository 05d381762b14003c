/* SPDX-License-Identifier: MIT */
/* Fleet naming (recd/fleet.h): nats:// URLs, the partition of a session key and its subjects. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/fleet.h"
#include "recd/fleet_subject.h"
#include "recd/message.h"

static int fail(char *err, size_t errlen, const char *what, const char *url)
{
    if (errlen)
        snprintf(err, errlen, "'%.120s': %s", url, what);
    return -EINVAL;
}

static int prefix_ok(const char *p)
{
    if (!*p || *p == '.')
        return 0;
    for (const char *c = p; *c; c++) {
        bool word = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                    *c == '_' || *c == '-';
        if (!word && !(*c == '.' && c[1] && c[1] != '.'))
            return 0;
    }
    return 1;
}

int recd_fleet_url_parse(const char *url, recd_fleet_url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (strncmp(url, "nats://", 7) != 0)
        return fail(err, errlen, "not a nats:// URL", url);
    const char *host = url + 7, *slash = strchr(host, '/');
    if (!slash)
        return fail(err, errlen, "a subject prefix is needed: nats://HOST:PORT/PREFIX", url);
    const char *port = NULL, *host_end = slash;
    if (*host == '[') {
        const char *close = memchr(host, ']', (size_t)(slash - host));
        if (!close)
            return fail(err, errlen, "unclosed '[' in the host", url);
        host++;
        host_end = close;
        if (close + 1 < slash) {
            if (close[1] != ':')
                return fail(err, errlen, "expected ':' after ']'", url);
            port = close + 2;
        }
    } else {
        const char *colon = memchr(host, ':', (size_t)(slash - host));
        if (colon) {
            host_end = colon;
            port = colon + 1;
        }
    }
    size_t hlen = (size_t)(host_end - host);
    if (hlen == 0 || hlen >= sizeof out->host)
        return fail(err, errlen, "the host is empty or too long", url);
    memcpy(out->host, host, hlen);
    out->port = RECD_FLEET_DEFAULT_PORT;
    if (port) {
        char *end;
        if (port == slash)
            return fail(err, errlen, "the port is empty", url);
        unsigned long v = strtoul(port, &end, 10);
        if (end != slash || v == 0 || v > 65535 || *port < '0' || *port > '9')
            return fail(err, errlen, "the port must be 1..65535", url);
        out->port = (uint16_t)v;
    }
    const char *prefix = slash + 1;
    if (strlen(prefix) > RECD_FLEET_PREFIX_MAX)
        return fail(err, errlen, "the subject prefix is longer than 128 bytes", url);
    if (!prefix_ok(prefix))
        return fail(err, errlen,
                    "the subject prefix must be tokens of [A-Za-z0-9_-] joined by '.' (e.g. recd.eu)",
                    url);
    memcpy(out->prefix, prefix, strlen(prefix) + 1);
    return 0;
}

uint32_t recd_fleet_partition(const char *key, size_t key_len, uint32_t partitions)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < key_len; i++) {
        h ^= (uint8_t)key[i];
        h *= 16777619u;
    }
    return partitions ? h % partitions : 0;
}

/* PREFIX.<partition>. and the key's checks shared by both layouts; its length or an error. */
static int subject_head(const char *prefix, const char *key, size_t key_len, uint32_t partitions,
                        char *out, size_t cap)
{
    if (!recd_session_key_valid(key, key_len) || partitions == 0 ||
        partitions > RECD_FLEET_PARTITIONS_MAX)
        return -EINVAL;
    int n = snprintf(out, cap, "%s.%u.", prefix, recd_fleet_partition(key, key_len, partitions));
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : n;
}

int recd_fleet_subject(const char *prefix, const char *key, size_t key_len, uint32_t partitions,
                       char *out, size_t cap)
{
    int n = subject_head(prefix, key, key_len, partitions, out, cap);
    if (n < 0)
        return n;
    if ((size_t)n + 1 >= cap)
        return -ENAMETOOLONG;
    out[n++] = '~'; /* one subject per partition: the key travels in the frames */
    out[n] = '\0';
    return n;
}

int fleet_session_subject(const char *prefix, const char *key, size_t key_len,
                          uint32_t partitions, char *out, size_t cap)
{
    int n = subject_head(prefix, key, key_len, partitions, out, cap);
    if (n < 0)
        return n;
    if ((size_t)n + key_len >= cap)
        return -ENAMETOOLONG;
    for (size_t i = 0; i < key_len; i++) /* a valid key's only byte a subject cannot hold is '.' */
        out[n++] = key[i] == '.' ? '~' : key[i];
    out[n] = '\0';
    return n;
}
