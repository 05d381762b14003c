/* SPDX-License-Identifier: MIT */
/* Problem report formatting shared by info and verify. */
#include "report_util.h"

#include <inttypes.h>

static const char *rt_severity_name(recd_severity s)
{
    switch (s) {
    case RECD_SEV_ERROR: return "error";
    case RECD_SEV_WARNING: return "warning";
    case RECD_SEV_INFO: return "info";
    default: return "unknown";
    }
}

json_t *rt_report_json(const recd_report *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->count; i++) {
        const recd_problem *p = &r->items[i];
        json_array_append_new(a, json_pack("{s:s, s:I, s:s, s:s}", "severity",
                                           rt_severity_name(p->severity), "offset",
                                           (json_int_t)p->offset, "code", p->code, "message",
                                           p->message));
    }
    return a;
}

size_t rt_report_print(FILE *out, const char *path, const recd_report *r, recd_severity max_severity)
{
    size_t printed = 0;
    for (size_t i = 0; i < r->count; i++) {
        const recd_problem *p = &r->items[i];
        if (p->severity > max_severity)
            continue;
        if (p->severity == RECD_SEV_ERROR)
            fprintf(out, "%s: offset %" PRIu64 ": %s\n", path, p->offset, p->message);
        else
            fprintf(out, "%s: offset %" PRIu64 ": %s: %s\n", path, p->offset,
                    rt_severity_name(p->severity), p->message);
        printed++;
    }
    if (r->dropped)
        fprintf(out, "%s: %zu more problems not shown\n", path, r->dropped);
    return printed;
}
