/* SPDX-License-Identifier: MIT */
/* The recd wire protocol: recd_msg carried as little-endian binary frames or as NDJSON lines, over
 * streams (TCP, Unix) and datagrams (UDP). No sockets here: decoders take bytes and yield messages,
 * encoders append bytes to a buffer, so the daemon, the client and the fuzzers share one parser.
 * Spec: docs/wire.md (frame layout, payloads, transports, error replies, URLs). */
#ifndef RECD_WIRE_H
#define RECD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/message.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_WIRE_DEFAULT_MAX_FRAME (64u * 1024u)
#define RECD_WIRE_MAGIC 0xD7u
#define RECD_WIRE_VERSION 1u
#define RECD_WIRE_HEADER_SIZE 8u
/* Sessions a decoder remembers by itself (opens seen on one connection without a format_of
 * callback, or inside one datagram). */
#define RECD_WIRE_LOCAL_SESSIONS_MAX 256u

typedef enum recd_wire_encoding {
    RECD_WIRE_AUTO = 0,   /* decided from the first bytes of a stream (or of each datagram) */
    RECD_WIRE_BINARY = 1,
    RECD_WIRE_NDJSON = 2
} recd_wire_encoding;

RECD_API const char *recd_wire_encoding_name(recd_wire_encoding e); /* "auto", "binary", "ndjson" */
/* "auto" / "binary" / "ndjson" -> 0 and *out; -EINVAL otherwise. */
RECD_API int recd_wire_encoding_parse(const char *name, recd_wire_encoding *out);

/* Which format a session was opened with; the decoder asks so it can read a state message of that
 * session (NDJSON state objects and binary state payloads do not repeat the format). key is len
 * bytes, NOT NUL-terminated (on the binary path it points into the frame). On the way to
 * on_rec_state its bytes are not checked yet, so it may be no valid key at all: compare it exactly
 * with the keys of the sessions you hold. Return RECD_MSG_FMT_NONE for an unknown session: the
 * decoder then reports an error (an invalid key as such). The receiver may set *handle (NULL on
 * entry) to its own record of the session, and only for a session it holds under exactly this key
 * (every opened key was checked): the decoder then takes the key as checked, and a .rec state is
 * handed to on_rec_state with that handle, valid during that call, so the receiver need not look
 * the key up again. May be NULL: the decoder then only knows the sessions opened earlier on the
 * same connection. */
typedef recd_msg_format (*recd_wire_format_fn)(void *ctx, const char *key, size_t len,
                                               void **handle);

/* What the wire says about a message beyond recd_msg itself. */
typedef struct recd_wire_meta {
    recd_wire_encoding encoding; /* BINARY or NDJSON */
    /* False when a binary STATE/EVENT frame left its time out: the receiver stamps the sample on
     * arrival (time_ms / tick in the message are 0 then). Always true for NDJSON states/events. */
    bool has_time;
    uint64_t index;  /* 1-based frame or line number on this stream / in this datagram */
    uint64_t offset; /* byte offset of the frame or line in the stream / datagram */
    /* The delivered message itself, which the decoder frees after on_msg returns: on_msg may take
     * its contents with recd_msg_move() instead of copying them. NULL for a message that points
     * into the bytes being decoded (a CARLA state from a binary frame, read in place): keep such a
     * message with recd_msg_copy(). */
    recd_msg *movable;
} recd_wire_meta;

/* Called once per decoded message; m and meta are valid only during the call. Return 0 to go on,
 * or a negative errno to stop (feed() returns it); err (may be written) says why, and the decoder
 * prefixes it with "frame N at byte X: ". */
typedef int (*recd_wire_msg_fn)(void *ctx, const recd_msg *m, const recd_wire_meta *meta,
                                char *err, size_t errlen);

/* A .rec sample (a STATE of a samp-onfoot or samp-vehicle session) from a binary frame, handed
 * over as the block it becomes instead of a decoded recd_msg: the receiver stores the bytes as they
 * are, with no field-by-field decode and re-encode. Checked exactly as on_msg's states are (the
 * payload size for the format, the u32 time, recd_rec_fields_check()). Everything points into the
 * frame being decoded: read it, do not keep it. */
typedef struct recd_wire_rec_state {
    const char *key; /* the session key: key_len bytes, NOT NUL-terminated */
    size_t key_len;
    void *handle;    /* what format_of set for this session, or NULL */
    recd_msg_format format; /* SAMP_ONFOOT or SAMP_VEHICLE */
    bool has_seq;
    bool save_now; /* the frame's save flag (recd_msg.save_now); in what was padding */
    uint64_t seq;
    uint32_t time_ms;      /* the frame's time (0 when meta->has_time is false) */
    const uint8_t *fields; /* the block after its time: block_len - 4 bytes */
    size_t block_len;      /* 72 (ONFOOT) or 67 (VEHICLE) */
} recd_wire_rec_state;

/* Like recd_wire_msg_fn, for .rec samples (meta->movable is NULL). */
typedef int (*recd_wire_rec_fn)(void *ctx, const recd_wire_rec_state *s,
                                const recd_wire_meta *meta, char *err, size_t errlen);

/* The message on_msg would have been given for s: fills a fresh m (nothing to free for a .rec
 * state). 0, or -EINVAL when s is not a .rec state of a consistent size and a valid key. */
RECD_API int recd_wire_rec_state_msg(const recd_wire_rec_state *s, recd_msg *m);

