/* SPDX-License-Identifier: MIT */
/* Crash recovery through the format table: recd_recover_plan_buffer lets the entry that claims a
 * .part's content plan it, and recd_recover_root runs storage's recovery (storage/recovery.c)
 * with that planner, so storage needs no format lookups. */
#include "recd/recovery.h"

#include <errno.h>
#include <string.h>

#include "recd/format.h"
#include "storage/recovery_internal.h"

int recd_recover_plan_buffer(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    if (!plan || (!buf && len))
        return -EINVAL;
    memset(plan, 0, sizeof *plan);
    if (len == 0)
        return recd_recover__decide(plan, RECD_RECOVER_REMOVED, "empty", "empty file");
    int claimed = recd_format_recover(buf, len, plan);
    if (claimed != 0)
        return claimed < 0 ? claimed : 0;
    return recd_recover__decide(plan, RECD_RECOVER_QUARANTINED, "unknown",
                                "no format recognises its header (first byte 0x%02x)", buf[0]);
}

int recd_recover_root(int root_fd, const recd_recover_options *opt, recd_recover_summary *out)
{
    return recd_recover__root(root_fd, opt, out, recd_recover_plan_buffer);
}
