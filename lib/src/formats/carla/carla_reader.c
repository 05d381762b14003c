/* SPDX-License-Identifier: MIT */
/* The CARLA log reader: header, layout detection, and frames as views into the buffer. */
#include "formats/carla/carla_reader.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_schema.h"

int carla_read_header(const uint8_t *buf, size_t len, carla_header *h, bool *prefix,
                      const char **why)
{
    static const uint8_t magic[2 + CARLA_MAGIC_LEN] = {0x0E, 0x00, 'C', 'A', 'R', 'L', 'A', '_', 'R',
                                                        'E', 'C', 'O', 'R', 'D', 'E', 'R'};
    memset(h, 0, sizeof *h);
    *prefix = false;
    size_t n = len < 2 + sizeof magic ? (len > 2 ? len - 2 : 0) : sizeof magic;
    if (len < 2 || memcmp(buf + 2, magic, n) != 0) {
        *why = "not a CARLA recorder log (no CARLA_RECORDER magic)";
        return -EBADMSG;
    }
    *prefix = true;
    if (len < 2 + sizeof magic + 8 + 2) {
        *why = "cut header";
        return -EBADMSG;
    }
    h->version = ld_le16(buf);
    h->date = (int64_t)ld_le64(buf + 18);
    h->map_len = ld_le16(buf + 26);
    if (len - 28 < h->map_len) {
        *why = "cut header";
        return -EBADMSG;
    }
    h->map = buf + 28;
    h->size = 28u + h->map_len;
    return 0;
}

/* The kind a packet id means, resolving 21-23 by which layout fills the payload exactly. */
static int resolve_kind(carla_reader *r, unsigned id, const uint8_t *p, uint32_t size)
{
    if (id < 21 || id > 23)
        return id < 21 ? carla_kind_of_id(r->ids, id) : (id == 24 ? RECD_CARLA_WEATHER : -1);
    static const uint8_t std_order[3][3] = {{RECD_CARLA_ANIM_WHEELS, RECD_CARLA_VEHICLE_DOOR, RECD_CARLA_ANIM_BIKER},
                                            {RECD_CARLA_ANIM_BIKER, RECD_CARLA_ANIM_WHEELS, RECD_CARLA_VEHICLE_DOOR},
                                            {RECD_CARLA_VEHICLE_DOOR, RECD_CARLA_ANIM_BIKER, RECD_CARLA_ANIM_WHEELS}};
    static const uint8_t interim_order[3][3] = {{RECD_CARLA_VEHICLE_DOOR, RECD_CARLA_ANIM_WHEELS, RECD_CARLA_ANIM_BIKER},
                                                {RECD_CARLA_ANIM_WHEELS, RECD_CARLA_ANIM_BIKER, RECD_CARLA_VEHICLE_DOOR},
                                                {RECD_CARLA_ANIM_BIKER, RECD_CARLA_ANIM_WHEELS, RECD_CARLA_VEHICLE_DOOR}};
    const uint8_t *cand = r->interim_ids ? interim_order[id - 21] : std_order[id - 21];
    if (size < 2)
        return cand[0];
    uint16_t count = ld_le16(p);
    for (int i = 0; i < 3; i++)
        if (carla_records_fill(carla_kind(cand[i], r->width)->fields, r->width, count, p + 2, size - 2))
            return cand[i];
    return cand[0];
}

int64_t carla_elapsed_ms(double elapsed)
{
    double ms = elapsed * 1000.0;
    return ms >= 0 && ms < CARLA_MAX_MS ? (int64_t)llround(ms) : -1;
}

