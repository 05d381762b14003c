/* SPDX-License-Identifier: MIT */
/* samp-player sessions (player_session.c): .rec parts switched at each change of type, and their
 * manifest. */
#ifndef RECD_DAEMON_FORMATS_PLAYER_SESSION_H
#define RECD_DAEMON_FORMATS_PLAYER_SESSION_H

#include "record/session.h"

extern const session_format player_session_format;

#endif
