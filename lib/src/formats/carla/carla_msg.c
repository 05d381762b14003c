/* SPDX-License-Identifier: MIT */
/* The carla message parts: copies that own their bytes, and their JSON (docs/protocol.md,
 * "carla"). States read from JSON hold f64 vectors; the writer narrows them to the file's width. */
#include "formats/carla/carla_msg.h"
#include "formats/carla/carla_json_fast.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_schema.h"
#include "base/json_text.h"
#include "base/text.h"
#include "base/why.h"
#include "message/json/msg_json_formats.h"
#include "message/msg_formats.h"

static void recd__carla_open_free(recd_carla_open *o)
{
    if (o)
        free(o->map);
    free(o);
}

static int recd__carla_open_to_json(const recd_carla_open *o, recd_buf *out)
{
    char t[200];
    int rc = text_puts(out, "{\"map\":");
    if (rc == 0)
        rc = text_put_json_string(out, o->map ? o->map : "", o->map ? strlen(o->map) : 0);
    snprintf(t, sizeof t, ",\"date\":%" PRId64 ",\"width\":\"%s\",\"ids\":\"%s\",\"additional_data\":%s}",
             o->date, o->width == 8 ? "f64" : "f32", recd_carla_ids_name(o->ids),
             o->additional_data ? "true" : "false");
    return rc == 0 ? text_puts(out, t) : rc;
}

static int recd__carla_open_from_json(const json_t *j, recd_carla_open **out, char *why,
                                      size_t whylen)
{
    *out = NULL;
    if (!json_is_object(j)) {
        snprintf(why, whylen, ": expected an object, got %s", json_text_type_name(j));
        return -EBADMSG;
    }
    static const char *const keys[] = {"map", "date", "width", "ids", "additional_data", NULL};
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v)
    {
        bool ok = false;
        for (size_t i = 0; keys[i]; i++)
            ok |= strcmp(keys[i], key) == 0;
        if (!ok) {
            char safe[48];
            text_safe_excerpt(key, strlen(key), safe);
            snprintf(why, whylen, ": unknown key \"%s\"", safe);
            return -EBADMSG;
        }
    }
    recd_carla_open o = {.width = 4, .ids = RECD_CARLA_IDS_0_9_16};
    json_t *map = json_object_get(j, "map");
    if (!map || !json_is_string(map) || json_string_length(map) > 0xFFFF ||
        strlen(json_string_value(map)) != json_string_length(map)) {
        snprintf(why, whylen, ".map: %s", map ? "expected a string of at most 65535 bytes without NUL"
                                             : "missing (the CARLA map, e.g. \"Town10HD_Opt\")");
        return -EBADMSG;
    }
    json_t *date = json_object_get(j, "date");
    if (date && !json_is_integer(date)) {
        snprintf(why, whylen, ".date: expected an integer (Unix seconds)");
        return -EBADMSG;
    }
    o.date = date ? json_integer_value(date) : 0;
    json_t *width = json_object_get(j, "width");
    if (width) {
        const char *w = json_is_string(width) ? json_string_value(width) : "";
        if (strcmp(w, "f32") != 0 && strcmp(w, "f64") != 0) {
            snprintf(why, whylen, ".width: expected \"f32\" or \"f64\"");
            return -EBADMSG;
        }
        o.width = w[1] == '6' ? 8 : 4;
    }
    json_t *ids = json_object_get(j, "ids");
    if (ids && (!json_is_string(ids) || !recd_carla_ids_parse(json_string_value(ids), &o.ids))) {
        snprintf(why, whylen, ".ids: expected \"0.9.13\", \"0.9.15\" or \"0.9.16\"");
        return -EBADMSG;
    }
    json_t *add = json_object_get(j, "additional_data");
    if (add && !json_is_boolean(add)) {
        snprintf(why, whylen, ".additional_data: expected true or false");
        return -EBADMSG;
    }
    o.additional_data = add && json_is_true(add);
    o.map = (char *)json_string_value(map);
    *out = recd__carla_open_clone(&o);
    return *out ? 0 : -ENOMEM;
}

/* The records of every packet of kind in f as one JSON array (a kind split at 65,535 records
 * into several packets is one list again; the writer splits it the same way). */
