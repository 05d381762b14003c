/* SPDX-License-Identifier: MIT */
/* CARLA's show_recorder_actors_blocked from the file (docs/formats/carla.md 7.3). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_query.h"
#include "formats/carla/carla_schema.h"

typedef struct still {
    uint32_t id;
    double x, y, z;  /* where it was when it last moved */
    double start;    /* elapsed then */
    double duration; /* accumulated while it did not move */
} still;

typedef struct blocked_row {
    double start, duration;
    uint32_t id;
    size_t order;
} blocked_row;

static int cmp_rows(const void *a, const void *b)
{
    const blocked_row *x = a, *y = b;
    if (x->duration != y->duration)
        return x->duration < y->duration ? 1 : -1;
    return x->order < y->order ? -1 : x->order > y->order;
}

int recd_carla_blocked(const uint8_t *buf, size_t len, double min_time, double min_distance,
                       bool json, recd_buf *out, char *err, size_t errlen)
{
    carla_reader r;
    int rc = carla_query_open(&r, buf, len, json, out, err, errlen);
    if (rc != 0)
        return rc;
    actor_map m = {0};
    still *s = NULL;
    size_t ns = 0, caps = 0;
    carla_actor_index sx = {0}; /* id -> its slot in s */
    blocked_row *rows = NULL;
    size_t nrows = 0, caprows = 0;
    recd_carla_frame f;
    size_t at;
    uint64_t last_id = 0;
    double last_elapsed = 0;
    while (rc == 0 && carla_reader_next(&r, &f, &at) == 1) {
        last_id = f.id;
        last_elapsed = f.elapsed;
        for (size_t i = 0; i < f.count && rc == 0; i++) {
            const recd_carla_packet *p = &f.packets[i];
            if (p->raw || (p->kind != RECD_CARLA_EVENT_ADD && p->kind != RECD_CARLA_POSITION))
                continue;
            size_t off = 0;
            for (uint32_t k = 0; k < p->count && rc == 0; k++) {
                const uint8_t *q = p->data + off;
                off += carla_rec_size(p->kind, r.width, q, p->len - off);
                if (p->kind == RECD_CARLA_EVENT_ADD) {
                    actor_name a = carla_add_record(q, r.width);
                    rc = carla_actor_set(&m, &a);
                    continue;
                }
                uint32_t id = ld_le32(q);
                double x = carla_vat(q + 4, r.width, 0), y = carla_vat(q + 4, r.width, 1), z = carla_vat(q + 4, r.width, 2);
                size_t slot;
                still *e = carla_index_get(&sx, id, &slot) ? &s[slot] : NULL;
                if (!e) {
                    still *grown = recd__array_room(s, &caps, ns, sizeof *s, 64);
                    if (!grown) {
                        rc = -ENOMEM;
                        break;
                    }
                    s = grown;
                    if ((rc = carla_index_put(&sx, id, ns)) < 0)
                        break;
                    s[ns++] = (still){id, x, y, z, f.elapsed, 0};
                    continue;
                }
                double d = sqrt((x - e->x) * (x - e->x) + (y - e->y) * (y - e->y) + (z - e->z) * (z - e->z));
                if (d < min_distance) {
                    e->duration += f.duration;
                    continue;
                }
                if (e->duration >= min_time) {
                    blocked_row *more = recd__array_room(rows, &caprows, nrows, sizeof *rows, 16);
                    if (!more) {
                        rc = -ENOMEM;
                        break;
                    }
                    rows = more;
                    rows[nrows] = (blocked_row){e->start, e->duration, id, nrows};
                    nrows++;
                }
                *e = (still){id, x, y, z, f.elapsed, 0};
            }
        }
    }
    for (size_t j = 0; j < ns && rc == 0; j++) {
        if (s[j].duration < min_time)
            continue;
        blocked_row *more = recd__array_room(rows, &caprows, nrows, sizeof *rows, 16);
        if (!more) {
            rc = -ENOMEM;
            break;
        }
        rows = more;
        rows[nrows] = (blocked_row){s[j].start, s[j].duration, s[j].id, nrows};
        nrows++;
    }
    if (nrows)
        qsort(rows, nrows, sizeof *rows, cmp_rows);
    if (rc == 0)
        rc = json ? carla_put_json_header(&r, out) : carla_put_query_header(&r, out);
    if (rc == 0)
        rc = json ? recd_buf_printf(out, ",\"blocked\":[")
                  : recd_buf_printf(out, "%8s %6s %-35s %10s\n", "Time", "Id", "Actor", "Duration");
    for (size_t j = 0; j < nrows && rc == 0; j++) {
        if (json) {
            rc = recd_buf_printf(out, "%s{\"time\":", j ? "," : "");
            if (rc == 0)
                rc = carla_put_f64(out, rows[j].start);
            if (rc == 0)
                rc = recd_buf_printf(out, ",\"id\":%" PRIu32 ",\"actor\":", rows[j].id);
            if (rc == 0)
                rc = carla_put_name_json(out, &m, rows[j].id);
            if (rc == 0)
                rc = recd_buf_printf(out, ",\"duration\":");
            if (rc == 0)
                rc = carla_put_f64(out, rows[j].duration);
            if (rc == 0)
                rc = recd_buf_printf(out, "}");
            continue;
        }
        rc = recd_buf_printf(out, "%8.0f %6" PRIu32 " ", rows[j].start, rows[j].id);
        if (rc == 0)
            rc = carla_put_name_cell(out, &m, rows[j].id);
        if (rc == 0)
            rc = recd_buf_printf(out, " %10.0f\n", rows[j].duration);
    }
    if (rc == 0)
        rc = json ? recd_buf_printf(out, "],\"frames\":%" PRIu64 ",\"duration\":", last_id)
                  : recd_buf_printf(out, "\nFrames: %" PRIu64 "\nDuration: %g seconds\n", last_id, last_elapsed);
    if (rc == 0 && json) {
        rc = carla_put_f64(out, last_elapsed);
        if (rc == 0)
            rc = recd_buf_printf(out, "}\n");
    }
    free(s);
    carla_index_free(&sx);
    free(rows);
    carla_actor_map_free(&m);
    carla_reader_free(&r);
    return rc;
}
