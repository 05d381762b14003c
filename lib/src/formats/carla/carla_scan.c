/* SPDX-License-Identifier: MIT */
/* The whole-file scan verify, repair, recovery and counting share: complete frames, where they
 * end, and the first error with its offset. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/carla/carla_format.h"

int carla_scan_file(const uint8_t *buf, size_t len, recd_report *report, carla_scan *s)
{
    memset(s, 0, sizeof *s);
    int rc = carla_reader_init(&s->r, buf, len, report);
    if (rc < 0) {
        s->error = rc;
        snprintf(s->err, sizeof s->err, "%s", s->r.err);
        return rc;
    }
    s->header_ok = true;
    s->frames_end = s->r.hdr.size;
    recd_carla_frame f;
    size_t at;
    while ((rc = carla_reader_next(&s->r, &f, &at)) == 1) {
        s->frames++;
        s->frames_end = s->r.pos;
        s->last_frame_start = at;
        s->last_elapsed = f.elapsed;
        s->last_duration = f.duration;
    }
    s->raw_packets = s->r.raw_packets;
    if (rc < 0) {
        s->error = rc;
        snprintf(s->err, sizeof s->err, "%s", s->r.err);
        s->err_offset = s->r.err_offset;
    }
    carla_reader_free(&s->r);
    return rc == -ENOMEM ? rc : 0;
}