static int put_records(const recd_carla_frame *f, unsigned kind, recd_buf *out)
{
    const carla_kind_info *ki = carla_kind(kind, f->width);
    int rc = text_puts(out, "[");
    bool first = true;
    for (size_t k = 0; k < f->count && rc == 0; k++) {
        const recd_carla_packet *p = &f->packets[k];
        if (p->raw || p->kind != kind)
            continue;
        size_t at = 0;
        for (uint32_t i = 0; i < p->count && rc == 0; i++) {
            size_t used = 0;
            if (!first)
                rc = text_puts(out, ",");
            first = false;
            if (rc == 0)
                rc = carla_record_to_json(ki->fields, f->width, p->data + at, p->len - at, out, &used);
            at += used;
        }
    }
    return rc == 0 ? text_puts(out, "]") : rc;
}

static bool is_opaque(const recd_carla_packet *p, unsigned width)
{
    return p->raw || p->kind >= RECD_CARLA_KIND_COUNT || !carla_kind(p->kind, width)->fields;
}

/* JSON: the open's "carla" object, a state's keys and an event's keys (after "type"). */
static int recd__carla_state_to_json(const recd_carla_frame *f, recd_buf *out)
{
    char t[96];
    snprintf(t, sizeof t, ",\"frame\":%" PRIu64 ",\"elapsed\":", f->id);
    int rc = f->id > INT64_MAX ? -EINVAL : text_puts(out, t);
    if (rc == 0)
        rc = carla_put_f64(out, f->elapsed);
    if (rc == 0 && f->has_duration && (rc = text_puts(out, ",\"duration\":")) == 0)
        rc = carla_put_f64(out, f->duration);
    return rc == 0 ? recd__carla_state_packets_json(f, out) : rc;
}

int recd__carla_state_packets_json(const recd_carla_frame *f, recd_buf *out)
{
    char t[96];
    int rc = 0;
    bool seen[RECD_CARLA_KIND_COUNT] = {false};
    bool any_raw = false;
    for (size_t i = 0; i < f->count && rc == 0; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (is_opaque(p, f->width)) {
            any_raw = true;
            continue;
        }
        if (seen[p->kind])
            continue; /* its records went out with the kind's first packet */
        seen[p->kind] = true;
        snprintf(t, sizeof t, ",\"%s\":", recd_carla_kind_name(p->kind));
        rc = text_puts(out, t);
        const carla_kind_info *ki = carla_kind(p->kind, f->width);
        if (rc == 0 && !ki->has_count) {
            size_t used;
            /* {"value":x} -> x */
            size_t mark = out->len;
            rc = carla_record_to_json(ki->fields, f->width, p->data, p->len, out, &used);
            if (rc == 0) {
                size_t vlen = out->len - mark - 10; /* strip {"value": and } */
                memmove(out->data + mark, out->data + mark + 9, vlen);
                out->len = mark + vlen;
            }
        } else if (rc == 0) {
            rc = put_records(f, p->kind, out);
        }
    }
    if (rc == 0 && any_raw) {
        rc = text_puts(out, ",\"raw\":[");
        bool first = true;
        for (size_t i = 0; i < f->count && rc == 0; i++) {
            const recd_carla_packet *p = &f->packets[i];
            if (!is_opaque(p, f->width))
                continue;
            unsigned id = p->kind;
            snprintf(t, sizeof t, "%s{\"id\":%u,%s\"data\":\"", first ? "" : ",", id,
                     p->raw ? "" : "\"parsed\":false,");
            first = false;
            rc = text_puts(out, t);
            if (rc == 0 && !p->raw) {
                uint8_t c[2];
                st_le16(c, (uint16_t)p->count);
                recd_buf tmp = {0};
                rc = recd_buf_append(&tmp, c, 2);
                if (rc == 0)
                    rc = recd_buf_append(&tmp, p->data, p->len);
                if (rc == 0)
                    rc = text_base64_append(out, tmp.data, tmp.len);
                recd_buf_free(&tmp);
            } else if (rc == 0) {
                rc = text_base64_append(out, p->data, p->len);
            }
            if (rc == 0)
                rc = text_puts(out, "\"}");
        }
        if (rc == 0)
            rc = text_puts(out, "]");
    }
    return rc;
}

/* Packets under construction: per packet its kind, count, raw flag and a range of one buffer. */
typedef struct build_packet {
    recd_carla_packet p;
    size_t off;
} build_packet;

