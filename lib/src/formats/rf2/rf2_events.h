/* SPDX-License-Identifier: MIT */
/* Internal: one rFactor 2 replay event as a kind of the common event stream and its fields
 * (recd/replay.h). Events the reader does not decode, or whose payload is shorter than their
 * layout, become kind "unknown" with every payload byte in "raw". */
#ifndef RECD_RF2_EVENTS_H
#define RECD_RF2_EVENTS_H

#include "formats/rf2/rf2_vcr.h"

/* Sizes of the decoded payloads (minimums: longer payloads keep their tail in "rest"). */
#define RF2_POSE_SIZE 63
#define RF2_CHECKPOINT_MIN 10
#define RF2_ORDER_HEAD 21

/* The kind rf2_event_decode() gives ev (a static string), without building its fields. */
const char *rf2_event_kind(const rf2_event *ev);
/* Sets *kind (a static string) and appends the fields object's text to fields. 0 or -ENOMEM. */
int rf2_event_decode(const rf2_event *ev, const char **kind, recd_buf *fields);

/* A checkpoint's values, for summaries: false when ev is not a whole checkpoint. sector is 1, 2
 * or 3 (the finish line), 0 for a code the layout does not name. */
typedef struct rf2_checkpoint {
    float lap_time; /* time into the lap at the crossing; at the finish, the lap's time */
    float time;     /* replay time of the crossing */
    uint8_t lap;
    uint8_t sector;
} rf2_checkpoint;
bool rf2_event_checkpoint(const rf2_event *ev, rf2_checkpoint *out);

#endif
