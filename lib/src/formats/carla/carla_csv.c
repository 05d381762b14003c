/* SPDX-License-Identifier: MIT */
/* CARLA's CSV hooks (recd_carla__csv): one row per message with kind, frame, elapsed
 * and duration columns and the records as JSON in a data column. Rows read are turned into JSON
 * objects and go through the JSON reader. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/carla/carla_msg.h"
#include "message/csv/msg_csv_formats.h"
#include "base/text.h"
#include "message/json/msg_json.h"

/* kind, frame, elapsed, duration, data. */
#define CARLA_CSV_COLUMNS 5

static const char *const carla_csv_columns[CARLA_CSV_COLUMNS] = {"kind", "frame",
                                                                        "elapsed", "duration",
                                                                        "data"};
enum { CC_KIND = 0, CC_FRAME = 1, CC_ELAPSED = 2, CC_DURATION = 3, CC_DATA = 4 };

static int carla_number(msg_csv_doc *d, json_t *obj, const char *key, size_t col, uint64_t line)
{
    const char *cell = msg_csv_cell(&d->r, col);
    size_t len = d->r.cell_len[col];
    json_t *v = msg_csv_number_json(cell, len);
    if (!v || json_object_set_new(obj, key, v) < 0) {
        char safe[48], what[96];
        text_safe_excerpt(cell, len, safe);
        snprintf(what, sizeof what, "\"%s\" is not a number", safe);
        return v ? -ENOMEM : msg_csv_bad(d, line, key, what);
    }
    return 0;
}

static int read_carla_row(msg_csv_doc *d, uint64_t line)
{
    size_t col[CARLA_CSV_COLUMNS];
    for (size_t c = 0; c < d->ncols; c++)
        col[d->col_field[c]] = c;
    const char *kind = msg_csv_cell(&d->r, col[CC_KIND]);
    bool state = strcmp(kind, "state") == 0;
    json_t *obj = NULL;
    int rc = 0;
    if (d->r.cell_len[col[CC_DATA]]) {
        json_error_t jerr;
        obj = json_loadb(msg_csv_cell(&d->r, col[CC_DATA]), d->r.cell_len[col[CC_DATA]],
                         JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
        if (!obj || !json_is_object(obj)) {
            json_decref(obj);
            return msg_csv_bad(d, line, "data", "expected a JSON object");
        }
        if (json_object_get(obj, "type") || json_object_get(obj, "frame") ||
            json_object_get(obj, "elapsed") || json_object_get(obj, "duration")) {
            json_decref(obj);
            return msg_csv_bad(d, line, "data", "type, frame, elapsed and duration belong in their columns");
        }
    } else if (!(obj = json_object())) {
        return -ENOMEM;
    }
    static const char *const numeric[] = {"frame", "elapsed", "duration"};
    for (int c = CC_FRAME; c <= CC_DURATION && rc == 0; c++) {
        size_t at = col[c];
        if (!state && d->r.cell_len[at])
            rc = msg_csv_bad(d, line, numeric[c - 1], "only state rows have it");
        else if (state && d->r.cell_len[at])
            rc = carla_number(d, obj, numeric[c - 1], at, line);
    }
    return msg_csv_deliver_json(d, line, rc, obj, kind, d->r.cell_len[col[CC_KIND]]);
}

/* kind, frame, elapsed, duration, data: a state's numbers in columns and its records as one JSON
 * object; other messages only in data (the open's format and carla object, an event's record). */
static int put_carla_row(const recd_msg *m, recd_buf *out)
{
    const char *kind = recd_msg_type_name(m->type);
    if (!*kind || (m->type != RECD_MSG_CLOSE && m->format != RECD_MSG_FMT_CARLA))
        return -EINVAL;
    int rc = msg_csv_put_cell(out, kind, strlen(kind), true);
    recd_buf json = {0};
    if (m->type == RECD_MSG_STATE) {
        const recd_carla_frame *f = m->carla_state;
        if (!f || f->id > INT64_MAX)
            return -EINVAL;
        if (rc == 0)
            rc = msg_csv_put_int_cell(out, f->id);
        if (rc == 0)
            rc = msg_csv_put_f64_cell(out, f->elapsed);
        if (rc == 0)
            rc = f->has_duration ? msg_csv_put_f64_cell(out, f->duration)
                                 : msg_csv_put_empty_cells(out, 1);
        recd_buf keys = {0}; /* ,"positions":[...],... */
        if (rc == 0)
            rc = recd__carla_state_packets_json(f, &keys);
        if (rc == 0 && keys.len) {
            rc = text_puts(&json, "{");
            if (rc == 0)
                rc = recd_buf_append(&json, keys.data + 1, keys.len - 1);
            if (rc == 0)
                rc = text_puts(&json, "}");
        }
        recd_buf_free(&keys);
        if (rc == 0)
            rc = json.len ? msg_csv_put_json_cell(out, &json) : msg_csv_put_empty_cells(out, 1);
    } else {
        if (rc == 0)
            rc = msg_csv_put_empty_cells(out, 3); /* frame, elapsed, duration */
        if (rc == 0)
            rc = msg_csv_put_fields_cell(out, m, MSG_OMIT_TYPE);
    }
    recd_buf_free(&json);
    return rc == 0 ? recd_buf_append(out, "\n", 1) : rc;
}

static size_t carla_columns(const char *names[MSG_CSV_MAX_CELLS])
{
    memcpy(names, carla_csv_columns, sizeof carla_csv_columns);
    return CARLA_CSV_COLUMNS;
}

static int carla_write_row(const recd_csv_writer *w, const recd_msg *m, recd_buf *out)
{
    (void)w;
    return put_carla_row(m, out);
}

const struct recd_format_csv recd_carla__csv = {
    .signature = "frame",
    .header_rank = 1,
    .own_open = true,
    .columns = carla_columns,
    .read_row = read_carla_row,
    .write_row = carla_write_row,
};
