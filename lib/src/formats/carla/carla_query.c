/* SPDX-License-Identifier: MIT */
/* CARLA's three recorder queries (CarlaRecorderQuery: file info, collisions, blocked actors)
 * computed from the file, as text byte for byte or as JSON. Record fields are read at their
 * offsets in the layouts of carla_schema.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bytes.h"
#include "formats/carla/carla_reader.h"
#include "formats/carla/carla_schema.h"
#include "message/msg_fields.h"

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int out_printf(recd_buf *out, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n < sizeof small)
        return recd_buf_append(out, small, (size_t)n);
    int rc = recd_buf_reserve(out, (size_t)n + 1);
    if (rc < 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf((char *)out->data + out->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    out->len += (size_t)n;
    return 0;
}

static double f32at(const uint8_t *p) { return (double)f32_from_bits(ld_le32(p)); }
static double vat(const uint8_t *p, unsigned w, int k)
{
    return w == 4 ? f32at(p + 4 * k) : f64_from_bits(ld_le64(p + 8 * k));
}

static int open_reader(carla_reader *r, const uint8_t *buf, size_t len, bool json, recd_buf *out,
                       char *err, size_t errlen)
{
    if (carla_reader_init(r, buf, len, NULL) == 0)
        return 0;
    snprintf(err, errlen, "%s", r->err);
    if (!json)
        return recd_buf_append(out, "File is not a CARLA recorder\n", 29) < 0 ? -ENOMEM : 1;
    return -EBADMSG;
}

/* Version, Map, Date and the blank line every query starts with. */
static int put_header(const carla_reader *r, recd_buf *out)
{
    time_t t = (time_t)r->hdr.date;
    struct tm tm;
    char date[64] = "";
    if (localtime_r(&t, &tm))
        strftime(date, sizeof date, "%m/%d/%y %H:%M:%S", &tm);
    int rc = out_printf(out, "Version: %u\nMap: ", r->hdr.version);
    if (rc == 0)
        rc = recd_buf_append(out, r->hdr.map, r->hdr.map_len);
    return rc == 0 ? out_printf(out, "\nDate: %s\n\n", date) : rc;
}

static int put_json_header(const carla_reader *r, recd_buf *out)
{
    int rc = out_printf(out, "{\"version\":%u,\"map\":", r->hdr.version);
    if (rc == 0)
        rc = msg_json_append_string(out, (const char *)r->hdr.map, r->hdr.map_len);
    if (rc == 0)
        rc = out_printf(out, ",\"date\":%" PRId64 ",\"ids\":\"%s\",\"width\":\"%s\"", r->hdr.date,
                        recd_carla_ids_name(r->ids), r->width == 8 ? "f64" : "f32");
    return rc;
}

static int put_vec(recd_buf *out, const uint8_t *p, unsigned w)
{
    return out_printf(out, "(%g, %g, %g)", vat(p, w, 0), vat(p, w, 1), vat(p, w, 2));
}

static size_t rec_size(unsigned kind, unsigned w, const uint8_t *p, size_t len)
{
    return carla_record_size(carla_kind(kind, w)->fields, w, p, len);
}