/* One pass over packet headers: id table, vector width, additional data, time order. */
static void detect(carla_reader *r)
{
    bool later = false, has23 = false, door23 = false, door21 = false, width_known = false;
    int64_t last_ms = 0;
    r->width = 4;
    r->times_sorted = true;
    for (size_t pos = r->hdr.size; r->len - pos >= CARLA_PACKET_HEADER;) {
        unsigned id = r->buf[pos];
        uint32_t size = ld_le32(r->buf + pos + 1);
        const uint8_t *p = r->buf + pos + CARLA_PACKET_HEADER;
        if (r->len - pos - CARLA_PACKET_HEADER < size)
            break;
        if (id == RECD_CARLA_POSITION && !width_known && size >= 2 && ld_le16(p)) {
            uint32_t per = (size - 2) / ld_le16(p);
            if (per == 52)
                r->width = 8;
            width_known = per == 28 || per == 52;
        }
        if (id == RECD_CARLA_FRAME_START && size == 24) {
            int64_t ms = carla_elapsed_ms(f64_from_bits(ld_le64(p + 16)));
            r->times_sorted &= ms >= last_ms;
            last_ms = ms;
        }
        if (id == 19 || id == 20)
            later = true;
        if (id == 14)
            r->additional_data = true;
        has23 |= id == 23;
        if (id == 23 && size >= 2 && ld_le16(p) && (size - 2) == 6u * ld_le16(p))
            door23 = true;
        if (id == 21 && size >= 2 && ld_le16(p) && (size - 2) == 6u * ld_le16(p))
            door21 = true;
        pos += CARLA_PACKET_HEADER + size;
    }
    r->interim_ids = door21 && !door23;
    r->ids = has23 ? RECD_CARLA_IDS_0_9_16 : later ? RECD_CARLA_IDS_0_9_15 : RECD_CARLA_IDS_0_9_13;
}

const char *carla_reader_ids_label(const carla_reader *r)
{
    return r->interim_ids ? "ue4-dev-interim" : recd_carla_ids_name(r->ids);
}

int carla_reader_init(carla_reader *r, const uint8_t *buf, size_t len, recd_report *report)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->report = report;
    bool prefix;
    const char *why;
    if (carla_read_header(buf, len, &r->hdr, &prefix, &why) < 0) {
        snprintf(r->err, sizeof r->err, "%s", why);
        return -EBADMSG;
    }
    r->pos = r->hdr.size;
    detect(r);
    return 0;
}

static int fail(carla_reader *r, uint64_t offset, const char *what)
{
    snprintf(r->err, sizeof r->err, "%s", what);
    r->err_offset = offset;
    return -EBADMSG;
}

static void warn(carla_reader *r, uint64_t offset, const char *code, const char *msg)
{
    if (r->report)
        recd_report_add(r->report, RECD_SEV_WARNING, offset, code, "%s", msg);
}

bool carla_reader_peek_elapsed(const carla_reader *r, double *elapsed)
{
    if (r->len - r->pos < CARLA_PACKET_HEADER + 24 || r->buf[r->pos] != 0 ||
        ld_le32(r->buf + r->pos + 1) != 24)
        return false;
    *elapsed = f64_from_bits(ld_le64(r->buf + r->pos + CARLA_PACKET_HEADER + 16));
    return true;
}

/* What a walk that only follows the actors reads: their events and positions. */
static bool world_kind(carla_reader *r, unsigned id)
{
    int kind = id < 21 ? carla_kind_of_id(r->ids, id) : -1;
    return kind == RECD_CARLA_EVENT_ADD || kind == RECD_CARLA_EVENT_DEL ||
           kind == RECD_CARLA_EVENT_PARENT || kind == RECD_CARLA_POSITION;
}

/* carla_reader_next, or with world_only its frame with only the EventAdd, EventDel, EventParent
 * and Position packets (the others are checked for size and place, not parsed). */
