/* SPDX-License-Identifier: MIT */
/* The .rec field tables behind the JSON and CSV encodings of SA-MP states: table-driven
 * flattening of blocks and per-field range checks. */
#include "formats/rec/rec_fields.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/json_text.h"
#include "base/text.h"
#include "base/why.h"

#define LEN(s) ((uint8_t)(sizeof(s) - 1))
#define SCALAR(csv, type) {csv, csv, NULL, -1, 0, type, 0, 0, LEN(csv), 0}
#define BITS(csv, n) {csv, csv, NULL, -1, 0, MF_BITS, n, 0, LEN(csv), 0}
#define ELEM(csv, key, i, n) {csv, key, NULL, i, n, MF_F32, 0, 0, LEN(key), 0}
#define MEMBER(csv, key, sub, type, bits) {csv, key, sub, -1, 0, type, bits, 0, LEN(key), LEN(sub)}
#define VEC3(name) ELEM(name "_x", name, 0, 3), ELEM(name "_y", name, 1, 3), ELEM(name "_z", name, 2, 3)
#define QUAT(name)                                                                                \
    ELEM(name "_w", name, 0, 4), ELEM(name "_x", name, 1, 4), ELEM(name "_y", name, 2, 4),        \
        ELEM(name "_z", name, 3, 4)

static const rec_field onfoot_fields[] = {
    SCALAR("t", MF_U32),
    SCALAR("left_right", MF_S16),
    SCALAR("up_down", MF_S16),
    SCALAR("keys", MF_U16),
    VEC3("position"),
    QUAT("rotation"),
    SCALAR("health", MF_U8),
    SCALAR("armour", MF_U8),
    BITS("weapon", 6),
    BITS("additional_key", 2),
    SCALAR("special_action", MF_U8),
    VEC3("velocity"),
    VEC3("surf_offset"),
    SCALAR("surf_id", MF_U16),
    SCALAR("anim_id", MF_U16),
    MEMBER("anim_frame_delta", "anim_flags", "frame_delta", MF_BITS, 8),
    MEMBER("anim_loop", "anim_flags", "loop", MF_BOOL, 1),
    MEMBER("anim_lock_x", "anim_flags", "lock_x", MF_BOOL, 1),
    MEMBER("anim_lock_y", "anim_flags", "lock_y", MF_BOOL, 1),
    MEMBER("anim_freeze", "anim_flags", "freeze", MF_BOOL, 1),
    MEMBER("anim_time", "anim_flags", "time", MF_BITS, 4),
};

static const rec_field vehicle_fields[] = {
    SCALAR("t", MF_U32),
    SCALAR("vehicle_id", MF_U16),
    SCALAR("left_right", MF_S16),
    SCALAR("up_down", MF_S16),
    SCALAR("keys", MF_U16),
    QUAT("rotation"),
    VEC3("position"),
    VEC3("velocity"),
    SCALAR("vehicle_health", MF_F32),
    SCALAR("driver_health", MF_U8),
    SCALAR("driver_armour", MF_U8),
    BITS("weapon", 6),
    BITS("additional_key", 2),
    SCALAR("siren", MF_U8),
    SCALAR("landing_gear", MF_U8),
    SCALAR("trailer_id", MF_U16),
    {"hydra_thrust_0", "hydra_thrust", NULL, 0, 2, MF_U16, 0, 1, LEN("hydra_thrust"), 0},
    {"hydra_thrust_1", "hydra_thrust", NULL, 1, 2, MF_U16, 0, 1, LEN("hydra_thrust"), 0},
    {"train_speed", "train_speed", NULL, -1, 0, MF_F32, 0, 2, LEN("train_speed"), 0},
};

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(NFIELDS(onfoot_fields) <= REC_MAX_FIELDS, "raise REC_MAX_FIELDS");
_Static_assert(NFIELDS(vehicle_fields) <= REC_MAX_FIELDS, "raise REC_MAX_FIELDS");

const rec_field *rec_fields(recd_msg_format f, size_t *count)
{
    switch (f) {
    case RECD_MSG_FMT_SAMP_ONFOOT: *count = NFIELDS(onfoot_fields); return onfoot_fields;
    case RECD_MSG_FMT_SAMP_VEHICLE: *count = NFIELDS(vehicle_fields); return vehicle_fields;
    default: *count = 0; return NULL;
    }
}

/* Train speeds are small normal floats; Hydra thrust pairs (<= 5000 each) read as floats below
 * 1e-30, and zero bits read as Hydra (0, 0). Either choice is exact; this one is readable. */
static bool rec_extra_is_train_speed(uint32_t bits)
{
    float f = f32_from_bits(bits);
    if (!isnormal(f))
        return false;
    float a = fabsf(f);
    return a >= 1e-6f && a <= 1e4f;
}

