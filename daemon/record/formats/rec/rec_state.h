/* SPDX-License-Identifier: MIT */
/* A .rec session's own state (rec_session.c): what it keeps beside the shared
 * session, as its format_data. */
#ifndef RECD_DAEMON_FORMATS_REC_STATE_H
#define RECD_DAEMON_FORMATS_REC_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "record/session.h"

/* What a .rec session keeps beside the shared session, as its format_data (allocated with the
 * session: rec_session_format.state_size). A samp-player session's state begins with it. */
typedef struct rec_state {
    uint32_t last;       /* last accepted time (session clock) */
    uint32_t base;       /* subtracted in this part (rebased parts) */
    uint32_t part_first; /* session time of the current part's first block */
    uint8_t type;        /* the recd_rec_type of the blocks the current part holds */
    bool any;            /* a block was accepted in this session */
    bool header_due;     /* the current part's file header goes with its next block */
    bool rebase_all;     /* every part starts at 0, the first too (samp-player) */
    uint64_t clamped;    /* samples whose time was raised (logged once, then counted) */
} rec_state;

static inline rec_state *rec_state_of(const recd_session *s) { return s->format_data; }

#endif
