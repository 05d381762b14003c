/* SPDX-License-Identifier: MIT */
/* Internal: how the editing operations (recd/edit.h) treat one format. The edit engine
 * (lib/src/edit/) loads a file as messages, asks these hooks what a message's time is and how to
 * change it, and writes the result through the format's importer. A hook left NULL means the
 * operation does not apply to the format. */
#ifndef RECD_FORMAT_EDIT_H
#define RECD_FORMAT_EDIT_H

#include "recd/edit.h"
#include "recd/format.h"

/* A whole recording as messages (open, ..., close), each owned. */
typedef struct recd_edit_msgs {
    recd_msg *v;
    size_t n, cap;
    const recd_format *format;
} recd_edit_msgs;

/* The rotation and translation of a transform, ready to apply: p' = pivot + R (p - pivot) + t.
 * cos_a/sin_a are exact for multiples of 90 degrees. */
typedef struct recd_edit_xform {
    double cos_a, sin_a;
    double half_cos, half_sin; /* of half the angle, for quaternions */
    double pivot[3];
    double translate[3];
} recd_edit_xform;

/* How diff names the place of a message (edit_diff.c). */
typedef enum recd_edit_place {
    RECD_EDIT_PLACE_TIME,  /* "tick 40 state": by its time in time_unit (.recap) */
    RECD_EDIT_PLACE_BLOCK, /* "block 12 (t 1200 ms)": by the states before it (.rec) */
    RECD_EDIT_PLACE_FRAME  /* "frame 3 (t 100 ms)": a state opens a frame, the events after it
                              belong to it: "frame 3 event" (CARLA .log) */
} recd_edit_place;

/* A format's cut in progress (cut_start). */
typedef struct recd_edit_cutter recd_edit_cutter;

struct recd_format_edit {
    const char *time_unit; /* "ms", "tick" */
    uint32_t unit_ms;      /* milliseconds in one time_unit: 1, or 50 for Recap's ticks */
    const char *unit_name; /* what diff names a position by: "block", "tick", "frame" */
    recd_edit_place place; /* and how it counts it */
    /* Why retime / transform do not apply, when their hooks are NULL. */
    const char *no_retime, *no_transform;

    /* Time of a state or event in time_unit; flush messages have none (return -1). */
    int64_t (*time_of)(const recd_msg *m);
    /* For clocks finer than time_unit (CARLA's elapsed seconds): the exact time in ms, below
     * 2^63, or < 0 for none. time_of rounds it; recd_edit_msg_time_ms() truncates it, as replays
     * always have. NULL: time_of x unit_ms is exact. */
    double (*exact_ms)(const recd_msg *m);
    /* cut: writes the messages of [o->from, o->to) through emit, open first, close last. */
    int (*cut)(const recd_edit_msgs *in, const recd_cut_opts *o, recd_msg_fn emit, void *ctx,
               char *err, size_t errlen);
    /* The same cut fed one message at a time, so a ranged read need not hold the range (NULL:
     * cut only): cut_start (NULL: no memory); cut_take gets the open, then the states, events
     * and flushes in file order, and owns m (frees it once done with it); cut_finish writes the
     * end when rc == 0 and frees c. Its failures are as cut's. */
    recd_edit_cutter *(*cut_start)(const recd_cut_opts *o, recd_msg_fn emit, void *ctx);
    int (*cut_take)(recd_edit_cutter *c, recd_msg *m, char *err, size_t errlen);
    int (*cut_finish)(recd_edit_cutter *c, int rc, char *err, size_t errlen);
    /* concat: the inputs (same format, checked by the engine) one after the other. */
    int (*concat)(const recd_edit_msgs *in, size_t n, int64_t gap, recd_msg_fn emit, void *ctx,
                  char *err, size_t errlen);

    /* Retime (NULL: not supported); only for formats whose states own no heap memory, as the
     * engine copies them by value. */
    void (*set_time)(recd_msg *m, int64_t t);
    /* True when b changes none of a's controls (keys, weapon, ...): the resampler may drop b. */
    bool (*same_controls)(const recd_msg *a, const recd_msg *b);
    /* out (a copy of a) gets a's and b's continuous fields mixed at f in [0, 1]. */
    void (*interpolate)(const recd_msg *a, const recd_msg *b, double f, recd_msg *out);
    void (*scale_velocity)(recd_msg *m, double k);

    /* Transform (NULL: not supported). position gives a state's position (false: none). */
    bool (*position)(const recd_msg *m, double pos[3]);
    void (*transform)(recd_msg *m, const recd_edit_xform *x);

    /* Plots: a state as a track point (false: the message is not a sample). */
    bool (*track_point)(const recd_msg *m, recd_track_point *out);
    /* Or, for formats read without the message model (foreign replays), the whole file at once. */
    int (*track)(const uint8_t *buf, size_t len, recd_track_fn on_point, void *data, char *err,
                 size_t errlen);
    /* And a plot of [from_s, to_s] seconds of track time (to_s < 0: the end) read on from the
     * seek point of from_s, found through f's seek (index: its sidecar, or NULL): the points
     * `track` gives in that range (others may come too: the caller filters). 1 when read that
     * way, 0 when it cannot start there (nothing was delivered: the caller reads the whole
     * file), or a negative errno. NULL: a range reads the whole file. */
    int (*track_range)(const recd_format *f, const uint8_t *buf, size_t len, const uint8_t *index,
                       size_t ilen, double from_s, double to_s, recd_track_fn on_point, void *data,
                       char *err, size_t errlen);

    /* Clears what says only how a file is packed, not what it holds (a Recap open's member
     * compressor), before diff compares (member ends are skipped there). NULL: nothing. */
    void (*clear_packing)(recd_msg *m);

    /* A message format with no table entry of its own whose states these hooks read too (a
     * session whose parts are files of this format); NONE: none. */
    recd_msg_format reads_also;
    /* One state of several actors as points, for a live view (the web console); NULL: the
     * state is one actor's, track_point gives it. */
    int (*track_points)(const recd_msg *m, recd_track_fn on_point, void *data);
};

/* The engine's list helpers, for the per-format hooks. */
int recd_edit__msgs_push(recd_edit_msgs *l, const recd_msg *m); /* deep copy */
int recd_edit__msgs_take(recd_edit_msgs *l, recd_msg *m); /* moves m in; frees it on failure */
void recd_edit__msgs_free(recd_edit_msgs *l);

#endif
