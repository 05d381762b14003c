/* SPDX-License-Identifier: MIT */
/* The importer engine: checks the message order (open first, one session, one family's states,
 * nothing after close) and hands everything else to the session format's importer, which the
 * caller passes in. Taking the importer as a parameter keeps the engine below the format table:
 * table entries import text through it, and the public recd_importer_* (format_import.c) look the
 * importer up in the table before calling it. */
#include "formats/format_import.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/why.h"
#include "message/msg_text.h"

bool recd_format__importer_writes(const struct recd_format_importer *ops, recd_msg_format f)
{
    size_t n = ops ? sizeof ops->formats / sizeof ops->formats[0] : 0;
    for (size_t i = 0; f != RECD_MSG_FMT_NONE && i < n; i++)
        if (ops->formats[i] == f)
            return true;
    return false;
}

void recd_importer_init(recd_importer *im, recd_msg_format expect, recd_sink sink)
{
    memset(im, 0, sizeof *im);
    im->expect = expect;
    im->sink = sink;
    im->rec_time_policy = RECD_REC_TIME_REJECT;
}

void recd_format__importer_free(recd_importer *im, const struct recd_format_importer *ops)
{
    if (!im->impl)
        return;
    if (ops && ops->release)
        ops->release(im);
    free(im->impl);
    im->impl = NULL;
}

static int import_open(recd_importer *im, const struct recd_format_importer *ops,
                       const recd_msg *m, char *err, size_t errlen)
{
    if (im->expect && m->format != im->expect) {
        recd_why(err, errlen, "open.format: the input is %s, but %s was asked for",
                 recd_msg_format_name(m->format), recd_msg_format_name(im->expect));
        return -EBADMSG;
    }
    if (!recd_format__importer_writes(ops, m->format)) {
        recd_why(err, errlen, "open.format: no importer for format '%s'",
                 recd_msg_format_name(m->format));
        return -EBADMSG;
    }
    im->format = m->format;
    im->opened = true;
    return ops->open(im, m, err, errlen);
}

int recd_format__importer_msg(recd_importer *im, const struct recd_format_importer *ops,
                              const recd_msg *m, char *err, size_t errlen)
{
    if (im->closed) {
        recd_why(err, errlen, "%s after close", recd_msg_type_name(m->type));
        return -EBADMSG;
    }
    if (!im->opened && m->type != RECD_MSG_OPEN) {
        recd_why(err, errlen, "the first message must be open");
        return -EBADMSG;
    }
    switch (m->type) {
    case RECD_MSG_OPEN:
        if (im->opened) {
            recd_why(err, errlen, "a second open: one file holds one session");
            return -EBADMSG;
        }
        return import_open(im, ops, m, err, errlen);
    case RECD_MSG_STATE:
        if (!recd_format__importer_writes(ops, m->format)) { /* the importer checks its family */
            recd_why(err, errlen, "state: a %s state in a %s session",
                     recd_msg_format_name(m->format), recd_msg_format_name(im->format));
            return -EBADMSG;
        }
        return ops->state(im, m, err, errlen);
    case RECD_MSG_EVENT:
        if (!ops->event) {
            recd_why(err, errlen, "event: .%s sessions have no events",
                     recd_msg_format_ext(im->format));
            return -EBADMSG;
        }
        return ops->event(im, m, err, errlen);
    case RECD_MSG_FLUSH:
        return ops->flush ? ops->flush(im, m, err, errlen) : 0;
    case RECD_MSG_CLOSE:
        im->closed = true;
        if (ops->close)
            ops->close(im, m);
        return 0;
    default: recd_why(err, errlen, "unknown message type"); return -EBADMSG;
    }
}

int recd_format__importer_finish(recd_importer *im, const struct recd_format_importer *ops,
                                 char *err, size_t errlen)
{
    if (!im->opened) {
        recd_why(err, errlen, "no open message: nothing to write");
        return -EBADMSG;
    }
    im->closed = true;
    return ops->finish(im, err, errlen);
}

typedef struct text_import {
    recd_importer im;
    const struct recd_format_importer *ops;
} text_import;

static int import_one(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    text_import *x = ctx;
    return recd_format__importer_msg(&x->im, x->ops, m, err, errlen);
}

int recd_format__import_text(const struct recd_format_importer *ops, const uint8_t *text,
                             size_t len, recd_text_encoding enc, recd_msg_format expect,
                             recd_sink out, recd_import_stats *stats, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    text_import x = {.ops = ops};
    recd_importer_init(&x.im, expect, out);
    int rc = msg_text_read(text, len, enc, import_one, &x, err, errlen);
    if (rc == 0)
        rc = recd_format__importer_finish(&x.im, ops, err, errlen);
    if (stats) {
        stats->format = x.im.format;
        stats->states = x.im.states;
        stats->events = x.im.events;
        stats->flushes = x.im.flushes;
    }
    recd_format__importer_free(&x.im, ops);
    return rc;
}

int recd_format__import_through_importer(const recd_format *self, const uint8_t *text, size_t len,
                                         recd_text_encoding enc, recd_sink out,
                                         recd_import_stats *stats, char *err, size_t errlen)
{
    return recd_format__import_text(self->importer, text, len, enc, self->msg_format, out, stats,
                                    err, errlen);
}
