/* SPDX-License-Identifier: MIT */
/* Instant replay (session_ring.c): a ring session's latest entries kept in memory instead of a
 * file, within ring.window and the memory bounds, until a save writes them. The ring names no
 * format: an entry is bytes at a session time, which the session's format puts (its sample path)
 * and turns into a file (session_format.ring_save), keeping what a save needs of the entries that
 * left (session_format.ring_dropped). */
#ifndef RECD_DAEMON_SESSION_RING_H
#define RECD_DAEMON_SESSION_RING_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* One kept entry: its session time and its bytes, as the format put them. */
typedef struct session_ring_entry {
    struct session_ring_entry *next; /* the next newer one, or NULL */
    uint64_t time_ms;
    uint32_t len;
    uint32_t samples; /* the samples it holds: what its drop counts */
    uint8_t data[];
} session_ring_entry;

/* What an entry of len bytes costs of the memory bounds: its bytes, its header and what malloc
 * keeps beside it. A ring reserves its room in doublings from 4 KiB (recd_ring_bytes). */
#define SESSION_RING_ENTRY_COST(len) (sizeof(session_ring_entry) + (uint64_t)(len) + 16)

/* Gives s a ring (an open with ring: true, or ring.all, of a format with a ring_save hook).
 * 0 or -ENOMEM. */
int session_ring_start(recd_session *s);
void session_ring_free(recd_session *s);
/* Makes room for an entry of len bytes holding samples samples at session time t (never before the newest entry's):
 * entries older than ring.window go first, then, while the ring is over ring.session_memory or
 * every ring over ring.process_memory, its oldest ones (counted in recd_samples_dropped_total).
 * Returns where the format writes the entry's bytes (valid until the ring next changes), or NULL
 * with *rc: 1 when the new entry is dropped and counted (ring.process_memory is reached while
 * this ring holds nothing), -ENOMEM when malloc fails. */
uint8_t *session_ring_add(recd_session *s, uint64_t t, size_t len, uint32_t samples, int *rc);
/* The oldest entry of the last last_ms (at or after the newest entry's time minus last_ms), or
 * NULL when the ring holds nothing; *newest_ms, when not NULL, gets the newest entry's time. */
const session_ring_entry *session_ring_from(const recd_session *s, uint64_t last_ms,
                                            uint64_t *newest_ms);
/* Writes the ring's last last_ms as one file named label (session_format.ring_save) and counts
 * it in recd_ring_saves_total. 0, -ENOMEM, or -EBADMSG with why (no ring, nothing held yet). */
int session_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                      size_t whylen);
/* Saves the whole window under a label of its own ("replay-EPOCHMS"): a sample that carried the
 * save flag. Logs, never fails the sample. */
void session_ring_save_flagged(recd_session *s);
/* For ring_save hooks: the part just started takes the name the path template gives it, with
 * its file name (extension kept) replaced by label. 0, -ENAMETOOLONG or -ENOMEM. */
int session_ring_name_part(recd_session *s, const char *label);

#endif
