/* SPDX-License-Identifier: MIT */
/* Tracks for plots: every sample of a recording as a point in SI units, through the format's
 * edit hooks (its states read through the message model, or a whole-file track hook for formats
 * read without it). */
#include <errno.h>
#include <math.h>

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
    track_read t = {e, on_point, data, {0}};
    recd_edit_input in = {buf, len};
    edit_progress_begin(&t.progress, progress, &in, 1, 1); /* only read */
    int rc = e->track ? e->track(buf, len, on_point, data, err, errlen) /* reports only its end */
                      : recd_format_export(f, buf, len, track_msg, &t, err, errlen);
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

int recd_track_read_range(const uint8_t *buf, size_t len, const uint8_t *index, size_t ilen,
                          double from_s, double to_s, recd_track_fn on_point, void *data,
                          const recd_progress *progress, char *err, size_t errlen)
{
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(buf, len, &what);
    const struct recd_format_edit *e = f ? f->edit : NULL;
    if (!e || !e->track_point || !e->unit_ms || !what.standard || !(from_s > 0) ||
        from_s > 1e12 || to_s > 1e12)
        return recd_track_read(buf, len, on_point, data, progress, err, errlen);
    int64_t from = (int64_t)floor(from_s * 1000.0 / e->unit_ms);
    int64_t to = to_s < 0 ? -1 : (int64_t)ceil(to_s * 1000.0 / e->unit_ms) + 1;
    track_read t = {e, on_point, data, {0}};
    recd_edit_input in = {buf, len};
    edit_progress_begin(&t.progress, progress, &in, 1, 1);
    int rc = recd_format__export_range(f, buf, len, index, ilen, from, to, track_msg, &t, err,
                                       errlen);
    if (rc == 0) {
        edit_progress_end(&t.progress, -ECANCELED);
        return recd_track_read(buf, len, on_point, data, progress, err, errlen);
    }
    edit_progress_end(&t.progress, rc < 0 ? rc : 0);
    return rc < 0 ? rc : 0;
}