static void put_i(rec_value **v, int64_t i)
{
    (*v)->set = true;
    (*v)->i = i;
    (*v)++;
}

static void put_f(rec_value **v, float f)
{
    (*v)->set = true;
    (*v)->f = f;
    (*v)++;
}

static void put_vec3(rec_value **v, recd_vec3f a)
{
    put_f(v, a.x);
    put_f(v, a.y);
    put_f(v, a.z);
}

static void put_quat(rec_value **v, recd_quat q)
{
    put_f(v, q.w);
    put_f(v, q.x);
    put_f(v, q.y);
    put_f(v, q.z);
}

void rec_flatten(const recd_msg *m, rec_value *vals)
{
    memset(vals, 0, sizeof(rec_value) * REC_MAX_FIELDS);
    rec_value *v = vals;
    if (m->format == RECD_MSG_FMT_SAMP_ONFOOT) {
        const recd_rec_onfoot *b = &m->onfoot;
        put_i(&v, b->time_ms);
        put_i(&v, b->left_right);
        put_i(&v, b->up_down);
        put_i(&v, b->keys);
        put_vec3(&v, b->position);
        put_quat(&v, b->rotation);
        put_i(&v, b->health);
        put_i(&v, b->armour);
        put_i(&v, b->weapon);
        put_i(&v, b->additional_key);
        put_i(&v, b->special_action);
        put_vec3(&v, b->velocity);
        put_vec3(&v, b->surf_offset);
        put_i(&v, b->surf_id);
        put_i(&v, b->anim_id);
        put_i(&v, b->anim_flags.frame_delta);
        put_i(&v, b->anim_flags.loop);
        put_i(&v, b->anim_flags.lock_x);
        put_i(&v, b->anim_flags.lock_y);
        put_i(&v, b->anim_flags.freeze);
        put_i(&v, b->anim_flags.time);
    } else if (m->format == RECD_MSG_FMT_SAMP_VEHICLE) {
        const recd_rec_vehicle *b = &m->vehicle;
        put_i(&v, b->time_ms);
        put_i(&v, b->vehicle_id);
        put_i(&v, b->left_right);
        put_i(&v, b->up_down);
        put_i(&v, b->keys);
        put_quat(&v, b->rotation);
        put_vec3(&v, b->position);
        put_vec3(&v, b->velocity);
        put_f(&v, b->vehicle_health);
        put_i(&v, b->driver_health);
        put_i(&v, b->driver_armour);
        put_i(&v, b->weapon);
        put_i(&v, b->additional_key);
        put_i(&v, b->siren);
        put_i(&v, b->landing_gear);
        put_i(&v, b->trailer_id);
        if (rec_extra_is_train_speed(b->extra.bits)) {
            v += 2;
            put_f(&v, f32_from_bits(b->extra.bits));
        } else {
            put_i(&v, recd_rec_hydra_thrust(b->extra, 0));
            put_i(&v, recd_rec_hydra_thrust(b->extra, 1));
        }
    }
}

static int64_t get_i(const rec_value **v) { return (*v)++->i; }
static float get_f(const rec_value **v) { return (*v)++->f; }

static recd_vec3f get_vec3(const rec_value **v)
{
    recd_vec3f a;
    a.x = get_f(v);
    a.y = get_f(v);
    a.z = get_f(v);
    return a;
}

static recd_quat get_quat(const rec_value **v)
{
    recd_quat q;
    q.w = get_f(v);
    q.x = get_f(v);
    q.y = get_f(v);
    q.z = get_f(v);
    return q;
}

