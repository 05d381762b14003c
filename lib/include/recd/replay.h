/* SPDX-License-Identifier: MIT */
/* Foreign replays (StarCraft II, rFactor 2, ...): recordings recd reads but does not write. Every
 * such reader turns its file into one common event stream, so users export and summarise them the
 * same way whatever game made them: {source, t, t_raw, actor, kind, fields} (docs/protocol.md,
 * "Foreign replays"). Their format-table entries have msg_format NONE and the export_events and
 * describe hooks instead of export_msgs and import_text. */
#ifndef RECD_REPLAY_H
#define RECD_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One event of a foreign replay. Strings are owned by the reader and valid during the callback. */
typedef struct recd_replay_event {
    const char *source; /* the format's name: "sc2replay", "rf2-vcr" */
    double t;           /* seconds of game time from the start of the replay */
    int64_t t_raw;      /* the same instant on the format's own clock (game loop, slice time) */
    int64_t actor;      /* player id or driver slot; -1 when the event belongs to nobody */
    const char *kind;   /* stable snake_case name: "unit_born", "lap", ... */
    const char *fields; /* the kind's own fields as one JSON object's text ("{}" when none) */
    size_t fields_len;
} recd_replay_event;

/* Called once per event in time order; a non-zero return stops the reader and is returned. */
typedef int (*recd_replay_event_fn)(void *data, const recd_replay_event *ev);

/* Appends ev to out as one JSON line: {"source":..,"t":..,"t_raw":..,"actor":..,"kind":..,
 * "fields":{..}}\n. t is printed with the shortest text that reads back to the same double.
 * -EINVAL when fields is not a JSON object's text, -ENOMEM. */
RECD_API int recd_replay_event_jsonl(const recd_replay_event *ev, recd_buf *out);

/* The CSV header line of recd_replay_event_csv(): source,t,t_raw,actor,kind,fields\n */
RECD_API int recd_replay_event_csv_header(recd_buf *out);
/* Appends ev to out as one CSV row (RFC 4180 quoting); the fields column holds the JSON text. */
RECD_API int recd_replay_event_csv(const recd_replay_event *ev, recd_buf *out);

#ifdef __cplusplus
}
#endif
#endif
