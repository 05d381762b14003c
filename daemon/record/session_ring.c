/* SPDX-License-Identifier: MIT */
/* Instant replay for every format that has a ring_save hook: a ring session's entries (bytes at a
 * session time, put by its format) are kept in memory instead of a file, trimmed to ring.window
 * by time and bounded by ring.session_memory and, over every ring, ring.process_memory. What a
 * bound lets go before the window is counted (recd_samples_dropped_total, reason
 * ring_*_memory) and logged once per ring and bound. A save (the wire message, POST
 * /sessions/KEY/save or a sample's save flag) has the format write the entries of the asked last
 * milliseconds as one file that stands alone. Each entry is one allocation, its cost its bytes and
 * its bookkeeping; a ring reserves room for its entries of the bounds in doublings (counted in
 * recd_ring_bytes), so rings that started first keep their room. */
#include "session_ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "support/clock.h"
#include "support/log.h"

#define ENTRY_COST SESSION_RING_ENTRY_COST
#define RING_FIRST_BYTES 4096 /* a ring's first reservation (doubled until an entry fits) */

struct session_ring {
    session_ring_entry *head, *tail; /* oldest, newest */
    uint64_t bytes;                  /* ENTRY_COST of every entry */
    uint64_t cap; /* what it reserved of the bounds (counted in recd_ring_bytes): bytes fit in it */
    uint8_t warned; /* memory_drop logged: 1 the session bound, 2 the process bound */
};

/* Why an entry goes before ring.window. */
typedef enum ring_bound {
    RING_SESSION_BOUND, /* ring.session_memory */
    RING_PROCESS_BOUND, /* ring.process_memory, or malloc failed */
} ring_bound;

int session_ring_start(recd_session *s)
{
    session_ring *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    s->ring = r;
    s->env->ring_sessions++;
    return 0;
}

/* The oldest entry leaves: the format keeps what a later save needs of it. */
static void drop_oldest(recd_session *s, session_ring *r)
{
    session_ring_entry *e = r->head;
    if (s->ops->ring_dropped)
        s->ops->ring_dropped(s, e);
    r->head = e->next;
    if (!r->head)
        r->tail = NULL;
    r->bytes -= ENTRY_COST(e->len);
    free(e);
}

void session_ring_free(recd_session *s)
{
    session_ring *r = s->ring;
    if (!r)
        return;
    while (r->head) {
        session_ring_entry *e = r->head;
        r->head = e->next;
        free(e);
    }
    s->env->ring_bytes -= r->cap < s->env->ring_bytes ? r->cap : s->env->ring_bytes;
    s->env->ring_sessions--;
    free(r);
    s->ring = NULL;
}

/* An entry let go before ring.window because of a memory bound: counted, and logged once per
 * ring and bound. refused: the new entry itself (the ring holds nothing to let go). */
static void memory_drop(recd_session *s, session_ring *r, ring_bound why, bool refused,
                        uint32_t samples)
{
    bool session = why == RING_SESSION_BOUND;
    recd_m_drop reason = session ? RECD_M_DROP_RING_SESSION_MEMORY : RECD_M_DROP_RING_PROCESS_MEMORY;
    recd_metric_add(s->env->metrics->samples_dropped_total, reason, samples);
    session_count_drop(s, reason, samples);
    uint8_t bit = session ? 1 : 2;
    if (r->warned & bit)
        return;
    r->warned |= bit;
    const char *what = refused ? "its ring holds nothing yet, so its new samples are dropped"
                               : "its oldest samples go before ring.window";
    if (session)
        log_info("session '%s': its ring is full at ring.session_memory (%llu bytes): %s; "
                 "counted in recd_samples_dropped_total",
                 s->key, (unsigned long long)r->bytes, what);
    else
        log_warn("session '%s': every ring together is at ring.process_memory, or out of memory: "
                 "%s; counted in recd_samples_dropped_total",
                 s->key, what);
}

/* Reserves more of the memory bounds for r, so that an entry of cost fits beside what it holds:
 * doubling (from RING_FIRST_BYTES), never past ring.session_memory, and only into
 * what is left of ring.process_memory. False, with the bound that stops it, when it cannot. */
static bool grow(recd_session *s, session_ring *r, uint64_t cost, ring_bound *why)
{
    const recd_config *cfg = s->env->cfg;
    uint64_t need = r->bytes + cost;
    uint64_t want = r->cap ? r->cap * 2 : RING_FIRST_BYTES;
    while (want < need)
        want *= 2;
    if (want > cfg->ring.session_bytes)
        want = cfg->ring.session_bytes;
    if (want < need) {
        *why = RING_SESSION_BOUND;
        return false;
    }
    uint64_t used = s->env->ring_bytes, bound = cfg->ring.process_bytes;
    uint64_t room = used < bound ? bound - used : 0;
    if (want - r->cap > room)
        want = r->cap + room;
    if (want < need) {
        *why = RING_PROCESS_BOUND;
        return false;
    }
    s->env->ring_bytes += want - r->cap;
    r->cap = want;
    return true;
}

