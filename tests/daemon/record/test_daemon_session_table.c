/* SPDX-License-Identifier: MIT */
/* Tests for daemon/record/session_table.c: lookups by key across growth, the last-found cache
 * (which must forget a removed session: the next lookup may not return freed memory), removal,
 * keys of every length compared word by word, found from bytes that are not NUL-terminated, how
 * evenly the hash spreads key families, and unchecked over-long keys. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/session.h"
#include "record/session_table.h"

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

/* The longest bucket chain of t. */
static size_t longest_chain(const session_table *t)
{
    size_t longest = 0;
    for (size_t i = 0; i < t->nbuckets; i++) {
        size_t n = 0;
        for (const recd_session *s = t->buckets[i]; s; s = s->hnext)
            n++;
        if (n > longest)
            longest = n;
    }
    return longest;
}

/* Families of keys that a weak hash puts in few buckets: numbered keys, keys that differ only in
 * the middle of a long key (before its last two words), and four-byte keys. With random hash
 * keys, 4,096 keys in 4,096 buckets chain at most a handful deep; 16 would mean the hash ignores
 * part of the key. */
static void keys_spread_over_buckets(void **state)
{
    (void)state;
    enum { N = 4096 };
    const char *forms[] = {"player-%d", "world-0001-%05d-region-north-east-instance-main",
                           "%04x"};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        session_table t;
        assert_int_equal(session_table_init(&t), 0);
        recd_session **all = calloc(N, sizeof *all);
        assert_non_null(all);
        char key[RECD_SESSION_KEY_MAX + 1];
        for (int i = 0; i < N; i++) {
            snprintf(key, sizeof key, forms[f], i);
            all[i] = make(key);
            assert_int_equal(session_table_put(&t, all[i]), 0);
        }
        size_t longest = longest_chain(&t);
        if (longest >= 16)
            fail_msg("keys like '%s': a chain of %zu in %zu buckets", forms[f], longest,
                     t.nbuckets);
        for (int i = 0; i < N; i++) {
            snprintf(key, sizeof key, forms[f], i);
            assert_ptr_equal(session_table_get(&t, key), all[i]);
            session_table_remove(&t, all[i]);
            free(all[i]);
        }
        free(all);
        session_table_free(&t);
    }
}

/* A frame's key bytes reach the table before they are checked: up to 255 bytes, longer than any
 * key it holds. They are not found, and nothing past them is read (ASan). */
static void overlong_keys_are_not_found(void **state)
{
    (void)state;
    session_table t;
    assert_int_equal(session_table_init(&t), 0);
    recd_session *s = make("x");
    assert_int_equal(session_table_put(&t, s), 0);
    for (size_t n = RECD_SESSION_KEY_MAX + 1; n <= 255; n++) {
        char *key = malloc(n); /* exactly n bytes */
        assert_non_null(key);
        memset(key, 'x', n);
        assert_null(session_table_find(&t, key, n));
        free(key);
    }
    session_table_remove(&t, s);
    free(s);
    session_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookups_across_growth),
        cmocka_unit_test(removal_clears_the_cache),
        cmocka_unit_test(every_length_and_position),
        cmocka_unit_test(keys_spread_over_buckets),
        cmocka_unit_test(overlong_keys_are_not_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
