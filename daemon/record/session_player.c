/* SPDX-License-Identifier: MIT */
/* samp-player sessions: a player's on-foot and vehicle states in one session. The blocks are
 * written as .rec parts exactly as samp-onfoot / samp-vehicle sessions write them (session_rec.c),
 * every part rebased to 0; a new part starts at each change of type, and of vehicle model or seat
 * when the states carry them. The session's manifest (recd/player_manifest.h) lists the parts in
 * order and is stored again, atomically, whenever a part starts or ends, by a small job on the
 * thread pool: after kill -9 it lists every part, and recovery finishes it. */
#include "session_player.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/player_manifest.h"
#include "session_rec.h"
#include "support/log.h"

/* The manifest's store jobs: one in flight at a time, the latest text waiting behind it. It
 * outlives its session when the session goes while a job runs. */
typedef struct manifest_store {
    uv_work_t req;
    writer_stage *stage;
    char rel[RECD_PATH_MAX];
    char key[RECD_SESSION_KEY_MAX + 1];
    char *writing; /* the text the running job stores */
    char *next;    /* the text to store once it is done */
    int result;
    bool busy, orphan;
    bool named; /* rel is the name the first store took (jobs only) */
} manifest_store;

typedef struct player_data {
    recd_player_manifest manifest;
    manifest_store *store;
    bool in_part;         /* the manifest's last entry is the current part */
    bool has_model, has_seat; /* what the current vehicle stretch's states carried */
    uint16_t model;
    uint8_t seat;
} player_data;

static void store_kick(manifest_store *st);

/* The first store takes rel, or rel-1, rel-2 ... when another recording of the key has it; the
 * later ones replace what the first took. */
static void store_work(uv_work_t *req)
{
    manifest_store *st = req->data;
    if (st->named) {
        st->result = recd_player_manifest_store(st->stage->root_fd, st->rel, st->writing);
        return;
    }
    char chosen[RECD_PATH_MAX];
    st->result = recd_confined_store_text_new(st->stage->root_fd, st->rel, st->writing, true,
                                              chosen, sizeof chosen);
    if (st->result == 0) {
        memcpy(st->rel, chosen, sizeof st->rel);
        st->named = true;
    }
}

static void store_done(uv_work_t *req, int status)
{
    manifest_store *st = req->data;
    st->stage->jobs_running--; /* the root fd may be retired once no job uses it */
    if (status == 0 && st->result < 0)
        log_warn("session '%s': cannot store its manifest %s: %s", st->key, st->rel,
                 recd_strerror(st->result));
    free(st->writing);
    st->writing = NULL;
    st->busy = false;
    if (st->next)
        store_kick(st);
    else if (st->orphan)
        free(st);
}

static void store_kick(manifest_store *st)
{
    if (st->busy || !st->next)
        return;
    st->writing = st->next;
    st->next = NULL;
    st->req.data = st;
    st->busy = true;
    st->stage->jobs_running++;
    int rc = uv_queue_work(st->stage->loop, &st->req, store_work, store_done);
    if (rc < 0) {
        st->stage->jobs_running--;
        st->busy = false;
        log_warn("session '%s': cannot store its manifest: %s", st->key, uv_strerror(rc));
        free(st->writing);
        st->writing = NULL;
    }
}

/* Queues the manifest as it is now. */
static void store_manifest(recd_session *s)
{
    player_data *pd = s->format_data;
    if (!pd->store)
        return;
    char *text = recd_player_manifest_to_json(&pd->manifest);
    if (!text) {
        log_warn("session '%s': out of memory: its manifest is not stored this time", s->key);
        return;
    }
    free(pd->store->next);
    pd->store->next = text;
    store_kick(pd->store);
}

/* The manifest lies beside the first part, named after the session: ".../KEY.json". A key may
 * be recorded many times into one folder: each recording keeps its own, the later ones as
 * KEY-1.json, KEY-2.json ... (chosen by the first store). */
static int store_new(recd_session *s, const char *first_part)
{
    player_data *pd = s->format_data;
    manifest_store *st = calloc(1, sizeof *st);
    if (!st)
        return -ENOMEM;
    size_t dir;
    session_name_split(first_part, &dir);
    int n = snprintf(st->rel, sizeof st->rel, "%.*s%s.json", (int)dir, first_part, s->key);
    if (n < 0 || (size_t)n >= sizeof st->rel) {
        free(st);
        return -ENAMETOOLONG;
    }
    memcpy(st->key, s->key, sizeof st->key);
    st->stage = s->env->writer;
    pd->store = st;
    return 0;
}

