/* SPDX-License-Identifier: MIT */
/* Socket addresses as text for log lines and listener names: "tcp 127.0.0.1:7070",
 * "udp://[::1]:7070". One function, so every address reads the same. */
#ifndef RECD_DAEMON_PEER_NAME_H
#define RECD_DAEMON_PEER_NAME_H

#include <stddef.h>

struct sockaddr;

/* Writes prefix, then the address as HOST:PORT ([HOST]:PORT for IPv6), or "?" when addr is NULL
 * or not an IP address. Returns buf. */
const char *recd_peer_name(const struct sockaddr *addr, const char *prefix, char *buf, size_t cap);

#endif