static int read_kind(const json_t *v, unsigned kind, recd_buf *data, build_packet *bp, char *why,
                     size_t whylen)
{
    const carla_kind_info *ki = carla_kind(kind, 8);
    bp->off = data->len;
    bp->p.kind = (uint8_t)kind;
    char sub[160];
    int rc;
    if (!ki->has_count) {
        json_t *obj = json_object();
        if (!obj)
            return -ENOMEM;
        json_object_set(obj, "value", (json_t *)v);
        rc = carla_record_from_json(ki->fields, obj, data, sub, sizeof sub);
        json_decref(obj);
        if (rc == -EBADMSG)
            snprintf(why, whylen, ".%s: expected a number", ki->key);
        bp->p.len = (uint32_t)(data->len - bp->off);
        return rc;
    }
    if (!json_is_array(v) || json_array_size(v) > UINT32_MAX) {
        snprintf(why, whylen, ".%s: expected an array of records", ki->key);
        return -EBADMSG;
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        rc = carla_record_from_json(ki->fields, json_array_get(v, i), data, sub, sizeof sub);
        if (rc == -EBADMSG)
            snprintf(why, whylen, ".%s[%zu]%s", ki->key, i, sub);
        if (rc < 0)
            return rc;
        if (data->len - bp->off > UINT32_MAX) {
            snprintf(why, whylen, ".%s: too large", ki->key);
            return -EBADMSG;
        }
    }
    bp->p.count = (uint32_t)json_array_size(v);
    bp->p.len = (uint32_t)(data->len - bp->off);
    return 0;
}

static int read_raw(const json_t *v, recd_buf *data, build_packet *bp, size_t *n, size_t cap,
                    char *why, size_t whylen)
{
    if (!json_is_array(v)) {
        snprintf(why, whylen, ".raw: expected an array of {\"id\", \"data\"}");
        return -EBADMSG;
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *o = json_array_get(v, i);
        json_t *id = json_object_get(o, "id"), *b64 = json_object_get(o, "data");
        json_t *parsed = json_object_get(o, "parsed");
        size_t keys = 2 + (parsed != NULL);
        if (!json_is_object(o) || json_object_size(o) != keys || !json_is_integer(id) ||
            json_integer_value(id) < 2 || json_integer_value(id) > 255 || !json_is_string(b64) ||
            (parsed && !json_is_false(parsed)) || *n == cap) {
            snprintf(why, whylen, ".raw[%zu]: expected {\"id\": 2..255, \"data\": base64}", i);
            return -EBADMSG;
        }
        build_packet *p = &bp[(*n)++];
        memset(p, 0, sizeof *p);
        p->off = data->len;
        if (!text_base64_decode(json_string_value(b64), json_string_length(b64), data) ||
            data->len - p->off > UINT32_MAX - 5) {
            snprintf(why, whylen, ".raw[%zu].data: not canonical base64", i);
            return -EBADMSG;
        }
        p->p.kind = (uint8_t)json_integer_value(id);
        p->p.raw = true;
        p->p.len = (uint32_t)(data->len - p->off);
        if (parsed) { /* a known kind CARLA stored in a layout recd does not parse: count + bytes */
            if (p->p.len < 2 || p->p.kind >= RECD_CARLA_KIND_COUNT) {
                snprintf(why, whylen, ".raw[%zu]: unparsed packets hold a known id and a count", i);
                return -EBADMSG;
            }
            p->p.raw = false;
            p->p.count = ld_le16(data->data + p->off);
            p->off += 2;
            p->p.len -= 2;
        }
    }
    return 0;
}