static int next_frame(carla_reader *r, recd_carla_frame *f, size_t *offset, bool world_only)
{
    memset(f, 0, sizeof *f);
    size_t start = r->pos, pos = r->pos;
    *offset = start;
    if (pos == r->len)
        return 0;
    size_t n = 0;
    char msg[200];
    for (bool first = true;; first = false) {
        if (r->len - pos < CARLA_PACKET_HEADER) {
            snprintf(msg, sizeof msg, "packet header cut at offset %zu (%zu of 5 bytes; frame at %zu has no FrameEnd)",
                     pos, r->len - pos, start);
            return fail(r, pos, msg);
        }
        unsigned id = r->buf[pos];
        uint32_t size = ld_le32(r->buf + pos + 1);
        const uint8_t *p = r->buf + pos + CARLA_PACKET_HEADER;
        if (r->len - pos - CARLA_PACKET_HEADER < size) {
            snprintf(msg, sizeof msg, "packet id %u at offset %zu declares %u bytes, %zu remain (truncated)",
                     id, pos, size, r->len - pos - CARLA_PACKET_HEADER);
            return fail(r, pos, msg);
        }
        if (first && id != RECD_CARLA_FRAME_START) {
            snprintf(msg, sizeof msg, "packet id %u at offset %zu outside a frame (expected FrameStart)",
                     id, pos);
            return fail(r, pos, msg);
        }
        if (!first && id == RECD_CARLA_FRAME_START) {
            snprintf(msg, sizeof msg,
                     "FrameStart at offset %zu inside the frame that starts at %zu (no FrameEnd)", pos,
                     start);
            return fail(r, pos, msg);
        }
        pos += CARLA_PACKET_HEADER + size;
        if (first) {
            if (size != 24) {
                snprintf(msg, sizeof msg, "FrameStart at offset %zu has %u bytes, not 24", start, size);
                return fail(r, start, msg);
            }
            f->id = ld_le64(p);
            f->duration = f64_from_bits(ld_le64(p + 8));
            f->elapsed = f64_from_bits(ld_le64(p + 16));
            f->has_duration = true;
            f->width = (uint8_t)r->width;
            continue;
        }
        if (id == RECD_CARLA_FRAME_END) {
            if (size != 0)
                warn(r, pos - size - CARLA_PACKET_HEADER, "carla-frame-end-size", "FrameEnd with a payload");
            break;
        }
        if (world_only && !world_kind(r, id))
            continue;
        if (n == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 32;
            void *np = realloc(r->packets, cap * sizeof *r->packets);
            if (!np)
                return -ENOMEM;
            r->packets = np;
            r->cap = cap;
        }
        recd_carla_packet *pk = &r->packets[n++];
        memset(pk, 0, sizeof *pk);
        int kind = resolve_kind(r, id, p, size);
        const carla_kind_info *ki = kind >= 0 ? carla_kind((unsigned)kind, r->width) : NULL;
        bool fits = false;
        if (ki && ki->fields && kind != RECD_CARLA_FRAME_START) {
            if (ki->has_count)
                fits = size >= 2 && carla_records_fill(ki->fields, r->width, ld_le16(p), p + 2, size - 2);
            else
                fits = size == 8;
        }
        if (!fits) {
            if (ki) {
                snprintf(msg, sizeof msg, "%s packet (id %u) at offset %zu: its records do not fill its %u bytes; kept unparsed",
                         ki->title, id, pos - size - CARLA_PACKET_HEADER, size);
                warn(r, pos - size - CARLA_PACKET_HEADER, "carla-packet-size", msg);
            }
            pk->kind = (uint8_t)id;
            pk->raw = true;
            pk->len = size;
            pk->data = p;
            r->raw_packets++;
            continue;
        }
        pk->kind = (uint8_t)kind;
        pk->count = ki->has_count ? ld_le16(p) : 0;
        pk->data = ki->has_count ? p + 2 : p;
        pk->len = ki->has_count ? size - 2 : size;
    }
    f->packets = r->packets;
    f->count = n;
    r->pos = pos;
    r->frames++;
    return 1;
}

int carla_reader_next(carla_reader *r, recd_carla_frame *f, size_t *offset)
{
    return next_frame(r, f, offset, false);
}

int carla_reader_next_world(carla_reader *r, recd_carla_frame *f, size_t *offset)
{
    return next_frame(r, f, offset, true);
}

void carla_reader_free(carla_reader *r)
{
    free(r->packets);
    r->packets = NULL;
    r->cap = 0;
}
