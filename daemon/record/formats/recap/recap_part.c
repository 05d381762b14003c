/* SPDX-License-Identifier: MIT */
/* A Recap session's tick group and its parts, below both the session (recap_session.c) and its
 * instant-replay ring (recap_ring.c): the tick being collected (its bytes counted, cleared or
 * dropped), and the parts it is written to: each part has its own encoder, so it starts with a
 * header and a FULL_STATE, and its header is patched with the frame count and end time when the
 * part ends. The encoder never compresses here: a member's uncompressed bytes go to the writer,
 * which compresses them. Each batch of members carries a restart point, so a part whose file
 * vanished starts again as a standalone file. Which completed tick goes to a part and which to the
 * ring is decided above, in recap_session.c. */
#include "recap_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recap_config.h"
#include "recd/formats/recap/recap_slot_mask.h"
#include "recd/formats/recap/recap_state_block.h"
#include "support/log.h"

static int recap_sink(void *ctx, const void *data, size_t len) { return session_put(ctx, data, len); }

/* The tick's bytes count as buffered bytes of the session and as bytes being collected. */
void recap_group_account(recd_session *s, session_recap *r, int64_t delta)
{
    if (delta < 0 && (uint64_t)-delta > r->group_bytes)
        delta = -(int64_t)r->group_bytes;
    r->group_bytes += (uint64_t)delta;
    s->env->collecting += (uint64_t)delta;
    session_account(s, delta);
}

void recap_group_clear(recd_session *s, session_recap *r)
{
    recap_group_account(s, r, -(int64_t)r->group_bytes);
    r->group_held = false;
    recd_recap__state_keep(&r->state, &r->spare);
    for (size_t i = 0; i < r->nevents; i++)
        recd_msg_free(&r->events[i]);
    r->nevents = 0;
    r->group_samples = 0;
    r->group_has_seq = false;
    if (r->capevents > 16) {
        free(r->events);
        r->events = NULL;
        r->capevents = 0;
    }
    r->have_group = false;
}

/* The encoder's buffers (its open member, output and item scratch) count as buffered bytes of the
 * session; its item slots, the reader's view that the next delta is taken against, do not: no
 * write releases them, so counting them could pause a connection for good. */
static void update_estimate(recd_session *s)
{
    session_recap *r = recap_of(s);
    r->estimate = r->enc ? recd_recap_encoder_pending(r->enc) : 0;
    uint64_t held = r->enc ? recd_recap_encoder_buffer_memory(r->enc) : 0;
    session_account(s, (int64_t)held - (int64_t)r->encoder_held);
    r->encoder_held = held;
}

static recd_recap_header part_header(const session_recap *r);

static void restart_free(session_recap *r)
{
    recd_buf_free(&r->restart_header);
    recd_buf_free(&r->restart_member);
}

/* Prepares the restart point for the member that starts now (just before its first tick is
 * encoded, so an idle session holds none): should the part's file vanish while that member is
 * still queued, the new file is a valid .recap of its own, starting at the last tick already
 * queued (its full state, the one the member's deltas are taken against), then the queued
 * members. */
static void prepare_restart(recd_session *s, session_recap *r)
{
    if (!r->restart_due)
        return;
    r->restart_due = false;
    restart_free(r);
    recd_recap_state st;
    if (!r->enc || !r->started || r->last_fed < r->part_first_tick ||
        recd_recap_encoder_state(r->enc, &st) < 0)
        return;
    uint64_t before = r->last_fed - r->part_first_tick; /* ticks before the last one written */
    recd_recap_header h = part_header(r);
    h.start_ms = recd_recap_time_after(r->part_start_ms, (int64_t)before);
    recd_recap_encoder *e = NULL;
    int rc = recd_recap_encoder_new(&e, &h, &r->part_opt, recd_buf_sink(&r->restart_header));
    if (rc == 0)
        rc = recd_recap_encoder_tick(e, 0, &st, NULL, 0);
    if (rc == 0)
        rc = recd_recap_encoder_take_member(e, &r->restart_member);
    recd_recap_encoder_free(e);
    if (rc < 0) {
        log_warn("session '%s': no restart point for its next member (%s): should its file "
                 "vanish, what is queued for it is lost",
                 s->key, recd_strerror(rc));
        restart_free(r);
        return;
    }
    r->restart_ticks = before;
}

