/* SPDX-License-Identifier: MIT */
/* Tests for daemon/ingest/nats_closed_marks.c: marks of sessions that ended for good found by key
 * across the index's growth, a mark added twice kept once with the higher sequence, forgotten and
 * expired marks gone from the index as well as the list, keys that share a prefix kept apart, and
 * the oldest marks cut first when a partition holds more than its cap. */
#include "testutil.h"

#ifdef RECD_HAVE_NATS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/nats_source.h"
#include "record/sessions.h"

typedef struct fixture {
    recd_daemon_metrics metrics;
    recd_ingest *g;
    recd_sessions *sessions;
    nats_source src;
    nats_partition p;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(recd_daemon_metrics_init(&f->metrics), 0);
    f->g = calloc(1, sizeof *f->g);
    f->sessions = calloc(1, sizeof *f->sessions);
    assert_non_null(f->g);
    assert_non_null(f->sessions);
    assert_int_equal(session_table_init(&f->sessions->table), 0);
    f->g->metrics = &f->metrics;
    f->src.g = f->g;
    f->p.src = &f->src;
    f->p.in.sessions = f->sessions;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    nats_free_marks(&f->p);
    session_table_free(&f->sessions->table);
    recd_daemon_metrics_free(&f->metrics);
    free(f->sessions);
    free(f->g);
    free(f);
    return 0;
}

static bool closed(fixture *f, const char *key, uint64_t cur_seq)
{
    f->p.cur_seq = cur_seq;
    return nats_after_close(&f->src, &f->p, key, strlen(key));
}

static void key_of(char *out, size_t cap, int i)
{
    snprintf(out, cap, "session-%d", i);
}

static size_t listed_count(const nats_partition *p)
{
    size_t n = 0;
    for (const closed_mark *c = p->closed; c; c = c->next)
        n++;
    return n;
}

static void found_across_growth(void **state)
{
    fixture *f = *state;
    enum { N = 5000 };
    char key[32], kv[48];
    for (int i = 0; i < N; i++) {
        key_of(key, sizeof key, i);
        snprintf(kv, sizeof kv, "s.0.%s", key);
        nats_add_mark(&f->p, key, kv, (uint64_t)i + 1);
    }
    assert_int_equal(f->p.nmarks, N);
    assert_true(f->p.mark_nbuckets >= N);
    for (int i = 0; i < N; i++) {
        key_of(key, sizeof key, i);
        assert_true(closed(f, key, (uint64_t)i + 1)); /* a message up to its close: a repeat */
        assert_false(closed(f, key, (uint64_t)i + 2)); /* after it: a new session of that key */
    }
    assert_false(closed(f, "session-", 0));
    assert_false(closed(f, "session-50000", 0));
}

static void added_twice_kept_once(void **state)
{
    fixture *f = *state;
    nats_add_mark(&f->p, "a", "s.0.a", 10);
    nats_add_mark(&f->p, "a", "s.0.a", 7);
    nats_add_mark(&f->p, "a", "s.0.a", 12);
    assert_int_equal(f->p.nmarks, 1);
    assert_true(closed(f, "a", 12));
    assert_false(closed(f, "a", 13));
    /* keys that share a prefix, or are a prefix of each other, are different sessions */
    nats_add_mark(&f->p, "aa", "s.0.aa", 3);
    assert_false(closed(f, "aa", 4));
    assert_true(closed(f, "a", 4));
    assert_false(closed(f, "aaa", 0));
}

static void forgotten_and_expired_leave_the_index(void **state)
{
    fixture *f = *state;
    enum { N = 1000 };
    char key[32];
    for (int i = 0; i < N; i++) {
        key_of(key, sizeof key, i);
        nats_add_mark(&f->p, key, key, (uint64_t)i + 1);
    }
    for (int i = 0; i < N; i += 2) { /* opened again: their marks go */
        key_of(key, sizeof key, i);
        nats_forget_mark(&f->p, key);
    }
    nats_forget_mark(&f->p, "never-marked");
    assert_int_equal(f->p.nmarks, N / 2);
    /* acknowledged up to 500: the odd marks at or below it expire, in one list */
    size_t n = 0;
    for (closed_mark *c = nats_take_expired_marks(&f->p, 500), *next; c; c = next) {
        next = c->next;
        assert_true(c->seq <= 500);
        n++;
        free(c);
    }
    assert_int_equal(n, 250);
    assert_int_equal(f->p.nmarks, N / 2 - 250);
    assert_int_equal(listed_count(&f->p), f->p.nmarks);
    for (int i = 0; i < N; i++) {
        key_of(key, sizeof key, i);
        bool kept = i % 2 == 1 && (uint64_t)i + 1 > 500;
        assert_int_equal(closed(f, key, 0), kept);
    }
}

static void oldest_cut_first(void **state)
{
    fixture *f = *state;
    enum { N = 100 };
    char key[32];
    for (int i = 0; i < N; i++) {
        key_of(key, sizeof key, i);
        nats_add_mark(&f->p, key, key, (uint64_t)i + 1);
    }
    nats_add_mark(&f->p, "session-0", "session-0", 500); /* closed again: now the newest */
    nats_forget_mark(&f->p, "session-1");                 /* the oldest after it, gone */
    nats_forget_mark(&f->p, "session-99");                /* the newest before it, gone */
    assert_int_equal(f->p.nmarks, N - 2);
    /* keep 10: taken oldest first are 2..89, in the list newest first */
    int want = 89;
    size_t n = 0;
    for (closed_mark *c = nats_take_oldest_marks(&f->p, 10), *next; c; c = next) {
        next = c->next;
        key_of(key, sizeof key, want--);
        assert_string_equal(c->key, key);
        n++;
        free(c);
    }
    assert_int_equal(n, N - 2 - 10);
    assert_int_equal(f->p.nmarks, 10);
    assert_int_equal(listed_count(&f->p), 10);
    assert_true(closed(f, "session-0", 500));
    for (int i = 90; i < 99; i++) {
        key_of(key, sizeof key, i);
        assert_true(closed(f, key, 0));
    }
    assert_false(closed(f, "session-2", 0));
    /* the tail follows expiry and cuts to nothing */
    for (closed_mark *c = nats_take_expired_marks(&f->p, 95), *next; c; c = next) {
        next = c->next;
        free(c);
    }
    assert_int_equal(f->p.nmarks, 5); /* session-95..98 and session-0 at 500 */
    n = 0;
    for (closed_mark *c = nats_take_oldest_marks(&f->p, 0), *next; c; c = next) {
        next = c->next;
        n++;
        free(c);
    }
    assert_int_equal(n, 5);
    assert_null(f->p.closed);
    assert_null(f->p.closed_tail);
    assert_int_equal(f->p.nmarks, 0);
    nats_add_mark(&f->p, "again", "again", 1); /* an emptied list takes marks again */
    assert_ptr_equal(f->p.closed, f->p.closed_tail);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(found_across_growth, setup, teardown),
        cmocka_unit_test_setup_teardown(added_twice_kept_once, setup, teardown),
        cmocka_unit_test_setup_teardown(forgotten_and_expired_leave_the_index, setup, teardown),
        cmocka_unit_test_setup_teardown(oldest_cut_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

#include <stdio.h>

int main(void)
{
    printf("SKIP: built without libnats (nats:// inputs are not compiled in)\n");
    return 77;
}

#endif
