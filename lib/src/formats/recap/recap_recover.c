/* SPDX-License-Identifier: MIT */
/* Crash recovery of a .recap .part: keep the header and every complete gzip member, and plan the
 * header patch that makes the frame count and end time agree with the ticks kept. */
#include "formats/recap/recap_format.h"

#include <errno.h>
#include <string.h>

#include "recd/recap.h"
#include "storage/recovery_internal.h"

int recd_recap__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    static const char magic[] = RECD_RECAP_MAGIC;
    if (memcmp(buf, magic, len < 4 ? len : 4) != 0)
        return recd_recover__decide(plan, RECD_RECOVER_QUARANTINED, "unknown", "not a Recap magic");
    recd_recap_header h;
    int hr = recd_recap_header_decode(buf, len, &h, NULL);
    if (hr == -EAGAIN)
        return recd_recover__decide(plan, RECD_RECOVER_REMOVED, "recap",
                                    "only %zu bytes of a Recap header", len);
    if (hr < 0)
        return recd_recover__decide(plan, RECD_RECOVER_QUARANTINED, "recap",
                                    "invalid Recap header: %s", recd_strerror(hr));
    recd_recap_decode_result res;
    memset(&res, 0, sizeof res);
    int rc = recd_recap_decode(buf, len, NULL, NULL, &res, NULL);
    if (rc < 0 && rc != -EBADMSG)
        return rc;
    if (!res.header_valid)
        return recd_recover__decide(plan, RECD_RECOVER_QUARANTINED, "recap",
                                    "the Recap header does not decode");
    if (res.members == 0 || res.valid_end <= res.data_offset)
        return recd_recover__decide(plan, RECD_RECOVER_REMOVED, "recap",
                                    "header only, %llu bytes of a first gzip member",
                                    (unsigned long long)(len - res.data_offset));
    uint32_t frames = res.ticks <= UINT32_MAX ? (uint32_t)res.ticks : 0;
    int64_t ticks = res.ticks <= (uint64_t)INT64_MAX ? (int64_t)res.ticks : INT64_MAX;
    int64_t end_ms = recd_recap_time_after(res.header.start_ms, ticks);
    rc = recd_recap_header_patch(buf, (size_t)res.data_offset, frames, end_ms);
    if (rc < 0)
        return recd_recover__decide(plan, RECD_RECOVER_QUARANTINED, "recap",
                                    "cannot patch the header: %s", recd_strerror(rc));
    plan->keep = res.valid_end;
    plan->units = res.ticks;
    plan->header_len = res.data_offset;
    return recd_recover__decide(
        plan, RECD_RECOVER_FINALIZED, "recap",
        "%llu complete gzip members, %llu ticks, %llu trailing bytes dropped",
        (unsigned long long)res.members, (unsigned long long)res.ticks,
        (unsigned long long)(len - res.valid_end));
}
