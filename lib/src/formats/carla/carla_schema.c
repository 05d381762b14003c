/* SPDX-License-Identifier: MIT */
/* The record layouts of CARLA's packets (reference: docs/formats/carla.md) and the walkers that
 * size, convert, print and parse records by them. */
#include "formats/carla/carla_schema.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "base/json_text.h"
#include "base/text.h"

/* A field with its name's length, which the JSON writer copies without a strlen. */
#define FIELD(name, type, sub) {name, sizeof name - 1, type, sub}
#define END {NULL, 0, 0, NULL}

static const carla_field attr_fields[] = {FIELD("type", CF_U8, NULL), FIELD("id", CF_STR, NULL),
                                          FIELD("value", CF_STR, NULL), END};
static const carla_field add_fields[] = {FIELD("id", CF_U32, NULL),
                                         FIELD("actor_type", CF_U8, NULL),
                                         FIELD("location", CF_VEC, NULL),
                                         FIELD("rotation", CF_VEC, NULL),
                                         FIELD("uid", CF_U32, NULL),
                                         FIELD("blueprint", CF_STR, NULL),
                                         FIELD("attributes", CF_LIST16, attr_fields),
                                         END};
static const carla_field del_fields[] = {FIELD("id", CF_U32, NULL), END};
static const carla_field parent_fields[] = {FIELD("id", CF_U32, NULL),
                                            FIELD("parent", CF_U32, NULL), END};
static const carla_field collision_fields[] = {
    FIELD("id", CF_U32, NULL),   FIELD("actor1", CF_U32, NULL), FIELD("actor2", CF_U32, NULL),
    FIELD("hero1", CF_U8, NULL), FIELD("hero2", CF_U8, NULL),   END};
static const carla_field position_fields[] = {FIELD("id", CF_U32, NULL),
                                              FIELD("location", CF_VEC, NULL),
                                              FIELD("rotation", CF_VEC, NULL), END};
static const carla_field light_state_fields[] = {
    FIELD("id", CF_U32, NULL), FIELD("frozen", CF_U8, NULL), FIELD("elapsed", CF_F32, NULL),
    FIELD("state", CF_U8, NULL), END};
static const carla_field anim_vehicle_fields[] = {FIELD("id", CF_U32, NULL),
                                                  FIELD("steering", CF_F32, NULL),
                                                  FIELD("throttle", CF_F32, NULL),
                                                  FIELD("brake", CF_F32, NULL),
                                                  FIELD("handbrake", CF_U8, NULL),
                                                  FIELD("gear", CF_I32, NULL),
                                                  END};
static const carla_field anim_walker_fields[] = {FIELD("id", CF_U32, NULL),
                                                 FIELD("speed", CF_F32, NULL), END};
static const carla_field vehicle_light_fields[] = {FIELD("id", CF_U32, NULL),
                                                   FIELD("state", CF_U32, NULL), END};
static const carla_field scene_light_fields[] = {
    FIELD("id", CF_I32, NULL), FIELD("intensity", CF_F32, NULL), FIELD("r", CF_F32, NULL),
    FIELD("g", CF_F32, NULL),  FIELD("b", CF_F32, NULL),         FIELD("a", CF_F32, NULL),
    FIELD("on", CF_U8, NULL),  FIELD("type", CF_U8, NULL),       END};
static const carla_field kinematics_fields[] = {FIELD("id", CF_U32, NULL),
                                                FIELD("linear_velocity", CF_VEC, NULL),
                                                FIELD("angular_velocity", CF_VEC, NULL), END};
static const carla_field box_fields[] = {FIELD("id", CF_U32, NULL), FIELD("origin", CF_VEC, NULL),
                                         FIELD("extent", CF_VEC, NULL), END};
static const carla_field f64_value[] = {FIELD("value", CF_F64, NULL), END};
static const carla_field u64_value[] = {FIELD("value", CF_U64, NULL), END};
static const carla_field pair_fields[] = {FIELD("x", CF_F32, NULL), FIELD("y", CF_F32, NULL), END};
static const carla_field gear_fields[] = {FIELD("ratio", CF_F32, NULL),
                                          FIELD("down_ratio", CF_F32, NULL),
                                          FIELD("up_ratio", CF_F32, NULL), END};
