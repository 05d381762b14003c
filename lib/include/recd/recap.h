/* SPDX-License-Identifier: MIT */
/* Recap (.recap) recordings: header codec, table-driven action schema, a streaming encoder that
 * turns full per-tick player states into delta actions inside gzip members, and a tolerant,
 * validating decoder. Format spec: docs/formats/recap.md (this header follows it exactly). */
#ifndef RECD_RECAP_H
#define RECD_RECAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "recd/common.h"
#include "recd/gzip_members.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_RECAP_MAGIC "RCAP"
#define RECD_RECAP_VERSION 4          /* the version librecd writes and the newest it reads */
#define RECD_RECAP_PREAMBLE_SIZE 7    /* magic, version, u16 header length */
#define RECD_RECAP_TICK_MS 50         /* 20 ticks per second */
#define RECD_RECAP_EQUIPMENT_SLOTS 6  /* 0 main hand, 1 off hand, 2 feet, 3 legs, 4 chest, 5 head */
#define RECD_RECAP_INVENTORY_SLOTS 41 /* 0-8 hotbar, 9-35 storage, 36-39 armour, 40 off hand */
#define RECD_RECAP_SHORT_TOLERANCE 0.005 /* max per-channel error of SHORT/lossy-UNCHANGED moves */

#define RECD_RECAP_DEFAULT_KEYFRAME_INTERVAL 200u /* ticks (10 s) */
#define RECD_RECAP_DEFAULT_GZIP_LEVEL 6
#define RECD_RECAP_DEFAULT_MEMBER_LIMIT 65536u /* pending uncompressed bytes that force a flush */
#define RECD_RECAP_DEFAULT_MAX_MEMBER_SIZE (64u * 1024u * 1024u) /* decoder zip-bomb bound */

/* Action tags (one byte each in the frame data). */
typedef enum recd_recap_tag {
    RECD_RECAP_FULL_STATE = 0x01,
    RECD_RECAP_MOVEMENT = 0x02,
    RECD_RECAP_STATE_FLAGS = 0x03,
    RECD_RECAP_EQUIPMENT = 0x04,
    RECD_RECAP_SWING_ARM = 0x05,
    RECD_RECAP_USE_ITEM = 0x06,
    RECD_RECAP_BLOCK_PLACE = 0x07,
    RECD_RECAP_BLOCK_BREAK = 0x08,
    RECD_RECAP_DAMAGE = 0x09,
    RECD_RECAP_HEALTH = 0x0A,
    RECD_RECAP_NEXT_TICK = 0x0B,
    RECD_RECAP_SKIP_TICKS = 0x0C,
    RECD_RECAP_BLOCK_DAMAGE_START = 0x0D,
    RECD_RECAP_BLOCK_DAMAGE_ABORT = 0x0E,
    RECD_RECAP_SIGN_CHANGE = 0x0F,
    RECD_RECAP_GAME_MODE = 0x10,
    RECD_RECAP_CONTAINER_OPEN = 0x11,
    RECD_RECAP_CONTAINER_UPDATE = 0x12,
    RECD_RECAP_HAND_STATE = 0x13,
    RECD_RECAP_PROJECTILE = 0x14,
    RECD_RECAP_DEATH = 0x15,
    RECD_RECAP_POSE = 0x16,
    RECD_RECAP_RIPTIDE = 0x17,
    RECD_RECAP_BED_ENTER = 0x18,
    RECD_RECAP_BED_LEAVE = 0x19,
    RECD_RECAP_REDSTONE_INTERACTION = 0x1A,
    RECD_RECAP_CRITICAL_HIT = 0x1B,
    RECD_RECAP_ENCHANT_CRIT = 0x1C,
    RECD_RECAP_CHAT_MESSAGE = 0x1D,
    RECD_RECAP_ENTITY_INTERACTION = 0x1E,
    RECD_RECAP_VEHICLE_ENTER = 0x1F,
    RECD_RECAP_VEHICLE_LEAVE = 0x20,
    RECD_RECAP_MOB_STATES = 0x21,
    RECD_RECAP_POTION_EFFECTS = 0x22,
    RECD_RECAP_TOTEM = 0x23,
    RECD_RECAP_ARROWS_IN_BODY = 0x24,
    RECD_RECAP_EXPLOSION = 0x25,
    RECD_RECAP_PARTICLES = 0x26,
    RECD_RECAP_SIGN_EXTRAS = 0x27,
    RECD_RECAP_ITEM_DROP = 0x28,
    RECD_RECAP_CAPTURED_PACKETS = 0x29,
    RECD_RECAP_FULL_INVENTORY = 0x2A,
    RECD_RECAP_BLOCK_CHANGES = 0x2B,
    RECD_RECAP_EXTENSION = 0xFF /* u8 id, u32 length, bytes: actions readers carry without knowing */
} recd_recap_tag;

