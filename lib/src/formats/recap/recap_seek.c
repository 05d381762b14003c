/* SPDX-License-Identifier: MIT */
/* Seeking in .recap files: a seek point is a FULL_STATE keyframe, found by the gzip member that
 * holds it (a reader inflates that member, skips the ticks before the keyframe, and is then in
 * step with a full scan). Its time is the keyframe's tick, its aux the ticks before the member.
 * The header up to the end timestamp identifies the file: a finalize rewrites only what follows. */
#include <errno.h>

#include "formats/format_seek.h"
#include "formats/recap/recap_format.h"
#include "formats/recap/recap_internal.h"

static size_t recap_stable_len(const uint8_t *buf, size_t len)
{
    recd_recap_header h;
    if (recd_recap_header_decode(buf, len, &h, NULL) < 0)
        return 0;
    uint64_t end_ms_at = 0;
    recd_recap_header_patch_offsets(&h, &end_ms_at, NULL);
    return end_ms_at <= len ? (size_t)end_ms_at : 0;
}

typedef struct recap_scan {
    const recd_seek_point *after;
    recd_seek_point_fn fn;
    void *ctx;
} recap_scan;

static int on_keyframe(void *ctx, uint64_t tick, uint64_t member_offset, uint64_t member_tick)
{
    recap_scan *s = ctx;
    if (tick > INT64_MAX || member_tick > INT64_MAX)
        return -ERANGE;
    if (s->after && (int64_t)tick <= s->after->time)
        return 0;
    recd_seek_point p = {(int64_t)tick, member_offset, (int64_t)member_tick};
    return s->fn(s->ctx, &p);
}

static int recap_scan_points(const uint8_t *buf, size_t len, const recd_seek_point *after,
                             recd_seek_point_fn fn, void *ctx)
{
    recap_scan s = {after, fn, ctx};
    recd_recap_callbacks cb = {0};
    cb.ctx = &s;
    recap_resume rs = {0, 0, false, on_keyframe, 0};
    if (after) {
        rs.offset = after->offset;
        rs.tick = (uint64_t)after->aux;
    } else {
        recd_recap_header h;
        int hsize = recd_recap_header_decode(buf, len, &h, NULL);
        if (hsize < 0)
            return -EBADMSG;
        rs.offset = (uint64_t)hsize;
    }
    recd_recap_decode_result res;
    int rc = recap_decode_resume(buf, len, &rs, &cb, &res);
    if (rc == -EBADMSG || rc == -EINVAL)
        return 0; /* the points before the damage stand */
    return rc;
}

const struct recd_format_seek recd_recap__seek = {
    .stable_len = recap_stable_len,
    .scan = recap_scan_points,
    .direct = NULL,
    .export_from = recd_recap__export_from,
};
