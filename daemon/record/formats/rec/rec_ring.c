/* SPDX-License-Identifier: MIT */
/* Instant replay for .rec sessions: the session's blocks go into a ring in memory instead of a
 * file, trimmed to ring.window by sample time and bounded by ring.session_memory and, over every
 * ring, ring.process_memory. A save message writes the blocks of the asked last milliseconds as
 * one finalized .rec named by its label, rebased to 0, through the writer like any part. */
#include "rec_ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/sessions.h"
#include "support/log.h"

#define RING_FIRST_BLOCKS 64

struct session_ring {
    uint8_t *blocks;  /* cap blocks of block_len bytes, circular; each starts with its session time */
    size_t block_len;
    size_t cap, head, count; /* head: the oldest block */
    uint8_t warned;          /* memory_drop logged: 1 the session bound, 2 the process bound */
};

static uint8_t *at(const session_ring *r, size_t i) /* i-th oldest */
{
    return r->blocks + ((r->head + i) % r->cap) * r->block_len;
}

int session_ring_start(recd_session *s, size_t block_len)
{
    session_ring *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->block_len = block_len;
    rec_state_of(s)->ring = r;
    s->env->ring_sessions++;
    return 0;
}

void session_ring_free(recd_session *s)
{
    rec_state *rs = rec_state_of(s);
    session_ring *r = rs->ring;
    if (!r)
        return;
    uint64_t bytes = (uint64_t)r->cap * r->block_len;
    s->env->ring_bytes -= bytes < s->env->ring_bytes ? bytes : s->env->ring_bytes;
    s->env->ring_sessions--;
    free(r->blocks);
    free(r);
    rs->ring = NULL;
}

/* What a full ring got when it asked for more room. */
typedef enum ring_growth {
    RING_GROWN,
    RING_AT_SESSION_BOUND, /* ring.session_memory: this ring may hold no more */
    RING_AT_PROCESS_BOUND, /* ring.process_memory: every ring together may hold no more */
    RING_NO_MEMORY,        /* malloc failed */
} ring_growth;

/* Doubles the ring, or grows it by what is left of ring.process_memory when that is less, never
 * past ring.session_memory. */
static ring_growth grow(recd_session *s, session_ring *r)
{
    const recd_config *cfg = s->env->cfg;
    size_t max = (size_t)(cfg->ring.session_bytes / r->block_len);
    size_t cap = r->cap ? r->cap * 2 : RING_FIRST_BLOCKS;
    if (cap > max)
        cap = max;
    if (cap <= r->cap)
        return RING_AT_SESSION_BOUND;
    uint64_t used = s->env->ring_bytes, bound = cfg->ring.process_bytes;
    uint64_t room = used < bound ? (bound - used) / r->block_len : 0;
    if (cap - r->cap > room)
        cap = r->cap + (size_t)room;
    if (cap <= r->cap)
        return RING_AT_PROCESS_BOUND;
    uint8_t *b = malloc(cap * r->block_len);
    if (!b)
        return RING_NO_MEMORY;
    for (size_t i = 0; i < r->count; i++)
        memcpy(b + i * r->block_len, at(r, i), r->block_len);
    free(r->blocks);
    s->env->ring_bytes += (uint64_t)(cap - r->cap) * r->block_len;
    r->blocks = b;
    r->cap = cap;
    r->head = 0;
    return RING_GROWN;
}

/* A sample let go before ring.window because of a memory bound: counted, and logged once per
 * ring and bound (an out-of-memory malloc counts under the process bound). */
static void memory_drop(recd_session *s, session_ring *r, ring_growth why, bool refused)
{
    bool session = why == RING_AT_SESSION_BOUND;
    recd_metric_add(s->env->metrics->samples_dropped_total,
                    session ? RECD_M_DROP_RING_SESSION_MEMORY : RECD_M_DROP_RING_PROCESS_MEMORY, 1);
    uint8_t bit = session ? 1 : 2;
    if (r->warned & bit)
        return;
    r->warned |= bit;
    if (session)
        log_info("session '%s': its ring is full at ring.session_memory (%zu samples): its oldest "
                 "samples go before ring.window; counted in recd_samples_dropped_total",
                 s->key, r->cap);
    else
        log_warn("session '%s': %s: %s; counted in recd_samples_dropped_total", s->key,
                 why == RING_NO_MEMORY ? "out of memory for its ring"
                                       : "every ring together is at ring.process_memory",
                 refused ? "its ring holds nothing yet, so its new samples are dropped"
                         : "its oldest samples go before ring.window");
}

/* After a reload lowered a memory bound: the ring being written gives back what is over it, its
 * oldest samples first (counted). An idle ring keeps its memory until its next sample or its
 * session's end. */