#define RECD_RECAP_TAG_FIRST 0x01
#define RECD_RECAP_TAG_LAST 0x2B

/* STATE_FLAGS bits (u16). */
#define RECD_RECAP_FLAG_ON_FIRE (1u << 0)
#define RECD_RECAP_FLAG_SNEAKING (1u << 1)
#define RECD_RECAP_FLAG_SPRINTING (1u << 3)
#define RECD_RECAP_FLAG_SWIMMING (1u << 4)
#define RECD_RECAP_FLAG_INVISIBLE (1u << 5)
#define RECD_RECAP_FLAG_GLOWING (1u << 6)
#define RECD_RECAP_FLAG_ELYTRA (1u << 7)
#define RECD_RECAP_FLAG_FLYING (1u << 8)
#define RECD_RECAP_FLAG_ON_GROUND (1u << 9)
#define RECD_RECAP_FLAG_SLEEPING (1u << 10)
#define RECD_RECAP_FLAG_RIPTIDE (1u << 11)
#define RECD_RECAP_FLAG_USING_ITEM (1u << 12)

/* ---- Values ------------------------------------------------------------------------------------ */

/* A byte span: UTF-8 text (not NUL-terminated) or opaque bytes. The decoder's spans point into
 * memory that stays valid only during the callback (or, for headers, as long as the input). */
typedef struct recd_recap_blob {
    const uint8_t *data;
    size_t len;
} recd_recap_blob;

static inline recd_recap_blob recd_recap_str(const char *s)
{
    recd_recap_blob b = {(const uint8_t *)s, s ? strlen(s) : 0};
    return b;
}

/* An ItemStack. An empty key is the empty slot (air); its other fields are then ignored and
 * decode as zero. */
typedef struct recd_recap_item {
    recd_recap_blob key;  /* material key, e.g. "minecraft:diamond_sword", <= 255 bytes UTF-8 */
    uint8_t count;
    uint8_t flags;        /* bit 0 enchantment glint; other bits kept verbatim */
    recd_recap_blob data; /* opaque component/NBT bytes, <= 65535 */
} recd_recap_item;

union recd_recap_value;

/* LIST value: count rows, each holding the element fields in table order, row-major
 * (values[row * elem_count + i]). */
typedef struct recd_recap_list {
    const union recd_recap_value *values;
    size_t count; /* rows, <= 65535 */
} recd_recap_list;

/* One field value; which member is valid follows the field's type in the tag table. */
typedef union recd_recap_value {
    uint32_t u;           /* U8, U16 */
    int64_t i;            /* I32 (must fit), I64 */
    float f32;            /* F32, bit-exact */
    double f64;           /* F64, bit-exact */
    recd_recap_blob blob; /* STR, TEXT, BYTES */
    recd_recap_item item; /* ITEM */
    recd_recap_list list; /* LIST */
} recd_recap_value;

/* An event action (a tag of kind EVENT, including EXTENSION): tag + its fields in table order. */
typedef struct recd_recap_event {
    uint8_t tag;
    size_t field_count; /* must equal the table's field_count */
    const recd_recap_value *fields;
} recd_recap_event;

