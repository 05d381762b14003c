/* SPDX-License-Identifier: MIT */
/* output.part_manifest: the small JSON file stored beside every part recd finalizes (NAME.json
 * for the part NAME), which lets a user put the parts of a session back in order, across the
 * instances of a fleet: session, instance, format, part number, file, sample count, first and
 * last wire sequence number and sample time, and the part's wall-clock start and end. The
 * writer stores it after the part's rename (writer_sidecar). While the part is written, the same
 * text marked in progress lies beside its .part (NAME.part.json) after every flush; crash recovery
 * completes it (part_manifest_recover.c). docs/fleet.md describes the fields. */
#ifndef RECD_DAEMON_PART_MANIFEST_H
#define RECD_DAEMON_PART_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>

#include "recd/recovery.h"
#include "write/writer.h"

#define PART_MANIFEST_VERSION 1

/* What a part holds, counted by its session while it is written (session.h). Sample times are on
 * the session clock in milliseconds, as the format counts them (a block time before rebasing,
 * ticks times their length, elapsed time). Kept only for parts started while the option is on
 * (on). */
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
    const char *identity; /* the client certificate that owns the session (identities), or NULL */
    uint32_t part;
    part_tally tally;
    int64_t end_ms; /* wall clock at the part's end (in progress: at the store), Unix ms */
    /* in_progress: stored beside the .part while it is written (writer_set_progress), saying
     * what its bytes on disk hold; recovered: such a one completed by crash recovery. */
    bool in_progress, recovered;
} part_manifest_fields;

/* The manifest's text: JSON, ending in a newline, malloc'd; NULL without memory. */
char *part_manifest_text(const part_manifest_fields *f);
/* A manifest object as that text. */
struct json_t;
char *part_manifest_dump(const struct json_t *o);

/* A sidecar for the writer holding a copy of f (its file is the part's final name, filled in by
 * the writer); NULL without memory. With f->in_progress it is a progress sidecar
 * (writer_set_progress). */
writer_sidecar *part_manifest_sidecar(const part_manifest_fields *f);

/* Crash recovery, after recd_recover_root() (sum: what it did, or NULL): every in-progress
 * manifest left beside a .part that recovery finalized becomes that part's manifest, marked
 * recovered; those whose part is gone are removed, those whose .part is still there stay.
 * Returns the number completed or a negative errno (the walk failed); problems are logged. */
int part_manifests_recover(int root_fd, const recd_recover_summary *sum);

#endif
