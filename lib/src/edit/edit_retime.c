/* SPDX-License-Identifier: MIT */
/* retime: speed a recording up or down (times divided by the speed, velocities multiplied by it)
 * and optionally resample it on a regular grid. Grid samples interpolate between the two blocks
 * around them (the format's interpolate hook: positions linearly, rotations by slerp); every block
 * that changes a control (keys, weapon, ...) is kept as it was, at its own time, as are the first
 * and the last block. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "edit/edit_internal.h"
#include "base/why.h"

typedef struct retime {
    const struct recd_format_edit *e;
    double speed;
    edit_out out;
    char *err;
    size_t errlen;
} retime;

/* Emits a copy of m at time t (already scaled), velocities scaled by the speed. */
static int emit_at(retime *r, const recd_msg *m, double t)
{
    recd_msg c = *m; /* a state of a format with retime hooks owns no heap memory */
    if (t > (double)UINT32_MAX) {
        recd_why(r->err, r->errlen, "time %.0f %s does not fit the format", t, r->e->time_unit);
        return -ERANGE;
    }
    r->e->set_time(&c, (int64_t)llround(t));
    if (r->speed != 1.0)
        r->e->scale_velocity(&c, r->speed);
    return edit_out_msg(&r->out, &c, r->err, r->errlen);
}

/* Resamples the states s[0..n) (times ts, scaled) every period, keeping control changes. */
static int resample(retime *r, const recd_msg *const *s, const double *ts, size_t n, double period)
{
    size_t a = 0; /* s[a] is the last original at or before the grid time */
    size_t next_kept = 0;
    double g = ts[0];
    uint64_t j = 0;
    while (next_kept < n || g <= ts[n - 1]) {
        /* The next original that must be kept: the first, the last, or a control change. */
        while (next_kept < n && !(next_kept == 0 || next_kept == n - 1 ||
                                  !r->e->same_controls(s[next_kept - 1], s[next_kept])))
            next_kept++;
        double kept_t = next_kept < n ? ts[next_kept] : INFINITY;
        bool grid_left = g <= ts[n - 1];
        int rc;
        if (!grid_left || kept_t <= g || llround(kept_t) == llround(g)) {
            if (grid_left && llround(kept_t) == llround(g))
                g = ts[0] + (double)++j * period; /* the original stands for this grid point */
            rc = emit_at(r, s[next_kept], kept_t);
            next_kept++;
        } else {
            while (a + 1 < n && ts[a + 1] <= g)
                a++;
            size_t b = a + 1 < n ? a + 1 : a;
            double span = ts[b] - ts[a];
            double f = span > 0 ? (g - ts[a]) / span : 0.0;
            recd_msg mix;
            r->e->interpolate(s[a], s[b], f, &mix);
            rc = emit_at(r, &mix, g);
            g = ts[0] + (double)++j * period;
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int retime_loaded(const recd_edit_msgs *l, const recd_retime_opts *o, recd_sink sink,
                         edit_progress *progress, char *err, size_t errlen)
{
    const struct recd_format_edit *e = edit_hooks(l);
    if (!e->interpolate)
        return edit_unsupported(l, "retime", e->no_retime, err, errlen);
    double speed = o->speed == 0 ? 1.0 : o->speed;
    if (!(speed > 0) || !isfinite(speed) || o->rate_hz < 0 || !isfinite(o->rate_hz)) {
        recd_why(err, errlen, "speed must be > 0 and rate >= 0");
        return -EINVAL;
    }
    double period = o->rate_hz > 0 ? 1000.0 / o->rate_hz : 0;
    if (o->rate_hz > 0 && period < 1.0) {
        recd_why(err, errlen, "rate %.3f Hz is above 1000 Hz, the .%s clock's resolution",
                 o->rate_hz, l->format->extension);
        return -EINVAL;
    }
    /* The states in order, with their scaled times. */
    const recd_msg **s = malloc((l->n ? l->n : 1) * sizeof *s);
    double *ts = malloc((l->n ? l->n : 1) * sizeof *ts);
    if (!s || !ts) {
        free(s);
        free(ts);
        return -ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].type != RECD_MSG_STATE)
            continue;
        s[n] = &l->v[i];
        ts[n++] = (double)e->time_of(&l->v[i]) / speed;
    }
    retime r = {e, speed, {{0}, NULL}, err, errlen};
    edit_out_begin(&r.out, l->format->msg_format, sink, progress);
    int rc = edit_out_msg(&r.out, &l->v[0], err, errlen); /* open */
    if (rc == 0 && n == 0) {
        recd_why(err, errlen, "the recording holds no sample");
        rc = -EINVAL;
    }
    if (rc == 0 && period > 0 && n > 0) {
        /* A hostile file's few blocks can span 49 days: bound what the grid may write. */
        double grid = floor((ts[n - 1] - ts[0]) / period) + 1.0 + (double)n;
        if (grid > (double)RECD_EDIT_MAX_SAMPLES) {
            recd_why(err, errlen, "resampling would write %.0f %ss, more than the limit of %u",
                     grid, e->unit_name, (unsigned)RECD_EDIT_MAX_SAMPLES);
            rc = -E2BIG;
        } else {
            rc = resample(&r, s, ts, n, period);
        }
    }
    for (size_t i = 0; rc == 0 && period == 0 && i < n; i++)
        rc = emit_at(&r, s[i], ts[i]);
    if (rc == 0 && l->v[l->n - 1].type == RECD_MSG_CLOSE)
        rc = edit_out_msg(&r.out, &l->v[l->n - 1], err, errlen);
    free(s);
    free(ts);
    return edit_out_end(&r.out, rc, err, errlen);
}

int recd_edit_retime(recd_edit_input in, const recd_retime_opts *o, recd_sink out,
                     const recd_progress *progress, char *err, size_t errlen)
{
    edit_progress p;
    edit_progress_begin(&p, progress, &in, 1, 2);
    recd_edit_msgs l;
    int rc = edit_load(in, &l, &p, err, errlen);
    if (rc < 0)
        return rc;
    edit_progress_loaded(&p, l.n); /* resampling may write more or fewer: an estimate */
    rc = retime_loaded(&l, o, out, &p, err, errlen);
    recd_edit__msgs_free(&l);
    edit_progress_end(&p, rc);
    return rc;
}