/* Parts that start within one second get the same name from a template such as the default one:
 * a later one is named NAME-N.rec (N its part number) so that the manifest can name it, instead
 * of the writer's collision suffix, which is only known once the file exists. */
static int unique_name(recd_session *s, const player_data *pd)
{
    const char *name = s->part->name;
    bool taken = false;
    for (size_t i = 0; i < pd->manifest.nparts && !taken; i++)
        taken = strcmp(pd->manifest.parts[i].path, name) == 0;
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
    if (!pd || tag >= pd->manifest.nparts || strcmp(pd->manifest.parts[tag].path, rel) == 0)
        return;
    snprintf(pd->manifest.parts[tag].path, sizeof pd->manifest.parts[tag].path, "%s", rel);
    store_manifest(s);
}

static recd_player_part *current(player_data *pd)
{
    return pd->in_part ? &pd->manifest.parts[pd->manifest.nparts - 1] : NULL;
}

static int player_open(recd_session *s, const recd_msg *open, char *why, size_t whylen)
{
    (void)open, (void)why, (void)whylen;
    player_data *pd = calloc(1, sizeof *pd);
    if (!pd)
        return -ENOMEM;
    memcpy(pd->manifest.session, s->key, sizeof pd->manifest.session);
    pd->manifest.start_time_ms = s->start_epoch_ms;
    s->format_data = pd;
    s->rec_rebase_all = true;
    s->rec_type = RECD_REC_TYPE_NONE;
    return 0;
}

static void player_end_part(recd_session *s, bool session_end)
{
    player_data *pd = s->format_data;
    recd_player_part *p = current(pd);
    if (p) {
        p->duration_ms = s->rec_last - s->rec_part_first;
        p->complete = true;
        pd->in_part = false;
    }
    session_rec_end_part(s, session_end);
    if (session_end)
        pd->manifest.complete = true;
    if (p || session_end)
        store_manifest(s);
}

/* A state of another kind, or of another vehicle or seat, than the current part holds. */
static bool switches(const recd_session *s, const player_data *pd, const recd_msg *m)
{
    const recd_msg_player *pl = &m->player;
    if (pl->rec_type != s->rec_type)
        return true;
    if (pl->rec_type != RECD_REC_TYPE_VEHICLE)
        return false;
    return (pl->has_model && pd->has_model && pl->vehicle_model != pd->model) ||
           (pl->has_seat && pd->has_seat && pl->seat != pd->seat);
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
    if (switches(s, pd, m)) {
        if (s->part)
            player_end_part(s, false);
        pd->has_model = pd->has_seat = false;
    }
    s->rec_type = (uint8_t)pl->rec_type;
    if (pl->has_model) {
        pd->has_model = true;
        pd->model = pl->vehicle_model;
    }
    if (pl->has_seat) {
        pd->has_seat = true;
        pd->seat = pl->seat;
    }
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
        if (!(p = recd_player_manifest_add(&pd->manifest))) {
            log_err("session '%s': its manifest cannot list part %u (out of memory or %d parts)",
                    s->key, s->part_no, RECD_PLAYER_MANIFEST_MAX_PARTS);
            return 0;
        }
        snprintf(p->path, sizeof p->path, "%s", s->part->name);
        writer_part_on_named(s->part, part_named, s, (uint32_t)(pd->manifest.nparts - 1));
        p->type = (recd_rec_type)s->rec_type;
        p->start_ms = s->rec_part_first;
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
    p->duration_ms = s->rec_last - s->rec_part_first;
    if (started || learned)
        store_manifest(s);
    return 0;
}

static void player_free(recd_session *s)
{
    player_data *pd = s->format_data;
    if (!pd)
        return;
    if (pd->store && !pd->manifest.complete) { /* ended without a close (shutdown, replaced) */
        pd->manifest.complete = true;
        store_manifest(s);
    }
    if (pd->store) {
        if (pd->store->busy) {
            pd->store->orphan = true;
        } else {
            free(pd->store->next);
            free(pd->store);
        }
    }
    recd_player_manifest_free(&pd->manifest);
    free(pd);
    s->format_data = NULL;
}

const session_format session_player_format = {
    .open = player_open,
    .sample = player_state,
    .end_part = player_end_part,
    .free = player_free,
    .recover_root = recd_player_manifest_recover_root,
    .recover_what = "manifests",
};
