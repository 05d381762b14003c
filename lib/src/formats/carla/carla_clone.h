/* SPDX-License-Identifier: MIT */
/* Internal: copies of carla message parts that own their bytes (carla_clone.c). */
#ifndef RECD_CARLA_CLONE_H
#define RECD_CARLA_CLONE_H

#include "recd/message.h"

recd_carla_open *recd__carla_open_clone(const recd_carla_open *o);
/* One allocation holding the frame, its packets and their bytes (storage = itself). */
recd_carla_frame *recd__carla_frame_clone(const recd_carla_frame *f);
recd_carla_event *recd__carla_event_clone(const recd_carla_event *e);

#endif
