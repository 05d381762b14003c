/* SPDX-License-Identifier: MIT */
/* The session registry: sessions by key in a seeded chained hash table, so hostile keys cannot
 * pile up in one bucket by a hash chosen in advance. Lookups happen on the loop thread only. */
#ifndef RECD_DAEMON_SESSION_TABLE_H
#define RECD_DAEMON_SESSION_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct recd_session recd_session;

typedef struct session_table {
    recd_session **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
    uint64_t k[3]; /* the hash's keys, random per process */
    recd_session *last; /* the last session found: the decoder's format lookup and the dispatch
                           of the same message (and runs of one session's samples) hit it */
} session_table;

/* 0 or -ENOMEM. */
int session_table_init(session_table *t);
void session_table_free(session_table *t); /* frees the buckets, not the sessions */

recd_session *session_table_get(session_table *t, const char *key);
/* The same for a key of len bytes, not NUL-terminated. */
recd_session *session_table_find(session_table *t, const char *key, size_t len);
/* Adds s (its key must not be present). 0 or -ENOMEM. */
int session_table_put(session_table *t, recd_session *s);
void session_table_remove(session_table *t, recd_session *s);
/* The table's keyed hash of a key of len bytes, for other indexes of session keys: random per
 * process, so a sender cannot choose keys that share a bucket. */
uint64_t session_table_hash(const session_table *t, const char *key, size_t len);

#endif
