/* SPDX-License-Identifier: MIT */
/* samp-player sessions (session_player.c): .rec parts switched at each change of type, and their
 * manifest. */
#ifndef RECD_DAEMON_SESSION_PLAYER_H
#define RECD_DAEMON_SESSION_PLAYER_H

#include "session.h"

extern const session_format session_player_format;

#endif