/* Hands the prepared restart point to the batch the next member opens (or drops it: the batch
 * began earlier and carries its own). */
static void attach_restart(recd_session *s, session_recap *r)
{
    if (!r->restart_member.len)
        return;
    uint64_t bytes = r->restart_header.len + r->restart_member.len;
    int rc = writer_set_restart(s->env->writer, &s->queue, s->part, &r->restart_header,
                                &r->restart_member, r->restart_ticks);
    if (rc == 1)
        session_queued(s, bytes); /* released when the batch is written */
    restart_free(r);
}

/* Queues the member r->member with its keyframes kf (recd_recap_keyframe), the part's seek points
 * the writer keeps its index from. 0 or -ENOMEM. */
static int put_member(recd_session *s, session_recap *r, const recd_buf *kf)
{
    size_t n = kf->len / sizeof(recd_recap_keyframe);
    const recd_recap_keyframe *k = (const recd_recap_keyframe *)(const void *)kf->data;
    recd_seek_point few[8];
    recd_seek_point *points = n <= 8 ? few : malloc(n * sizeof *points);
    for (size_t i = 0; points && i < n; i++)
        points[i] = (recd_seek_point){(int64_t)k[i].tick, 0, (int64_t)k[i].ticks_before};
    /* Without memory for them the points are lost, and the writer gives the part's index up. */
    int rc = writer_put_member_points(s->env->writer, &s->queue, s->part, r->member.data,
                                      r->member.len, points, n);
    if (points != few)
        free(points);
    return rc;
}

/* Ends the current gzip member: its uncompressed bytes go to the writer, which compresses them. */
void recap_take_member(recd_session *s)
{
    session_recap *r = recap_of(s);
    if (!r->enc)
        return;
    r->member.len = 0;
    recd_buf kf = {0};
    int n = recd_recap_encoder_take_member_keyframes(r->enc, &r->member, &kf);
    if (n < 0) {
        log_err("session '%s': the Recap encoder failed: %s", s->key, recd_strerror(n));
    } else if (r->member.len) {
        attach_restart(s, r);
        int rc = put_member(s, r, &kf);
        if (rc < 0) {
            log_err("session '%s': out of memory queueing a member: %s", s->key, recd_strerror(rc));
        } else {
            s->part_pending += r->member.len;
            session_queued(s, r->member.len);
        }
        r->restart_due = true;
    }
    recd_buf_free(&kf);
    recd_buf_free(&r->member); /* an idle session keeps no member buffer */
    /* Every sample fed to the encoder is now in a queued member; the tick being collected is not. */
    s->inputs_queued = r->have_group ? r->inputs_before_group : s->inputs;
    recd_recap_encoder_trim(r->enc);
    update_estimate(s);
}

/* writer_rebase_fn for Recap parts: the end header of a file that started again at a restart
 * point, which lacks the part's first ticks: a later start and fewer frames (the end stays). Runs
 * on the writer's thread pool: pure. */
static int rebase_header(uint8_t *header, size_t len, uint64_t ticks_dropped)
{
    recd_recap_header h;
    int rc = recd_recap_header_decode(header, len, &h, NULL);
    if (rc < 0)
        return rc;
    uint64_t end_off, frames_off;
    recd_recap_header_patch_offsets(&h, &end_off, &frames_off);
    if (frames_off + 4 > len || end_off < 8)
        return -EINVAL;
    uint32_t frames = h.frame_count; /* 0: not finalized, readers recount */
    if (frames) {
        if (ticks_dropped >= frames)
            return -ERANGE;
        frames -= (uint32_t)ticks_dropped;
    }
    uint64_t start = (uint64_t)recd_recap_time_after(h.start_ms, (int64_t)ticks_dropped);
    for (unsigned i = 0; i < 8; i++) /* the start timestamp: big-endian, just before the end */
        header[end_off - 8 + i] = (uint8_t)(start >> (56 - 8 * i));
    return recd_recap_header_patch(header, len, frames, h.end_ms);
}

