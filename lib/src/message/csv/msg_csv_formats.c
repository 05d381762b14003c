/* SPDX-License-Identifier: MIT */
/* The CSV codec's table of message formats. A new format is one entry here, defined beside its
 * rows, and its place in the header order below. */
#include "message/csv/msg_csv_formats.h"

#include <string.h>

extern const msg_csv_format msg_csv_format_samp_onfoot;
extern const msg_csv_format msg_csv_format_samp_vehicle;
extern const msg_csv_format msg_csv_format_recap;
extern const msg_csv_format msg_csv_format_carla;

#define SLOTS 8

/* samp-player sessions have no CSV (recd_csv_writer_init refuses them). */
static const msg_csv_format *const table[SLOTS] = {
    [RECD_MSG_FMT_SAMP_ONFOOT] = &msg_csv_format_samp_onfoot,
    [RECD_MSG_FMT_SAMP_VEHICLE] = &msg_csv_format_samp_vehicle,
    [RECD_MSG_FMT_RECAP] = &msg_csv_format_recap,
    [RECD_MSG_FMT_CARLA] = &msg_csv_format_carla,
};

_Static_assert(RECD_MSG_FMT_SAMP_PLAYER < SLOTS, "a format has no slot in the table");

/* A header is the first entry's whose signature column it has: "frame", then "kind", then
 * "vehicle_id"; on foot's has none and takes what is left. */
static const msg_csv_format *const header_order[] = {
    &msg_csv_format_carla,
    &msg_csv_format_recap,
    &msg_csv_format_samp_vehicle,
    &msg_csv_format_samp_onfoot,
};

const msg_csv_format *msg_csv_format_of(recd_msg_format f)
{
    return (size_t)f < SLOTS ? table[f] : NULL;
}

const msg_csv_format *msg_csv_header_format(const char *const *names, size_t ncells)
{
    size_t n = sizeof header_order / sizeof header_order[0];
    for (size_t k = 0; k < n; k++) {
        const char *sig = header_order[k]->signature;
        if (!sig)
            return header_order[k];
        for (size_t i = 0; i < ncells; i++)
            if (strcmp(names[i], sig) == 0)
                return header_order[k];
    }
    return &msg_csv_format_samp_onfoot;
}
