/* SPDX-License-Identifier: MIT */
/* How the edit operations treat CARLA logs: times are milliseconds of the frames' elapsed game
 * time. A cut keeps the frames of its range, renumbered from 1 and (unless keep-time) rebased to
 * elapsed 0, and starts with an EventAdd for every actor alive at the cut (at its latest
 * position) and an EventParent for every attachment, so that the piece replays on its own.
 * concat continues frame ids and elapsed time, ending each input's actors with EventDel before
 * the next input adds its own. Retime and transform do not apply (reasons below). Plots:
 * carla_track.c. The rules: docs/editing.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_format.h"
#include "formats/carla/carla_world.h"
#include "formats/format_edit.h"
#include "base/why.h"

static double carla_exact_ms(const recd_msg *m)
{
    if (m->type != RECD_MSG_STATE || !m->carla_state)
        return -1;
    double ms = m->carla_state->elapsed * 1000.0;
    return ms >= 0 && ms < CARLA_MAX_MS ? ms : -1;
}

static int64_t carla_time_of(const recd_msg *m)
{
    return m->type == RECD_MSG_STATE && m->carla_state ? carla_elapsed_ms(m->carla_state->elapsed)
                                                       : -1;
}

/* A copy of state m as frame `id` at `elapsed`; its VisualTime and PlatformTime move by as much
 * as its elapsed time. */
static int emit_frame(const recd_msg *m, uint64_t id, double elapsed, recd_msg_fn emit, void *ctx,
                      char *err, size_t errlen)
{
    recd_msg c;
    int rc = recd_msg_copy(&c, m);
    if (rc < 0)
        return rc;
    recd_carla_frame *f = c.carla_state;
    double shift = elapsed - f->elapsed;
    for (size_t i = 0; shift != 0 && i < f->count; i++) {
        recd_carla_packet *p = &f->packets[i];
        if (!p->raw && p->len == 8 &&
            (p->kind == RECD_CARLA_VISUAL_TIME || p->kind == RECD_CARLA_PLATFORM_TIME)) {
            uint8_t *v = (uint8_t *)p->data; /* the copy owns its bytes */
            st_le64(v, f64_to_bits(f64_from_bits(ld_le64(v)) + shift));
        }
    }
    f->id = id;
    f->elapsed = elapsed;
    rc = emit(ctx, &c, err, errlen);
    recd_msg_free(&c);
    return rc;
}

static int emit_close(recd_msg_fn emit, void *ctx, char *err, size_t errlen)
{
    recd_msg c;
    recd_msg_init(&c, RECD_MSG_CLOSE, RECD_MSG_FMT_CARLA);
    return emit(ctx, &c, err, errlen);
}

/* ---- cut ------------------------------------------------------------------------------------ */

static int carla_cut(const recd_edit_msgs *in, const recd_cut_opts *o, recd_msg_fn emit,
                     void *ctx, char *err, size_t errlen)
{
    carla_world w = {0};
    uint64_t frames = 0;
    double base = 0;
    int64_t first = -1, last = -1;
    int rc = emit(ctx, &in->v[0], err, errlen);
    for (size_t i = 1; rc == 0 && i < in->n; i++) {
        const recd_msg *m = &in->v[i];
        if (m->type == RECD_MSG_EVENT) {
            if (frames == 0)
                rc = carla_world_event(&w, m->carla_event);
            else
                rc = emit(ctx, m, err, errlen);
            continue;
        }
        if (m->type != RECD_MSG_STATE)
            continue;
        int64_t t = carla_time_of(m);
        if (first < 0)
            first = t;
        last = t > last ? t : last;
        if (t < o->from) {
            carla_world_positions(&w, m->carla_state);
            continue;
        }
        if (o->to >= 0 && t >= o->to)
            break;
        if (frames == 0)
            base = o->keep_time ? 0.0 : m->carla_state->elapsed;
        rc = emit_frame(m, ++frames, m->carla_state->elapsed - base, emit, ctx, err, errlen);
        if (rc == 0 && frames == 1)
            rc = carla_world_emit_alive(&w, false, emit, ctx, err, errlen);
    }
    carla_world_free(&w);
    if (rc == 0 && frames == 0) {
        char to[24] = "the end";
        if (o->to >= 0)
            snprintf(to, sizeof to, "%lld", (long long)o->to);
        recd_why(err, errlen,
                 "no frame in [%lld, %s) ms: the log's frames run from %lld to %lld ms; cut inside that",
                (long long)o->from, to, (long long)first, (long long)last);
        return -EINVAL;
    }
    return rc == 0 ? emit_close(emit, ctx, err, errlen) : rc;
}

/* ---- concat --------------------------------------------------------------------------------- */

static int carla_concat(const recd_edit_msgs *in, size_t n, int64_t gap, recd_msg_fn emit,
                        void *ctx, char *err, size_t errlen)
{
    const char *map = in[0].v[0].open.carla->map;
    for (size_t k = 1; k < n; k++)
        if (strcmp(in[k].v[0].open.carla->map, map) != 0) {
            recd_why(err, errlen, "input %zu is recorded in map %s, input 1 in %s: a log replays "
                     "in one map", k + 1, in[k].v[0].open.carla->map, map);
            return -EINVAL;
        }
    int rc = emit(ctx, &in[0].v[0], err, errlen);
    uint64_t frames = 0;
    double end = 0, step = 0; /* the last written frame's elapsed and the step before it */
    for (size_t k = 0; rc == 0 && k < n; k++) {
        carla_world w = {0};
        double offset = 0;
        bool started = false;
        for (size_t i = 1; rc == 0 && i < in[k].n; i++) {
            const recd_msg *m = &in[k].v[i];
            if (m->type == RECD_MSG_EVENT) {
                rc = carla_world_event(&w, m->carla_event);
                if (rc == 0)
                    rc = emit(ctx, m, err, errlen);
                continue;
            }
            if (m->type != RECD_MSG_STATE)
                continue;
            double e = m->carla_state->elapsed;
            if (!started && frames > 0)
                offset = end + (gap >= 0 ? (double)gap / 1000.0 : step) - e;
            double t = e + offset;
            if (started)
                step = t - end; /* within one input only: gap < 0 repeats its last step */
            started = true;
            rc = emit_frame(m, ++frames, t, emit, ctx, err, errlen);
            end = t;
        }
        if (rc == 0 && k + 1 < n)
            rc = carla_world_emit_deletes(&w, emit, ctx, err, errlen);
        carla_world_free(&w);
    }
    return rc == 0 ? emit_close(emit, ctx, err, errlen) : rc;
}

const struct recd_format_edit recd_carla__edit = {
    .time_unit = "ms",
    .unit_ms = 1,
    .unit_name = "frame",
    .place = RECD_EDIT_PLACE_FRAME,
    .no_retime = "CARLA's replayer already plays a log at any speed (its time factor), and "
                 "frames hold animation and wall-clock packets no resampling can interpolate",
    .no_transform = "a log replays inside its map: moved actors would leave the map's roads, "
                    "and map actors (traffic lights, signs) stay where the map has them",
    .time_of = carla_time_of,
    .exact_ms = carla_exact_ms,
    .cut = carla_cut,
    .concat = carla_concat,
    .track = recd_carla__track,
    .track_range = recd_carla__track_range,
    .track_points = recd_carla__track_points,
};
