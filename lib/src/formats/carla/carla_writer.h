/* SPDX-License-Identifier: MIT */
/* Internal: writes a CARLA recorder log as CARLA does (docs/formats/carla.md, "Writing"): the
 * header, then each frame's packets in the release's order with the empty packets it writes.
 * One frame is held back until the next state arrives, so FrameStart's duration is known
 * without seeking back; the last frame keeps -1. */
#ifndef RECD_CARLA_WRITER_H
#define RECD_CARLA_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/carla.h"
#include "recd/reserve_sink.h"

#define CARLA_WRITE_ORDER 23 /* items of CARLA's per-frame packet order (carla_writer.c) */

typedef struct carla_writer {
    recd_sink sink;
    recd_carla_open open;
    bool header_written;
    bool held;                /* a frame is held back */
    uint64_t frame_id;
    double elapsed;
    bool has_duration;
    double duration;
    recd_buf records[RECD_CARLA_KIND_COUNT]; /* the held frame's records, in the file's width */
    uint32_t counts[RECD_CARLA_KIND_COUNT];
    bool present[RECD_CARLA_KIND_COUNT];
    recd_buf raw;             /* raw packets: u8 id, u32 size, payload */
    size_t held_len;          /* bytes in records and raw: what the held frame keeps */
    /* Looked up once at init: the schema's table of each kind's record size in each width (index
     * width == 8; carla_kind_fixed_sizes), and the packet id of each item of the write order (-1:
     * the release has no such kind). */
    const uint16_t *fixed[2];
    int8_t order_id[CARLA_WRITE_ORDER];
    recd_buf out;             /* the header, and frames when there is no reserve */
    /* The sink's room for a frame in place (recd/reserve_sink.h), or NULL: frames go to out. */
    const recd_reserve_sink *reserve;
    uint64_t frames_written;
    uint64_t bytes_written;
} carla_writer;

/* Copies what it needs from o (the map). A sink made by recd_reserve_sink_as_sink() gets each
 * frame written into its room in place. -EINVAL for an invalid width, -ENOMEM. */
int carla_writer_init(carla_writer *w, const recd_carla_open *o, recd_sink sink);
/* A new frame: writes the held one (its duration now known) and holds this one. -EBADMSG with
 * err for frames a CARLA release cannot hold (a kind its id table lacks, > 65535 positions). */
int carla_writer_state(carla_writer *w, const recd_carla_frame *f, char *err, size_t errlen);
/* An event of the held frame. -EBADMSG before the first state. */
int carla_writer_event(carla_writer *w, const recd_carla_event *e, char *err, size_t errlen);
/* Writes the held frame (its duration -1 unless it carries one). */
int carla_writer_finish(carla_writer *w, char *err, size_t errlen);
void carla_writer_free(carla_writer *w);


#endif
