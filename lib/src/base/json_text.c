/* SPDX-License-Identifier: MIT */
/* base/json_text.h: key lists, optional integer keys and the names of JSON types in errors, for
 * JSON objects read with jansson. (String escaping, UTF-8 and base64 are base/text.c's.) */
#include "base/json_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "base/why.h"

const char *json_text_type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
    }
    return "?";
}

bool json_text_key_in(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

const char *json_text_unknown_key(const json_t *obj, const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val)
    {
        (void)val;
        if (!json_text_key_in(key, allowed))
            return key;
    }
    return NULL;
}

int json_text_err_unknown_key(const char *where, const char *key, char *err, size_t errlen)
{
    char safe[48];
    text_safe_excerpt(key, strlen(key), safe);
    recd_why(err, errlen, "%s: unknown key \"%s\"", where, safe);
    return -EBADMSG;
}

int json_text_read_int64(const json_t *root, const char *type, const char *key, int64_t min,
                        int64_t *out, bool *present, char *err, size_t errlen)
{
    json_t *j = json_object_get(root, key);
    *present = j != NULL;
    if (!j)
        return 0;
    if (!json_is_integer(j)) {
        recd_why(err, errlen, "%s.%s: expected an integer, got %s", type, key, json_text_type_name(j));
        return -EBADMSG;
    }
    json_int_t v = json_integer_value(j);
    if (v < min) {
        recd_why(err, errlen, "%s.%s: %lld is below %lld", type, key, (long long)v, (long long)min);
        return -EBADMSG;
    }
    *out = v;
    return 0;
}
