/* SPDX-License-Identifier: MIT */
/* Tests for daemon/support/log.c: "<N>" prefixes, level filter, one line per event, rate
 * limiting with a fake clock, and concurrent use. */
#include "testutil.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/log.h"

static char captured[1 << 16];
static size_t captured_len;
static size_t captured_lines;
static uint64_t fake_now;

static void capture(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    assert_true(len > 0 && line[len - 1] == '\n');
    assert_null(memchr(line, '\n', len - 1));
    if (captured_len + len < sizeof captured) {
        memcpy(captured + captured_len, line, len);
        captured_len += len;
        captured[captured_len] = '\0';
    }
    captured_lines++;
}

static uint64_t fake_clock(void) { return fake_now; }

static int setup(void **state)
{
    (void)state;
    captured_len = 0;
    captured_lines = 0;
    captured[0] = '\0';
    fake_now = 1000000;
    recd_log_set_writer(capture, NULL);
    recd_log_set_clock(fake_clock);
    recd_log_set_level(RECD_LOG_INFO);
    recd_log_set_rate_limit(10, 5000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    recd_log_set_writer(NULL, NULL);
    recd_log_set_clock(NULL);
    return 0;
}

static void levels(void **state)
{
    (void)state;
    assert_int_equal(recd_log_level_parse("debug"), RECD_LOG_DEBUG);
    assert_int_equal(recd_log_level_parse("error"), RECD_LOG_ERR);
    assert_int_equal(recd_log_level_parse("warn"), RECD_LOG_WARNING);
    assert_int_equal(recd_log_level_parse("emerg"), RECD_LOG_EMERG);
    assert_int_equal(recd_log_level_parse("verbose"), -EINVAL);
    assert_int_equal(recd_log_level_parse(NULL), -EINVAL);
    assert_string_equal(recd_log_level_name(RECD_LOG_NOTICE), "notice");

    log_info("hello %d", 42);
    log_debug("hidden");
    log_err("disk %s", "full");
    assert_string_equal(captured, "<6>hello 42\n<3>disk full\n");

    recd_log_set_level(RECD_LOG_WARNING);
    assert_false(recd_log_enabled(RECD_LOG_NOTICE));
    log_notice("hidden too");
    log_warn("careful");
    recd_log_set_level(RECD_LOG_DEBUG);
    log_debug("now visible");
    assert_string_equal(captured, "<6>hello 42\n<3>disk full\n<4>careful\n<7>now visible\n");
}

static void one_line_per_event(void **state)
{
    (void)state;
    log_info("peer sent %s", "a\nb\r\tc\x01" "d");
    assert_string_equal(captured, "<6>peer sent a b  c?d\n");
    captured_len = 0;
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    log_info("%s", big);
    assert_true(captured_len <= RECD_LOG_LINE_MAX + 1);
    assert_memory_equal(captured + captured_len - 4, "...\n", 4);
    assert_memory_equal(captured, "<6>xxx", 6);
}

/* On a terminal: "YYYY-MM-DD HH:MM:SS.mmm ", the level in words for warnings and worse, no <N>. */
static void terminal_style(void **state)
{
    (void)state;
    recd_log_set_style(RECD_LOG_STYLE_TERMINAL);
    log_info("ready");
    log_err("disk %s", "full");
    log_warn("careful\nnow");
    recd_log_set_style(RECD_LOG_STYLE_PRIORITY);
    log_info("back");
    const char *line = captured;
    for (int i = 0; i < 3; i++) {
        static const char *const rest[] = {"ready\n", "error: disk full\n", "warning: careful now\n"};
        /* 2026-11-25 20:51:14.123 */
        for (int k = 0; k < 23; k++) {
            char c = line[k];
            bool digit = c >= '0' && c <= '9';
            bool ok = (k == 4 || k == 7) ? c == '-' : k == 10 ? c == ' ' : (k == 13 || k == 16) ? c == ':'
                                                                      : k == 19 ? c == '.' : digit;
            if (!ok)
                fail_msg("line %d: no timestamp at %d: %s", i, k, line);
        }
        assert_int_equal(line[23], ' ');
        assert_memory_equal(line + 24, rest[i], strlen(rest[i]));
        line = strchr(line, '\n') + 1;
    }
    assert_string_equal(line, "<6>back\n");
}

static void rate_limited(void **state)
{
    (void)state;
    recd_log_set_rate_limit(3, 1000);
    for (int i = 0; i < 10; i++)
        log_err("write failed for session %d", i);
    assert_int_equal(captured_lines, 3);
    /* Info is never limited; a different call site has its own budget. */
    for (int i = 0; i < 5; i++)
        log_info("accepted %d", i);
    log_err("another problem");
    assert_int_equal(captured_lines, 9);

    /* After the interval, the next message first reports what was dropped. */
    fake_now += 1000;
    captured_len = 0;
    log_err("write failed for session %d", 99);
    assert_string_equal(captured,
                        "<3>suppressed 7 messages in the last 1000 ms like: write failed for session 2\n"
                        "<3>write failed for session 99\n");

    /* A flood that stops is reported by the periodic flush once its window ends. */
    for (int i = 0; i < 5; i++)
        log_warn("slow client %d", i);
    captured_len = 0;
    recd_log_flush_suppressed(false);
    assert_int_equal(captured_len, 0);
    fake_now += 1500;
    recd_log_flush_suppressed(false);
    assert_string_equal(captured, "<4>suppressed 2 messages in the last 1500 ms like: slow client 2\n");
    captured_len = 0;
    recd_log_flush_suppressed(false);
    assert_int_equal(captured_len, 0);

    /* At exit everything pending is reported. */
    for (int i = 0; i < 4; i++)
        recd_log_keyed(RECD_LOG_ERR, "peer 10.0.0.1", "bad frame %d", i);
    captured_len = 0;
    recd_log_flush_suppressed(true);
    assert_string_equal(captured, "<3>suppressed 1 messages in the last 0 ms like: bad frame 2\n");
}

static void keys_overflow_table(void **state)
{
    (void)state;
    recd_log_set_rate_limit(1, 1000);
    char key[32];
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < 200; k++) {
            snprintf(key, sizeof key, "k%d", k);
            recd_log_keyed(RECD_LOG_ERR, key, "m%d", k);
            fake_now++;
        }
    assert_true(captured_lines >= 200);
    recd_log_flush_suppressed(true);
}

static void *spam(void *arg)
{
    (void)arg;
    for (int i = 0; i < 500; i++)
        log_err("thread message %d", i);
    return NULL;
}

static void threads(void **state)
{
    (void)state;
    recd_log_set_rate_limit(0, 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, spam, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(captured_lines, 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(levels, setup, teardown),
        cmocka_unit_test_setup_teardown(one_line_per_event, setup, teardown),
        cmocka_unit_test_setup_teardown(terminal_style, setup, teardown),
        cmocka_unit_test_setup_teardown(rate_limited, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_overflow_table, setup, teardown),
        cmocka_unit_test_setup_teardown(threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
