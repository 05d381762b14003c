/* SPDX-License-Identifier: MIT */
/* Signals at start: a supervisor may send SIGHUP (reload) the moment recd prints a bound port.
 * recd installs its handlers before it binds anything, so such a signal is a reload once the
 * loop runs, never the default action that kills the process. */
#include "test_daemon_harness.h"

#define STARTS 20

/* Starts recd with --print-ports on a pipe and sends SIGHUP as soon as the first line (the
 * metrics port, bound first) arrives, then reads the remaining lines. Returns the pid, or -1
 * with *status set when recd died. */
static pid_t start_and_hup(td_daemon *d, int *status)
{
    const char *recd = td_require_recd();
    int out[2];
    assert_int_equal(pipe(out), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int e = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (e < 0)
            _exit(127);
        dup2(out[1], 1);
        dup2(e, 2);
        close(out[0]);
        execl(recd, "recd", "--config", d->config, "--print-ports", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    td_set_pid(d, pid);
    FILE *f = fdopen(out[0], "r");
    assert_non_null(f);
    char line[512];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        if (lines++ == 0)
            kill(pid, SIGHUP);
        if (lines == 4) /* metrics, tcp, udp, unix */
            break;
    }
    fclose(f);
    /* The reload runs on the loop; give it time to act before asking whether recd survived. */
    uint64_t deadline = td_deadline(300);
    while (td_now_ms() < deadline) {
        if (waitpid(pid, status, WNOHANG) == pid) {
            td_set_pid(d, -1);
            return -1;
        }
        td_sleep_ms(10);
    }
    return pid;
}

static void sighup_right_after_the_ports_is_a_reload(void **state)
{
    (void)state;
    int died = 0;
    for (int i = 0; i < STARTS; i++) {
        td_daemon d;
        td_setup(&d, NULL);
        int status = 0;
        if (start_and_hup(&d, &status) < 0) {
            died++;
            fprintf(stderr, "start %d: recd died (%s %d)\n", i,
                    WIFSIGNALED(status) ? "signal" : "exit",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        } else {
            int code = td_signal_wait(&d, SIGTERM);
            if (code != 0) {
                td_dump_log(&d);
                fail_msg("start %d: recd exited with %d after SIGTERM", i, code);
            }
        }
        td_cleanup(&d);
    }
    if (died)
        fail_msg("recd died of a SIGHUP sent right after its first port in %d of %d starts", died,
                 STARTS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        td_unit_test(sighup_right_after_the_ports_is_a_reload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