static const carla_field wheel_physics_fields[] = {FIELD("tire_friction", CF_F32, NULL),
                                                   FIELD("damping_rate", CF_F32, NULL),
                                                   FIELD("max_steer_angle", CF_F32, NULL),
                                                   FIELD("radius", CF_F32, NULL),
                                                   FIELD("max_brake_torque", CF_F32, NULL),
                                                   FIELD("max_handbrake_torque", CF_F32, NULL),
                                                   FIELD("lat_stiff_max_load", CF_F32, NULL),
                                                   FIELD("lat_stiff_value", CF_F32, NULL),
                                                   FIELD("long_stiff_value", CF_F32, NULL),
                                                   FIELD("position_x", CF_F32, NULL),
                                                   FIELD("position_y", CF_F32, NULL),
                                                   FIELD("position_z", CF_F32, NULL),
                                                   END};
static const carla_field physics_fields[] = {
    FIELD("id", CF_U32, NULL),
    FIELD("max_rpm", CF_F32, NULL),
    FIELD("moi", CF_F32, NULL),
    FIELD("damping_rate_full_throttle", CF_F32, NULL),
    FIELD("damping_rate_zero_throttle_clutch_engaged", CF_F32, NULL),
    FIELD("damping_rate_zero_throttle_clutch_disengaged", CF_F32, NULL),
    FIELD("use_gear_autobox", CF_U8, NULL),
    FIELD("clutch_strength", CF_F32, NULL),
    FIELD("final_ratio", CF_F32, NULL),
    FIELD("mass", CF_F32, NULL),
    FIELD("drag_coefficient", CF_F32, NULL),
    FIELD("center_of_mass_x", CF_F32, NULL),
    FIELD("center_of_mass_y", CF_F32, NULL),
    FIELD("center_of_mass_z", CF_F32, NULL),
    FIELD("torque_curve", CF_LIST32, pair_fields),
    FIELD("forward_gears", CF_LIST32, gear_fields),
    FIELD("steering_curve", CF_LIST32, pair_fields),
    FIELD("wheels", CF_LIST32, wheel_physics_fields),
    END};
static const carla_field light_time_fields[] = {
    FIELD("id", CF_U32, NULL), FIELD("green_time", CF_F32, NULL),
    FIELD("yellow_time", CF_F32, NULL), FIELD("red_time", CF_F32, NULL), END};
static const carla_field bone_fields[] = {FIELD("name", CF_STR, NULL),
                                          FIELD("location", CF_VEC, NULL),
                                          FIELD("rotation", CF_VEC, NULL), END};
static const carla_field bones_fields[] = {FIELD("id", CF_U32, NULL),
                                           FIELD("bones", CF_LIST16, bone_fields), END};
static const carla_field wheel_fields[] = {FIELD("location", CF_U8, NULL),
                                           FIELD("steering_angle", CF_F32, NULL),
                                           FIELD("tire_rotation", CF_F32, NULL), END};
static const carla_field wheels_fields[] = {FIELD("id", CF_U32, NULL),
                                            FIELD("wheels", CF_LIST32, wheel_fields), END};
static const carla_field biker_fields[] = {FIELD("id", CF_U32, NULL),
                                           FIELD("forward_speed", CF_F32, NULL),
                                           FIELD("engine_rotation", CF_F32, NULL), END};
static const carla_field door_fields[] = {FIELD("id", CF_U32, NULL), FIELD("doors", CF_U8, NULL),
                                          FIELD("open", CF_U8, NULL), END};
static const carla_field weather_fields[] = {FIELD("cloudiness", CF_F32, NULL),
                                             FIELD("precipitation", CF_F32, NULL),
                                             FIELD("precipitation_deposits", CF_F32, NULL),
                                             FIELD("wind_intensity", CF_F32, NULL),
                                             FIELD("sun_azimuth_angle", CF_F32, NULL),
                                             FIELD("sun_altitude_angle", CF_F32, NULL),
                                             FIELD("fog_density", CF_F32, NULL),
                                             FIELD("fog_distance", CF_F32, NULL),
                                             FIELD("fog_falloff", CF_F32, NULL),
                                             FIELD("wetness", CF_F32, NULL),
                                             FIELD("scattering_intensity", CF_F32, NULL),
                                             FIELD("mie_scattering_scale", CF_F32, NULL),
                                             FIELD("rayleigh_scattering_scale", CF_F32, NULL),
                                             FIELD("dust_storm", CF_F32, NULL),
                                             END};

