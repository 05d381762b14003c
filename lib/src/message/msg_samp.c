/* SPDX-License-Identifier: MIT */
/* The SA-MP entries of the message model's format table: their states are plain .rec blocks in
 * the message (nothing owned), and they have no events. */
#include "message/msg_formats.h"

const msg_format msg_format_samp_onfoot = {
    .format = RECD_MSG_FMT_SAMP_ONFOOT,
    .name = "samp-onfoot",
    .extension = "rec",
};

const msg_format msg_format_samp_vehicle = {
    .format = RECD_MSG_FMT_SAMP_VEHICLE,
    .name = "samp-vehicle",
    .extension = "rec",
};

/* Recorded as .rec parts and a manifest (daemon only); each part is a .rec file. */
const msg_format msg_format_samp_player = {
    .format = RECD_MSG_FMT_SAMP_PLAYER,
    .name = "samp-player",
    .extension = "rec",
};
