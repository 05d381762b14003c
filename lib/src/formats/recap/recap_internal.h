/* SPDX-License-Identifier: MIT */
/* Internal pieces shared by the Recap codec files: bounded byte cursor, UTF-8 rules, the
 * table-driven payload codec, item slots and the MOVEMENT channel codec. */
#ifndef RECD_RECAP_INTERNAL_H
#define RECD_RECAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/recap.h"

#define RECAP_CHANNELS 9
#define RECAP_STR_MAX 255u
#define RECAP_TEXT_MAX 65535u
#define RECAP_ITEM_DATA_MAX 65535u
#define RECAP_LIST_MAX 65535u

/* Movement channel modes (2 bits each). */
enum { RECAP_MODE_UNCHANGED = 0, RECAP_MODE_SHORT = 1, RECAP_MODE_FLOAT = 2, RECAP_MODE_DOUBLE = 3 };

/* Why a payload did not parse; maps to a problem code. */
typedef enum recap_perr {
    RECAP_OK = 0,
    RECAP_E_TRUNCATED, /* truncated-payload */
    RECAP_E_UTF8,      /* bad-utf8 */
    RECAP_E_MOVEMENT,  /* bad-movement */
    RECAP_E_NOMEM
} recap_perr;

/* A read cursor that never runs past len. */
typedef struct recap_cur {
    const uint8_t *p;
    size_t len, pos;
} recap_cur;

static inline bool cur_has(const recap_cur *c, size_t n) { return c->len - c->pos >= n; }

/* UTF-8 (recap_utf8.c). */
bool recap_utf8_valid(const uint8_t *s, size_t n);
/* Longest prefix of valid UTF-8 s that is <= max bytes and ends on a code point boundary. */
size_t recap_utf8_fit(const uint8_t *s, size_t n, size_t max);

/* Growable array of values plus list fix-ups, so parsed values can live in one reallocated block
 * and list pointers are set once parsing is done (recap_values.c). */
typedef struct recap_arena {
    recd_recap_value *v;
    size_t len, cap;
    size_t *fix; /* pairs: index of a LIST value, index of its first row value */
    size_t nfix, capfix;
} recap_arena;

void recap_arena_reset(recap_arena *a);
void recap_arena_free(recap_arena *a);
/* Drops the values pushed since the arena had len values and nfix fix-ups. */
void recap_arena_truncate(recap_arena *a, size_t len, size_t nfix);
/* Appends n zeroed values; returns the index of the first or (size_t)-1 when out of memory. */
size_t recap_arena_push(recap_arena *a, size_t n);
/* Points LIST values (fix-ups from index `from` of the fix array on) at their rows; call with 0
 * before handing values out, since pushes may move the array. */
void recap_arena_fixup(recap_arena *a, size_t from);

/* Parses fields[0..n) into arena slots first..first+n (already pushed). Blobs point into c->p. */
recap_perr recap_fields_parse(recap_cur *c, const recd_recap_field *fields, size_t n,
                              recap_arena *a, size_t first);
/* Encodes values for fields[0..n): truncates str/text on a code point, 0 or -EINVAL/-ERANGE/
 * -EMSGSIZE/-ENOMEM. */
int recap_fields_write(recd_buf *out, const recd_recap_field *fields, size_t n,
                       const recd_recap_value *vals);
/* Checks values without writing. */
int recap_fields_check(const recd_recap_field *fields, size_t n, const recd_recap_value *vals);

/* ItemStack wire codec. */
int recap_item_write(recd_buf *out, const recd_recap_item *it);
recap_perr recap_item_parse(recap_cur *c, recd_recap_item *it);
/* recap_item_parse into an item that is all zeroes already (a fresh state's): not cleared first. */
recap_perr recap_item_parse_zeroed(recap_cur *c, recd_recap_item *it);

/* The 47 item slots a reader holds (equipment 0..5, then inventory 0..40), as canonical item
 * encodings packed into one buffer: a player's whole inventory costs one allocation, which keeps
 * thousands of idle sessions small. An empty slot has length 0. */
#define RECAP_SLOTS (RECD_RECAP_EQUIPMENT_SLOTS + RECD_RECAP_INVENTORY_SLOTS)

typedef struct recap_slots {
    uint8_t *bytes;
    uint64_t held; /* bit i: slot i holds an item (len[i] != 0) */
    uint32_t used, cap, live; /* bytes appended, allocated, and still held by a slot */
    uint32_t off[RECAP_SLOTS], len[RECAP_SLOTS];
} recap_slots;

