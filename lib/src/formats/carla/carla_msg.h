/* SPDX-License-Identifier: MIT */
/* Internal, cross-folder: the carla parts of the message model (ownership and JSON), which the
 * message folder calls for format carla. Layouts come from the packet schema beside them. */
#ifndef RECD_CARLA_MSG_H
#define RECD_CARLA_MSG_H

#include <jansson.h>

#include "recd/message.h"

void recd__carla_open_free(recd_carla_open *o);
recd_carla_open *recd__carla_open_clone(const recd_carla_open *o);
/* One allocation holding the frame, its packets and their bytes (storage = itself). */
recd_carla_frame *recd__carla_frame_clone(const recd_carla_frame *f);
recd_carla_event *recd__carla_event_clone(const recd_carla_event *e);

/* JSON: the open's "carla" object, a state's keys and an event's keys (after "type"). */
int recd__carla_open_to_json(const recd_carla_open *o, recd_buf *out);
int recd__carla_open_from_json(const json_t *j, recd_carla_open **out, char *why, size_t whylen);
int recd__carla_state_to_json(const recd_carla_frame *f, recd_buf *out);
/* The state's packet keys alone, each preceded by a comma (CSV puts the rest in columns). */
int recd__carla_state_packets_json(const recd_carla_frame *f, recd_buf *out);
int recd__carla_state_from_json(const json_t *root, recd_carla_frame **out, char *why,
                                size_t whylen);
int recd__carla_event_to_json(const recd_carla_event *e, recd_buf *out);
int recd__carla_event_from_json(const json_t *root, recd_carla_event **out, char *why,
                                size_t whylen);

#endif