static int put_event_text(recd_buf *out, const recd_carla_packet *p, unsigned w)
{
    int rc = 0;
    size_t at = 0;
    for (uint32_t i = 0; i < p->count && rc == 0; i++) {
        const uint8_t *q = p->data + at;
        size_t n = rec_size(p->kind, w, q, p->len - at);
        at += n;
        switch (p->kind) {
        case RECD_CARLA_EVENT_ADD: {
            size_t s = 4 + 1 + 6u * w + 4;
            uint16_t bl = ld_le16(q + s);
            rc = out_printf(out, " Create %" PRIu32 ": ", ld_le32(q));
            if (rc == 0)
                rc = recd_buf_append(out, q + s + 2, bl);
            if (rc == 0)
                rc = out_printf(out, " (%u) at ", q[4]);
            if (rc == 0)
                rc = put_vec(out, q + 5, w);
            if (rc == 0)
                rc = recd_buf_append(out, "\n", 1);
            size_t a = s + 2 + bl;
            uint16_t na = ld_le16(q + a);
            a += 2;
            for (uint16_t k = 0; k < na && rc == 0; k++) {
                a += 1;
                uint16_t il = ld_le16(q + a);
                const uint8_t *id = q + a + 2;
                a += 2u + il;
                uint16_t vl = ld_le16(q + a);
                const uint8_t *v = q + a + 2;
                a += 2u + vl;
                rc = recd_buf_append(out, "  ", 2);
                if (rc == 0)
                    rc = recd_buf_append(out, id, il);
                if (rc == 0)
                    rc = recd_buf_append(out, " = ", 3);
                if (rc == 0)
                    rc = recd_buf_append(out, v, vl);
                if (rc == 0)
                    rc = recd_buf_append(out, "\n", 1);
            }
            break;
        }
        case RECD_CARLA_EVENT_DEL: rc = out_printf(out, " Destroy %" PRIu32 "\n", ld_le32(q)); break;
        case RECD_CARLA_EVENT_PARENT:
            rc = out_printf(out, " Parenting %" PRIu32 " with %" PRIu32 " (parent)\n", ld_le32(q),
                            ld_le32(q + 4));
            break;
        case RECD_CARLA_COLLISION:
            rc = out_printf(out, " Collision id %" PRIu32 " between %" PRIu32 "%s with %" PRIu32 "%s\n",
                            ld_le32(q), ld_le32(q + 4), q[12] ? " (hero) " : "", ld_le32(q + 8),
                            q[13] ? " (hero) " : "");
            break;
        default: break;
        }
    }
    return rc;
}

static const char *const light_names[] = {"Position", "LowBeam",  "HighBeam", "Brake",
                                          "RightBlinker", "LeftBlinker", "Reverse", "Interior",
                                          "Fog", "Special1", "Special2"};
static const unsigned light_bits[] = {0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x100, 0x80, 0x200, 0x400};
static const char *const door_names[] = {" Front Left ", " Front Right ", " Rear Left ",
                                         " Rear Right ", " Hood ", " Trunk ", " All "};

/* Physics control (UE4 layout): CARLA prints the fields it read, and gear_switch_time, which the
 * file does not store, as 0. */
static int put_physics(recd_buf *out, const uint8_t *q)
{
    int rc = out_printf(out,
                        "  Id: %" PRIu32 "\n   max_rpm = %g\n   MOI = %g\n   damping_rate_full_throttle = %g\n"
                        "   damping_rate_zero_throttle_clutch_engaged = %g\n"
                        "   damping_rate_zero_throttle_clutch_disengaged = %g\n"
                        "   use_gear_auto_box = %s\n   gear_switch_time = 0\n   clutch_strength = %g\n"
                        "   final_ratio = %g\n   mass = %g\n   drag_coefficient = %g\n"
                        "   center_of_mass = (%g, %g, %g)\n",
                        ld_le32(q), f32at(q + 4), f32at(q + 8), f32at(q + 12), f32at(q + 16),
                        f32at(q + 20), q[24] ? "true" : "false", f32at(q + 25), f32at(q + 29),
                        f32at(q + 33), f32at(q + 37), f32at(q + 41), f32at(q + 45), f32at(q + 49));
    size_t a = 53;
    uint32_t n = ld_le32(q + a);
    a += 4;
    if (rc == 0)
        rc = out_printf(out, "   torque_curve =");
    for (uint32_t i = 0; i < n && rc == 0; i++, a += 8)
        rc = out_printf(out, " (%g, %g)", f32at(q + a), f32at(q + a + 4));
    uint32_t ng = ld_le32(q + a);
    const uint8_t *gears = q + a + 4;
    a += 4 + 12u * ng;
    n = ld_le32(q + a);
    a += 4;
    if (rc == 0)
        rc = out_printf(out, "\n   steering_curve =");
    for (uint32_t i = 0; i < n && rc == 0; i++, a += 8)
        rc = out_printf(out, " (%g, %g)", f32at(q + a), f32at(q + a + 4));
    if (rc == 0)
        rc = out_printf(out, "\n   forward_gears:\n");
    for (uint32_t i = 0; i < ng && rc == 0; i++)
        rc = out_printf(out, "    gear %u: ratio %g down_ratio %g up_ratio %g\n", i,
                        f32at(gears + 12 * i), f32at(gears + 12 * i + 4), f32at(gears + 12 * i + 8));
    n = ld_le32(q + a);
    a += 4;
    if (rc == 0)
        rc = out_printf(out, "   wheels:\n");
    for (uint32_t i = 0; i < n && rc == 0; i++, a += 48) {
        const uint8_t *w = q + a;
        rc = out_printf(out, "    wheel %u: tire_friction %g damping_rate %g max_steer_angle %g radius %g "
                        "max_brake_torque %g max_handbrake_torque %g position (%g, %g, %g)\n",
                        i, f32at(w), f32at(w + 4), f32at(w + 8), f32at(w + 12), f32at(w + 16),
                        f32at(w + 20), f32at(w + 36), f32at(w + 40), f32at(w + 44));
    }
    return rc;
}

