/* SPDX-License-Identifier: MIT */
/* Editing whole recordings: cut, retime, transform, concat, split and diff, for every format whose
 * table entry has edit hooks (which operations each format has: docs/editing.md). Each operation
 * reads a valid recording (recognised by content) and writes a whole new file into a sink; the
 * exact rule of each is in docs/editing.md. Times are in the format's own unit
 * (recd_edit_time_unit()): milliseconds of elapsed game time, or a game's fixed ticks. Errors are negative errnos with a reason in err: -EBADMSG for an input
 * that cannot be edited, -EINVAL for options that do not fit it, -ENOTSUP for an operation the
 * format does not have.
 *
 * progress (may be NULL, or have a NULL fn) watches a long edit: done out of total counts messages,
 * each read from an input once and written (or compared) once. The total is an estimate from the
 * inputs' headers until they are loaded, then exact; it is called every few thousand messages and
 * ends with done == total on success. */
#ifndef RECD_EDIT_H
#define RECD_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "ms" or "tick": the unit edit times are given in for f; NULL when f cannot be edited. */
RECD_API const char *recd_edit_time_unit(const recd_format *f);
/* Milliseconds in one of those units: 1 for "ms", a tick's length for "tick"; 0 when f cannot be
 * edited. */
RECD_API uint32_t recd_edit_unit_ms(const recd_format *f);
/* The time of message m in ms from its recording's start, as its format's edit entry reads it
 * (the time in the unit above x its ms; a finer clock's time truncated to whole ms), for
 * replaying a recording at its pace. -1 for a message without a time of its own (open, close,
 * flush, events that carry none) or of a format that cannot be edited. */
RECD_API int64_t recd_edit_msg_time_ms(const recd_msg *m);

/* One input file in memory. */
typedef struct recd_edit_input {
    const uint8_t *data;
    size_t len;
} recd_edit_input;

/* cut: keeps [from, to) of the input's time line (to < 0: up to the end). */
typedef struct recd_cut_opts {
    int64_t from;
    int64_t to;     /* exclusive; -1 = the end */
    bool keep_time; /* millisecond formats: keep the original times instead of starting at 0 */
} recd_cut_opts;

RECD_API int recd_edit_cut(recd_edit_input in, const recd_cut_opts *o, recd_sink out,
                           const recd_progress *progress, char *err, size_t errlen);

/* Most samples a resampling retime writes (-E2BIG beyond): 7 days at 20 Hz fit, while a hostile
 * file's few samples spread over a 32-bit millisecond clock's 49 days cannot make gigabytes. */
#define RECD_EDIT_MAX_SAMPLES (16u * 1024u * 1024u)

/* retime: speed > 0 plays the recording that many times faster (times divided by speed, velocities
 * multiplied by it); rate_hz > 0 then resamples it on a regular grid of 1000/rate_hz ms,
 * interpolating, while every sample whose controls (keys, weapon, ...) change is kept. */
typedef struct recd_retime_opts {
    double speed;   /* 0 = 1 */
    double rate_hz; /* 0 = keep the samples */
} recd_retime_opts;

RECD_API int recd_edit_retime(recd_edit_input in, const recd_retime_opts *o, recd_sink out,
                              const recd_progress *progress, char *err, size_t errlen);

/* transform: p' = pivot + Rz(rotate_z_deg) (p - pivot) + translate; velocities and rotations
 * turn with it. The pivot defaults to the first sample's position. */
typedef struct recd_transform_opts {
    double translate[3];
    double rotate_z_deg; /* counter-clockwise seen from above: +90 maps (x, y) to (-y, x) */
    bool has_pivot;
    double pivot[3];
} recd_transform_opts;

RECD_API int recd_edit_transform(recd_edit_input in, const recd_transform_opts *o, recd_sink out,
                                 const recd_progress *progress, char *err, size_t errlen);

/* concat: the inputs (all one format) one after the other, times continuing. gap >= 0 is the time
 * between one input's last sample and the next one's first; gap < 0 takes the previous input's
 * last step (millisecond formats) or its end tick (tick formats). */
RECD_API int recd_edit_concat(const recd_edit_input *in, size_t n, int64_t gap, recd_sink out,
                              const recd_progress *progress, char *err, size_t errlen);

/* split: pieces [0, at[0]), [at[0], at[1]), ..., [at[n-1], end), each cut with opts' keep_time.
 * piece_sink(data, i, &sink) gives the sink of piece i (0 or a negative errno to stop). Pieces that
 * would hold nothing are an error (-EINVAL), so no empty file is ever written. at must increase. */
typedef int (*recd_edit_piece_fn)(void *data, size_t i, recd_sink *sink);
RECD_API int recd_edit_split(recd_edit_input in, const int64_t *at, size_t n, bool keep_time,
                             recd_edit_piece_fn piece_sink, void *data,
                             const recd_progress *progress, char *err, size_t errlen);

/* diff: 0 when a and b hold the same messages, 1 when they differ (out then says where: the first
 * differing sample (block, tick, frame), field by field, one "field: A vs B" line each), or a
 * negative errno. */
RECD_API int recd_edit_diff(recd_edit_input a, recd_edit_input b, recd_buf *out,
                            const recd_progress *progress, char *err, size_t errlen);

/* ---- Tracks: what plots draw ------------------------------------------------------------------ */

typedef enum recd_track_kind {
    RECD_TRACK_ONFOOT = 1,  /* health and armour */
    RECD_TRACK_VEHICLE = 2, /* vehicle health */
    RECD_TRACK_PLAYER = 3   /* a game's player with health */
} recd_track_kind;

/* One sample of one actor, in SI units. Values a format lacks are NaN. */
typedef struct recd_track_point {
    int64_t actor;      /* 0 for single-actor recordings */
    recd_track_kind kind;
    double t;           /* seconds from the start */
    double x, y, z;     /* map coordinates: x east, y north, z up */
    double speed;       /* m/s, from the recorded velocity */
    double health;      /* 0..100 (on foot, player) */
    double armour;      /* 0..100 (on foot) */
    double vehicle_health; /* 0..1000 (vehicle) */
} recd_track_point;

typedef int (*recd_track_fn)(void *data, const recd_track_point *p);

/* Every sample of a recording as track points, in time order (per actor). 0, -ENOTSUP when the
 * format has no track, -EBADMSG, or the callback's non-zero return. progress (may be NULL) counts
 * the messages read against the header's estimate, as for the edits above. */
RECD_API int recd_track_read(const uint8_t *buf, size_t len, recd_track_fn on_point, void *data,
                             const recd_progress *progress, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
