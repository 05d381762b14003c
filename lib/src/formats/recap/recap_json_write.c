/* SPDX-License-Identifier: MIT */
/* JSON for Recap message parts (open metadata, tick states, events), written by hand for exact
 * numbers. Events are mapped generically by walking the tag table from recap.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "formats/recap/recap_msg.h"
#include "base/text.h"

/* [,]"key": in one append. */
static int put_key(recd_buf *out, bool comma, const char *key)
{
    size_t n = strlen(key);
    int rc = recd_buf_reserve(out, n + 4);
    if (rc < 0)
        return rc;
    char *p = (char *)out->data + out->len;
    if (comma)
        *p++ = ',';
    *p++ = '"';
    memcpy(p, key, n);
    p[n] = '"';
    p[n + 1] = ':';
    out->len += n + 3 + comma;
    return 0;
}

static int put_i64(recd_buf *out, int64_t v) { return text_put_i64(out, v); }

static int put_u64(recd_buf *out, uint64_t v) { return text_put_u64(out, v); }

static int put_f32(recd_buf *out, float f) { return text_put_f32(out, f); }

static int put_f64(recd_buf *out, double d) { return text_put_f64(out, d); }

static int put_blob_string(recd_buf *out, recd_recap_blob b)
{
    return text_put_json_string(out, (const char *)b.data, b.len);
}

static int put_base64(recd_buf *out, recd_recap_blob b)
{
    int rc = recd_buf_append(out, "\"", 1);
    if (rc == 0)
        rc = text_base64_append(out, b.data, b.len);
    if (rc == 0)
        rc = recd_buf_append(out, "\"", 1);
    return rc;
}

static int put_vec(recd_buf *out, bool comma, const char *key, const double v[3])
{
    int rc = put_key(out, comma, key);
    for (int i = 0; i < 3 && rc == 0; i++) {
        rc = recd_buf_append(out, i ? "," : "[", 1);
        if (rc == 0)
            rc = put_f64(out, v[i]);
    }
    return rc == 0 ? recd_buf_append(out, "]", 1) : rc;
}

/* {"key":..,"count":..[,"flags":..][,"data":base64]}; slot >= 0 adds "slot" first. */
static int put_item(recd_buf *out, const recd_recap_item *it, int slot)
{
    int rc = recd_buf_append(out, "{", 1);
    bool comma = false;
    if (rc == 0 && slot >= 0) {
        rc = put_key(out, false, "slot");
        if (rc == 0)
            rc = put_i64(out, slot);
        comma = true;
    }
    if (rc == 0)
        rc = put_key(out, comma, "key");
    if (rc == 0)
        rc = put_blob_string(out, it->key);
    if (rc == 0 && it->key.len) {
        rc = put_key(out, true, "count");
        if (rc == 0)
            rc = put_i64(out, it->count);
        if (rc == 0 && it->flags) {
            rc = put_key(out, true, "flags");
            if (rc == 0)
                rc = put_i64(out, it->flags);
        }
        if (rc == 0 && it->data.len) {
            rc = put_key(out, true, "data");
            if (rc == 0)
                rc = put_base64(out, it->data);
        }
    }
    return rc == 0 ? recd_buf_append(out, "}", 1) : rc;
}

int msg_recap_items_to_json(const recd_recap_item *items, size_t n, recd_buf *out)
{
    int rc = recd_buf_append(out, "[", 1);
    bool first = true;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!items[i].key.len)
            continue;
        if (!first)
            rc = recd_buf_append(out, ",", 1);
        first = false;
        if (rc == 0)
            rc = put_item(out, &items[i], (int)i);
    }
    return rc == 0 ? recd_buf_append(out, "]", 1) : rc;
}

int msg_recap_open_to_json(const recd_msg_recap_open *o, recd_buf *out)
{
    const recd_recap_header *h = &o->header;
    int rc = recd_buf_append(out, "{", 1);
    if (rc == 0)
        rc = put_key(out, false, "version");
    if (rc == 0)
        rc = put_i64(out, h->version ? h->version : RECD_RECAP_VERSION);
    const struct {
        const char *key;
        recd_recap_blob b;
    } strs[] = {{"name", h->name}, {"player", h->player_name}, {"uuid", h->player_uuid},
                {"world", h->world_name}};
    for (size_t i = 0; i < 4 && rc == 0; i++) {
        rc = put_key(out, true, strs[i].key);
        if (rc == 0)
            rc = put_blob_string(out, strs[i].b);
    }
    if (rc == 0)
        rc = put_vec(out, true, "origin", h->origin);
    if (rc == 0 && o->has_start_time && (rc = put_key(out, true, "start_time")) == 0)
        rc = put_i64(out, h->start_ms);
    if (rc == 0 && o->has_end_time && (rc = put_key(out, true, "end_time")) == 0)
        rc = put_i64(out, h->end_ms);
    if (rc == 0 && o->has_frame_count && (rc = put_key(out, true, "frame_count")) == 0)
        rc = put_i64(out, h->frame_count);
    if (rc == 0 && (rc = put_key(out, true, "weather")) == 0)
        rc = put_i64(out, h->weather);
    if (rc == 0 && (rc = put_key(out, true, "time_of_day")) == 0)
        rc = put_i64(out, h->time_of_day);
    if (rc == 0 && h->skin_texture.len && (rc = put_key(out, true, "skin_texture")) == 0)
        rc = put_blob_string(out, h->skin_texture);
    if (rc == 0 && h->skin_signature.len && (rc = put_key(out, true, "skin_signature")) == 0)
        rc = put_blob_string(out, h->skin_signature);
    if (rc == 0 && h->has_encoder_params) {
        /* zlib, the default, is not written, so zlib files keep the JSON they always had. */
        const char *comp = recd_gzip_compressor_name((recd_gzip_compressor)h->compressor);
        char compressor[40] = "";
        if (h->compressor != RECD_GZIP_ZLIB && comp)
            snprintf(compressor, sizeof compressor, ",\"compressor\":\"%s\"", comp);
        char enc[200];
        snprintf(enc, sizeof enc,
                 ",\"encoder\":{\"keyframe_interval\":%" PRIu32 ",\"gzip_level\":%u"
                 ",\"member_limit\":%" PRIu32 "%s}",
                 h->keyframe_interval, (unsigned)h->gzip_level, h->member_limit, compressor);
        rc = text_puts(out, enc);
    }
    if (rc == 0 && h->ext_unknown.len && (rc = put_key(out, true, "extensions")) == 0)
        rc = put_base64(out, h->ext_unknown);
    return rc == 0 ? recd_buf_append(out, "}", 1) : rc;
}

