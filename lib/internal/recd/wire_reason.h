/* SPDX-License-Identifier: MIT */
/* Why a wire decoder refused its input, as a kind a receiver can count (the error text says the
 * details): the errno gives framing, too large or a bad message; the decoder notes the kinds of
 * bad message the errno cannot tell apart (not JSON or UTF-8, a session it does not know). */
#ifndef RECD_WIRE_REASON_H
#define RECD_WIRE_REASON_H

#include <stddef.h>
#include <stdint.h>

#include "recd/wire.h"

typedef enum recd_wire_reason {
    RECD_WIRE_REASON_NONE = 0,        /* noted: nothing beyond the errno */
    RECD_WIRE_REASON_FRAMING,         /* -EPROTO: broken framing or encoding */
    RECD_WIRE_REASON_TOO_LARGE,       /* -EMSGSIZE: a frame or line over max_frame */
    RECD_WIRE_REASON_SYNTAX,          /* not valid JSON, or invalid UTF-8 */
    RECD_WIRE_REASON_SCHEMA,          /* -EBADMSG otherwise: well formed, wrong fields */
    RECD_WIRE_REASON_UNKNOWN_SESSION, /* a message for a session no open was seen for */
    RECD_WIRE_REASON_OTHER,           /* any other errno (-ENOMEM, a receiver's own code) */
} recd_wire_reason;

/* The reason of an error rc, given what the decoder noted (RECD_WIRE_REASON_NONE: nothing). */
recd_wire_reason recd_wire_reason_of(int rc, recd_wire_reason noted);

/* What the decoder noted about its error (RECD_WIRE_REASON_NONE when it has none, or its error
 * came from the errno alone): pass it to recd_wire_reason_of() with the error's rc. */
recd_wire_reason recd_wire_decoder_reason(const recd_wire_decoder *d);

/* recd_wire_decode_datagram(), and *noted set as recd_wire_decoder_reason() would be. */
int recd_wire_decode_datagram_noted(const recd_wire_decoder_config *cfg, const uint8_t *data,
                                    size_t len, char *err, size_t errlen,
                                    recd_wire_reason *noted);

#endif