/* The full player state of one tick. pos/rot/vel are the nine MOVEMENT channels. */
typedef struct recd_recap_state {
    double pos[3]; /* x, y, z (world coordinates) */
    double rot[3]; /* yaw, pitch, head yaw (degrees) */
    double vel[3]; /* velocity x, y, z (blocks per tick) */
    uint16_t flags; /* RECD_RECAP_FLAG_* */
    uint8_t pose;
    uint8_t game_mode; /* 0 survival, 1 creative, 2 adventure, 3 spectator */
    uint8_t hand_state;
    float health;
    float absorption;
    recd_recap_item equipment[RECD_RECAP_EQUIPMENT_SLOTS];
    recd_recap_item inventory[RECD_RECAP_INVENTORY_SLOTS];
} recd_recap_state;

/* ---- Schema table ------------------------------------------------------------------------------ */

typedef enum recd_recap_ftype {
    RECD_RECAP_T_U8 = 1,
    RECD_RECAP_T_U16,
    RECD_RECAP_T_I32,
    RECD_RECAP_T_I64,
    RECD_RECAP_T_F32,
    RECD_RECAP_T_F64,
    RECD_RECAP_T_STR,      /* u8 length + UTF-8 */
    RECD_RECAP_T_TEXT,     /* u16 length + UTF-8 */
    RECD_RECAP_T_BYTES,    /* u32 length + bytes */
    RECD_RECAP_T_ITEM,     /* ItemStack */
    RECD_RECAP_T_LIST,     /* u16 count + rows of elem fields (no nested lists) */
    RECD_RECAP_T_MOVEMENT  /* MOVEMENT's mode-byte payload; only in the MOVEMENT row */
} recd_recap_ftype;

typedef struct recd_recap_field {
    const char *name;
    recd_recap_ftype type;
    const struct recd_recap_field *elem; /* LIST only */
    size_t elem_count;
} recd_recap_field;

typedef enum recd_recap_kind {
    RECD_RECAP_KIND_STATE = 1, /* written by the encoder from recd_recap_state deltas */
    RECD_RECAP_KIND_FRAMING,   /* NEXT_TICK, SKIP_TICKS */
    RECD_RECAP_KIND_EVENT      /* passed in and out as recd_recap_event */
} recd_recap_kind;

typedef struct recd_recap_tag_info {
    uint8_t tag;
    const char *name; /* "FULL_STATE", ... */
    recd_recap_kind kind;
    uint8_t min_version; /* first format version that defines the tag */
    size_t field_count;
    const recd_recap_field *fields;
    const char *summary;
} recd_recap_tag_info;

/* Table row of a tag 0x01..0x2B or 0xFF; NULL for anything else. Read-only, static storage. */
RECD_API const recd_recap_tag_info *recd_recap_tag_info_get(uint8_t tag);
/* Row by name ("CHAT_MESSAGE"); NULL when unknown. */
RECD_API const recd_recap_tag_info *recd_recap_tag_by_name(const char *name);
RECD_API const char *recd_recap_ftype_name(recd_recap_ftype t); /* "u8", "str", "list", ... */

/* 0 when ev is a well-formed event (known EVENT tag, field count, integer ranges, UTF-8, lengths),
 * else -EINVAL, -ERANGE or -EMSGSIZE. */
RECD_API int recd_recap_event_check(const recd_recap_event *ev);
/* Field-by-field equality, floats compared bit for bit. */
RECD_API bool recd_recap_event_equal(const recd_recap_event *a, const recd_recap_event *b);
RECD_API bool recd_recap_item_equal(const recd_recap_item *a, const recd_recap_item *b);

/* ---- Header ------------------------------------------------------------------------------------ */

