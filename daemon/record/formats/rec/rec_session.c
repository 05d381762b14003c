/* SPDX-License-Identifier: MIT */
/* .rec sessions: each sample becomes one 67/72-byte block appended straight to the session's
 * pending batch, after the file header at the start of each part. Binary frames arrive as checked
 * fields already and are written as they are behind the session's time; decoded messages (NDJSON)
 * are checked and encoded first. Times count from the session start (stamped on arrival when the
 * client left them out) and never decrease (rec.time_policy); part 1 keeps them as given, later
 * parts start again at 0 when output.rebase_parts is set (every part, the first too, for
 * samp-player sessions, player_session.c, which use the same blocks). Each part is a complete
 * file. */
#include "rec_session.h"

#include <errno.h>
#include <string.h>

#include "record/session_ring.h"
#include "support/config_schema.h"
#include "support/log.h"

static uint32_t stamp(const recd_session *s, uint64_t now_ms)
{
    uint64_t t = now_ms - s->start_mono_ms;
    return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static recd_rec_type rec_type(const rec_state *rs) { return (recd_rec_type)rs->type; }

/* The blocks of a samp-onfoot or samp-vehicle session are all of its format's type. */
static int rec_open(recd_session *s, const recd_msg *open, char *why, size_t whylen)
{
    (void)why, (void)whylen;
    rec_state *rs = rec_state_of(s);
    rs->type = open->format == RECD_MSG_FMT_SAMP_ONFOOT ? RECD_REC_TYPE_ONFOOT
                                                         : RECD_REC_TYPE_VEHICLE;
    return 0;
}

/* Opens a part whose first block is at session time t (its header goes with that block). */
static int start_part(recd_session *s, uint32_t t)
{
    const recd_config *cfg = s->env->cfg;
    rec_state *rs = rec_state_of(s);
    bool first = s->part_no == 0;
    int rc = session_start_part(s, first ? s->start_epoch_ms : s->start_epoch_ms + t, 0);
    if (rc < 0)
        return rc;
    /* Should its file vanish (the output root removed), what is still queued goes to a new file
     * that starts with this header. Without memory for it, that part is given up instead. */
    uint8_t head[RECD_REC_HEADER_SIZE];
    recd_rec_header_encode(rec_type(rs), head);
    if (writer_part_set_preamble(s->part, head, sizeof head) < 0)
        log_warn("session '%s': out of memory: part %u cannot start again should its file vanish",
                 s->key, s->part_no);
    rs->base = rs->rebase_all || (!first && cfg->output.rebase_parts) ? t : 0;
    rs->part_first = t;
    rs->header_due = true;
    return 0;
}

/* A .rec part holds whole blocks only: ending it needs no header patch. The session's end
 * logs how many samples had their time raised. */
static void end_part(recd_session *s, bool session_end)
{
    const rec_state *rs = rec_state_of(s);
    if (session_end && rs->clamped)
        log_warn("session '%s': %llu samples had their time raised to the previous one's "
                 "(rec.time_policy: clamp)",
                 s->key, (unsigned long long)rs->clamped);
    if (s->part)
        session_end_part(s, NULL, 0);
}

bool session_rec_time_late(recd_session *s, rec_state *rs, uint32_t *t)
{
    if (s->env->cfg->rec.time_policy == RECD_REC_TIME_REJECT) {
        recd_metrics_decode_error(s->env->metrics, RECD_M_TIME_ORDER);
        log_warn("session '%s': sample at %u ms is before the previous one at %u ms: dropped "
                 "(rec.time_policy: reject)",
                 s->key, *t, rs->last);
        return false;
    }
    if (!rs->clamped++)
        log_warn("session '%s': sample at %u ms is before the previous one at %u ms: its time is "
                 "raised to it (rec.time_policy: clamp); later ones are only counted",
                 s->key, *t, rs->last);
    recd_metric_add(s->env->metrics->time_clamped_total, 0, 1);
    *t = rs->last;
    return true;
}

int session_rec_block(recd_session *s, session_input *in, uint32_t time_ms, bool has_time,
                      const uint8_t *fields, uint64_t now_ms)
{
    /* Rotation ends the part through the table: a samp-player session lists it in its manifest. */
    rec_state *rs = rec_state_of(s);
    uint32_t t = has_time ? time_ms : stamp(s, now_ms);
    if (!session_rec_take_time(s, rs, &t))
        return 0;
    bool foot = rs->type == RECD_REC_TYPE_ONFOOT;
    size_t len = foot ? RECD_REC_ONFOOT_BLOCK_SIZE : RECD_REC_VEHICLE_BLOCK_SIZE;
    int rc;
    if (s->ring) { /* instant replay: memory only, until a save */
        if ((rc = rec_ring_put(s, t, fields, len)) != 0)
            return rc < 0 ? rc : 0; /* 1: no room at all, dropped and counted */
        rs->last = t;
        rs->any = true;
        in->accepted = true;
        if (in->save_now)
            session_ring_save_flagged(s);
        return 0;
    }
    if (s->part && session_should_rotate(s, len, t - rs->part_first))
        s->ops->end_part(s, false);
    if (!s->part && (rc = start_part(s, t)) < 0) {
        if (rc == -ENOMEM)
            return rc;
        log_err("session '%s': sample dropped: no output file", s->key);
        return 0;
    }
    /* The first block of a part brings the file header along: both are queued, or neither. */
    size_t head = rs->header_due ? RECD_REC_HEADER_SIZE : 0;
    uint8_t *block = session_reserve(s, head + len);
    if (!block)
        return -ENOMEM;
    if (head) {
        recd_rec_header_encode(rec_type(rs), block);
        block += head;
        rs->header_due = false;
    }
    /* Written in place: the fields go from the frame to the batch in one copy. */
    recd_rec_block_set_time(block, t - rs->base);
    if (foot)
        memcpy(block + 4, fields, RECD_REC_ONFOOT_BLOCK_SIZE - 4);
    else
        memcpy(block + 4, fields, RECD_REC_VEHICLE_BLOCK_SIZE - 4);
    rs->last = t;
    rs->any = true;
    in->accepted = true;
    session_tally_input(s, in, true, t);
    return 0;
}

int session_rec_encode(recd_session *s, session_input *in, const recd_msg *m, uint8_t rec_type,
                       uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE], uint32_t *time_ms, char *why,
                       size_t whylen)
{
    bool onfoot = rec_type == RECD_REC_TYPE_ONFOOT;
    int rc = onfoot ? recd_rec_onfoot_check(&m->onfoot) : recd_rec_vehicle_check(&m->vehicle);
    if (rc < 0)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "state for session '%s': a float is NaN or infinite, or weapon / "
                              "additional_key is out of range",
                              s->key);
    if (onfoot)
        recd_rec_onfoot_encode(&m->onfoot, block);
    else
        recd_rec_vehicle_encode(&m->vehicle, block);
    *time_ms = onfoot ? m->onfoot.time_ms : m->vehicle.time_ms;
    return 0;
}

