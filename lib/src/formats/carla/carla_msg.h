/* SPDX-License-Identifier: MIT */
/* Internal, cross-folder: the carla parts of the message model (ownership and JSON), which the
 * message folder calls for format carla. Layouts come from the packet schema beside them. */
#ifndef RECD_CARLA_MSG_H
#define RECD_CARLA_MSG_H

#include <jansson.h>

#include "formats/carla/carla_clone.h"
#include "recd/message.h"


/* The state's packet keys alone, each preceded by a comma (CSV puts the rest in columns). */
int recd__carla_state_packets_json(const recd_carla_frame *f, recd_buf *out);

#endif
