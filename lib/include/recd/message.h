/* SPDX-License-Identifier: MIT */
/* The sample message model (open / state / event / flush / close) shared by files and the wire,
 * its JSON-lines and CSV encodings, and whole-file conversions between recordings and text.
 * Spec with every field and examples: docs/protocol.md. */
#ifndef RECD_MESSAGE_H
#define RECD_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
/* Each format's own header: its payloads (the union members of recd_msg below) and its message
 * builders. */
#include "recd/carla.h"
#include "recd/recap.h"
#include "recd/samp_rec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_SESSION_KEY_MAX 64 /* bytes, [A-Za-z0-9._-], no leading dot */
#define RECD_AUTH_TOKEN_MAX 256 /* bytes, printable ASCII without space */

typedef enum recd_msg_type {
    RECD_MSG_NONE = 0,
    RECD_MSG_OPEN,  /* starts a session: format and metadata */
    RECD_MSG_STATE, /* one sample: a .rec block, or a Recap tick's full player state */
    RECD_MSG_EVENT, /* a Recap non-state action at a tick */
    RECD_MSG_FLUSH, /* Recap: end the current gzip member here (ignored for .rec) */
    RECD_MSG_CLOSE, /* ends the session */
    RECD_MSG_SAVE   /* instant replay: write the last last_ms of a ring session's samples */
} recd_msg_type;

typedef enum recd_msg_format {
    RECD_MSG_FMT_NONE = 0,
    RECD_MSG_FMT_SAMP_ONFOOT,  /* "samp-onfoot": .rec type 2, 72-byte blocks */
    RECD_MSG_FMT_SAMP_VEHICLE, /* "samp-vehicle": .rec type 1, 67-byte blocks */
    RECD_MSG_FMT_RECAP,        /* "recap": .recap */
    RECD_MSG_FMT_CARLA,        /* "carla": CARLA recorder .log (recd/carla.h) */
    RECD_MSG_FMT_SAMP_PLAYER   /* "samp-player": on-foot and vehicle states in one session, recorded
                                  as a sequence of .rec parts and a manifest (daemon only) */
} recd_msg_format;

RECD_API const char *recd_msg_type_name(recd_msg_type t);     /* "open", "state", ... */
RECD_API const char *recd_msg_format_name(recd_msg_format f); /* "samp-onfoot", ...; "" for NONE */
RECD_API recd_msg_format recd_msg_format_parse(const char *name); /* NONE when unknown */
RECD_API const char *recd_msg_format_ext(recd_msg_format f);      /* "rec", "recap"; "" for NONE */

/* True when key[0..len) is a valid session key: 1..64 bytes of [A-Za-z0-9._-], no leading dot.
 * Keys become path components, so "..", "/x" and NUL bytes are all refused. */
RECD_API bool recd_session_key_valid(const char *key, size_t len);

typedef struct recd_msg_open {
    bool has_start_time;
    int64_t start_time_ms;      /* session start, Unix epoch ms */
    char *auth;                 /* NULL when absent; owned, NUL-terminated */
    /* Take over the live session of this key after a reconnect (docs/wire.md, "Ownership and
     * resume"); without a live session it opens one like any open. */
    bool resume;
    /* Instant replay: keep the last seconds in memory only, written when a save asks
     * (docs/protocol.md section 2.10). */
    bool ring;
    recd_msg_recap_open *recap; /* format recap only (required there); owned */
    recd_carla_open *carla;     /* format carla only (required there); owned */
} recd_msg_open;

typedef struct recd_msg_flush {
    bool has_end_tick;
    uint64_t end_tick; /* recap: the gzip member ends before this tick (ticks in between unchanged) */
} recd_msg_flush;

/* A save of a ring session: the samples of its last last_ms, as a recording named label. */
typedef struct recd_msg_save {
    uint32_t last_ms;                      /* 1 .. 2^32-1 */
    char label[RECD_SESSION_KEY_MAX + 1]; /* a session key's rules: it names a file */
} recd_msg_save;

typedef struct recd_msg_close {
    bool has_end_time;
    int64_t end_time_ms; /* recap: sets the header's end timestamp (epoch ms); ignored for .rec */
} recd_msg_close;

/* One message. format says which union member is valid for STATE (onfoot / vehicle / recap) and is
 * the session format for OPEN. A message owns its heap data: release it with recd_msg_free(). */
