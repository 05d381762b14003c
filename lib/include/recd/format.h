/* SPDX-License-Identifier: MIT */
/* The format table: every recording format recd writes, described once with its name, file
 * extension and hooks (content sniffing, verification, repair, crash recovery, end of part, export
 * to and import from the message model). rectool and librecd dispatch through it, so adding a
 * format is a folder under lib/src/formats/ plus one entry in lib/src/formats/format_table.c
 * (docs/architecture.md, "Adding a format"). Formats are recognised by content, never by name. */
#ifndef RECD_FORMAT_H
#define RECD_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/message.h"
#include "recd/recovery.h"
#include "recd/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct recd_format recd_format;
struct recd_format_importer; /* internal to librecd: how recd_importer writes the format */
struct recd_format_edit;     /* internal to librecd: how the edit operations treat the format */
struct recd_format_wire;     /* internal to librecd: the format's binary wire payloads */
struct recd_format_model;    /* internal to librecd: what the format's messages own */
struct recd_format_json;     /* internal to librecd: the format's messages as JSON lines */
struct recd_format_csv;      /* internal to librecd: the format's messages as CSV rows */
struct recd_format_synth;    /* internal to librecd: how the synthetic-data generators make it */
struct recd_format_seek;     /* internal to librecd: where a reader can start (docs/formats/seek-index.md) */

typedef enum recd_sniff_level {
    RECD_SNIFF_NONE = 0,     /* not this format */
    RECD_SNIFF_GUESS = 1,    /* content heuristics without a signature: text readings win over it */
    RECD_SNIFF_SIGNATURE = 2 /* the format's signature bytes: unambiguous */
} recd_sniff_level;

/* What a sniff recognised. kind and description are static strings. */
typedef struct recd_sniff_result {
    const recd_format *format; /* NULL when nothing was recognised */
    recd_sniff_level level;
    bool standard;           /* a layout the format's readers load; false for legacy, foreign or
                                damaged variants that only look like it */
    const char *kind;        /* stable short name: "samp-rec", "legacy-rec", "recap", ...; "" */
    const char *description; /* one sentence for people, e.g. why a variant is not loadable; "" */
} recd_sniff_result;

/* A verification's outcome as data, so every caller presents every format the same way. */
typedef struct recd_format_verdict {
    bool valid;        /* complete and loadable; the problems then hold no error */
    uint64_t units;    /* whole blocks / ticks that decode */
    char summary[128]; /* valid files: "recap, 12 ticks in 3 gzip members" */
    /* Invalid files, besides the report: note is worth showing before the problems, fallback
     * only when no problem was shown. Empty when there is none. */
    uint64_t note_offset;
    char note[256];
    uint64_t fallback_offset;
    char fallback[256];
} recd_format_verdict;

/* A repaired copy of a damaged recording (the longest prefix that verifies, header rewritten to
 * agree with it). */
typedef struct recd_repair_result {
    recd_buf out;          /* the repaired file; free with recd_buf_free() */
    uint64_t kept_bytes;   /* of the input, excluding header rewrites */
    uint64_t dropped_bytes;
    uint64_t kept_units;   /* whole blocks / ticks */
    const char *unit;      /* "blocks", "ticks" */
    bool changed;          /* out differs from the input */
    char detail[256];      /* what was done, or why the file cannot be repaired */
    recd_progress progress; /* in, optional: zero the result (= {0}), then set this to watch the
                             * scan; formats that can report finer progress do, and it ends at
                             * done == total */
} recd_repair_result;

/* One table entry. Hooks take whole files in memory; sniff, verify and export are required, the
 * others may be NULL (the recd_format_* wrappers then return -ENOTSUP, or 0 for end_part). */
struct recd_format {
    const char *name;        /* "samp-onfoot": the message model's and the configuration's name */
    const char *extension;   /* "rec", without the dot; several formats may share one */
    const char *description; /* one line for people */
    const char *unit;        /* what a file is counted in: "blocks", "ticks" */
    recd_msg_format msg_format;

