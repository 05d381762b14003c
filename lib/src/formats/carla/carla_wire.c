/* SPDX-License-Identifier: MIT */
/* CARLA payloads of binary frames (docs/wire.md, "carla"): the open's header fields, a frame as
 * its packets (CARLA's own record bytes), and one event record. Decoders check every length and
 * that records fill their packets exactly, so what reaches a session is well formed. A frame's
 * packets are read in place: their bytes stay in the frame being decoded (state_borrows). */
#include "formats/carla/carla_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_format.h"
#include "formats/carla/carla_msg.h"
#include "formats/carla/carla_schema.h"
#include "recd/format_wire.h"

#define MAX_PACKETS 1024 /* per frame: far above the 25 kinds plus user packets */

static int carla_wire_open_write(const recd_carla_open *o, recd_buf *out)
{
    size_t map_len = o->map ? strlen(o->map) : 0;
    if (map_len > 0xFFFF || (o->width != 4 && o->width != 8))
        return -EINVAL;
    uint8_t b[13];
    st_le64(b, (uint64_t)o->date);
    b[8] = o->width;
    b[9] = (uint8_t)o->ids;
    b[10] = o->additional_data ? 1 : 0;
    st_le16(b + 11, (uint16_t)map_len);
    int rc = recd_buf_append(out, b, sizeof b);
    return rc == 0 && map_len ? recd_buf_append(out, o->map, map_len) : rc;
}

static int carla_wire_open_read(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen)
{
    if (len < 13 || len != 13u + ld_le16(p + 11)) {
        recd_why(why, whylen, "open.carla: %zu bytes, not 13 + the map's length", len);
        return -EBADMSG;
    }
    recd_carla_open o = {.date = (int64_t)ld_le64(p), .width = p[8], .ids = (recd_carla_ids)p[9],
                         .additional_data = p[10] & 1};
    if ((o.width != 4 && o.width != 8) || !recd_carla_ids_name(o.ids)[0] || p[10] > 1 ||
        memchr(p + 13, 0, len - 13)) {
        recd_why(why, whylen, "open.carla: width 4 or 8, ids 13, 15 or 16, flags 0 or 1, a map without NUL");
        return -EBADMSG;
    }
    char *map = malloc(len - 13 + 1);
    if (!map)
        return -ENOMEM;
    memcpy(map, p + 13, len - 13);
    map[len - 13] = 0;
    o.map = map;
    m->open.carla = recd__carla_open_clone(&o);
    free(map);
    return m->open.carla ? 0 : -ENOMEM;
}

int carla_wire_state_write(const recd_carla_frame *f, recd_buf *out)
{
    if (f->count > MAX_PACKETS || (f->width != 4 && f->width != 8))
        return -EINVAL;
    uint8_t h[36];
    st_le64(h, f->id);
    st_le64(h + 8, f64_to_bits(f->elapsed));
    h[16] = f->has_duration ? 1 : 0;
    st_le64(h + 17, f64_to_bits(f->has_duration ? f->duration : 0.0));
    h[25] = f->width;
    st_le16(h + 26, (uint16_t)f->count);
    int rc = recd_buf_append(out, h, 28);
    for (size_t i = 0; rc == 0 && i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        uint8_t ph[10];
        ph[0] = p->kind;
        ph[1] = p->raw ? 1 : 0;
        st_le32(ph + 2, p->count);
        st_le32(ph + 6, p->len);
        rc = recd_buf_append(out, ph, sizeof ph);
        if (rc == 0 && p->len)
            rc = recd_buf_append(out, p->data, p->len);
    }
    return rc;
}

