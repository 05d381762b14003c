/* SPDX-License-Identifier: MIT */
/* A Recap session's own state (recap_session.c, recap_part.c, recap_ring.c), and what its tick
 * group and parts (recap_part.c) lend the session and its instant-replay ring. */
#ifndef RECD_DAEMON_FORMATS_RECAP_STATE_H
#define RECD_DAEMON_FORMATS_RECAP_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "recd/recap.h"
#include "recd/wire.h"
#include "record/session.h"

/* Readers refuse a gzip member that inflates to more than RECD_RECAP_DEFAULT_MAX_MEMBER_SIZE. A
 * tick is never split over members, so one tick may hold at most a quarter of that, and a member
 * is ended before a tick would take it past half: with the keyframe a member always fits. */
#define RECAP_TICK_MAX_BYTES (RECD_RECAP_DEFAULT_MAX_MEMBER_SIZE / 4)
#define RECAP_MEMBER_SOFT_BYTES (RECD_RECAP_DEFAULT_MAX_MEMBER_SIZE / 2)

typedef struct session_recap {
    recd_msg open;           /* deep copy of the open message: the header of every part */
    recd_recap_encoder *enc; /* the current part's encoder; NULL between parts */
    /* How the current part's header was written: it is encoded again, patched, when the part ends
     * (the config may have changed meanwhile, so the options are kept, not re-read). */
    int64_t part_start_ms;
    recd_recap_encoder_options part_opt;
    uint64_t estimate;       /* the encoder's pending member (uncompressed), for flush and size */
    uint64_t encoder_held;   /* the encoder's buffers, counted in the session's buffered bytes */
    uint64_t part_first_tick;
    uint64_t first_tick, last_fed;
    /* the tick being collected (its flags are with the others, below) */
    uint64_t inputs_before_group; /* s->inputs before the tick being collected began */
    uint64_t group_tick, group_since_ms;
    uint64_t group_last_ms; /* arrival of its latest message */
    recd_msg state; /* RECD_MSG_NONE when the tick has no state yet */
    /* The block of the last tick's state, lent to the decoder for the next one (lend_state),
     * while the session is live: the idle hook frees it. */
    recd_msg_recap_state *spare;
    recd_msg *events;
    size_t nevents, capevents;
    uint64_t group_bytes; /* its state's and events' encoded size, counted in the buffered bytes */
    /* output.part_manifest: the messages it took and their wire sequence numbers */
    uint64_t group_samples, group_first_seq, group_last_seq;
    /* Between parts: the reader's state at the end of the last one, as one binary frame (smaller
     * than a recd_recap_state), for a next part whose first tick has only events. While a part is
     * open the encoder holds that state itself. */
    recd_buf carry;
    int64_t close_end_ms; /* when has_close_end */
    recd_buf member; /* scratch for a taken member */
    /* The restart point for the next member (writer_set_restart): a header for a file that
     * starts at the last tick written, and a member body with the reader's state then as a
     * FULL_STATE. Not counted while the session holds it (like the encoder's item slots, no
     * write releases it); counted once a batch takes it. */
    recd_buf restart_header, restart_member;
    uint64_t restart_ticks; /* ticks of the part before the restarted file */
    /* Instant replay (recap_ring.c): the state of the newest tick that left the ring with one, as
     * its binary frame (the state a save's first tick has when it came without one), and a save
     * a sample asked for, done once its tick is complete. */
    recd_buf ring_base;
    /* The flags, together: one per 8-byte gap between the fields above cost 48 bytes a session
     * (test_daemon_memory's budget for an idle Recap session). */
    bool started;            /* a tick was fed in this session */
    bool have_group, group_stamped; /* a tick is being collected; its time is set */
    bool group_late;    /* opened by a message for the tick written just before it */
    bool group_held;    /* its clock was stopped: recd held its sender back (group_clock_held()) */
    bool group_has_seq; /* a message of it carried a wire seq (group_first_seq, group_last_seq) */
    bool has_close_end;
    bool restart_due;   /* a member was queued: prepare one before the next tick is encoded */
    bool ring_save_due;
} session_recap;


static inline session_recap *recap_of(const recd_session *s) { return s->format_data; }

/* The tick group and its parts (recap_part.c), used by the session (recap_session.c) and its
 * ring (recap_ring.c). */
/* Starts a part whose first tick is tick, its header saying start_ms: a new encoder. 0 or a
 * negative errno (logged). */
int recap_start_part_at(recd_session *s, uint64_t tick, int64_t start_ms);
/* Ends the current gzip member: its uncompressed bytes go to the writer. */
void recap_take_member(recd_session *s);
/* Closes the current part (last member, finish, header patch); session_end: keeps no state for
 * a next part. */
void recap_close_part(recd_session *s, bool session_end);
/* Gives the tick being collected (there is one) to the part's encoder, starting a part first when
 * none is open, the current one is full or long; a tick that cannot be written is dropped. */
void recap_part_feed(recd_session *s);
/* Feeds the open part's encoder unchanged ticks up to last (a flush message's end_tick). 0 or a
 * negative errno. */
int recap_part_skip_to(recd_session *s, uint64_t last);
/* The session's idle hook: trims the encoder and lets go of the scratch buffers. */
void recap_part_idle(recd_session *s);
/* Counts delta bytes toward the tick being collected (and the session's buffered bytes). */
void recap_group_account(recd_session *s, session_recap *r, int64_t delta);
/* Clears the tick being collected; recap_drop_group() counts its samples as dropped first. */
void recap_group_clear(recd_session *s, session_recap *r);
void recap_drop_group(recd_session *s, session_recap *r);

/* Instant replay (recap_ring.c): the collected tick becomes a ring entry (its state and events
 * as binary frames); a save (the ring_save hook) writes the ticks of the last last_ms as a file
 * that starts with a header and a FULL_STATE; ring_dropped keeps the state a leaving tick had. */
void recap_ring_put(recd_session *s, session_recap *r);
int recap_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                    size_t whylen);
void recap_ring_dropped(recd_session *s, const struct session_ring_entry *e);

#endif