typedef struct recd_wire_decoder_config {
    recd_wire_encoding encoding; /* AUTO to sniff */
    size_t max_frame;            /* 0 = RECD_WIRE_DEFAULT_MAX_FRAME; also bounds NDJSON lines */
    recd_wire_format_fn format_of;
    recd_wire_msg_fn on_msg;
    void *ctx;
    /* Optional. When set, .rec states from binary frames go here instead of to on_msg (NDJSON
     * states, Recap states and every other message still go to on_msg, in stream order). */
    recd_wire_rec_fn on_rec_state;
} recd_wire_decoder_config;

typedef struct recd_wire_decoder recd_wire_decoder;

RECD_API int recd_wire_decoder_new(recd_wire_decoder **out, const recd_wire_decoder_config *cfg);
RECD_API void recd_wire_decoder_free(recd_wire_decoder *d);
/* Changes the size limit (0 = default) from the next message on, for a limit lowered while a
 * connection is open: a binary frame whose header arrived already keeps the limit it was checked
 * against; an unfinished NDJSON line is held to the new one. */
RECD_API void recd_wire_decoder_set_max_frame(recd_wire_decoder *d, size_t max_frame);

/* Stream input: feeds the next bytes of a connection. Every complete message is delivered through
 * on_msg before feed() returns; a partial frame or line is kept for the next call. Returns 0, or
 * -EPROTO (framing) / -EMSGSIZE (too large) / -EBADMSG (invalid content) / on_msg's error; err
 * says what and where, e.g. "frame 12 at byte 4096: state for unknown session 'p1'". Messages
 * before the bad one were delivered. After an error the decoder accepts nothing more (every later
 * call returns the same error). Cost is linear in the bytes fed, whatever the chunking. */
RECD_API int recd_wire_decoder_feed(recd_wire_decoder *d, const uint8_t *data, size_t len,
                                    char *err, size_t errlen);
/* End of stream: -EPROTO when a partial frame is pending. An NDJSON stream may end without a final
 * newline: that last line is decoded and delivered here. Else 0. */
RECD_API int recd_wire_decoder_finish(recd_wire_decoder *d, char *err, size_t errlen);
/* AUTO until known */
RECD_API recd_wire_encoding recd_wire_decoder_encoding(const recd_wire_decoder *d);
/* bytes held for a partial message */
RECD_API size_t recd_wire_decoder_pending(const recd_wire_decoder *d);

/* Datagram input: one UDP datagram holds one or more whole binary frames, or one or more whole
 * NDJSON lines (the last newline is optional). Independent of every other datagram: no session
 * continuation. All or nothing: the whole datagram is checked first and nothing is delivered when
 * any frame or line in it is bad. Same return convention as feed(); on_msg errors stop delivery. */
RECD_API int recd_wire_decode_datagram(const recd_wire_decoder_config *cfg, const uint8_t *data,
                                       size_t len, char *err, size_t errlen);

/* Appends m encoded as one binary frame or one NDJSON line. m->session must be set; for a binary
 * STATE or EVENT the message's format field must be set. A binary STATE/EVENT carries its time.
 * -EINVAL (unencodable), -EMSGSIZE (over max_frame; 0 = default), -ENOMEM. Nothing is appended on
 * error. */
RECD_API int recd_wire_encode(const recd_msg *m, recd_wire_encoding enc, size_t max_frame,
                              recd_buf *out);

/* Binary only: a STATE or EVENT frame without its time, for senders that let the daemon stamp the
 * sample on arrival. -EINVAL for other message types. */
RECD_API int recd_wire_encode_untimed(const recd_msg *m, size_t max_frame, recd_buf *out);

/* Appends the error reply a server sends before closing a TCP/Unix connection. Bytes of message
 * outside printable ASCII are replaced by '?', and it is cut to 1000 bytes. */
RECD_API int recd_wire_encode_error(recd_wire_encoding enc, const char *message, recd_buf *out);

/* Reads what a server sent back on a stream: 1 and the message copied into msg when data starts
 * with a complete error reply (binary frame or NDJSON {"type":"error","message":...} line), 0 when
 * len is 0, -EAGAIN when it is an incomplete reply, -EPROTO for anything else. */
RECD_API int recd_wire_decode_error(const uint8_t *data, size_t len, char *msg, size_t msglen);

/* ---- Transport URLs ------------------------------------------------------------------------- */

typedef enum recd_wire_transport {
    RECD_WIRE_TRANSPORT_NONE = 0,
    RECD_WIRE_TCP,
    RECD_WIRE_UDP,
    RECD_WIRE_UNIX, /* stream socket */
    RECD_WIRE_NATS  /* recd_client only: JetStream publishing (recd/client.h); no listener URL */
} recd_wire_transport;

#define RECD_WIRE_HOST_MAX 255
#define RECD_WIRE_PATH_MAX 107 /* sockaddr_un.sun_path minus the NUL on Linux */

typedef struct recd_wire_url {
    recd_wire_transport transport;
    char host[RECD_WIRE_HOST_MAX + 1]; /* tcp/udp: name or address, IPv6 without brackets */
    uint16_t port;                     /* tcp/udp; 0 is allowed here (listeners) */
    char path[RECD_WIRE_PATH_MAX + 1]; /* unix */
    recd_wire_encoding encoding;       /* AUTO when the URL has no ?encoding= */
} recd_wire_url;

/* tcp://HOST:PORT, udp://HOST:PORT, unix:///abs/path (or unix://rel/path), IPv6 as [::1]:7070,
 * optional ?encoding=binary|ndjson|auto. 0 or -EINVAL with err saying what is wrong. */
RECD_API int recd_wire_url_parse(const char *url, recd_wire_url *out, char *err, size_t errlen);
/* "tcp", "udp", "unix", "nats" */
RECD_API const char *recd_wire_transport_name(recd_wire_transport t);

#ifdef __cplusplus
}
#endif
#endif
