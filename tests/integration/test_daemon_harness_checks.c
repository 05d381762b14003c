/* SPDX-License-Identifier: MIT */
/* Checks of the integration-test harness itself: its waits stretch under sanitizers (a server
 * that closes after the client library's 5 s default still counts as a clean close there), and a
 * test that fails half-way leaks nothing and leaves no directory behind. Needs no daemon. */
#include "test_daemon_harness.h"

/* A loopback TCP server in a child process: accepts one connection, reads it to its end, waits
 * close_delay_ms, then closes. Returns its pid; *port gets the port. */
static pid_t slow_closing_server(unsigned close_delay_ms, uint16_t *port)
{
    int fd = td_loopback_socket(SOCK_STREAM, port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int conn = accept(fd, NULL, NULL);
        char buf[4096];
        while (conn >= 0 && read(conn, buf, sizeof buf) > 0) {
        }
        td_sleep_ms(close_delay_ms);
        _exit(conn >= 0 ? 0 : 1);
    }
    close(fd);
    return pid;
}

/* The client library gives up after 5000 ms by default; a sanitizer build on a busy machine
 * needs longer, and the harness's clients must wait for it. */
static void test_client_close_waits_longer_under_sanitizers(void **state)
{
    (void)state;
    unsigned delay_ms = tu_time_scale() > 1 ? 7000 : 1000;
    uint16_t port;
    pid_t server = slow_closing_server(delay_ms, &port);
    char url[64];
    snprintf(url, sizeof url, "tcp://127.0.0.1:%u", (unsigned)port);
    recd_client *c = td_connect(url);
    td_send_open(c, "slow", RECD_MSG_FMT_SAMP_ONFOOT, 0);
    uint64_t t0 = td_now_ms();
    td_close_client(c);
    assert_true(td_now_ms() - t0 >= delay_ms - 100);
    int status;
    assert_int_equal(waitpid(server, &status, 0), server);
}

/* ---- a test that fails on purpose, run in a child process ---- */

static int deliberate_failure_report_fd = -1;

static void failing_test(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    dprintf(deliberate_failure_report_fd, "%s\n", d.dir);
    td_rec_session s;
    td_rec_session_init(&s, "left", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 5000, 1);
    recd_msg m;
    while (td_rec_session_next(&s, &m)) {
    }
    td_files f = td_list(&d);
    (void)f;
    fail_msg("deliberate failure, with a directory, a session and a file list still held");
}

static int run_deliberate_failure(int report_fd)
{
    deliberate_failure_report_fd = report_fd;
    const struct CMUnitTest tests[] = {
        td_unit_test(failing_test),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The failing test's process must end with cmocka's "1 test failed", without a leak report, and
 * its directory must be gone. */
static void test_a_failed_test_leaves_nothing_behind(void **state)
{
    (void)state;
    const char *dir = tu_tmpdir();
    assert_non_null(dir);
    char report[600], log[600];
    snprintf(report, sizeof report, "%s/report", dir);
    snprintf(log, sizeof log, "%s/child.log", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int rep = open(report, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || rep < 0)
            _exit(127);
        dup2(out, 1);
        dup2(out, 2);
        char fd_text[16];
        snprintf(fd_text, sizeof fd_text, "%d", rep);
        execl("/proc/self/exe", "test_daemon_harness_checks", "--deliberate-failure", fd_text,
              (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    size_t report_len = 0, log_len = 0;
    uint8_t *report_text = tu_read_file(report, &report_len);
    uint8_t *child_log = tu_read_file(log, &log_len);
    char child_dir[600] = "";
    if (report_text) {
        const uint8_t *nl = memchr(report_text, '\n', report_len);
        snprintf(child_dir, sizeof child_dir, "%.*s",
                 (int)(nl ? (size_t)(nl - report_text) : report_len), (const char *)report_text);
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    bool dir_left = child_dir[0] && tu_exists(child_dir);
    /* LeakSanitizer keeps a non-zero exit code as it is: its report is the evidence. */
    bool leaked = child_log && memmem(child_log, log_len, "LeakSanitizer", 13) != NULL;
    bool ok = code == 1 && child_dir[0] && !dir_left && !leaked;
    if (!ok && child_log)
        fprintf(stderr, "---- the failing test's output ----\n%.*s---- end ----\n", (int)log_len,
                (const char *)child_log);
    free(report_text);
    free(child_log);
    tu_rmtree(dir);
    if (dir_left)
        tu_rmtree(child_dir);
    if (!ok)
        fail_msg("the deliberately failing test exited %d (want 1: one failed test)%s%s", code,
                 leaked ? ", leaked" : "", dir_left ? ", left its directory behind" : "");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--deliberate-failure") == 0)
        return run_deliberate_failure(atoi(argv[2]));
    const struct CMUnitTest tests[] = {
        td_unit_test(test_client_close_waits_longer_under_sanitizers),
        td_unit_test(test_a_failed_test_leaves_nothing_behind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
