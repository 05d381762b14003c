/* SPDX-License-Identifier: MIT */
/* rFactor 2 replay events to the common event stream: vehicle pose and inputs, lap and sector
 * checkpoints, running order, penalties, pit lane and garage, start lights and countdown. Field
 * meanings follow the public write-ups of VCR 1.08 and are unverified on real files (see
 * docs/formats/rf2-vcr.md); the bytes they leave undecoded are exported as hex. */
#include "formats/rf2/rf2_events.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/rf2/rf2_json.h"
#include "base/text.h"
#include "recd/buf_printf.h"

/* (class, type) of the decoded events. */
#define EV(c, t) (((unsigned)(c) << 8) | (t))
enum {
    EV_CHECKPOINT = EV(3, 6),
    EV_ORDER = EV(3, 48),
    EV_PENALTY_GIVEN = EV(2, 5),
    EV_PENALTY_SERVED = EV(2, 7),
    EV_PENALTY_REMOVED = EV(2, 8),
    EV_PIT = EV(5, 2),
    EV_PIT_STATE = EV(3, 49),
    EV_GARAGE = EV(1, 7),
    EV_LIGHTS = EV(1, 10),
    EV_COUNTDOWN = EV(1, 23),
    EV_COUNTDOWN_PERIOD = EV(3, 9),
};

static bool is_pose(const rf2_event *ev)
{
    return ev->cls == 0 && ev->type >= 7 && ev->type <= 16;
}

static int put(recd_buf *out, const char *s)
{
    return text_puts(out, s);
}

static int put_f32(recd_buf *out, const char *key, const uint8_t *p)
{
    int rc = recd_buf_printf(out, ",\"%s\":", key);
    return rc < 0 ? rc : rf2_json_f32(out, f32_from_bits(ld_le32(p)));
}

static int put_hex(recd_buf *out, const char *key, const uint8_t *p, size_t n)
{
    int rc = recd_buf_printf(out, ",\"%s\":", key);
    return rc < 0 ? rc : rf2_json_hex(out, p, n);
}

/* The payload bytes after a decoded layout's min bytes, when there are any. */
static int put_rest(recd_buf *out, const rf2_event *ev, size_t min)
{
    return ev->size > min ? put_hex(out, "rest", ev->payload + min, ev->size - min) : 0;
}

static const char *bool_text(uint32_t v)
{
    return v ? "true" : "false";
}

static int decode_pose(const rf2_event *ev, recd_buf *out)
{
    const uint8_t *p = ev->payload;
    uint32_t info1 = ld_le32(p), info2 = ld_le32(p + 4);
    uint8_t info3 = p[38];
    char gear[8] = "null";
    if (ev->type <= 15)
        snprintf(gear, sizeof gear, "%d", (int)ev->type - 8);
    int rc = recd_buf_printf(out,
                             ",\"gear\":%s,\"steer\":%u,\"throttle\":%u,\"brake\":%u,\"engine\":%u"
                             ",\"horn\":%s,\"in_pit_lane\":%s,\"traction_control\":%u",
                             gear, info1 & 0x3FF, (info1 >> 11) & 0x3F, info3 & 0x3F, info1 >> 18,
                             bool_text(info1 & (1u << 10)), bool_text(info1 & (1u << 17)), info3 >> 6);
    if (rc == 0)
        rc = recd_buf_printf(out,
                             ",\"acceleration\":%u,\"following\":%s,\"warning_light\":%s"
                             ",\"driver_visible\":%s,\"headlight\":%s,\"current_driver\":%u,\"damage\":%u",
                             info2 >> 24, bool_text(info2 & (1u << 23)), bool_text(info2 & (1u << 22)),
                             bool_text(info2 & (1u << 21)), bool_text(info2 & (1u << 20)),
                             (info2 >> 18) & 3, info2 & 0x3FFFF);
    static const char *const keys[6] = {"x", "y", "z", "rot_x", "rot_y", "rot_z"};
    for (int i = 0; rc == 0 && i < 6; i++)
        rc = put_f32(out, keys[i], p + 39 + 4 * i);
    if (rc == 0)
        rc = put_hex(out, "velocity_raw", p + 8, 5);
    if (rc == 0)
        rc = put_hex(out, "unknown_raw", p + 13, 25);
    return rc;
}

