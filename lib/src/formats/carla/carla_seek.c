/* SPDX-License-Identifier: MIT */
/* Seeking in CARLA logs: a seek point is a frame (its FrameStart packet), its time the frame's
 * elapsed game time in milliseconds, rounded as the edit operations round it, and its aux the
 * frame's id. The walk reads packet headers only. The header identifies the file (no writer
 * rewrites it). A reader that starts at a frame misses the actors added before it: a cut learns
 * them from the frames before, read without their positions (carla_world_read_to). */
#include <errno.h>
#include <math.h>

#include "formats/carla/carla_format.h"
#include "formats/carla/carla_reader.h"
#include "formats/format_seek.h"

#define FRAME_START_SIZE 24u

static size_t carla_stable_len(const uint8_t *buf, size_t len)
{
    carla_header h;
    bool prefix;
    const char *why;
    return carla_read_header(buf, len, &h, &prefix, &why) < 0 ? 0 : h.size;
}

/* The frame starting at pos as a point; false when the packet there is no FrameStart with a
 * usable time. */
static bool frame_point(const uint8_t *buf, size_t pos, recd_seek_point *p)
{
    if (buf[pos] != 0 || ld_le32(buf + pos + 1) != FRAME_START_SIZE)
        return false;
    const uint8_t *q = buf + pos + CARLA_PACKET_HEADER;
    double ms = f64_from_bits(ld_le64(q + 16)) * 1000.0;
    if (!(ms >= 0 && ms < CARLA_MAX_MS) || ld_le64(q) > INT64_MAX)
        return false;
    p->time = (int64_t)llround(ms);
    p->offset = pos;
    p->aux = (int64_t)ld_le64(q);
    return true;
}

/* A frame the writer wrote: its FrameStart packet first. */
static bool carla_point_at(const uint8_t *unit, size_t len, recd_seek_point *p)
{
    return len >= CARLA_PACKET_HEADER + FRAME_START_SIZE && frame_point(unit, 0, p);
}

static int carla_scan_points(const uint8_t *buf, size_t len, const recd_seek_point *after,
                             recd_seek_point_fn fn, void *ctx)
{
    size_t pos = (size_t)(after ? after->offset : carla_stable_len(buf, len));
    if (pos == 0 || pos > len)
        return -EBADMSG;
    int64_t last = after ? after->time : INT64_MIN;
    while (len - pos >= CARLA_PACKET_HEADER) {
        uint32_t size = ld_le32(buf + pos + 1);
        if (len - pos - CARLA_PACKET_HEADER < size)
            break; /* cut short: the frames before it stand */
        recd_seek_point p;
        bool fresh = !after || pos != after->offset;
        if (fresh && frame_point(buf, pos, &p) && p.time >= last) {
            last = p.time;
            int rc = fn(ctx, &p);
            if (rc)
                return rc;
        }
        pos += CARLA_PACKET_HEADER + size;
    }
    return 0;
}

const struct recd_format_seek recd_carla__seek = {
    .index_step = 1000,
    .stable_len = carla_stable_len,
    .scan = carla_scan_points,
    .point_at = carla_point_at,
    .direct = NULL,
    .export_from = recd_carla__export_from,
};
