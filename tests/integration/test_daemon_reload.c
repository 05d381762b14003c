/* SPDX-License-Identifier: MIT */
/* recd reload and retention: SIGHUP with a valid file adds and removes listeners (IPv6 too) and
 * applies live options while sessions keep recording; SIGHUP with an invalid file keeps the
 * running configuration; retention deletes old finalized recordings recd marked as its own, never
 * an open .part nor an unmarked file. */
#include "test_daemon_harness.h"

#include "recd/own_mark.h"

static bool ipv6_loopback(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof a);
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static void write_config(td_daemon *d, const char *listen_extra, bool with_udp, const char *rest)
{
    char text[4096];
    snprintf(text, sizeof text,
             "listen:\n  - tcp://127.0.0.1:0\n%s  - unix://%s/in.sock\n%s"
             "output:\n  root: %s\nmetrics:\n  listen: 127.0.0.1:0\n%s",
             with_udp ? "  - udp://127.0.0.1:0\n" : "", d->dir, listen_extra, d->out, rest);
    td_rewrite_config(d, text);
}

/* Waits until the --print-ports output names a listener starting with prefix. */
static bool wait_port_line(const td_daemon *d, const char *prefix, char *url, size_t cap)
{
    uint64_t deadline = td_deadline(10000);
    while (td_now_ms() < deadline) {
        FILE *f = fopen(d->ports, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (strncmp(line, "listen ", 7) == 0 && strncmp(line + 7, prefix, strlen(prefix)) == 0) {
                td_copy(url, cap, line + 7);
                fclose(f);
                return true;
            }
        }
        if (f)
            fclose(f);
        td_sleep_ms(25);
    }
    return false;
}

static bool log_has(const td_daemon *d, const char *text)
{
    size_t n;
    uint8_t *log = tu_read_file(d->log, &n);
    if (!log)
        return false;
    recd_buf b = {0};
    recd_buf_append(&b, log, n);
    recd_buf_append(&b, "", 1);
    bool found = strstr((const char *)b.data, text) != NULL;
    recd_buf_free(&b);
    free(log);
    return found;
}

static void wait_log(const td_daemon *d, const char *text)
{
    uint64_t deadline = td_deadline(10000);
    while (!log_has(d, text)) {
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            fail_msg("the log never said '%s'", text);
        }
        td_sleep_ms(25);
    }
}

/* An old file; with marked_as, carrying the mark recd sets on its parts (recd/own_mark.h). */
static void make_old_file_as(const td_daemon *d, const char *rel, const char *content,
                             const char *marked_as)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", d->out, rel);
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + strlen(d->out) + 1; (p = strchr(p, '/')); p++) {
        *p = 0;
        mkdir(dir, 0755);
        *p = '/';
    }
    assert_int_equal(tu_write_file(path, content, strlen(content)), 0);
    if (marked_as) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(recd_own_mark_set(fd, marked_as), 0);
        close(fd);
    }
    struct timespec old[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
}

/* An old recording as recd would have written it. */
static void make_old_file(const td_daemon *d, const char *rel, const char *content)
{
    make_old_file_as(d, rel, content, rel);
}

static bool exists(const td_daemon *d, const char *rel)
{
    char path[2048];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", d->out, rel);
    return stat(path, &st) == 0;
}

