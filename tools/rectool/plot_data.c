/* SPDX-License-Identifier: MIT */
/* Plot series from recordings: every track point librecd reads, grouped by file and actor. */
#include "plot_data.h"

#include "recd/seek_index.h"

#include "base/buf_grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct plot_load {
    rt_plot_data *d;
    const char *name;
    size_t first; /* this file's first series */
    double from, to;
} plot_load;

static rt_plot_series *series_of(plot_load *l, const recd_track_point *p)
{
    rt_plot_data *d = l->d;
    for (size_t i = d->n; i > l->first; i--)
        if (d->s[i - 1].actor == p->actor)
            return &d->s[i - 1];
    rt_plot_series *room = recd__array_room(d->s, &d->cap, d->n, sizeof *d->s, 8);
    if (!room)
        return NULL;
    d->s = room;
    rt_plot_series *s = &d->s[d->n++];
    memset(s, 0, sizeof *s);
    s->file = d->files;
    s->actor = p->actor;
    s->kind = p->kind;
    if (p->actor == 0)
        snprintf(s->label, sizeof s->label, "%s", l->name);
    else
        snprintf(s->label, sizeof s->label, "%s #%lld", l->name, (long long)p->actor);
    return s;
}

static int on_point(void *data, const recd_track_point *p)
{
    plot_load *l = data;
    if (p->t < l->from || (l->to >= 0 && p->t > l->to))
        return 0;
    if (l->d->points >= RT_PLOT_MAX_POINTS)
        return -E2BIG;
    rt_plot_series *s = series_of(l, p);
    if (!s)
        return -ENOMEM;
    recd_track_point *pts = recd__array_room(s->pts, &s->cap, s->n, sizeof *s->pts, 1024);
    if (!pts)
        return -ENOMEM;
    s->pts = pts;
    s->pts[s->n++] = *p;
    l->d->points++;
    return 0;
}

/* whole: every point is read (and those outside [from, to] dropped), with no seek. */
static int add_file(rt_plot_data *d, const char *name, const uint8_t *buf, size_t len,
                    const uint8_t *index, size_t ilen, bool whole, double from, double to,
                    const recd_progress *progress, char *err, size_t errlen)
{
    plot_load l = {d, name, d->n, from, to};
    int rc = whole ? recd_track_read(buf, len, on_point, &l, progress, err, errlen)
                   : recd_track_read_range(buf, len, index, ilen, from, to, on_point, &l, progress,
                                           err, errlen);
    if (rc == -E2BIG)
        snprintf(err, errlen, "more than %u points to draw; narrow the time range with --from/--to",
                 RT_PLOT_MAX_POINTS);
    d->files++;
    return rc < 0 ? rc : 0;
}

int rt_plot_add_file(rt_plot_data *d, const char *name, const uint8_t *buf, size_t len,
                     double from, double to, const recd_progress *progress, char *err,
                     size_t errlen)
{
    return add_file(d, name, buf, len, NULL, 0, true, from, to, progress, err, errlen);
}

int rt_plot_add_file_indexed(rt_plot_data *d, const char *name, const uint8_t *buf, size_t len,
                             const uint8_t *index, size_t ilen, double from, double to,
                             const recd_progress *progress, char *err, size_t errlen)
{
    return add_file(d, name, buf, len, index, ilen, false, from, to, progress, err, errlen);
}

void rt_plot_data_free(rt_plot_data *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->s[i].pts);
    free(d->s);
    memset(d, 0, sizeof *d);
}
