/* SPDX-License-Identifier: MIT */
/* Internal: the first error of a problem report in one line, for repair details. */
#include "formats/format_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

int recd_format__repair_failed(recd_repair_result *r, const recd_report *rep, const char *prefix)
{
    for (size_t i = 0; i < rep->count; i++) {
        const recd_problem *p = &rep->items[i];
        if (p->severity == RECD_SEV_ERROR) {
            snprintf(r->detail, sizeof r->detail, "%s: offset %" PRIu64 ": %s", prefix, p->offset,
                     p->message);
            return -EBADMSG;
        }
    }
    snprintf(r->detail, sizeof r->detail, "%s", prefix);
    return -EBADMSG;
}
