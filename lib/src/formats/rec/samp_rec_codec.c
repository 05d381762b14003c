/* SPDX-License-Identifier: MIT */
/* SA-MP .rec block codec: byte-exact little-endian encode/decode of the 72-byte on-foot, 67-byte
 * vehicle and the two legacy block kinds, plus the small bit-level helpers (animation flags,
 * weapon/additional-key byte, surf id classes). Layout: docs/formats/samp-rec.md. */
#include "recd/samp_rec.h"

#include <errno.h>
#include <math.h>

#include "base/bytes.h"

/* Two's complement without relying on implementation-defined narrowing of out-of-range values. */
static int16_t s16_from_u16(uint16_t v)
{
    return v < 0x8000u ? (int16_t)v : (int16_t)((int32_t)v - 0x10000);
}

static float ld_f32(const uint8_t *p) { return f32_from_bits(ld_le32(p)); }
static void st_f32(uint8_t *p, float f) { st_le32(p, f32_to_bits(f)); }

static void ld_vec3(const uint8_t *p, recd_vec3f *v)
{
    v->x = ld_f32(p);
    v->y = ld_f32(p + 4);
    v->z = ld_f32(p + 8);
}

static void st_vec3(uint8_t *p, const recd_vec3f *v)
{
    st_f32(p, v->x);
    st_f32(p + 4, v->y);
    st_f32(p + 8, v->z);
}

static void ld_quat(const uint8_t *p, recd_quat *q)
{
    q->w = ld_f32(p);
    q->x = ld_f32(p + 4);
    q->y = ld_f32(p + 8);
    q->z = ld_f32(p + 12);
}

static void st_quat(uint8_t *p, const recd_quat *q)
{
    st_f32(p, q->w);
    st_f32(p + 4, q->x);
    st_f32(p + 8, q->y);
    st_f32(p + 12, q->z);
}

/* Weapon id in bits 0-5, additional key (YES/NO/CTRL_BACK) in bits 6-7. */
static uint8_t weapon_byte(uint8_t weapon, uint8_t additional_key)
{
    return (uint8_t)((weapon & 0x3Fu) | ((additional_key & 0x3u) << 6));
}

static void split_weapon_byte(uint8_t raw, uint8_t *weapon, uint8_t *additional_key)
{
    *weapon = raw & 0x3Fu;
    *additional_key = (uint8_t)(raw >> 6);
}

uint16_t recd_rec_anim_flags_pack(recd_rec_anim_flags f)
{
    return (uint16_t)((f.frame_delta & 0xFFu) | ((f.loop & 1u) << 8) | ((f.lock_x & 1u) << 9) |
                      ((f.lock_y & 1u) << 10) | ((f.freeze & 1u) << 11) | ((f.time & 0xFu) << 12));
}

recd_rec_anim_flags recd_rec_anim_flags_unpack(uint16_t raw)
{
    recd_rec_anim_flags f;
    f.frame_delta = raw & 0xFFu;
    f.loop = (raw >> 8) & 1u;
    f.lock_x = (raw >> 9) & 1u;
    f.lock_y = (raw >> 10) & 1u;
    f.freeze = (raw >> 11) & 1u;
    f.time = (raw >> 12) & 0xFu;
    return f;
}

recd_rec_surf_kind recd_rec_surf_classify(uint16_t surf_id)
{
    if (surf_id == 0 || surf_id == 0xFFFFu)
        return RECD_REC_SURF_NONE;
    if (surf_id < RECD_REC_OBJECT_SURF_BASE)
        return RECD_REC_SURF_VEHICLE;
    if (surf_id < RECD_REC_OBJECT_SURF_END)
        return RECD_REC_SURF_OBJECT;
    return RECD_REC_SURF_OTHER;
}

void recd_rec_onfoot_encode(const recd_rec_onfoot *in, uint8_t out[RECD_REC_ONFOOT_BLOCK_SIZE])
{
    st_le32(out + 0, in->time_ms);
    st_le16(out + 4, (uint16_t)in->left_right);
    st_le16(out + 6, (uint16_t)in->up_down);
    st_le16(out + 8, in->keys);
    st_vec3(out + 10, &in->position);
    st_quat(out + 22, &in->rotation);
    out[38] = in->health;
    out[39] = in->armour;
    out[40] = weapon_byte(in->weapon, in->additional_key);
    out[41] = in->special_action;
    st_vec3(out + 42, &in->velocity);
    st_vec3(out + 54, &in->surf_offset);
    st_le16(out + 66, in->surf_id);
    st_le16(out + 68, in->anim_id);
    st_le16(out + 70, recd_rec_anim_flags_pack(in->anim_flags));
}

