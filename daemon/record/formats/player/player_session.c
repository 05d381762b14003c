/* SPDX-License-Identifier: MIT */
/* samp-player sessions: a player's on-foot and vehicle states in one session. The blocks are
 * written as .rec parts exactly as samp-onfoot / samp-vehicle sessions write them (rec_session.c),
 * every part rebased to 0; a new part starts at each change of type, and of vehicle model or seat
 * when the states carry them. The session's manifest (recd/player_manifest.h) lists the parts in
 * order; it is written as the parts start and end, by a small job on the thread pool that
 * appends to it (player_store.c): after kill -9 it lists every part, and recovery
 * finishes it. A session has at most RECD_PLAYER_MANIFEST_MAX_PARTS parts: a state that would
 * start another is refused. A ring session (instant replay) keeps its states in memory instead,
 * each with the part it belongs to, until a save writes them as parts and a manifest
 * (player_ring.c). */
#include "player_session.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/player_manifest.h"
#include "player_state.h"
#include "player_store.h"
#include "record/formats/rec/rec_session.h"
#include "support/config_schema.h"
#include "support/log.h"

/* The manifest lies beside the first part, named after the session: ".../KEY.json". A key may
 * be recorded many times into one folder: each recording keeps its own, the later ones as
 * KEY-1.json, KEY-2.json ... (chosen by the first store). */
static int store_new(recd_session *s, const char *first_part)
{
    player_data *pd = s->format_data;
    char rel[RECD_PATH_MAX];
    size_t dir;
    session_name_split(first_part, &dir);
    int n = snprintf(rel, sizeof rel, "%.*s%s.json", (int)dir, first_part, s->key);
    if (n < 0 || (size_t)n >= sizeof rel)
        return -ENAMETOOLONG;
    pd->store = player_store_new(s, rel, s->start_epoch_ms);
    return pd->store ? 0 : -ENOMEM;
}

static void store_manifest(recd_session *s)
{
    player_data *pd = s->format_data;
    if (pd->store)
        player_store_save(pd->store, pd->complete);
}

/* Parts that start within one second get the same name from a template such as the default one:
 * a later one is named NAME-N.rec (N its part number) so that the manifest can name it, instead
 * of the writer's collision suffix, which is only known once the file exists. Names only move
 * on with time, so the previous part's name is the one to compare with: no scan of them all. */
static int unique_name(recd_session *s, player_data *pd)
{
    const char *name = s->part->name;
    bool taken = pd->last_name[0] && strcmp(pd->last_name, name) == 0;
    snprintf(pd->last_name, sizeof pd->last_name, "%s", name);
    if (!taken)
        return 0;
    char rel[RECD_PATH_MAX];
    size_t stem = session_name_split(name, NULL);
    int n = snprintf(rel, sizeof rel, "%.*s-%u%s", (int)stem, name, s->part_no, name + stem);
    if (n < 0 || (size_t)n >= sizeof rel)
        return 0; /* left to the writer's suffix */
    return session_rename_part(s, rel);
}

/* The writer gave part tag another name (another recording of the key took the one asked for,
 * in the same second): the manifest lists the file as it is. */
static void part_named(void *ctx, uint32_t tag, const char *rel, bool final)
{
    (void)final;
    recd_session *s = ctx;
    player_data *pd = s->format_data;
    recd_player_part *p = pd && pd->store ? player_store_part(pd->store, tag) : NULL;
    if (!p) {
        if (pd && pd->store)
            log_warn("session '%s': part %u was stored as %s, and its manifest, written already "
                     "that far, keeps the name it was given",
                     s->key, tag, rel);
        return;
    }
    if (strcmp(p->path, rel) == 0)
        return;
    snprintf(p->path, sizeof p->path, "%s", rel);
    store_manifest(s);
}

static recd_player_part *current(player_data *pd)
{
    return pd->in_part && pd->store
               ? player_store_part(pd->store, player_store_count(pd->store) - 1)
               : NULL;
}

