/* SPDX-License-Identifier: MIT */
/* Internal: the table of message formats on the wire, one entry per recd_msg_format with what
 * differs between them in binary frames: the open's format byte and the payload codecs. Each
 * entry lives with its format's payloads (wire_samp.c, wire_recap.c, wire_carla.c); the frame
 * codec (wire_binary_decode.c, wire_binary_encode.c) only looks entries up. */
#ifndef RECD_WIRE_FORMATS_H
#define RECD_WIRE_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"

typedef struct wire_format {
    recd_msg_format format;
    uint8_t code; /* the open's format byte (docs/wire.md section 2.2) */
    /* A state payload that is a bare .rec block without its u32 time: the block's type and size
     * (it may take the decoder's .rec path, recd_wire_rec_state). 0 for every other format. */
    recd_rec_type rec_block_type;
    uint8_t rec_block_len;
    /* Decoders fill m (type and format already set) from the len bytes at p: 0, -EBADMSG with
     * why, or -ENOMEM. open_read gets what follows the auth token (the format's own header). */
    int (*open_read)(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen);
    int (*state_read)(const uint8_t *p, size_t len, uint64_t time, recd_msg *m, char *why,
                      size_t whylen);
    int (*event_read)(const uint8_t *p, size_t len, uint64_t time, recd_msg *m, char *why,
                      size_t whylen); /* NULL: the format has no events */
    /* Encoders append m's payload: 0, -EINVAL (m cannot be sent), -ENOMEM. open_write may be NULL
     * (nothing follows the token). */
    int (*open_write)(const recd_msg *m, recd_buf *out);
    int (*state_write)(const recd_msg *m, recd_buf *out);
    int (*event_write)(const recd_msg *m, recd_buf *out); /* NULL: the format has no events */
    /* The time field of a state or event frame (a .rec ms, a Recap tick; 0 where the payload
     * holds its own time): 0 or -EINVAL. */
    int (*msg_time)(const recd_msg *m, uint64_t *t);
} wire_format;

/* Room for every recd_msg_format value: a constant bound keeps wire_format_of() to one compare
 * and one load on the .rec path (wire_formats.c checks that the enum fits). */
#define WIRE_FORMAT_SLOTS 8

/* The entries, in wire_formats.c, indexed by recd_msg_format (NULL: NONE and unused slots). */
extern const wire_format *const wire_format_table[WIRE_FORMAT_SLOTS];

/* The entry of f, or NULL for RECD_MSG_FMT_NONE and values outside the enum. */
static inline const wire_format *wire_format_of(recd_msg_format f)
{
    return (size_t)f < WIRE_FORMAT_SLOTS ? wire_format_table[f] : NULL;
}

/* The entry that encodes m: its format's, where an event without a format is a Recap event. */
const wire_format *wire_format_of_msg(const recd_msg *m);
/* The entry whose open format byte is code, or NULL. */
const wire_format *wire_format_by_code(uint8_t code);
/* "1 samp-onfoot, 2 samp-vehicle, ..." for the error about an unknown format byte. */
void wire_format_codes_text(char *out, size_t outlen);

#endif