typedef struct recd_recap_header {
    uint8_t version;             /* 1..4; the encoder writes 0 as 4 */
    recd_recap_blob name;        /* recording name (str: truncated to 255 bytes on a code point) */
    recd_recap_blob player_name;
    recd_recap_blob player_uuid;
    recd_recap_blob world_name;
    double origin[3];
    int64_t start_ms, end_ms;    /* epoch milliseconds */
    uint32_t frame_count;        /* ticks; 0 = not finalized */
    int32_t weather;             /* v2+ */
    int64_t time_of_day;         /* v2+ */
    /* Extension records (docs/formats/recap.md "Header extensions"). Empty blobs are omitted. */
    recd_recap_blob skin_texture;   /* record 1 */
    recd_recap_blob skin_signature; /* record 2 */
    bool has_encoder_params;        /* record 3 */
    uint32_t keyframe_interval;
    uint8_t gzip_level;
    uint32_t member_limit;
    uint8_t compressor;          /* record 4 (recd_gzip_compressor); absent = 0, zlib */
    recd_recap_blob ext_unknown; /* records newer than this reader, verbatim (they sort last) */
} recd_recap_header;

/* version 4, everything else zero/empty */
RECD_API void recd_recap_header_init(recd_recap_header *h);

/* Appends the encoded header (preamble included) to out. -EINVAL for bad UTF-8 or malformed
 * ext_unknown, -EMSGSIZE when the header body exceeds 65535 bytes. */
RECD_API int recd_recap_header_encode(const recd_recap_header *h, recd_buf *out);

/* Parses a header; blobs point into buf. Returns the header size (7 + header length, where frame
 * data begins) or a negative errno (-EAGAIN: buf too short, -EBADMSG: invalid; a problem is added
 * to report, which may be NULL). */
RECD_API int recd_recap_header_decode(const uint8_t *buf, size_t len, recd_recap_header *h,
                                      recd_report *report);

/* File offsets of the end timestamp (i64) and frame count (u32) of the encoded h. */
RECD_API void recd_recap_header_patch_offsets(const recd_recap_header *h, uint64_t *end_ms_offset,
                                              uint64_t *frame_count_offset);
/* The epoch time `ticks` ticks after start_ms, held at INT64_MIN/INT64_MAX instead of overflowing:
 * a header's start comes from a file or a peer and may be any value. */
RECD_API int64_t recd_recap_time_after(int64_t start_ms, int64_t ticks);

/* Rewrites end timestamp and frame count inside an encoded file/header buffer. */
RECD_API int recd_recap_header_patch(uint8_t *buf, size_t len, uint32_t frame_count,
                                     int64_t end_ms);

/* ---- Encoder ----------------------------------------------------------------------------------- */

typedef struct recd_recap_encoder_options {
    uint32_t keyframe_interval; /* FULL_STATE at least every N ticks; 0 = default 200 */
    uint8_t gzip_level;         /* 1..9; 0 = default 6 */
    uint32_t member_limit;      /* auto-flush at this many pending bytes; 0 = default 64 KiB */
    uint8_t compressor;         /* recd_gzip_compressor of the members; 0 = zlib */
    recd_gzip_deflater *deflater; /* optional compressor shared between encoders (one thread) */
    bool defer_compression;       /* never compress inside tick(): the caller takes raw members
                                     with recd_recap_encoder_take_member() (member_limit unused) */
} recd_recap_encoder_options;

/* Encoder options recorded in a decoded header (defaults where it has none), so a re-encode
 * reproduces the same bytes. */
RECD_API void recd_recap_encoder_options_from_header(const recd_recap_header *h,
                                                     recd_recap_encoder_options *opt);

typedef struct recd_recap_encoder recd_recap_encoder;

/* Creates an encoder and writes the header through sink (the encoder's options are stored in the
 * header's encoder record; h's own encoder fields are ignored). opt may be NULL (defaults). */
RECD_API int recd_recap_encoder_new(recd_recap_encoder **out, const recd_recap_header *h,
                                    const recd_recap_encoder_options *opt, recd_sink sink);
/* Appends the header bytes recd_recap_encoder_new() writes for h and opt, e.g. to patch a part's
 * header at its end without keeping a copy of it. 0 or a negative errno. */
RECD_API int recd_recap_encoder_header(const recd_recap_header *h,
                                       const recd_recap_encoder_options *opt, recd_buf *out);

