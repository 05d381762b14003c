/* SPDX-License-Identifier: MIT */
/* The SA-MP .rec formats' CSV hooks (recd_rec__csv_*): one row per .rec block with one column per
 * field (rec_fields.c); the header carries the format, so open, flush and close have no
 * row. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "formats/rec/rec_fields.h"
#include "message/csv/msg_csv_formats.h"
#include "base/text.h"
#include "base/why.h"

static int read_rec_row(msg_csv_doc *d, uint64_t line)
{
    size_t n;
    const rec_field *fields = rec_fields(d->format, &n);
    rec_value vals[REC_MAX_FIELDS];
    memset(vals, 0, sizeof vals);
    for (size_t c = 0; c < d->ncols; c++) {
        const rec_field *f = &fields[d->col_field[c]];
        rec_value *v = &vals[d->col_field[c]];
        const char *cell = msg_csv_cell(&d->r, c);
        size_t len = d->r.cell_len[c];
        if (len == 0) {
            if (f->alt)
                continue;
            return msg_csv_bad(d, line, f->csv, "empty");
        }
        bool is_int;
        int64_t i = 0;
        double x = 0;
        char why[160];
        if (!text_parse_number(cell, len, &is_int, &i, &x)) {
            char safe[48], what[96];
            text_safe_excerpt(cell, len, safe);
            snprintf(what, sizeof what, "\"%s\" is not a number", safe);
            return msg_csv_bad(d, line, f->csv, what);
        }
        bool ok = is_int ? rec_value_from_int(f, i, v, why, sizeof why)
                         : rec_value_from_double(f, x, v, why, sizeof why);
        if (!ok)
            return msg_csv_bad(d, line, f->csv, why);
    }
    /* Vehicle bytes 63-66: both Hydra thrust cells, or the train speed cell. */
    int groups = 0, partial = 0;
    for (size_t f = 0; f < n; f++) {
        if (fields[f].alt == 1)
            partial += vals[f].set;
        if (fields[f].alt == 2)
            groups += vals[f].set;
    }
    if (d->format == RECD_MSG_FMT_SAMP_VEHICLE && !((partial == 2 && groups == 0) ||
                                                    (partial == 0 && groups == 1))) {
        recd_why(d->err, d->errlen,
                 "line %llu: fill either hydra_thrust_0 and hydra_thrust_1, or train_speed",
                 (unsigned long long)line);
        return -EBADMSG;
    }
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, d->format);
    rec_unflatten(vals, &m);
    return msg_stream_deliver(&d->st, &m, line, d->err, d->errlen);
}

static int put_rec_row(const recd_csv_writer *w, const recd_msg *m, recd_buf *out)
{
    size_t n;
    const rec_field *fields = rec_fields(w->format, &n);
    rec_value vals[REC_MAX_FIELDS];
    rec_flatten(m, vals);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char cell[32] = "";
        if (vals[i].set && fields[i].type == MF_F32) {
            rc = text_format_f32(vals[i].f, cell);
        } else if (vals[i].set) {
            if (vals[i].i < rec_field_min(&fields[i]) || vals[i].i > rec_field_max(&fields[i]))
                rc = -EINVAL;
            snprintf(cell, sizeof cell, "%" PRId64, vals[i].i);
        }
        if (rc == 0)
            rc = msg_csv_put_cell(out, cell, strlen(cell), i == 0);
    }
    return rc == 0 ? recd_buf_append(out, "\n", 1) : rc;
}

static size_t fields_columns(recd_msg_format f, const char *names[MSG_CSV_MAX_CELLS])
{
    size_t n;
    const rec_field *fields = rec_fields(f, &n);
    for (size_t i = 0; i < n; i++)
        names[i] = fields[i].csv;
    return n;
}

static size_t onfoot_columns(const char *names[MSG_CSV_MAX_CELLS])
{
    return fields_columns(RECD_MSG_FMT_SAMP_ONFOOT, names);
}

static size_t vehicle_columns(const char *names[MSG_CSV_MAX_CELLS])
{
    return fields_columns(RECD_MSG_FMT_SAMP_VEHICLE, names);
}

/* A state of the writer's format is a row; an event, or an open of another format, is refused;
 * anything else writes nothing. */
static int rec_write_row(const recd_csv_writer *w, const recd_msg *m, recd_buf *out)
{
    if (m->type == RECD_MSG_STATE)
        return m->format == w->format ? put_rec_row(w, m, out) : -EINVAL;
    if (m->type == RECD_MSG_EVENT || (m->type == RECD_MSG_OPEN && m->format != w->format))
        return -EINVAL;
    return 0;
}

const struct recd_format_csv recd_rec__csv_onfoot = {
    .columns = onfoot_columns,
    .read_row = read_rec_row,
    .write_row = rec_write_row,
};

const struct recd_format_csv recd_rec__csv_vehicle = {
    .signature = "vehicle_id",
    .header_rank = 3,
    .columns = vehicle_columns,
    .read_row = read_rec_row,
    .write_row = rec_write_row,
};
