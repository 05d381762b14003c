/* SPDX-License-Identifier: MIT */
/* transform: moves and turns a whole recording about a vertical axis. The engine prepares the
 * rotation (exact for multiples of 90 degrees, so four quarter turns give the input back) and the
 * pivot; the format's transform hook applies it to every field that lives in world space. */
#include <errno.h>
#include <math.h>

#include "edit/edit_internal.h"
#include "base/why.h"

/* cos and sin of deg, exact where they are 0 or +-1. */
static void exact_cos_sin(double deg, double *c, double *s)
{
    double r = fmod(deg, 360.0);
    if (r < 0)
        r += 360.0;
    if (r == 0) {
        *c = 1, *s = 0;
    } else if (r == 90) {
        *c = 0, *s = 1;
    } else if (r == 180) {
        *c = -1, *s = 0;
    } else if (r == 270) {
        *c = 0, *s = -1;
    } else {
        double rad = r * (3.14159265358979323846 / 180.0);
        *c = cos(rad);
        *s = sin(rad);
    }
}

static int transform_loaded(const recd_edit_msgs *l, const recd_transform_opts *o, recd_sink sink,
                            edit_progress *progress, char *err, size_t errlen)
{
    const struct recd_format_edit *e = edit_hooks(l);
    if (!e->transform)
        return edit_unsupported(l, "transform", e->no_transform, err, errlen);
    if (!isfinite(o->rotate_z_deg) || !isfinite(o->translate[0]) || !isfinite(o->translate[1]) ||
        !isfinite(o->translate[2])) {
        recd_why(err, errlen, "transform values must be finite numbers");
        return -EINVAL;
    }
    recd_edit_xform x;
    exact_cos_sin(o->rotate_z_deg, &x.cos_a, &x.sin_a);
    exact_cos_sin(o->rotate_z_deg / 2.0, &x.half_cos, &x.half_sin);
    for (int k = 0; k < 3; k++) {
        x.translate[k] = o->translate[k];
        x.pivot[k] = o->pivot[k];
    }
    bool have_pivot = o->has_pivot;
    for (size_t i = 0; !have_pivot && i < l->n; i++)
        have_pivot = l->v[i].type == RECD_MSG_STATE && e->position(&l->v[i], x.pivot);
    edit_out out;
    edit_out_begin(&out, l->format->msg_format, sink, progress);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        if (l->v[i].type != RECD_MSG_STATE) {
            rc = edit_out_msg(&out, &l->v[i], err, errlen);
            continue;
        }
        recd_msg c;
        rc = recd_msg_copy(&c, &l->v[i]);
        if (rc < 0)
            break;
        e->transform(&c, &x);
        rc = edit_out_msg(&out, &c, err, errlen);
        recd_msg_free(&c);
    }
    return edit_out_end(&out, rc, err, errlen);
}

int recd_edit_transform(recd_edit_input in, const recd_transform_opts *o, recd_sink out,
                        const recd_progress *progress, char *err, size_t errlen)
{
    edit_progress p;
    edit_progress_begin(&p, progress, &in, 1, 2);
    recd_edit_msgs l;
    int rc = edit_load(in, &l, &p, err, errlen);
    if (rc < 0)
        return rc;
    edit_progress_loaded(&p, l.n);
    rc = transform_loaded(&l, o, out, &p, err, errlen);
    recd_edit__msgs_free(&l);
    edit_progress_end(&p, rc);
    return rc;
}