static int player_open(recd_session *s, const recd_msg *open, char *why, size_t whylen)
{
    (void)open, (void)why, (void)whylen;
    player_data *pd = s->format_data;
    pd->rec.rebase_all = true;
    pd->rec.type = RECD_REC_TYPE_NONE;
    return 0;
}

static void player_end_part(recd_session *s, bool session_end)
{
    player_data *pd = s->format_data;
    recd_player_part *p = current(pd);
    if (p) {
        p->duration_ms = pd->rec.last - pd->rec.part_first;
        p->complete = true;
        pd->in_part = false;
    }
    session_rec_end_part(s, session_end);
    if (s->ring) /* idle: samples that come again start a part, as they would a file */
        pd->ring_part_due = true;
    if (session_end)
        pd->complete = true;
    if (p || session_end)
        store_manifest(s);
}

/* A state of another kind, or of another vehicle or seat, than the current part holds. */
static bool switches(const player_data *pd, const recd_msg *m)
{
    const recd_msg_player *pl = &m->player;
    if (pl->rec_type != pd->rec.type)
        return true;
    if (pl->rec_type != RECD_REC_TYPE_VEHICLE)
        return false;
    return (pl->has_model && pd->has_model && pl->vehicle_model != pd->model) ||
           (pl->has_seat && pd->has_seat && pl->seat != pd->seat);
}

/* limits.part_rate: a bucket of rate parts, filled at rate a second. */
static bool part_token(recd_session *s, player_data *pd, uint64_t now_ms)
{
    uint32_t rate = s->env->cfg->limits.part_rate;
    if (!rate)
        return true;
    if (!pd->part_tokens_ms || now_ms < pd->part_tokens_ms)
        pd->part_tokens = rate;
    else
        pd->part_tokens += (double)(now_ms - pd->part_tokens_ms) * rate / 1000.0;
    if (pd->part_tokens > rate)
        pd->part_tokens = rate;
    pd->part_tokens_ms = now_ms ? now_ms : 1;
    if (pd->part_tokens < 1.0)
        return false;
    pd->part_tokens -= 1.0;
    return true;
}

/* Part switches at their bound (recd_state_refusals_total). */
static const recd_m_state_kind player_parts = {
    .what = "player_parts",
    .bound = "limits.part_rate or the manifest's 100000 parts",
};

/* A state that starts a new part: each part is a file and a manifest line, so a client that
 * flips state with every sample is held to limits.part_rate, and a session to the parts its
 * manifest may list. */
static int admit_part(recd_session *s, session_input *in, player_data *pd, uint64_t now_ms,
                      char *why, size_t whylen)
{
    bool full = pd->store && player_store_count(pd->store) >= RECD_PLAYER_MANIFEST_MAX_PARTS;
    if (!full && part_token(s, pd, now_ms))
        return 0;
    recd_metrics_state_refused(s->env->metrics, player_parts.what);
    if (full) {
        log_warn("session '%s': a state refused: it has %u parts, all its manifest may list",
                 s->key, (unsigned)RECD_PLAYER_MANIFEST_MAX_PARTS);
        return session_refuse(in, RECD_M_OTHER, why, whylen,
                              "state for session '%s': it has %u parts, as many as its manifest "
                              "may list: a state that starts another is refused (open a new "
                              "session)",
                              s->key, (unsigned)RECD_PLAYER_MANIFEST_MAX_PARTS);
    }
    log_warn("session '%s': states that start a new part faster than limits.part_rate (%u a "
             "second) are refused",
             s->key, s->env->cfg->limits.part_rate);
    return session_refuse(in, RECD_M_OTHER, why, whylen,
                          "state for session '%s': it would start a new part (a change of type, "
                          "vehicle or seat) faster than limits.part_rate, %u a second: refused",
                          s->key, s->env->cfg->limits.part_rate);
}