static int decode_checkpoint(const rf2_event *ev, recd_buf *out)
{
    rf2_checkpoint cp;
    rf2_event_checkpoint(ev, &cp);
    int rc = recd_buf_printf(out, ",\"lap\":%u,\"sector\":", cp.lap);
    if (rc == 0)
        rc = cp.sector ? recd_buf_printf(out, "%u", cp.sector) : put(out, "null");
    if (rc == 0)
        rc = recd_buf_printf(out, ",\"sector_byte\":%u", ev->payload[9]);
    if (rc == 0)
        rc = put_f32(out, "lap_time", ev->payload);
    if (rc == 0)
        rc = put_f32(out, "crossing_time", ev->payload + 4);
    return rc < 0 ? rc : put_rest(out, ev, RF2_CHECKPOINT_MIN);
}

static int decode_order(const rf2_event *ev, recd_buf *out)
{
    int rc = put(out, ",\"order\":[");
    for (size_t i = RF2_ORDER_HEAD; rc == 0 && i < ev->size; i++)
        rc = recd_buf_printf(out, "%s%u", i > RF2_ORDER_HEAD ? "," : "", ev->payload[i]);
    if (rc == 0)
        rc = put(out, "]");
    return rc < 0 ? rc : put_hex(out, "head", ev->payload, RF2_ORDER_HEAD);
}

static const char *penalty_name(uint8_t code)
{
    return code == 0 ? "stop_go" : code == 1 ? "drive_through" : "unknown";
}

static const char *pit_name(uint8_t code)
{
    switch (code) {
    case 0:
    case 1: return "garage";
    case 32: return "exited_lane";
    case 33: return "requested";
    case 34: return "entered_lane";
    case 35: return "in_box";
    case 36: return "off_jacks";
    default: return "unknown";
    }
}

static const char *pit_state_name(uint8_t code)
{
    return code == 3 ? "in_pit_lane" : code == 4 ? "in_garage" : code == 6 ? "removed_by_admin" : "unknown";
}

/* The decoded kinds: name, the least payload they need, and the decoder of the rest. */
typedef struct kind_def {
    unsigned id;
    const char *kind;
    uint16_t min;
} kind_def;

static const kind_def kinds[] = {
    {EV_CHECKPOINT, "checkpoint", RF2_CHECKPOINT_MIN},
    {EV_ORDER, "position_order", RF2_ORDER_HEAD},
    {EV_PENALTY_GIVEN, "penalty", 3},
    {EV_PENALTY_SERVED, "penalty", 1},
    {EV_PENALTY_REMOVED, "penalty", 1},
    {EV_PIT, "pit", 1},
    {EV_PIT_STATE, "pit_state", 1},
    {EV_GARAGE, "garage", 4},
    {EV_LIGHTS, "lights", 3},
    {EV_COUNTDOWN, "countdown", 4},
    {EV_COUNTDOWN_PERIOD, "countdown_period", 8},
};

static const kind_def *find_kind(const rf2_event *ev)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].id == EV(ev->cls, ev->type))
            return ev->size >= kinds[i].min ? &kinds[i] : NULL;
    return NULL;
}