static void test_reload_and_retention(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    write_config(&d, "", true, "rotation:\n  idle_timeout: 0\n");
    td_start(&d);
    bool v6 = ipv6_loopback();

    /* A session that stays open across everything below. */
    td_rec_session s;
    td_rec_session_init(&s, "steady", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 30000, 8);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, "steady", RECD_MSG_FMT_SAMP_ONFOOT, 1763213398000);
    recd_msg m;
    for (int i = 0; i < 100 && td_rec_session_next(&s, &m); i++)
        td_send(c, &m);
    assert_int_equal(recd_client_flush(c), 0);

    /* Reload 1: valid; adds an IPv6 (or second IPv4) listener, drops UDP, turns retention on. */
    write_config(&d, v6 ? "  - tcp://[::1]:0\n" : "  - tcp://127.0.0.2:0\n", false,
                 "rotation:\n  idle_timeout: 0\nretention:\n  max_age: 1m\nlog:\n  level: debug\n");
    /* Old recordings, and the open part made to look old too: retention must spare the .part. */
    make_old_file(&d, "samp-onfoot/old/20200101T000000Z.rec", "old rec");
    make_old_file(&d, "recap/old/20200101T000000Z.recap", "old recap");
    make_old_file(&d, "samp-onfoot/old/20200101T000000Z.rec.part.bad", "quarantined");
    make_old_file(&d, "samp-onfoot/old/notes.txt", "not a recording");
    make_old_file_as(&d, "samp-onfoot/old/20200101T000001Z.rec", "not recd's", NULL);
    td_files f = td_session_files(&d, "samp-onfoot", "steady");
    uint64_t deadline = td_deadline(10000);
    while (f.parts == 0 && td_now_ms() < deadline) { /* the first flush creates the .part */
        td_files_free(&f);
        td_sleep_ms(50);
        f = td_session_files(&d, "samp-onfoot", "steady");
    }
    assert_int_equal(f.parts, 1);
    char part_rel[1100];
    snprintf(part_rel, sizeof part_rel, "%s", f.items[0].path);
    td_files_free(&f);
    char part_path[2200];
    snprintf(part_path, sizeof part_path, "%s/%s", d.out, part_rel);
    struct timespec old[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    assert_int_equal(utimensat(AT_FDCWD, part_path, old, 0), 0);

    kill(d.pid, SIGHUP);
    assert_true(td_wait_metric(&d, "recd_config_reloads_total{result=\"ok\"}", 1, 10000) >= 1);
    char added[256];
    assert_true(wait_port_line(&d, v6 ? "tcp://[::1]:" : "tcp://127.0.0.2:", added, sizeof added));
    wait_log(&d, "stopped listening on udp://");
    wait_log(&d, "retention: deleted");
    uint64_t until = td_deadline(10000);
    while (exists(&d, "recap/old/20200101T000000Z.recap") && td_now_ms() < until)
        td_sleep_ms(25);
    assert_false(exists(&d, "samp-onfoot/old/20200101T000000Z.rec"));
    assert_false(exists(&d, "recap/old/20200101T000000Z.recap"));
    assert_false(exists(&d, "samp-onfoot/old/20200101T000000Z.rec.part.bad"));
    assert_true(exists(&d, "samp-onfoot/old/notes.txt"));
    assert_true(exists(&d, "samp-onfoot/old/20200101T000001Z.rec")); /* not marked: not recd's */
    assert_true(exists(&d, part_rel)); /* open recordings are never removed */

    /* The new listener records; the old TCP listener (same entry) kept its port. */
    td_rec_session n;
    td_rec_session_init(&n, "via-new", recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE, 5000, 9);
    td_send_rec_session(added, &n, 1763213398000);

    /* Reload 2: invalid; nothing changes and the failure is counted. */
    td_rewrite_config(&d, "flush:\n  interval: 1x\n");
    kill(d.pid, SIGHUP);
    assert_true(td_wait_metric(&d, "recd_config_reloads_total{result=\"failed\"}", 1, 10000) >= 1);
    wait_log(&d, "reload failed, keeping the running configuration");
    td_rec_session after;
    td_rec_session_init(&after, "after-bad", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 5000, 10);
    td_send_rec_session(d.tcp, &after, 1763213398000);

    while (td_rec_session_next(&s, &m))
        td_send(c, &m);
    td_send_close(c, "steady", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(c);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "steady", &s.expect);
    td_expect_single_file(&d, "samp-vehicle", "via-new", &n.expect);
    td_expect_single_file(&d, "samp-onfoot", "after-bad", &after.expect);
    td_rec_session_free(&s);
    td_rec_session_free(&n);
    td_rec_session_free(&after);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_reload_and_retention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
