/* SPDX-License-Identifier: MIT */
/* Socket addresses as text (see peer_name.h), on libuv's uv_ip_name(). */
#include "peer_name.h"

#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <uv.h>

const char *recd_peer_name(const struct sockaddr *addr, const char *prefix, char *buf, size_t cap)
{
    char host[64]; /* INET6_ADDRSTRLEN and then some */
    int family = addr ? addr->sa_family : AF_UNSPEC;
    if ((family != AF_INET && family != AF_INET6) || uv_ip_name(addr, host, sizeof host) != 0) {
        snprintf(buf, cap, "%s?", prefix);
        return buf;
    }
    unsigned port = family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)addr)->sin6_port)
                                       : ntohs(((const struct sockaddr_in *)addr)->sin_port);
    snprintf(buf, cap, family == AF_INET6 ? "%s[%s]:%u" : "%s%s:%u", prefix, host, port);
    return buf;
}