static int recd__carla_state_from_json(const json_t *root, recd_carla_frame **out, char *why,
                                       size_t whylen)
{
    *out = NULL;
    recd_carla_frame f = {.width = 8};
    json_t *frame = json_object_get(root, "frame"), *elapsed = json_object_get(root, "elapsed");
    if (!json_is_integer(frame) || json_integer_value(frame) < 0) {
        snprintf(why, whylen, "%s", frame ? ".frame: expected an integer >= 0" : ": missing key \"frame\"");
        return -EBADMSG;
    }
    if (!elapsed || !carla_get_f64(elapsed, &f.elapsed)) {
        snprintf(why, whylen, "%s", elapsed ? ".elapsed: expected a number" : ": missing key \"elapsed\"");
        return -EBADMSG;
    }
    f.id = (uint64_t)json_integer_value(frame);
    json_t *dur = json_object_get(root, "duration");
    if (dur && !carla_get_f64(dur, &f.duration)) {
        snprintf(why, whylen, ".duration: expected a number");
        return -EBADMSG;
    }
    f.has_duration = dur != NULL;
    enum { CAP = 512 };
    build_packet *bp = calloc(CAP, sizeof *bp);
    recd_buf data = {0};
    size_t n = 0;
    int rc = bp ? 0 : -ENOMEM;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)root, key, v)
    {
        if (rc < 0)
            break;
        if (!strcmp(key, "type") || !strcmp(key, "session") || !strcmp(key, "seq") ||
            !strcmp(key, "save") || !strcmp(key, "frame") || !strcmp(key, "elapsed") ||
            !strcmp(key, "duration"))
            continue;
        if (!strcmp(key, "raw")) {
            rc = read_raw(v, &data, bp, &n, CAP, why, whylen);
            continue;
        }
        unsigned kind = RECD_CARLA_EVENT_ADD;
        while (kind < RECD_CARLA_KIND_COUNT && strcmp(recd_carla_kind_name(kind), key) != 0)
            kind++;
        if (kind >= RECD_CARLA_KIND_COUNT || n == CAP) {
            char safe[48];
            text_safe_excerpt(key, strlen(key), safe);
            snprintf(why, whylen, ": unknown key \"%s\"", safe);
            rc = -EBADMSG;
            break;
        }
        rc = read_kind(v, kind, &data, &bp[n++], why, whylen);
    }
    if (rc == 0) {
        recd_carla_packet *pk = malloc((n ? n : 1) * sizeof *pk);
        rc = pk ? 0 : -ENOMEM;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            pk[i] = bp[i].p;
            pk[i].data = data.data ? data.data + bp[i].off : NULL; /* only empty packets */
        }
        f.packets = pk;
        f.count = n;
        if (rc == 0 && !(*out = recd__carla_frame_clone(&f)))
            rc = -ENOMEM;
        free(pk);
    }
    free(bp);
    recd_buf_free(&data);
    return rc;
}

static const char *const event_kinds[] = {"add", "delete", "parent", "collision"};

static int recd__carla_event_to_json(const recd_carla_event *e, recd_buf *out)
{
    if (e->kind < RECD_CARLA_EVENT_ADD || e->kind > RECD_CARLA_COLLISION)
        return -EINVAL;
    char t[64];
    snprintf(t, sizeof t, ",\"kind\":\"%s\",", event_kinds[e->kind - RECD_CARLA_EVENT_ADD]);
    int rc = text_puts(out, t);
    size_t mark = out->len, used;
    if (rc == 0)
        rc = carla_record_to_json(carla_kind(e->kind, e->width)->fields, e->width, e->data, e->len,
                                  out, &used);
    if (rc == 0) { /* the record's members go into the event object: drop its braces */
        memmove(out->data + mark, out->data + mark + 1, out->len - mark - 2);
        out->len -= 2;
    }
    return rc;
}

static int recd__carla_event_from_json(const json_t *root, recd_carla_event **out, char *why,
                                       size_t whylen)
{
    *out = NULL;
    json_t *kind = json_object_get(root, "kind");
    unsigned k = 0;
    while (k < 4 && !(json_is_string(kind) && strcmp(json_string_value(kind), event_kinds[k]) == 0))
        k++;
    if (k == 4) {
        snprintf(why, whylen, ".kind: expected \"add\", \"delete\", \"parent\" or \"collision\"");
        return -EBADMSG;
    }
    json_t *rec = json_deep_copy(root);
    if (!rec)
        return -ENOMEM;
    json_object_del(rec, "type");
    json_object_del(rec, "session");
    json_object_del(rec, "seq");
    json_object_del(rec, "save"); /* the message's save flag (read with the common keys) */
    json_object_del(rec, "kind");
    recd_buf data = {0};
    int rc = carla_record_from_json(carla_kind(RECD_CARLA_EVENT_ADD + k, 8)->fields, rec, &data,
                                    why, whylen);
    json_decref(rec);
    if (rc == 0) {
        recd_carla_event e = {.kind = (uint8_t)(RECD_CARLA_EVENT_ADD + k), .width = 8,
                              .len = (uint32_t)data.len, .data = data.data};
        if (!(*out = recd__carla_event_clone(&e)))
            rc = -ENOMEM;
    }
    recd_buf_free(&data);
    return rc;
}

