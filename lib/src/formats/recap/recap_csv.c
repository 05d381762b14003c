/* SPDX-License-Identifier: MIT */
/* Recap's CSV hooks (recd_recap__csv): one row per message with a kind column, the
 * state fields as columns and a JSON "data" column for the rest. Rows read are turned into JSON
 * objects and go through the JSON reader, so both encodings share one set of rules. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/recap/recap_msg.h"
#include "message/csv/msg_csv_formats.h"
#include "base/text.h"
#include "message/json/msg_json.h"

/* kind, tick, 15 state scalars, equipment, inventory, data: in this order when written. */
#define RECAP_CSV_COLUMNS 20

static const char *const recap_csv_columns[RECAP_CSV_COLUMNS] = {
    "kind",  "tick",      "pos_x",      "pos_y",  "pos_z",      "yaw",       "pitch",
    "head_yaw", "vel_x",  "vel_y",      "vel_z",  "flags",      "pose",      "game_mode",
    "hand_state", "health", "absorption", "equipment", "inventory", "data"};

enum { RC_KIND = 0, RC_TICK = 1, RC_FIRST_STATE = 2, RC_EQUIPMENT = 17, RC_INVENTORY = 18, RC_DATA = 19 };

/* Sets key in obj from a numeric cell. */
static int put_number(msg_csv_doc *d, json_t *target, const char *key, size_t col, uint64_t line,
                      bool append)
{
    const char *name = recap_csv_columns[d->col_field[col]];
    const char *cell = msg_csv_cell(&d->r, col);
    size_t len = d->r.cell_len[col];
    if (len == 0)
        return msg_csv_bad(d, line, name, "empty");
    json_t *v = msg_csv_number_json(cell, len);
    if (!v) {
        char safe[48], what[96];
        text_safe_excerpt(cell, len, safe);
        snprintf(what, sizeof what, "\"%s\" is not a number", safe);
        return msg_csv_bad(d, line, name, what);
    }
    int rc = append ? json_array_append_new(target, v) : json_object_set_new(target, key, v);
    return rc == 0 ? 0 : -ENOMEM;
}

static int parse_json_cell(msg_csv_doc *d, size_t col, uint64_t line, json_t **out)
{
    const char *name = recap_csv_columns[d->col_field[col]];
    json_error_t jerr;
    *out = json_loadb(msg_csv_cell(&d->r, col), d->r.cell_len[col],
                      JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!*out) {
        char why[220];
        snprintf(why, sizeof why, "invalid JSON at column %d: %s", jerr.column, jerr.text);
        return msg_csv_bad(d, line, name, why);
    }
    return 0;
}

static int recap_state_json(msg_csv_doc *d, const size_t *col, uint64_t line, json_t *obj)
{
    if (d->r.cell_len[col[RC_DATA]])
        return msg_csv_bad(d, line, "data", "must be empty in a state row");
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
        if (rc == 0 && json_object_set_new(obj, recap_csv_columns[lists[l]], items) < 0)
            rc = -ENOMEM;
    }
    return rc;
}

static int recap_other_json(msg_csv_doc *d, const size_t *col, uint64_t line, const char *kind,
                            json_t **obj)
{
    for (int c = RC_FIRST_STATE; c <= RC_INVENTORY; c++)
        if (d->r.cell_len[col[c]])
            return msg_csv_bad(d, line, recap_csv_columns[c], "must be empty in a non-state row");
    bool event = strcmp(kind, "event") == 0;
    if (!event && d->r.cell_len[col[RC_TICK]])
        return msg_csv_bad(d, line, "tick", "only state and event rows have a tick");
    if (d->r.cell_len[col[RC_DATA]]) {
        json_decref(*obj);
        int rc = parse_json_cell(d, col[RC_DATA], line, obj);
        if (rc < 0) {
            *obj = NULL;
            return rc;
        }
        if (!json_is_object(*obj))
            return msg_csv_bad(d, line, "data", "expected a JSON object");
        if (json_object_get(*obj, "type"))
            return msg_csv_bad(d, line, "data", "\"type\" belongs in the kind column");
        if (event && json_object_get(*obj, "tick"))
            return msg_csv_bad(d, line, "data", "\"tick\" belongs in the tick column");
    }
    if (event && d->r.cell_len[col[RC_TICK]])
        return put_number(d, *obj, "tick", col[RC_TICK], line, false);
    return 0;
}

