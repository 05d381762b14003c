/* SPDX-License-Identifier: MIT */
/* The edit engine's plumbing: a recording in as an owned message list (through the format's
 * exporter), messages out as a file (through its importer). */
#include "edit/edit_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf_grow.h"
#include "base/why.h"

/* Bound on what a list may hold: 256 Mi messages is far beyond any real recording and keeps the
 * array's size computation far from overflow. */
#define EDIT_MAX_MSGS ((size_t)1 << 28)

int recd_edit__msgs_push(recd_edit_msgs *l, const recd_msg *m)
{
    if (l->n == l->cap) {
        if (l->cap >= EDIT_MAX_MSGS)
            return -E2BIG;
        recd_msg *v = recd__array_room(l->v, &l->cap, l->n, sizeof *v, 256);
        if (!v)
            return -ENOMEM;
        l->v = v;
    }
    int rc = recd_msg_copy(&l->v[l->n], m);
    if (rc < 0)
        return rc;
    l->n++;
    return 0;
}

int recd_edit__msgs_take(recd_edit_msgs *l, recd_msg *m)
{
    if (l->n == l->cap) {
        recd_msg *v = l->cap >= EDIT_MAX_MSGS ? NULL
                                              : recd__array_room(l->v, &l->cap, l->n, sizeof *v, 256);
        if (!v) {
            recd_msg_free(m);
            return l->cap >= EDIT_MAX_MSGS ? -E2BIG : -ENOMEM;
        }
        l->v = v;
    }
    l->v[l->n++] = *m;
    return 0;
}

void recd_edit__msgs_free(recd_edit_msgs *l)
{
    for (size_t i = 0; i < l->n; i++)
        recd_msg_free(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

typedef struct edit_loading {
    recd_edit_msgs *list;
    edit_progress *progress;
} edit_loading;

static int push_cb(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    edit_loading *l = ctx;
    edit_progress_step(l->progress);
    return recd_edit__msgs_push(l->list, m);
}

int edit_load(recd_edit_input in, recd_edit_msgs *out, edit_progress *progress, char *err,
              size_t errlen)
{
    memset(out, 0, sizeof *out);
    recd_sniff_result what;
    const recd_format *f = recd_format_sniff(in.data, in.len, &what);
    if (!f) {
        recd_why(err, errlen, "not a recording recd knows");
        return -EBADMSG;
    }
    if (!f->edit || !recd_format_is_recorded(f)) {
        recd_why(err, errlen, "%s files cannot be edited", f->name);
        return -ENOTSUP;
    }
    if (!what.standard) {
        recd_why(err, errlen, "%s: %s", what.kind, what.description);
        return -EBADMSG;
    }
    out->format = f;
    edit_loading loading = {out, progress};
    int rc = recd_format_export(f, in.data, in.len, push_cb, &loading, err, errlen);
    if (rc < 0) {
        if (err && errlen && !err[0])
            recd_why(err, errlen, "reading the recording: %s", recd_strerror(rc));
        recd_edit__msgs_free(out);
        return rc;
    }
    return 0;
}

const struct recd_format_edit *edit_hooks(const recd_edit_msgs *l)
{
    return l->format ? l->format->edit : NULL;
}

void edit_out_begin(edit_out *o, recd_msg_format format, recd_sink sink, edit_progress *progress)
{
    recd_importer_init(&o->im, format, sink);
    o->progress = progress;
}

int edit_out_msg(void *out, const recd_msg *m, char *err, size_t errlen)
{
    edit_out *o = out;
    edit_progress_step(o->progress);
    return recd_importer_msg(&o->im, m, err, errlen);
}

int edit_out_end(edit_out *o, int rc, char *err, size_t errlen)
{
    if (rc == 0)
        rc = recd_importer_finish(&o->im, err, errlen);
    recd_importer_free(&o->im);
    return rc;
}

int edit_unsupported(const recd_edit_msgs *l, const char *op, const char *why, char *err,
                     size_t errlen)
{
    recd_why(err, errlen, "%s is not available for %s files%s%s", op, l->format->name,
             why ? ": " : "", why ? why : "");
    return -ENOTSUP;
}

const char *recd_edit_time_unit(const recd_format *f)
{
    return f && f->edit ? f->edit->time_unit : NULL;
}

uint32_t recd_edit_unit_ms(const recd_format *f)
{
    return f && f->edit ? f->edit->unit_ms : 0;
}

/* The edit entry that reads m: its format's, or that of the entry that reads m's format too
 * (recd_format_edit.reads_also). */
static const struct recd_format_edit *edit_of_msg(const recd_msg *m)
{
    const recd_format *f = recd_format_of_msg(m->format);
    if (f)
        return f->edit;
    for (size_t i = 0; m->format != RECD_MSG_FMT_NONE && (f = recd_format_at(i)) != NULL; i++)
        if (f->edit && f->edit->reads_also == m->format)
            return f->edit;
    return NULL;
}

int64_t recd_edit_msg_time_ms(const recd_msg *m)
{
    const struct recd_format_edit *e = m ? edit_of_msg(m) : NULL;
    if (!e || !e->time_of || !e->unit_ms)
        return -1;
    if (e->exact_ms) {
        double ms = e->exact_ms(m);
        return ms >= 0 ? (int64_t)ms : -1; /* truncated: never before its time */
    }
    int64_t t = e->time_of(m);
    if (t < 0)
        return -1;
    return t > INT64_MAX / e->unit_ms ? INT64_MAX : t * (int64_t)e->unit_ms;
}
