/* SPDX-License-Identifier: MIT */
/* Live stream connections per peer address, for limits.max_connections_per_peer: a small hash
 * table of address -> count, entries freed when their count falls to 0. */
#ifndef RECD_DAEMON_PEER_COUNTS_H
#define RECD_DAEMON_PEER_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct peer_key {
    uint8_t family; /* AF_INET or AF_INET6; 0: no address (Unix sockets), never counted */
    uint8_t addr[16];
} peer_key;

typedef struct peer_count_entry peer_count_entry;

typedef struct peer_counts {
    peer_count_entry **buckets; /* allocated with the first entry */
} peer_counts;

/* The key of a peer's address (the port is not part of it); family 0 for anything else. */
void peer_key_from_sockaddr(const struct sockaddr *sa, peer_key *key);
bool peer_key_equal(const peer_key *a, const peer_key *b);

/* Adds one connection of key and returns the new count; 0 when it is not counted (no address,
 * or no memory: the per-peer limit is then not applied to it). */
uint32_t peer_counts_add(peer_counts *pc, const peer_key *key);
/* Removes one connection that peer_counts_add() counted. */
void peer_counts_remove(peer_counts *pc, const peer_key *key);
uint32_t peer_counts_get(const peer_counts *pc, const peer_key *key);
void peer_counts_free(peer_counts *pc);

#endif