static int put_state_text(recd_buf *out, const recd_carla_packet *p, unsigned w)
{
    static const char *const titles[RECD_CARLA_KIND_COUNT] = {
        [RECD_CARLA_POSITION] = " Positions: ",
        [RECD_CARLA_STATE] = " State traffic lights: ",
        [RECD_CARLA_ANIM_VEHICLE] = " Vehicle animations: ",
        [RECD_CARLA_ANIM_WALKER] = " Walker animations: ",
        [RECD_CARLA_VEHICLE_DOOR] = " Vehicle door animations: ",
        [RECD_CARLA_VEHICLE_LIGHT] = " Vehicle light animations: ",
        [RECD_CARLA_SCENE_LIGHT] = " Scene light changes: ",
        [RECD_CARLA_KINEMATICS] = " Dynamic actors: ",
        [RECD_CARLA_BOUNDING_BOX] = " Actor bounding boxes: ",
        [RECD_CARLA_TRIGGER_VOLUME] = " Actor trigger volumes: ",
        [RECD_CARLA_PHYSICS_CONTROL] = " Physics Control events: ",
        [RECD_CARLA_TRAFFIC_LIGHT_TIME] = " Traffic Light time events: ",
        [RECD_CARLA_WALKER_BONES] = " Walkers Bones: ",
    };
    if (p->kind == RECD_CARLA_PLATFORM_TIME)
        return out_printf(out, " Current platform time: %g\n", f64_from_bits(ld_le64(p->data)));
    if (p->kind >= RECD_CARLA_KIND_COUNT || !titles[p->kind])
        return 0; /* VisualTime, FrameCounter, wheels, biker, weather: CARLA prints nothing */
    int rc = out_printf(out, "%s%" PRIu32 "\n", titles[p->kind], p->count);
    size_t at = 0;
    for (uint32_t i = 0; i < p->count && rc == 0; i++) {
        const uint8_t *q = p->data + at;
        at += rec_size(p->kind, w, q, p->len - at);
        uint32_t id = ld_le32(q);
        switch (p->kind) {
        case RECD_CARLA_POSITION:
            rc = out_printf(out, "  Id: %" PRIu32 " Location: ", id);
            if (rc == 0)
                rc = put_vec(out, q + 4, w);
            if (rc == 0)
                rc = out_printf(out, " Rotation: ");
            if (rc == 0)
                rc = put_vec(out, q + 4 + 3 * w, w);
            if (rc == 0)
                rc = out_printf(out, "\n");
            break;
        case RECD_CARLA_STATE:
            rc = out_printf(out, "  Id: %" PRIu32 " state: %c frozen: %u elapsedTime: %g\n", id,
                            (char)('0' + q[9]), q[4], f32at(q + 5));
            break;
        case RECD_CARLA_ANIM_VEHICLE:
            rc = out_printf(out, "  Id: %" PRIu32 " Steering: %g Throttle: %g Brake: %g Handbrake: %u Gear: %" PRId32 "\n",
                            id, f32at(q + 4), f32at(q + 8), f32at(q + 12), q[16], (int32_t)ld_le32(q + 17));
            break;
        case RECD_CARLA_ANIM_WALKER:
            rc = out_printf(out, "  Id: %" PRIu32 " speed: %g\n", id, f32at(q + 4));
            break;
        case RECD_CARLA_VEHICLE_DOOR:
            rc = out_printf(out, "  Id: %" PRIu32 "\n  Doors opened: %s\n", id,
                            q[4] < 7 ? door_names[q[4]] : "");
            break;
        case RECD_CARLA_VEHICLE_LIGHT: {
            uint32_t st = ld_le32(q + 4);
            rc = out_printf(out, "  Id: %" PRIu32, id);
            bool any = false;
            for (size_t k = 0; k < 11 && rc == 0; k++)
                if (st & light_bits[k]) {
                    rc = out_printf(out, " %s", light_names[k]);
                    any = true;
                }
            if (rc == 0)
                rc = out_printf(out, "%s\n", any ? "" : " None");
            break;
        }
        case RECD_CARLA_SCENE_LIGHT:
            rc = out_printf(out, "  Id: %" PRId32 " enabled: %s intensity: %g RGB_color: (%g, %g, %g)\n",
                            (int32_t)id, q[24] ? "True" : "False", f32at(q + 4), f32at(q + 8),
                            f32at(q + 12), f32at(q + 16));
            break;
        case RECD_CARLA_KINEMATICS:
        case RECD_CARLA_BOUNDING_BOX:
        case RECD_CARLA_TRIGGER_VOLUME: {
            bool kin = p->kind == RECD_CARLA_KINEMATICS;
            rc = out_printf(out, "  Id: %" PRIu32 " %s: ", id, kin ? "linear_velocity" : "origin");
            if (rc == 0)
                rc = put_vec(out, q + 4, w);
            if (rc == 0)
                rc = out_printf(out, " %s: ", kin ? "angular_velocity" : "extension");
            if (rc == 0)
                rc = put_vec(out, q + 4 + 3 * w, w);
            if (rc == 0)
                rc = out_printf(out, "\n");
            break;
        }
        case RECD_CARLA_PHYSICS_CONTROL: rc = put_physics(out, q); break;
        case RECD_CARLA_TRAFFIC_LIGHT_TIME:
            rc = out_printf(out, "  Id: %" PRIu32 " green_time: %g yellow_time: %g red_time: %g\n", id,
                            f32at(q + 4), f32at(q + 8), f32at(q + 12));
            break;
        case RECD_CARLA_WALKER_BONES: {
            rc = out_printf(out, "  Id: %" PRIu32 "\n", id);
            uint16_t nb = ld_le16(q + 4);
            size_t a = 6;
            for (uint16_t k = 0; k < nb && rc == 0; k++) {
                uint16_t nl = ld_le16(q + a);
                const uint8_t *name = q + a + 2;
                a += 2u + nl;
                rc = out_printf(out, "     Bone: \"");
                if (rc == 0)
                    rc = recd_buf_append(out, name, nl);
                if (rc == 0)
                    rc = out_printf(out, "\" relative: Loc");
                if (rc == 0)
                    rc = put_vec(out, q + a, w);
                if (rc == 0)
                    rc = out_printf(out, " Rot");
                if (rc == 0)
                    rc = put_vec(out, q + a + 3 * w, w);
                if (rc == 0)
                    rc = out_printf(out, "\n");
                a += 6u * w;
            }
            break;
        }
        default: break;
        }
    }
    if (rc == 0 && p->kind == RECD_CARLA_WALKER_BONES)
        rc = out_printf(out, "\n");
    return rc;
}

