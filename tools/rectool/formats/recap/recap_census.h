/* SPDX-License-Identifier: MIT */
/* Counts the actions of a .recap file per tag (keyframes = FULL_STATE actions, idle runs, event
 * mix) for `rectool info`. It only steps over payloads, guided by librecd's schema table; the
 * decoder (recd_recap_decode) stays the authority on validity. */
#ifndef RECTOOL_RECAP_CENSUS_H
#define RECTOOL_RECAP_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_recap_census {
    uint64_t tag_counts[256];
    uint64_t members;
    uint64_t inflated_bytes;
    uint64_t skip_runs;     /* SKIP_TICKS actions */
    uint64_t skipped_ticks; /* sum of their counts */
    uint64_t longest_idle;  /* ticks in the longest chain of consecutive SKIP_TICKS */
    bool complete;          /* every action of every complete member was stepped over */
    uint64_t stop_member_offset; /* where stepping failed when !complete */
} rt_recap_census;

/* data_offset: where the gzip members start (7 + header length). 0 or -ENOMEM. */
int rt_recap_census_run(const uint8_t *buf, size_t len, uint64_t data_offset, rt_recap_census *c);

#endif