/* The current part's header as first written: frame count 0 means "not finalized" until the
 * end patch, and recovery recounts after a crash. */
static recd_recap_header part_header(const session_recap *r)
{
    recd_recap_header h = r->open.open.recap->header;
    h.start_ms = r->part_start_ms;
    h.end_ms = 0;
    h.frame_count = 0;
    return h;
}

static int start_part(recd_session *s, uint64_t tick)
{
    session_recap *r = recap_of(s);
    if (!r->started) {
        r->started = true;
        r->first_tick = tick;
    }
    bool first = s->part_no == 0;
    int64_t start = s->start_epoch_ms;
    if (!first)
        start += (int64_t)((tick - r->first_tick) * RECD_RECAP_TICK_MS);
    return recap_start_part_at(s, tick, start);
}

int recap_start_part_at(recd_session *s, uint64_t tick, int64_t start)
{
    session_recap *r = recap_of(s);
    const recd_config *cfg = s->env->cfg;
    int rc = session_start_part(s, start, (int)recap_config_of(cfg)->gzip_level); /* the header records it */
    if (rc < 0)
        return rc;
    s->part->gzip_compressor = (uint8_t)recap_config_of(cfg)->compressor;
    writer_part_feed_seek(s->part); /* its members bring their keyframes */
    recd_recap_encoder_options *opt = &r->part_opt;
    memset(opt, 0, sizeof *opt);
    opt->keyframe_interval = recap_config_of(cfg)->keyframe_interval;
    opt->gzip_level = (uint8_t)recap_config_of(cfg)->gzip_level;
    opt->compressor = (uint8_t)recap_config_of(cfg)->compressor;
    opt->defer_compression = true; /* members end when the daemon flushes, compressed by the writer */
    r->part_start_ms = start;
    recd_recap_header h = part_header(r);
    recd_sink sink = {recap_sink, s};
    rc = recd_recap_encoder_new(&r->enc, &h, opt, sink);
    if (rc < 0) {
        log_err("session '%s': cannot start a Recap part: %s", s->key, recd_strerror(rc));
        session_end_part(s, NULL, 0);
        return rc;
    }
    r->part_first_tick = tick;
    writer_part_set_rebase(s->part, rebase_header);
    restart_free(r); /* the part's first batch brings its header */
    r->restart_due = false;
    recd_buf_free(&r->carry);
    update_estimate(s);
    return 0;
}

/* Keeps the reader's state at the end of the part, to open the next one with. */
static void keep_carry(recd_session *s)
{
    session_recap *r = recap_of(s);
    recd_buf_free(&r->carry);
    recd_recap_state st;
    if (recd_recap_encoder_state(r->enc, &st) < 0)
        return; /* nothing was recorded */
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    memcpy(m.session, s->key, sizeof m.session);
    int rc = recd_msg_set_recap_state(&m, r->last_fed, &st);
    if (rc == 0)
        rc = recd_wire_encode(&m, RECD_WIRE_BINARY, SIZE_MAX / 2, &r->carry);
    recd_msg_free(&m);
    if (rc < 0) {
        log_err("session '%s': cannot keep its last state: %s", s->key, recd_strerror(rc));
        recd_buf_free(&r->carry);
    } else if (r->carry.cap > r->carry.len + 64) { /* it may be kept for long: no slack */
        recd_buf exact = {0};
        if (recd_buf_append(&exact, r->carry.data, r->carry.len) == 0) {
            recd_buf_free(&r->carry);
            r->carry = exact;
        }
    }
}

