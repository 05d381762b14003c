/* SPDX-License-Identifier: MIT */
/* Fleet naming (recd/fleet.h): nats:// URLs, the partition of a session key (publishers and recd
 * must agree on it, so its values are pinned here) and the subjects of both layouts. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recd/fleet.h"
#include "recd/fleet_subject.h"

static void urls(void **state)
{
    (void)state;
    recd_fleet_url u;
    char err[256];
    assert_int_equal(recd_fleet_url_parse("nats://127.0.0.1:4333/recd.eu", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 4333);
    assert_string_equal(u.prefix, "recd.eu");
    assert_int_equal(recd_fleet_url_parse("nats://nats.example.net/game", &u, err, sizeof err), 0);
    assert_int_equal(u.port, RECD_FLEET_DEFAULT_PORT);
    assert_int_equal(recd_fleet_url_parse("nats://[::1]:4222/a-b_c", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "::1");
    const char *bad[] = {"tcp://127.0.0.1:1/x", "nats://127.0.0.1:1",  "nats://127.0.0.1:1/",
                         "nats://:1/x",         "nats://h:0/x",        "nats://h:70000/x",
                         "nats://h/a..b",       "nats://h/.a",         "nats://h/a.",
                         "nats://h/a.*",        "nats://h/a>",         "nats://[::1/x",
                         "nats://h:/x",         "nats://h/a b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(recd_fleet_url_parse(bad[i], &u, err, sizeof err), -EINVAL);
        assert_true(err[0] != '\0');
    }
}

static void partitions_are_pinned(void **state)
{
    (void)state;
    /* FNV-1a 32: "" is the offset basis, "a" a published test vector. */
    assert_int_equal(recd_fleet_partition("", 0, 0xffffffffu), 2166136261u % 0xffffffffu);
    assert_int_equal(recd_fleet_partition("a", 1, 0xffffffffu), 0xe40c292cu % 0xffffffffu);
    for (uint32_t n = 1; n < 50; n++)
        assert_true(recd_fleet_partition("player-17", 9, n) < n);
}

/* The default layout: one subject per partition, PREFIX.<p>.~, whatever the key. */
static void subjects(void **state)
{
    (void)state;
    char out[RECD_FLEET_SUBJECT_MAX];
    int n = recd_fleet_subject("recd.eu", "match.42-a_b", 12, 8, out, sizeof out);
    char want[64];
    snprintf(want, sizeof want, "recd.eu.%u.~", recd_fleet_partition("match.42-a_b", 12, 8));
    assert_int_equal(n, (int)strlen(want));
    assert_string_equal(out, want);
    assert_int_equal(recd_fleet_subject("p", "", 0, 8, out, sizeof out), -EINVAL);
    assert_int_equal(recd_fleet_subject("p", "key", 3, 8, out, 5), -ENAMETOOLONG);
    assert_int_equal(recd_fleet_subject("p", "key", 3, 8, out, 6), 5);
    n = recd_fleet_subject("p", "a.b.c-d_e", 9, 1, out, sizeof out);
    assert_string_equal(out, "p.0.~");
    /* What is not a session key, and partition counts out of range, are refused. */
    assert_int_equal(recd_fleet_subject("p", "a b*c>d", 7, 1, out, sizeof out), -EINVAL);
    assert_int_equal(recd_fleet_subject("p", "key", 3, 0, out, sizeof out), -EINVAL);
    assert_true(recd_fleet_subject("p", "key", 3, RECD_FLEET_PARTITIONS_MAX, out, sizeof out) > 0);
    assert_int_equal(
        recd_fleet_subject("p", "key", 3, RECD_FLEET_PARTITIONS_MAX + 1, out, sizeof out), -EINVAL);
}

/* subjects=session: the earlier layout, PREFIX.<p>.<key token>, in the same partition. */
static void session_subjects(void **state)
{
    (void)state;
    char out[RECD_FLEET_SUBJECT_MAX];
    int n = fleet_session_subject("recd.eu", "match.42-a_b", 12, 8, out, sizeof out);
    char want[64];
    snprintf(want, sizeof want, "recd.eu.%u.match~42-a_b",
             recd_fleet_partition("match.42-a_b", 12, 8));
    assert_int_equal(n, (int)strlen(want));
    assert_string_equal(out, want);
    assert_int_equal(fleet_session_subject("p", "", 0, 8, out, sizeof out), -EINVAL);
    assert_int_equal(fleet_session_subject("p", "key", 3, 8, out, 7), -ENAMETOOLONG);
    /* Every dot of the key becomes '~', so the token is one subject token. */
    fleet_session_subject("p", "a.b.c-d_e", 9, 1, out, sizeof out);
    assert_string_equal(out, "p.0.a~b~c-d_e");
    assert_int_equal(fleet_session_subject("p", "a b*c>d", 7, 1, out, sizeof out), -EINVAL);
    assert_int_equal(fleet_session_subject("p", "key", 3, 0, out, sizeof out), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(urls),
        cmocka_unit_test(partitions_are_pinned),
        cmocka_unit_test(subjects),
        cmocka_unit_test(session_subjects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