static bool is_event(const recd_carla_packet *p)
{
    return !p->raw && p->kind >= RECD_CARLA_EVENT_ADD && p->kind <= RECD_CARLA_COLLISION;
}

/* One JSON object per record of p, appended to out after "sep". */
static int put_records_json(recd_buf *out, const recd_carla_packet *p, unsigned w, bool *first,
                            uint64_t frame, double elapsed, bool with_kind)
{
    size_t at = 0;
    int rc = 0;
    const carla_field *fields = carla_kind(p->kind, w)->fields;
    for (uint32_t i = 0; i < p->count && rc == 0; i++) {
        size_t used = 0;
        rc = out_printf(out, "%s{\"frame\":%" PRIu64 ",\"elapsed\":", *first ? "" : ",", frame);
        *first = false;
        if (rc == 0)
            rc = carla_put_f64(out, elapsed);
        if (rc == 0 && with_kind)
            rc = out_printf(out, ",\"kind\":\"%s\"", recd_carla_kind_name(p->kind));
        if (rc == 0)
            rc = out_printf(out, ",\"record\":");
        if (rc == 0)
            rc = carla_record_to_json(fields, w, p->data + at, p->len - at, out, &used);
        if (rc == 0)
            rc = out_printf(out, "}");
        at += used;
    }
    return rc;
}