void recd_rec_onfoot_decode(const uint8_t in[RECD_REC_ONFOOT_BLOCK_SIZE], recd_rec_onfoot *out)
{
    out->time_ms = ld_le32(in + 0);
    out->left_right = s16_from_u16(ld_le16(in + 4));
    out->up_down = s16_from_u16(ld_le16(in + 6));
    out->keys = ld_le16(in + 8);
    ld_vec3(in + 10, &out->position);
    ld_quat(in + 22, &out->rotation);
    out->health = in[38];
    out->armour = in[39];
    split_weapon_byte(in[40], &out->weapon, &out->additional_key);
    out->special_action = in[41];
    ld_vec3(in + 42, &out->velocity);
    ld_vec3(in + 54, &out->surf_offset);
    out->surf_id = ld_le16(in + 66);
    out->anim_id = ld_le16(in + 68);
    out->anim_flags = recd_rec_anim_flags_unpack(ld_le16(in + 70));
}

void recd_rec_vehicle_encode(const recd_rec_vehicle *in, uint8_t out[RECD_REC_VEHICLE_BLOCK_SIZE])
{
    st_le32(out + 0, in->time_ms);
    st_le16(out + 4, in->vehicle_id);
    st_le16(out + 6, (uint16_t)in->left_right);
    st_le16(out + 8, (uint16_t)in->up_down);
    st_le16(out + 10, in->keys);
    st_quat(out + 12, &in->rotation);
    st_vec3(out + 28, &in->position);
    st_vec3(out + 40, &in->velocity);
    st_f32(out + 52, in->vehicle_health);
    out[56] = in->driver_health;
    out[57] = in->driver_armour;
    out[58] = weapon_byte(in->weapon, in->additional_key);
    out[59] = in->siren;
    out[60] = in->landing_gear;
    st_le16(out + 61, in->trailer_id);
    st_le32(out + 63, in->extra.bits);
}

void recd_rec_vehicle_decode(const uint8_t in[RECD_REC_VEHICLE_BLOCK_SIZE], recd_rec_vehicle *out)
{
    out->time_ms = ld_le32(in + 0);
    out->vehicle_id = ld_le16(in + 4);
    out->left_right = s16_from_u16(ld_le16(in + 6));
    out->up_down = s16_from_u16(ld_le16(in + 8));
    out->keys = ld_le16(in + 10);
    ld_quat(in + 12, &out->rotation);
    ld_vec3(in + 28, &out->position);
    ld_vec3(in + 40, &out->velocity);
    out->vehicle_health = ld_f32(in + 52);
    out->driver_health = in[56];
    out->driver_armour = in[57];
    split_weapon_byte(in[58], &out->weapon, &out->additional_key);
    out->siren = in[59];
    out->landing_gear = in[60];
    out->trailer_id = ld_le16(in + 61);
    out->extra.bits = ld_le32(in + 63);
}

void recd_rec_legacy_onfoot_encode(const recd_rec_legacy_onfoot *in,
                                   uint8_t out[RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE])
{
    st_le32(out + 0, in->time_ms);
    st_le16(out + 4, (uint16_t)in->left_right);
    st_le16(out + 6, (uint16_t)in->up_down);
    st_le16(out + 8, in->keys);
    st_vec3(out + 10, &in->position);
    st_f32(out + 22, in->facing_angle_deg);
    out[26] = in->health;
    out[27] = in->armour;
    out[28] = weapon_byte(in->weapon, in->additional_key);
    out[29] = in->special_action;
    st_vec3(out + 30, &in->velocity);
    st_vec3(out + 42, &in->surf_offset);
    st_le16(out + 54, in->surf_id);
}

void recd_rec_legacy_onfoot_decode(const uint8_t in[RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE],
                                   recd_rec_legacy_onfoot *out)
{
    out->time_ms = ld_le32(in + 0);
    out->left_right = s16_from_u16(ld_le16(in + 4));
    out->up_down = s16_from_u16(ld_le16(in + 6));
    out->keys = ld_le16(in + 8);
    ld_vec3(in + 10, &out->position);
    out->facing_angle_deg = ld_f32(in + 22);
    out->health = in[26];
    out->armour = in[27];
    split_weapon_byte(in[28], &out->weapon, &out->additional_key);
    out->special_action = in[29];
    ld_vec3(in + 30, &out->velocity);
    ld_vec3(in + 42, &out->surf_offset);
    out->surf_id = ld_le16(in + 54);
}