/* ---- the message model's hooks (message/msg_formats.h) ------------------------------------ */

static void carla_open_free(recd_msg *m)
{
    recd__carla_open_free(m->open.carla);
}

static int carla_open_copy(recd_msg *dst, const recd_msg *src)
{
    dst->open.carla = src->open.carla ? recd__carla_open_clone(src->open.carla) : NULL;
    return dst->open.carla || !src->open.carla ? 0 : -ENOMEM;
}

static void carla_state_free(recd_msg *m)
{
    free(m->carla_state);
}

static int carla_state_copy(recd_msg *dst, const recd_msg *src)
{
    dst->carla_state = src->carla_state ? recd__carla_frame_clone(src->carla_state) : NULL;
    return dst->carla_state || !src->carla_state ? 0 : -ENOMEM;
}

static void carla_event_free(recd_msg *m)
{
    free(m->carla_event);
}

static int carla_event_copy(recd_msg *dst, const recd_msg *src)
{
    dst->carla_event = src->carla_event ? recd__carla_event_clone(src->carla_event) : NULL;
    return dst->carla_event || !src->carla_event ? 0 : -ENOMEM;
}

const struct recd_format_model recd_carla__model = {
    .open_free = carla_open_free,
    .open_copy = carla_open_copy,
    .state_free = carla_state_free,
    .state_copy = carla_state_copy,
    .event_free = carla_event_free,
    .event_copy = carla_event_copy,
};

/* ---- the JSON lines hooks (message/json/msg_json_formats.h) ------------------------------- */

static int carla_open_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    json_t *carla = json_object_get(root, "carla");
    if (!carla) {
        recd_why(err, errlen, "open: missing key \"carla\" (format carla: map, date, width, ids)");
        return -EBADMSG;
    }
    char why[200];
    int rc = recd__carla_open_from_json(carla, &out->open.carla, why, sizeof why);
    if (rc == -EBADMSG)
        recd_why(err, errlen, "open.carla%s", why);
    return rc;
}

static int carla_open_write(const recd_msg *m, recd_buf *out)
{
    if (!m->open.carla)
        return -EINVAL;
    int rc = json_text_put_key(out, "carla");
    return rc == 0 ? recd__carla_open_to_json(m->open.carla, out) : rc;
}

static int carla_state_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    out->format = RECD_MSG_FMT_CARLA;
    char why[200];
    int rc = recd__carla_state_from_json(root, &out->carla_state, why, sizeof why);
    if (rc == -EBADMSG)
        recd_why(err, errlen, "state%s", why);
    return rc;
}

static int carla_state_write(const recd_msg *m, recd_buf *out)
{
    return m->carla_state ? recd__carla_state_to_json(m->carla_state, out) : -EINVAL;
}

static int carla_event_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    out->format = RECD_MSG_FMT_CARLA;
    char why[200];
    int rc = recd__carla_event_from_json(root, &out->carla_event, why, sizeof why);
    if (rc == -EBADMSG)
        recd_why(err, errlen, "event%s", why);
    return rc;
}

static int carla_event_write(const recd_msg *m, bool with_tick, recd_buf *out)
{
    (void)with_tick; /* a CARLA event has no tick of its own */
    return m->carla_event ? recd__carla_event_to_json(m->carla_event, out) : -EINVAL;
}

/* Without a session format: a state with "frame" and "elapsed", an event with "kind". */
static bool carla_state_sniff(const json_t *root)
{
    return json_object_get(root, "frame") && json_object_get(root, "elapsed");
}

static bool carla_event_sniff(const json_t *root)
{
    return json_object_get(root, "kind") != NULL;
}

const struct recd_format_json recd_carla__json = {
    .open_key = "carla",
    .open_read = carla_open_read,
    .open_write = carla_open_write,
    .state_read = carla_state_read,
    .state_write = carla_state_write,
    .event_read = carla_event_read,
    .event_write = carla_event_write,
    .state_sniff = carla_state_sniff,
    .event_sniff = carla_event_sniff,
    .fast_state = carla_json_fast_state,
};
