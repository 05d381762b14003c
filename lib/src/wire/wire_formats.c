/* SPDX-License-Identifier: MIT */
/* The wire hooks of every format: each descriptor's recd_format.wire (session-only entries
 * included), looked up through the format list's index by message format (recd/format_list.h),
 * by the open's format byte, and listed for error texts. */
#include "wire/wire_formats.h"

#include <stdio.h>

#include "message/msg_formats.h"

const wire_format *wire_format_of_msg(const recd_msg *m)
{
    if (m->type == RECD_MSG_EVENT && m->format == RECD_MSG_FMT_NONE) {
        const recd_format *owner = msg_format_unformatted_events();
        return owner ? owner->wire : NULL;
    }
    return wire_format_of(m->format);
}

const wire_format *wire_format_by_code(uint8_t code)
{
    for (size_t i = 0; i < RECD_MSG_FORMAT_SLOTS; i++) {
        const wire_format *w = wire_format_of((recd_msg_format)i);
        if (w && w->code == code)
            return w;
    }
    return NULL;
}

void wire_format_codes_text(char *out, size_t outlen)
{
    size_t n = 0;
    out[0] = 0;
    for (unsigned code = 1; code <= 255; code++) {
        const wire_format *f = wire_format_by_code((uint8_t)code);
        if (!f || n >= outlen)
            continue;
        int k = snprintf(out + n, outlen - n, "%s%u %s", n ? ", " : "", code,
                         recd_msg_format_name(f->format));
        n += k > 0 ? (size_t)k : 0;
    }
}

void wire_format_event_names(char *out, size_t outlen)
{
    size_t n = 0, total = 0, seen = 0;
    for (size_t i = 0; i < RECD_MSG_FORMAT_SLOTS; i++) {
        const wire_format *f = wire_format_of((recd_msg_format)i);
        total += f && f->event_read;
    }
    out[0] = 0;
    for (size_t i = 0; i < RECD_MSG_FORMAT_SLOTS && n < outlen; i++) {
        const wire_format *f = wire_format_of((recd_msg_format)i);
        if (!f || !f->event_read)
            continue;
        seen++;
        const char *sep = seen == 1 ? "" : seen == total ? " and " : ", ";
        int k = snprintf(out + n, outlen - n, "%s%s", sep, recd_msg_format_name(f->format));
        n += k > 0 ? (size_t)k : 0;
    }
}
