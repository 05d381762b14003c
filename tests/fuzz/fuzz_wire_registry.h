/* SPDX-License-Identifier: MIT */
/* Shared by the wire fuzz targets: a session registry answering by the key's first byte, and the
 * check every .rec state handed to on_rec_state must pass before it is compared with on_msg's. */
#ifndef RECD_FUZZ_WIRE_REGISTRY_H
#define RECD_FUZZ_WIRE_REGISTRY_H

#include <stdlib.h>

#include "recd/wire.h"

/* The registry's record of every session it knows: what format_of hands out as the handle. */
static int registry_record;

/* Valid keys starting 'f' onfoot, 'v' vehicle, 'r' recap, 'p' samp-player; anything else unknown. A real registry
 * holds only keys that were checked when opened, and the decoder relies on that when a handle is
 * set. */
static recd_msg_format registry(void *ctx, const char *key, size_t len, void **handle)
{
    (void)ctx;
    volatile unsigned sum = 0; /* every key byte is read, so ASan sees a key outside the input */
    for (size_t i = 0; i < len; i++)
        sum += (unsigned char)key[i];
    (void)sum;
    if (!recd_session_key_valid(key, len))
        return RECD_MSG_FMT_NONE;
    *handle = &registry_record;
    switch (key[0]) {
    case 'f': return RECD_MSG_FMT_SAMP_ONFOOT;
    case 'v': return RECD_MSG_FMT_SAMP_VEHICLE;
    case 'r': return RECD_MSG_FMT_RECAP;
    case 'p': return RECD_MSG_FMT_SAMP_PLAYER;
    default: *handle = NULL; return RECD_MSG_FMT_NONE;
    }
}

/* The message on_msg would have been given for a .rec state; aborts when the state is not one a
 * decoder may hand over (a movable meta, an inconsistent state, a handle format_of did not set). */
static void rec_state_as_msg(const recd_wire_rec_state *st, const recd_wire_meta *meta, recd_msg *m)
{
    if (meta->movable || recd_wire_rec_state_msg(st, m) < 0)
        abort();
    if (st->handle && st->handle != &registry_record)
        abort();
}

#endif
