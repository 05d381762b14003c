/* SPDX-License-Identifier: MIT */
/* The SA-MP formats' JSON lines hooks (recd_rec__json_*): a state is the .rec block's fields
 * by the field tables of rec_fields.c (keys, arrays and objects of them, each range-checked and
 * named in errors); a samp-player state is an on-foot or vehicle one, the latter with an optional
 * model and seat. SA-MP sessions have no events and no open key. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/rec/rec_fields.h"
#include "formats/rec/rec_json_fast.h"
#include "message/json/msg_json_formats.h"
#include "base/json_text.h"
#include "base/text.h"
#include "base/why.h"

static int read_rec_group_member(const rec_field *f, const json_t *j, const char *type,
                                 rec_value *v, char *err, size_t errlen)
{
    char why[96], path[48];
    if (rec_read_value(f, j, false, v, why, sizeof why))
        return 0;
    rec_field_path(f, path, sizeof path);
    recd_why(err, errlen, "%s.%s: %s", type, path, why);
    return -EBADMSG;
}

/* Reads group `key` (fields [g, end) share it) from its JSON value. */
static int read_rec_group(const rec_field *fields, size_t g, size_t end, const json_t *j,
                          rec_value *vals, char *err, size_t errlen)
{
    const rec_field *f = &fields[g];
    if (f->index >= 0) {
        if (!json_is_array(j) || json_array_size(j) != (size_t)f->count) {
            recd_why(err, errlen, "state.%s: expected an array of %d numbers, got %s", f->key,
                     f->count, json_is_array(j) ? "another length" : json_text_type_name(j));
            return -EBADMSG;
        }
        for (size_t i = g; i < end; i++) {
            int rc = read_rec_group_member(&fields[i], json_array_get(j, (size_t)fields[i].index),
                                           "state", &vals[i], err, errlen);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    if (f->sub) {
        if (!json_is_object(j)) {
            recd_why(err, errlen, "state.%s: expected an object, got %s", f->key,
                     json_text_type_name(j));
            return -EBADMSG;
        }
        const char *subs[REC_MAX_FIELDS + 1];
        size_t ns = 0;
        for (size_t i = g; i < end; i++)
            subs[ns++] = fields[i].sub;
        subs[ns] = NULL;
        const char *bad = json_text_unknown_key(j, subs);
        if (bad) {
            char where[64];
            snprintf(where, sizeof where, "state.%s", f->key);
            return json_text_err_unknown_key(where, bad, err, errlen);
        }
        for (size_t i = g; i < end; i++) {
            json_t *m = json_object_get(j, fields[i].sub);
            if (!m) {
                recd_why(err, errlen, "state.%s: missing key \"%s\"", f->key, fields[i].sub);
                return -EBADMSG;
            }
            int rc = read_rec_group_member(&fields[i], m, "state", &vals[i], err, errlen);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    return read_rec_group_member(f, j, "state", &vals[g], err, errlen);
}

/* The first field of key's group, or n. The search starts at `from`, a group boundary, and wraps:
 * a line in the canonical field order finds each key at once instead of after a dozen strcmp. */
static size_t find_group(const rec_field *fields, size_t n, const char *key, size_t from)
{
    for (size_t i = from; i < n; i++)
        if (strcmp(fields[i].key, key) == 0)
            return i;
    for (size_t i = 0; i < from; i++)
        if (strcmp(fields[i].key, key) == 0)
            return i;
    return n;
}

static int read_rec_state(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    static const char *const common_keys[] = {MSG_JSON_COMMON_KEYS, NULL};
    static const char *const player_keys[] = {MSG_JSON_COMMON_KEYS, "vehicle_model", "seat", NULL};
    const char *const *extra = out->format == RECD_MSG_FMT_SAMP_VEHICLE &&
                                       out->player.rec_type == RECD_REC_TYPE_VEHICLE
                                   ? player_keys
                                   : common_keys;
    size_t n;
    const rec_field *fields = rec_fields(out->format, &n);
    rec_value vals[REC_MAX_FIELDS];
    memset(vals, 0, sizeof vals);

    const char *key;
    json_t *val;
    size_t next = 0; /* where the last key's group ended: keys mostly come in field order */
    json_object_foreach((json_t *)root, key, val)
    {
        size_t g = find_group(fields, n, key, next);
        if (g == n) {
            if (json_text_key_in(key, extra))
                continue;
            return json_text_err_unknown_key("state", key, err, errlen);
        }
        size_t end = g;
        while (end < n && strcmp(fields[end].key, key) == 0)
            end++;
        next = end < n ? end : 0;
        int rc = read_rec_group(fields, g, end, val, vals, err, errlen);
        if (rc < 0)
            return rc;
    }
    int alt_seen[3] = {0, 0, 0};
    const char *alt_key[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < n; i++) {
        if (fields[i].alt) {
            alt_seen[fields[i].alt] |= vals[i].set;
            alt_key[fields[i].alt] = fields[i].key;
        } else if (!vals[i].set) {
            recd_why(err, errlen, "state: missing key \"%s\" (%s)", fields[i].key,
                     recd_msg_format_name(out->format));
            return -EBADMSG;
        }
    }
    if (alt_key[1] && alt_seen[1] + alt_seen[2] != 1) {
        recd_why(err, errlen, "state: needs exactly one of \"%s\" and \"%s\"", alt_key[1], alt_key[2]);
        return -EBADMSG;
    }
    rec_unflatten(vals, out);
    return 0;
}

/* An optional integer key of a samp-player vehicle state, within [min, max]. */
static int read_player_int(const json_t *root, const char *key, int64_t min, int64_t max,
                           int64_t *v, bool *present, char *err, size_t errlen)
{
    int rc = json_text_read_int64(root, "state", key, min, v, present, err, errlen);
    if (rc == 0 && *present && *v > max) {
        recd_why(err, errlen, "state.%s: %lld is above %lld", key, (long long)*v, (long long)max);
        return -EBADMSG;
    }
    return rc;
}

/* A samp-player state: a vehicle state when it has "vehicle_id" (which may add "vehicle_model"
 * and "seat"), else an on-foot one. */
static int read_player_state(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    bool vehicle = json_object_get(root, "vehicle_id") != NULL;
    out->format = vehicle ? RECD_MSG_FMT_SAMP_VEHICLE : RECD_MSG_FMT_SAMP_ONFOOT;
    out->player.rec_type = vehicle ? RECD_REC_TYPE_VEHICLE : RECD_REC_TYPE_ONFOOT;
    int rc = read_rec_state(root, out, err, errlen);
    if (rc == 0 && vehicle) {
        int64_t v;
        bool has;
        if ((rc = read_player_int(root, "vehicle_model", 400, 611, &v, &has, err, errlen)) < 0)
            return rc;
        out->player.has_model = has;
        out->player.vehicle_model = has ? (uint16_t)v : 0;
        if ((rc = read_player_int(root, "seat", 0, 3, &v, &has, err, errlen)) < 0)
            return rc;
        out->player.has_seat = has;
        out->player.seat = has ? (uint8_t)v : 0;
    }
    out->format = RECD_MSG_FMT_SAMP_PLAYER;
    return rc;
}

/* Adjacent fields of one group share the key text (often the same pointer). */
static bool same_key(const char *a, const char *b) { return a == b || (a[0] == b[0] && strcmp(a, b) == 0); }

static int put_value(recd_buf *out, const rec_field *f, const rec_value *v)
{
    if (f->type == MF_F32)
        return text_put_f32(out, v->f) < 0 ? -EINVAL : 0;
    if (v->i < rec_field_min(f) || v->i > rec_field_max(f))
        return -EINVAL;
    if (f->type == MF_BOOL)
        return text_puts(out, v->i ? "true" : "false");
    return text_put_i64(out, v->i);
}

/* Fields that share a key form a group: a JSON array (index >= 0) or object (sub != NULL). */
static int put_rec_fields(recd_buf *out, const recd_msg *m)
{
    size_t n;
    const rec_field *fields = rec_fields(m->format, &n);
    if (!fields)
        return -EINVAL;
    rec_value vals[REC_MAX_FIELDS];
    rec_flatten(m, vals);
    int rc = 0;
    bool next_first = true; /* the key of fields[i] differs from the one before */
    for (size_t i = 0; i < n && rc == 0; i++) {
        const rec_field *f = &fields[i];
        bool first = next_first;
        bool last = i + 1 == n || !same_key(fields[i + 1].key, f->key);
        next_first = last;
        if (!vals[i].set)
            continue;
        if (first)
            rc = json_text_put_key(out, f->key);
        if (rc == 0 && first && f->index >= 0)
            rc = text_putc(out, '[');
        if (rc == 0 && first && f->sub)
            rc = text_putc(out, '{');
        if (rc == 0 && !first)
            rc = text_putc(out, ',');
        if (rc == 0 && f->sub) {
            rc = text_putc(out, '"');
            if (rc == 0)
                rc = text_puts(out, f->sub);
            if (rc == 0)
                rc = recd_buf_append(out, "\":", 2);
        }
        if (rc == 0)
            rc = put_value(out, f, &vals[i]);
        if (rc == 0 && last && f->index >= 0)
            rc = text_putc(out, ']');
        if (rc == 0 && last && f->sub)
            rc = text_putc(out, '}');
    }
    return rc;
}

static int onfoot_state_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    out->format = RECD_MSG_FMT_SAMP_ONFOOT;
    return read_rec_state(root, out, err, errlen);
}

static int vehicle_state_read(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    out->format = RECD_MSG_FMT_SAMP_VEHICLE;
    return read_rec_state(root, out, err, errlen);
}

static int rec_state_write(const recd_msg *m, recd_buf *out)
{
    return put_rec_fields(out, m);
}

/* Without a session format a state with "vehicle_id" is a vehicle's, any other one on foot's. */
static bool vehicle_state_sniff(const json_t *root)
{
    return json_object_get(root, "vehicle_id") != NULL;
}

/* A state line no other format claims by its keys is an on-foot block. */
const struct recd_format_json recd_rec__json_onfoot = {
    .state_read = onfoot_state_read,
    .state_write = rec_state_write,
    .state_fallback = true,
    .fast_state = rec_json_fast_state,
};

const struct recd_format_json recd_rec__json_vehicle = {
    .state_read = vehicle_state_read,
    .state_write = rec_state_write,
    .state_sniff = vehicle_state_sniff,
    .fast_state = rec_json_fast_state,
};

/* Its states are read only (recd_msg_to_json refuses them, -EINVAL); a line names no player
 * session by its keys. */
const struct recd_format_json recd_rec__json_player = {
    .state_read = read_player_state,
};
