/* SPDX-License-Identifier: MIT */
/* cut and split: one time range, or consecutive ranges, of a recording into new files. What a
 * range keeps is the format's cut hook; the engine checks the range and writes the file. */
#include <errno.h>
#include <stdint.h>
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

/* The format of in when a range of it can be read from a seek point, else NULL. */
static const recd_format *range_format(recd_edit_input in)
{
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(in.data, in.len, &what);
    return f && f->edit && what.standard && recd_format_is_recorded(f) ? f : NULL;
}

/* The messages a cut of o needs, from the seek point of o->from: 1 when loaded that way, 0 when
 * the format cannot be entered in the middle, or a negative errno. */
static int load_range(recd_edit_input in, const recd_format *f, const uint8_t *index, size_t ilen,
                      const recd_cut_opts *o, recd_edit_msgs *l, edit_progress *p, char *err,
                      size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->format = f;
    range_loading loading = {l, p};
    recd_seek_read range = {o->from, o->to, true, take_range};
    int rc = recd_format__export_range(f, in.data, in.len, index, ilen, &range, push_range,
                                       &loading, err, errlen);
    if (rc <= 0)
        recd_edit__msgs_free(l);
    return rc;
}

/* A cut fed by the ranged read as it goes (recd_format_edit.cut_take). The cut's first failure
 * waits for the end of the read: a failed read names its own, as when the range is loaded. */
typedef struct range_cut {
    const struct recd_format_edit *e;
    recd_edit_cutter *cutter;
    edit_out out;
    edit_progress *progress;
    bool fed; /* a message came: the read cannot fall back to the whole file any more */
    int rc;
    char why[256];
} range_cut;

static int cut_taken(void *ctx, recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    range_cut *c = ctx;
    c->fed = true;
    edit_progress_step(c->progress);
    if (c->rc < 0) {
        recd_msg_free(m);
        return 0;
    }
    c->rc = c->e->cut_take(c->cutter, m, c->why, sizeof c->why);
    return 0;
}

static int cut_lent(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    recd_msg copy;
    int rc = recd_msg_copy(&copy, m);
    return rc < 0 ? rc : cut_taken(ctx, &copy, err, errlen);
}

/* The cut of o streamed from the seek point of o->from: 1 when done that way, 0 when the format
 * cannot be entered in the middle (nothing was written), or a negative errno. */
static int cut_streamed(recd_edit_input in, const recd_format *f, const uint8_t *index,
                        size_t ilen, const recd_cut_opts *o, recd_sink sink, edit_progress *p,
                        char *err, size_t errlen)
{
    range_cut c = {.e = f->edit, .progress = p};
    if (o->to >= 0 && o->to <= o->from) { /* told once the read has ended, as a loaded cut does */
        c.rc = -EINVAL;
        recd_why(c.why, sizeof c.why, "the range [%lld, %lld) %s is empty", (long long)o->from,
                 (long long)o->to, f->edit->time_unit);
    }
    edit_out_begin(&c.out, f->msg_format, sink, p);
    if (c.rc == 0 && !(c.cutter = f->edit->cut_start(o, edit_out_msg, &c.out))) {
        edit_out_end(&c.out, -ENOMEM, err, errlen);
        return -ENOMEM;
    }
    /* A guess: read and written, about two messages a unit of the range (its states). */
    uint64_t span = o->to >= 0 ? (uint64_t)(o->to - o->from) : 0;
    if (span)
        edit_progress_loaded(p, span < UINT64_MAX / 4 ? 2 * span : span);
    recd_seek_read range = {o->from, o->to, true, cut_taken};
    int rc = recd_format__export_range(f, in.data, in.len, index, ilen, &range, cut_lent, &c, err,
                                       errlen);
    if (rc == 0 && c.fed)
        rc = -EPROTO; /* a read that falls back must not have delivered anything */
    if (rc > 0 && c.rc < 0)
        recd_why(err, errlen, "%s", c.why);
    int cut_rc = rc > 0 ? c.rc : rc < 0 ? rc : -ECANCELED;
    if (c.cutter)
        cut_rc = c.e->cut_finish(c.cutter, cut_rc, err, errlen);
    cut_rc = edit_out_end(&c.out, cut_rc, err, errlen);
    return rc <= 0 ? rc : cut_rc < 0 ? cut_rc : 1;
}

int recd_edit_cut_seek(recd_edit_input in, const uint8_t *index, size_t ilen,
                       const recd_cut_opts *o, recd_sink out, const recd_progress *progress,
                       char *err, size_t errlen)
{
    edit_progress p;
    /* No guess from the input: a range is a part of it, and a guess may read it all (a CARLA
     * log's frames are counted by a scan). The total is known once the range is loaded, or
     * guessed from the range when it streams. */
    edit_progress_begin(&p, progress, &in, 0, 2);
    const recd_format *f = o->from >= 0 ? range_format(in) : NULL;
    recd_edit_msgs l = {0};
    int rc = 0;
    if (f && f->edit->cut_start) {
        rc = cut_streamed(in, f, index, ilen, o, out, &p, err, errlen);
        if (rc != 0) {
            edit_progress_end(&p, rc);
            return rc < 0 ? rc : 0;
        }
    } else if (f) {
        rc = load_range(in, f, index, ilen, o, &l, &p, err, errlen);
    }
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
