/* Tests for daemon/session_table.c: lookups by key across growth, the last-found cache (which
 * must forget a removed session: the next lookup may not return freed memory), and removal. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookups_across_growth),
        cmocka_unit_test(removal_clears_the_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
