/* SPDX-License-Identifier: MIT */
/* One decoded state as a track point (recd/edit.h), through its format's edit hooks: what the
 * daemon's web console shows of a live session's latest samples without naming a format. */
#ifndef RECD_TRACK_POINT_H
#define RECD_TRACK_POINT_H

#include <stdbool.h>

#include "recd/edit.h"
#include "recd/message.h"

/* True when m is a state its format can place (out filled, SI units); false for anything else. */
bool recd_track_point_of(const recd_msg *m, recd_track_point *out);

#endif
