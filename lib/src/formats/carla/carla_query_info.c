/* SPDX-License-Identifier: MIT */
/* CARLA's show_recorder_file_info (show_all or not) from the file: its text byte for byte, or
 * the same content as JSON. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_query.h"
#include "formats/carla/carla_schema.h"
#include "base/text.h"

static int put_event_text(recd_buf *out, const recd_carla_packet *p, unsigned w)
{
    int rc = 0;
    size_t at = 0;
    for (uint32_t i = 0; i < p->count && rc == 0; i++) {
        const uint8_t *q = p->data + at;
        size_t n = carla_rec_size(p->kind, w, q, p->len - at);
        at += n;
        switch (p->kind) {
        case RECD_CARLA_EVENT_ADD: {
            size_t s = 4 + 1 + 6u * w + 4;
            uint16_t bl = ld_le16(q + s);
            rc = recd_buf_printf(out, " Create %" PRIu32 ": ", ld_le32(q));
            if (rc == 0)
                rc = recd_buf_append(out, q + s + 2, bl);
            if (rc == 0)
                rc = recd_buf_printf(out, " (%u) at ", q[4]);
            if (rc == 0)
                rc = carla_put_vec(out, q + 5, w);
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
        case RECD_CARLA_EVENT_DEL: rc = recd_buf_printf(out, " Destroy %" PRIu32 "\n", ld_le32(q)); break;
        case RECD_CARLA_EVENT_PARENT:
            rc = recd_buf_printf(out, " Parenting %" PRIu32 " with %" PRIu32 " (parent)\n", ld_le32(q),
                            ld_le32(q + 4));
            break;
        case RECD_CARLA_COLLISION:
            rc = recd_buf_printf(out, " Collision id %" PRIu32 " between %" PRIu32 "%s with %" PRIu32 "%s\n",
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
    int rc = recd_buf_printf(out,
                        "  Id: %" PRIu32 "\n   max_rpm = %g\n   MOI = %g\n   damping_rate_full_throttle = %g\n"
                        "   damping_rate_zero_throttle_clutch_engaged = %g\n"
                        "   damping_rate_zero_throttle_clutch_disengaged = %g\n"
                        "   use_gear_auto_box = %s\n   gear_switch_time = 0\n   clutch_strength = %g\n"
                        "   final_ratio = %g\n   mass = %g\n   drag_coefficient = %g\n"
                        "   center_of_mass = (%g, %g, %g)\n",
                        ld_le32(q), carla_f32at(q + 4), carla_f32at(q + 8), carla_f32at(q + 12), carla_f32at(q + 16),
                        carla_f32at(q + 20), q[24] ? "true" : "false", carla_f32at(q + 25), carla_f32at(q + 29),
                        carla_f32at(q + 33), carla_f32at(q + 37), carla_f32at(q + 41), carla_f32at(q + 45), carla_f32at(q + 49));
    size_t a = 53;
    uint32_t n = ld_le32(q + a);
    a += 4;
    if (rc == 0)
        rc = recd_buf_printf(out, "   torque_curve =");
    for (uint32_t i = 0; i < n && rc == 0; i++, a += 8)
        rc = recd_buf_printf(out, " (%g, %g)", carla_f32at(q + a), carla_f32at(q + a + 4));
    uint32_t ng = ld_le32(q + a);
    const uint8_t *gears = q + a + 4;
    a += 4 + 12u * ng;
    n = ld_le32(q + a);
    a += 4;
    if (rc == 0)
        rc = recd_buf_printf(out, "\n   steering_curve =");
    for (uint32_t i = 0; i < n && rc == 0; i++, a += 8)
        rc = recd_buf_printf(out, " (%g, %g)", carla_f32at(q + a), carla_f32at(q + a + 4));
    if (rc == 0)
        rc = recd_buf_printf(out, "\n   forward_gears:\n");
    for (uint32_t i = 0; i < ng && rc == 0; i++)
        rc = recd_buf_printf(out, "    gear %u: ratio %g down_ratio %g up_ratio %g\n", i,
                        carla_f32at(gears + 12 * i), carla_f32at(gears + 12 * i + 4), carla_f32at(gears + 12 * i + 8));
    n = ld_le32(q + a);
    a += 4;
    if (rc == 0)
        rc = recd_buf_printf(out, "   wheels:\n");
    for (uint32_t i = 0; i < n && rc == 0; i++, a += 48) {
        const uint8_t *w = q + a;
        rc = recd_buf_printf(out, "    wheel %u: tire_friction %g damping_rate %g max_steer_angle %g radius %g "
                        "max_brake_torque %g max_handbrake_torque %g position (%g, %g, %g)\n",
                        i, carla_f32at(w), carla_f32at(w + 4), carla_f32at(w + 8), carla_f32at(w + 12), carla_f32at(w + 16),
                        carla_f32at(w + 20), carla_f32at(w + 36), carla_f32at(w + 40), carla_f32at(w + 44));
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
        return recd_buf_printf(out, " Current platform time: %g\n", f64_from_bits(ld_le64(p->data)));
    if (p->kind >= RECD_CARLA_KIND_COUNT || !titles[p->kind])
        return 0; /* VisualTime, FrameCounter, wheels, biker, weather: CARLA prints nothing */
    int rc = recd_buf_printf(out, "%s%" PRIu32 "\n", titles[p->kind], p->count);
    size_t at = 0;
    for (uint32_t i = 0; i < p->count && rc == 0; i++) {
        const uint8_t *q = p->data + at;
        at += carla_rec_size(p->kind, w, q, p->len - at);
        uint32_t id = ld_le32(q);
        switch (p->kind) {
        case RECD_CARLA_POSITION:
            rc = recd_buf_printf(out, "  Id: %" PRIu32 " Location: ", id);
            if (rc == 0)
                rc = carla_put_vec(out, q + 4, w);
            if (rc == 0)
                rc = recd_buf_printf(out, " Rotation: ");
            if (rc == 0)
                rc = carla_put_vec(out, q + 4 + 3 * w, w);
            if (rc == 0)
                rc = recd_buf_printf(out, "\n");
            break;
        case RECD_CARLA_STATE:
            rc = recd_buf_printf(out, "  Id: %" PRIu32 " state: %c frozen: %u elapsedTime: %g\n", id,
                            (char)('0' + q[9]), q[4], carla_f32at(q + 5));
            break;
        case RECD_CARLA_ANIM_VEHICLE:
            rc = recd_buf_printf(out, "  Id: %" PRIu32 " Steering: %g Throttle: %g Brake: %g Handbrake: %u Gear: %" PRId32 "\n",
                            id, carla_f32at(q + 4), carla_f32at(q + 8), carla_f32at(q + 12), q[16], (int32_t)ld_le32(q + 17));
            break;
        case RECD_CARLA_ANIM_WALKER:
            rc = recd_buf_printf(out, "  Id: %" PRIu32 " speed: %g\n", id, carla_f32at(q + 4));
            break;
        case RECD_CARLA_VEHICLE_DOOR:
            rc = recd_buf_printf(out, "  Id: %" PRIu32 "\n  Doors opened: %s\n", id,
                            q[4] < 7 ? door_names[q[4]] : "");
            break;
        case RECD_CARLA_VEHICLE_LIGHT: {
            uint32_t st = ld_le32(q + 4);
            rc = recd_buf_printf(out, "  Id: %" PRIu32, id);
            bool any = false;
            for (size_t k = 0; k < 11 && rc == 0; k++)
                if (st & light_bits[k]) {
                    rc = recd_buf_printf(out, " %s", light_names[k]);
                    any = true;
                }
            if (rc == 0)
                rc = recd_buf_printf(out, "%s\n", any ? "" : " None");
            break;
        }
        case RECD_CARLA_SCENE_LIGHT:
            rc = recd_buf_printf(out, "  Id: %" PRId32 " enabled: %s intensity: %g RGB_color: (%g, %g, %g)\n",
                            (int32_t)id, q[24] ? "True" : "False", carla_f32at(q + 4), carla_f32at(q + 8),
                            carla_f32at(q + 12), carla_f32at(q + 16));
            break;
        case RECD_CARLA_KINEMATICS:
        case RECD_CARLA_BOUNDING_BOX:
        case RECD_CARLA_TRIGGER_VOLUME: {
            bool kin = p->kind == RECD_CARLA_KINEMATICS;
            rc = recd_buf_printf(out, "  Id: %" PRIu32 " %s: ", id, kin ? "linear_velocity" : "origin");
            if (rc == 0)
                rc = carla_put_vec(out, q + 4, w);
            if (rc == 0)
                rc = recd_buf_printf(out, " %s: ", kin ? "angular_velocity" : "extension");
            if (rc == 0)
                rc = carla_put_vec(out, q + 4 + 3 * w, w);
            if (rc == 0)
                rc = recd_buf_printf(out, "\n");
            break;
        }
        case RECD_CARLA_PHYSICS_CONTROL: rc = put_physics(out, q); break;
        case RECD_CARLA_TRAFFIC_LIGHT_TIME:
            rc = recd_buf_printf(out, "  Id: %" PRIu32 " green_time: %g yellow_time: %g red_time: %g\n", id,
                            carla_f32at(q + 4), carla_f32at(q + 8), carla_f32at(q + 12));
            break;
        case RECD_CARLA_WALKER_BONES: {
            rc = recd_buf_printf(out, "  Id: %" PRIu32 "\n", id);
            uint16_t nb = ld_le16(q + 4);
            size_t a = 6;
            for (uint16_t k = 0; k < nb && rc == 0; k++) {
                uint16_t nl = ld_le16(q + a);
                const uint8_t *name = q + a + 2;
                a += 2u + nl;
                rc = recd_buf_printf(out, "     Bone: \"");
                if (rc == 0)
                    rc = recd_buf_append(out, name, nl);
                if (rc == 0)
                    rc = recd_buf_printf(out, "\" relative: Loc");
                if (rc == 0)
                    rc = carla_put_vec(out, q + a, w);
                if (rc == 0)
                    rc = recd_buf_printf(out, " Rot");
                if (rc == 0)
                    rc = carla_put_vec(out, q + a + 3 * w, w);
                if (rc == 0)
                    rc = recd_buf_printf(out, "\n");
                a += 6u * w;
            }
            break;
        }
        default: break;
        }
    }
    if (rc == 0 && p->kind == RECD_CARLA_WALKER_BONES)
        rc = recd_buf_printf(out, "\n");
    return rc;
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
        rc = recd_buf_printf(out, "%s{\"frame\":%" PRIu64 ",\"elapsed\":", *first ? "" : ",", frame);
        *first = false;
        if (rc == 0)
            rc = carla_put_f64(out, elapsed);
        if (rc == 0 && with_kind)
            rc = recd_buf_printf(out, ",\"kind\":\"%s\"", recd_carla_kind_name(p->kind));
        if (rc == 0)
            rc = recd_buf_printf(out, ",\"record\":");
        if (rc == 0)
            rc = carla_record_to_json(fields, w, p->data + at, p->len - at, out, &used);
        if (rc == 0)
            rc = recd_buf_printf(out, "}");
        at += used;
    }
    return rc;
}

