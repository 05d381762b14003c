/* SPDX-License-Identifier: MIT */
/* How the edit operations treat .rec files: times are the blocks' u32 milliseconds; cut keeps the
 * blocks of a range and starts them again at 0; concat continues each file's times after the
 * previous one's; tracks read position, speed and health from each block. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>

#include "formats/rec/rec_edit.h"
#include "base/why.h"

/* SA-MP velocities are metres per 1/50 s (the GTA physics step). */
#define REC_VELOCITY_TO_MPS 50.0

/* A samp-player state (sent or read as JSON lines) is a block of either type. */
static int64_t rec_time_of(const recd_msg *m)
{
    if (m->type != RECD_MSG_STATE)
        return -1;
    bool onfoot = m->format == RECD_MSG_FMT_SAMP_PLAYER ? m->player.rec_type == RECD_REC_TYPE_ONFOOT
                                                        : m->format == RECD_MSG_FMT_SAMP_ONFOOT;
    return onfoot ? m->onfoot.time_ms : m->vehicle.time_ms;
}

static void rec_set_time(recd_msg *m, int64_t t)
{
    uint32_t v = t < 0 ? 0 : t > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
    if (m->format == RECD_MSG_FMT_SAMP_ONFOOT)
        m->onfoot.time_ms = v;
    else
        m->vehicle.time_ms = v;
}

/* Hands on a copy of state m at time t. */
static int emit_state_at(const recd_msg *m, int64_t t, recd_msg_fn emit, void *ctx, char *err,
                         size_t errlen)
{
    if (t < 0 || t > (int64_t)UINT32_MAX) {
        recd_why(err, errlen, "time %lld ms does not fit the .rec clock (u32)", (long long)t);
        return -ERANGE;
    }
    recd_msg c = *m; /* .rec states own no heap memory */
    rec_set_time(&c, t);
    return emit(ctx, &c, err, errlen);
}

/* ms as seconds with no needless digits: "60 s", "2.5 s", "10.001 s". */
static void seconds_text(int64_t ms, char *out, size_t cap)
{
    if (ms < 0)
        ms = 0;
    snprintf(out, cap, "%lld.%03lld", (long long)(ms / 1000), (long long)(ms % 1000));
    char *end = out + strlen(out);
    while (end[-1] == '0')
        *--end = 0;
    if (end[-1] == '.')
        *--end = 0;
    snprintf(end, cap - (size_t)(end - out), " s");
}

/* Why a cut kept no block, in the user's words: the file's length and the range asked for. */
static void cut_nothing_why(const recd_cut_opts *o, int64_t last, char *err, size_t errlen)
{
    char from[32], to[32] = "the end", end[32];
    seconds_text(o->from, from, sizeof from);
    if (o->to >= 0)
        seconds_text(o->to, to, sizeof to);
    seconds_text(last > 0 ? last : 0, end, sizeof end);
    if (last < 0)
        recd_why(err, errlen, "the file holds no block to cut");
    else if (o->from > last)
        recd_why(err, errlen, "the cut starts at %s, past the end: the file is only %s long", from, end);
    else
        recd_why(err, errlen, "no block from %s to %s (the file's last block is at %s)", from, to, end);
}

static int rec_cut(const recd_edit_msgs *in, const recd_cut_opts *o, recd_msg_fn emit, void *ctx,
                   char *err, size_t errlen)
{
    int rc = emit(ctx, &in->v[0], err, errlen); /* open */
    int64_t first = -1, last = -1;
    uint64_t kept = 0;
    for (size_t i = 1; rc == 0 && i < in->n; i++) {
        int64_t t = rec_time_of(&in->v[i]);
        if (t > last)
            last = t;
        if (t < 0 || t < o->from || (o->to >= 0 && t >= o->to))
            continue;
        if (first < 0)
            first = t;
        rc = emit_state_at(&in->v[i], o->keep_time ? t : t - first, emit, ctx, err, errlen);
        kept++;
    }
    if (rc == 0 && kept == 0) {
        cut_nothing_why(o, last, err, errlen);
        return -EINVAL;
    }
    if (rc == 0 && in->v[in->n - 1].type == RECD_MSG_CLOSE)
        rc = emit(ctx, &in->v[in->n - 1], err, errlen);
    return rc;
}

