/* SPDX-License-Identifier: MIT */
/* recd_csv_read: a whole CSV document (hostile input) into messages. The header row decides the
 * format; .rec rows become blocks field by field, Recap rows are turned into JSON objects and go
 * through the JSON reader so both encodings share one set of rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message/csv/msg_csv.h"
#include "message/csv/msg_csv_recap.h"
#include "message/msg_fields.h"
#include "message/msg_stream.h"

const char *const msg_csv_carla_columns[MSG_CSV_CARLA_COLUMNS] = {"kind", "frame", "elapsed",
                                                                 "duration", "data"};
enum { CC_KIND = 0, CC_FRAME = 1, CC_ELAPSED = 2, CC_DURATION = 3, CC_DATA = 4 };

const char *const msg_csv_recap_columns[MSG_CSV_RECAP_COLUMNS] = {
    "kind",  "tick",      "pos_x",      "pos_y",  "pos_z",      "yaw",       "pitch",
    "head_yaw", "vel_x",  "vel_y",      "vel_z",  "flags",      "pose",      "game_mode",
    "hand_state", "health", "absorption", "equipment", "inventory", "data"};

enum { RC_KIND = 0, RC_TICK = 1, RC_FIRST_STATE = 2, RC_EQUIPMENT = 17, RC_INVENTORY = 18, RC_DATA = 19 };

typedef struct csv_doc {
    msg_csv_reader r;
    msg_stream st;
    recd_msg_format format;
    size_t ncols;
    int col_field[MSG_CSV_MAX_CELLS]; /* header column -> field / recap column index */
    char *err;
    size_t errlen;
} csv_doc;

static int bad(csv_doc *d, uint64_t line, const char *column, const char *why)
{
    char safe[48];
    msg_safe_text(column, strlen(column), safe);
    msg_err(d->err, d->errlen, "line %llu: column %s: %s", (unsigned long long)line, safe, why);
    return -EBADMSG;
}

/* ---- header ---------------------------------------------------------------------------------- */

static int read_header(csv_doc *d, size_t ncells, uint64_t line)
{
    const char *names[MSG_CSV_MAX_CELLS];
    d->format = RECD_MSG_FMT_SAMP_ONFOOT;
    bool carla = false;
    for (size_t i = 0; i < ncells; i++)
        carla |= strcmp(msg_csv_cell(&d->r, i), "frame") == 0;
    for (size_t i = 0; i < ncells; i++) {
        names[i] = msg_csv_cell(&d->r, i);
        if (carla)
            d->format = RECD_MSG_FMT_CARLA;
        else if (strcmp(names[i], "kind") == 0)
            d->format = RECD_MSG_FMT_RECAP;
        else if (strcmp(names[i], "vehicle_id") == 0 && d->format != RECD_MSG_FMT_RECAP)
            d->format = RECD_MSG_FMT_SAMP_VEHICLE;
    }
    size_t n;
    const msg_field *fields = msg_rec_fields(d->format, &n);
    const char *const *named = d->format == RECD_MSG_FMT_CARLA ? msg_csv_carla_columns
                                                               : msg_csv_recap_columns;
    if (d->format == RECD_MSG_FMT_RECAP)
        n = MSG_CSV_RECAP_COLUMNS;
    if (d->format == RECD_MSG_FMT_CARLA)
        n = MSG_CSV_CARLA_COLUMNS;
    bool seen[MSG_CSV_MAX_CELLS] = {false};
    for (size_t i = 0; i < ncells; i++) {
        size_t f = 0;
        while (f < n && strcmp(fields ? fields[f].csv : named[f], names[i]) != 0)
            f++;
        if (f == n || strlen(names[i]) != d->r.cell_len[i]) {
            char safe[48], why[160];
            msg_safe_text(names[i], d->r.cell_len[i], safe);
            snprintf(why, sizeof why, "line %llu: unknown column \"%s\" for %s CSV",
                     (unsigned long long)line, safe, recd_msg_format_name(d->format));
            msg_err(d->err, d->errlen, "%s", why);
            return -EBADMSG;
        }
        if (seen[f]) {
            msg_err(d->err, d->errlen, "line %llu: column \"%s\" appears twice",
                    (unsigned long long)line, names[i]);
            return -EBADMSG;
        }
        seen[f] = true;
        d->col_field[i] = (int)f;
    }
    for (size_t f = 0; f < n; f++) {
        if (!seen[f]) {
            msg_err(d->err, d->errlen, "line %llu: missing column \"%s\" (%s CSV)",
                    (unsigned long long)line, fields ? fields[f].csv : named[f],
                    recd_msg_format_name(d->format));
            return -EBADMSG;
        }
    }
    d->ncols = ncells;
    return 0;
}

