/* SPDX-License-Identifier: MIT */
/* Internal: the carla entry's hooks, one file each, and the scan they share. */
#ifndef RECD_CARLA_FORMAT_H
#define RECD_CARLA_FORMAT_H

#include "formats/carla/carla_reader.h"
#include "formats/format_seek.h"
#include "recd/edit.h"
#include "recd/format.h"

/* A whole-file scan: complete frames, where they end, the first error. */
typedef struct carla_scan {
    bool header_ok;
    uint64_t frames;
    size_t frames_end;       /* end of the last complete frame (header size when none) */
    size_t last_frame_start; /* offset of the last complete frame's FrameStart, or 0 */
    double last_elapsed, last_duration;
    uint64_t raw_packets;
    int error;               /* 0 or -EBADMSG (reader's err and err_offset below) */
    char err[200];
    uint64_t err_offset;
    carla_reader r;          /* after the scan: detected ids/width; packets freed */
} carla_scan;

int carla_scan_file(const uint8_t *buf, size_t len, recd_report *report, carla_scan *s);

int recd_carla__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                            char *err, size_t errlen);
int recd_carla__repair(const uint8_t *buf, size_t len, recd_repair_result *r);
int recd_carla__recover(uint8_t *buf, size_t len, recd_recover_plan *plan);
extern const struct recd_format_importer recd_carla__importer;
extern const struct recd_format_edit recd_carla__edit;
extern const struct recd_format_wire recd_carla__wire; /* carla_wire.c */
/* The message model's hooks (carla_msg.c, carla_csv.c). */
extern const struct recd_format_model recd_carla__model;
extern const struct recd_format_json recd_carla__json;
extern const struct recd_format_csv recd_carla__csv;
extern const struct recd_format_synth recd_carla__synth; /* carla_synth.c */
/* Plots: every vehicle's and walker's route (carla_track.c), read without the message model. */
int recd_carla__track(const uint8_t *buf, size_t len, recd_track_fn on_point, void *data,
                      char *err, size_t errlen);
/* The same for a plot of [from_s, to_s] seconds from the range's seek point (found through f's
 * index); recd_format_edit.track_range. */
int recd_carla__track_range(const recd_format *f, const uint8_t *buf, size_t len,
                            const uint8_t *index, size_t ilen, double from_s, double to_s,
                            recd_track_fn on_point, void *data, char *err, size_t errlen);
/* One frame's positions as points (actor kinds unknown: 0; speed NaN), for a live view. */
int recd_carla__track_points(const recd_msg *m, recd_track_fn on_point, void *data);

extern const struct recd_format_seek recd_carla__seek; /* carla_seek.c */
/* From a seek point on (carla_export.c; recd_format_seek.export_from). */
int recd_carla__export_from(const uint8_t *buf, size_t len, const recd_seek_point *p,
                            const recd_seek_read *r, recd_msg_fn on_msg, void *ctx, char *err,
                            size_t errlen);

#endif