/* Feeds the full state of tick `tick` (caller's numbering; the first tick fed is file tick 0) and
 * its events (n may be 0). Ticks strictly increase (-ERANGE otherwise); ticks skipped over are
 * recorded as unchanged. state may be NULL after the first tick: unchanged. Bad events: -EINVAL.
 * On error nothing of this tick is recorded. */
RECD_API int recd_recap_encoder_tick(recd_recap_encoder *e, uint64_t tick,
                                     const recd_recap_state *state, const recd_recap_event *events,
                                     size_t n);

/* Ends the current gzip member after the last tick fed (no-op when nothing is pending). */
RECD_API int recd_recap_encoder_flush(recd_recap_encoder *e);
/* Like flush, but first records ticks up to end_tick (exclusive) as unchanged; end_tick must be
 * greater than the last tick fed (-ERANGE). Replays a decoded member end. Before the first tick
 * only end_tick 0 is accepted (what a decoder reports for an empty leading member): a no-op. */
RECD_API int recd_recap_encoder_flush_at(recd_recap_encoder *e, uint64_t end_tick);

/* Ends the current gzip member like flush(), but appends the member's uncompressed action bytes to
 * raw instead of compressing them, so the caller can compress them elsewhere (a writer thread) with
 * recd_gzip_member_write() at the encoder's level and append the result to the file: the file is
 * then byte-identical to what flush() writes. Returns the number of bytes appended (0 when nothing
 * was pending) or a negative errno. */
RECD_API int recd_recap_encoder_take_member(recd_recap_encoder *e, recd_buf *raw);
/* A FULL_STATE keyframe of a member: where a reader can start (a seek point, recd/format.h: time
 * tick, aux ticks_before, offset the member's, which only the member's writer learns). */
typedef struct recd_recap_keyframe {
    uint64_t tick;         /* file tick of the keyframe */
    uint64_t ticks_before; /* file ticks in the members before its member */
} recd_recap_keyframe;
/* take_member(), also appending the member's keyframes to keyframes (recd_recap_keyframe structs
 * in tick order), so the daemon keeps a seek index without reading the file back. Not exported
 * (no RECD_API): for recd, which links librecd statically. */
int recd_recap_encoder_take_member_keyframes(recd_recap_encoder *e, recd_buf *raw,
                                             recd_buf *keyframes);
/* Uncompressed bytes of the open member (what take_member() would hand over, skips aside). */
RECD_API size_t recd_recap_encoder_pending(const recd_recap_encoder *e);
/* The state a reader holds after the last tick recorded (movement as the reader reconstructs it),
 * e.g. to open the next part with. Items view the encoder's memory until the encoder next changes.
 * -EINVAL before the first tick. Still valid after finish(). */
RECD_API int recd_recap_encoder_state(const recd_recap_encoder *e, recd_recap_state *out);

typedef struct recd_recap_finish_info {
    uint64_t frame_count;        /* ticks recorded */
    int64_t end_ms;              /* start_ms + frame_count * 50 */
    uint64_t end_ms_offset;      /* file offsets for pwrite() of the header patch */
    uint64_t frame_count_offset;
    uint64_t bytes_written;      /* total bytes given to the sink (only the header when the
                                    caller takes raw members) */
    uint64_t members;            /* gzip members written */
} recd_recap_finish_info;

/* Flushes and reports what the header patch needs. The encoder accepts nothing more afterwards. */
RECD_API int recd_recap_encoder_finish(recd_recap_encoder *e, recd_recap_finish_info *info);
RECD_API void recd_recap_encoder_free(recd_recap_encoder *e);
/* The part of it that holds output on its way (the open member, compressed output, the item
 * scratch of the last tick): everything but the item slots, the reader's view. */
RECD_API size_t recd_recap_encoder_buffer_memory(const recd_recap_encoder *e);
/* Frees the scratch buffers (and the pending-output buffer when nothing is pending) and packs the
 * item slots tightly: for sessions that have gone quiet. */
RECD_API void recd_recap_encoder_trim(recd_recap_encoder *e);

/* ---- Decoder ----------------------------------------------------------------------------------- */

