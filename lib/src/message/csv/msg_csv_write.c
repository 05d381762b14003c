/* SPDX-License-Identifier: MIT */
/* CSV writer: .rec as one row per block with one column per field; Recap as one row per message
 * with a kind column, the state fields as columns and a JSON "data" column for the rest; CARLA as
 * one row per message with kind, frame, elapsed and duration columns and the records as JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "message/csv/msg_csv.h"
#include "formats/carla/carla_msg.h"
#include "message/csv/msg_csv_recap.h"
#include "message/msg_fields.h"
#include "message/msg_recap.h"

int recd_csv_writer_init(recd_csv_writer *w, recd_msg_format format)
{
    memset(w, 0, sizeof *w);
    if (format < RECD_MSG_FMT_SAMP_ONFOOT || format > RECD_MSG_FMT_CARLA)
        return -EINVAL;
    w->format = format;
    return 0;
}

static int put_header(recd_csv_writer *w, recd_buf *out)
{
    int rc = 0;
    if (w->format == RECD_MSG_FMT_CARLA) {
        for (size_t i = 0; i < MSG_CSV_CARLA_COLUMNS && rc == 0; i++)
            rc = msg_csv_put_cell(out, msg_csv_carla_columns[i], strlen(msg_csv_carla_columns[i]),
                                  i == 0);
    } else if (w->format == RECD_MSG_FMT_RECAP) {
        for (size_t i = 0; i < MSG_CSV_RECAP_COLUMNS && rc == 0; i++)
            rc = msg_csv_put_cell(out, msg_csv_recap_columns[i], strlen(msg_csv_recap_columns[i]),
                                  i == 0);
    } else {
        size_t n;
        const msg_field *fields = msg_rec_fields(w->format, &n);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = msg_csv_put_cell(out, fields[i].csv, strlen(fields[i].csv), i == 0);
    }
    if (rc == 0)
        rc = recd_buf_append(out, "\n", 1);
    if (rc == 0)
        w->header_written = true;
    return rc;
}

static int put_rec_row(recd_csv_writer *w, const recd_msg *m, recd_buf *out)
{
    size_t n;
    const msg_field *fields = msg_rec_fields(w->format, &n);
    msg_value vals[MSG_REC_MAX_FIELDS];
    msg_rec_flatten(m, vals);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char cell[32] = "";
        if (vals[i].set && fields[i].type == MF_F32) {
            rc = msg_format_f32(vals[i].f, cell);
        } else if (vals[i].set) {
            if (vals[i].i < msg_field_min(&fields[i]) || vals[i].i > msg_field_max(&fields[i]))
                rc = -EINVAL;
            snprintf(cell, sizeof cell, "%" PRId64, vals[i].i);
        }
        if (rc == 0)
            rc = msg_csv_put_cell(out, cell, strlen(cell), i == 0);
    }
    return rc == 0 ? recd_buf_append(out, "\n", 1) : rc;
}

static int put_f64_cell(recd_buf *out, double d)
{
    char num[40];
    int rc = msg_format_f64(d, num);
    return rc < 0 ? rc : msg_csv_put_cell(out, num, strlen(num), false);
}

static int put_int_cell(recd_buf *out, uint64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRIu64, v);
    return msg_csv_put_cell(out, num, strlen(num), false);
}

static int put_json_cell(recd_buf *out, const recd_buf *json)
{
    return msg_csv_put_cell(out, (const char *)json->data, json->len, false);
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
            rc = put_int_cell(out, m->recap_state->tick);
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = put_f64_cell(out, s->pos[i]);
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = put_f64_cell(out, s->rot[i]);
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = put_f64_cell(out, s->vel[i]);
        const unsigned ints[] = {s->flags, s->pose, s->game_mode, s->hand_state};
        for (int i = 0; i < 4 && rc == 0; i++)
            rc = put_int_cell(out, ints[i]);
        const float floats[] = {s->health, s->absorption};
        for (int i = 0; i < 2 && rc == 0; i++) {
            char num[32];
            rc = msg_format_f32(floats[i], num);
            if (rc == 0)
                rc = msg_csv_put_cell(out, num, strlen(num), false);
        }
        if (rc == 0)
            rc = msg_recap_items_to_json(s->equipment, RECD_RECAP_EQUIPMENT_SLOTS, &json);
        if (rc == 0)
            rc = put_json_cell(out, &json);
        recd_buf_reset(&json);
        if (rc == 0)
            rc = msg_recap_items_to_json(s->inventory, RECD_RECAP_INVENTORY_SLOTS, &json);
        if (rc == 0)
            rc = put_json_cell(out, &json);
        if (rc == 0)
            rc = msg_csv_put_cell(out, "", 0, false); /* data */
    } else {
        if (rc == 0 && m->type == RECD_MSG_EVENT) {
            rc = m->recap_event ? put_int_cell(out, m->recap_event->tick) : -EINVAL;
        } else if (rc == 0) {
            rc = msg_csv_put_cell(out, "", 0, false);
        }
        for (size_t i = 2; i + 1 < MSG_CSV_RECAP_COLUMNS && rc == 0; i++)
            rc = msg_csv_put_cell(out, "", 0, false);
        if (rc == 0)
            rc = msg_json_object(m, &json, MSG_OMIT_TYPE | MSG_OMIT_TICK);
        if (rc == 0)
            rc = json.len == 2 ? msg_csv_put_cell(out, "", 0, false) : put_json_cell(out, &json);
    }
    recd_buf_free(&json);
    return rc == 0 ? recd_buf_append(out, "\n", 1) : rc;
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
        char num[48];
        snprintf(num, sizeof num, "%" PRIu64, f->id);
        if (rc == 0)
            rc = msg_csv_put_cell(out, num, strlen(num), false);
        if (rc == 0)
            rc = put_f64_cell(out, f->elapsed);
        if (rc == 0)
            rc = f->has_duration ? put_f64_cell(out, f->duration) : msg_csv_put_cell(out, "", 0, false);
        recd_buf keys = {0}; /* ,"positions":[...],... */
        if (rc == 0)
            rc = recd__carla_state_packets_json(f, &keys);
        if (rc == 0 && keys.len) {
            rc = msg_buf_puts(&json, "{");
            if (rc == 0)
                rc = recd_buf_append(&json, keys.data + 1, keys.len - 1);
            if (rc == 0)
                rc = msg_buf_puts(&json, "}");
        }
        recd_buf_free(&keys);
        if (rc == 0)
            rc = json.len ? put_json_cell(out, &json) : msg_csv_put_cell(out, "", 0, false);
    } else {
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = msg_csv_put_cell(out, "", 0, false);
        if (rc == 0)
            rc = msg_json_object(m, &json, MSG_OMIT_TYPE);
        if (rc == 0)
            rc = json.len == 2 ? msg_csv_put_cell(out, "", 0, false) : put_json_cell(out, &json);
    }
    recd_buf_free(&json);
    return rc == 0 ? recd_buf_append(out, "\n", 1) : rc;
}

