/* SPDX-License-Identifier: MIT */
/* .recap repair: keep the header and every complete, valid gzip member, then rewrite the header's
 * frame count and end timestamp from the ticks those members hold (a crashed writer leaves 0 or
 * stale values there); a complete, finalized file keeps its end timestamp. */
#include "formats/recap/recap_format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/format_report.h"
#include "recd/recap.h"

int recd_recap__repair(const uint8_t *buf, size_t len, recd_repair_result *r)
{
    recd_recap_decode_result res;
    recd_report report = {.limit = 16, .progress = r->progress};
    memset(&res, 0, sizeof res);
    int rc = recd_recap_decode(buf, len, NULL, NULL, &res, &report);
    if (rc < 0 && rc != -EBADMSG) {
        recd_report_free(&report);
        return rc;
    }
    if (!res.header_valid || res.data_offset > len || res.valid_end < res.data_offset ||
        res.valid_end > len) {
        rc = recd_format__repair_failed(r, &report, "the header is not readable");
        recd_report_free(&report);
        return rc;
    }
    recd_report_free(&report);
    if (res.ticks > UINT32_MAX) {
        snprintf(r->detail, sizeof r->detail, "%llu ticks do not fit the header's frame count",
                 (unsigned long long)res.ticks);
        return -EBADMSG;
    }
    size_t keep = (size_t)res.valid_end;
    if ((rc = recd_buf_append(&r->out, buf, keep)) < 0)
        return rc;
    /* A complete file whose frame count is right was finalized: its end time may come from the
     * recorder (close.end_time) and is kept. Otherwise it is start + ticks x 50 ms, a wrapping sum
     * so that a hostile start time does not become signed overflow. */
    bool finalized = keep == len && res.header.frame_count == (uint32_t)res.ticks && res.ticks > 0;
    int64_t ticks = res.ticks <= (uint64_t)INT64_MAX ? (int64_t)res.ticks : INT64_MAX;
    int64_t end_ms = finalized ? res.header.end_ms : recd_recap_time_after(res.header.start_ms, ticks);
    rc = recd_recap_header_patch(r->out.data, (size_t)res.data_offset, (uint32_t)res.ticks, end_ms);
    if (rc < 0) {
        snprintf(r->detail, sizeof r->detail, "cannot patch the header: %s", recd_strerror(rc));
        return -EBADMSG;
    }
    bool header_changed = res.header.frame_count != (uint32_t)res.ticks ||
                          res.header.end_ms != end_ms;
    r->kept_bytes = keep;
    r->dropped_bytes = len - keep;
    r->kept_units = res.ticks;
    r->changed = header_changed || keep != len;

    recd_recap_decode_result check;
    recd_report check_report = {.limit = 16};
    memset(&check, 0, sizeof check);
    rc = recd_recap_verify(r->out.data, r->out.len, &check, &check_report);
    if (rc != 0 || recd_report_errors(&check_report) > 0) {
        rc = recd_format__repair_failed(r, &check_report, "cutting is not enough");
        recd_report_free(&check_report);
        return rc < 0 ? rc : -EBADMSG;
    }
    recd_report_free(&check_report);
    snprintf(r->detail, sizeof r->detail, "%llu gzip members%s%s", (unsigned long long)res.members,
             r->dropped_bytes ? ", dropped an incomplete or damaged tail" : "",
             header_changed ? ", frame count and end time rewritten" : "");
    return 0;
}