/* A decoded state (NDJSON): checked and encoded, then written as a block of the session's
 * current type. */
static int rec_sample(recd_session *s, session_input *in, const recd_msg *m,
                      const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen)
{
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    uint32_t t;
    int rc = session_rec_encode(s, in, m, rec_state_of(s)->type, block, &t, why, whylen);
    if (rc < 0)
        return rc;
    return session_rec_block(s, in, t, meta->has_time, block + 4, now_ms);
}

void session_rec_end_part(recd_session *s, bool session_end) { end_part(s, session_end); }

static const enum_name time_policies[] = {
    {"reject", RECD_REC_TIME_REJECT},
    {"clamp", RECD_REC_TIME_CLAMP},
    {NULL, 0},
};

/* The documentation (and values) this format gives the core config keys that exist for it. */
static const row config_docs[] = {
    {.key = "rec.time_policy", .names = time_policies,
     .doc = "A .rec sample whose time is earlier than the previous one: reject (drop it, count a time_order "
            "error) or clamp (keep it at the previous time)."},
};

const session_format rec_session_format = {
    .config_rows = config_docs,
    .config_row_count = sizeof config_docs / sizeof config_docs[0],
    .formats = {RECD_MSG_FMT_SAMP_ONFOOT, RECD_MSG_FMT_SAMP_VEHICLE},
    .state_size = sizeof(rec_state),
    .open = rec_open,
    .sample = rec_sample,
    .state_fast = session_rec_block,
    .end_part = end_part,
    .files_what = "SA-MP NPC recordings (.rec; a samp-player session as .rec parts and a JSON manifest)",
    .ring_save = rec_ring_save,
};