static const carla_kind_info kinds[RECD_CARLA_KIND_COUNT] = {
    [RECD_CARLA_FRAME_START] = {"", "FrameStart", false, NULL},
    [RECD_CARLA_FRAME_END] = {"", "FrameEnd", false, NULL},
    [RECD_CARLA_EVENT_ADD] = {"add", "EventAdd", true, add_fields},
    [RECD_CARLA_EVENT_DEL] = {"delete", "EventDel", true, del_fields},
    [RECD_CARLA_EVENT_PARENT] = {"parent", "EventParent", true, parent_fields},
    [RECD_CARLA_COLLISION] = {"collision", "Collision", true, collision_fields},
    [RECD_CARLA_POSITION] = {"positions", "Position", true, position_fields},
    [RECD_CARLA_STATE] = {"traffic_lights", "State", true, light_state_fields},
    [RECD_CARLA_ANIM_VEHICLE] = {"vehicle_animations", "AnimVehicle", true, anim_vehicle_fields},
    [RECD_CARLA_ANIM_WALKER] = {"walker_animations", "AnimWalker", true, anim_walker_fields},
    [RECD_CARLA_VEHICLE_LIGHT] = {"vehicle_lights", "VehicleLight", true, vehicle_light_fields},
    [RECD_CARLA_SCENE_LIGHT] = {"scene_lights", "SceneLight", true, scene_light_fields},
    [RECD_CARLA_KINEMATICS] = {"kinematics", "Kinematics", true, kinematics_fields},
    [RECD_CARLA_BOUNDING_BOX] = {"bounding_boxes", "BoundingBox", true, box_fields},
    [RECD_CARLA_PLATFORM_TIME] = {"platform_time", "PlatformTime", false, f64_value},
    [RECD_CARLA_PHYSICS_CONTROL] = {"physics_controls", "PhysicsControl", true, physics_fields},
    [RECD_CARLA_TRAFFIC_LIGHT_TIME] = {"traffic_light_times", "TrafficLightTime", true,
                                       light_time_fields},
    [RECD_CARLA_TRIGGER_VOLUME] = {"trigger_volumes", "TriggerVolume", true, box_fields},
    [RECD_CARLA_FRAME_COUNTER] = {"frame_counter", "FrameCounter", false, u64_value},
    [RECD_CARLA_WALKER_BONES] = {"walker_bones", "WalkerBones", true, bones_fields},
    [RECD_CARLA_VISUAL_TIME] = {"visual_time", "VisualTime", false, f64_value},
    [RECD_CARLA_ANIM_WHEELS] = {"wheel_animations", "AnimVehicleWheels", true, wheels_fields},
    [RECD_CARLA_ANIM_BIKER] = {"biker_animations", "AnimBiker", true, biker_fields},
    [RECD_CARLA_VEHICLE_DOOR] = {"doors", "VehicleDoor", true, door_fields},
    [RECD_CARLA_WEATHER] = {"weather", "Weather", true, weather_fields},
};

const carla_kind_info *carla_kind(unsigned kind, unsigned width)
{
    if (kind >= RECD_CARLA_KIND_COUNT)
        return NULL;
    (void)width; /* UE5's PhysicsControl (compiler-padded wheels) does not parse: kept raw */
    return &kinds[kind];
}

size_t carla_rec_size(unsigned kind, unsigned width, const uint8_t *p, size_t len)
{
    return carla_record_size(carla_kind(kind, width)->fields, width, p, len);
}

const char *recd_carla_kind_name(unsigned kind)
{
    return kind < RECD_CARLA_KIND_COUNT ? kinds[kind].key : "";
}

static size_t scalar_size(uint8_t type, unsigned width)
{
    switch (type) {
    case CF_U8: return 1;
    case CF_U16: return 2;
    case CF_U32:
    case CF_I32:
    case CF_F32: return 4;
    case CF_U64:
    case CF_F64: return 8;
    case CF_VEC: return 3u * width;
    default: return 0;
    }
}

size_t carla_record_size(const carla_field *f, unsigned width, const uint8_t *p, size_t len)
{
    size_t at = 0;
    for (; f->name; f++) {
        size_t s = scalar_size(f->type, width);
        if (s) {
            if (len - at < s)
                return 0;
            at += s;
            continue;
        }
        size_t hdr = f->type == CF_LIST32 ? 4 : 2;
        if (len - at < hdr)
            return 0;
        uint32_t n = hdr == 4 ? ld_le32(p + at) : ld_le16(p + at);
        at += hdr;
        if (f->type == CF_STR) {
            if (len - at < n)
                return 0;
            at += n;
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            size_t r = carla_record_size(f->sub, width, p + at, len - at);
            if (r == 0)
                return 0;
            at += r;
        }
    }
    return at;
}

