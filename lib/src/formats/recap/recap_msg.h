/* SPDX-License-Identifier: MIT */
/* Internal: Recap parts of the message model (open metadata, tick states, events): ownership,
 * deep copies and the JSON mapping, kept apart so the .rec code does not depend on them. */
#ifndef RECD_RECAP_MSG_H
#define RECD_RECAP_MSG_H

#include <jansson.h>

#include "recd/message.h"
#include "recd/formats/recap/recap_slot_mask.h"

void msg_recap_open_free(recd_msg_recap_open *o);
void msg_recap_state_free(recd_msg_recap_state *s);
void msg_recap_event_free(recd_msg_recap_event *e);

/* Deep copies; blobs, values and lists of the source may be transient. NULL when out of memory or
 * (events) when the event does not match its table row. */
recd_msg_recap_open *msg_recap_open_clone(const recd_recap_header *h);
recd_msg_recap_state *msg_recap_state_clone(uint64_t tick, const recd_recap_state *s);
recd_msg_recap_event *msg_recap_event_clone(uint64_t tick, const recd_recap_event *ev);
/* For a reader of a state payload: a message with a zeroed state and, in the same block, its own
 * copy of the payload's len bytes (*copy). lent (may be NULL): a block kept for reuse
 * (recap_state_block.h), owned by the call: used when it is large enough, else freed. Then only
 * its fixed fields are zeroed: *stale gets the slots that may still hold its last state's items
 * (0 for a fresh block), which the reader must write whole or zero with
 * msg_recap_state_zero_slots. The reader parses the copy into the state, so the
 * items' blobs point into the block as they are read: one copy of the payload instead of one
 * per item, and sets the message's extent (*ext, recap_slot_mask.h: all slots and no item
 * bytes until then). Free it with msg_recap_state_free when the payload does not parse. */
recd_msg_recap_state *msg_recap_state_over_payload(uint64_t tick, const uint8_t *payload,
                                                   size_t len, recd_msg_recap_state *lent,
                                                   const uint8_t **copy,
                                                   recd_recap_state_extent **ext, uint64_t *stale);
/* Zeroes the item slots of s in slots (bit i: equipment i, then inventory i - 6). */
void msg_recap_state_zero_slots(recd_msg_recap_state *s, uint64_t slots);

/* Append the JSON value (an object) for the "recap" key of open, or the body keys (each with a
 * leading comma) of a state or event. -EINVAL for values JSON cannot carry (NaN, bad UTF-8). */
int msg_recap_open_to_json(const recd_msg_recap_open *o, recd_buf *out);
int msg_recap_state_to_json(const recd_msg_recap_state *s, recd_buf *out);
int msg_recap_event_to_json(const recd_msg_recap_event *e, bool with_tick, recd_buf *out);
/* The equipment or inventory array of a state (non-empty slots only), for CSV cells. */
int msg_recap_items_to_json(const recd_recap_item *items, size_t n, recd_buf *out);

/* Parse from a message object (skip: NULL-terminated keys handled by the caller). err gets
 * "field: reason" without the message type prefix. 0, -EBADMSG or -ENOMEM. */
int msg_recap_open_from_json(const json_t *recap, recd_msg_recap_open **out, char *err,
                             size_t errlen);
int msg_recap_state_from_json(const json_t *msg, const char *const *skip,
                              recd_msg_recap_state **out, char *err, size_t errlen);
int msg_recap_event_from_json(const json_t *msg, const char *const *skip,
                              recd_msg_recap_event **out, char *err, size_t errlen);

#endif
