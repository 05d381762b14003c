/* SPDX-License-Identifier: MIT */
/* The earlier fleet layout, a subject per session (docs/fleet.md, "Subjects and partitions"):
 * kept for publishers asked for it with subjects=session; recd's consumers take both layouts. */
#ifndef RECD_FLEET_SUBJECT_H
#define RECD_FLEET_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

/* Writes PREFIX.<partition>.<token>, the token being the key with '.' turned into '~' (a NATS
 * subject separates tokens with '.'; '~' never occurs in a session key). Returns the length, or
 * the errors of recd_fleet_subject. */
int fleet_session_subject(const char *prefix, const char *key, size_t key_len,
                          uint32_t partitions, char *out, size_t cap);

#endif
