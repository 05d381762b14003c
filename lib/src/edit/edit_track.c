/* SPDX-License-Identifier: MIT */
/* Tracks for plots: every sample of a recording as a point in SI units, through the format's
 * edit hooks (its states read through the message model, or a whole-file track hook for formats
 * read without it). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "edit/edit_internal.h"
#include "base/why.h"
#include "recd/track_point.h"
#include "formats/format_seek.h"
#include "recd/seek_index.h"

typedef struct track_read {
    const struct recd_format_edit *e;
    recd_track_fn on_point;
    void *data;
    edit_progress progress;
} track_read;

static int track_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    track_read *t = ctx;
    edit_progress_step(&t->progress);
    recd_track_point p;
    if (m->type != RECD_MSG_STATE || !t->e->track_point(m, &p))
        return 0;
    return t->on_point(t->data, &p);
}

/* The progress of a whole-file hook, which reports only its end: 0 of 1, then 1 of 1 when done,
 * without counting the file's units for a total (a pass over the whole file). */
static void whole_file_progress(const recd_progress *progress, bool done)
{
    if (progress && progress->fn)
        progress->fn(progress->data, done ? 1 : 0, 1);
}

int recd_track_read(const uint8_t *buf, size_t len, recd_track_fn on_point, void *data,
                    const recd_progress *progress, char *err, size_t errlen)
{
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(buf, len, &what);
    if (!f) {
        recd_why(err, errlen, "not a recording recd knows");
        return -EBADMSG;
    }
    const struct recd_format_edit *e = f->edit;
    if (!e || (!e->track && !e->track_point)) {
        recd_why(err, errlen, "%s files have no track to draw", f->name);
        return -ENOTSUP;
    }
    if (!what.standard) {
        recd_why(err, errlen, "%s: %s", what.kind, what.description);
        return -EBADMSG;
    }
    if (e->track) {
        whole_file_progress(progress, false);
        int rc = e->track(buf, len, on_point, data, err, errlen);
        if (rc >= 0)
            whole_file_progress(progress, true);
        return rc;
    }
    track_read t = {e, on_point, data, {0}};
    recd_edit_input in = {buf, len};
    edit_progress_begin(&t.progress, progress, &in, 1, 1); /* only read */
    int rc = recd_format_export(f, buf, len, track_msg, &t, err, errlen);
    edit_progress_end(&t.progress, rc);
    return rc;
}

int recd_track_points_of(const recd_msg *m, recd_track_fn on_point, void *data)
{
    const recd_format *f = m->type == RECD_MSG_STATE ? recd_format_of_msg(m->format) : NULL;
    recd_track_point p;
    if (!f || !f->edit)
        return 0;
    if (f->edit->track_points)
        return f->edit->track_points(m, on_point, data);
    if (!f->edit->track_point || !f->edit->track_point(m, &p))
        return 0;
    return on_point(data, &p);
}

bool recd_track_can_seek(const uint8_t *buf, size_t len)
{
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(buf, len, &what);
    const struct recd_format_edit *e = f ? f->edit : NULL;
    return e && what.standard && f->seek &&
           ((e->track_point && e->unit_ms && f->seek->export_from) || (e->track && e->track_range));
}

/* A whole-file track (e->track) of a range through the format's own ranged read: 1 when read
 * that way, 0 when the whole file is to be read, or a negative errno. */
static int track_range_whole_file(const recd_format *f, const uint8_t *buf, size_t len,
                                  const uint8_t *index, size_t ilen, double from_s, double to_s,
                                  recd_track_fn on_point, void *data,
                                  const recd_progress *progress, char *err, size_t errlen)
{
    whole_file_progress(progress, false);
    int rc = f->edit->track_range(f, buf, len, index, ilen, from_s, to_s, on_point, data, err,
                                  errlen);
    if (rc > 0)
        whole_file_progress(progress, true);
    return rc;
}