    /* Fills out (format, level, kind, description) when head[0..len) is this format, or a variant
     * of its family (then out->format may name a sibling entry sharing this hook). head is the
     * whole file when heuristics need its length. Returns the level; 0 leaves out alone. */
    int (*sniff)(const uint8_t *head, size_t len, recd_sniff_result *out);
    /* Validates a whole file: 0 valid, -EBADMSG invalid (verdict says why), -ENOMEM. report may
     * be NULL. */
    int (*verify)(const uint8_t *buf, size_t len, recd_format_verdict *out, recd_report *report);
    /* 0 when out holds a repaired file that verifies; -EBADMSG when nothing valid can be made of
     * the input (out->detail says why); -ENOMEM. */
    int (*repair)(const uint8_t *buf, size_t len, recd_repair_result *out);
    /* Crash recovery of a .part's content: 1 and a plan when the content starts like this format
     * (a cut header included), 0 when it does not, or a negative errno. May patch buf's header. */
    int (*recover)(uint8_t *buf, size_t len, recd_recover_plan *plan);
    /* End of part: rewrites the header of a finished part (head = its first head_len bytes) so it
     * states units and end_ms. NULL when the format's header holds no totals. */
    int (*end_part)(uint8_t *head, size_t head_len, uint64_t units, int64_t end_ms);
    /* Units the file says it holds (blocks, the header's tick count): a cheap estimate for
     * progress bars; 0 when unknown. */
    uint64_t (*count_units)(const uint8_t *buf, size_t len);
    /* The file as messages (open, state/event/flush..., close); see recd_export_msgs(). */
    int (*export_msgs)(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *data, char *err,
                       size_t errlen);
    /* JSONL/CSV text (encoding NONE = sniff) holding this format -> the recording into out; see
     * recd_import_text(). self is the entry, for hooks that serve several formats. */
    int (*import_text)(const recd_format *self, const uint8_t *text, size_t len,
                       recd_text_encoding enc, recd_sink out, recd_import_stats *stats, char *err,
                       size_t errlen);
    /* What recd_importer writes this format with; formats of one family share it. */
    const struct recd_format_importer *importer;
    /* How cut, retime, transform, concat, split, diff and plots treat it (recd/edit.h); NULL when
     * the format cannot be edited. */
    const struct recd_format_edit *edit;

    /* Foreign replays only (read-only entries: msg_format NONE, no export_msgs or import_text). */
    /* The replay as the common event stream, in time order (recd/replay.h). */
    int (*export_events)(const uint8_t *buf, size_t len, recd_replay_event_fn on_event, void *data,
                         char *err, size_t errlen);
    /* A summary for `rectool info --json`: one JSON object's text appended to out. */
    int (*describe)(const uint8_t *buf, size_t len, recd_buf *out, char *err, size_t errlen);

    /* Its sessions' payloads in binary frames (recd/format_wire.h); NULL when not recorded. */
    const struct recd_format_wire *wire;
    /* Progress of an export: the unit (from 0) an exported state falls in, for formats whose
     * states are not one a unit (a tick that holds over idle ticks); -1 when the state says none.
     * NULL: each state is one unit. */
    int64_t (*state_unit)(const recd_msg *state);
    /* The message model's hooks (lib/src/message); NULL where the format has none. */
    const struct recd_format_model *model; /* what its messages own (free, copy); NULL: nothing */
    const struct recd_format_json *json;   /* JSON lines: read, write, recognise by keys */
    const struct recd_format_csv *csv;     /* CSV: columns and rows; NULL when it has no CSV */
    /* How deterministic synthetic recordings of it are made (recd/synth.h); NULL when none. */
    const struct recd_format_synth *synth;
    const struct recd_format_seek *seek; /* seek points by time (keyframes, frames); NULL: none */
};

