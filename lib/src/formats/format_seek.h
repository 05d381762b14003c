/* SPDX-License-Identifier: MIT */
/* Internal: how a format is entered in the middle (recd_format.seek). A format with keyframes
 * lists its seek points (scan) and reads on from one (export_from); a format of fixed-size
 * blocks computes the point instead (direct) and needs no index. The sidecar index file that
 * stores scanned points is generic: formats/format_seek.c, docs/formats/seek-index.md. */
#ifndef RECD_FORMAT_SEEK_H
#define RECD_FORMAT_SEEK_H

#include "recd/format.h"

/* What a ranged read is for: the range asked for, in the format's unit, and whether a cut reads
 * it. A cut needs what makes its first frame stand alone (CARLA: every actor alive there, added
 * before the seek point, comes first as events) and stops by itself at the first state at or
 * after `to`. */
typedef int (*recd_msg_take_fn)(void *ctx, recd_msg *m, char *err, size_t errlen); /* owns m */
typedef struct recd_seek_read {
    int64_t from, to; /* to < 0: to the end */
    bool for_cut;
    /* NULL, or where a format may hand the messages it made (they are the taker's to free, even
     * on failure) instead of on_msg, which copies what it keeps: a copy less per message. */
    recd_msg_take_fn take;
} recd_seek_read;
#define RECD_SEEK_READ_WHOLE 1 /* export_from: read the whole file instead */

/* One seek point found by a scan; non-zero stops the scan and is returned. */
typedef int (*recd_seek_point_fn)(void *ctx, const recd_seek_point *p);

struct recd_format_seek {
    /* Least time between two points an index keeps (0: every point): a sidecar of a format
     * that seeks by frame keeps one a second, and the seek scans on from it. */
    int64_t index_step;
    /* Bytes at the file's start that no writer rewrites later (the header without the fields
     * a finalize patches): the data file's identity in its index. 0: the file is too short. */
    size_t (*stable_len)(const uint8_t *buf, size_t len);
    /* Every seek point after `after` (NULL: from the start), in file order, through fn. 0 at
     * the end of the file or at the first damage, a negative errno, or fn's value. */
    int (*scan)(const uint8_t *buf, size_t len, const recd_seek_point *after, recd_seek_point_fn fn,
                void *ctx);
    /* The point scan finds at unit[0], the start of a unit the format's writer wrote whole (a
     * CARLA frame), with offset 0; false when scan would not take it. NULL: the points of a
     * writer's output are only known by a scan (or by its encoder: Recap keyframes). */
    bool (*point_at)(const uint8_t *unit, size_t len, recd_seek_point *p);
    /* Fixed-size records: the point for `time` computed from the file alone; NULL otherwise. */
    int (*direct)(const uint8_t *buf, size_t len, int64_t time, recd_seek_point *out);
    /* The file as export_msgs gives it (open first, close last), leaving out the states and
     * events before p's keyframe and what follows the first state or event at or after r->to
     * (to < 0: none). 0, RECD_SEEK_READ_WHOLE when it cannot start there (before delivering
     * anything: the caller reads the whole file), or a negative errno. NULL: readers must start
     * at the beginning. */
    int (*export_from)(const uint8_t *buf, size_t len, const recd_seek_point *p,
                       const recd_seek_read *r, recd_msg_fn on_msg, void *ctx, char *err,
                       size_t errlen);
};

/* The messages of [r->from, r->to) and what a cut needs before them (the format's export_from,
 * from the seek point of `from` found through index): 1 when done that way, 0 when the format
 * cannot (the caller reads the whole file), or a negative errno. */
int recd_format__export_range(const recd_format *f, const uint8_t *buf, size_t len,
                              const uint8_t *index, size_t index_len, const recd_seek_read *r,
                              recd_msg_fn on_msg, void *ctx, char *err, size_t errlen);

/* Up to max seek points from the valid prefix of index (sidecar of buf) whose times lie in
 * [from, to] (to < 0: no end), spread evenly over them and at most one per start offset (a
 * point reads from its offset, so two in one gzip member would decode it twice), in time order;
 * how many were put in out. *in_range: the valid entries in [from, to]. 0 when there is no
 * usable index. */
size_t recd_format__index_spread(const recd_format *f, const uint8_t *buf, size_t len,
                                 const uint8_t *index, size_t index_len, int64_t from, int64_t to,
                                 recd_seek_point *out, size_t max, size_t *in_range);

#endif
