/* SPDX-License-Identifier: MIT */
/* output.part_manifest: the small JSON file stored beside every part recd finalizes (NAME.json
 * for the part NAME), which lets a user put the parts of a session back in order, across the
 * instances of a fleet: session, instance, format, part number, file, sample count, first and
 * last wire sequence number and sample time, and the part's wall-clock start and end. The
 * writer stores it after the part's rename (writer_sidecar), so a part that is not finalized
 * never has one. docs/fleet.md describes the fields. */
#ifndef RECD_DAEMON_PART_MANIFEST_H
#define RECD_DAEMON_PART_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>

#include "write/writer.h"

#define PART_MANIFEST_VERSION 1

/* What a part holds, counted by its session while it is written (session.h). Sample times are on
 * the session clock in milliseconds, as the format counts them (.rec: the block time before
 * rebasing; Recap: tick x 50 ms; CARLA: elapsed). Kept only for parts started while the option
 * is on (on). */
typedef struct part_tally {
    bool on;
    bool has_seq, has_time;
    uint64_t samples;
    uint64_t first_seq, last_seq;     /* wire sequence numbers of the samples that carried one */
    uint64_t first_time_ms, last_time_ms;
    int64_t start_ms;                 /* wall clock at the part's start, Unix ms */
} part_tally;

typedef struct part_manifest_fields {
    const char *session, *instance, *format, *file;
    uint32_t part;
    part_tally tally;
    int64_t end_ms; /* wall clock at the part's end, Unix ms */
} part_manifest_fields;

/* The manifest's text: JSON, ending in a newline, malloc'd; NULL without memory. */
char *part_manifest_text(const part_manifest_fields *f);

/* A sidecar for the writer holding a copy of f (its file is the part's final name, filled in by
 * the writer); NULL without memory. */
writer_sidecar *part_manifest_sidecar(const part_manifest_fields *f);

#endif
