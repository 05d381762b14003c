/* SPDX-License-Identifier: MIT */
/* UDP sequence numbers of one session: which seq is the next one, a gap, a duplicate, or the start
 * of a new epoch. A seq far outside the window of the last accepted ones (a stray or spoofed
 * datagram, or a sender that numbers afresh), and a seq that restarts after an open with resume,
 * start a new epoch instead of turning every later datagram into a duplicate (docs/wire.md,
 * "Sequence numbers"). Pure: no clock, no metrics; the caller counts what it says. */
#ifndef RECD_DAEMON_SESSION_SEQ_H
#define RECD_DAEMON_SESSION_SEQ_H

#include <stdbool.h>
#include <stdint.h>

/* A seq not above the last accepted one and less than this far below it is a duplicate (or came
 * late, reordered) and is dropped; one further below starts a new epoch. It bounds what one stray
 * datagram numbered just ahead of the sender can cost: the sender's next SEQ_WINDOW_BEHIND
 * datagrams at most. */
#define SEQ_WINDOW_BEHIND 1024u
/* A seq at most this far above the last accepted one is the sender going on (the numbers between
 * count as lost); one further above starts a new epoch, so that no gap count is poisoned. */
#define SEQ_WINDOW_AHEAD (1u << 24)

typedef struct seq_window {
    bool have;     /* a seq was accepted */
    bool resumed;  /* an open with resume came, without a seq: the next seq may restart */
    uint64_t first; /* the first seq of the current epoch */
    uint64_t last;  /* the last seq accepted */
} seq_window;

typedef enum seq_verdict {
    SEQ_NEXT,         /* accepted: the next one, or after *lost missing ones */
    SEQ_DUPLICATE,    /* not above the last one, inside the window: dropped */
    SEQ_EPOCH_WINDOW, /* accepted: far outside the window, a new epoch starts at it */
    SEQ_EPOCH_RESUME, /* accepted: a restart after an open with resume, a new epoch */
} seq_verdict;

/* Takes the seq of a datagram message; *lost is set to the numbers skipped (SEQ_NEXT), else 0. */
seq_verdict seq_window_take(seq_window *w, uint64_t seq, uint64_t *lost);

/* An open with resume of a live session. With a seq (has_seq), that seq is taken at once, and it
 * restarts the numbering when it is not above the last one; without one, the next seq does when it
 * is not above the current epoch's first one (a sender numbering from where it started before). */
seq_verdict seq_window_resume(seq_window *w, bool has_seq, uint64_t seq, uint64_t *lost);

#endif