int recd_track_read_range(const uint8_t *buf, size_t len, const uint8_t *index, size_t ilen,
                          double from_s, double to_s, recd_track_fn on_point, void *data,
                          const recd_progress *progress, char *err, size_t errlen)
{
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(buf, len, &what);
    const struct recd_format_edit *e = f ? f->edit : NULL;
    bool whole = !(from_s > 0) && to_s < 0; /* a range of everything gains nothing from a seek */
    if (e && e->track && e->track_range && f->seek && what.standard && !whole && from_s >= 0 &&
        from_s <= 1e12 && to_s <= 1e12) {
        int rc = track_range_whole_file(f, buf, len, index, ilen, from_s, to_s, on_point, data,
                                        progress, err, errlen);
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    if (!e || !e->track_point || !e->unit_ms || !what.standard || whole || !(from_s >= 0) ||
        from_s > 1e12 || to_s > 1e12)
        return recd_track_read(buf, len, on_point, data, progress, err, errlen);
    int64_t from = (int64_t)floor(from_s * 1000.0 / e->unit_ms);
    int64_t to = to_s < 0 ? -1 : (int64_t)ceil(to_s * 1000.0 / e->unit_ms) + 1;
    track_read t = {e, on_point, data, {0}};
    recd_edit_input in = {buf, len};
    edit_progress_begin(&t.progress, progress, &in, 1, 1);
    recd_seek_read range = {from, to, false, NULL};
    int rc = recd_format__export_range(f, buf, len, index, ilen, &range, track_msg, &t, err,
                                       errlen);
    if (rc == 0) {
        edit_progress_end(&t.progress, -ECANCELED);
        return recd_track_read(buf, len, on_point, data, progress, err, errlen);
    }
    edit_progress_end(&t.progress, rc < 0 ? rc : 0);
    return rc < 0 ? rc : 0;
}

/* A sampled read: states are handed on only at the picked times (the first state at or after
 * each), as one decode from a shared start point runs past several picks. */
typedef struct sparse_read {
    track_read t;
    const recd_seek_point *picks;
    size_t next, end;
    uint32_t unit_ms;
} sparse_read;

static int sparse_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    sparse_read *r = ctx;
    int64_t ms = m->type == RECD_MSG_STATE ? recd_edit_msg_time_ms(m) : -1;
    if (ms < 0 || r->next == r->end || ms < r->picks[r->next].time * (int64_t)r->unit_ms)
        return 0;
    while (r->next < r->end && r->picks[r->next].time * (int64_t)r->unit_ms <= ms)
        r->next++; /* this state stands for every pick it reaches */
    return track_msg(&r->t, m, err, errlen);
}

int recd_track_read_sparse(const uint8_t *buf, size_t len, const uint8_t *index, size_t ilen,
                           double from_s, double to_s, size_t reads, recd_track_fn on_point, void *data,
                           char *err, size_t errlen)
{
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(buf, len, &what);
    const struct recd_format_edit *e = f ? f->edit : NULL;
    if (!e || !e->track_point || !e->unit_ms || !what.standard || !f->seek || !f->seek->export_from ||
        !index || !reads || reads > RECD_TRACK_SPARSE_MAX || !(from_s >= 0) || from_s > 1e12 || to_s > 1e12)
        return 0;
    int64_t from = (int64_t)floor(from_s * 1000.0 / e->unit_ms);
    int64_t to = to_s < 0 ? -1 : (int64_t)ceil(to_s * 1000.0 / e->unit_ms);
    recd_seek_point *pts = malloc(reads * sizeof *pts);
    if (!pts)
        return -ENOMEM;
    size_t in_range;
    size_t n = recd_format__index_spread(f, buf, len, index, ilen, from, to, pts, reads, &in_range);
    int rc = n && in_range > reads ? 1 : 0; /* few keyframes: the plain read costs little more */
    sparse_read r = {{e, on_point, data, {0}}, pts, 0, 0, e->unit_ms};
    for (size_t i = 0; rc > 0 && i < n; i = r.end) {
        /* Picks that start reading at the same place (one gzip member) share one decode. */
        r.next = i;
        for (r.end = i + 1; r.end < n && pts[r.end].offset == pts[i].offset; r.end++)
            ;
        recd_seek_read range = {pts[i].time, pts[r.end - 1].time, false, NULL};
        int got = f->seek->export_from(buf, len, &pts[i], &range, sparse_msg, &r, err, errlen);
        if (got < 0)
            rc = got;
    }
    free(pts);
    return rc;
}
