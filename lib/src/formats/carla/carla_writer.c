/* SPDX-License-Identifier: MIT */
/* The CARLA log writer: header, per-frame packet order per release, held-back frame. */
#include "formats/carla/carla_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_reader.h"
#include "formats/carla/carla_schema.h"

#define MAX_RECORDS 65535u

/* When a kind is written in a frame that has no records of it. */
enum { EMPTY_OMIT, EMPTY_ALWAYS, EMPTY_ADDITIONAL };

typedef struct order_item {
    uint8_t kind;
    uint8_t empty;
} order_item;

/* CARLA's write order (CarlaRecorder.cpp); kinds a release lacks are skipped by its id table. */
static const order_item write_order[] = {
    {RECD_CARLA_VISUAL_TIME, EMPTY_ALWAYS},       {RECD_CARLA_FRAME_COUNTER, EMPTY_OMIT},
    {RECD_CARLA_EVENT_ADD, EMPTY_ALWAYS},         {RECD_CARLA_EVENT_DEL, EMPTY_ALWAYS},
    {RECD_CARLA_EVENT_PARENT, EMPTY_ALWAYS},      {RECD_CARLA_COLLISION, EMPTY_ALWAYS},
    {RECD_CARLA_VEHICLE_DOOR, EMPTY_ALWAYS},      {RECD_CARLA_POSITION, EMPTY_ALWAYS},
    {RECD_CARLA_STATE, EMPTY_ALWAYS},             {RECD_CARLA_ANIM_VEHICLE, EMPTY_ALWAYS},
    {RECD_CARLA_ANIM_WALKER, EMPTY_ALWAYS},       {RECD_CARLA_VEHICLE_LIGHT, EMPTY_ALWAYS},
    {RECD_CARLA_SCENE_LIGHT, EMPTY_OMIT},         {RECD_CARLA_ANIM_WHEELS, EMPTY_ALWAYS},
    {RECD_CARLA_ANIM_BIKER, EMPTY_ALWAYS},        {RECD_CARLA_WEATHER, EMPTY_OMIT},
    {RECD_CARLA_KINEMATICS, EMPTY_OMIT},          {RECD_CARLA_BOUNDING_BOX, EMPTY_ADDITIONAL},
    {RECD_CARLA_TRIGGER_VOLUME, EMPTY_OMIT},      {RECD_CARLA_PLATFORM_TIME, EMPTY_ADDITIONAL},
    {RECD_CARLA_PHYSICS_CONTROL, EMPTY_OMIT},     {RECD_CARLA_TRAFFIC_LIGHT_TIME, EMPTY_OMIT},
    {RECD_CARLA_WALKER_BONES, EMPTY_ADDITIONAL},
};

_Static_assert(sizeof write_order / sizeof write_order[0] == CARLA_WRITE_ORDER,
               "carla_writer.h's CARLA_WRITE_ORDER counts write_order");

/* Appends the bytes of a CARLA header. */
static int carla_header_append(recd_buf *out, const recd_carla_open *o)
{
    size_t map_len = o->map ? strlen(o->map) : 0;
    if (map_len > 0xFFFF)
        return -EINVAL;
    uint8_t h[28];
    st_le16(h, 1);
    st_le16(h + 2, CARLA_MAGIC_LEN);
    memcpy(h + 4, CARLA_MAGIC, CARLA_MAGIC_LEN);
    st_le64(h + 18, (uint64_t)o->date);
    st_le16(h + 26, (uint16_t)map_len);
    int rc = recd_buf_append(out, h, sizeof h);
    return rc == 0 && map_len ? recd_buf_append(out, o->map, map_len) : rc;
}

int carla_writer_init(carla_writer *w, const recd_carla_open *o, recd_sink sink)
{
    memset(w, 0, sizeof *w);
    if (o->width != 4 && o->width != 8)
        return -EINVAL;
    w->sink = sink;
    w->reserve = recd_reserve_sink_of(sink);
    w->open = *o;
    w->fixed[0] = carla_kind_fixed_sizes(4);
    w->fixed[1] = carla_kind_fixed_sizes(8);
    for (size_t i = 0; i < CARLA_WRITE_ORDER; i++)
        w->order_id[i] = (int8_t)carla_id_of_kind(o->ids, write_order[i].kind);
    w->open.map = strdup(o->map ? o->map : "");
    return w->open.map ? 0 : -ENOMEM;
}

static int emit(carla_writer *w, recd_buf *b)
{
    int rc = b->len ? w->sink.write(w->sink.ctx, b->data, b->len) : 0;
    if (rc == 0)
        w->bytes_written += b->len;
    recd_buf_reset(b);
    return rc;
}

