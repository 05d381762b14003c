/* SPDX-License-Identifier: MIT */
/* The list of session formats: which session_format (session.h) records a message format. */
#ifndef RECD_DAEMON_SESSION_FORMATS_H
#define RECD_DAEMON_SESSION_FORMATS_H

#include "recd/message.h"
#include "session.h"

/* The format's table, or NULL for a format the daemon does not record. */
const session_format *session_format_for(recd_msg_format f);

/* The files the formats write, in the list's order, as one phrase ("A, B and C"). */
void session_formats_files_what(char *buf, size_t cap);
/* The formats' state bounds (recd_metrics_install_state_kinds), in the list's order: how many. */
size_t session_formats_state_kinds(const recd_m_state_kind **kinds, size_t cap);
/* Checks that the options of formats (session_format.options_offset and _size) fit recd_config's
 * format_options, that no two overlap and that each format's rows into format_options stay in its
 * own range. 0, or -EINVAL with why. */
int session_formats_options_check(const session_format *const *formats, size_t n, char *why,
                                  size_t whylen);
/* Checks the list's options (session_formats_options_check; says why on stderr), then installs
 * every format's config rows (recd_config_install_format_rows): once, at start, before any config
 * is loaded. 0, -EINVAL or -ENOSPC. */
int session_formats_install_config(void);
/* What a session's pending store is (sessions.stores_pending), e.g. for log lines. */
const char *session_formats_store_what(void);

#endif
