/* SPDX-License-Identifier: MIT */
/* Instant replay for samp-player sessions, their part of the ring (record/session_ring.c). Each
 * state is one ring entry: a small head saying whether it starts a part (a change of type,
 * vehicle or seat, or samples after idling) and what its part's vehicle states carried so far
 * (model, seat), then its .rec block. Since every entry carries its part's knowledge, an entry
 * that leaves the ring leaves nothing a save needs behind. A save writes what a samp-player
 * recording is on its own: one finalized .rec per part of the asked window, each rebased to 0 and
 * named by the label (LABEL.rec, LABEL-1.rec, ...), and a manifest LABEL.json listing them, its
 * start time the window's first state. */
#include "player_state.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recd/samp_rec.h"
#include "record/formats/rec/rec_session.h"
#include "record/session_ring.h"
#include "record/sessions.h"
#include "support/log.h"

/* An entry's head, before its block (in memory only: host order). */
typedef struct ring_head {
    uint8_t type;  /* recd_rec_type */
    uint8_t flags; /* HEAD_* */
    uint8_t seat;
    uint8_t unused;
    uint16_t model;
} ring_head;
#define HEAD_STARTS 1u    /* the first entry of a part */
#define HEAD_MODEL 2u     /* model: the part's vehicle states carried one */
#define HEAD_SEAT 4u      /* seat: likewise */

static ring_head head_of(const session_ring_entry *e)
{
    ring_head h;
    memcpy(&h, e->data, sizeof h);
    return h;
}

static size_t block_len(uint8_t type)
{
    return type == RECD_REC_TYPE_ONFOOT ? RECD_REC_ONFOOT_BLOCK_SIZE
                                        : RECD_REC_VEHICLE_BLOCK_SIZE;
}

int player_ring_put(recd_session *s, session_input *in, uint32_t time_ms, bool has_time,
                    const uint8_t *block, uint64_t now_ms)
{
    player_data *pd = player_of(s);
    rec_state *rs = &pd->rec;
    uint32_t t = time_ms;
    if (!has_time) {
        uint64_t since = now_ms - s->start_mono_ms;
        t = since > UINT32_MAX ? UINT32_MAX : (uint32_t)since;
    }
    if (!session_rec_take_time(s, rs, &t))
        return 0;
    bool vehicle = rs->type == RECD_REC_TYPE_VEHICLE;
    ring_head h = {.type = rs->type,
                   .flags = (uint8_t)((pd->ring_part_due ? HEAD_STARTS : 0) |
                                      (vehicle && pd->has_model ? HEAD_MODEL : 0) |
                                      (vehicle && pd->has_seat ? HEAD_SEAT : 0)),
                   .seat = pd->seat,
                   .model = pd->model};
    size_t len = block_len(rs->type);
    int rc;
    uint8_t *e = session_ring_add(s, t, sizeof h + len, 1, &rc);
    if (!e) /* 1: no room at all, dropped and counted; the part still starts at the next */
        return rc < 0 ? rc : 0;
    memcpy(e, &h, sizeof h);
    memcpy(e + sizeof h, block, len);
    pd->ring_part_due = false;
    rs->last = t;
    rs->any = true;
    in->accepted = true;
    if (in->save_now)
        session_ring_save_flagged(s);
    return 0;
}

/* Whether e begins another part than prev, the entry before it (NULL: e is the first saved). */
static bool starts_part(const session_ring_entry *prev, const session_ring_entry *e)
{
    return !prev || (head_of(e).flags & HEAD_STARTS) || e->len != prev->len;
}

/* The writer created or finalized a saved part under another name (a file of its name existed):
 * the save's manifest lists it as it is, while the part is among its latest. */
static void saved_part_named(void *ctx, uint32_t tag, const char *rel, bool final)
{
    (void)final;
    recd_session *s = ctx;
    player_data *pd = player_of(s);
    uint32_t n = tag - pd->saved_first;
    recd_player_part *p =
        pd->saved && n < player_store_count(pd->saved) ? player_store_part(pd->saved, n) : NULL;
    if (!p) {
        log_warn("session '%s': a saved part was stored as %s, and the manifest of its save "
                 "keeps the name it was given",
                 s->key, rel);
        return;
    }
    if (strcmp(p->path, rel) == 0)
        return;
    snprintf(p->path, sizeof p->path, "%s", rel);
    player_store_save(pd->saved, true);
}

/* One save under way: its manifest and the parts written so far. */
typedef struct save_run {
    const char *label;
    uint64_t base;   /* session time of the window's first state: the save's time 0 */
    player_store *st;
    uint32_t tag0; /* the writer tag of its part 0 */
    uint32_t parts;
    uint64_t samples;
} save_run;

/* Starts the save's next part, named LABEL.rec (the first) or LABEL-N.rec, and with the first
 * its manifest LABEL.json beside it. 0, -ENOMEM, -ENAMETOOLONG or another negative errno. */