/* The header alone (the first state writes it too). */
static int carla_writer_header(carla_writer *w)
{
    if (w->header_written)
        return 0;
    int rc = carla_header_append(&w->out, &w->open);
    if (rc == 0)
        rc = emit(w, &w->out);
    w->header_written = rc == 0;
    return rc;
}

static uint8_t *put_packet_header(uint8_t *at, unsigned id, size_t size)
{
    at[0] = (uint8_t)id;
    st_le32(at + 1, (uint32_t)size);
    return at + 5;
}

/* The next packet of a kind's held records r, from byte at with left records to go: n records in
 * bytes. A kind's records are written as packets of at most 65535. */
static int next_packet(const carla_writer *w, const carla_kind_info *ki, const recd_buf *r,
                       size_t fixed, size_t at, uint32_t left, uint32_t *n_out, size_t *bytes_out)
{
    uint32_t n = left > MAX_RECORDS ? MAX_RECORDS : left;
    size_t bytes = 0;
    if (fixed) { /* most kinds: no walk over every record */
        bytes = (size_t)n * fixed;
        if (bytes > r->len - at)
            return -EBADMSG;
    } else if (n && n == left && ki->fields) {
        bytes = r->len - at; /* the rest: held records fill their buffer exactly (hold_records) */
    } else {
        for (uint32_t i = 0; i < n; i++) {
            size_t s = ki->fields ? carla_record_size(ki->fields, w->open.width,
                                                      r->data + at + bytes, r->len - at - bytes)
                                  : r->len - at;
            if (s == 0)
                return -EBADMSG;
            bytes += s;
        }
    }
    *n_out = n;
    *bytes_out = bytes;
    return 0;
}

/* The bytes put_records writes for kind. */
static int records_size(const carla_writer *w, unsigned kind, size_t *size)
{
    const carla_kind_info *ki = carla_kind(kind, w->open.width);
    if (!ki->has_count) {
        *size = 5 + 8;
        return 0;
    }
    const recd_buf *r = &w->records[kind];
    size_t fixed = w->fixed[w->open.width == 8][kind], at = 0, total = 0;
    uint32_t left = w->counts[kind];
    if (fixed && left <= MAX_RECORDS) { /* most kinds: one packet, its size known */
        if ((size_t)left * fixed > r->len)
            return -EBADMSG;
        *size = 5 + 2 + (size_t)left * fixed;
        return 0;
    }
    do {
        uint32_t n;
        size_t bytes;
        int rc = next_packet(w, ki, r, fixed, at, left, &n, &bytes);
        if (rc < 0)
            return rc;
        total += 5 + 2 + bytes;
        at += bytes;
        left -= n;
    } while (left);
    *size = total;
    return 0;
}

/* count records of kind as packets of at most 65535 records (one when empty), from *at on; sized
 * by records_size first, so it cannot fail. */
static void put_records(carla_writer *w, unsigned kind, unsigned id, uint8_t **out)
{
    const carla_kind_info *ki = carla_kind(kind, w->open.width);
    const recd_buf *r = &w->records[kind];
    uint8_t *o = *out;
    uint32_t left = w->counts[kind];
    if (!ki->has_count) {
        o = put_packet_header(o, id, 8);
        if (w->present[kind] && r->len == 8)
            memcpy(o, r->data, 8);
        else
            st_le64(o, f64_to_bits(w->elapsed)); /* a state without it: the frame's time */
        *out = o + 8;
        return;
    }
    size_t fixed = w->fixed[w->open.width == 8][kind], at = 0;
    if (fixed && left <= MAX_RECORDS) { /* as records_size found it */
        size_t bytes = (size_t)left * fixed;
        o = put_packet_header(o, id, 2 + bytes);
        st_le16(o, (uint16_t)left);
        if (bytes)
            memcpy(o + 2, r->data, bytes);
        *out = o + 2 + bytes;
        return;
    }
    do {
        uint32_t n = 0;
        size_t bytes = 0;
        (void)next_packet(w, ki, r, fixed, at, left, &n, &bytes);
        o = put_packet_header(o, id, 2 + bytes);
        st_le16(o, (uint16_t)n);
        o += 2;
        if (bytes)
            memcpy(o, r->data + at, bytes);
        o += bytes;
        at += bytes;
        left -= n;
    } while (left);
    *out = o;
}

/* Whether the held frame has a packet of the write order's item i, and its id. */
static bool order_writes(const carla_writer *w, size_t i, unsigned *id)
{
    unsigned kind = write_order[i].kind;
    int k = w->order_id[i];
    bool write = w->present[kind] || write_order[i].empty == EMPTY_ALWAYS ||
                 (write_order[i].empty == EMPTY_ADDITIONAL && w->open.additional_data);
    *id = (unsigned)k;
    return k >= 0 && write;
}

