/* SPDX-License-Identifier: MIT */
/* Recap sessions (session_recap.c): the format's table. */
#ifndef RECD_DAEMON_SESSION_RECAP_H
#define RECD_DAEMON_SESSION_RECAP_H

#include "session.h"

extern const session_format session_recap_format;

#endif