/* First and last block times of a file, and its last step (0 with fewer than two blocks). */
static bool rec_span(const recd_edit_msgs *l, int64_t *first, int64_t *last, int64_t *step)
{
    *first = *last = *step = -1;
    int64_t prev = -1;
    for (size_t i = 0; i < l->n; i++) {
        int64_t t = rec_time_of(&l->v[i]);
        if (t < 0)
            continue;
        if (*first < 0)
            *first = t;
        prev = *last;
        *last = t;
    }
    *step = prev >= 0 ? *last - prev : 0;
    return *first >= 0;
}

static int rec_concat(const recd_edit_msgs *in, size_t n, int64_t gap, recd_msg_fn emit,
                      void *ctx, char *err, size_t errlen)
{
    int rc = emit(ctx, &in[0].v[0], err, errlen); /* the first file's open */
    int64_t end = -1, end_step = 0; /* the last time written, and the step before it */
    for (size_t k = 0; rc == 0 && k < n; k++) {
        int64_t first, last, step;
        if (!rec_span(&in[k], &first, &last, &step)) {
            recd_why(err, errlen, "input %zu holds no block", k + 1);
            return -EINVAL;
        }
        int64_t shift = end < 0 ? 0 : end + (gap >= 0 ? gap : end_step) - first;
        for (size_t i = 0; rc == 0 && i < in[k].n; i++) {
            int64_t t = rec_time_of(&in[k].v[i]);
            if (t >= 0)
                rc = emit_state_at(&in[k].v[i], t + shift, emit, ctx, err, errlen);
        }
        end = last + shift;
        end_step = step;
    }
    const recd_edit_msgs *tail = &in[n - 1];
    if (rc == 0 && tail->v[tail->n - 1].type == RECD_MSG_CLOSE)
        rc = emit(ctx, &tail->v[tail->n - 1], err, errlen);
    return rc;
}

static double norm3(recd_vec3f v)
{
    return sqrt((double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z);
}

static bool rec_track_point(const recd_msg *m, recd_track_point *p)
{
    p->actor = 0;
    if (m->format == RECD_MSG_FMT_SAMP_ONFOOT) {
        const recd_rec_onfoot *b = &m->onfoot;
        p->kind = RECD_TRACK_ONFOOT;
        p->t = b->time_ms / 1000.0;
        p->x = b->position.x, p->y = b->position.y, p->z = b->position.z;
        p->speed = norm3(b->velocity) * REC_VELOCITY_TO_MPS;
        p->health = b->health;
        p->armour = b->armour;
        p->vehicle_health = NAN;
    } else {
        const recd_rec_vehicle *b = &m->vehicle;
        p->kind = RECD_TRACK_VEHICLE;
        p->t = b->time_ms / 1000.0;
        p->x = b->position.x, p->y = b->position.y, p->z = b->position.z;
        p->speed = norm3(b->velocity) * REC_VELOCITY_TO_MPS;
        p->health = NAN;
        p->armour = NAN;
        p->vehicle_health = b->vehicle_health;
    }
    return isfinite(p->x) && isfinite(p->y);
}

const struct recd_format_edit recd_rec__edit = {
    .time_unit = "ms",
    .unit_ms = 1,
    .unit_name = "block",
    .place = RECD_EDIT_PLACE_BLOCK,
    .time_of = rec_time_of,
    .cut = rec_cut,
    .concat = rec_concat,
    .set_time = rec_set_time,
    .same_controls = rec_edit_same_controls,
    .interpolate = rec_edit_interpolate,
    .scale_velocity = rec_edit_scale_velocity,
    .position = rec_edit_position,
    .transform = rec_edit_transform,
    .track_point = rec_track_point,
    .reads_also = RECD_MSG_FMT_SAMP_PLAYER, /* a player session's parts are .rec files */
};