size_t carla_fixed_size(const carla_field *f, unsigned width)
{
    size_t at = 0;
    for (; f && f->name; f++) {
        size_t s = scalar_size(f->type, width);
        if (s == 0)
            return 0; /* a string or a list: the size depends on the bytes */
        at += s;
    }
    return at;
}

bool carla_records_fill(const carla_field *f, unsigned width, uint32_t count, const uint8_t *p,
                        size_t len)
{
    size_t fixed = carla_fixed_size(f, width);
    if (fixed) /* most kinds: one multiplication instead of a walk over every record */
        return (uint64_t)count * fixed == len;
    size_t at = 0;
    for (uint32_t i = 0; i < count; i++) {
        size_t r = carla_record_size(f, width, p + at, len - at);
        if (r == 0)
            return false;
        at += r;
    }
    return at == len;
}

/* Each kind's fixed record size in width 4 (index 0) and 8 (index 1), written out by hand from
 * the layouts above so that a decoded packet pays no pthread_once for it; test_carla holds it to
 * carla_fixed_size() of every kind. V(w) is a vector of width w. */
#define V(w) (3 * (w))
#define FIXED_SIZES(w)                                                                             \
    {                                                                                              \
        [RECD_CARLA_EVENT_DEL] = 4, [RECD_CARLA_EVENT_PARENT] = 8,                                 \
        [RECD_CARLA_COLLISION] = 14, [RECD_CARLA_POSITION] = 4 + 2 * V(w),                         \
        [RECD_CARLA_STATE] = 10, [RECD_CARLA_ANIM_VEHICLE] = 21, [RECD_CARLA_ANIM_WALKER] = 8,     \
        [RECD_CARLA_VEHICLE_LIGHT] = 8, [RECD_CARLA_SCENE_LIGHT] = 26,                             \
        [RECD_CARLA_KINEMATICS] = 4 + 2 * V(w), [RECD_CARLA_BOUNDING_BOX] = 4 + 2 * V(w),          \
        [RECD_CARLA_TRAFFIC_LIGHT_TIME] = 16, [RECD_CARLA_TRIGGER_VOLUME] = 4 + 2 * V(w),          \
        [RECD_CARLA_ANIM_BIKER] = 12, [RECD_CARLA_VEHICLE_DOOR] = 6, [RECD_CARLA_WEATHER] = 56,    \
    }
static const uint16_t fixed_sizes[2][RECD_CARLA_KIND_COUNT] = {FIXED_SIZES(4), FIXED_SIZES(8)};
#undef FIXED_SIZES
#undef V

const uint16_t *carla_kind_fixed_sizes(unsigned width)
{
    return fixed_sizes[width == 8];
}

bool carla_kind_records_fill(unsigned kind, unsigned width, uint32_t count, const uint8_t *p,
                             size_t len)
{
    size_t fixed = carla_kind_fixed_sizes(width)[kind];
    if (fixed)
        return (uint64_t)count * fixed == len;
    return carla_records_fill(carla_kind(kind, width)->fields, width, count, p, len);
}

/* f32 <-> f64 bits that keep a NaN's payload and signalling bit: a float conversion would quiet a
 * signalling NaN, and the log would not come back byte for byte. */
static uint64_t widen_bits(uint32_t b)
{
    if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu))
        return (uint64_t)(b >> 31) << 63 | 0x7FF0000000000000ull | (uint64_t)(b & 0x007FFFFFu) << 29;
    return f64_to_bits((double)f32_from_bits(b));
}

