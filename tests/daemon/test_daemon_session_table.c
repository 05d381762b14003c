/* Tests for daemon/session_table.c: lookups by key across growth, the last-found cache (which
 * must forget a removed session: the next lookup may not return freed memory), removal, and keys
 * of every length compared word by word, found from bytes that are not NUL-terminated. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "session_table.h"

static recd_session *make(const char *key)
{
    recd_session *s = calloc(1, sizeof *s);
    assert_non_null(s);
    snprintf(s->key, sizeof s->key, "%s", key);
    s->key_len = (uint8_t)strlen(s->key);
    return s;
}

static void lookups_across_growth(void **state)
{
    (void)state;
    session_table t;
    assert_int_equal(session_table_init(&t), 0);
    enum { N = 3000 };
    recd_session **all = calloc(N, sizeof *all);
    assert_non_null(all);
    char key[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "player-%d", i);
        all[i] = make(key);
        assert_int_equal(session_table_put(&t, all[i]), 0);
    }
    assert_int_equal(t.count, N);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "player-%d", i);
        assert_ptr_equal(session_table_get(&t, key), all[i]);
        assert_ptr_equal(session_table_get(&t, key), all[i]); /* from the cache */
    }
    assert_null(session_table_get(&t, "player-x"));
    for (int i = 0; i < N; i++) {
        session_table_remove(&t, all[i]);
        free(all[i]);
    }
    assert_int_equal(t.count, 0);
    free(all);
    session_table_free(&t);
}

static void removal_clears_the_cache(void **state)
{
    (void)state;
    session_table t;
    assert_int_equal(session_table_init(&t), 0);
    recd_session *a = make("alpha"), *b = make("beta");
    assert_int_equal(session_table_put(&t, a), 0);
    assert_int_equal(session_table_put(&t, b), 0);
    assert_ptr_equal(session_table_get(&t, "alpha"), a);
    assert_ptr_equal(t.last, a);
    session_table_remove(&t, a);
    assert_null(t.last);
    free(a); /* the sanitizer build catches any later read of it */
    assert_null(session_table_get(&t, "alpha"));
    assert_ptr_equal(session_table_get(&t, "beta"), b);
    /* A new session under the old key is found, not a stale entry. */
    recd_session *a2 = make("alpha");
    assert_int_equal(session_table_put(&t, a2), 0);
    assert_ptr_equal(session_table_get(&t, "alpha"), a2);
    session_table_remove(&t, a2);
    session_table_remove(&t, b);
    free(a2);
    free(b);
    session_table_free(&t);
}

/* Every key length from 1 to the maximum, and for each a key differing from it in one byte at
 * every position: the word-wise hash and compare must tell them all apart. Lookups go through
 * session_table_find() on bytes followed by other bytes, as in a frame. */
static void every_length_and_position(void **state)
{
    (void)state;
    session_table t;
    assert_int_equal(session_table_init(&t), 0);
    recd_session *all[RECD_SESSION_KEY_MAX + 1] = {0};
    char key[RECD_SESSION_KEY_MAX + 1];
    for (size_t n = 1; n <= RECD_SESSION_KEY_MAX; n++) {
        for (size_t i = 0; i < n; i++)
            key[i] = (char)('a' + (i * 7 + n) % 26);
        key[n] = 0;
        all[n] = make(key);
        assert_int_equal(session_table_put(&t, all[n]), 0);
    }
    char frame[RECD_SESSION_KEY_MAX + 16];
    for (size_t n = 1; n <= RECD_SESSION_KEY_MAX; n++) {
        memset(frame, 'z', sizeof frame); /* bytes after the key belong to the frame */
        memcpy(frame, all[n]->key, n);
        assert_ptr_equal(session_table_find(&t, frame, n), all[n]);
        assert_null(session_table_find(&t, frame, n + 1)); /* the next byte is not part of it */
        for (size_t i = 0; i < n; i++) {
            frame[i] = (char)(frame[i] == 'Q' ? 'R' : 'Q');
            assert_null(session_table_find(&t, frame, n));
            frame[i] = all[n]->key[i];
        }
    }
    for (size_t n = 1; n <= RECD_SESSION_KEY_MAX; n++) {
        session_table_remove(&t, all[n]);
        free(all[n]);
    }
    assert_int_equal(t.count, 0);
    session_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookups_across_growth),
        cmocka_unit_test(removal_clears_the_cache),
        cmocka_unit_test(every_length_and_position),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
