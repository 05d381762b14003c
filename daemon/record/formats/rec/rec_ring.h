/* SPDX-License-Identifier: MIT */
/* Instant replay (rec_ring.c): a .rec session's latest blocks kept in memory, and their save
 * as a finalized recording. */
#ifndef RECD_DAEMON_FORMATS_REC_RING_H
#define RECD_DAEMON_FORMATS_REC_RING_H

#include <stddef.h>
#include <stdint.h>

#include "recd/samp_rec.h"
#include "rec_state.h"
#include "record/session.h"

/* Gives s a ring of blocks of block_len bytes (its rec_state's ring). 0 or -ENOMEM. */
int session_ring_start(recd_session *s, size_t block_len);
void session_ring_free(recd_session *s);
/* Keeps one block at session time t (fields: the block after its time), dropping the blocks
 * older than ring.window and, when the ring may not grow (ring.session_memory,
 * ring.process_memory), its oldest one (counted in recd_samples_dropped_total). A ring over a
 * bound lowered by a reload shrinks here first, its oldest blocks going (counted). 0 when kept; 1
 * when dropped and counted (ring.process_memory is reached before this ring held anything);
 * -ENOMEM when malloc fails before it held anything. */
int session_ring_put(recd_session *s, uint32_t t, const uint8_t *fields);
/* Writes the blocks of the last last_ms (the newest block's time minus last_ms, and on) as a
 * finalized .rec of rec_type named label, rebased to 0. 0, -ENOMEM, or -EBADMSG with why. */
int session_ring_save(recd_session *s, uint32_t last_ms, const char *label, uint8_t rec_type,
                      char *why, size_t whylen);

#endif
