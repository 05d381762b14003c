/* SPDX-License-Identifier: MIT */
/* Recap sessions (recap_session.c): the format's session descriptor. */
#ifndef RECD_DAEMON_FORMATS_RECAP_SESSION_H
#define RECD_DAEMON_FORMATS_RECAP_SESSION_H

#include "record/session.h"

extern const session_format recap_session_format;

#endif
