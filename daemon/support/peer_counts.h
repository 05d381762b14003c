/* SPDX-License-Identifier: MIT */
/* Counts per peer, for the fair shares (limits.*_per_peer, limits.peer_buffer): a small hash table
 * of peer -> counts. A peer is an IPv4 address, an IPv6 /64 (an IPv4-mapped IPv6 address is its
 * IPv4 address), or the uid of a Unix socket's client. An entry lives while something holds it
 * (a connection, or a session until it is freed), so the table never holds more entries than
 * there are connections and sessions: it is bounded by limits.max_connections and
 * limits.max_sessions. */
#ifndef RECD_DAEMON_PEER_COUNTS_H
#define RECD_DAEMON_PEER_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

typedef struct peer_key {
    uint8_t family; /* AF_INET, AF_INET6 (a /64) or AF_UNIX (a uid); 0: unknown, never counted */
    uint8_t addr[16];
} peer_key;

typedef struct peer_entry {
    struct peer_entry *next;
    peer_key key;
    uint32_t refs;  /* holders: connections, or sessions until they are freed */
    uint32_t open;  /* sessions of it in the session table (open or dormant) */
    uint64_t bytes; /* bytes its sessions hold unwritten */
    uint64_t held;  /* state its sessions keep (live actors...): session_hold() */
} peer_entry;

typedef struct peer_counts {
    peer_entry **buckets; /* allocated with the first entry */
    size_t entries;
} peer_counts;

/* The key of a peer's address (the port is not part of it); family 0 for anything else. */
void peer_key_from_sockaddr(const struct sockaddr *sa, peer_key *key);
/* The key of a Unix socket client: its uid. */
void peer_key_from_uid(uid_t uid, peer_key *key);
bool peer_key_equal(const peer_key *a, const peer_key *b);
/* "127.0.0.2", "2001:db8::/64", "uid 1000", for log lines and error replies. */
const char *peer_key_name(const peer_key *key, char *buf, size_t cap);

/* The entry of key, made if needed, with one more holder; NULL when the key is unknown (family 0)
 * or there is no memory: the caller then goes uncounted. */
peer_entry *peer_counts_ref(peer_counts *pc, const peer_key *key);
/* Drops a holder that peer_counts_ref() added; the entry is freed with its last one. */
void peer_counts_unref(peer_counts *pc, peer_entry *e);
peer_entry *peer_counts_find(const peer_counts *pc, const peer_key *key);

/* Connections (the ingest layer's table, where an entry's holders are its connections). */
/* Adds one connection of key and returns the new count; 0 when it is not counted (no address,
 * or no memory: the per-peer limit is then not applied to it). */
uint32_t peer_counts_add(peer_counts *pc, const peer_key *key);
/* Removes one connection that peer_counts_add() counted. */
void peer_counts_remove(peer_counts *pc, const peer_key *key);
uint32_t peer_counts_get(const peer_counts *pc, const peer_key *key);
void peer_counts_free(peer_counts *pc);

#endif
