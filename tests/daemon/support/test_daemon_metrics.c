/* SPDX-License-Identifier: MIT */
/* Tests for daemon/support/metrics.c: registration rules, counters/gauges/histograms, exact
 * Prometheus text output, escaping, recd's metric set, and concurrent updates from threads. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/metrics.h"

static char *render(const recd_metrics *reg)
{
    static char text[1 << 16];
    recd_buf b = {0};
    assert_int_equal(recd_metrics_render(reg, &b), 0);
    assert_true(b.len < sizeof text);
    memcpy(text, b.data ? (const char *)b.data : "", b.len);
    text[b.len] = '\0';
    recd_buf_free(&b);
    return text;
}

static void registration_rules(void **state)
{
    (void)state;
    recd_metrics *r = recd_metrics_new();
    assert_non_null(r);
    static const double good[] = {0.1, 1};
    static const double unsorted[] = {1, 0.1};
    static const double inf[] = {1, INFINITY};
    static const char *const vals[] = {"a"};
    static const recd_metric_label le[] = {{"le", vals, 1}};
    static const recd_metric_label badname[] = {{"9x", vals, 1}};
    static const recd_metric_label empty[] = {{"x", vals, 0}};
    recd_metric *a = recd_metrics_add(r, RECD_METRIC_COUNTER, "a_total", "A.", NULL, 0, NULL, 0);
    assert_non_null(a);
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "a_total", "dup", NULL, 0, NULL, 0));
    /* An old name: the same cells, its own unique name, never an alias of an alias. */
    recd_metric *old = recd_metrics_add_alias(r, a, "old_a_total", "Deprecated.");
    assert_non_null(old);
    assert_null(recd_metrics_add_alias(r, a, "a_total", "dup"));
    assert_null(recd_metrics_add_alias(r, old, "older_a_total", "x"));
    assert_null(recd_metrics_add_alias(r, NULL, "none_total", "x"));
    recd_metric_add(a, 0, 5);
    assert_int_equal(recd_metric_value(old, 0), 5);
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "1bad", "x", NULL, 0, NULL, 0));
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "bad-name", "x", NULL, 0, NULL, 0));
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "", "x", NULL, 0, NULL, 0));
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "c", "x", NULL, 0, good, 2));
    assert_null(recd_metrics_add(r, RECD_METRIC_HISTOGRAM, "h1", "x", NULL, 0, NULL, 0));
    assert_null(recd_metrics_add(r, RECD_METRIC_HISTOGRAM, "h2", "x", NULL, 0, unsorted, 2));
    assert_null(recd_metrics_add(r, RECD_METRIC_HISTOGRAM, "h3", "x", NULL, 0, inf, 2));
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "l1", "x", le, 1, NULL, 0));
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "l2", "x", badname, 1, NULL, 0));
    assert_null(recd_metrics_add(r, RECD_METRIC_COUNTER, "l3", "x", empty, 1, NULL, 0));
    assert_non_null(recd_metrics_add(r, RECD_METRIC_HISTOGRAM, "ns:h_seconds", "H.", NULL, 0, good, 2));
    recd_metrics_free(r);
}