int carla_wire_state_read(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen)
{
    if (len < 28 || (p[25] != 4 && p[25] != 8) || p[16] > 1 || ld_le16(p + 26) > MAX_PACKETS) {
        recd_why(why, whylen, "state: a carla frame needs 28 header bytes, width 4 or 8, at most %d packets",
                 MAX_PACKETS);
        return -EBADMSG;
    }
    size_t count = ld_le16(p + 26);
    /* One block: the frame and its packets; their bytes stay in the frame (decoded in place). */
    recd_carla_frame *f = malloc(sizeof *f + count * sizeof *f->packets);
    if (!f)
        return -ENOMEM;
    recd_carla_packet *pk = (recd_carla_packet *)(f + 1);
    *f = (recd_carla_frame){.id = ld_le64(p), .elapsed = f64_from_bits(ld_le64(p + 8)),
                            .has_duration = p[16], .duration = f64_from_bits(ld_le64(p + 17)),
                            .width = p[25], .count = count, .packets = pk, .storage = f};
    size_t at = 28;
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (len - at < 10) {
            recd_why(why, whylen, "state: packet %zu cut", i);
            rc = -EBADMSG;
            break;
        }
        recd_carla_packet *k = &pk[i];
        k->kind = p[at];
        k->raw = p[at + 1] == 1;
        k->count = ld_le32(p + at + 2);
        k->len = ld_le32(p + at + 6);
        at += 10;
        const carla_kind_info *ki = k->raw ? NULL : carla_kind(k->kind, f->width);
        bool ok = len - at >= k->len && p[at - 9] <= 1 && k->kind > RECD_CARLA_FRAME_END;
        if (ok && ki)
            ok = ki->has_count
                     ? carla_kind_records_fill(k->kind, f->width, k->count, p + at, k->len)
                     : k->count == 0 && k->len == 8;
        else if (ok)
            ok = k->raw && k->count == 0 && k->len <= UINT32_MAX - 5;
        if (!ok) {
            recd_why(why, whylen, "state: packet %zu (kind %u) does not hold whole records of its kind",
                     i, k->kind);
            rc = -EBADMSG;
            break;
        }
        k->data = p + at;
        at += k->len;
    }
    if (rc == 0 && at != len) {
        recd_why(why, whylen, "state: %zu bytes after the last packet", len - at);
        rc = -EBADMSG;
    }
    if (rc < 0) {
        free(f);
        return rc;
    }
    m->carla_state = f;
    return 0;
}

int carla_wire_event_write(const recd_carla_event *e, recd_buf *out)
{
    uint8_t h[2] = {e->kind, e->width};
    int rc = recd_buf_append(out, h, 2);
    return rc == 0 && e->len ? recd_buf_append(out, e->data, e->len) : rc;
}

int carla_wire_event_read(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen)
{
    if (len < 2 || p[0] < RECD_CARLA_EVENT_ADD || p[0] > RECD_CARLA_COLLISION ||
        (p[1] != 4 && p[1] != 8) || !carla_records_fill(carla_kind(p[0], p[1])->fields, p[1], 1, p + 2, len - 2)) {
        recd_why(why, whylen, "event: a carla event is kind 2..5, width 4 or 8 and one whole record");
        return -EBADMSG;
    }
    recd_carla_event e = {.kind = p[0], .width = p[1], .len = (uint32_t)(len - 2), .data = p + 2};
    m->carla_event = recd__carla_event_clone(&e);
    return m->carla_event ? 0 : -ENOMEM;
}

/* ---- the wire hooks (recd/format_wire.h) ---------------------------------------------------- */

/* A frame's time is in its payload: the frame's time field is not used. */
static int carla_state_msg_read(const uint8_t *p, size_t len, uint64_t time, recd_msg *m,
                                char *why, size_t whylen)
{
    (void)time;
    return carla_wire_state_read(p, len, m, why, whylen);
}

static int carla_event_msg_read(const uint8_t *p, size_t len, uint64_t time, recd_msg *m,
                                char *why, size_t whylen)
{
    (void)time;
    return carla_wire_event_read(p, len, m, why, whylen);
}

static int carla_open_msg_write(const recd_msg *m, recd_buf *out)
{
    return m->open.carla ? carla_wire_open_write(m->open.carla, out) : -EINVAL;
}

static int carla_state_msg_write(const recd_msg *m, recd_buf *out)
{
    return m->carla_state ? carla_wire_state_write(m->carla_state, out) : -EINVAL;
}

static int carla_event_msg_write(const recd_msg *m, recd_buf *out)
{
    return m->carla_event ? carla_wire_event_write(m->carla_event, out) : -EINVAL;
}

static int carla_msg_time(const recd_msg *m, uint64_t *t)
{
    (void)m;
    *t = 0;
    return 0;
}

const struct recd_format_wire recd_carla__wire = {
    .format = RECD_MSG_FMT_CARLA,
    .code = 4,
    .open_read = carla_wire_open_read,
    .state_read = carla_state_msg_read,
    .state_borrows = true,
    .event_read = carla_event_msg_read,
    .open_write = carla_open_msg_write,
    .state_write = carla_state_msg_write,
    .event_write = carla_event_msg_write,
    .msg_time = carla_msg_time,
};
