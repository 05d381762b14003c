/* SPDX-License-Identifier: MIT */
/* output.part_manifest: the small JSON file stored beside every part recd finalizes (NAME.json
 * for the part NAME), which lets a user put the parts of a session back in order, across the
 * instances of a fleet: session, instance, format, part number, file, sample count, first and
 * last wire sequence number and sample time, and the part's wall-clock start and end. The
 * writer stores it after the part's rename (writer_sidecar), so a part that is not finalized
 * never has one. docs/fleet.md describes the fields. */
#ifndef RECD_DAEMON_PART_MANIFEST_H
#define RECD_DAEMON_PART_MANIFEST_H

#include "session.h"

#define PART_MANIFEST_VERSION 1

/* Gives the session's current part (about to end) its manifest, from s->tally and the wall clock
 * now. Without memory the part goes without one: logged and counted as a failure. */
void part_manifest_attach(recd_session *s);

/* The manifest's text for the given values (the writer's render; exposed for tests). malloc'd,
 * ending in a newline, or NULL without memory. */
typedef struct part_manifest_fields {
    const char *session, *instance, *format, *file;
    uint32_t part;
    session_part_tally tally;
    int64_t end_ms;
} part_manifest_fields;
char *part_manifest_text(const part_manifest_fields *f);

#endif
