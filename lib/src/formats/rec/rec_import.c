/* SPDX-License-Identifier: MIT */
/* The .rec importer: writes each state as a block through the streaming recd_rec_writer, so a
 * .rec import needs no more memory than one block. Flush messages are ignored (blocks are written
 * whole as they come) and .rec sessions have no events. */
#include "formats/rec/rec_format.h"

#include <errno.h>
#include <stdlib.h>

#include "formats/format_import.h"
#include "base/why.h"
#include "recd/samp_rec.h"

typedef struct rec_import {
    recd_rec_writer w;
} rec_import;

static int rec_state(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    rec_import *ri = im->impl;
    if (m->format != im->format) {
        recd_why(err, errlen, "state: a %s block in a %s session", recd_msg_format_name(m->format),
                 recd_msg_format_name(im->format));
        return -EBADMSG;
    }
    uint32_t prev = ri->w.last_time_ms;
    uint32_t t = m->format == RECD_MSG_FMT_SAMP_ONFOOT ? m->onfoot.time_ms : m->vehicle.time_ms;
    int rc = m->format == RECD_MSG_FMT_SAMP_ONFOOT ? recd_rec_writer_onfoot(&ri->w, &m->onfoot)
                                                   : recd_rec_writer_vehicle(&ri->w, &m->vehicle);
    if (rc == -ERANGE)
        recd_why(err, errlen, "state.t: %u is before the previous block's %u (.rec times never "
                 "decrease)", t, prev);
    else if (rc == -EINVAL)
        recd_why(err, errlen, "state: a float is NaN or infinite, or weapon/additional_key overflow");
    else if (rc < 0)
        recd_why(err, errlen, "writing block: %s", recd_strerror(rc));
    if (rc == 0)
        im->states++;
    return rc < 0 ? (rc == -ERANGE || rc == -EINVAL ? -EBADMSG : rc) : 0;
}

static int rec_open(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec_import *ri = calloc(1, sizeof *ri);
    if (!ri)
        return -ENOMEM;
    im->impl = ri;
    recd_rec_type type = m->format == RECD_MSG_FMT_SAMP_ONFOOT ? RECD_REC_TYPE_ONFOOT
                                                               : RECD_REC_TYPE_VEHICLE;
    return recd_rec_writer_init(&ri->w, type, im->rec_time_policy, im->sink);
}

static int rec_finish(recd_importer *im, char *err, size_t errlen)
{
    rec_import *ri = im->impl;
    if (ri->w.header_written)
        return 0;
    int rc = recd_rec_writer_header(&ri->w); /* a file with no blocks is the header alone */
    if (rc < 0)
        recd_why(err, errlen, "writing the output: %s", recd_strerror(rc));
    return rc;
}

/* .rec blocks are written whole as they come: flush is ignored and there are no events. */
const struct recd_format_importer recd_rec__importer = {
    .formats = {RECD_MSG_FMT_SAMP_ONFOOT, RECD_MSG_FMT_SAMP_VEHICLE},
    .open = rec_open,
    .state = rec_state,
    .finish = rec_finish,
};
