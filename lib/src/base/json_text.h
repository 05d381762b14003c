/* SPDX-License-Identifier: MIT */
/* Internal: helpers for JSON objects read with jansson and written into a recd_buf, shared by the
 * JSON and CSV encodings and the formats' JSON hooks: key lists, optional integer keys, the
 * names of JSON types in errors, and a key written in one append. No knowledge of messages or
 * formats. Defined in json_text.c (the key writer inline here). */
#ifndef RECD_BASE_JSON_TEXT_H
#define RECD_BASE_JSON_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "recd/common.h"

/* "a string", "an array", ...: the type of j as an error message names it. */
const char *json_text_type_name(const json_t *j);
/* true when key is one of list (NULL-terminated). */
bool json_text_key_in(const char *key, const char *const *list);
/* The first key of obj that is not in allowed, or NULL. */
const char *json_text_unknown_key(const json_t *obj, const char *const *allowed);
/* "WHERE: unknown key \"KEY\"" into err; -EBADMSG. */
int json_text_err_unknown_key(const char *where, const char *key, char *err, size_t errlen);
/* Optional integer key of root, at least min: *present says whether it was there. 0 or -EBADMSG
 * ("TYPE.KEY: ..."). */
int json_text_read_int64(const json_t *root, const char *type, const char *key, int64_t min,
                        int64_t *out, bool *present, char *err, size_t errlen);
/* ,"key": in one append. Inline: the JSON writers call it for every key of an export. */
static inline int json_text_put_key(recd_buf *out, const char *key)
{
    size_t n = strlen(key);
    int rc = recd_buf_reserve(out, n + 4);
    if (rc < 0)
        return rc;
    char *p = (char *)out->data + out->len;
    p[0] = ',';
    p[1] = '"';
    memcpy(p + 2, key, n);
    p[n + 2] = '"';
    p[n + 3] = ':';
    out->len += n + 4;
    return 0;
}

#endif
