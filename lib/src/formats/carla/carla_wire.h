/* SPDX-License-Identifier: MIT */
/* Internal: CARLA payloads of binary frames (carla_wire.c), behind CARLA's wire hooks
 * (recd_carla__wire): the open's carla fields, a frame, one event record. Decoders fill m (type
 * and format already set): 0, -EBADMSG with why, or -ENOMEM. */
#ifndef RECD_CARLA_WIRE_H
#define RECD_CARLA_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"

int carla_wire_state_write(const recd_carla_frame *f, recd_buf *out);
int carla_wire_state_read(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen);
int carla_wire_event_write(const recd_carla_event *e, recd_buf *out);
int carla_wire_event_read(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen);

#endif
