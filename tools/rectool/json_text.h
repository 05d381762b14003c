/* SPDX-License-Identifier: MIT */
/* Prints a JSON description as indented "key: value" lines for people (`info` without --json),
 * so the text and JSON outputs always carry the same facts. */
#ifndef RECTOOL_JSON_TEXT_H
#define RECTOOL_JSON_TEXT_H

#include <stdio.h>

#include <jansson.h>

void rt_print_json_as_text(FILE *out, const json_t *obj);

#endif