int recd_csv_write(recd_csv_writer *w, const recd_msg *m, recd_buf *out)
{
    if (w->format == RECD_MSG_FMT_NONE)
        return -EINVAL;
    size_t start = out->len;
    bool header_now = !w->header_written;
    int rc = header_now ? put_header(w, out) : 0;
    if (rc == 0) {
        if (w->format == RECD_MSG_FMT_CARLA) {
            rc = put_carla_row(m, out);
        } else if (w->format == RECD_MSG_FMT_RECAP) {
            bool mine = m->type == RECD_MSG_OPEN || m->type == RECD_MSG_FLUSH ||
                        m->type == RECD_MSG_CLOSE || m->format == RECD_MSG_FMT_RECAP;
            if (m->type == RECD_MSG_OPEN && m->format != RECD_MSG_FMT_RECAP)
                mine = false;
            rc = mine ? put_recap_row(m, out) : -EINVAL;
        } else if (m->type == RECD_MSG_STATE) {
            rc = m->format == w->format ? put_rec_row(w, m, out) : -EINVAL;
        } else if (m->type == RECD_MSG_EVENT ||
                   (m->type == RECD_MSG_OPEN && m->format != w->format)) {
            rc = -EINVAL;
        }
    }
    if (rc < 0) {
        out->len = start;
        if (header_now)
            w->header_written = false;
    }
    return rc;
}
