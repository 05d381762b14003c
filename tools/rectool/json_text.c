/* SPDX-License-Identifier: MIT */
/* JSON -> human-readable text: objects become indented "key: value" lines, arrays of scalars stay
 * on one line, arrays of objects become one "- k: v, k: v" line per element. */
#include "json_text.h"

static void print_scalar(FILE *out, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: fputs(json_string_value(v), out); break;
    case JSON_INTEGER: fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: fprintf(out, "%.10g", json_real_value(v)); break;
    case JSON_TRUE: fputs("yes", out); break;
    case JSON_FALSE: fputs("no", out); break;
    case JSON_NULL: fputs("-", out); break;
    default: break;
    }
}

static void print_inline(FILE *out, const json_t *v)
{
    if (json_is_array(v)) {
        size_t i;
        const json_t *e;
        fputc('[', out);
        json_array_foreach(v, i, e) {
            if (i)
                fputs(", ", out);
            print_inline(out, e);
        }
        fputc(']', out);
    } else if (json_is_object(v)) {
        const char *k;
        const json_t *e;
        int first = 1;
        json_object_foreach((json_t *)v, k, e) {
            fprintf(out, "%s%s: ", first ? "" : ", ", k);
            print_inline(out, e);
            first = 0;
        }
    } else {
        print_scalar(out, v);
    }
}

static int is_list_of_objects(const json_t *v)
{
    return json_is_array(v) && json_array_size(v) > 0 && json_is_object(json_array_get(v, 0));
}

static void print_object(FILE *out, const json_t *obj, int indent)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        fprintf(out, "%*s%s:", indent, "", key);
        if (json_is_object(v)) {
            fputc('\n', out);
            print_object(out, v, indent + 2);
        } else if (is_list_of_objects(v)) {
            size_t i;
            const json_t *e;
            fputc('\n', out);
            json_array_foreach(v, i, e) {
                fprintf(out, "%*s- ", indent + 2, "");
                print_inline(out, e);
                fputc('\n', out);
            }
        } else {
            fputc(' ', out);
            print_inline(out, v);
            fputc('\n', out);
        }
    }
}

void rt_print_json_as_text(FILE *out, const json_t *obj) { print_object(out, obj, 0); }
