/* SPDX-License-Identifier: MIT */
/* The slot mask of a Recap state: which of its 47 item slots (bit i: equipment i for i < 6, then
 * inventory i - 6) may hold an item; every slot outside it is empty. librecd keeps one with each
 * state message it makes, with the size of its items (recd_msg_recap_state is public and its
 * layout fixed, so they live beside it in the message's block, not in it), and the daemon sizes
 * the state and hands the mask to the encoder from it, so a tick touches the slots a player fills
 * instead of all 47 three times. Public callers never see it: their states are read as "any slot
 * may hold an item". */
#ifndef RECD_RECAP_SLOT_MASK_H
#define RECD_RECAP_SLOT_MASK_H

#include <stddef.h>
#include <stdint.h>

#include "recd/recap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_RECAP_ALL_SLOTS \
    ((UINT64_C(1) << (RECD_RECAP_EQUIPMENT_SLOTS + RECD_RECAP_INVENTORY_SLOTS)) - 1)

/* What librecd knows of a state it made: slots, a superset of the slots its items fill (every
 * other slot is empty), and item_bytes, the sum of its items' key and data lengths. */
typedef struct recd_recap_state_extent {
    uint64_t slots;
    uint64_t item_bytes;
} recd_recap_state_extent;

/* The extent of a state message made by librecd (a decoder, recd_msg_set_recap_state,
 * recd_msg_copy); only for those: it is read from the message's block. */
const recd_recap_state_extent *recd_recap__state_extent(const recd_msg_recap_state *s);

/* recd_recap_encoder_tick for a state whose items outside slots are all empty (slots a superset
 * of the filled ones; RECD_RECAP_ALL_SLOTS for any state). Same output. */
int recd_recap__encoder_tick_slots(recd_recap_encoder *e, uint64_t tick,
                                   const recd_recap_state *state, uint64_t slots,
                                   const recd_recap_event *events, size_t n);

#ifdef __cplusplus
}
#endif

#endif
