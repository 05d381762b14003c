/* SPDX-License-Identifier: MIT */
/* Test-only writer of rFactor 2 replays (.vcr, VCR 1.08) from the documented layout, so the reader
 * can be tested without real files (none can be published). Not shipped: the layout has large
 * unknown parts and the game would not be shown to accept what this writes. */
#ifndef RECD_TEST_VCR_WRITER_H
#define RECD_TEST_VCR_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

typedef struct vcrw_header {
    const char *preamble; /* the text line, without its line feed */
    float version;
    const char *rfm, *mod_info, *scn, *aiw;
    const char *mod_name, *mod_version, *mod_uid, *track;
    uint8_t session_info;
} vcrw_header;

typedef struct vcrw_driver {
    uint8_t slot;
    const char *name, *co_driver, *vehicle, *vehicle_version, *vehicle_id, *veh_file;
    float entry_time, exit_time;
} vcrw_driver;

typedef struct vcrw {
    recd_buf b;
    size_t counts_at;      /* slice count, event count, start, end */
    size_t slice_events_at; /* the open slice's u16 event count */
    uint32_t slices, events;
    uint16_t slice_events;
} vcrw;

/* The fields of a pose/inputs event (class 0, types 7-16): 63 payload bytes. */
typedef struct vcrw_pose {
    unsigned steer;    /* 10 bits */
    bool horn, in_pit_lane;
    unsigned throttle; /* 6 bits */
    unsigned engine;   /* 14 bits */
    unsigned acceleration, current_driver, damage; /* 8, 2, 18 bits */
    bool following, warning_light, driver_visible, headlight;
    uint8_t velocity[5], unknown[25];
    unsigned brake, traction_control; /* 6, 2 bits */
    float pos[3], rot[3];
} vcrw_pose;

/* Everything up to the slices. 0 or -ENOMEM (tests assert it). */
int vcrw_begin(vcrw *w, const vcrw_header *h, const vcrw_driver *drivers, uint32_t count);
int vcrw_slice(vcrw *w, float time);
int vcrw_event(vcrw *w, uint8_t cls, uint8_t type, uint8_t slot, uint8_t time_adjust, const void *payload,
               uint16_t size);
/* Patches the counts and times, then moves the file to out, gzip'd when asked. w is freed. */
int vcrw_finish(vcrw *w, float start, float end, bool gzip, recd_buf *out);

void vcrw_pose_encode(const vcrw_pose *p, uint8_t out[63]);
/* sector 1, 2 or 3 (finish line); 11 bytes, the last one padding. */
void vcrw_checkpoint_encode(float lap_time, float time, uint8_t lap, unsigned sector, uint8_t out[11]);

/* The sample replay the rectool tests and fuzz seeds use: two drivers (one with a 200-byte name),
 * three timed laps each, one of every decoded event and two unknown ones. */
int vcrw_sample(bool gzip, recd_buf *out);

#endif
