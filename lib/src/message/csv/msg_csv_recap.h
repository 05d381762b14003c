/* SPDX-License-Identifier: MIT */
/* Internal: the column layout of Recap CSV (see docs/protocol.md, "CSV encoding"). */
#ifndef RECD_MSG_CSV_RECAP_H
#define RECD_MSG_CSV_RECAP_H

#include <stddef.h>

#define MSG_CSV_RECAP_COLUMNS 20

/* kind, tick, 15 state scalars, equipment, inventory, data: in this order when written. */
extern const char *const msg_csv_recap_columns[MSG_CSV_RECAP_COLUMNS];

/* CARLA CSV: kind, frame, elapsed, duration, data. */
#define MSG_CSV_CARLA_COLUMNS 5
extern const char *const msg_csv_carla_columns[MSG_CSV_CARLA_COLUMNS];

#endif
