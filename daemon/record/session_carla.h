/* SPDX-License-Identifier: MIT */
/* CARLA sessions (session_carla.c): the format's table. */
#ifndef RECD_DAEMON_SESSION_CARLA_H
#define RECD_DAEMON_SESSION_CARLA_H

#include "session.h"

extern const session_format session_carla_format;

#endif