int recd_carla_info(const uint8_t *buf, size_t len, bool show_all, bool json, recd_buf *out,
                    char *err, size_t errlen)
{
    carla_reader r;
    int rc = carla_query_open(&r, buf, len, json, out, err, errlen);
    if (rc != 0)
        return rc;
    rc = json ? carla_put_json_header(&r, out) : carla_put_query_header(&r, out);
    if (rc == 0 && json)
        rc = recd_buf_printf(out, ",\"%s\":[", show_all ? "records" : "events");
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
            rc = recd_buf_printf(out, "Frame %" PRIu64 " at %g seconds\n", f.id, f.elapsed);
            printed = true;
        }
        for (size_t i = 0; i < f.count && rc == 0; i++) {
            const recd_carla_packet *p = &f.packets[i];
            if (p->raw || (!show_all && !carla_is_event(p)))
                continue;
            if (json) {
                if (carla_kind(p->kind, r.width)->has_count)
                    rc = put_records_json(out, p, r.width, &first, f.id, f.elapsed, true);
                continue;
            }
            if (p->count && !printed) {
                rc = recd_buf_printf(out, "Frame %" PRIu64 " at %g seconds\n", f.id, f.elapsed);
                printed = true;
            }
            if (rc == 0)
                rc = carla_is_event(p) ? put_event_text(out, p, r.width) : put_state_text(out, p, r.width);
        }
    }
    if (rc == 0 && more < 0 && json)
        rc = recd_buf_printf(out, "],\"error\":{\"offset\":%" PRIu64 ",\"message\":", r.err_offset);
    if (rc == 0 && more < 0 && json)
        rc = text_put_json_string(out, r.err, strlen(r.err));
    if (rc == 0 && json)
        rc = recd_buf_printf(out, "%s,\"frames\":%" PRIu64 ",\"duration\":", more < 0 ? "}" : "]", last_id);
    if (rc == 0 && json)
        rc = carla_put_f64(out, last_elapsed);
    if (rc == 0)
        rc = json ? recd_buf_printf(out, "}\n")
                  : recd_buf_printf(out, "\nFrames: %" PRIu64 "\nDuration: %g seconds\n", last_id, last_elapsed);
    carla_reader_free(&r);
    return rc;
}