typedef struct recd_msg {
    recd_msg_type type;
    recd_msg_format format;
    char session[RECD_SESSION_KEY_MAX + 1]; /* "" when absent (files); required on the wire;
                                               bytes after the NUL are unspecified */
    bool has_seq;
    /* STATE / EVENT: save now (instant replay): once this sample is kept, a ring session saves
     * its whole window, as a save message would (docs/protocol.md section 2.10). Sits in what
     * was padding: the struct's layout is unchanged. */
    bool save_now;
    uint64_t seq; /* optional per-session sequence number, 0 .. 2^63-1 */
    union {
        recd_msg_open open;
        recd_msg_flush flush;
        recd_msg_close close;
        recd_msg_save save;
        recd_rec_onfoot onfoot;            /* STATE, SAMP_ONFOOT: time_ms is "t" */
        recd_rec_vehicle vehicle;          /* STATE, SAMP_VEHICLE */
        recd_msg_recap_state *recap_state; /* STATE, RECAP; owned */
        recd_msg_recap_event *recap_event; /* EVENT, RECAP; owned */
        recd_carla_frame *carla_state;     /* STATE, CARLA: a frame without its events; owned
                                              (from a binary frame, its packets' bytes are the
                                              frame's: recd_wire_meta.movable) */
        recd_carla_event *carla_event;     /* EVENT, CARLA: actor add/delete/parent, collision */
    };
    /* STATE, SAMP_PLAYER: which of onfoot / vehicle above holds the state, and what a vehicle
     * state may add about the vehicle (docs/protocol.md section 2.9). */
    recd_msg_player player;
} recd_msg;

/* Zeroes m and sets its type and format. */
RECD_API void recd_msg_init(recd_msg *m, recd_msg_type type, recd_msg_format format);
/* Frees what m owns and leaves it zeroed as RECD_MSG_NONE. A message already RECD_MSG_NONE owns
 * nothing and is left as it is, so this is safe on a zeroed, moved-from or already freed msg. */
RECD_API void recd_msg_free(recd_msg *m);

/* Deep copy of any message into a fresh dst. */
RECD_API int recd_msg_copy(recd_msg *dst, const recd_msg *src);
/* dst (fresh, or freed) takes everything src owns; src is left as RECD_MSG_NONE. */
RECD_API void recd_msg_move(recd_msg *dst, recd_msg *src);

/* ---- JSON lines -------------------------------------------------------------------------------
 * One message is one JSON object on one line. Unknown keys, missing required keys, wrong types,
 * out-of-range integers and floats that do not fit f32 are errors naming the field, e.g.
 * "state.health: 300 does not fit u8". NaN and infinities cannot be written in JSON and are refused
 * by the writer too (-EINVAL). Floats are printed so that they parse back to the same bits
 * (-0.0 included). */

/* Parses one line (a trailing '\n' or "\r\n" is allowed). session_format is the format announced
 * by the session's open message; it selects how a "state" is read. With RECD_MSG_FMT_NONE a state
 * is recognised by its keys ("tick" -> recap, "vehicle_id" -> vehicle, else on foot).
 * On success *out holds a message to recd_msg_free(); on failure *out is freed and err says why.
 * Returns 0, -EBADMSG (invalid input), or -ENOMEM. */
RECD_API int recd_msg_from_json(const char *line, size_t len, recd_msg_format session_format,
                                recd_msg *out, char *err, size_t errlen);

/* Appends one JSON line including the final '\n'. -EINVAL for NaN/Inf or invalid fields (nothing is
 * appended then), -ENOMEM. */
RECD_API int recd_msg_to_json(const recd_msg *m, recd_buf *out);

/* Callback for the readers below. m is only valid during the call. Return 0 to go on, or a negative
 * errno to stop (the reader returns it). The callback may describe the failure in err; the reader
 * prefixes "line N: ". */
typedef int (*recd_msg_fn)(void *ctx, const recd_msg *m, char *err, size_t errlen);

/* Reads a whole JSONL document: one message per line, blank lines ignored, the first message must
 * be open, nothing may follow close. Errors read "line 12: state.health: 300 does not fit u8".
 * Returns 0 or a negative errno (-EBADMSG for invalid input, or the callback's error). */
RECD_API int recd_jsonl_read(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                             char *err, size_t errlen);

/* ---- CSV ----------------------------------------------------------------------------------------
 * RFC 4180 (comma, '"' quoting, LF or CRLF), one header row naming the columns.
 * .rec: one row per block, one column per field; the column set tells on-foot from vehicle.
 * recap: one row per message: a "kind" column (open/state/event/flush/close), "tick", one column
 * per scalar state field, JSON item arrays in "equipment"/"inventory", and a "data" column holding
 * the JSON object of open/event/flush/close rows. carla: one row per message: kind, frame,
 * elapsed, duration, and a "data" column with the records (or the other messages) as JSON.
 * Column names: docs/protocol.md. */

