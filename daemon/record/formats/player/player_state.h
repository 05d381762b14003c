/* SPDX-License-Identifier: MIT */
/* A samp-player session's own state (player_session.c, player_ring.c): what it keeps beside the
 * shared session, as its format_data, and what its instant-replay ring shares with its parts. */
#ifndef RECD_DAEMON_FORMATS_PLAYER_STATE_H
#define RECD_DAEMON_FORMATS_PLAYER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "player_store.h"
#include "record/formats/rec/rec_state.h"
#include "record/session.h"

/* The session's format_data, allocated with it (player_session_format.state_size). */
typedef struct player_data {
    rec_state rec;         /* first: the .rec block path (formats/rec/) reads it as its own */
    player_store *store;   /* from the first part on */
    bool in_part;          /* the manifest's last part is the current part */
    bool has_model, has_seat; /* what the current vehicle stretch's states carried */
    uint16_t model;
    uint8_t seat;
    bool complete;
    char last_name[RECD_PATH_MAX]; /* the name the template gave the previous part */
    double part_tokens;       /* parts it may still start now (limits.part_rate) */
    uint64_t part_tokens_ms;  /* when part_tokens was last filled */
    /* Instant replay (player_ring.c). */
    bool ring_part_due;    /* the next ring entry starts a part (a switch, or after idling) */
    player_store *saved;   /* the latest save's manifest: kept for its parts' late renames */
    uint32_t saved_first;  /* the writer tag of its part 0 */
    uint32_t saved_tags;   /* writer tags given to saved parts so far */
} player_data;
_Static_assert(offsetof(player_data, rec) == 0, "the .rec block path reads format_data");

static inline player_data *player_of(const recd_session *s) { return s->format_data; }

/* The ring_save hook: the ring's last last_ms as a samp-player recording of its own (its .rec
 * parts and a manifest), named by label. 0, -ENOMEM, or -EBADMSG with why. */
int player_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                     size_t whylen);
/* A checked state's block (time_ms its time, used when has_time) kept as a ring entry with the
 * part it belongs to: 0 (also when dropped, counted or logged) or -ENOMEM. */
int player_ring_put(recd_session *s, session_input *in, uint32_t time_ms, bool has_time,
                    const uint8_t *block, uint64_t now_ms);
/* The session goes: the latest save's manifest store is let go (it finishes on its own). */
void player_ring_free(recd_session *s);

#endif