/* Callbacks may be NULL. A non-zero return stops decoding and becomes recd_recap_decode()'s result.
 * File ticks are numbered from 0. Everything passed is valid only during the call. */
typedef struct recd_recap_callbacks {
    int (*on_header)(void *ctx, const recd_recap_header *h);
    /* A tick that carried actions: the reconstructed full state after them, and its events. */
    int (*on_tick)(void *ctx, uint64_t tick, const recd_recap_state *state,
                   const recd_recap_event *events, size_t n);
    /* count ticks from first_tick on carried no actions (state unchanged). */
    int (*on_skip)(void *ctx, uint64_t first_tick, uint64_t count);
    /* A complete gzip member ended after end_tick ticks (exclusive) at file offset end_offset. */
    int (*on_member_end)(void *ctx, uint64_t end_tick, uint64_t end_offset);
    void *ctx;
} recd_recap_callbacks;

typedef struct recd_recap_decode_options {
    size_t max_member_size; /* inflated bytes per member; 0 = default 64 MiB */
} recd_recap_decode_options;

typedef struct recd_recap_decode_result {
    bool header_valid;
    recd_recap_header header; /* blobs point into the input */
    uint64_t data_offset;     /* 7 + header length */
    uint64_t ticks;           /* ticks recovered from complete, valid members */
    uint64_t members;         /* complete, valid members */
    uint64_t valid_end;       /* file offset after the last good member: repair keeps this prefix */
    bool truncated;           /* bytes after valid_end (cut or corrupt member) were ignored */
    uint64_t actions;         /* actions decoded */
} recd_recap_decode_result;

/* Decodes a whole file. Problems go to report (may be NULL). Returns 0 when the file is complete
 * and valid (no RECD_SEV_ERROR problem), -EBADMSG when it is not (result still says what was
 * recovered), another negative errno (-ENOMEM) or a callback's non-zero value. opt/cb may be NULL. */
RECD_API int recd_recap_decode(const uint8_t *buf, size_t len, const recd_recap_decode_options *opt,
                               const recd_recap_callbacks *cb, recd_recap_decode_result *result,
                               recd_report *report);

/* Validation for `rectool verify`: decode without callbacks. */
RECD_API int recd_recap_verify(const uint8_t *buf, size_t len, recd_recap_decode_result *result,
                               recd_report *report);

/* ---- Messages (recd/message.h) ------------------------------------------------------------ */

/* Recap session metadata: every header field, so an import reproduces the header exactly.
 * Blobs point into storage owned by this struct. */
typedef struct recd_msg_recap_open {
    recd_recap_header header; /* encoder options: has_encoder_params + the three fields */
    bool has_start_time;      /* else the open message's start_time, else 0 */
    bool has_end_time;        /* else close's end_time, else start + ticks x 50 ms */
    bool has_frame_count;     /* else the number of ticks written */
    void *storage;
} recd_msg_recap_open;

/* The full player state at a tick that carried actions. Item blobs point into the same
 * allocation, after the struct; storage is NULL (kept so the layout does not change). */
typedef struct recd_msg_recap_state {
    uint64_t tick;
    recd_recap_state state;
    void *storage;
} recd_msg_recap_state;

/* A non-state action at a tick. Values, lists and blobs point into storage. */
typedef struct recd_msg_recap_event {
    uint64_t tick;
    recd_recap_event event;
    void *storage;
} recd_msg_recap_event;

struct recd_msg; /* recd/message.h, which includes this header */

/* Builders for Recap messages; each deep-copies what it is given (blobs included) into m, which
 * must be freshly initialised. 0, -EINVAL (bad value) or -ENOMEM. */
RECD_API int recd_msg_set_recap_open(struct recd_msg *m, const recd_recap_header *h);
RECD_API int recd_msg_set_recap_state(struct recd_msg *m, uint64_t tick,
                                      const recd_recap_state *s);
RECD_API int recd_msg_set_recap_event(struct recd_msg *m, uint64_t tick,
                                      const recd_recap_event *ev);

#ifdef __cplusplus
}
#endif
#endif
