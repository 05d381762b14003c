/* SPDX-License-Identifier: MIT */
/* cut and split: one time range, or consecutive ranges, of a recording into new files. What a
 * range keeps is the format's cut hook; the engine checks the range and writes the file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "edit/edit_internal.h"
#include "base/why.h"
#include "formats/format_seek.h"
#include "recd/seek_index.h"

static int cut_loaded(const recd_edit_msgs *l, const recd_cut_opts *o, recd_sink sink,
                      edit_progress *progress, char *err, size_t errlen)
{
    const struct recd_format_edit *e = edit_hooks(l);
    if (!e->cut)
        return edit_unsupported(l, "cut", NULL, err, errlen);
    if (o->from < 0 || (o->to >= 0 && o->to <= o->from)) {
        recd_why(err, errlen, "the range [%lld, %lld) %s is empty", (long long)o->from,
                (long long)o->to, e->time_unit);
        return -EINVAL;
    }
    edit_out out;
    edit_out_begin(&out, l->format->msg_format, sink, progress);
    int rc = e->cut(l, o, edit_out_msg, &out, err, errlen);
    return edit_out_end(&out, rc, err, errlen);
}

int recd_edit_cut(recd_edit_input in, const recd_cut_opts *o, recd_sink out,
                  const recd_progress *progress, char *err, size_t errlen)
{
    edit_progress p;
    edit_progress_begin(&p, progress, &in, 1, 2);
    recd_edit_msgs l;
    int rc = edit_load(in, &l, &p, err, errlen);
    if (rc < 0)
        return rc;
    edit_progress_loaded(&p, l.n); /* at most: a cut writes a part of them */
    rc = cut_loaded(&l, o, out, &p, err, errlen);
    recd_edit__msgs_free(&l);
    edit_progress_end(&p, rc);
    return rc;
}

typedef struct range_loading {
    recd_edit_msgs *list;
    edit_progress *progress;
} range_loading;

static int push_range(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    range_loading *l = ctx;
    edit_progress_step(l->progress);
    return recd_edit__msgs_push(l->list, m);
}

static int take_range(void *ctx, recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    range_loading *l = ctx;
    edit_progress_step(l->progress);
    return recd_edit__msgs_take(l->list, m);
}

/* The messages a cut of o needs, from the seek point of o->from: 1 when loaded that way, 0 when
 * the format cannot be entered in the middle, or a negative errno. */
static int load_range(recd_edit_input in, const uint8_t *index, size_t ilen,
                      const recd_cut_opts *o, recd_edit_msgs *l, edit_progress *p, char *err,
                      size_t errlen)
{
    memset(l, 0, sizeof *l);
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(in.data, in.len, &what);
    if (!f || !f->edit || !what.standard || !recd_format_is_recorded(f))
        return 0;
    l->format = f;
    range_loading loading = {l, p};
    recd_seek_read range = {o->from, o->to, true, take_range};
    int rc = recd_format__export_range(f, in.data, in.len, index, ilen, &range, push_range,
                                       &loading, err, errlen);
    if (rc <= 0)
        recd_edit__msgs_free(l);
    return rc;
}

int recd_edit_cut_seek(recd_edit_input in, const uint8_t *index, size_t ilen,
                       const recd_cut_opts *o, recd_sink out, const recd_progress *progress,
                       char *err, size_t errlen)
{
    edit_progress p;
    /* No guess from the input: a range is a part of it, and a guess may read it all (a CARLA
     * log's frames are counted by a scan). The total is known once the range is loaded. */
    edit_progress_begin(&p, progress, &in, 0, 2);
    recd_edit_msgs l;
    int rc = o->from >= 0 ? load_range(in, index, ilen, o, &l, &p, err, errlen) : 0;
    if (rc == 0) {
        edit_progress_end(&p, -ECANCELED);
        return recd_edit_cut(in, o, out, progress, err, errlen);
    }
    if (rc < 0) {
        edit_progress_end(&p, rc);
        return rc;
    }
    edit_progress_loaded(&p, l.n);
    rc = cut_loaded(&l, o, out, &p, err, errlen);
    recd_edit__msgs_free(&l);
    edit_progress_end(&p, rc);
    return rc;
}

int recd_edit_split(recd_edit_input in, const int64_t *at, size_t n, bool keep_time,
                    recd_edit_piece_fn piece_sink, void *data, const recd_progress *progress,
                    char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        if (at[i] <= 0 || (i > 0 && at[i] <= at[i - 1])) {
            recd_why(err, errlen, "split points must be positive and increasing (%lld)",
                     (long long)at[i]);
            return -EINVAL;
        }
    }
    edit_progress p;
    edit_progress_begin(&p, progress, &in, 1, 2);
    recd_edit_msgs l;
    int rc = edit_load(in, &l, &p, err, errlen);
    if (rc == 0)
        edit_progress_loaded(&p, l.n); /* the pieces hold every message about once */
    for (size_t i = 0; rc == 0 && i <= n; i++) {
        recd_cut_opts o = {i == 0 ? 0 : at[i - 1], i == n ? -1 : at[i], keep_time};
        recd_sink sink;
        rc = piece_sink(data, i, &sink);
        if (rc == 0)
            rc = cut_loaded(&l, &o, sink, &p, err, errlen);
        if (rc < 0 && err && errlen) {
            char inner[200];
            snprintf(inner, sizeof inner, "%s", err);
            recd_why(err, errlen, "piece %zu: %s", i + 1, inner);
        }
    }
    recd_edit__msgs_free(&l);
    edit_progress_end(&p, rc);
    return rc;
}