static int read_recap_row(msg_csv_doc *d, uint64_t line)
{
    size_t col[RECAP_CSV_COLUMNS];
    for (size_t c = 0; c < d->ncols; c++)
        col[d->col_field[c]] = c;
    const char *kind = msg_csv_cell(&d->r, col[RC_KIND]);
    json_t *obj = json_object();
    if (!obj)
        return -ENOMEM;
    int rc = strcmp(kind, "state") == 0 ? recap_state_json(d, col, line, obj)
                                        : recap_other_json(d, col, line, kind, &obj);
    return msg_csv_deliver_json(d, line, rc, obj, kind, d->r.cell_len[col[RC_KIND]]);
}

static int put_recap_row(const recd_msg *m, recd_buf *out)
{
    const char *kind = recd_msg_type_name(m->type);
    if (!*kind)
        return -EINVAL;
    int rc = msg_csv_put_cell(out, kind, strlen(kind), true);
    recd_buf json = {0};
    if (m->type == RECD_MSG_STATE) {
        if (!m->recap_state)
            return -EINVAL;
        const recd_recap_state *s = &m->recap_state->state;
        if (rc == 0)
            rc = msg_csv_put_int_cell(out, m->recap_state->tick);
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = msg_csv_put_f64_cell(out, s->pos[i]);
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = msg_csv_put_f64_cell(out, s->rot[i]);
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = msg_csv_put_f64_cell(out, s->vel[i]);
        const unsigned ints[] = {s->flags, s->pose, s->game_mode, s->hand_state};
        for (int i = 0; i < 4 && rc == 0; i++)
            rc = msg_csv_put_int_cell(out, ints[i]);
        if (rc == 0)
            rc = msg_csv_put_f32_cell(out, s->health);
        if (rc == 0)
            rc = msg_csv_put_f32_cell(out, s->absorption);
        if (rc == 0)
            rc = msg_recap_items_to_json(s->equipment, RECD_RECAP_EQUIPMENT_SLOTS, &json);
        if (rc == 0)
            rc = msg_csv_put_json_cell(out, &json);
        recd_buf_reset(&json);
        if (rc == 0)
            rc = msg_recap_items_to_json(s->inventory, RECD_RECAP_INVENTORY_SLOTS, &json);
        if (rc == 0)
            rc = msg_csv_put_json_cell(out, &json);
        if (rc == 0)
            rc = msg_csv_put_empty_cells(out, 1); /* data */
    } else {
        if (rc == 0 && m->type == RECD_MSG_EVENT) {
            rc = m->recap_event ? msg_csv_put_int_cell(out, m->recap_event->tick) : -EINVAL;
        } else if (rc == 0) {
            rc = msg_csv_put_empty_cells(out, 1);
        }
        if (rc == 0) /* every column but kind, tick and data */
            rc = msg_csv_put_empty_cells(out, RECAP_CSV_COLUMNS - 3);
        if (rc == 0)
            rc = msg_csv_put_fields_cell(out, m, MSG_OMIT_TYPE | MSG_OMIT_TICK);
    }
    recd_buf_free(&json);
    return rc == 0 ? recd_buf_append(out, "\n", 1) : rc;
}

static size_t recap_columns(const char *names[MSG_CSV_MAX_CELLS])
{
    memcpy(names, recap_csv_columns, sizeof recap_csv_columns);
    return RECAP_CSV_COLUMNS;
}

/* Open, flush and close of any session, and the Recap states and events; not another format's
 * open. */
static int recap_write_row(const recd_csv_writer *w, const recd_msg *m, recd_buf *out)
{
    (void)w;
    bool mine = m->type == RECD_MSG_OPEN || m->type == RECD_MSG_FLUSH ||
                m->type == RECD_MSG_CLOSE || m->format == RECD_MSG_FMT_RECAP;
    if (m->type == RECD_MSG_OPEN && m->format != RECD_MSG_FMT_RECAP)
        mine = false;
    return mine ? put_recap_row(m, out) : -EINVAL;
}

const struct recd_format_csv recd_recap__csv = {
    .signature = "kind",
    .header_rank = 2, /* after CARLA's "frame": its headers have "kind" too */
    .own_open = true,
    .columns = recap_columns,
    .read_row = read_recap_row,
    .write_row = recap_write_row,
};
