/* SPDX-License-Identifier: MIT */
/* UDP sequence numbers of one session: the window, duplicates, gaps and epochs (session_seq.h). */
#include "session_seq.h"

static seq_verdict new_epoch(seq_window *w, uint64_t seq, seq_verdict why)
{
    w->have = true;
    w->resumed = false;
    w->first = seq;
    w->last = seq;
    return why;
}

seq_verdict seq_window_take(seq_window *w, uint64_t seq, uint64_t *lost)
{
    *lost = 0;
    if (!w->have) {
        new_epoch(w, seq, SEQ_NEXT);
        return SEQ_NEXT;
    }
    bool resumed = w->resumed;
    w->resumed = false;
    if (resumed && seq <= w->first) /* first <= last: not above the last either */
        return new_epoch(w, seq, SEQ_EPOCH_RESUME);
    if (seq > w->last) {
        if (seq - w->last > SEQ_WINDOW_AHEAD)
            return new_epoch(w, seq, SEQ_EPOCH_WINDOW);
        *lost = seq - w->last - 1;
        w->last = seq;
        return SEQ_NEXT;
    }
    if (w->last - seq >= SEQ_WINDOW_BEHIND)
        return new_epoch(w, seq, SEQ_EPOCH_WINDOW);
    return SEQ_DUPLICATE;
}

seq_verdict seq_window_resume(seq_window *w, bool has_seq, uint64_t seq, uint64_t *lost)
{
    *lost = 0;
    if (!w->have) {
        if (has_seq)
            new_epoch(w, seq, SEQ_NEXT);
        return SEQ_NEXT;
    }
    if (!has_seq) {
        w->resumed = true;
        return SEQ_NEXT;
    }
    if (seq <= w->last)
        return new_epoch(w, seq, SEQ_EPOCH_RESUME);
    return seq_window_take(w, seq, lost);
}