int recd_carla_info(const uint8_t *buf, size_t len, bool show_all, bool json, recd_buf *out,
                    char *err, size_t errlen)
{
    carla_reader r;
    int rc = open_reader(&r, buf, len, json, out, err, errlen);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    rc = json ? put_json_header(&r, out) : put_header(&r, out);
    if (rc == 0 && json)
        rc = out_printf(out, ",\"%s\":[", show_all ? "records" : "events");
    recd_carla_frame f;
    size_t at;
    uint64_t last_id = 0;
    double last_elapsed = 0;
    bool first = true;
    int more;
    while (rc == 0 && (more = carla_reader_next(&r, &f, &at)) == 1) {
        last_id = f.id;
        last_elapsed = f.elapsed;
        bool printed = false;
        if (show_all && !json) {
            rc = out_printf(out, "Frame %" PRIu64 " at %g seconds\n", f.id, f.elapsed);
            printed = true;
        }
        for (size_t i = 0; i < f.count && rc == 0; i++) {
            const recd_carla_packet *p = &f.packets[i];
            if (p->raw || (!show_all && !is_event(p)))
                continue;
            if (json) {
                if (carla_kind(p->kind, r.width)->has_count)
                    rc = put_records_json(out, p, r.width, &first, f.id, f.elapsed, true);
                continue;
            }
            if (p->count && !printed) {
                rc = out_printf(out, "Frame %" PRIu64 " at %g seconds\n", f.id, f.elapsed);
                printed = true;
            }
            if (rc == 0)
                rc = is_event(p) ? put_event_text(out, p, r.width) : put_state_text(out, p, r.width);
        }
    }
    if (rc == 0 && more < 0 && json)
        rc = out_printf(out, "],\"error\":{\"offset\":%" PRIu64 ",\"message\":", r.err_offset);
    if (rc == 0 && more < 0 && json)
        rc = msg_json_append_string(out, r.err, strlen(r.err));
    if (rc == 0 && json)
        rc = out_printf(out, "%s,\"frames\":%" PRIu64 ",\"duration\":", more < 0 ? "}" : "]", last_id);
    if (rc == 0 && json)
        rc = carla_put_f64(out, last_elapsed);
    if (rc == 0)
        rc = json ? out_printf(out, "}\n")
                  : out_printf(out, "\nFrames: %" PRIu64 "\nDuration: %g seconds\n", last_id, last_elapsed);
    carla_reader_free(&r);
    return rc;
}

/* ---- collisions ------------------------------------------------------------------------------ */

typedef struct actor_name {
    uint32_t id;
    uint8_t type;
    const uint8_t *name;
    uint16_t name_len;
} actor_name;

typedef struct actor_map {
    actor_name *a;
    size_t n, cap;
} actor_map;

static actor_name *actor_find(actor_map *m, uint32_t id)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->a[i].id == id)
            return &m->a[i];
    return NULL;
}

static int actor_set(actor_map *m, const actor_name *a)
{
    actor_name *e = actor_find(m, a->id);
    if (e) {
        *e = *a;
        return 0;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        void *na = realloc(m->a, cap * sizeof *m->a);
        if (!na)
            return -ENOMEM;
        m->a = na;
        m->cap = cap;
    }
    m->a[m->n++] = *a;
    return 0;
}

static void actor_erase(actor_map *m, uint32_t id)
{
    actor_name *e = actor_find(m, id);
    if (e)
        *e = m->a[--m->n];
}

static actor_name add_record(const uint8_t *q, unsigned w)
{
    size_t s = 4 + 1 + 6u * w + 4;
    return (actor_name){ld_le32(q), q[4], q + s + 2, ld_le16(q + s)};
}

/* CARLA's category letter: by EventAdd type {o v w t h a}, so a traffic sign (4) counts as 'h'
 * and a sensor (5) as 'a'; an unknown or non-actor id is 'o'. */