static uint32_t narrow_bits(uint64_t b)
{
    uint64_t mant = b & 0x000FFFFFFFFFFFFFull;
    if ((b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && mant && (mant >> 29))
        return (uint32_t)(b >> 63) << 31 | 0x7F800000u | (uint32_t)(mant >> 29);
    return f32_to_bits((float)f64_from_bits(b));
}

int carla_record_convert(const carla_field *f, unsigned wi, unsigned wo, const uint8_t *p,
                         size_t len, recd_buf *out, size_t *used)
{
    size_t at = 0;
    int rc = 0;
    for (; f->name && rc == 0; f++) {
        if (f->type == CF_VEC) {
            if (len - at < 3u * wi)
                return -EBADMSG;
            for (int k = 0; k < 3 && rc == 0; k++) {
                uint64_t d = wi == 4 ? widen_bits(ld_le32(p + at)) : ld_le64(p + at);
                uint8_t b[8];
                if (wo == 4)
                    st_le32(b, narrow_bits(d));
                else
                    st_le64(b, d);
                rc = recd_buf_append(out, b, wo);
                at += wi;
            }
            continue;
        }
        size_t s = scalar_size(f->type, wi);
        if (s) {
            if (len - at < s)
                return -EBADMSG;
            rc = recd_buf_append(out, p + at, s);
            at += s;
            continue;
        }
        size_t hdr = f->type == CF_LIST32 ? 4 : 2;
        if (len - at < hdr)
            return -EBADMSG;
        uint32_t n = hdr == 4 ? ld_le32(p + at) : ld_le16(p + at);
        rc = recd_buf_append(out, p + at, hdr);
        at += hdr;
        if (f->type == CF_STR) {
            if (len - at < n)
                return -EBADMSG;
            if (rc == 0)
                rc = recd_buf_append(out, p + at, n);
            at += n;
            continue;
        }
        for (uint32_t i = 0; i < n && rc == 0; i++) {
            size_t u = 0;
            rc = carla_record_convert(f->sub, wi, wo, p + at, len - at, out, &u);
            at += u;
        }
    }
    *used = at;
    return rc;
}

static int put_nonfinite(recd_buf *out, bool neg, bool nan, uint64_t bits, bool is_default,
                         int hexdigits)
{
    char t[48];
    if (!nan)
        snprintf(t, sizeof t, "\"%sinf\"", neg ? "-" : "");
    else if (is_default)
        snprintf(t, sizeof t, "\"%snan\"", neg ? "-" : "");
    else
        snprintf(t, sizeof t, "\"nan:0x%0*" PRIx64 "\"", hexdigits, bits);
    return text_puts(out, t);
}

static int carla_put_f32(recd_buf *out, float f)
{
    if (isfinite(f))
        return text_put_f32(out, f);
    uint32_t b = f32_to_bits(f);
    return put_nonfinite(out, b >> 31, isnan(f), b, (b & 0x7FFFFFFFu) == 0x7FC00000u, 8);
}

int carla_put_f64(recd_buf *out, double d)
{
    if (isfinite(d))
        return text_put_f64(out, d);
    uint64_t b = f64_to_bits(d);
    return put_nonfinite(out, b >> 63, isnan(d), b,
                         (b & 0x7FFFFFFFFFFFFFFFull) == 0x7FF8000000000000ull, 16);
}

/* Reads a number, or the non-finite strings carla_put_* write ("nan:0x" + 8 digits = f32 bits,
 * + 16 digits = f64 bits). */
static bool get_number(const json_t *j, double *d, bool *f32bits, uint32_t *b32)
{
    *f32bits = false;
    if (json_is_number(j)) {
        *d = json_number_value(j);
        return true;
    }
    if (!json_is_string(j))
        return false;
    const char *s = json_string_value(j);
    if (strcmp(s, "inf") == 0 || strcmp(s, "-inf") == 0) {
        *d = s[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    if (strcmp(s, "nan") == 0 || strcmp(s, "-nan") == 0) {
        *d = f64_from_bits(s[0] == '-' ? 0xFFF8000000000000ull : 0x7FF8000000000000ull);
        return true;
    }
    if (strncmp(s, "nan:0x", 6) != 0)
        return false;
    size_t n = strlen(s + 6);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[6 + i];
        int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (x < 0)
            return false;
        v = v << 4 | (unsigned)x;
    }
    if (n == 8) {
        *f32bits = true;
        *b32 = (uint32_t)v;
        *d = f64_from_bits(widen_bits((uint32_t)v));
        return isnan(*d);
    }
    *d = f64_from_bits(v);
    return n == 16 && isnan(*d);
}

bool carla_get_f64(const json_t *j, double *d)
{
    bool f32bits;
    uint32_t b;
    return get_number(j, d, &f32bits, &b);
}

static bool carla_get_f32(const json_t *j, float *f)
{
    double d;
    bool f32bits;
    uint32_t b;
    if (!get_number(j, &d, &f32bits, &b))
        return false;
    if (f32bits) {
        *f = f32_from_bits(b);
        return true;
    }
    if (isnan(d)) {
        *f = f32_from_bits(narrow_bits(f64_to_bits(d)));
        return true;
    }
    if (isfinite(d) && fabs(d) > 3.4028234663852886e38)
        return false;
    *f = (float)d;
    return true;
}

/* [,]"name": in one append. */
static int put_key(recd_buf *out, bool comma, const carla_field *f)
{
    size_t n = f->name_len;
    const char *name = f->name;
    int rc = recd_buf_reserve(out, n + 4);
    if (rc < 0)
        return rc;
    char *q = (char *)out->data + out->len;
    if (comma)
        *q++ = ',';
    *q++ = '"';
    memcpy(q, name, n);
    q[n] = '"';
    q[n + 1] = ':';
    out->len += n + 3 + comma;
    return 0;
}

int carla_record_to_json(const carla_field *f, unsigned width, const uint8_t *p, size_t len,
                         recd_buf *out, size_t *used)
{
    size_t at = 0;
    int rc = text_putc(out, '{');
    for (bool first = true; f->name && rc == 0; f++, first = false) {
        rc = put_key(out, !first, f);
        size_t s = scalar_size(f->type, width);
        if (s && len - at < s)
            return -EBADMSG;
        switch (f->type) {
        case CF_U8: rc = rc ? rc : text_put_u64(out, p[at]); break;
        case CF_U16: rc = rc ? rc : text_put_u64(out, ld_le16(p + at)); break;
        case CF_U32: rc = rc ? rc : text_put_u64(out, ld_le32(p + at)); break;
        case CF_I32: rc = rc ? rc : text_put_i64(out, (int32_t)ld_le32(p + at)); break;
        case CF_U64: rc = rc ? rc : text_put_u64(out, ld_le64(p + at)); break;
        case CF_F32: rc = rc ? rc : carla_put_f32(out, f32_from_bits(ld_le32(p + at))); break;
        case CF_F64: rc = rc ? rc : carla_put_f64(out, f64_from_bits(ld_le64(p + at))); break;
        case CF_VEC:
            for (int k = 0; k < 3 && rc == 0; k++) {
                rc = text_putc(out, k ? ',' : '[');
                const uint8_t *q = p + at + (size_t)k * width;
                if (rc == 0)
                    rc = width == 4 ? carla_put_f32(out, f32_from_bits(ld_le32(q)))
                                    : carla_put_f64(out, f64_from_bits(ld_le64(q)));
            }
            if (rc == 0)
                rc = text_putc(out, ']');
            break;
        default: break;
        }
        if (s) {
            at += s;
            continue;
        }
        size_t hdr = f->type == CF_LIST32 ? 4 : 2;
        if (len - at < hdr)
            return -EBADMSG;
        uint32_t n = hdr == 4 ? ld_le32(p + at) : ld_le16(p + at);
        at += hdr;
        if (f->type == CF_STR) {
            if (len - at < n)
                return -EBADMSG;
            if (rc == 0)
                rc = text_put_json_string(out, (const char *)p + at, n);
            at += n;
            continue;
        }
        if (rc == 0)
            rc = text_putc(out, '[');
        for (uint32_t i = 0; i < n && rc == 0; i++) {
            size_t u = 0;
            if (i)
                rc = text_putc(out, ',');
            if (rc == 0)
                rc = carla_record_to_json(f->sub, width, p + at, len - at, out, &u);
            at += u;
        }
        if (rc == 0)
            rc = text_putc(out, ']');
    }
    if (rc == 0)
        rc = text_putc(out, '}');
    *used = at;
    return rc;
}

static bool get_uint(const json_t *j, uint64_t max, uint64_t *v)
{
    if (!json_is_integer(j) || json_integer_value(j) < 0 || (uint64_t)json_integer_value(j) > max)
        return false;
    *v = (uint64_t)json_integer_value(j);
    return true;
}

int carla_record_from_json(const carla_field *f, const json_t *j, recd_buf *out, char *why,
                           size_t whylen)
{
    if (!json_is_object(j)) {
        snprintf(why, whylen, ": expected an object, got %s", json_text_type_name(j));
        return -EBADMSG;
    }
    size_t nfields = 0;
    for (const carla_field *g = f; g->name; g++)
        nfields++;
    if (json_object_size(j) != nfields) {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)j, key, val)
        {
            bool known = false;
            for (const carla_field *g = f; g->name; g++)
                known |= strcmp(g->name, key) == 0;
            if (!known) {
                char safe[48];
                text_safe_excerpt(key, strlen(key), safe);
                snprintf(why, whylen, ": unknown key \"%s\"", safe);
                return -EBADMSG;
            }
        }
    }
    int rc = 0;
    for (; f->name && rc == 0; f++) {
        json_t *v = json_object_get(j, f->name);
        if (!v) {
            snprintf(why, whylen, ": missing key \"%s\"", f->name);
            return -EBADMSG;
        }
        uint8_t b[8];
        uint64_t u = 0;
        bool ok = true;
        float fv = 0.0f; /* set on every path; -O3 cannot see it through carla_get_f32 */
        double dv = 0.0;
        switch (f->type) {
        case CF_U8: ok = get_uint(v, 0xFF, &u); b[0] = (uint8_t)u; if (ok) rc = recd_buf_append(out, b, 1); break;
        case CF_U16: ok = get_uint(v, 0xFFFF, &u); st_le16(b, (uint16_t)u); if (ok) rc = recd_buf_append(out, b, 2); break;
        case CF_U32: ok = get_uint(v, 0xFFFFFFFFu, &u); st_le32(b, (uint32_t)u); if (ok) rc = recd_buf_append(out, b, 4); break;
        case CF_U64: ok = get_uint(v, INT64_MAX, &u); st_le64(b, u); if (ok) rc = recd_buf_append(out, b, 8); break;
        case CF_I32:
            ok = json_is_integer(v) && json_integer_value(v) >= INT32_MIN && json_integer_value(v) <= INT32_MAX;
            st_le32(b, (uint32_t)(int32_t)json_integer_value(v));
            if (ok)
                rc = recd_buf_append(out, b, 4);
            break;
        case CF_F32: ok = carla_get_f32(v, &fv); st_le32(b, f32_to_bits(fv)); if (ok) rc = recd_buf_append(out, b, 4); break;
        case CF_F64: ok = carla_get_f64(v, &dv); st_le64(b, f64_to_bits(dv)); if (ok) rc = recd_buf_append(out, b, 8); break;
        case CF_VEC:
            ok = json_is_array(v) && json_array_size(v) == 3;
            for (size_t k = 0; ok && k < 3 && rc == 0; k++) {
                ok = carla_get_f64(json_array_get(v, k), &dv);
                st_le64(b, f64_to_bits(dv));
                if (ok)
                    rc = recd_buf_append(out, b, 8);
            }
            break;
        case CF_STR:
            ok = json_is_string(v) && json_string_length(v) <= 0xFFFF;
            if (ok) {
                st_le16(b, (uint16_t)json_string_length(v));
                rc = recd_buf_append(out, b, 2);
                if (rc == 0)
                    rc = recd_buf_append(out, json_string_value(v), json_string_length(v));
            }
            break;
        default: {
            uint32_t max = f->type == CF_LIST16 ? 0xFFFFu : 0xFFFFFFFFu;
            ok = json_is_array(v) && json_array_size(v) <= max;
            if (!ok)
                break;
            size_t n = json_array_size(v);
            if (f->type == CF_LIST16) {
                st_le16(b, (uint16_t)n);
                rc = recd_buf_append(out, b, 2);
            } else {
                st_le32(b, (uint32_t)n);
                rc = recd_buf_append(out, b, 4);
            }
            for (size_t i = 0; i < n && rc == 0; i++) {
                char sub[160];
                rc = carla_record_from_json(f->sub, json_array_get(v, i), out, sub, sizeof sub);
                if (rc == -EBADMSG) {
                    snprintf(why, whylen, ".%s[%zu]%s", f->name, i, sub);
                    return rc;
                }
            }
        }
        }
        if (!ok) {
            snprintf(why, whylen, ".%s: %s is not a valid %s", f->name, json_text_type_name(v),
                     f->type == CF_VEC ? "[x, y, z]" : f->type == CF_STR ? "string (<= 65535 bytes)"
                     : f->type == CF_F32 ? "f32" : f->type == CF_F64 ? "f64" : f->type >= CF_LIST16 ? "list" : "integer of its range");
            return -EBADMSG;
        }
    }
    return rc;
}
