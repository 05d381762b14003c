/* SPDX-License-Identifier: MIT */
/* Tracker events as the common event stream of foreign replays (recd/replay.h): unit tags joined
 * from index and recycle, unit-position coordinates scaled, supply turned from fixed point. */
#ifndef RECD_SC2_EVENTS_H
#define RECD_SC2_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "recd/replay.h"

#define SC2_LOOPS_PER_SECOND 16.0 /* game seconds; "Faster" speed plays 22.4 loops a wall second */

/* Decodes the replay.tracker.events member data[0..len) and hands every event to on_event in
 * order. 0, the callback's non-zero return, -EBADMSG (err says at which byte) or -ENOMEM. */
int sc2_tracker_export(const uint8_t *data, size_t len, recd_replay_event_fn on_event, void *ctx,
                       char *err, size_t errlen);

#endif