int msg_recap_state_to_json(const recd_msg_recap_state *s, recd_buf *out)
{
    const recd_recap_state *st = &s->state;
    int rc = put_key(out, true, "tick");
    if (rc == 0)
        rc = put_u64(out, s->tick);
    if (rc == 0)
        rc = put_vec(out, true, "pos", st->pos);
    if (rc == 0)
        rc = put_vec(out, true, "rot", st->rot);
    if (rc == 0)
        rc = put_vec(out, true, "vel", st->vel);
    const struct {
        const char *key;
        unsigned v;
    } ints[] = {{"flags", st->flags}, {"pose", st->pose}, {"game_mode", st->game_mode},
                {"hand_state", st->hand_state}};
    for (size_t i = 0; i < 4 && rc == 0; i++) {
        rc = put_key(out, true, ints[i].key);
        if (rc == 0)
            rc = put_i64(out, ints[i].v);
    }
    if (rc == 0 && (rc = put_key(out, true, "health")) == 0)
        rc = put_f32(out, st->health);
    if (rc == 0 && (rc = put_key(out, true, "absorption")) == 0)
        rc = put_f32(out, st->absorption);
    if (rc == 0 && (rc = put_key(out, true, "equipment")) == 0)
        rc = msg_recap_items_to_json(st->equipment, RECD_RECAP_EQUIPMENT_SLOTS, out);
    if (rc == 0 && (rc = put_key(out, true, "inventory")) == 0)
        rc = msg_recap_items_to_json(st->inventory, RECD_RECAP_INVENTORY_SLOTS, out);
    return rc;
}

static int put_value(recd_buf *out, const recd_recap_field *f, const recd_recap_value *v);

static int put_list(recd_buf *out, const recd_recap_field *f, const recd_recap_list *l)
{
    int rc = recd_buf_append(out, "[", 1);
    for (size_t r = 0; r < l->count && rc == 0; r++) {
        rc = text_puts(out, r ? ",{" : "{");
        for (size_t i = 0; i < f->elem_count && rc == 0; i++) {
            rc = put_key(out, i > 0, f->elem[i].name);
            if (rc == 0)
                rc = put_value(out, &f->elem[i], &l->values[r * f->elem_count + i]);
        }
        if (rc == 0)
            rc = recd_buf_append(out, "}", 1);
    }
    return rc == 0 ? recd_buf_append(out, "]", 1) : rc;
}

static int put_value(recd_buf *out, const recd_recap_field *f, const recd_recap_value *v)
{
    switch (f->type) {
    case RECD_RECAP_T_U8:
    case RECD_RECAP_T_U16: return put_i64(out, v->u);
    case RECD_RECAP_T_I32:
    case RECD_RECAP_T_I64: return put_i64(out, v->i);
    case RECD_RECAP_T_F32: return put_f32(out, v->f32);
    case RECD_RECAP_T_F64: return put_f64(out, v->f64);
    case RECD_RECAP_T_STR:
    case RECD_RECAP_T_TEXT: return put_blob_string(out, v->blob);
    case RECD_RECAP_T_BYTES: return put_base64(out, v->blob);
    case RECD_RECAP_T_ITEM: return put_item(out, &v->item, -1);
    case RECD_RECAP_T_LIST: return put_list(out, f, &v->list);
    default: return -EINVAL; /* MOVEMENT is a state action, never an event field */
    }
}

int msg_recap_event_to_json(const recd_msg_recap_event *e, bool with_tick, recd_buf *out)
{
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(e->event.tag);
    if (!ti || ti->kind != RECD_RECAP_KIND_EVENT || ti->field_count != e->event.field_count)
        return -EINVAL;
    int rc = 0;
    if (with_tick && (rc = put_key(out, true, "tick")) == 0)
        rc = put_u64(out, e->tick);
    if (rc == 0 && (rc = put_key(out, true, "action")) == 0)
        rc = text_put_json_string(out, ti->name, strlen(ti->name));
    for (size_t i = 0; i < ti->field_count && rc == 0; i++) {
        rc = put_key(out, true, ti->fields[i].name);
        if (rc == 0)
            rc = put_value(out, &ti->fields[i], &e->event.fields[i]);
    }
    return rc;
}
