/* SPDX-License-Identifier: MIT */
/* Helpers the CSV codec's format entries share: row errors naming line and column, numeric cells
 * read as JSON numbers, and number and JSON cells written. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "message/csv/msg_csv_formats.h"
#include "base/text.h"
#include "base/why.h"
#include "message/json/msg_json.h"

int msg_csv_bad(msg_csv_doc *d, uint64_t line, const char *column, const char *why)
{
    char safe[48];
    text_safe_excerpt(column, strlen(column), safe);
    recd_why(d->err, d->errlen, "line %llu: column %s: %s", (unsigned long long)line, safe, why);
    return -EBADMSG;
}

int msg_csv_deliver_json(msg_csv_doc *d, uint64_t line, int rc, json_t *obj, const char *kind,
                         size_t kind_len)
{
    if (rc == 0 && (!obj || json_object_set_new(obj, "type", json_stringn(kind, kind_len)) < 0))
        rc = -ENOMEM;
    if (rc == 0) {
        recd_msg m;
        char why[256];
        rc = msg_from_json_value(obj, d->st.format, &m, why, sizeof why);
        if (rc < 0) {
            recd_why(d->err, d->errlen, "line %llu: %s", (unsigned long long)line, why);
        } else {
            rc = msg_stream_deliver(&d->st, &m, line, d->err, d->errlen);
            recd_msg_free(&m);
        }
    }
    json_decref(obj);
    return rc;
}

json_t *msg_csv_number_json(const char *cell, size_t len)
{
    bool is_int;
    int64_t i = 0;
    double x = 0;
    if (!text_parse_number(cell, len, &is_int, &i, &x))
        return NULL;
    return is_int ? json_integer(i) : json_real(x);
}

int msg_csv_put_f64_cell(recd_buf *out, double d)
{
    char num[40];
    int rc = text_format_f64(d, num);
    return rc < 0 ? rc : msg_csv_put_cell(out, num, strlen(num), false);
}

int msg_csv_put_f32_cell(recd_buf *out, float f)
{
    char num[32];
    int rc = text_format_f32(f, num);
    return rc < 0 ? rc : msg_csv_put_cell(out, num, strlen(num), false);
}

int msg_csv_put_int_cell(recd_buf *out, uint64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRIu64, v);
    return msg_csv_put_cell(out, num, strlen(num), false);
}

int msg_csv_put_json_cell(recd_buf *out, const recd_buf *json)
{
    return msg_csv_put_cell(out, (const char *)json->data, json->len, false);
}

int msg_csv_put_empty_cells(recd_buf *out, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = msg_csv_put_cell(out, "", 0, false);
    return rc;
}

int msg_csv_put_fields_cell(recd_buf *out, const recd_msg *m, unsigned omit)
{
    recd_buf json = {0};
    int rc = msg_json_object(m, &json, omit);
    if (rc == 0)
        rc = json.len == 2 ? msg_csv_put_empty_cells(out, 1) : msg_csv_put_json_cell(out, &json);
    recd_buf_free(&json);
    return rc;
}
