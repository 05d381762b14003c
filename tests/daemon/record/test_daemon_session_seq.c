/* SPDX-License-Identifier: MIT */
/* Tests for daemon/record/session_seq.c, the UDP sequence window: gaps and duplicates as before;
 * a seq far outside the window (a stray 2^63-1, a sender numbering afresh) starts a new epoch, so
 * the sender's next datagrams are not duplicates; a stray just ahead costs at most the window;
 * an open with resume lets a restart from the first seq start an epoch, with or without a seq of
 * its own, while the seq-less resumes a client repeats in every datagram change nothing. */
#include "testutil.h"

#include <stdint.h>

#include "record/session_seq.h"

static seq_verdict take(seq_window *w, uint64_t seq, uint64_t *lost)
{
    uint64_t ignored;
    return seq_window_take(w, seq, lost ? lost : &ignored);
}

static void gaps_and_duplicates(void **state)
{
    (void)state;
    seq_window w = {0};
    uint64_t lost;
    assert_int_equal(take(&w, 0, &lost), SEQ_NEXT); /* the first starts the numbering */
    assert_int_equal(take(&w, 1, &lost), SEQ_NEXT);
    assert_int_equal(lost, 0);
    assert_int_equal(take(&w, 4, &lost), SEQ_NEXT);
    assert_int_equal(lost, 2);
    assert_int_equal(take(&w, 4, NULL), SEQ_DUPLICATE);
    assert_int_equal(take(&w, 2, NULL), SEQ_DUPLICATE);
    assert_int_equal(take(&w, 5, &lost), SEQ_NEXT);
    assert_int_equal(lost, 0);
    assert_int_equal(take(&w, 5 + SEQ_WINDOW_AHEAD, &lost), SEQ_NEXT); /* the edge: still a gap */
    assert_int_equal(lost, SEQ_WINDOW_AHEAD - 1);
}

static void a_stray_seq_costs_itself_only(void **state)
{
    (void)state;
    seq_window w = {0};
    for (uint64_t s = 0; s <= 25; s++)
        assert_int_equal(take(&w, s, NULL), SEQ_NEXT);
    assert_int_equal(take(&w, INT64_MAX, NULL), SEQ_EPOCH_WINDOW);
    assert_int_equal(take(&w, 26, NULL), SEQ_EPOCH_WINDOW); /* far below: the sender again */
    for (uint64_t s = 27; s <= 75; s++) {
        uint64_t lost;
        assert_int_equal(take(&w, s, &lost), SEQ_NEXT);
        assert_int_equal(lost, 0);
    }
}

static void a_stray_just_ahead_costs_at_most_the_window(void **state)
{
    (void)state;
    seq_window w = {0};
    assert_int_equal(take(&w, 100, NULL), SEQ_NEXT);
    assert_int_equal(take(&w, 100 + SEQ_WINDOW_BEHIND, NULL), SEQ_NEXT); /* lost ones counted */
    unsigned dropped = 0;
    uint64_t s = 101;
    while (take(&w, s, NULL) == SEQ_DUPLICATE) {
        dropped++;
        s++;
    }
    assert_int_equal(dropped, SEQ_WINDOW_BEHIND); /* 101 .. 1124: the most one stray costs */
    /* The edge: SEQ_WINDOW_BEHIND below the last one starts an epoch, one less is a duplicate. */
    seq_window e = {0};
    take(&e, 5000, NULL);
    assert_int_equal(take(&e, 5000 - (SEQ_WINDOW_BEHIND - 1), NULL), SEQ_DUPLICATE);
    assert_int_equal(take(&e, 5000 - SEQ_WINDOW_BEHIND, NULL), SEQ_EPOCH_WINDOW);
}

