/* SPDX-License-Identifier: MIT */
/* A standard .rec as messages (open, one state per block, close), for recd_export_msgs. Only
 * files an import reproduces byte for byte are accepted: signature 1000, whole blocks, no NaN or
 * infinite floats. */
#include "formats/rec/rec_format.h"

#include <errno.h>
#include <stdio.h>

#include "base/why.h"
#include "message/msg_stream.h"
#include "recd/samp_rec.h"

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
        recd_why(err, errlen, "not a standard SA-MP recording with blocks (layout %s)%s%s",
                 recd_rec_layout_name(info.layout), first_copy[0] ? ": " : "", first_copy);
        return -EBADMSG;
    }
    if (info.signature != RECD_REC_SIGNATURE || info.data_offset != RECD_REC_HEADER_SIZE) {
        recd_why(err, errlen, "header signature %u is not %u; an import would not reproduce it",
                 info.signature, RECD_REC_SIGNATURE);
        return -EBADMSG;
    }
    if (info.trailing_bytes) {
        recd_why(err, errlen,
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
    if ((rc = msg_deliver_owned(on_msg, ctx, &m, err, errlen)) < 0)
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
            recd_why(err, errlen,
                     "block %llu (offset %llu): a float is NaN or infinite, which JSON and CSV "
                     "cannot carry and recd never writes",
                     (unsigned long long)i,
                     (unsigned long long)(info.data_offset + i * info.block_size));
            return -EBADMSG;
        }
        if ((rc = msg_deliver_owned(on_msg, ctx, &m, err, errlen)) < 0)
            return rc;
    }
    recd_msg_init(&m, RECD_MSG_CLOSE, fmt);
    return msg_deliver_owned(on_msg, ctx, &m, err, errlen);
}
