/* SPDX-License-Identifier: MIT */
/* The message model's table of formats. A new format is one entry here, defined beside its model
 * code; tests/lib/formats/test_format_table.c checks the entries against the format table. */
#include "message/msg_formats.h"

extern const msg_format msg_format_samp_onfoot;
extern const msg_format msg_format_samp_vehicle;
extern const msg_format msg_format_samp_player;
extern const msg_format msg_format_recap;
extern const msg_format recd__msg_format_carla;

const msg_format *const msg_format_table[MSG_FORMAT_SLOTS] = {
    [RECD_MSG_FMT_SAMP_ONFOOT] = &msg_format_samp_onfoot,
    [RECD_MSG_FMT_SAMP_VEHICLE] = &msg_format_samp_vehicle,
    [RECD_MSG_FMT_RECAP] = &msg_format_recap,
    [RECD_MSG_FMT_CARLA] = &recd__msg_format_carla,
    [RECD_MSG_FMT_SAMP_PLAYER] = &msg_format_samp_player,
};

_Static_assert(RECD_MSG_FMT_SAMP_PLAYER < MSG_FORMAT_SLOTS, "a format has no slot in the table");
