/* SPDX-License-Identifier: MIT */
/* Internal: Recap payloads of binary frames (recap_wire.c), behind Recap's wire hooks
 * (recd_recap__wire): a lone FULL_STATE payload, one action (tag + payload), the open header.
 * Decoders fill m (type and format already set) and return 0, -EBADMSG with why, or -ENOMEM. */
#ifndef RECD_RECAP_WIRE_H
#define RECD_RECAP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"

int recap_wire_state_write(const recd_msg_recap_state *s, recd_buf *out);
int recap_wire_state_read(const uint8_t *p, size_t len, uint64_t tick, recd_msg *m, char *why,
                          size_t whylen);

#endif