/* ---- .rec rows ------------------------------------------------------------------------------- */

static int read_rec_row(csv_doc *d, uint64_t line)
{
    size_t n;
    const msg_field *fields = msg_rec_fields(d->format, &n);
    msg_value vals[MSG_REC_MAX_FIELDS];
    memset(vals, 0, sizeof vals);
    for (size_t c = 0; c < d->ncols; c++) {
        const msg_field *f = &fields[d->col_field[c]];
        msg_value *v = &vals[d->col_field[c]];
        const char *cell = msg_csv_cell(&d->r, c);
        size_t len = d->r.cell_len[c];
        if (len == 0) {
            if (f->alt)
                continue;
            return bad(d, line, f->csv, "empty");
        }
        bool is_int;
        int64_t i = 0;
        double x = 0;
        char why[160];
        if (!msg_parse_number(cell, len, &is_int, &i, &x)) {
            char safe[48], what[96];
            msg_safe_text(cell, len, safe);
            snprintf(what, sizeof what, "\"%s\" is not a number", safe);
            return bad(d, line, f->csv, what);
        }
        bool ok = is_int ? msg_value_from_int(f, i, v, why, sizeof why)
                         : msg_value_from_double(f, x, v, why, sizeof why);
        if (!ok)
            return bad(d, line, f->csv, why);
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
        msg_err(d->err, d->errlen,
                "line %llu: fill either hydra_thrust_0 and hydra_thrust_1, or train_speed",
                (unsigned long long)line);
        return -EBADMSG;
    }
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, d->format);
    msg_rec_unflatten(vals, &m);
    return msg_stream_deliver(&d->st, &m, line, d->err, d->errlen);
}

/* ---- Recap rows ------------------------------------------------------------------------------ */

static json_t *number_json(const char *cell, size_t len)
{
    bool is_int;
    int64_t i = 0;
    double x = 0;
    if (!msg_parse_number(cell, len, &is_int, &i, &x))
        return NULL;
    return is_int ? json_integer(i) : json_real(x);
}

/* Sets key in obj from a numeric cell. */
static int put_number(csv_doc *d, json_t *target, const char *key, size_t col, uint64_t line,
                      bool append)
{
    const char *name = msg_csv_recap_columns[d->col_field[col]];
    const char *cell = msg_csv_cell(&d->r, col);
    size_t len = d->r.cell_len[col];
    if (len == 0)
        return bad(d, line, name, "empty");
    json_t *v = number_json(cell, len);
    if (!v) {
        char safe[48], what[96];
        msg_safe_text(cell, len, safe);
        snprintf(what, sizeof what, "\"%s\" is not a number", safe);
        return bad(d, line, name, what);
    }
    int rc = append ? json_array_append_new(target, v) : json_object_set_new(target, key, v);
    return rc == 0 ? 0 : -ENOMEM;
}

static int parse_json_cell(csv_doc *d, size_t col, uint64_t line, json_t **out)
{
    const char *name = msg_csv_recap_columns[d->col_field[col]];
    json_error_t jerr;
    *out = json_loadb(msg_csv_cell(&d->r, col), d->r.cell_len[col],
                      JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!*out) {
        char why[220];
        snprintf(why, sizeof why, "invalid JSON at column %d: %s", jerr.column, jerr.text);
        return bad(d, line, name, why);
    }
    return 0;
}