void rec_unflatten(const rec_value *vals, recd_msg *m)
{
    const rec_value *v = vals;
    if (m->format == RECD_MSG_FMT_SAMP_ONFOOT) {
        recd_rec_onfoot *b = &m->onfoot;
        memset(b, 0, sizeof *b);
        b->time_ms = (uint32_t)get_i(&v);
        b->left_right = (int16_t)get_i(&v);
        b->up_down = (int16_t)get_i(&v);
        b->keys = (uint16_t)get_i(&v);
        b->position = get_vec3(&v);
        b->rotation = get_quat(&v);
        b->health = (uint8_t)get_i(&v);
        b->armour = (uint8_t)get_i(&v);
        b->weapon = (uint8_t)get_i(&v);
        b->additional_key = (uint8_t)get_i(&v);
        b->special_action = (uint8_t)get_i(&v);
        b->velocity = get_vec3(&v);
        b->surf_offset = get_vec3(&v);
        b->surf_id = (uint16_t)get_i(&v);
        b->anim_id = (uint16_t)get_i(&v);
        b->anim_flags.frame_delta = (unsigned)get_i(&v) & 0xFFu;
        b->anim_flags.loop = (unsigned)get_i(&v) & 1u;
        b->anim_flags.lock_x = (unsigned)get_i(&v) & 1u;
        b->anim_flags.lock_y = (unsigned)get_i(&v) & 1u;
        b->anim_flags.freeze = (unsigned)get_i(&v) & 1u;
        b->anim_flags.time = (unsigned)get_i(&v) & 0xFu;
    } else if (m->format == RECD_MSG_FMT_SAMP_VEHICLE) {
        recd_rec_vehicle *b = &m->vehicle;
        memset(b, 0, sizeof *b);
        b->time_ms = (uint32_t)get_i(&v);
        b->vehicle_id = (uint16_t)get_i(&v);
        b->left_right = (int16_t)get_i(&v);
        b->up_down = (int16_t)get_i(&v);
        b->keys = (uint16_t)get_i(&v);
        b->rotation = get_quat(&v);
        b->position = get_vec3(&v);
        b->velocity = get_vec3(&v);
        b->vehicle_health = get_f(&v);
        b->driver_health = (uint8_t)get_i(&v);
        b->driver_armour = (uint8_t)get_i(&v);
        b->weapon = (uint8_t)get_i(&v);
        b->additional_key = (uint8_t)get_i(&v);
        b->siren = (uint8_t)get_i(&v);
        b->landing_gear = (uint8_t)get_i(&v);
        b->trailer_id = (uint16_t)get_i(&v);
        if (v[2].set) {
            b->extra.bits = f32_to_bits(v[2].f);
        } else {
            b->extra = recd_rec_hydra_extra((uint16_t)v[0].i, (uint16_t)v[1].i);
        }
    }
}

void rec_field_path(const rec_field *f, char *buf, size_t n)
{
    if (f->sub)
        snprintf(buf, n, "%s.%s", f->key, f->sub);
    else if (f->index >= 0)
        snprintf(buf, n, "%s[%d]", f->key, f->index);
    else
        snprintf(buf, n, "%s", f->key);
}

static const char *rec_ftype_name(const rec_field *f)
{
    switch (f->type) {
    case MF_U8: return "u8";
    case MF_U16: return "u16";
    case MF_S16: return "s16";
    case MF_U32: return "u32";
    case MF_F32: return "f32";
    case MF_BOOL: return "a boolean";
    case MF_BITS:
        switch (f->bits) {
        case 2: return "2 bits";
        case 4: return "4 bits";
        case 6: return "6 bits";
        case 8: return "8 bits";
        default: return "its bit field";
        }
    }
    return "?";
}

int64_t rec_field_min(const rec_field *f) { return f->type == MF_S16 ? INT16_MIN : 0; }

int64_t rec_field_max(const rec_field *f)
{
    switch (f->type) {
    case MF_U8: return UINT8_MAX;
    case MF_U16: return UINT16_MAX;
    case MF_S16: return INT16_MAX;
    case MF_U32: return UINT32_MAX;
    case MF_BOOL: return 1;
    case MF_BITS: return ((int64_t)1 << f->bits) - 1;
    case MF_F32: return 0;
    }
    return 0;
}

bool rec_value_from_double(const rec_field *f, double d, rec_value *v, char *why, size_t whylen)
{
    if (f->type != MF_F32) {
        recd_why(why, whylen, "expected an integer, got a real number");
        return false;
    }
    if (!text_double_to_f32(d, &v->f)) {
        recd_why(why, whylen, "%.9g does not fit f32", d);
        return false;
    }
    v->set = true;
    return true;
}

bool rec_value_from_int(const rec_field *f, int64_t i, rec_value *v, char *why, size_t whylen)
{
    if (f->type == MF_F32)
        return rec_value_from_double(f, (double)i, v, why, whylen);
    if (i < rec_field_min(f) || i > rec_field_max(f)) {
        if (f->type == MF_BOOL)
            recd_why(why, whylen, "%lld is not 0 or 1", (long long)i);
        else
            recd_why(why, whylen, "%lld does not fit %s", (long long)i, rec_ftype_name(f));
        return false;
    }
    v->i = i;
    v->set = true;
    return true;
}

bool rec_read_value(const rec_field *f, const json_t *j, bool bool_as_int, rec_value *v, char *why,
                    size_t whylen)
{
    if (f->type == MF_BOOL && !bool_as_int) {
        if (!json_is_boolean(j)) {
            recd_why(why, whylen, "expected true or false, got %s", json_text_type_name(j));
            return false;
        }
        v->i = json_is_true(j);
        v->set = true;
        return true;
    }
    if (json_is_integer(j))
        return rec_value_from_int(f, json_integer_value(j), v, why, whylen);
    if (json_is_real(j))
        return rec_value_from_double(f, json_real_value(j), v, why, whylen);
    recd_why(why, whylen, "expected %s, got %s", f->type == MF_F32 ? "a number" : "an integer",
             json_text_type_name(j));
    return false;
}