/* Stores enc (a canonical item encoding) in slot i; the single byte 0x00 (empty) clears it.
 * enc may not point into t. May move every slot's bytes: views taken before are invalid. */
int recap_slots_set(recap_slots *t, int i, const uint8_t *enc, size_t len);
bool recap_slots_equals(const recap_slots *t, int i, const uint8_t *enc, size_t len);
const uint8_t *recap_slots_enc(const recap_slots *t, int i); /* NULL when empty */
void recap_slots_item(const recap_slots *t, int i, recd_recap_item *it); /* view into t */
void recap_slots_clear(recap_slots *t);   /* empties every slot, keeps the buffer */
void recap_slots_compact(recap_slots *t); /* drops replaced bytes and slack */
void recap_slots_free(recap_slots *t);

/* MOVEMENT channel codec (recap_movement.c). */
typedef struct recap_choice {
    int mode;
    int16_t q;   /* SHORT */
    float f;     /* FLOAT */
    double rec;  /* what the reader will hold afterwards */
} recap_choice;

void recap_channel_choose(double r, double v, recap_choice *out);

/* lround(d) for |d| < 32767.5 (halves away from zero) without the libm call: the truncation and
 * d minus it are exact at that size, so only the fraction decides. */
static inline long recap_round_short(double d)
{
    long t = (long)d;
    double frac = d - (double)t;
    return t + (frac >= 0.5) - (frac <= -0.5);
}
/* Appends a MOVEMENT action (tag included) moving r towards v, updating r to the reader's
 * values; appends nothing when every channel is UNCHANGED. Returns 1 when written, 0 when not,
 * -ENOMEM. */
int recap_movement_write(recd_buf *out, double r[RECAP_CHANNELS], const double v[RECAP_CHANNELS]);
/* Parses a MOVEMENT payload and applies it to r (when r is not NULL). */
recap_perr recap_movement_parse(recap_cur *c, double r[RECAP_CHANNELS]);

/* Tag 0x01..0x2B or 0xFF. */
static inline bool recap_tag_known(uint8_t tag)
{
    return (tag >= RECD_RECAP_TAG_FIRST && tag <= RECD_RECAP_TAG_LAST) || tag == RECD_RECAP_EXTENSION;
}

/* Header extension record types. */
enum { RECAP_EXT_SKIN_TEXTURE = 1, RECAP_EXT_SKIN_SIGNATURE = 2, RECAP_EXT_ENCODER = 3,
       RECAP_EXT_COMPRESSOR = 4, RECAP_EXT_LAST_KNOWN = 4 };
#define RECAP_EXT_ENCODER_SIZE 9

/* The encoder's settings and footprint, for the tests (not exported: no embedder needs them). */
/* The gzip level the encoder records in its header and uses for its members. */
uint8_t recd_recap_encoder_gzip_level(const recd_recap_encoder *e);
/* The compressor (recd_gzip_compressor) it records in its header and uses for its members. */
recd_gzip_compressor recd_recap_encoder_compressor(const recd_recap_encoder *e);
/* Heap bytes the encoder holds now. */
size_t recd_recap_encoder_memory(const recd_recap_encoder *e);

/* Decoding from a gzip member in the middle of a file (seeking, recap_seek.c). */
typedef struct recap_resume {
    uint64_t offset;    /* file offset of the member to start at (>= the frame data's) */
    uint64_t tick;      /* ticks before that member */
    bool wait_keyframe; /* deliver no tick, skip or member end before the first FULL_STATE */
    /* Each FULL_STATE: its tick, the offset of its member and the ticks before that member.
     * Non-zero stops decoding and is returned. NULL: none. */
    int (*on_keyframe)(void *ctx, uint64_t tick, uint64_t member_offset, uint64_t member_tick);
    /* Deliver nothing before this tick either: the seek point's keyframe, which a member that
     * holds several keyframes reaches after its first (0: all). */
    uint64_t deliver_from;
} recap_resume;

/* recd_recap_decode from rs's member on: the header is read (and on_header called) as usual,
 * the frame count is not checked (the ticks before rs are not counted). */
int recap_decode_resume(const uint8_t *buf, size_t len, const recap_resume *rs,
                        const recd_recap_callbacks *cb, recd_recap_decode_result *result);

#endif
