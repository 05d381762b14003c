/* SPDX-License-Identifier: MIT */
/* Internal: small helpers the format entries share. */
#ifndef RECD_FORMAT_REPORT_H
#define RECD_FORMAT_REPORT_H

#include <stddef.h>

#include "recd/format.h"

/* A repair that cannot be done: r->detail becomes "prefix: offset N: message" for the first error
 * of rep (just prefix when there is none). Returns -EBADMSG. */
int recd_format__repair_failed(recd_repair_result *r, const recd_report *rep, const char *prefix);

#endif
