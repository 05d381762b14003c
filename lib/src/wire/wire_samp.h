/* SPDX-License-Identifier: MIT */
/* Internal: the .rec block payloads of SA-MP states (wire_samp.c), shared by the format entries
 * and the decoder's .rec path. The check is inline: it runs on every .rec state of the daemon's
 * hot path, where a call cost a sixteenth of the path's instructions. */
#ifndef RECD_WIRE_SAMP_H
#define RECD_WIRE_SAMP_H

#include "wire/wire_formats.h"
#include "wire/wire_internal.h"

/* The error of wire_samp_fields_check(), out of line: -EBADMSG with why. */
int wire_samp_fields_refuse(const wire_format *f, size_t len, uint64_t time, int check,
                            char *why, size_t whylen);

/* Checks a .rec state payload (the block without its time) in place against entry f (one with a
 * rec_block_type): its size, a time that fits the block's u32 and recd_rec_fields_check().
 * 0, or -EBADMSG with why. */
static inline int wire_samp_fields_check(const wire_format *f, const uint8_t *fields, size_t len,
                                         uint64_t time, char *why, size_t whylen)
{
    int check = 0;
    if (len != (size_t)f->rec_block_len - 4 || time > UINT32_MAX ||
        (check = recd_rec_fields_check(f->rec_block_type, fields)) < 0)
        return wire_samp_fields_refuse(f, len, time, check, why, whylen);
    return 0;
}

/* Fills m's onfoot or vehicle state from the checked fields of entry f's block and its time. */
void wire_samp_block_decode(const wire_format *f, uint32_t time, const uint8_t *fields,
                            recd_msg *m);

#endif