static void exact_rendering(void **state)
{
    (void)state;
    recd_metrics *r = recd_metrics_new();
    static const char *const colors[] = {"red", "gr\"e\\en\n"};
    static const char *const sizes[] = {"s", "m", "l"};
    static const recd_metric_label two[] = {{"color", colors, 2}, {"size", sizes, 3}};
    static const double buckets[] = {0.005, 0.5, 2.5};
    recd_metric *c = recd_metrics_add(r, RECD_METRIC_COUNTER, "x_total", "Things.\nWith \\ escapes.", two, 2, NULL, 0);
    recd_metric *g = recd_metrics_add(r, RECD_METRIC_GAUGE, "x_open", "Open ones.", NULL, 0, NULL, 0);
    recd_metric *h = recd_metrics_add(r, RECD_METRIC_HISTOGRAM, "x_seconds", "Latency.", two, 1, buckets, 3);
    assert_non_null(c);
    assert_non_null(g);
    assert_non_null(h);

    recd_metric_add(c, recd_metric_series2(c, 1, 2), 5);
    recd_metric_add(c, recd_metric_series2(c, 0, 0), 1);
    recd_metric_add(c, recd_metric_series2(c, 2, 0), 100); /* out of range: ignored */
    recd_metric_add(c, recd_metric_series2(c, 0, 3), 100);
    recd_metric_set(g, 0, 7);
    recd_metric_sub(g, 0, 10);
    recd_metric_add(g, 0, 1);
    size_t red = 0;
    size_t s_red = recd_metric_series(h, &red);
    recd_metric_observe(h, s_red, 0.001);
    recd_metric_observe(h, s_red, 0.005); /* on the bound: le is inclusive */
    recd_metric_observe(h, s_red, 1);
    recd_metric_observe(h, s_red, 100);
    recd_metric_observe(h, s_red, NAN); /* ignored */
    recd_metric_observe(c, 0, 1);       /* wrong type: ignored */
    recd_metric_set(c, 0, 99);          /* wrong type: ignored */

    assert_int_equal(recd_metric_value(c, recd_metric_series2(c, 1, 2)), 5);
    assert_int_equal(recd_metric_value(g, 0), -2);
    assert_int_equal(recd_metric_count(h, s_red), 4);

    const char *want =
        "# HELP x_total Things.\\nWith \\\\ escapes.\n"
        "# TYPE x_total counter\n"
        "x_total{color=\"red\",size=\"s\"} 1\n"
        "x_total{color=\"red\",size=\"m\"} 0\n"
        "x_total{color=\"red\",size=\"l\"} 0\n"
        "x_total{color=\"gr\\\"e\\\\en\\n\",size=\"s\"} 0\n"
        "x_total{color=\"gr\\\"e\\\\en\\n\",size=\"m\"} 0\n"
        "x_total{color=\"gr\\\"e\\\\en\\n\",size=\"l\"} 5\n"
        "# HELP x_open Open ones.\n"
        "# TYPE x_open gauge\n"
        "x_open -2\n"
        "# HELP x_seconds Latency.\n"
        "# TYPE x_seconds histogram\n"
        "x_seconds_bucket{color=\"red\",le=\"0.005\"} 2\n"
        "x_seconds_bucket{color=\"red\",le=\"0.5\"} 2\n"
        "x_seconds_bucket{color=\"red\",le=\"2.5\"} 3\n"
        "x_seconds_bucket{color=\"red\",le=\"+Inf\"} 4\n"
        "x_seconds_sum{color=\"red\"} 101.006\n"
        "x_seconds_count{color=\"red\"} 4\n"
        "x_seconds_bucket{color=\"gr\\\"e\\\\en\\n\",le=\"0.005\"} 0\n"
        "x_seconds_bucket{color=\"gr\\\"e\\\\en\\n\",le=\"0.5\"} 0\n"
        "x_seconds_bucket{color=\"gr\\\"e\\\\en\\n\",le=\"2.5\"} 0\n"
        "x_seconds_bucket{color=\"gr\\\"e\\\\en\\n\",le=\"+Inf\"} 0\n"
        "x_seconds_sum{color=\"gr\\\"e\\\\en\\n\"} 0\n"
        "x_seconds_count{color=\"gr\\\"e\\\\en\\n\"} 0\n";
    assert_string_equal(render(r), want);
    recd_metrics_free(r);
}