static int start_saved_part(recd_session *s, save_run *run, uint64_t first_ms)
{
    int rc = session_start_part(s, s->start_epoch_ms + (int64_t)first_ms, 0);
    if (rc < 0)
        return rc;
    char name[RECD_SESSION_KEY_MAX + 16];
    if (run->parts)
        snprintf(name, sizeof name, "%s-%u", run->label, run->parts);
    else
        snprintf(name, sizeof name, "%s", run->label);
    if ((rc = session_ring_name_part(s, name)) < 0)
        return rc;
    if (run->st)
        return 0;
    char rel[RECD_PATH_MAX];
    size_t dir;
    session_name_split(s->part->name, &dir);
    int n = snprintf(rel, sizeof rel, "%.*s%s.json", (int)dir, s->part->name, run->label);
    if (n < 0 || (size_t)n >= sizeof rel)
        return -ENAMETOOLONG;
    run->st = player_store_new(s, rel, s->start_epoch_ms + (int64_t)run->base);
    return run->st ? 0 : -ENOMEM;
}

/* Writes the part of count entries from first on (last its newest) and lists it. */
static int write_part(recd_session *s, save_run *run, const session_ring_entry *first,
                      const session_ring_entry *last, size_t count)
{
    int rc = start_saved_part(s, run, first->time_ms);
    if (rc < 0) {
        if (s->part)
            session_end_part(s, NULL, 0);
        return rc;
    }
    ring_head h = head_of(first);
    size_t len = first->len - sizeof h;
    uint8_t *out = session_reserve(s, RECD_REC_HEADER_SIZE + count * len);
    if (!out) {
        session_end_part(s, NULL, 0);
        return -ENOMEM;
    }
    recd_rec_header_encode((recd_rec_type)h.type, out);
    out += RECD_REC_HEADER_SIZE;
    const session_ring_entry *e = first;
    for (size_t i = 0; i < count; i++, e = e->next, out += len) {
        memcpy(out, e->data + sizeof h, len);
        recd_rec_block_set_time(out, (uint32_t)(e->time_ms - first->time_ms));
    }
    session_tally_add(s, 1, false, 0, 0, true, first->time_ms);
    if (count > 1)
        session_tally_add(s, count - 1, false, 0, 0, true, last->time_ms);
    recd_player_part *p = player_store_add(run->st);
    if (!p) { /* out of memory: the file is whole, and not listed */
        session_end_part(s, NULL, 0);
        return -ENOMEM;
    }
    snprintf(p->path, sizeof p->path, "%s", s->part->name);
    p->type = (recd_rec_type)h.type;
    p->start_ms = first->time_ms - run->base;
    p->duration_ms = last->time_ms - first->time_ms;
    ring_head known = head_of(last); /* the part's latest entry knows the most of it */
    p->has_model = known.flags & HEAD_MODEL;
    p->vehicle_model = known.model;
    p->has_seat = known.flags & HEAD_SEAT;
    p->seat = known.seat;
    p->complete = true;
    writer_part_on_named(s->part, saved_part_named, s, run->tag0 + run->parts);
    session_end_part(s, NULL, 0);
    run->parts++;
    run->samples += count;
    return 0;
}

/* The save's first entry: the window's, or later when the window holds more parts than a
 * manifest may list (its newest parts are kept). */
static const session_ring_entry *first_saved(const session_ring_entry *first)
{
    uint64_t parts = 0;
    for (const session_ring_entry *e = first, *prev = NULL; e; prev = e, e = e->next)
        parts += starts_part(prev, e);
    const session_ring_entry *prev = NULL;
    while (parts > RECD_PLAYER_MANIFEST_MAX_PARTS) {
        prev = first;
        first = first->next;
        parts -= starts_part(prev, first);
    }
    return first;
}

int player_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                     size_t whylen)
{
    player_data *pd = player_of(s);
    uint64_t newest;
    const session_ring_entry *first = session_ring_from(s, last_ms, &newest);
    if (!first) {
        snprintf(why, whylen, "save of session '%s': its ring holds no sample yet", s->key);
        return -EBADMSG;
    }
    first = first_saved(first);
    save_run run = {.label = label, .base = first->time_ms, .tag0 = pd->saved_tags};
    int rc = 0;
    const session_ring_entry *e = first;
    while (e && rc == 0) {
        const session_ring_entry *last = e, *next = e->next;
        size_t count = 1;
        for (; next && !starts_part(last, next); last = next, next = next->next)
            count++;
        rc = write_part(s, &run, e, last, count);
        e = next;
    }
    pd->saved_tags += run.parts;
    if (run.st && run.parts) { /* what was written is listed, also when a later part failed */
        if (pd->saved)
            player_store_release(pd->saved);
        pd->saved = run.st;
        pd->saved_first = run.tag0;
        player_store_save(run.st, true);
    } else if (run.st) {
        player_store_release(run.st); /* nothing stored yet: it goes at once */
    }
    session_flush(s);
    if (rc < 0) {
        snprintf(why, whylen, "save of session '%s': %s%s", s->key,
                 rc == -ENAMETOOLONG ? "the label makes the path too long" : recd_strerror(rc),
                 run.parts ? " (its first parts were written)" : "");
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    log_info("session '%s': instant replay '%s' saved: %u parts, %llu samples, %llu ms (%u ms "
             "asked)",
             s->key, label, run.parts, (unsigned long long)run.samples,
             (unsigned long long)(newest - first->time_ms), last_ms);
    return 0;
}

void player_ring_free(recd_session *s)
{
    player_data *pd = player_of(s);
    if (pd->saved)
        player_store_release(pd->saved);
    pd->saved = NULL;
}