typedef struct recd_csv_writer {
    recd_msg_format format;
    bool header_written;
} recd_csv_writer;

/* format must be the session format; the header row is written before the first row. */
RECD_API int recd_csv_writer_init(recd_csv_writer *w, recd_msg_format format);
/* Appends the row for m (after the header row, the first time). .rec: open, flush and close write
 * no row (the header carries the format). -EINVAL when m does not belong to the writer's format
 * or holds NaN/Inf or invalid UTF-8; nothing is appended then. */
RECD_API int recd_csv_write(recd_csv_writer *w, const recd_msg *m, recd_buf *out);

/* Reads a whole CSV document and delivers the same message sequence as the JSONL reader: open
 * first (synthesised from the header for .rec), close last. Errors read "line 7: column health:
 * 300 does not fit u8". */
RECD_API int recd_csv_read(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx, char *err,
                           size_t errlen);

/* ---- Whole conversions (used by rectool export/import) ---------------------------------------- */

typedef enum recd_text_encoding {
    RECD_TEXT_NONE = 0,
    RECD_TEXT_JSONL = 1,
    RECD_TEXT_CSV = 2
} recd_text_encoding;

/* "jsonl" / "csv", else NONE */
RECD_API recd_text_encoding recd_text_encoding_parse(const char *name);
/* By content: JSONL when the first non-blank byte is '{', else CSV. */
RECD_API recd_text_encoding recd_text_encoding_sniff(const uint8_t *buf, size_t len);

/* The format a JSONL/CSV text holds (from its open message or CSV header), reading no further:
 * lets a caller check it against an output file name before importing. 0 or -EBADMSG (err). */
RECD_API int recd_text_peek_format(const uint8_t *text, size_t len, recd_text_encoding enc,
                                   recd_msg_format *format, char *err, size_t errlen);

/* Turns a recording (.rec or .recap, recognised by content) into messages: open, state/event/flush
 * ..., close. Only files that can be re-created byte for byte are accepted: standard .rec layouts
 * (signature 1000, type 1/2, whole blocks, no NaN/Inf) and valid complete .recap files; anything
 * else is -EBADMSG with a reason in err (e.g. "trailing partial block: run rectool repair"). */
RECD_API int recd_export_msgs(const uint8_t *file, size_t len, recd_msg_fn on_msg, void *ctx,
                              char *err, size_t errlen);

/* recd_export_msgs() written as JSONL or CSV into out. */
RECD_API int recd_export_text(const uint8_t *file, size_t len, recd_text_encoding enc,
                              recd_sink out, char *err, size_t errlen);

/* Writes the recording described by a message sequence (one whole file): .rec through
 * recd_rec_writer, block by block into the sink (times must not decrease); .recap through the
 * Recap encoder into memory, written to the sink by recd_importer_finish() once the header's
 * frame count and end time are known (flush messages end gzip members). Feed recd_importer_msg()
 * as a recd_msg_fn; errors name the field ("state.t: 100 is before the previous block's 200"). */
typedef struct recd_importer {
    recd_msg_format expect; /* NONE = accept any format */
    recd_sink sink;
    recd_rec_time_policy rec_time_policy; /* .rec: REJECT (init default) or CLAMP decreasing t */
    recd_msg_format format; /* from the open message */
    uint64_t states, events, flushes;
    bool opened, closed;
    void *impl; /* format-specific writer state; owned */
} recd_importer;

RECD_API void recd_importer_init(recd_importer *im, recd_msg_format expect, recd_sink sink);
RECD_API int recd_importer_msg(void *importer, const recd_msg *m, char *err, size_t errlen);
/* Completes the file (a missing close is implied); -EBADMSG when no open was seen. */
RECD_API int recd_importer_finish(recd_importer *im, char *err, size_t errlen);
RECD_API void recd_importer_free(recd_importer *im);

typedef struct recd_import_stats {
    recd_msg_format format;
    uint64_t states, events, flushes;
} recd_import_stats;

/* Whole import: text (encoding NONE = sniff) -> recording bytes into out. expect (NONE = any) is
 * the format the caller wants, e.g. from the output file name; a mismatch is -EBADMSG before
 * anything is written. On error out may have received a partial file: write to a temporary name.
 * stats may be NULL. */
RECD_API int recd_import_text(const uint8_t *text, size_t len, recd_text_encoding enc,
                              recd_msg_format expect, recd_sink out, recd_import_stats *stats,
                              char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
