/* SPDX-License-Identifier: MIT */
/* The JSON lines codec's table of message formats. A new format is one entry here, defined beside
 * its JSON code, and its place in the sniffing order below when its lines can be told apart by
 * their keys. */
#include "message/json/msg_json_formats.h"

extern const msg_json_format msg_json_format_samp_onfoot;
extern const msg_json_format msg_json_format_samp_vehicle;
extern const msg_json_format msg_json_format_samp_player;
extern const msg_json_format msg_json_format_recap;
extern const msg_json_format recd__msg_json_format_carla;

#define SLOTS 8

static const msg_json_format *const table[SLOTS] = {
    [RECD_MSG_FMT_SAMP_ONFOOT] = &msg_json_format_samp_onfoot,
    [RECD_MSG_FMT_SAMP_VEHICLE] = &msg_json_format_samp_vehicle,
    [RECD_MSG_FMT_RECAP] = &msg_json_format_recap,
    [RECD_MSG_FMT_CARLA] = &recd__msg_json_format_carla,
    [RECD_MSG_FMT_SAMP_PLAYER] = &msg_json_format_samp_player,
};

_Static_assert(RECD_MSG_FMT_SAMP_PLAYER < SLOTS, "a format has no slot in the table");

/* A state line without a session format: the first entry whose sniff says yes (on foot's always
 * does). Signatures first: "tick", then "frame" with "elapsed", then "vehicle_id". */
static const msg_json_format *const state_sniff_order[] = {
    &msg_json_format_recap,
    &recd__msg_json_format_carla,
    &msg_json_format_samp_vehicle,
    &msg_json_format_samp_onfoot,
};

const msg_json_format *msg_json_format_of(recd_msg_format f)
{
    return (size_t)f < SLOTS ? table[f] : NULL;
}

const msg_json_format *msg_json_format_back(size_t i)
{
    for (size_t k = SLOTS; k-- > 0;)
        if (table[k] && i-- == 0)
            return table[k];
    return NULL;
}

const msg_json_format *msg_json_format_of_msg(const recd_msg *m)
{
    /* Events came from Recap sessions only before CARLA's, and a builder may leave the format
     * unset: such an event is a Recap event. */
    if (m->type == RECD_MSG_EVENT && m->format == RECD_MSG_FMT_NONE)
        return &msg_json_format_recap;
    return msg_json_format_of(m->format);
}

const msg_json_format *msg_json_state_sniff(const json_t *root)
{
    size_t n = sizeof state_sniff_order / sizeof state_sniff_order[0];
    for (size_t i = 0; i < n; i++)
        if (state_sniff_order[i]->state_sniff(root))
            return state_sniff_order[i];
    return &msg_json_format_samp_onfoot;
}

/* An event line without a session format: one an entry claims by its keys, else Recap's. */
const msg_json_format *msg_json_event_sniff(const json_t *root)
{
    for (size_t i = 0; i < SLOTS; i++)
        if (table[i] && table[i]->event_sniff && table[i]->event_sniff(root))
            return table[i];
    return &msg_json_format_recap;
}