static char category(actor_map *m, uint32_t id, bool hero)
{
    static const char by_type[] = {'o', 'v', 'w', 't', 'h', 'a'};
    if (hero)
        return 'h';
    actor_name *a = id == 0xFFFFFFFFu ? NULL : actor_find(m, id);
    return a && a->type < 6 ? by_type[a->type] : 'o';
}

static bool matches(char want, char got)
{
    return want == 'a' || want == got;
}

typedef struct pair {
    uint32_t a, b;
} pair;

static bool pair_in(const pair *set, size_t n, pair p)
{
    for (size_t i = 0; i < n; i++)
        if (set[i].a == p.a && set[i].b == p.b)
            return true;
    return false;
}

static int put_name_cell(recd_buf *out, actor_map *m, uint32_t id)
{
    actor_name *a = actor_find(m, id);
    char pad[36];
    size_t nl = a ? a->name_len : 0;
    int rc = a ? recd_buf_append(out, a->name, nl) : 0;
    if (rc == 0 && nl < 35) {
        memset(pad, ' ', 35 - nl);
        rc = recd_buf_append(out, pad, 35 - nl);
    }
    return rc;
}

static int put_name_json(recd_buf *out, actor_map *m, uint32_t id)
{
    actor_name *a = actor_find(m, id);
    return a ? msg_json_append_string(out, (const char *)a->name, a->name_len) : msg_buf_puts(out, "null");
}

int recd_carla_collisions(const uint8_t *buf, size_t len, char cat1, char cat2, bool json,
                          recd_buf *out, char *err, size_t errlen)
{
    if (!strchr("hvwtoa", cat1) || !strchr("hvwtoa", cat2) || !cat1 || !cat2) {
        snprintf(err, errlen, "categories are h (hero), v (vehicle), w (walker), t (traffic light), "
                 "o (other) or a (any)");
        return -EINVAL;
    }
    carla_reader r;
    int rc = open_reader(&r, buf, len, json, out, err, errlen);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    rc = json ? put_json_header(&r, out) : put_header(&r, out);
    if (rc == 0)
        rc = json ? out_printf(out, ",\"collisions\":[")
                  : out_printf(out, "%8s %6s %6s %-35s %6s %-35s\n", "Time", "Types", "Id", "Actor 1",
                               "Id", "Actor 2");
    actor_map m = {0};
    pair *prev = NULL, *cur = NULL;
    size_t nprev = 0, ncur = 0, capcur = 0, capprev = 0;
    uint32_t last_add = 0;
    bool have_add = false, any_row = false;
    recd_carla_frame f;
    size_t at;
    uint64_t last_id = 0;
    double last_elapsed = 0;
    while (rc == 0 && carla_reader_next(&r, &f, &at) == 1) {
        last_id = f.id;
        last_elapsed = f.elapsed;
        ncur = 0;
        for (size_t i = 0; i < f.count && rc == 0; i++) {
            const recd_carla_packet *p = &f.packets[i];
            if (p->raw)
                continue;
            size_t off = 0;
            for (uint32_t k = 0; k < p->count && rc == 0 && is_event(p); k++) {
                const uint8_t *q = p->data + off;
                off += rec_size(p->kind, r.width, q, p->len - off);
                if (p->kind == RECD_CARLA_EVENT_ADD) {
                    actor_name a = add_record(q, r.width);
                    rc = actor_set(&m, &a);
                    last_add = a.id;
                    have_add = true;
                } else if (p->kind == RECD_CARLA_EVENT_DEL) {
                    if (have_add) /* CARLA's quirk: it forgets the last added actor */
                        actor_erase(&m, last_add);
                } else if (p->kind == RECD_CARLA_COLLISION) {
                    pair pr = {ld_le32(q + 4), ld_le32(q + 8)};
                    if (ncur == capcur) {
                        size_t cap = capcur ? capcur * 2 : 16;
                        void *nc = realloc(cur, cap * sizeof *cur);
                        if (!nc) {
                            rc = -ENOMEM;
                            break;
                        }
                        cur = nc;
                        capcur = cap;
                    }
                    cur[ncur++] = pr;
                    char t1 = category(&m, pr.a, q[12]), t2 = category(&m, pr.b, q[13]);
                    bool show = (matches(cat1, t1) && matches(cat2, t2)) ||
                                (matches(cat1, t2) && matches(cat2, t1));
                    if (!show || pair_in(prev, nprev, pr))
                        continue;
                    if (json) {
                        rc = out_printf(out, "%s{\"frame\":%" PRIu64 ",\"time\":", any_row ? "," : "", f.id);
                        if (rc == 0)
                            rc = carla_put_f64(out, f.elapsed);
                        if (rc == 0)
                            rc = out_printf(out, ",\"types\":\"%c%c\",\"id1\":%" PRIu32 ",\"actor1\":", t1, t2, pr.a);
                        if (rc == 0)
                            rc = put_name_json(out, &m, pr.a);
                        if (rc == 0)
                            rc = out_printf(out, ",\"id2\":%" PRIu32 ",\"actor2\":", pr.b);
                        if (rc == 0)
                            rc = put_name_json(out, &m, pr.b);
                        if (rc == 0)
                            rc = out_printf(out, "}");
                    } else {
                        rc = out_printf(out, "%8.0f   %c %c  %6" PRIu32 " ", f.elapsed, t1, t2, pr.a);
                        if (rc == 0)
                            rc = put_name_cell(out, &m, pr.a);
                        if (rc == 0)
                            rc = out_printf(out, " %6" PRIu32 " ", pr.b);
                        if (rc == 0)
                            rc = put_name_cell(out, &m, pr.b);
                        if (rc == 0)
                            rc = out_printf(out, "\n");
                    }
                    any_row = true;
                }
            }
        }
        pair *t = prev; /* this frame's contacts become the previous frame's */
        size_t tc = capprev;
        prev = cur;
        capprev = capcur;
        nprev = ncur;
        cur = t;
        capcur = tc;
    }
    if (rc == 0)
        rc = json ? out_printf(out, "],\"frames\":%" PRIu64 ",\"duration\":", last_id)
                  : out_printf(out, "\nFrames: %" PRIu64 "\n", last_id);
    if (rc == 0)
        rc = json ? carla_put_f64(out, last_elapsed)
                  : (any_row ? out_printf(out, "Duration: %.0f seconds\n", last_elapsed)
                             : out_printf(out, "Duration: %g seconds\n", last_elapsed));
    if (rc == 0 && json)
        rc = out_printf(out, "}\n");
    free(prev);
    free(cur);
    free(m.a);
    carla_reader_free(&r);
    return rc;
}

