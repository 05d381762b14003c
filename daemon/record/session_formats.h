/* SPDX-License-Identifier: MIT */
/* The list of session formats: which session_format (session.h) records a message format. */
#ifndef RECD_DAEMON_SESSION_FORMATS_H
#define RECD_DAEMON_SESSION_FORMATS_H

#include "recd/message.h"
#include "session.h"

/* The format's table, or NULL for a format the daemon does not record. */
const session_format *session_format_for(recd_msg_format f);

#endif
