/* SPDX-License-Identifier: MIT */
/* JSON output with exact numbers: jansson prints reals with a fixed precision, which either
 * rounds (12.52820498) or adds noise digits (0.10000000000000001); this writer keeps jansson's
 * layout and prints reals as export does (text_format_f64). */
#include "json_dump.h"

#include <string.h>

#include "base/text.h"

static void put_string(FILE *out, const char *s, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (c < 0x20)
                fprintf(out, "\\u%04X", c);
            else
                fputc(c, out);
        }
    }
    fputc('"', out);
}

static void newline(FILE *out, bool indent, int depth)
{
    if (indent)
        fprintf(out, "\n%*s", 2 * depth, "");
}

static void put_value(FILE *out, const json_t *v, bool indent, int depth);

static void put_array(FILE *out, const json_t *v, bool indent, int depth)
{
    size_t i;
    const json_t *e;
    fputc('[', out);
    json_array_foreach(v, i, e) {
        if (i)
            fputc(',', out);
        newline(out, indent, depth + 1);
        put_value(out, e, indent, depth + 1);
    }
    if (json_array_size(v))
        newline(out, indent, depth);
    fputc(']', out);
}

static void put_object(FILE *out, const json_t *v, bool indent, int depth)
{
    const char *k;
    const json_t *e;
    bool first = true;
    fputc('{', out);
    json_object_foreach((json_t *)v, k, e) {
        if (!first)
            fputc(',', out);
        first = false;
        newline(out, indent, depth + 1);
        put_string(out, k, strlen(k));
        fputs(indent ? ": " : ":", out);
        put_value(out, e, indent, depth + 1);
    }
    if (!first)
        newline(out, indent, depth);
    fputc('}', out);
}

static void put_value(FILE *out, const json_t *v, bool indent, int depth)
{
    char num[40];
    switch (json_typeof(v)) {
    case JSON_OBJECT: put_object(out, v, indent, depth); break;
    case JSON_ARRAY: put_array(out, v, indent, depth); break;
    case JSON_STRING: put_string(out, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL:
        if (text_format_f64(json_real_value(v), num) == 0)
            fputs(num, out);
        else
            fputs("null", out); /* jansson holds no non-finite reals */
        break;
    case JSON_TRUE: fputs("true", out); break;
    case JSON_FALSE: fputs("false", out); break;
    default: fputs("null", out); break;
    }
}

int rt_json_dump(FILE *out, const json_t *v, bool indent)
{
    put_value(out, v, indent, 0);
    return ferror(out) ? -1 : 0;
}
