/* SPDX-License-Identifier: MIT */
/* The table of message formats on the wire. A new format is one entry here, defined beside its
 * payloads (wire_FORMAT.c), and its format byte in docs/wire.md. */
#include "wire/wire_formats.h"

#include <stdio.h>

extern const wire_format wire_format_samp_onfoot;
extern const wire_format wire_format_samp_vehicle;
extern const wire_format wire_format_samp_player;
extern const wire_format wire_format_recap;
extern const wire_format wire_format_carla;

const wire_format *const wire_format_table[WIRE_FORMAT_SLOTS] = {
    [RECD_MSG_FMT_SAMP_ONFOOT] = &wire_format_samp_onfoot,
    [RECD_MSG_FMT_SAMP_VEHICLE] = &wire_format_samp_vehicle,
    [RECD_MSG_FMT_RECAP] = &wire_format_recap,
    [RECD_MSG_FMT_CARLA] = &wire_format_carla,
    [RECD_MSG_FMT_SAMP_PLAYER] = &wire_format_samp_player,
};

_Static_assert(RECD_MSG_FMT_SAMP_PLAYER < WIRE_FORMAT_SLOTS, "a format has no slot in the table");

const wire_format *wire_format_of_msg(const recd_msg *m)
{
    /* Events came from Recap sessions only before CARLA's, and a builder may leave the format
     * unset: such an event is sent as a Recap event. */
    if (m->type == RECD_MSG_EVENT && m->format == RECD_MSG_FMT_NONE)
        return &wire_format_recap;
    return wire_format_of(m->format);
}

const wire_format *wire_format_by_code(uint8_t code)
{
    for (size_t i = 0; i < WIRE_FORMAT_SLOTS; i++)
        if (wire_format_table[i] && wire_format_table[i]->code == code)
            return wire_format_table[i];
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
