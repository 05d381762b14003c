/* SPDX-License-Identifier: MIT */
/* A valid, complete .recap as messages (open with the header, a state and its events per tick, a
 * flush at the end of each gzip member, close), for recd_export_msgs. */
#include "formats/recap/recap_format.h"

#include <errno.h>
#include <stdio.h>

#include "base/why.h"
#include "message/msg_stream.h"
#include "formats/recap/recap_internal.h"
#include "recd/recap.h"

typedef struct recap_export {
    recd_msg_fn on_msg;
    void *ctx;
    char *err;
    size_t errlen;
    int64_t to; /* stop after the first tick at or after it; < 0: read to the end */
    recd_msg_take_fn take; /* NULL: on_msg */
} recap_export;

/* m (made here) to the reader, which takes it or copies it. */
static int deliver(recap_export *x, recd_msg *m)
{
    if (!x->take)
        return msg_deliver_owned(x->on_msg, x->ctx, m, x->err, x->errlen);
    int rc = x->take(x->ctx, m, x->err, x->errlen);
    if (rc < 0 && x->err && x->errlen && !x->err[0])
        recd_why(x->err, x->errlen, "%s", recd_strerror(rc));
    return rc;
}

#define STOP_AT_TO 1 /* on_tick's value once the range is read */

static int on_header(void *ctx, const recd_recap_header *h)
{
    recap_export *x = ctx;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    int rc = recd_msg_set_recap_open(&m, h);
    if (rc < 0) {
        recd_msg_free(&m);
        return rc;
    }
    return deliver(x, &m);
}

static int on_tick(void *ctx, uint64_t tick, const recd_recap_state *state,
                   const recd_recap_event *events, size_t n)
{
    recap_export *x = ctx;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    int rc = recd_msg_set_recap_state(&m, tick, state);
    if (rc < 0) {
        recd_msg_free(&m);
        return rc;
    }
    if ((rc = deliver(x, &m)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
        rc = recd_msg_set_recap_event(&m, tick, &events[i]);
        if (rc < 0) {
            recd_msg_free(&m);
            return rc;
        }
        if ((rc = deliver(x, &m)) < 0)
            return rc;
    }
    return x->to >= 0 && tick >= (uint64_t)x->to ? STOP_AT_TO : 0;
}

static int on_member_end(void *ctx, uint64_t end_tick, uint64_t end_offset)
{
    (void)end_offset;
    recap_export *x = ctx;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_FLUSH, RECD_MSG_FMT_RECAP);
    m.flush.has_end_tick = true;
    m.flush.end_tick = end_tick;
    return deliver(x, &m);
}

int recd_recap__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                            char *err, size_t errlen)
{
    /* Validate first so nothing is emitted for a file that cannot be exported whole. */
    recd_recap_decode_result res;
    recd_report report = {0};
    report.limit = 4;
    int rc = recd_recap_verify(buf, len, &res, &report);
    if (rc < 0) {
        const recd_problem *p = NULL;
        for (size_t i = 0; i < report.count && !p; i++)
            if (report.items[i].severity == RECD_SEV_ERROR)
                p = &report.items[i];
        if (p)
            recd_why(err, errlen, "not a complete, valid Recap file: offset %llu: %s%s",
                     (unsigned long long)p->offset, p->message,
                     res.truncated ? " (rectool repair keeps the complete part)" : "");
        else
            recd_why(err, errlen, "not a complete, valid Recap file: %s", recd_strerror(rc));
        recd_report_free(&report);
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    recd_report_free(&report);
    recap_export x = {on_msg, ctx, err, errlen, -1, NULL};
    recd_recap_callbacks cb = {on_header, on_tick, NULL, on_member_end, &x};
    rc = recd_recap_decode(buf, len, NULL, &cb, &res, NULL);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return -EPROTO;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_RECAP);
    return msg_deliver_owned(on_msg, ctx, &m, err, errlen);
}

static int deliver_close(recap_export *x)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_RECAP);
    return deliver(x, &m);
}

int recd_recap__export_from(const uint8_t *buf, size_t len, const recd_seek_point *p,
                            const recd_seek_read *r, recd_msg_fn on_msg, void *ctx, char *err,
                            size_t errlen)
{
    recap_export x = {on_msg, ctx, err, errlen, r->to, r->take};
    recd_recap_callbacks cb = {on_header, on_tick, NULL, on_member_end, &x};
    /* The ticks between the member's first keyframe and p's are decoded (the state needs
     * them) but not delivered: readers and cuts start at p's keyframe. */
    uint64_t key_tick = p->time > 0 ? (uint64_t)p->time : 0;
    recap_resume rs = {p->offset, (uint64_t)p->aux, true, NULL, key_tick};
    recd_recap_decode_result res;
    int rc = recap_decode_resume(buf, len, &rs, &cb, &res);
    if (rc == -EBADMSG || rc == -EINVAL) {
        recd_why(err, errlen, "not a valid Recap file after offset %llu (rectool verify says "
                 "more)", (unsigned long long)res.valid_end);
        return -EBADMSG;
    }
    if (rc < 0)
        return rc;
    return deliver_close(&x);
}
