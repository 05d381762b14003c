/* SPDX-License-Identifier: MIT */
/* The parts CARLA's three queries share: text output, header lines, record sizes, actor names. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bytes.h"
#include "formats/carla/carla_query.h"
#include "formats/carla/carla_schema.h"
#include "base/text.h"

int carla_query_open(carla_reader *r, const uint8_t *buf, size_t len, bool json, recd_buf *out,
                       char *err, size_t errlen)
{
    if (carla_reader_init(r, buf, len, NULL) == 0)
        return 0;
    snprintf(err, errlen, "%s", r->err);
    if (!json && recd_buf_append(out, "File is not a CARLA recorder\n", 29) < 0)
        return -ENOMEM;
    return -EBADMSG;
}

/* Version, Map, Date and the blank line every query starts with. */
int carla_put_query_header(const carla_reader *r, recd_buf *out)
{
    time_t t = (time_t)r->hdr.date;
    struct tm tm;
    char date[64] = "";
    if (localtime_r(&t, &tm))
        strftime(date, sizeof date, "%m/%d/%y %H:%M:%S", &tm);
    int rc = recd_buf_printf(out, "Version: %u\nMap: ", r->hdr.version);
    if (rc == 0)
        rc = recd_buf_append(out, r->hdr.map, r->hdr.map_len);
    return rc == 0 ? recd_buf_printf(out, "\nDate: %s\n\n", date) : rc;
}

int carla_put_json_header(const carla_reader *r, recd_buf *out)
{
    int rc = recd_buf_printf(out, "{\"version\":%u,\"map\":", r->hdr.version);
    if (rc == 0)
        rc = text_put_json_string(out, (const char *)r->hdr.map, r->hdr.map_len);
    if (rc == 0)
        rc = recd_buf_printf(out, ",\"date\":%" PRId64 ",\"ids\":\"%s\",\"width\":\"%s\"", r->hdr.date,
                        carla_reader_ids_label(r), r->width == 8 ? "f64" : "f32");
    return rc;
}

int carla_put_vec(recd_buf *out, const uint8_t *p, unsigned w)
{
    return recd_buf_printf(out, "(%g, %g, %g)", carla_vat(p, w, 0), carla_vat(p, w, 1), carla_vat(p, w, 2));
}

bool carla_is_event(const recd_carla_packet *p)
{
    return !p->raw && p->kind >= RECD_CARLA_EVENT_ADD && p->kind <= RECD_CARLA_COLLISION;
}

actor_name *carla_actor_find(actor_map *m, uint32_t id)
{
    size_t slot;
    /* An erased id keeps its index entry: its slot then holds another actor, or none. */
    if (carla_index_get(&m->x, id, &slot) && slot < m->n && m->a[slot].id == id)
        return &m->a[slot];
    return NULL;
}

int carla_actor_set(actor_map *m, const actor_name *a)
{
    actor_name *e = carla_actor_find(m, a->id);
    if (e) {
        *e = *a;
        return 0;
    }
    actor_name *grown = recd__array_room(m->a, &m->cap, m->n, sizeof *m->a, 64);
    if (!grown)
        return -ENOMEM;
    m->a = grown;
    int rc = carla_index_put(&m->x, a->id, m->n);
    if (rc == 0)
        m->a[m->n++] = *a;
    return rc;
}

void carla_actor_erase(actor_map *m, uint32_t id)
{
    actor_name *e = carla_actor_find(m, id);
    if (!e)
        return;
    size_t slot = (size_t)(e - m->a);
    *e = m->a[--m->n];
    if (slot < m->n)
        (void)carla_index_put(&m->x, e->id, slot); /* a replacement: cannot fail */
}

void carla_actor_map_free(actor_map *m)
{
    free(m->a);
    carla_index_free(&m->x);
    *m = (actor_map){0};
}

actor_name carla_add_record(const uint8_t *q, unsigned w)
{
    size_t s = 4 + 1 + 6u * w + 4;
    return (actor_name){ld_le32(q), q[4], q + s + 2, ld_le16(q + s)};
}

int carla_put_name_cell(recd_buf *out, actor_map *m, uint32_t id)
{
    actor_name *a = carla_actor_find(m, id);
    char pad[36];
    size_t nl = a ? a->name_len : 0;
    int rc = a ? recd_buf_append(out, a->name, nl) : 0;
    if (rc == 0 && nl < 35) {
        memset(pad, ' ', 35 - nl);
        rc = recd_buf_append(out, pad, 35 - nl);
    }
    return rc;
}

int carla_put_name_json(recd_buf *out, actor_map *m, uint32_t id)
{
    actor_name *a = carla_actor_find(m, id);
    return a ? text_put_json_string(out, (const char *)a->name, a->name_len) : text_puts(out, "null");
}

