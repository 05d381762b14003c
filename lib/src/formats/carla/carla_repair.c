/* SPDX-License-Identifier: MIT */
/* Repair and crash recovery of a CARLA log: keep the header and every complete frame, cut a torn
 * one, and give the last kept frame CARLA's -1 duration, so the file ends as CARLA's own do. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_format.h"
#include "storage/recovery_internal.h"

/* Sets the duration of the FrameStart at buf+at to -1. */
static void end_with_minus_one(uint8_t *buf, size_t at)
{
    st_le64(buf + at + CARLA_PACKET_HEADER + 8, f64_to_bits(-1.0));
}

int recd_carla__repair(const uint8_t *buf, size_t len, recd_repair_result *r)
{
    r->unit = "frames";
    carla_scan s;
    int rc = carla_scan_file(buf, len, NULL, &s);
    if (rc < 0)
        return rc;
    if (!s.header_ok) {
        snprintf(r->detail, sizeof r->detail, "%s: nothing to keep", s.err);
        return -EBADMSG;
    }
    if ((rc = recd_buf_append(&r->out, buf, s.frames_end)) < 0)
        return rc;
    bool patched = s.frames && s.last_duration != -1.0;
    if (patched)
        end_with_minus_one(r->out.data, s.last_frame_start);
    r->kept_bytes = s.frames_end;
    r->dropped_bytes = len - s.frames_end;
    r->kept_units = s.frames;
    r->changed = patched || s.frames_end != len;
    /* The reader's message is capped so the whole detail always fits in 256 bytes. */
    snprintf(r->detail, sizeof r->detail, "%llu whole frames%s%.150s%s",
             (unsigned long long)s.frames, s.frames_end != len ? ", cut a torn frame: " : "",
             s.frames_end != len ? s.err : "", patched ? "; last duration set to -1" : "");
    return 0;
}

int recd_carla__recover(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    carla_header h;
    bool prefix;
    const char *why;
    int rc = carla_read_header(buf, len, &h, &prefix, &why);
    if (!prefix || len < 2 || buf[0] != 1 || buf[1] != 0)
        return 0;
    if (rc < 0) {
        recd_recover__decide(plan, RECD_RECOVER_REMOVED, "carla", "only %zu bytes of a CARLA header",
                             len);
        return 1;
    }
    carla_scan s;
    if ((rc = carla_scan_file(buf, len, NULL, &s)) < 0)
        return rc;
    if (s.frames == 0) {
        recd_recover__decide(plan, RECD_RECOVER_REMOVED, "carla",
                             "header only, %zu bytes of a first frame", len - s.frames_end);
        return 1;
    }
    plan->keep = s.frames_end;
    plan->units = s.frames;
    if (s.last_duration != -1.0) {
        end_with_minus_one(buf, s.last_frame_start);
        plan->header_len = s.last_frame_start + CARLA_PACKET_HEADER + 24;
    }
    recd_recover__decide(plan, RECD_RECOVER_FINALIZED, "carla",
                         "%llu whole frames, %zu trailing bytes dropped, last duration -1",
                         (unsigned long long)s.frames, len - s.frames_end);
    return 1;
}