/* The table, in sniffing order (signature checks before heuristics). */
RECD_API size_t recd_format_count(void);
RECD_API const recd_format *recd_format_at(size_t i); /* NULL when i >= recd_format_count() */
RECD_API const recd_format *recd_format_find(const char *name);       /* NULL when unknown */
RECD_API const recd_format *recd_format_of_msg(recd_msg_format f);    /* NULL for NONE */
/* The i-th entry (from 0) whose extension is ext (no dot), or NULL; formats may share one. */
RECD_API const recd_format *recd_format_by_extension(const char *ext, size_t i);

/* Recognises head[0..len) by content: asks every entry (entries sharing a sniff hook once) and
 * keeps the strongest match, stopping at a signature. Returns the format or NULL; result (may be
 * NULL) says what was seen. */
RECD_API const recd_format *recd_format_sniff(const uint8_t *head, size_t len, recd_sniff_result *result);

/* True for formats recd records (msg_format set); false for read-only foreign replays. */
RECD_API bool recd_format_is_recorded(const recd_format *f);

/* The hooks through f, with -ENOTSUP for a hook the format lacks. */
RECD_API int recd_format_verify(const recd_format *f, const uint8_t *buf, size_t len,
                                recd_format_verdict *out, recd_report *report);
RECD_API int recd_format_repair(const recd_format *f, const uint8_t *buf, size_t len,
                                recd_repair_result *out);
RECD_API int recd_format_end_part(const recd_format *f, uint8_t *head, size_t head_len, uint64_t units,
                                  int64_t end_ms); /* 0 when the format has nothing to patch */
RECD_API uint64_t recd_format_count_units(const recd_format *f, const uint8_t *buf, size_t len);
RECD_API int recd_format_export(const recd_format *f, const uint8_t *buf, size_t len, recd_msg_fn on_msg,
                                void *data, char *err, size_t errlen);
RECD_API int recd_format_import(const recd_format *f, const uint8_t *text, size_t len,
                                recd_text_encoding enc, recd_sink out, recd_import_stats *stats, char *err,
                                size_t errlen);
RECD_API int recd_format_export_events(const recd_format *f, const uint8_t *buf, size_t len,
                                       recd_replay_event_fn on_event, void *data, char *err,
                                       size_t errlen);
RECD_API int recd_format_describe(const recd_format *f, const uint8_t *buf, size_t len, recd_buf *out,
                                  char *err, size_t errlen);
/* ---- Seeking (docs/formats/seek-index.md) ---------------------------------------------------- */

/* A place a reader can start at and reach the same samples as a full scan from the beginning:
 * a keyframe's gzip member (.recap), a frame (CARLA .log), a block (.rec). */
typedef struct recd_seek_point {
    int64_t time;    /* of the keyframe / frame / block, in the format's edit unit (tick, ms) */
    uint64_t offset; /* file offset where reading starts */
    int64_t aux;     /* .recap: ticks before the member at offset; .log: frame id; .rec: block */
} recd_seek_point;

/* The last seek point at or before `time` (the first one when time is before it) of the file
 * buf[0..len), using the sidecar index[0..index_len) (NULL/0: none) for its longest valid
 * prefix and scanning the file beyond it. 0 and *out, -ENOTSUP when f has no seek, -EBADMSG
 * when the file holds no seek point, -ENOMEM. */
RECD_API int recd_format_seek(const recd_format *f, const uint8_t *buf, size_t len,
                              const uint8_t *index, size_t index_len, int64_t time,
                              recd_seek_point *out);
/* A complete sidecar index of buf[0..len) into out (appended): -ENOTSUP when f's seek is
 * arithmetic or absent, -EBADMSG for a file it cannot scan, -ENOMEM. */
RECD_API int recd_format_index_build(const recd_format *f, const uint8_t *buf, size_t len,
                                     recd_buf *out);

/* Crash recovery through the table: the first entry whose recover hook claims buf plans it.
 * 1 when one did, 0 when none did (plan left zeroed), or a negative errno. */
RECD_API int recd_format_recover(uint8_t *buf, size_t len, recd_recover_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