/* Room for a frame of size bytes: in place (reserve), else in out, emitted afterwards. */
static uint8_t *frame_room(carla_writer *w, size_t size)
{
    if (w->reserve)
        return w->reserve->reserve(w->reserve->ctx, size);
    recd_buf_reset(&w->out);
    if (recd_buf_reserve(&w->out, size) < 0)
        return NULL;
    w->out.len = size;
    return w->out.data;
}

/* Writes the held frame: sized first, then written once into its room. */
static int write_held(carla_writer *w, bool has_next, double next_elapsed)
{
    if (!w->held)
        return 0;
    int rc = carla_writer_header(w);
    size_t size = 5 + 24 + w->raw.len + 5;
    enum { ORDER = sizeof write_order / sizeof write_order[0] };
    for (size_t i = 0; rc == 0 && i < ORDER; i++) {
        unsigned id;
        size_t s = 0;
        if (order_writes(w, i, &id) && (rc = records_size(w, write_order[i].kind, &s)) == 0)
            size += s;
    }
    uint8_t *at = rc == 0 ? frame_room(w, size) : NULL;
    if (rc == 0 && !at)
        rc = -ENOMEM;
    if (rc == 0) {
        double duration = w->has_duration ? w->duration
                          : has_next      ? next_elapsed - w->elapsed
                                          : -1.0;
        at = put_packet_header(at, 0, 24);
        st_le64(at, w->frame_id);
        st_le64(at + 8, f64_to_bits(duration));
        st_le64(at + 16, f64_to_bits(w->elapsed));
        at += 24;
        for (size_t i = 0; i < ORDER; i++) {
            unsigned id;
            if (order_writes(w, i, &id))
                put_records(w, write_order[i].kind, id, &at);
        }
        if (w->raw.len)
            memcpy(at, w->raw.data, w->raw.len);
        at += w->raw.len;
        put_packet_header(at, 1, 0);
        if (w->reserve)
            w->bytes_written += size;
        else
            rc = emit(w, &w->out);
    }
    recd_buf_reset(&w->out);
    w->held = false;
    w->frames_written += rc == 0;
    return rc;
}

/* Appends n records at p (width wi) to the held frame's kind, in the file's width. */
static int hold_records(carla_writer *w, unsigned kind, unsigned wi, uint32_t n, const uint8_t *p,
                        size_t len)
{
    const carla_kind_info *ki = carla_kind(kind, wi);
    recd_buf *dst = &w->records[kind];
    size_t before = dst->len;
    int rc = 0;
    w->present[kind] = true;
    if (!ki->has_count) {
        recd_buf_reset(dst);
        rc = recd_buf_append(dst, p, len);
    } else if (!ki->fields || !carla_kind(kind, w->open.width)->fields) {
        if (wi != w->open.width)
            return -EBADMSG; /* opaque records (UE5 PhysicsControl) cannot change width */
        w->counts[kind] += n;
        rc = recd_buf_append(dst, p, len);
    } else {
        size_t fixed = w->fixed[wi == 8][kind];
        if (fixed ? (uint64_t)n * fixed != len : !carla_records_fill(ki->fields, wi, n, p, len))
            return -EBADMSG;
        if ((uint64_t)w->counts[kind] + n > UINT32_MAX)
            return -E2BIG;
        w->counts[kind] += n;
        if (wi == w->open.width) {
            rc = recd_buf_append(dst, p, len);
        } else {
            for (size_t at = 0, i = 0; rc == 0 && i < n; i++) {
                size_t used = 0;
                rc = carla_record_convert(ki->fields, wi, w->open.width, p + at, len - at, dst,
                                          &used);
                at += used;
            }
        }
    }
    w->held_len = w->held_len - before + dst->len;
    return rc;
}

