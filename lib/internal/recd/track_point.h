/* SPDX-License-Identifier: MIT */
/* One decoded state as a track point (recd/edit.h), through its format's edit hooks: what the
 * daemon's web console shows of a live session's latest samples without naming a format. */
#ifndef RECD_TRACK_POINT_H
#define RECD_TRACK_POINT_H

#include <stdbool.h>

#include "recd/edit.h"
#include "recd/message.h"

/* The points of state m (one per actor it places, SI units) given to on_point; 0 (also for a
 * message that places nothing), or on_point's non-zero return. */
int recd_track_points_of(const recd_msg *m, recd_track_fn on_point, void *data);

#endif