static void recd_set(void **state)
{
    (void)state;
    recd_daemon_metrics m;
    assert_int_equal(recd_daemon_metrics_init(&m), 0);
    recd_metrics_input(&m, RECD_M_UDP, recd_metrics_format_of(RECD_MSG_FMT_RECAP), 1, 120);
    recd_metrics_input(&m, RECD_M_UDP, recd_metrics_format_of(RECD_MSG_FMT_RECAP), 1, 80);
    recd_metrics_input(&m, RECD_M_TCP, recd_metrics_format_of(RECD_MSG_FMT_SAMP_ONFOOT), 1, 72);
    recd_metrics_decode_error(&m, RECD_M_TOO_LARGE);
    recd_metrics_decode_error(&m, RECD_M_REASONS); /* out of range: ignored */
    recd_metrics_flush_done(&m, 4096, 0.002);
    recd_metrics_config_reload(&m, 0);
    recd_metric_add(m.sessions_open, 0, 3);
    recd_metric_sub(m.sessions_open, 0, 1);
    recd_metric_set(m.buffered_bytes, 0, 65536);
    recd_metrics_write_errors(&m, -ENOSPC, 2);
    recd_metrics_write_errors(&m, EIO, 1);
    recd_metrics_write_errors(&m, -EBADF, 1);
    recd_metrics_bytes_lost(&m, 10);
    recd_metrics_refresh_process(&m);
    const char *text = render(m.registry);
    static const char *const expected[] = {
        "# TYPE recd_sessions_open gauge\nrecd_sessions_open 2\n",
        "recd_samples_total{transport=\"udp\",format=\"recap\"} 2\n",
        "recd_samples_total{transport=\"tcp\",format=\"samp-onfoot\"} 1\n",
        "recd_samples_total{transport=\"unix\",format=\"samp-vehicle\"} 0\n",
        "recd_bytes_in_total{transport=\"udp\",format=\"recap\"} 200\n",
        "recd_in_bytes_total{transport=\"udp\",format=\"recap\"} 200\n",
        "# HELP recd_bytes_in_total Deprecated: use recd_in_bytes_total",
        "recd_written_bytes_total 4096\n",
        "recd_write_errors_total{reason=\"no_space\"} 2\n",
        "recd_write_errors_total{reason=\"io\"} 2\n",
        "recd_lost_bytes_total 10\n",
        "recd_bytes_lost_total 10\n",
        "# TYPE recd_build_info gauge\nrecd_build_info{version=\"",
        "# TYPE process_cpu_seconds_total counter\n",
        "# TYPE process_start_time_seconds gauge\n",
        "recd_sessions_open_by_format{format=\"recap\"} 0\n",
        "recd_decode_errors_total{reason=\"too_large\"} 1\n",
        "recd_decode_errors_total{reason=\"other\"} 0\n",
        "# TYPE recd_udp_gaps_total counter\nrecd_udp_gaps_total 0\n",
        "recd_udp_duplicates_total 0\n",
        "recd_bytes_written_total 4096\n",
        "recd_files_finalized_total 0\n",
        "# TYPE recd_flush_latency_seconds histogram\n",
        "recd_flush_latency_seconds_bucket{le=\"0.001\"} 0\nrecd_flush_latency_seconds_bucket{le=\"0.0025\"} 1\n",
        "recd_flush_latency_seconds_count 1\n",
        "recd_buffered_bytes 65536\n",
        "# TYPE recd_backpressure_events_total counter\n",
        "recd_config_reloads_total{result=\"failed\"} 1\n",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        if (!strstr(text, expected[i]))
            fail_msg("missing:\n%s\nin:\n%s", expected[i], text);
    /* The process metrics hold this process' real values. */
    const char *rss = strstr(text, "\nprocess_resident_memory_bytes ");
    assert_non_null(rss);
    assert_true(strtod(rss + 31, NULL) > 100000);
    const char *start = strstr(text, "\nprocess_start_time_seconds ");
    assert_non_null(start);
    double started = strtod(start + 28, NULL);
    assert_true(started > 1.6e9 && started <= (double)time(NULL) + 1);
    const char *fds = strstr(text, "\nprocess_open_fds ");
    assert_non_null(fds);
    assert_true(strtod(fds + 18, NULL) >= 3);
    recd_daemon_metrics_free(&m);
}

static recd_daemon_metrics shared;

static void *writer_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++) {
        recd_metrics_input(&shared, RECD_M_TCP, recd_metrics_format_of(RECD_MSG_FMT_RECAP), 1, 3);
        recd_metric_observe(shared.flush_latency_seconds, 0, 0.25);
        recd_metric_add(shared.buffered_bytes, 0, 2);
        recd_metric_sub(shared.buffered_bytes, 0, 2);
    }
    return NULL;
}

static void concurrent_updates(void **state)
{
    (void)state;
    assert_int_equal(recd_daemon_metrics_init(&shared), 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, writer_thread, NULL), 0);
    for (int k = 0; k < 20; k++)
        render(shared.registry); /* rendering while writers run is allowed */
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    size_t s = recd_metric_series2(shared.samples_total, RECD_M_TCP, recd_metrics_format_of(RECD_MSG_FMT_RECAP));
    assert_int_equal(recd_metric_value(shared.samples_total, s), 400000);
    assert_int_equal(recd_metric_value(shared.bytes_in_total, s), 1200000);
    assert_int_equal(recd_metric_value(shared.buffered_bytes, 0), 0);
    assert_int_equal(recd_metric_count(shared.flush_latency_seconds, 0), 400000);
    assert_non_null(strstr(render(shared.registry), "recd_flush_latency_seconds_sum 100000\n"));
    recd_daemon_metrics_free(&shared);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registration_rules),
        cmocka_unit_test(exact_rendering),
        cmocka_unit_test(recd_set),
        cmocka_unit_test(concurrent_updates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