static int recap_state_json(csv_doc *d, const size_t *col, uint64_t line, json_t *obj)
{
    if (d->r.cell_len[col[RC_DATA]])
        return bad(d, line, "data", "must be empty in a state row");
    int rc = put_number(d, obj, "tick", col[RC_TICK], line, false);
    static const char *const vecs[] = {"pos", "rot", "vel"};
    for (int v = 0; v < 3 && rc == 0; v++) {
        json_t *arr = json_array();
        if (!arr || json_object_set_new(obj, vecs[v], arr) < 0)
            return -ENOMEM;
        for (int k = 0; k < 3 && rc == 0; k++)
            rc = put_number(d, arr, NULL, col[RC_FIRST_STATE + v * 3 + k], line, true);
    }
    static const char *const scalars[] = {"flags", "pose", "game_mode", "hand_state", "health",
                                          "absorption"};
    for (int s = 0; s < 6 && rc == 0; s++)
        rc = put_number(d, obj, scalars[s], col[RC_FIRST_STATE + 9 + s], line, false);
    static const int lists[] = {RC_EQUIPMENT, RC_INVENTORY};
    for (int l = 0; l < 2 && rc == 0; l++) {
        size_t c = col[lists[l]];
        if (d->r.cell_len[c] == 0)
            continue;
        json_t *items;
        rc = parse_json_cell(d, c, line, &items);
        if (rc == 0 && json_object_set_new(obj, msg_csv_recap_columns[lists[l]], items) < 0)
            rc = -ENOMEM;
    }
    return rc;
}

static int recap_other_json(csv_doc *d, const size_t *col, uint64_t line, const char *kind,
                            json_t **obj)
{
    for (int c = RC_FIRST_STATE; c <= RC_INVENTORY; c++)
        if (d->r.cell_len[col[c]])
            return bad(d, line, msg_csv_recap_columns[c], "must be empty in a non-state row");
    bool event = strcmp(kind, "event") == 0;
    if (!event && d->r.cell_len[col[RC_TICK]])
        return bad(d, line, "tick", "only state and event rows have a tick");
    if (d->r.cell_len[col[RC_DATA]]) {
        json_decref(*obj);
        int rc = parse_json_cell(d, col[RC_DATA], line, obj);
        if (rc < 0) {
            *obj = NULL;
            return rc;
        }
        if (!json_is_object(*obj))
            return bad(d, line, "data", "expected a JSON object");
        if (json_object_get(*obj, "type"))
            return bad(d, line, "data", "\"type\" belongs in the kind column");
        if (event && json_object_get(*obj, "tick"))
            return bad(d, line, "data", "\"tick\" belongs in the tick column");
    }
    if (event && d->r.cell_len[col[RC_TICK]])
        return put_number(d, *obj, "tick", col[RC_TICK], line, false);
    return 0;
}

static int read_recap_row(csv_doc *d, uint64_t line)
{
    size_t col[MSG_CSV_RECAP_COLUMNS];
    for (size_t c = 0; c < d->ncols; c++)
        col[d->col_field[c]] = c;
    const char *kind = msg_csv_cell(&d->r, col[RC_KIND]);
    json_t *obj = json_object();
    if (!obj)
        return -ENOMEM;
    int rc = strcmp(kind, "state") == 0 ? recap_state_json(d, col, line, obj)
                                        : recap_other_json(d, col, line, kind, &obj);
    if (rc == 0 && (!obj || json_object_set_new(obj, "type", json_stringn(kind, d->r.cell_len[col[RC_KIND]])) < 0))
        rc = -ENOMEM;
    if (rc == 0) {
        recd_msg m;
        char why[256];
        rc = msg_from_json_value(obj, d->st.format, &m, why, sizeof why);
        if (rc < 0) {
            msg_err(d->err, d->errlen, "line %llu: %s", (unsigned long long)line, why);
        } else {
            rc = msg_stream_deliver(&d->st, &m, line, d->err, d->errlen);
            recd_msg_free(&m);
        }
    }
    json_decref(obj);
    return rc;
}

/* ---- CARLA rows ------------------------------------------------------------------------------ */

static int carla_number(csv_doc *d, json_t *obj, const char *key, size_t col, uint64_t line)
{
    const char *cell = msg_csv_cell(&d->r, col);
    size_t len = d->r.cell_len[col];
    json_t *v = number_json(cell, len);
    if (!v || json_object_set_new(obj, key, v) < 0) {
        char safe[48], what[96];
        msg_safe_text(cell, len, safe);
        snprintf(what, sizeof what, "\"%s\" is not a number", safe);
        return v ? -ENOMEM : bad(d, line, key, what);
    }
    return 0;
}

