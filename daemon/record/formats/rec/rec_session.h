/* SPDX-License-Identifier: MIT */
/* .rec sessions (rec_session.c): the format's session descriptor, and its block path. */
#ifndef RECD_DAEMON_FORMATS_REC_SESSION_H
#define RECD_DAEMON_FORMATS_REC_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "recd/samp_rec.h"
#include "rec_state.h"
#include "record/session.h"

extern const session_format rec_session_format;

/* A checked block of the session's type, given as its time (used when has_time, else the
 * arrival is stamped) and the fields after it. 0 (also when the sample was dropped and logged)
 * or -ENOMEM. The descriptor's state_fast hook (binary frames come this way), and the end of
 * the sample hooks of .rec and samp-player sessions. */
int session_rec_block(recd_session *s, session_input *in, uint32_t time_ms, bool has_time,
                      const uint8_t *fields, uint64_t now_ms);

/* rec.time_policy for a sample at *t: times never decrease. true to keep it (at *t, raised to
 * the previous time under clamp: counted, logged once), false when dropped (reject: counted,
 * logged). The late case is out of line (cold), so the frame's path stays small. */
__attribute__((cold, noinline)) bool session_rec_time_late(recd_session *s, rec_state *rs,
                                                           uint32_t *t);
static inline bool session_rec_take_time(recd_session *s, rec_state *rs, uint32_t *t)
{
    return !rs->any || *t >= rs->last || session_rec_time_late(s, rs, t);
}

/* For samp-player sessions (player_session.c), which write the same blocks: a decoded state
 * checked and encoded as a block of rec_type (0, or a refusal with why; *time_ms its time), then
 * given to session_rec_block; and the end of a part. */
int session_rec_encode(recd_session *s, session_input *in, const recd_msg *m, uint8_t rec_type,
                       uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE], uint32_t *time_ms, char *why,
                       size_t whylen);
void session_rec_end_part(recd_session *s, bool session_end);

/* Instant replay (rec_ring.c): keeps one block at session time t (fields: the block after its
 * time) as a ring entry; 0, 1 when dropped and counted, or -ENOMEM (session_ring_add). */
int rec_ring_put(recd_session *s, uint32_t t, const uint8_t *fields, size_t block_len);
/* The ring_save hook: the blocks of the last last_ms as a finalized .rec named label, rebased to
 * 0. 0, -ENOMEM, or -EBADMSG with why. */
int rec_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why, size_t whylen);

#endif
