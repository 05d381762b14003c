/* SPDX-License-Identifier: MIT */
/* Turning a librecd problem report into JSON for `info --json` and into the
 * "FILE: offset N: what is wrong" lines of `verify`. */
#ifndef RECTOOL_REPORT_UTIL_H
#define RECTOOL_REPORT_UTIL_H

#include <stdio.h>

#include <jansson.h>

#include "recd/common.h"

#define RT_REPORT_LIMIT 1000 /* problems kept per file; the rest are only counted */


/* [{"severity", "offset", "code", "message"}, ...] */
json_t *rt_report_json(const recd_report *r);

/* One line per problem at or above max_severity (ERROR < WARNING < INFO); returns lines printed. */
size_t rt_report_print(FILE *out, const char *path, const recd_report *r, recd_severity max_severity);

#endif