void recd_rec_legacy_vehicle_encode(const recd_rec_legacy_vehicle *in,
                                    uint8_t out[RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE])
{
    st_le32(out + 0, in->time_ms);
    st_le16(out + 4, in->vehicle_id);
    st_le16(out + 6, (uint16_t)in->left_right);
    st_le16(out + 8, (uint16_t)in->up_down);
    st_le16(out + 10, in->keys);
    st_vec3(out + 12, &in->roll);
    st_vec3(out + 24, &in->direction);
    st_vec3(out + 36, &in->position);
    st_vec3(out + 48, &in->velocity);
    st_f32(out + 60, in->vehicle_health);
    out[64] = in->driver_health;
    out[65] = in->driver_armour;
    out[66] = weapon_byte(in->weapon, in->additional_key);
    out[67] = in->siren;
    out[68] = in->landing_gear;
    st_le16(out + 69, in->trailer_id);
    st_le32(out + 71, in->extra.bits);
}

void recd_rec_legacy_vehicle_decode(const uint8_t in[RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE],
                                    recd_rec_legacy_vehicle *out)
{
    out->time_ms = ld_le32(in + 0);
    out->vehicle_id = ld_le16(in + 4);
    out->left_right = s16_from_u16(ld_le16(in + 6));
    out->up_down = s16_from_u16(ld_le16(in + 8));
    out->keys = ld_le16(in + 10);
    ld_vec3(in + 12, &out->roll);
    ld_vec3(in + 24, &out->direction);
    ld_vec3(in + 36, &out->position);
    ld_vec3(in + 48, &out->velocity);
    out->vehicle_health = ld_f32(in + 60);
    out->driver_health = in[64];
    out->driver_armour = in[65];
    split_weapon_byte(in[66], &out->weapon, &out->additional_key);
    out->siren = in[67];
    out->landing_gear = in[68];
    out->trailer_id = ld_le16(in + 69);
    out->extra.bits = ld_le32(in + 71);
}

static bool vec3_finite(const recd_vec3f *v) { return isfinite(v->x) && isfinite(v->y) && isfinite(v->z); }

static bool quat_finite(const recd_quat *q)
{
    return isfinite(q->w) && isfinite(q->x) && isfinite(q->y) && isfinite(q->z);
}

static bool weapon_fits(uint8_t weapon, uint8_t additional_key) { return weapon <= 0x3F && additional_key <= 3; }

int recd_rec_onfoot_check(const recd_rec_onfoot *b)
{
    if (!vec3_finite(&b->position) || !quat_finite(&b->rotation) || !vec3_finite(&b->velocity) ||
        !vec3_finite(&b->surf_offset))
        return -EINVAL;
    return weapon_fits(b->weapon, b->additional_key) ? 0 : -EINVAL;
}

int recd_rec_vehicle_check(const recd_rec_vehicle *b)
{
    if (!quat_finite(&b->rotation) || !vec3_finite(&b->position) || !vec3_finite(&b->velocity) ||
        !isfinite(b->vehicle_health))
        return -EINVAL;
    return weapon_fits(b->weapon, b->additional_key) ? 0 : -EINVAL;
}

/* A float is NaN or infinite exactly when its exponent bits are all ones. */
static bool words_finite(const uint8_t *p, size_t nwords)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < nwords; i++)
        bad |= (uint32_t)((ld_le32(p + 4 * i) & 0x7F800000u) == 0x7F800000u);
    return !bad;
}

int recd_rec_fields_check(recd_rec_type type, const uint8_t *fields)
{
    switch (type) {
    case RECD_REC_TYPE_ONFOOT: /* position + rotation at block 10..37, velocity + surf at 42..65 */
        return words_finite(fields + 6, 7) && words_finite(fields + 38, 6) ? 0 : -EINVAL;
    case RECD_REC_TYPE_VEHICLE: /* rotation, position, velocity, vehicle health at block 12..55 */
        return words_finite(fields + 8, 11) ? 0 : -EINVAL;
    default: return -EINVAL;
    }
}

int recd_rec_block_check(recd_rec_type type, const uint8_t *block)
{
    return recd_rec_fields_check(type, block + 4);
}

void recd_rec_header_encode(recd_rec_type type, uint8_t out[RECD_REC_HEADER_SIZE])
{
    st_le32(out, RECD_REC_SIGNATURE);
    st_le32(out + 4, (uint32_t)type);
}