/* After a reload lowered a memory bound: the ring being written gives back what is over it, its
 * oldest entries first (counted). An idle ring keeps its reservation until its next entry or its
 * session's end. */
static void fit(recd_session *s, session_ring *r)
{
    const recd_config *cfg = s->env->cfg;
    if (r->cap <= cfg->ring.session_bytes && s->env->ring_bytes <= cfg->ring.process_bytes)
        return;
    uint64_t cap = r->cap < cfg->ring.session_bytes ? r->cap : cfg->ring.session_bytes;
    ring_bound why = RING_SESSION_BOUND;
    uint64_t total = s->env->ring_bytes - (r->cap - cap);
    if (total > cfg->ring.process_bytes) {
        uint64_t over = total - cfg->ring.process_bytes;
        cap = over < cap ? cap - over : 0;
        why = RING_PROCESS_BOUND;
    }
    while (r->bytes > cap && r->head) {
        memory_drop(s, r, why, false, r->head->samples);
        drop_oldest(s, r);
    }
    s->env->ring_bytes -= r->cap - cap;
    r->cap = cap;
}

/* Lets the oldest entries go until one of cost fits the ring's reservation, grown as the bounds
 * allow. False when it cannot fit with the ring empty: the new entry is dropped, counted. */
static bool make_room(recd_session *s, session_ring *r, uint64_t cost, uint32_t samples)
{
    fit(s, r);
    ring_bound why;
    while (r->bytes + cost > r->cap && !grow(s, r, cost, &why)) {
        memory_drop(s, r, why, !r->head, r->head ? r->head->samples : samples);
        if (!r->head)
            return false;
        drop_oldest(s, r);
    }
    return true;
}

uint8_t *session_ring_add(recd_session *s, uint64_t t, size_t len, uint32_t samples, int *rc)
{
    session_ring *r = s->ring;
    /* Entries out of the window go first (times never decrease), so that the memory bounds only
     * take what the window would have kept. */
    uint64_t window = s->env->cfg->ring.window_ms;
    while (r->head && t >= r->head->time_ms && t - r->head->time_ms > window)
        drop_oldest(s, r);
    uint64_t cost = ENTRY_COST(len);
    if (len > UINT32_MAX || !make_room(s, r, cost, samples)) {
        *rc = 1;
        return NULL;
    }
    session_ring_entry *e = malloc(sizeof *e + len);
    while (!e && r->head) { /* out of memory: the oldest makes room, counted as the process bound */
        memory_drop(s, r, RING_PROCESS_BOUND, false, r->head->samples);
        drop_oldest(s, r);
        e = malloc(sizeof *e + len);
    }
    if (!e) {
        *rc = -ENOMEM;
        return NULL;
    }
    e->next = NULL;
    e->time_ms = t;
    e->len = (uint32_t)len;
    e->samples = samples;
    if (r->tail)
        r->tail->next = e;
    else
        r->head = e;
    r->tail = e;
    r->bytes += cost;
    *rc = 0;
    return e->data;
}

const session_ring_entry *session_ring_from(const recd_session *s, uint64_t last_ms,
                                            uint64_t *newest_ms)
{
    const session_ring *r = s->ring;
    if (!r || !r->tail)
        return NULL;
    uint64_t newest = r->tail->time_ms;
    uint64_t from = newest > last_ms ? newest - last_ms : 0;
    const session_ring_entry *e = r->head;
    while (e->time_ms < from) /* times never decrease: the window is the tail */
        e = e->next;
    if (newest_ms)
        *newest_ms = newest;
    return e;
}

int session_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                      size_t whylen)
{
    if (!s->ring || !s->ops->ring_save) {
        snprintf(why, whylen, "save of session '%s': it was not opened with ring: true (and "
                              "ring.all is off)", s->key);
        return -EBADMSG;
    }
    int rc = s->ops->ring_save(s, last_ms, label, why, whylen);
    if (rc == 0)
        recd_metric_add(s->env->metrics->ring_saves, 0, 1);
    return rc;
}

void session_ring_save_flagged(recd_session *s)
{
    char label[RECD_SESSION_KEY_MAX + 1], why[300];
    snprintf(label, sizeof label, "replay-%lld", (long long)recd_epoch_ms());
    uint64_t window = s->env->cfg->ring.window_ms;
    int rc = session_ring_save(s, window > UINT32_MAX ? UINT32_MAX : (uint32_t)window, label, why,
                               sizeof why);
    if (rc < 0)
        log_warn("session '%s': a sample asked for a save: %s", s->key,
                 rc == -EBADMSG ? why : recd_strerror(rc));
}

int session_ring_name_part(recd_session *s, const char *label)
{
    char rel[RECD_PATH_MAX];
    const char *name = s->part->name;
    size_t dir, stem = session_name_split(name, &dir);
    int n = snprintf(rel, sizeof rel, "%.*s%s%s", (int)dir, name, label, name + stem);
    if (n < 0 || (size_t)n >= sizeof rel)
        return -ENAMETOOLONG;
    return session_rename_part(s, rel);
}
