/* SPDX-License-Identifier: MIT */
/* CARLA sessions (carla_session.c): the format's session descriptor. */
#ifndef RECD_DAEMON_FORMATS_CARLA_SESSION_H
#define RECD_DAEMON_FORMATS_CARLA_SESSION_H

#include "record/session.h"

extern const session_format carla_session_format;

#endif
