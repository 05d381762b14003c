/* SPDX-License-Identifier: MIT */
/* nats:// inputs, the marks of sessions that ended for good ("closed at stream sequence seq"),
 * per partition: a list newest first, walked when marks expire and cut from its tail when over
 * the cap, and an index by key, looked up for every frame while any mark is held. A list walk
 * there made each frame cost as much as the sessions closed within the acknowledgement window,
 * which a publisher that opens and closes sessions controls. */

#ifdef RECD_HAVE_NATS

#include "nats_source.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "record/sessions.h"

#define MARK_BUCKETS_MIN 64u

static size_t bucket_of(const nats_partition *p, const char *key, size_t len)
{
    return session_table_hash(&p->in.sessions->table, key, len) & (p->mark_nbuckets - 1);
}

static closed_mark *find_mark(const nats_partition *p, const char *key, size_t len)
{
    if (!p->mark_nbuckets)
        return NULL;
    for (closed_mark *c = p->mark_buckets[bucket_of(p, key, len)]; c; c = c->hnext)
        if (c->key_len == len && memcmp(c->key, key, len) == 0)
            return c;
    return NULL;
}

/* Twice the buckets when there are as many marks as buckets; a failed grow keeps the old index
 * working with longer chains. */
static void grow_index(nats_partition *p)
{
    size_t n = p->mark_nbuckets ? p->mark_nbuckets * 2 : MARK_BUCKETS_MIN;
    closed_mark **b = calloc(n, sizeof *b);
    if (!b)
        return;
    free(p->mark_buckets);
    p->mark_buckets = b;
    p->mark_nbuckets = n;
    for (closed_mark *c = p->closed; c; c = c->next) {
        size_t k = bucket_of(p, c->key, c->key_len);
        c->hnext = b[k];
        b[k] = c;
    }
}

/* The mark before c in its list, from what points at c. */
static closed_mark *listed_before(const nats_partition *p, closed_mark *c)
{
    if (c->pprev == &p->closed)
        return NULL;
    return (closed_mark *)(void *)((char *)c->pprev - offsetof(closed_mark, next));
}

static void unlink_listed(nats_partition *p, closed_mark *c)
{
    if (p->closed_tail == c)
        p->closed_tail = listed_before(p, c);
    *c->pprev = c->next;
    if (c->next)
        c->next->pprev = c->pprev;
}

static void link_first(nats_partition *p, closed_mark *c)
{
    c->next = p->closed;
    if (c->next)
        c->next->pprev = &c->next;
    else
        p->closed_tail = c;
    c->pprev = &p->closed;
    p->closed = c;
}

static void unindex(nats_partition *p, closed_mark *c)
{
    closed_mark **at = &p->mark_buckets[bucket_of(p, c->key, c->key_len)];
    while (*at && *at != c)
        at = &(*at)->hnext;
    if (*at)
        *at = c->hnext;
    p->nmarks--;
}

void nats_add_mark(nats_partition *p, const char *key, const char *kvkey, uint64_t seq)
{
    closed_mark *c = find_mark(p, key, strlen(key));
    if (!c) {
        if (p->nmarks >= p->mark_nbuckets)
            grow_index(p);
        if (!p->mark_nbuckets || !(c = calloc(1, sizeof *c)))
            return; /* its redelivered open could open it again: nothing worse */
        snprintf(c->key, sizeof c->key, "%s", key);
        c->key_len = strlen(c->key);
        snprintf(c->kvkey, sizeof c->kvkey, "%s", kvkey);
        link_first(p, c);
        size_t k = bucket_of(p, c->key, c->key_len);
        c->hnext = p->mark_buckets[k];
        p->mark_buckets[k] = c;
        p->nmarks++;
    } else if (c != p->closed) { /* closed again: the newest, last to be cut */
        unlink_listed(p, c);
        link_first(p, c);
    }
    if (seq > c->seq)
        c->seq = seq;
}

void nats_forget_mark(nats_partition *p, const char *key)
{
    closed_mark *c = p->closed ? find_mark(p, key, strlen(key)) : NULL;
    if (!c)
        return;
    unindex(p, c);
    unlink_listed(p, c);
    free(c);
}

closed_mark *nats_take_expired_marks(nats_partition *p, uint64_t floor)
{
    closed_mark *expired = NULL;
    for (closed_mark *c = p->closed, *next; c; c = next) {
        next = c->next;
        if (c->seq > floor)
            continue;
        unindex(p, c);
        unlink_listed(p, c);
        c->next = expired;
        expired = c;
    }
    return expired;
}

closed_mark *nats_take_oldest_marks(nats_partition *p, size_t keep)
{
    closed_mark *taken = NULL;
    while (p->nmarks > keep && p->closed_tail) {
        closed_mark *c = p->closed_tail;
        unindex(p, c);
        unlink_listed(p, c);
        c->next = taken;
        taken = c;
    }
    return taken;
}

void nats_free_marks(nats_partition *p)
{
    while (p->closed) {
        closed_mark *next = p->closed->next;
        free(p->closed);
        p->closed = next;
    }
    p->closed_tail = NULL;
    free(p->mark_buckets);
    p->mark_buckets = NULL;
    p->mark_nbuckets = p->nmarks = 0;
}

/* A message of a session that ended for good here or on the previous owner, come again. */
bool nats_after_close(nats_source *src, nats_partition *p, const char *key, size_t len)
{
    const closed_mark *c = p->closed ? find_mark(p, key, len) : NULL;
    if (!c || p->cur_seq > c->seq)
        return false;
    recd_metric_add(src->g->metrics->nats_duplicates_dropped_total, 0, 1);
    return true;
}

#endif