static int decode_known(const rf2_event *ev, unsigned id, recd_buf *out)
{
    const uint8_t *p = ev->payload;
    int rc;
    switch (id) {
    case EV_CHECKPOINT: return decode_checkpoint(ev, out);
    case EV_ORDER: return decode_order(ev, out);
    case EV_PENALTY_GIVEN:
        rc = recd_buf_printf(out, ",\"action\":\"given\",\"id\":%u,\"unknown\":%u,\"reason\":", p[0],
                             ld_le16(p + 1));
        return rc < 0 ? rc : rf2_json_text(out, p + 3, ev->size - 3u);
    case EV_PENALTY_SERVED:
    case EV_PENALTY_REMOVED:
        rc = recd_buf_printf(out, ",\"action\":\"%s\",\"penalty\":\"%s\",\"code\":%u",
                             id == EV_PENALTY_SERVED ? "served" : "removed", penalty_name(p[0]), p[0]);
        return rc < 0 ? rc : put_rest(out, ev, 1);
    case EV_PIT:
        rc = recd_buf_printf(out, ",\"what\":\"%s\",\"code\":%u", pit_name(p[0]), p[0]);
        return rc < 0 ? rc : put_rest(out, ev, 1);
    case EV_PIT_STATE:
        rc = recd_buf_printf(out, ",\"what\":\"%s\",\"code\":%u", pit_state_name(p[0]), p[0]);
        return rc < 0 ? rc : put_rest(out, ev, 1);
    case EV_GARAGE:
        rc = put_f32(out, "time", p);
        return rc < 0 ? rc : put_rest(out, ev, 4);
    case EV_LIGHTS:
        rc = recd_buf_printf(out, ",\"count\":%u,\"unknown\":%u", p[0], ld_le16(p + 1));
        return rc < 0 ? rc : put_rest(out, ev, 3);
    case EV_COUNTDOWN:
        rc = recd_buf_printf(out, ",\"value\":%u", ld_le32(p));
        return rc < 0 ? rc : put_rest(out, ev, 4);
    case EV_COUNTDOWN_PERIOD:
        rc = put_f32(out, "start", p);
        if (rc == 0)
            rc = put_f32(out, "end", p + 4);
        return rc < 0 ? rc : put_rest(out, ev, 8);
    default: return -EINVAL;
    }
}

const char *rf2_event_kind(const rf2_event *ev)
{
    const kind_def *k;
    return is_pose(ev) && ev->size == RF2_POSE_SIZE ? "pose" : (k = find_kind(ev)) ? k->kind : "unknown";
}

int rf2_event_decode(const rf2_event *ev, const char **kind, recd_buf *fields)
{
    /* Every event starts with the byte after its header and the header bits nobody has named,
     * so that nothing the file says is dropped. */
    int rc = recd_buf_printf(fields, "{\"time_adjust\":%u,\"header_bits\":%u", ev->time_adjust, ev->extra);
    const kind_def *k = NULL;
    if (rc == 0 && is_pose(ev) && ev->size == RF2_POSE_SIZE) {
        *kind = "pose";
        rc = decode_pose(ev, fields);
    } else if (rc == 0 && (k = find_kind(ev)) != NULL) {
        *kind = k->kind;
        rc = decode_known(ev, k->id, fields);
    } else if (rc == 0) {
        *kind = "unknown";
        rc = recd_buf_printf(fields, ",\"class\":%u,\"type\":%u,\"size\":%u,\"raw\":", ev->cls, ev->type,
                             ev->size);
        if (rc == 0)
            rc = rf2_json_hex(fields, ev->payload, ev->size);
    }
    return rc < 0 ? rc : put(fields, "}");
}

bool rf2_event_checkpoint(const rf2_event *ev, rf2_checkpoint *out)
{
    if (EV(ev->cls, ev->type) != EV_CHECKPOINT || ev->size < RF2_CHECKPOINT_MIN)
        return false;
    const uint8_t *p = ev->payload;
    unsigned code = (p[9] >> 6) & 3;
    out->lap_time = f32_from_bits(ld_le32(p));
    out->time = f32_from_bits(ld_le32(p + 4));
    out->lap = p[8];
    out->sector = code == 1 ? 1 : code == 2 ? 2 : code == 0 ? 3 : 0;
    return true;
}
