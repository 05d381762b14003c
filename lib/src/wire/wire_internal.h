/* SPDX-License-Identifier: MIT */
/* Internal: the pieces of the wire protocol shared by the stream decoder, the datagram decoder,
 * the encoders and the client (frame header rules, per-message decoding, session bookkeeping). */
#ifndef RECD_WIRE_INTERNAL_H
#define RECD_WIRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/format_wire.h"
#include "recd/wire.h"
#include "recd/wire_lend.h"
#include "recd/wire_reason.h"

/* Frame types (byte 2 of the header). */
enum {
    WIRE_T_OPEN = 1,
    WIRE_T_STATE = 2,
    WIRE_T_EVENT = 3,
    WIRE_T_FLUSH = 4,
    WIRE_T_CLOSE = 5,
    WIRE_T_SAVE = 6,
    WIRE_T_ERROR = 0x7F
};

/* Header flags (byte 3). */
#define WIRE_F_SEQ 0x01u
#define WIRE_F_TIME 0x02u
#define WIRE_F_RESUME 0x04u /* open frames only */
#define WIRE_F_RING 0x08u   /* open frames only */
#define WIRE_F_SAVE 0x10u   /* state and event frames only: save now (instant replay) */
#define WIRE_F_KNOWN (WIRE_F_SEQ | WIRE_F_TIME | WIRE_F_RESUME | WIRE_F_RING | WIRE_F_SAVE)

#define WIRE_ERROR_TEXT_MAX 1000u

typedef struct wire_header {
    uint8_t type;
    uint8_t flags;
    uint32_t body_len;
} wire_header;

/* Checks the first avail bytes of a frame header (avail may be < 8: only those are judged, so a
 * bad magic is reported on the first byte). Fills h once avail >= 8. 0, or -EPROTO / -EMSGSIZE
 * with why. error_ok: accept the server's error frame type. */
int wire_header_check(const uint8_t *p, size_t avail, size_t max_frame, bool error_ok,
                      wire_header *h, char *why, size_t whylen);

/* Sessions opened earlier on a connection or in a datagram, with their formats (a small bounded
 * table; lookups are linear over at most RECD_WIRE_LOCAL_SESSIONS_MAX keys). */
typedef struct wire_sessions {
    struct wire_session_entry {
        char key[RECD_SESSION_KEY_MAX + 1];
        uint8_t key_len;
        recd_msg_format format;
    } *items;
    size_t count, cap;
} wire_sessions;

/* 0, or -ENOSPC when RECD_WIRE_LOCAL_SESSIONS_MAX sessions are already known, or -ENOMEM. */
void wire_sessions_clear(wire_sessions *s);
void wire_sessions_free(wire_sessions *s);

/* Everything one message decoder needs to know about its surroundings. */
typedef struct wire_env {
    recd_wire_format_fn format_of;
    recd_wire_lend_fn lend; /* NULL: states are read into fresh blocks */
    void *ctx;
    bool datagram;    /* no session continuation; local sessions are asked before format_of */
    wire_sessions local;
    char prev[RECD_SESSION_KEY_MAX + 1]; /* session of the previous message on a stream, "" none */
    uint8_t prev_len;
    recd_wire_reason noted; /* set with an error whose kind its errno does not tell */
} wire_env;

/* The format of the session a key of len bytes names: local table and format_of, in the order the
 * transport calls for. *handle is what format_of set (NULL when it was not asked or set none). */
recd_msg_format wire_env_format(const wire_env *env, const char *key, size_t len, void **handle);
/* Bookkeeping after a message decoded: opens are remembered, closes forgotten, prev updated.
 * 0 or -ENOSPC / -ENOMEM (why is filled). */
int wire_env_after(wire_env *env, const recd_msg *m, char *why, size_t whylen);
/* The part of wire_env_after for a state: remembers its key (len bytes; readable bytes may be read
 * from key on, see wire_key_copy()) as the previous one. */
void wire_env_note_session(wire_env *env, const char *key, size_t len, size_t readable);
/* A checked key of len bytes as a NUL-terminated string in out. When readable >= 64 bytes may be
 * read from key on, a fixed-size copy stands in for the variable one. */
void wire_key_copy(char out[RECD_SESSION_KEY_MAX + 1], const char *key, size_t len,
                   size_t readable);

/* Decodes the body of a frame whose header passed wire_header_check. On success m holds a
 * message to recd_msg_free() and *has_time says whether the frame carried a time. -EPROTO or
 * -EBADMSG with why (nothing to free then), -ENOMEM. */
int wire_binary_decode(wire_env *env, const wire_header *h, const uint8_t *body, size_t len,
                       recd_msg *m, bool *has_time, char *why, size_t whylen);

/* Decodes one NDJSON line (without its '\n'); 1 when the line is blank (nothing decoded), 0 with
 * m filled, or -EBADMSG / -ENOMEM with why. */
int wire_ndjson_decode(wire_env *env, const uint8_t *line, size_t len, recd_msg *m, char *why,
                       size_t whylen);

/* The block path for the body of a STATE frame: 1 with out filled (pointing into body) when the
 * session's format sends bare blocks (wire hooks with a block_len); when it does not, 2 with the
 * frame decoded into m as wire_binary_decode would (only given m, and a session the receiver
 * holds: the head is not read nor the session looked up twice), else 0 (decode the frame with
 * wire_binary_decode then); or -EPROTO / -EBADMSG / -ENOMEM with why, exactly as
 * wire_binary_decode would report. On 1 the frame's session is noted as the previous one.
 * *has_time says whether the frame carried a time. */
int wire_binary_block_state(wire_env *env, const wire_header *h, const uint8_t *body, size_t len,
                          recd_wire_rec_state *out, recd_msg *m, bool *has_time, char *why,
                          size_t whylen);

/* Binary frame encoder. omit_key: write key_len 0 (the receiver uses the previous frame's session:
 * streams only). with_time: STATE/EVENT carry their time. */
int wire_binary_encode(const recd_msg *m, size_t max_frame, bool omit_key, bool with_time,
                       recd_buf *out);
/* NDJSON line encoder (recd_msg_to_json plus the wire's rules); omit_key drops "session". */
int wire_ndjson_encode(const recd_msg *m, size_t max_frame, bool omit_key, recd_buf *out);

/* Replaces bytes outside printable ASCII by '?' and cuts at WIRE_ERROR_TEXT_MAX; returns length. */
size_t wire_error_sanitize(const char *in, char *out, size_t outlen);

static inline size_t wire_max_frame(size_t max_frame)
{
    return max_frame ? max_frame : RECD_WIRE_DEFAULT_MAX_FRAME;
}

/* recd_why() is declared in recd/format_wire.h: the formats' payload codecs write errors too. */

#endif
