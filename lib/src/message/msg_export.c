/* recd_export_msgs: a whole recording (its format sniffed through the format table) as the message
 * sequence open, state/event/flush..., close. Only files that an import can reproduce byte for
 * byte are accepted, so export/import is an exact round trip. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/rec/rec_format.h"
#include "formats/recap/recap_format.h"
#include "message/msg_fields.h"

static int deliver(recd_msg_fn on_msg, void *ctx, recd_msg *m, char *err, size_t errlen)
{
    int rc = on_msg(ctx, m, err, errlen);
    if (rc < 0 && err && errlen && !err[0])
        msg_err(err, errlen, "%s", recd_strerror(rc));
    recd_msg_free(m);
    return rc;
}

/* ---- .rec ------------------------------------------------------------------------------------ */

int recd_rec__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                          char *err, size_t errlen)
{
    recd_rec_info info;
    recd_report report = {0};
    report.limit = 4;
    int rc = recd_rec_probe(buf, len, &info, &report);
    const char *first = report.count ? report.items[0].message : "";
    char first_copy[200];
    snprintf(first_copy, sizeof first_copy, "%s", first);
    recd_report_free(&report);
    if (info.layout != RECD_REC_LAYOUT_ONFOOT && info.layout != RECD_REC_LAYOUT_VEHICLE) {
        msg_err(err, errlen, "not a standard SA-MP recording with blocks (layout %s)%s%s",
                recd_rec_layout_name(info.layout), first_copy[0] ? ": " : "", first_copy);
        return -EBADMSG;
    }
    if (info.signature != RECD_REC_SIGNATURE || info.data_offset != RECD_REC_HEADER_SIZE) {
        msg_err(err, errlen, "header signature %u is not %u; an import would not reproduce it",
                info.signature, RECD_REC_SIGNATURE);
        return -EBADMSG;
    }
    if (info.trailing_bytes) {
        msg_err(err, errlen,
                "%zu bytes after the last whole block (offset %zu): run rectool repair first",
                info.trailing_bytes,
                (size_t)(info.data_offset + info.block_count * info.block_size));
        return -EBADMSG;
    }
    (void)rc; /* warnings and info-level anomalies (equal times, gaps) do not block an export */
    recd_msg_format fmt = info.layout == RECD_REC_LAYOUT_ONFOOT ? RECD_MSG_FMT_SAMP_ONFOOT
                                                                : RECD_MSG_FMT_SAMP_VEHICLE;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, fmt);
    if ((rc = deliver(on_msg, ctx, &m, err, errlen)) < 0)
        return rc;
    for (uint64_t i = 0; i < info.block_count; i++) {
        const uint8_t *b = recd_rec_block_at(buf, &info, i);
        if (!b)
            return -EBADMSG;
        recd_msg_init(&m, RECD_MSG_STATE, fmt);
        if (fmt == RECD_MSG_FMT_SAMP_ONFOOT) {
            recd_rec_onfoot_decode(b, &m.onfoot);
            rc = recd_rec_onfoot_check(&m.onfoot);
        } else {
            recd_rec_vehicle_decode(b, &m.vehicle);
            rc = recd_rec_vehicle_check(&m.vehicle);
        }
        if (rc < 0) {
            msg_err(err, errlen,
                    "block %llu (offset %llu): a float is NaN or infinite, which JSON and CSV "
                    "cannot carry and recd never writes",
                    (unsigned long long)i,
                    (unsigned long long)(info.data_offset + i * info.block_size));
            return -EBADMSG;
        }
        if ((rc = deliver(on_msg, ctx, &m, err, errlen)) < 0)
            return rc;
    }
    recd_msg_init(&m, RECD_MSG_CLOSE, fmt);
    return deliver(on_msg, ctx, &m, err, errlen);
}

/* ---- .recap ---------------------------------------------------------------------------------- */

typedef struct recap_export {
    recd_msg_fn on_msg;
    void *ctx;
    char *err;
    size_t errlen;
} recap_export;

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
    return deliver(x->on_msg, x->ctx, &m, x->err, x->errlen);
}

static int on_tick(void *ctx, uint64_t tick, const recd_recap_state *state,
                   const recd_recap_event *events, size_t n)
{
    recap_export *x = ctx;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    int rc = recd_msg_set_recap_state(&m, tick, state);
    if (rc < 0 || (rc = deliver(x->on_msg, x->ctx, &m, x->err, x->errlen)) < 0) {
        recd_msg_free(&m);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
        rc = recd_msg_set_recap_event(&m, tick, &events[i]);
        if (rc < 0 || (rc = deliver(x->on_msg, x->ctx, &m, x->err, x->errlen)) < 0) {
            recd_msg_free(&m);
            return rc;
        }
    }
    return 0;
}

static int on_member_end(void *ctx, uint64_t end_tick, uint64_t end_offset)
{
    (void)end_offset;
    recap_export *x = ctx;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_FLUSH, RECD_MSG_FMT_RECAP);
    m.flush.has_end_tick = true;
    m.flush.end_tick = end_tick;
    return deliver(x->on_msg, x->ctx, &m, x->err, x->errlen);
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
            msg_err(err, errlen, "not a complete, valid Recap file: offset %llu: %s%s",
                    (unsigned long long)p->offset, p->message,
                    res.truncated ? " (rectool repair keeps the complete part)" : "");
        else
            msg_err(err, errlen, "not a complete, valid Recap file: %s", recd_strerror(rc));
        recd_report_free(&report);
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    recd_report_free(&report);
    recap_export x = {on_msg, ctx, err, errlen};
    recd_recap_callbacks cb = {on_header, on_tick, NULL, on_member_end, &x};
    rc = recd_recap_decode(buf, len, NULL, &cb, &res, NULL);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return -EPROTO;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_RECAP);
    return deliver(on_msg, ctx, &m, err, errlen);
}

int recd_export_msgs(const uint8_t *file, size_t len, recd_msg_fn on_msg, void *ctx, char *err,
                     size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    const recd_format *f = recd_format_sniff(file, len, NULL);
    if (!f) {
        msg_err(err, errlen, "not a recording of a format librecd knows");
        return -EBADMSG;
    }
    return recd_format_export(f, file, len, on_msg, ctx, err, errlen);
}
