/* SPDX-License-Identifier: MIT */
/* The sidecar seek index (FILE.idx beside FILE, docs/formats/seek-index.md): what writers append
 * and readers check. Append-only: a 64-byte header naming the format and the data file's
 * identity, then 32-byte entries that each carry their own CRC, so a reader keeps the longest
 * valid prefix after any crash and scans the data file beyond it. Shared by the daemon (written
 * as a part grows), rectool (`rectool index`, seeks) and the tests; not installed. */
#ifndef RECD_SEEK_INDEX_H
#define RECD_SEEK_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/edit.h"
#include "recd/format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_SEEK_INDEX_SUFFIX ".idx"     /* the sidecar of FILE is FILE.idx */
#define RECD_SEEK_INDEX_HEADER_SIZE 64u
#define RECD_SEEK_INDEX_ENTRY_SIZE 32u
#define RECD_SEEK_INDEX_PROBE_SIZE 16u   /* data bytes at an entry's offset its probe CRC covers */

/* True when f's files get a sidecar (it has a seek hook that is not arithmetic). */
bool recd_seek_index_wanted(const recd_format *f);

/* The seek point a scan of f's file finds where unit[0..len) lies in it, a unit (a CARLA frame)
 * its writer just wrote, with offset 0 for the caller to set: for a writer that hands its points
 * to the index instead of having the file scanned. False when it is none, or f cannot tell. A
 * scan also skips a point whose time is before the previous point's: the caller does too. */
bool recd_seek_index_point_at(const recd_format *f, const uint8_t *unit, size_t len,
                              recd_seek_point *p);

/* The 64-byte header of an index of f's file starting with head[0..len) (appended to out).
 * -EAGAIN when head is shorter than the part that identifies the file, -ENOTSUP, -ENOMEM. */
int recd_seek_index_header(const recd_format *f, const uint8_t *head, size_t len, recd_buf *out);

/* The 32-byte entry of p; probe = the RECD_SEEK_INDEX_PROBE_SIZE data bytes at p->offset. */
void recd_seek_index_entry(const recd_seek_point *p, const uint8_t *probe,
                           uint8_t out[RECD_SEEK_INDEX_ENTRY_SIZE]);

/* Writing an index as the data file grows (the daemon): the state between two updates. */
typedef struct recd_seek_index_writer {
    bool header_done;     /* the header was handed out */
    bool have_last;       /* a point was found: scans go on after it */
    recd_seek_point last; /* the last point found */
    int64_t last_kept;    /* time of the last point kept (the format's index_step thins them) */
    bool kept_any;
    uint64_t entries;     /* entries handed out */
} recd_seek_index_writer;

/* Appends to out what the index of f's file data[0..len) (the file so far) lacks: the header
 * the first time, then an entry for every seek point after the last one found. Points whose data
 * is not complete yet are not found (a member or frame cut short), so the index never points
 * past what data holds. 0, -EAGAIN when data is still too short for the header, -ENOTSUP,
 * -ENOMEM. */
int recd_seek_index_grow(const recd_format *f, const uint8_t *data, size_t len,
                         recd_seek_index_writer *w, recd_buf *out);

/* The entry of point p, when f's index keeps it (its index_step thins points), appended to out
 * as recd_seek_index_grow does: for a writer that knows the points it wrote (the header comes
 * first, from recd_seek_index_header). probe = the RECD_SEEK_INDEX_PROBE_SIZE data bytes at
 * p->offset. 0 or -ENOMEM. */
int recd_seek_index_add(const recd_format *f, recd_seek_index_writer *w, const recd_seek_point *p,
                        const uint8_t *probe, recd_buf *out);

/* What an index says about a data file. */
typedef struct recd_seek_index_status {
    bool header_ok;     /* magic, version, sizes, CRC, format and identity all match */
    const char *why;    /* when not: a static reason */
    size_t entries;     /* whole entries in the file */
    size_t valid;       /* the longest valid prefix of them */
    bool tail_garbage;  /* bytes after the last whole entry, or entries after the valid prefix */
    recd_seek_point last; /* the last valid entry (valid > 0) */
} recd_seek_index_status;

/* Checks index[0..ilen) against data[0..len) (f's file). 0, or -ENOTSUP. */
int recd_seek_index_check(const recd_format *f, const uint8_t *data, size_t len,
                          const uint8_t *index, size_t ilen, recd_seek_index_status *st);

/* True when the index needs rebuilding for data: a bad header, an invalid entry, or fewer
 * points than the file holds (the scan beyond the last valid entry finds more). */
bool recd_seek_index_stale(const recd_format *f, const uint8_t *data, size_t len,
                           const uint8_t *index, size_t ilen);

/* recd_edit_cut reading only what the range needs, from the seek point found through
 * index[0..ilen) (NULL/0: scanned for), for formats that can be entered in the middle; the
 * others load the whole file as recd_edit_cut does. Same result. */
int recd_edit_cut_seek(recd_edit_input in, const uint8_t *index, size_t ilen,
                       const recd_cut_opts *o, recd_sink out, const recd_progress *progress,
                       char *err, size_t errlen);

/* Exports the messages of [from, to) of buf (f's time unit; to < 0: the end) as recd_export_msgs
 * does, starting at the seek point of `from` when the format allows: the open first, then the
 * states and events (those before `from` may come too, from the keyframe on), close last. */
int recd_export_msgs_range(const uint8_t *buf, size_t len, const uint8_t *index, size_t ilen,
                           int64_t from, int64_t to, recd_msg_fn on_msg, void *ctx, char *err,
                           size_t errlen);

/* Whether buf's format is read from a seek point (recd_track_read_range stops at its range);
 * false when a range read reads the whole file. */
bool recd_track_can_seek(const uint8_t *buf, size_t len);

/* recd_track_read for a plot of [from_s, to_s] seconds (to_s < 0: the end): from the seek point
 * of from_s when the format allows (points before from_s may come too: the caller filters),
 * else every point. */
int recd_track_read_range(const uint8_t *buf, size_t len, const uint8_t *index, size_t ilen,
                          double from_s, double to_s, recd_track_fn on_point, void *data,
                          const recd_progress *progress, char *err, size_t errlen);

/* An overview of [from_s, to_s] seconds (to_s < 0: the end) for a long file: the states at up
 * to `reads` seek points of the sidecar index[0..ilen) spread evenly over the range, at most one
 * per gzip member (so fewer than reads when members are long), each read alone, instead of
 * every sample. 1 when read that way; 0 when it cannot or would not save work (no sidecar, a
 * format not entered at keyframes, no more indexed points in the range than reads), and the
 * caller reads the range itself; or a negative errno / the callback's value. */
#define RECD_TRACK_SPARSE_MAX 100000u
int recd_track_read_sparse(const uint8_t *buf, size_t len, const uint8_t *index, size_t ilen,
                           double from_s, double to_s, size_t reads, recd_track_fn on_point, void *data,
                           char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