static void a_far_jump_ahead_is_not_counted_as_loss(void **state)
{
    (void)state;
    seq_window w = {0};
    take(&w, 7, NULL);
    uint64_t lost;
    assert_int_equal(take(&w, 8 + SEQ_WINDOW_AHEAD, &lost), SEQ_EPOCH_WINDOW);
    assert_int_equal(lost, 0);
    assert_int_equal(take(&w, 9 + SEQ_WINDOW_AHEAD, &lost), SEQ_NEXT);
    assert_int_equal(lost, 0);
}

static void a_resume_with_a_seq_restarts(void **state)
{
    (void)state;
    seq_window w = {0};
    uint64_t lost;
    for (uint64_t s = 0; s <= 30; s++)
        take(&w, s, NULL);
    assert_int_equal(seq_window_resume(&w, true, 0, &lost), SEQ_EPOCH_RESUME);
    for (uint64_t s = 1; s <= 30; s++)
        assert_int_equal(take(&w, s, NULL), SEQ_NEXT);
    /* A resume that goes on above the last one is the numbering going on. */
    assert_int_equal(seq_window_resume(&w, true, 33, &lost), SEQ_NEXT);
    assert_int_equal(lost, 2);
    assert_int_equal(take(&w, 33, NULL), SEQ_DUPLICATE);
}

static void a_resume_without_a_seq_lets_the_next_restart(void **state)
{
    (void)state;
    seq_window w = {0};
    uint64_t lost;
    for (uint64_t s = 1; s <= 20; s++)
        take(&w, s, NULL);
    assert_int_equal(seq_window_resume(&w, false, 0, &lost), SEQ_NEXT);
    assert_int_equal(take(&w, 1, NULL), SEQ_EPOCH_RESUME);
    for (uint64_t s = 2; s <= 20; s++)
        assert_int_equal(take(&w, s, NULL), SEQ_NEXT);
    /* Only the next seq: one later is a duplicate as ever. */
    assert_int_equal(take(&w, 3, NULL), SEQ_DUPLICATE);
}

/* recd_client, with a token, starts each datagram with the session's open as a seq-less resume:
 * a late or repeated datagram is still a duplicate, and the numbering goes on. */
static void repeated_resumes_change_nothing(void **state)
{
    (void)state;
    seq_window w = {0};
    uint64_t lost;
    take(&w, 0, NULL);
    for (uint64_t d = 0; d < 10; d++) { /* datagrams of 3 samples each */
        seq_window_resume(&w, false, 0, &lost);
        for (uint64_t k = 1; k <= 3; k++)
            assert_int_equal(take(&w, d * 3 + k, NULL), SEQ_NEXT);
    }
    seq_window_resume(&w, false, 0, &lost); /* datagram 5 again */
    assert_int_equal(take(&w, 16, NULL), SEQ_DUPLICATE);
    assert_int_equal(take(&w, 17, NULL), SEQ_DUPLICATE);
    seq_window_resume(&w, false, 0, &lost);
    assert_int_equal(take(&w, 31, &lost), SEQ_NEXT);
    assert_int_equal(lost, 0);
}

static void a_resume_of_an_unnumbered_session(void **state)
{
    (void)state;
    seq_window w = {0};
    uint64_t lost;
    assert_int_equal(seq_window_resume(&w, false, 0, &lost), SEQ_NEXT);
    assert_false(w.have);
    assert_int_equal(seq_window_resume(&w, true, 9, &lost), SEQ_NEXT);
    assert_true(w.have);
    assert_int_equal(take(&w, 10, &lost), SEQ_NEXT);
    assert_int_equal(lost, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gaps_and_duplicates),
        cmocka_unit_test(a_stray_seq_costs_itself_only),
        cmocka_unit_test(a_stray_just_ahead_costs_at_most_the_window),
        cmocka_unit_test(a_far_jump_ahead_is_not_counted_as_loss),
        cmocka_unit_test(a_resume_with_a_seq_restarts),
        cmocka_unit_test(a_resume_without_a_seq_lets_the_next_restart),
        cmocka_unit_test(repeated_resumes_change_nothing),
        cmocka_unit_test(a_resume_of_an_unnumbered_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