static void fit(recd_session *s, session_ring *r)
{
    const recd_config *cfg = s->env->cfg;
    /* Within both bounds, as always but after a reload that lowered one: two compares. */
    if ((uint64_t)r->cap * r->block_len <= cfg->ring.session_bytes &&
        s->env->ring_bytes <= cfg->ring.process_bytes)
        return;
    size_t cap = r->cap, max = (size_t)(cfg->ring.session_bytes / r->block_len);
    ring_growth why = RING_AT_SESSION_BOUND;
    if (cap > max)
        cap = max;
    uint64_t total = s->env->ring_bytes - (uint64_t)(r->cap - cap) * r->block_len;
    if (total > cfg->ring.process_bytes) {
        uint64_t over = (total - cfg->ring.process_bytes + r->block_len - 1) / r->block_len;
        cap = over < cap ? cap - (size_t)over : 0;
        why = RING_AT_PROCESS_BOUND;
    }
    if (cap >= r->cap)
        return;
    uint8_t *b = NULL;
    if (cap && !(b = malloc(cap * r->block_len)))
        return; /* no memory to move into: it shrinks at a later sample */
    for (; r->count > cap; r->count--) {
        memory_drop(s, r, why, false);
        r->head = (r->head + 1) % r->cap;
    }
    for (size_t i = 0; i < r->count; i++)
        memcpy(b + i * r->block_len, at(r, i), r->block_len);
    free(r->blocks);
    s->env->ring_bytes -= (uint64_t)(r->cap - cap) * r->block_len;
    r->blocks = b;
    r->cap = cap;
    r->head = 0;
}

int session_ring_put(recd_session *s, uint32_t t, const uint8_t *fields)
{
    session_ring *r = rec_state_of(s)->ring;
    /* Samples out of the window go first (times never decrease), so that the memory bounds only
     * take what the window would have kept. */
    uint64_t window = s->env->cfg->ring.window_ms;
    while (r->count && t - recd_rec_block_time(at(r, 0)) > window) {
        r->head = (r->head + 1) % r->cap;
        r->count--;
    }
    fit(s, r);
    if (r->count == r->cap) {
        ring_growth g = grow(s, r);
        if (g != RING_GROWN && !r->cap) {
            if (g == RING_NO_MEMORY)
                return -ENOMEM;
            memory_drop(s, r, g, true);
            return 1;
        }
        if (g != RING_GROWN) { /* full: the oldest goes */
            memory_drop(s, r, g, false);
            r->head = (r->head + 1) % r->cap;
            r->count--;
        }
    }
    uint8_t *b = r->blocks + ((r->head + r->count) % r->cap) * r->block_len;
    recd_rec_block_set_time(b, t);
    memcpy(b + 4, fields, r->block_len - 4);
    r->count++;
    return 0;
}

/* The part's name: the path template's, with its file name replaced by the label. */
static int save_name(recd_session *s, const char *label)
{
    char rel[RECD_PATH_MAX];
    const char *name = s->part->name;
    size_t dir;
    session_name_split(name, &dir);
    int n = snprintf(rel, sizeof rel, "%.*s%s.rec", (int)dir, name, label);
    if (n < 0 || (size_t)n >= sizeof rel)
        return -ENAMETOOLONG;
    return session_rename_part(s, rel);
}

int session_ring_save(recd_session *s, uint32_t last_ms, const char *label, uint8_t rec_type,
                      char *why, size_t whylen)
{
    session_ring *r = rec_state_of(s)->ring;
    if (!r->count) {
        snprintf(why, whylen, "save of session '%s': its ring holds no sample yet", s->key);
        return -EBADMSG;
    }
    uint32_t newest = recd_rec_block_time(at(r, r->count - 1));
    uint32_t from = newest > last_ms ? newest - last_ms : 0;
    size_t first = 0;
    while (recd_rec_block_time(at(r, first)) < from) /* times never decrease: the window is the tail */
        first++;
    size_t n = r->count - first;
    uint32_t base = recd_rec_block_time(at(r, first));
    /* The writer works on the session's own queue: the part starts and ends here. */
    int rc = session_start_part(s, s->start_epoch_ms + base, 0);
    if (rc < 0) {
        snprintf(why, whylen, "save of session '%s': cannot name the file: %s", s->key, recd_strerror(rc));
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    if ((rc = save_name(s, label)) < 0) {
        session_end_part(s, NULL, 0);
        if (rc == -ENOMEM)
            return rc;
        snprintf(why, whylen, "save of session '%s': the label makes the path too long", s->key);
        return -EBADMSG;
    }
    uint8_t *out = session_reserve(s, RECD_REC_HEADER_SIZE + n * r->block_len);
    if (!out) {
        session_end_part(s, NULL, 0);
        return -ENOMEM;
    }
    recd_rec_header_encode((recd_rec_type)rec_type, out);
    out += RECD_REC_HEADER_SIZE;
    for (size_t i = 0; i < n; i++, out += r->block_len) {
        const uint8_t *b = at(r, first + i);
        memcpy(out, b, r->block_len);
        recd_rec_block_set_time(out, recd_rec_block_time(b) - base);
    }
    session_tally_add(s, 1, false, 0, 0, true, base);
    session_tally_add(s, n - 1, false, 0, 0, true, newest);
    log_info("session '%s': instant replay '%s' saved: %zu samples, %u ms (%u ms asked)", s->key,
             label, n, newest - base, last_ms);
    session_end_part(s, NULL, 0);
    session_flush(s);
    recd_metric_add(s->env->metrics->ring_saves, 0, 1);
    return 0;
}