static int player_state(recd_session *s, session_input *in, const recd_msg *m,
                        const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen)
{
    player_data *pd = s->format_data;
    const recd_msg_player *pl = &m->player;
    if (pl->rec_type != RECD_REC_TYPE_ONFOOT && pl->rec_type != RECD_REC_TYPE_VEHICLE)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "state for session '%s': neither on foot nor vehicle", s->key);
    /* Checked and encoded before a switch: a refused state must not end the current part. */
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    uint32_t t;
    int rc = session_rec_encode(s, in, m, (uint8_t)pl->rec_type, block, &t, why, whylen);
    if (rc < 0)
        return rc;
    if (switches(pd, m)) {
        if ((rc = admit_part(s, in, pd, now_ms, why, whylen)) < 0)
            return rc;
        if (s->part)
            player_end_part(s, false);
        pd->has_model = pd->has_seat = false;
        pd->ring_part_due = true;
    }
    pd->rec.type = (uint8_t)pl->rec_type;
    if (pl->has_model) {
        pd->has_model = true;
        pd->model = pl->vehicle_model;
    }
    if (pl->has_seat) {
        pd->has_seat = true;
        pd->seat = pl->seat;
    }
    if (s->ring) /* instant replay: memory only, until a save */
        return player_ring_put(s, in, t, meta->has_time, block, now_ms);
    const writer_part *before = s->part;
    rc = session_rec_block(s, in, t, meta->has_time, block + 4, now_ms);
    if (rc < 0 || !s->part)
        return rc;
    recd_player_part *p = current(pd);
    bool started = s->part != before;
    if (started) {
        if (!pd->store && (rc = store_new(s, s->part->name)) < 0) {
            if (rc == -ENOMEM)
                return rc;
            log_err("session '%s': part name %s leaves no room for a manifest name", s->key,
                    s->part->name);
        }
        if (unique_name(s, pd) < 0)
            log_warn("session '%s': out of memory: part %u keeps the name %s, which an earlier "
                     "part has: the writer adds a suffix the manifest does not show",
                     s->key, s->part_no, s->part->name);
        if (!pd->store || !(p = player_store_add(pd->store))) {
            log_err("session '%s': its manifest cannot list part %u (out of memory or %d parts)",
                    s->key, s->part_no, RECD_PLAYER_MANIFEST_MAX_PARTS);
            return 0;
        }
        snprintf(p->path, sizeof p->path, "%s", s->part->name);
        writer_part_on_named(s->part, part_named, s, player_store_count(pd->store) - 1);
        p->type = (recd_rec_type)pd->rec.type;
        p->start_ms = pd->rec.part_first;
        pd->in_part = true;
    }
    if (!p)
        return 0;
    bool learned = p->type == RECD_REC_TYPE_VEHICLE &&
                   ((pd->has_model && !p->has_model) || (pd->has_seat && !p->has_seat));
    if (p->type == RECD_REC_TYPE_VEHICLE) {
        p->has_model = pd->has_model;
        p->vehicle_model = pd->model;
        p->has_seat = pd->has_seat;
        p->seat = pd->seat;
    }
    p->duration_ms = pd->rec.last - pd->rec.part_first;
    if (started || learned)
        store_manifest(s);
    return 0;
}

static void player_free(recd_session *s)
{
    player_data *pd = s->format_data;
    if (!pd)
        return;
    if (pd->store && !pd->complete) { /* ended without a close (shutdown, replaced) */
        pd->complete = true;
        store_manifest(s);
    }
    if (pd->store)
        player_store_release(pd->store);
    pd->store = NULL;
    player_ring_free(s); /* the state itself goes with the session */
}


/* The documentation (and values) this format gives the core config keys that exist for it. */
static const row config_docs[] = {
    {.key = "limits.part_rate",
     .doc = "New parts a samp-player session may start per second by changing state type, vehicle or "
            "seat (up to this many at once); a state that would start one beyond it is refused. 0 = no "
            "limit."},
};

const session_format player_session_format = {
    .config_rows = config_docs,
    .config_row_count = sizeof config_docs / sizeof config_docs[0],
    .formats = {RECD_MSG_FMT_SAMP_PLAYER},
    .state_size = sizeof(player_data),
    .open = player_open,
    .sample = player_state,
    .end_part = player_end_part,
    .free = player_free,
    .recover_root = recd_player_manifest_recover_root,
    .recover_what = "manifests",
    .store_what = "samp-player manifest",
    .state_kind = &player_parts,
    .ring_save = player_ring_save,
};
