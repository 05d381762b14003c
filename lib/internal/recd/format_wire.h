/* SPDX-License-Identifier: MIT */
/* Internal: a format's hooks on the binary wire (docs/wire.md section 2), hung off its entry in
 * the format table (recd_format.wire) and defined in its folder (lib/src/formats/NAME/NAME_wire.c):
 * the open's format byte, the open / state / event payload codecs, the time a frame carries and,
 * for a state that is a bare fixed-size block, that block's size and checks. The frame codec in
 * lib/src/wire finds them by walking the table (wire/wire_formats.h). */
#ifndef RECD_FORMAT_WIRE_H
#define RECD_FORMAT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/why.h" /* recd_why: the codecs' error text (librecd-internal users only) */
#include "recd/message.h"

struct recd_format_wire {
    recd_msg_format format; /* the message format whose sessions these hooks serve */
    uint8_t code;           /* the open's format byte (docs/wire.md section 2.2) */
    /* A state payload that is a bare block without its u32 time: the block's size (the payload is
     * block_len - 4 bytes), 0 for every other format. Such a state may take the decoder's block
     * path (recd_wire_rec_state): block_fields_check runs on every sample there, so it is the
     * whole check of the fields; block_refuse writes the error once size, time or fields fail
     * (check: what block_fields_check returned, 0 when it was not called). */
    uint8_t block_len;
    int (*block_fields_check)(const uint8_t *fields);
    int (*block_refuse)(const struct recd_format_wire *w, size_t len, uint64_t time, int check,
                        char *why, size_t whylen);
    /* Fills m's state from checked fields and the block's time. */
    void (*block_decode)(uint32_t time, const uint8_t *fields, recd_msg *m);
    /* Decoders fill m (type and format already set) from the len bytes at p: 0, -EBADMSG with
     * why, or -ENOMEM. open_read gets what follows the auth token (the format's own header). */
    int (*open_read)(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen);
    int (*state_read)(const uint8_t *p, size_t len, uint64_t time, recd_msg *m, char *why,
                      size_t whylen);
    /* Optional: state_read into a block the receiver lends (recd/wire_lend.h), which the hook
     * owns from the call on: it reuses the block for m or frees it. */
    int (*state_read_lent)(const uint8_t *p, size_t len, uint64_t time, void *lent, recd_msg *m,
                           char *why, size_t whylen);
    int (*event_read)(const uint8_t *p, size_t len, uint64_t time, recd_msg *m, char *why,
                      size_t whylen); /* NULL: the format has no events */
    /* state_read leaves the payload's bytes where they are: the state points into the frame,
     * valid while the decoder hands it over, so it goes to on_msg as not movable
     * (recd_wire_meta.movable NULL) and is kept only by a copy. */
    bool state_borrows;
    /* Encoders append m's payload: 0, -EINVAL (m cannot be sent), -ENOMEM. open_write may be NULL
     * (nothing follows the token). */
    int (*open_write)(const recd_msg *m, recd_buf *out);
    int (*state_write)(const recd_msg *m, recd_buf *out);
    int (*event_write)(const recd_msg *m, recd_buf *out); /* NULL: the format has no events */
    /* The time field of a state or event frame (a block's ms, a tick; 0 where the payload holds
     * its own time): 0 or -EINVAL. */
    int (*msg_time)(const recd_msg *m, uint64_t *t);
};


#endif
