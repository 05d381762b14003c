/* SPDX-License-Identifier: MIT */
/* Writes a jansson value as JSON with every real in the shortest text that reads back to the
 * same double (librecd's export formatter), in jansson's JSON_INDENT(2) or compact layout. */
#ifndef RECTOOL_JSON_DUMP_H
#define RECTOOL_JSON_DUMP_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* 0, or -1 when out fails. indent: two spaces per level as json_dumpf(JSON_INDENT(2)). */
int rt_json_dump(FILE *out, const json_t *v, bool indent);

#endif
