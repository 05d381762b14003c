/* SPDX-License-Identifier: MIT */
/* A samp-player session's manifest file, written as the session goes (player_session.c): the
 * first store writes it whole; after that a job on the thread pool appends the lines of parts
 * that are done and writes the last few lines and the closing brackets again in place, so the
 * work per part never grows with the parts before it. Only a window of the latest parts is
 * kept in memory; the lines waiting for the next job count toward the session's buffer. */
#ifndef RECD_DAEMON_FORMATS_PLAYER_STORE_H
#define RECD_DAEMON_FORMATS_PLAYER_STORE_H

#include <stdint.h>

#include "recd/player_manifest.h"
#include "record/session.h"

/* The latest parts kept in memory (and written again with each store): a rename the writer
 * reports for a part this recent is shown; one for an older part is logged. */
#define PLAYER_STORE_WINDOW 16u

typedef struct player_store player_store;

/* A store for session s writing rel (relative to the output root); NULL without memory. */
player_store *player_store_new(recd_session *s, const char *rel, int64_t start_time_ms);
/* Appends a zeroed part (numbered player_store_count() - 1); NULL without memory. */
recd_player_part *player_store_add(player_store *st);
/* Part n while it is in the window, else NULL. */
recd_player_part *player_store_part(player_store *st, uint32_t n);
uint32_t player_store_count(const player_store *st);
/* Writes what changed (a job at a time; the latest state waits behind a running one). */
void player_store_save(player_store *st, bool complete);
/* The session goes: the last job still runs, then the store frees itself. */
void player_store_release(player_store *st);

#endif