static int read_carla_row(csv_doc *d, uint64_t line)
{
    size_t col[MSG_CSV_CARLA_COLUMNS];
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
            return bad(d, line, "data", "expected a JSON object");
        }
        if (json_object_get(obj, "type") || json_object_get(obj, "frame") ||
            json_object_get(obj, "elapsed") || json_object_get(obj, "duration")) {
            json_decref(obj);
            return bad(d, line, "data", "type, frame, elapsed and duration belong in their columns");
        }
    } else if (!(obj = json_object())) {
        return -ENOMEM;
    }
    static const char *const numeric[] = {"frame", "elapsed", "duration"};
    for (int c = CC_FRAME; c <= CC_DURATION && rc == 0; c++) {
        size_t at = col[c];
        if (!state && d->r.cell_len[at])
            rc = bad(d, line, numeric[c - 1], "only state rows have it");
        else if (state && d->r.cell_len[at])
            rc = carla_number(d, obj, numeric[c - 1], at, line);
    }
    if (rc == 0 && json_object_set_new(obj, "type", json_stringn(kind, d->r.cell_len[col[CC_KIND]])) < 0)
        rc = -ENOMEM;
    if (rc == 0) {
        recd_msg m;
        char why[256];
        rc = msg_from_json_value(obj, d->st.format, &m, why, sizeof why);
        if (rc < 0) {
            msg_err(d->err, d->errlen, "line %llu: %s", (unsigned long long)line, why);
        } else {
            rc = msg_stream_deliver(&d->st, &m, line, d->err, d->errlen);
            recd_msg_free(&m);
        }
    }
    json_decref(obj);
    return rc;
}

/* ---- document -------------------------------------------------------------------------------- */

static int read_rows(csv_doc *d)
{
    size_t ncells;
    uint64_t line;
    char why[200] = "";
    int rc = msg_csv_next_row(&d->r, &ncells, &line, why, sizeof why);
    if (rc == 0) {
        msg_err(d->err, d->errlen, "no header row: the input is empty");
        return -EBADMSG;
    }
    if (rc < 0)
        goto fail;
    if ((rc = read_header(d, ncells, line)) < 0)
        return rc;
    bool own_open = d->format == RECD_MSG_FMT_RECAP || d->format == RECD_MSG_FMT_CARLA;
    if (!own_open) {
        recd_msg open;
        recd_msg_init(&open, RECD_MSG_OPEN, d->format);
        if ((rc = msg_stream_deliver(&d->st, &open, line, d->err, d->errlen)) < 0)
            return rc;
    }
    uint64_t last_line = line;
    while ((rc = msg_csv_next_row(&d->r, &ncells, &line, why, sizeof why)) > 0) {
        last_line = line;
        if (ncells != d->ncols) {
            msg_err(d->err, d->errlen, "line %llu: %zu cells, the header has %zu",
                    (unsigned long long)line, ncells, d->ncols);
            return -EBADMSG;
        }
        rc = d->format == RECD_MSG_FMT_CARLA   ? read_carla_row(d, line)
             : d->format == RECD_MSG_FMT_RECAP ? read_recap_row(d, line)
                                               : read_rec_row(d, line);
        if (rc < 0)
            return rc;
    }
    if (rc < 0)
        goto fail;
    if (!d->st.opened) {
        msg_err(d->err, d->errlen, "no open row");
        return -EBADMSG;
    }
    if (!own_open && !d->st.closed) {
        recd_msg close;
        recd_msg_init(&close, RECD_MSG_CLOSE, d->format);
        return msg_stream_deliver(&d->st, &close, last_line, d->err, d->errlen);
    }
    return 0;
fail:
    if (rc == -EBADMSG && d->err)
        msg_err(d->err, d->errlen, "%s", why);
    else if (rc == -ENOMEM)
        msg_err(d->err, d->errlen, "out of memory");
    return rc;
}

int recd_csv_read(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx, char *err,
                  size_t errlen)
{
    csv_doc *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    msg_csv_reader_init(&d->r, buf, len);
    d->st.on_msg = on_msg;
    d->st.ctx = ctx;
    d->err = err;
    d->errlen = errlen;
    if (err && errlen)
        err[0] = 0;
    int rc = read_rows(d);
    msg_csv_reader_free(&d->r);
    free(d);
    return rc;
}
