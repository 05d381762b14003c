/* SPDX-License-Identifier: MIT */
/* Internal: the wire hooks of every format (recd/format_wire.h), found through the format table:
 * by message format, by the open's format byte, and the inline check of a bare-block state that
 * the decoder's block path runs on every sample. The frame codec (wire_binary_decode.c,
 * wire_binary_encode.c) only looks hooks up; each format defines its own in its folder. */
#ifndef RECD_WIRE_FORMATS_H
#define RECD_WIRE_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "recd/format.h"
#include "recd/format_list.h"
#include "recd/format_wire.h"
#include "recd/message.h"

typedef struct recd_format_wire wire_format;

/* The hooks of f (its descriptor's, through the one format list), or NULL for RECD_MSG_FMT_NONE,
 * values outside the enum and formats without hooks. Inline: a known format costs one compare and
 * two loads on the block path. */
static inline const wire_format *wire_format_of(recd_msg_format f)
{
    const recd_format *d = recd_format__by_msg(f);
    return d ? d->wire : NULL;
}

/* recd_wire_meta.movable for m, decoded from a binary frame (binary) or a line: NULL for a state
 * that points into the frame (state_borrows), which only a copy may keep. */
static inline recd_msg *wire_msg_movable(recd_msg *m, bool binary)
{
    const wire_format *w;
    if (binary && m->type == RECD_MSG_STATE && (w = wire_format_of(m->format)) && w->state_borrows)
        return NULL;
    return m;
}

/* The hooks that encode m: its format's, or for an event without a format those of the format
 * whose model owns such events (message/msg_formats.h). */
const wire_format *wire_format_of_msg(const recd_msg *m);
/* The hooks whose open format byte is code, or NULL. */
const wire_format *wire_format_by_code(uint8_t code);
/* "1 NAME, 2 NAME, ..." (by byte) for the error about an unknown format byte. */
void wire_format_codes_text(char *out, size_t outlen);
/* "A, B and C": the formats whose sessions have events, for the error about an event. */
void wire_format_event_names(char *out, size_t outlen);

/* Checks a bare-block state payload (fields, len bytes: the block without its time) in place
 * against hooks w (block_len set): its size, a time that fits the block's u32 and the format's
 * field check. 0, or -EBADMSG with why. Inline: it runs on every sample of the block path. */
static inline int wire_block_check(const wire_format *w, const uint8_t *fields, size_t len,
                                   uint64_t time, char *why, size_t whylen)
{
    int check = 0;
    if (len != (size_t)w->block_len - 4 || time > UINT32_MAX ||
        (check = w->block_fields_check(fields)) < 0)
        return w->block_refuse(w, len, time, check, why, whylen);
    return 0;
}

#endif