int carla_writer_state(carla_writer *w, const recd_carla_frame *f, char *err, size_t errlen)
{
    if (f->width != 4 && f->width != 8) {
        snprintf(err, errlen, "state: vector width %u is not 4 or 8", f->width);
        return -EBADMSG;
    }
    for (size_t i = 0; i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (p->raw && p->kind == RECD_CARLA_FRAME_START) {
            snprintf(err, errlen, "state: a raw packet may not use id 0 or 1 (frame start and end)");
            return -EBADMSG;
        }
        if (!p->raw && (p->kind >= RECD_CARLA_KIND_COUNT || p->kind <= RECD_CARLA_FRAME_END ||
                        carla_id_of_kind(w->open.ids, p->kind) < 0)) {
            snprintf(err, errlen, "state.%s: CARLA %s logs have no %s packets",
                     recd_carla_kind_name(p->kind), recd_carla_ids_name(w->open.ids),
                     p->kind < RECD_CARLA_KIND_COUNT ? carla_kind(p->kind, 4)->title : "such");
            return -EBADMSG;
        }
        if (!p->raw && p->kind == RECD_CARLA_PLATFORM_TIME && !w->open.additional_data) {
            /* CARLA writes PlatformTime only with additional data, and readers take its presence
             * as that setting: a log holding it otherwise would not read back as written. */
            snprintf(err, errlen, "state.platform_time: the open's additional_data is false; "
                     "PlatformTime is only written with additional_data true");
            return -EBADMSG;
        }
        if (!p->raw && p->kind == RECD_CARLA_POSITION && p->count > MAX_RECORDS) {
            snprintf(err, errlen, "state.positions: %u records; a frame holds at most 65535 (one "
                     "Position packet per frame)", p->count);
            return -EBADMSG;
        }
        if (p->raw && p->len > UINT32_MAX - 5) {
            snprintf(err, errlen, "state.raw: packet too large");
            return -EBADMSG;
        }
    }
    int rc = write_held(w, true, f->elapsed);
    if (rc < 0) {
        snprintf(err, errlen, "writing frame %llu: %s", (unsigned long long)w->frame_id, recd_strerror(rc));
        return rc;
    }
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++) {
        recd_buf_reset(&w->records[k]);
        w->counts[k] = 0;
        w->present[k] = false;
    }
    recd_buf_reset(&w->raw);
    w->held_len = 0;
    w->held = true;
    w->frame_id = f->id;
    w->elapsed = f->elapsed;
    w->has_duration = f->has_duration;
    w->duration = f->duration;
    for (size_t i = 0; i < f->count && rc == 0; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (p->raw) {
            uint8_t h[5];
            put_packet_header(h, p->kind, p->len);
            size_t before = w->raw.len;
            rc = recd_buf_append(&w->raw, h, sizeof h);
            if (rc == 0)
                rc = recd_buf_append(&w->raw, p->data, p->len);
            w->held_len = w->held_len - before + w->raw.len;
            continue;
        }
        rc = hold_records(w, p->kind, f->width, p->count, p->data, p->len);
        if (rc == -EBADMSG)
            snprintf(err, errlen, "state.%s: records do not match the %s layout",
                     recd_carla_kind_name(p->kind), carla_kind(p->kind, 4)->title);
    }
    return rc;
}

int carla_writer_event(carla_writer *w, const recd_carla_event *e, char *err, size_t errlen)
{
    if (!w->held) {
        snprintf(err, errlen, "event: before the first state (events belong to the frame of the "
                 "state before them)");
        return -EBADMSG;
    }
    if (e->kind < RECD_CARLA_EVENT_ADD || e->kind > RECD_CARLA_COLLISION ||
        (e->width != 4 && e->width != 8)) {
        snprintf(err, errlen, "event: kind %u is not add, delete, parent or collision", e->kind);
        return -EBADMSG;
    }
    int rc = hold_records(w, e->kind, e->width, 1, e->data, e->len);
    if (rc == -EBADMSG)
        snprintf(err, errlen, "event.%s: the record does not match its layout",
                 recd_carla_kind_name(e->kind));
    return rc;
}

int carla_writer_finish(carla_writer *w, char *err, size_t errlen)
{
    int rc = carla_writer_header(w);
    if (rc == 0)
        rc = write_held(w, false, 0);
    if (rc < 0)
        snprintf(err, errlen, "writing the output: %s", recd_strerror(rc));
    return rc;
}

void carla_writer_free(carla_writer *w)
{
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++)
        recd_buf_free(&w->records[k]);
    recd_buf_free(&w->raw);
    recd_buf_free(&w->out);
    free(w->open.map);
    w->open.map = NULL;
}

/* The public face of the writer (recd/carla.h). */
struct recd_carla_writer {
    carla_writer w;
};

int recd_carla_writer_new(recd_carla_writer **out, const recd_carla_open *o, recd_sink sink)
{
    *out = NULL;
    if (o->map && strlen(o->map) > 0xFFFF)
        return -EINVAL;
    recd_carla_writer *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    int rc = carla_writer_init(&w->w, o, sink);
    if (rc < 0) {
        carla_writer_free(&w->w);
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int recd_carla_writer_state(recd_carla_writer *w, const recd_carla_frame *f, char *err, size_t errlen)
{
    return carla_writer_state(&w->w, f, err, errlen);
}

int recd_carla_writer_event(recd_carla_writer *w, const recd_carla_event *e, char *err, size_t errlen)
{
    return carla_writer_event(&w->w, e, err, errlen);
}

int recd_carla_writer_finish(recd_carla_writer *w, char *err, size_t errlen)
{
    return carla_writer_finish(&w->w, err, errlen);
}

uint64_t recd_carla_writer_held_bytes(const recd_carla_writer *w)
{
    return w->w.held_len;
}

void recd_carla_writer_free(recd_carla_writer *w)
{
    if (!w)
        return;
    carla_writer_free(&w->w);
    free(w);
}
