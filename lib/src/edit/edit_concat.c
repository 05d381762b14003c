/* SPDX-License-Identifier: MIT */
/* concat: several recordings of one format into one file, times continuing (the format's concat
 * hook says how). */
#include <errno.h>
#include <stdlib.h>

#include "edit/edit_internal.h"
#include "base/why.h"

int recd_edit_concat(const recd_edit_input *in, size_t n, int64_t gap, recd_sink out,
                     const recd_progress *progress, char *err, size_t errlen)
{
    if (n == 0) {
        recd_why(err, errlen, "nothing to concatenate");
        return -EINVAL;
    }
    recd_edit_msgs *l = calloc(n, sizeof *l);
    if (!l)
        return -ENOMEM;
    edit_progress p;
    edit_progress_begin(&p, progress, in, n, 2);
    int rc = 0;
    size_t loaded = 0;
    uint64_t messages = 0;
    for (; loaded < n; loaded++) {
        rc = edit_load(in[loaded], &l[loaded], &p, err, errlen);
        if (rc < 0)
            break;
        if (l[loaded].format != l[0].format) {
            recd_why(err, errlen, "input %zu is %s, input 1 is %s: only one format can be joined",
                     loaded + 1, l[loaded].format->name, l[0].format->name);
            loaded++;
            rc = -EBADMSG;
            break;
        }
        messages += l[loaded].n;
    }
    if (rc == 0 && !edit_hooks(&l[0])->concat)
        rc = edit_unsupported(&l[0], "concat", NULL, err, errlen);
    if (rc == 0) {
        edit_progress_loaded(&p, messages);
        edit_out o;
        edit_out_begin(&o, l[0].format->msg_format, out, &p);
        rc = edit_hooks(&l[0])->concat(l, n, gap, edit_out_msg, &o, err, errlen);
        rc = edit_out_end(&o, rc, err, errlen);
    }
    for (size_t i = 0; i < loaded; i++)
        recd_edit__msgs_free(&l[i]);
    free(l);
    edit_progress_end(&p, rc);
    return rc;
}
