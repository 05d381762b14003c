/* SPDX-License-Identifier: MIT */
/* Handing messages on: the file-level rules shared by the JSONL and CSV readers (open first, one
 * session, nothing after close), and the delivery the per-format exporters share. */
#include "message/msg_stream.h"

#include <errno.h>
#include <string.h>

#include "base/why.h"

/* Open first, one session, nothing after close. */
static int msg_stream_check(msg_stream *st, const recd_msg *m, char *why, size_t whylen)
{
    if (st->closed) {
        recd_why(why, whylen, "%s after close", recd_msg_type_name(m->type));
        return -EBADMSG;
    }
    if (!st->opened) {
        if (m->type != RECD_MSG_OPEN) {
            recd_why(why, whylen, "the first message must be open, got %s",
                     recd_msg_type_name(m->type));
            return -EBADMSG;
        }
        st->opened = true;
        st->format = m->format;
        memcpy(st->session, m->session, sizeof st->session);
        return 0;
    }
    if (m->type == RECD_MSG_OPEN) {
        recd_why(why, whylen, "a second open: one file holds one session");
        return -EBADMSG;
    }
    if (m->session[0] && strcmp(m->session, st->session) != 0) {
        recd_why(why, whylen, "%s.session: \"%s\" differs from the open message's \"%s\"",
                 recd_msg_type_name(m->type), m->session, st->session);
        return -EBADMSG;
    }
    if (m->type == RECD_MSG_CLOSE)
        st->closed = true;
    return 0;
}

int msg_stream_deliver(msg_stream *st, const recd_msg *m, uint64_t line, char *err, size_t errlen)
{
    char why[256] = "";
    int rc = msg_stream_check(st, m, why, sizeof why);
    if (rc == 0) {
        rc = st->on_msg(st->ctx, m, why, sizeof why);
        if (rc < 0 && !why[0])
            recd_why(why, sizeof why, "%s", recd_strerror(rc));
    }
    if (rc < 0)
        recd_why(err, errlen, "line %llu: %s", (unsigned long long)line, why);
    return rc;
}

int msg_deliver_owned(recd_msg_fn on_msg, void *ctx, recd_msg *m, char *err, size_t errlen)
{
    int rc = on_msg(ctx, m, err, errlen);
    if (rc < 0 && err && errlen && !err[0])
        recd_why(err, errlen, "%s", recd_strerror(rc));
    recd_msg_free(m);
    return rc;
}