/* ---- blocked actors -------------------------------------------------------------------------- */

typedef struct still {
    uint32_t id;
    double x, y, z;  /* where it was when it last moved */
    double start;    /* elapsed then */
    double duration; /* accumulated while it did not move */
} still;

typedef struct blocked_row {
    double start, duration;
    uint32_t id;
    size_t order;
} blocked_row;

static int cmp_rows(const void *a, const void *b)
{
    const blocked_row *x = a, *y = b;
    if (x->duration != y->duration)
        return x->duration < y->duration ? 1 : -1;
    return x->order < y->order ? -1 : x->order > y->order;
}

int recd_carla_blocked(const uint8_t *buf, size_t len, double min_time, double min_distance,
                       bool json, recd_buf *out, char *err, size_t errlen)
{
    carla_reader r;
    int rc = open_reader(&r, buf, len, json, out, err, errlen);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    actor_map m = {0};
    still *s = NULL;
    size_t ns = 0, caps = 0;
    blocked_row *rows = NULL;
    size_t nrows = 0, caprows = 0;
    recd_carla_frame f;
    size_t at;
    uint64_t last_id = 0;
    double last_elapsed = 0;
    while (rc == 0 && carla_reader_next(&r, &f, &at) == 1) {
        last_id = f.id;
        last_elapsed = f.elapsed;
        for (size_t i = 0; i < f.count && rc == 0; i++) {
            const recd_carla_packet *p = &f.packets[i];
            if (p->raw || (p->kind != RECD_CARLA_EVENT_ADD && p->kind != RECD_CARLA_POSITION))
                continue;
            size_t off = 0;
            for (uint32_t k = 0; k < p->count && rc == 0; k++) {
                const uint8_t *q = p->data + off;
                off += rec_size(p->kind, r.width, q, p->len - off);
                if (p->kind == RECD_CARLA_EVENT_ADD) {
                    actor_name a = add_record(q, r.width);
                    rc = actor_set(&m, &a);
                    continue;
                }
                uint32_t id = ld_le32(q);
                double x = vat(q + 4, r.width, 0), y = vat(q + 4, r.width, 1), z = vat(q + 4, r.width, 2);
                still *e = NULL;
                for (size_t j = 0; j < ns && !e; j++)
                    if (s[j].id == id)
                        e = &s[j];
                if (!e) {
                    if (ns == caps) {
                        size_t cap = caps ? caps * 2 : 64;
                        void *n2 = realloc(s, cap * sizeof *s);
                        if (!n2) {
                            rc = -ENOMEM;
                            break;
                        }
                        s = n2;
                        caps = cap;
                    }
                    s[ns++] = (still){id, x, y, z, f.elapsed, 0};
                    continue;
                }
                double d = sqrt((x - e->x) * (x - e->x) + (y - e->y) * (y - e->y) + (z - e->z) * (z - e->z));
                if (d < min_distance) {
                    e->duration += f.duration;
                    continue;
                }
                if (e->duration >= min_time) {
                    if (nrows == caprows) {
                        size_t cap = caprows ? caprows * 2 : 16;
                        void *n2 = realloc(rows, cap * sizeof *rows);
                        if (!n2) {
                            rc = -ENOMEM;
                            break;
                        }
                        rows = n2;
                        caprows = cap;
                    }
                    rows[nrows] = (blocked_row){e->start, e->duration, id, nrows};
                    nrows++;
                }
                *e = (still){id, x, y, z, f.elapsed, 0};
            }
        }
    }
    for (size_t j = 0; j < ns && rc == 0; j++) {
        if (s[j].duration < min_time)
            continue;
        if (nrows == caprows) {
            size_t cap = caprows ? caprows * 2 : 16;
            void *n2 = realloc(rows, cap * sizeof *rows);
            if (!n2) {
                rc = -ENOMEM;
                break;
            }
            rows = n2;
            caprows = cap;
        }
        rows[nrows] = (blocked_row){s[j].start, s[j].duration, s[j].id, nrows};
        nrows++;
    }
    if (nrows)
        qsort(rows, nrows, sizeof *rows, cmp_rows);
    if (rc == 0)
        rc = json ? put_json_header(&r, out) : put_header(&r, out);
    if (rc == 0)
        rc = json ? out_printf(out, ",\"blocked\":[")
                  : out_printf(out, "%8s %6s %-35s %10s\n", "Time", "Id", "Actor", "Duration");
    for (size_t j = 0; j < nrows && rc == 0; j++) {
        if (json) {
            rc = out_printf(out, "%s{\"time\":", j ? "," : "");
            if (rc == 0)
                rc = carla_put_f64(out, rows[j].start);
            if (rc == 0)
                rc = out_printf(out, ",\"id\":%" PRIu32 ",\"actor\":", rows[j].id);
            if (rc == 0)
                rc = put_name_json(out, &m, rows[j].id);
            if (rc == 0)
                rc = out_printf(out, ",\"duration\":");
            if (rc == 0)
                rc = carla_put_f64(out, rows[j].duration);
            if (rc == 0)
                rc = out_printf(out, "}");
            continue;
        }
        rc = out_printf(out, "%8.0f %6" PRIu32 " ", rows[j].start, rows[j].id);
        if (rc == 0)
            rc = put_name_cell(out, &m, rows[j].id);
        if (rc == 0)
            rc = out_printf(out, " %10.0f\n", rows[j].duration);
    }
    if (rc == 0)
        rc = json ? out_printf(out, "],\"frames\":%" PRIu64 ",\"duration\":", last_id)
                  : out_printf(out, "\nFrames: %" PRIu64 "\nDuration: %g seconds\n", last_id, last_elapsed);
    if (rc == 0 && json) {
        rc = carla_put_f64(out, last_elapsed);
        if (rc == 0)
            rc = out_printf(out, "}\n");
    }
    free(s);
    free(rows);
    free(m.a);
    carla_reader_free(&r);
    return rc;
}