/* The part's header as written, with the final frame count and end time; NULL on failure. */
static uint8_t *patched_header(session_recap *r, const recd_recap_finish_info *info, int64_t end_ms,
                               size_t *len)
{
    recd_recap_header h = part_header(r);
    recd_buf b = {0};
    if (recd_recap_encoder_header(&h, &r->part_opt, &b) < 0 ||
        recd_recap_header_patch(b.data, b.len, (uint32_t)info->frame_count, end_ms) < 0) {
        recd_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

/* Closes the current part: last member, then finish and the header patch. */
void recap_close_part(recd_session *s, bool session_end)
{
    session_recap *r = recap_of(s);
    if (!r->enc) {
        session_end_part(s, NULL, 0);
        return;
    }
    recap_take_member(s);
    restart_free(r); /* nothing more is queued for this part */
    r->restart_due = false;
    if (!session_end)
        keep_carry(s);
    recd_recap_finish_info info;
    int rc = recd_recap_encoder_finish(r->enc, &info);
    uint8_t *patched = NULL;
    size_t len = 0;
    if (rc == 0)
        patched = patched_header(r, &info, session_end && r->has_close_end ? r->close_end_ms : info.end_ms,
                                 &len);
    if (rc < 0 || !patched)
        log_err("session '%s': the Recap part cannot be finished (%s); the file keeps a frame count "
                "of 0, which readers recount",
                s->key, rc < 0 ? recd_strerror(rc) : "out of memory");
    session_end_part(s, patched, len);
    recd_recap_encoder_free(r->enc);
    r->enc = NULL;
    update_estimate(s);
}


static recd_msg_format any_recap(void *ctx, const char *key, size_t len, void **handle)
{
    (void)ctx;
    (void)key;
    (void)len;
    (void)handle;
    return RECD_MSG_FMT_RECAP;
}

static int take_state(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                      size_t errlen)
{
    (void)meta;
    (void)err;
    (void)errlen;
    return recd_msg_copy(ctx, m);
}

/* The state carried over from the last part, unpacked into *out; NULL when there is none. */
static const recd_recap_state *carried_state(recd_session *s, recd_msg *out)
{
    session_recap *r = recap_of(s);
    if (!r->carry.len)
        return NULL;
    recd_wire_decoder_config dc = {.encoding = RECD_WIRE_BINARY,
                                   .max_frame = r->carry.len,
                                   .format_of = any_recap,
                                   .on_msg = take_state,
                                   .ctx = out};
    char err[256];
    if (recd_wire_decode_datagram(&dc, r->carry.data, r->carry.len, err, sizeof err) < 0) {
        log_err("session '%s': cannot unpack its last state: %s", s->key, err);
        recd_msg_free(out);
    }
    return out->type == RECD_MSG_STATE ? &out->recap_state->state : NULL;
}

/* The session's idle hook: an idle session keeps no slack in its encoder or buffers. */
void recap_part_idle(recd_session *s)
{
    session_recap *r = recap_of(s);
    if (r->enc)
        recd_recap_encoder_trim(r->enc);
    update_estimate(s);
    recd_buf_free(&r->member);
    recd_recap__state_block_free(r->spare);
    r->spare = NULL;
    if (!r->have_group) {
        free(r->events);
        r->events = NULL;
        r->capevents = 0;
    }
}

/* The tick being collected cannot be written (checked on arrival, so only out of memory or a
 * part that cannot be named comes here): its samples are counted as dropped, and it is cleared. */
void recap_drop_group(recd_session *s, session_recap *r)
{
    recd_metric_add(s->env->metrics->samples_dropped_total, RECD_M_DROP_UNWRITABLE,
                    r->group_samples);
    session_count_drop(s, RECD_M_DROP_UNWRITABLE, r->group_samples);
    s->refused += r->group_samples;
    recap_group_clear(s, r);
}

/* The encoder for the collected tick: the current part's, else (rotating first when the part is
 * full or long) a new part's, which needs a state: the tick's own or the one carried over (kept in
 * *carried). 0, or -1 when the tick was dropped. */
static int part_for_group(recd_session *s, session_recap *r, const recd_recap_state **st,
                          recd_msg *carried)
{
    uint64_t tick = r->group_tick;
    if (r->enc && session_should_rotate(s, 0, (tick - r->part_first_tick) * RECD_RECAP_TICK_MS))
        recap_close_part(s, false);
    if (r->enc)
        return 0;
    if (!*st)
        *st = carried_state(s, carried);
    if (!*st) {
        log_warn("session '%s': tick %llu dropped: the first tick of a recording needs a state",
                 s->key, (unsigned long long)tick);
        recap_drop_group(s, r);
        return -1;
    }
    if (start_part(s, tick) < 0) {
        log_warn("session '%s': tick %llu dropped: no file can be started for it", s->key,
                 (unsigned long long)tick);
        recd_msg_free(carried);
        recap_drop_group(s, r);
        return -1;
    }
    return 0;
}

/* The collected tick given to the encoder: 0 or a negative errno. st is the tick's own state
 * (whose slot mask the encoder is given), the carried one or NULL. */
static int encode_group(recd_session *s, session_recap *r, const recd_recap_state *st)
{
    uint64_t slots = st && r->state.type == RECD_MSG_STATE && st == &r->state.recap_state->state
                         ? recd_recap__state_extent(r->state.recap_state)->slots
                         : RECD_RECAP_ALL_SLOTS;
    recd_recap_event evbuf[8];
    recd_recap_event *evs = r->nevents <= 8 ? evbuf : malloc(r->nevents * sizeof *evs);
    if (!evs)
        return -ENOMEM;
    for (size_t i = 0; i < r->nevents; i++)
        evs[i] = r->events[i].recap_event->event;
    prepare_restart(s, r);
    int rc = recd_recap__encoder_tick_slots(r->enc, r->group_tick, st, slots, evs, r->nevents);
    if (evs != evbuf)
        free(evs);
    return rc;
}

/* The collected tick to the encoder (see recap_state.h); cleared either way. */
void recap_part_feed(recd_session *s)
{
    session_recap *r = recap_of(s);
    uint64_t tick = r->group_tick;
    const recd_recap_state *st =
        r->state.type == RECD_MSG_STATE ? &r->state.recap_state->state : NULL;
    /* Set (a copy, carried_state()) only when a part starts without the tick's own state: not
     * zeroed whole for every tick. */
    recd_msg carried;
    carried.type = RECD_MSG_NONE;
    if (part_for_group(s, r, &st, &carried) < 0)
        return;
    if (r->enc && r->estimate + r->group_bytes > RECAP_MEMBER_SOFT_BYTES)
        recap_take_member(s);
    int rc = encode_group(s, r, st);
    if (rc < 0) {
        recd_metric_add(s->env->metrics->samples_dropped_total, RECD_M_DROP_UNWRITABLE,
                        r->group_samples);
        session_count_drop(s, RECD_M_DROP_UNWRITABLE, r->group_samples);
        s->refused += r->group_samples;
        log_warn("session '%s': tick %llu dropped: the Recap encoder refused it: %s", s->key,
                 (unsigned long long)tick, recd_strerror(rc));
    } else {
        r->last_fed = tick;
        session_tally_add(s, r->group_samples, r->group_has_seq, r->group_first_seq,
                          r->group_last_seq, true, tick * RECD_RECAP_TICK_MS);
    }
    if (carried.type != RECD_MSG_NONE)
        recd_msg_free(&carried);
    recap_group_clear(s, r);
    update_estimate(s);
}

int recap_part_skip_to(recd_session *s, uint64_t last)
{
    session_recap *r = recap_of(s);
    prepare_restart(s, r);
    int rc = recd_recap_encoder_tick(r->enc, last, NULL, NULL, 0); /* unchanged ticks */
    update_estimate(s);
    return rc;
}
