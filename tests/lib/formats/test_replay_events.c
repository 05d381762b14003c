/* SPDX-License-Identifier: MIT */
/* The common event stream of foreign replays as JSON lines and CSV rows: exact text, quoting,
 * shortest round-trip times, and refusal of events whose fields are not an object. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "recd/replay.h"

static recd_replay_event sample(const char *fields)
{
    recd_replay_event ev = {"sc2replay", 1.5, 24, 2, "unit_born", fields, strlen(fields)};
    return ev;
}

static void test_jsonl_line(void **state)
{
    (void)state;
    recd_buf out = {0};
    recd_replay_event ev = sample("{\"unit\":\"Probe\",\"x\":30.5}");
    assert_int_equal(recd_replay_event_jsonl(&ev, &out), 0);
    const char *want = "{\"source\":\"sc2replay\",\"t\":1.5,\"t_raw\":24,\"actor\":2,"
                       "\"kind\":\"unit_born\",\"fields\":{\"unit\":\"Probe\",\"x\":30.5}}\n";
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    recd_buf_free(&out);
}

static void test_jsonl_shortest_time_and_no_actor(void **state)
{
    (void)state;
    recd_buf out = {0};
    recd_replay_event ev = sample("{}");
    ev.t = 0.1;
    ev.actor = -1;
    assert_int_equal(recd_replay_event_jsonl(&ev, &out), 0);
    assert_non_null(strstr((const char *)out.data, "\"t\":0.1,"));
    assert_non_null(strstr((const char *)out.data, "\"actor\":-1,"));
    recd_buf_free(&out);
}

static void test_csv_quotes_fields(void **state)
{
    (void)state;
    recd_buf out = {0};
    recd_replay_event ev = sample("{\"a\":1,\"b\":\"x\"}");
    assert_int_equal(recd_replay_event_csv_header(&out), 0);
    assert_int_equal(recd_replay_event_csv(&ev, &out), 0);
    const char *want = "source,t,t_raw,actor,kind,fields\n"
                       "sc2replay,1.5,24,2,unit_born,\"{\"\"a\"\":1,\"\"b\"\":\"\"x\"\"}\"\n";
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    recd_buf_free(&out);
}

static void test_refuses_non_object_fields(void **state)
{
    (void)state;
    recd_buf out = {0};
    recd_replay_event ev = sample("[1,2]");
    assert_int_equal(recd_replay_event_jsonl(&ev, &out), -EINVAL);
    assert_int_equal(recd_replay_event_csv(&ev, &out), -EINVAL);
    ev = sample("{}");
    ev.kind = NULL;
    assert_int_equal(recd_replay_event_jsonl(&ev, &out), -EINVAL);
    assert_int_equal(out.len, 0);
    recd_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jsonl_line),
        cmocka_unit_test(test_jsonl_shortest_time_and_no_actor),
        cmocka_unit_test(test_csv_quotes_fields),
        cmocka_unit_test(test_refuses_non_object_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
