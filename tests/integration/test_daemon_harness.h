/* SPDX-License-Identifier: MIT */
/* Shared helpers of the recd integration tests (included by each test_daemon_*.c): start the
 * daemon from $RECD on ephemeral loopback ports (--print-ports), stop or kill it, read its
 * metrics, send synthetic sessions with the librecd client, and inspect the output tree.
 * Every wait takes a base time that tu_scaled_ms() stretches under sanitizers; register tests
 * with td_unit_test() so that a failing test releases what the harness handed it. */
#ifndef RECD_TEST_DAEMON_HARNESS_H
#define RECD_TEST_DAEMON_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "recd/client.h"
#include "recd/message.h"
#include "recd/recap.h"
#include "recd/samp_rec.h"
#include "recd/synth.h"
#include "formats/rec/rec_synth.h"
#include "formats/recap/recap_synth.h"
#include "recd/wire.h"
#include "testutil.h"

#define TD_FN static __attribute__((unused))
/* Base times in ms; every use scales them with tu_scaled_ms(). */
#define TD_START_TIMEOUT_MS 20000
#define TD_STOP_TIMEOUT_MS 60000
#define TD_CLIENT_CLOSE_TIMEOUT_MS 10000 /* the client library's own default is 5000 */

/* ---- what a failed test leaves behind ----------------------------------------------------------
 * cmocka's fail_msg() and assert_*() jump out of a test past its frees. The harness notes every
 * object it hands out (daemon directories and processes, clients, synthetic sessions, file
 * lists), and td_teardown(), the teardown of every td_unit_test(), releases what the test did not:
 * a failing test leaks nothing and leaves no daemon running. Only heap objects are noted, since
 * the test's stack frame is gone by the time the teardown runs. */
typedef void (*td_release_fn)(void *obj);
typedef struct td_held {
    td_release_fn release;
    void *obj;
} td_held;
static td_held *td_holding;
static size_t td_nholding, td_holding_cap;

TD_FN void td_hold(void *obj, td_release_fn release)
{
    if (td_nholding == td_holding_cap) {
        size_t cap = td_holding_cap ? td_holding_cap * 2 : 64;
        td_held *grown = realloc(td_holding, cap * sizeof *grown);
        if (!grown) {
            release(obj);
            fail_msg("out of memory noting a harness object");
        }
        td_holding = grown;
        td_holding_cap = cap;
    }
    td_holding[td_nholding++] = (td_held){release, obj};
}

/* Forgets obj (its owner releases it now). */
TD_FN void td_unhold(const void *obj)
{
    for (size_t i = td_nholding; i-- > 0;) {
        if (td_holding[i].obj == obj) {
            memmove(&td_holding[i], &td_holding[i + 1], (td_nholding - i - 1) * sizeof td_holding[0]);
            td_nholding--;
            return;
        }
    }
}

TD_FN int td_teardown(void **state)
{
    (void)state;
    while (td_nholding > 0) {
        td_held h = td_holding[--td_nholding];
        h.release(h.obj);
    }
    free(td_holding);
    td_holding = NULL;
    td_holding_cap = 0;
    return 0;
}

#define td_unit_test(f) cmocka_unit_test_teardown(f, td_teardown)

typedef struct td_daemon_guard td_daemon_guard;

typedef struct td_daemon {
    pid_t pid;
    char dir[512];    /* private directory of this daemon */
    char out[600];    /* output root */
    char config[600];
    char ports[600];  /* --print-ports output */
    char log[600];    /* stderr */
    char tcp[128], udp[128], unix_url[700], metrics[128];
    td_daemon_guard *guard; /* what td_teardown needs: the pid and the directory */
} td_daemon;

struct td_daemon_guard {
    pid_t pid;
    char dir[512];
};

TD_FN uint64_t td_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

TD_FN void td_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* The monotonic time base_ms from now, stretched under sanitizers. */
TD_FN uint64_t td_deadline(unsigned base_ms) { return td_now_ms() + tu_scaled_ms(base_ms); }

static void td_kill_and_remove(pid_t pid, const char *dir)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    if (dir[0] && !getenv("RECD_KEEP_TEST_DIRS"))
        tu_rmtree(dir);
}

static void td_release_daemon_guard(void *obj)
{
    td_daemon_guard *g = obj;
    td_kill_and_remove(g->pid, g->dir);
    free(g);
}

/* Records the daemon's process (or -1): the one place d->pid changes. */
TD_FN void td_set_pid(td_daemon *d, pid_t pid)
{
    d->pid = pid;
    if (d->guard)
        d->guard->pid = pid;
}

/* Skips the test (exit 77) when the daemon binary is not built. */
TD_FN const char *td_require_recd(void)
{
    const char *recd = getenv("RECD");
    if (!recd || !*recd || access(recd, X_OK) != 0) {
        printf("SKIP: $RECD does not name the recd binary (the daemon is not built: needs libuv, "
               "libyaml and http-parser)\n");
        exit(TEST_SKIP_EXIT);
    }
    return recd;
}

/* A daemon directory with a config: listeners on port 0 (TCP, UDP, Unix), the output root, the
 * metrics endpoint on port 0, and the caller's extra YAML sections (not listen/output/metrics). */
TD_FN void td_setup(td_daemon *d, const char *extra_yaml)
{
    memset(d, 0, sizeof *d);
    d->pid = -1;
    const char *tmp = tu_tmpdir();
    assert_non_null(tmp);
    snprintf(d->dir, sizeof d->dir, "%s", tmp);
    d->guard = calloc(1, sizeof *d->guard);
    if (!d->guard) {
        td_kill_and_remove(-1, d->dir);
        fail_msg("out of memory");
    }
    d->guard->pid = -1;
    snprintf(d->guard->dir, sizeof d->guard->dir, "%s", d->dir);
    td_hold(d->guard, td_release_daemon_guard);
    snprintf(d->out, sizeof d->out, "%s/out", d->dir);
    snprintf(d->config, sizeof d->config, "%s/recd.yaml", d->dir);
    snprintf(d->ports, sizeof d->ports, "%s/ports", d->dir);
    snprintf(d->log, sizeof d->log, "%s/recd.log", d->dir);
    FILE *f = fopen(d->config, "w");
    assert_non_null(f);
    fprintf(f,
            "listen:\n  - tcp://127.0.0.1:0\n  - udp://127.0.0.1:0\n  - unix://%s/in.sock\n"
            "output:\n  root: %s\n"
            "metrics:\n  listen: 127.0.0.1:0\n%s",
            d->dir, d->out, extra_yaml ? extra_yaml : "");
    fclose(f);
}

/* Rewrites the config with other extra sections (for reload tests). */
TD_FN void td_rewrite_config(td_daemon *d, const char *whole_yaml)
{
    FILE *f = fopen(d->config, "w");
    assert_non_null(f);
    fputs(whole_yaml, f);
    fclose(f);
}

TD_FN void td_cleanup(td_daemon *d)
{
    if (d->guard) {
        td_unhold(d->guard);
        free(d->guard);
        d->guard = NULL;
    }
    td_kill_and_remove(d->pid, d->dir);
    d->pid = -1;
}

TD_FN void td_dump_log(const td_daemon *d)
{
    size_t n;
    uint8_t *text = tu_read_file(d->log, &n);
    if (!text)
        return;
    fprintf(stderr, "---- recd log (%s) ----\n", d->log);
    size_t start = n > 8000 ? n - 8000 : 0;
    fwrite(text + start, 1, n - start, stderr);
    fprintf(stderr, "---- end of log ----\n");
    free(text);
}

/* Copies text into dst (cut to fit): addresses are short, the buffers generous. */
static void td_copy(char *dst, size_t cap, const char *text)
{
    size_t n = strlen(text);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, text, n);
    dst[n] = 0;
}

/* Reads the --print-ports lines; true when every expected address is there. */
static bool td_read_ports(td_daemon *d)
{
    FILE *f = fopen(d->ports, "r");
    if (!f)
        return false;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "listen tcp://", 13) == 0)
            td_copy(d->tcp, sizeof d->tcp, line + 7);
        else if (strncmp(line, "listen udp://", 13) == 0)
            td_copy(d->udp, sizeof d->udp, line + 7);
        else if (strncmp(line, "listen unix://", 14) == 0)
            td_copy(d->unix_url, sizeof d->unix_url, line + 7);
        else if (strncmp(line, "metrics ", 8) == 0)
            td_copy(d->metrics, sizeof d->metrics, line + 8);
    }
    fclose(f);
    return d->tcp[0] && d->udp[0] && d->unix_url[0] && d->metrics[0];
}

/* Starts recd on d's config; fails the test when it does not come up. extra_args may be NULL. */
TD_FN void td_start(td_daemon *d)
{
    const char *recd = td_require_recd();
    d->tcp[0] = d->udp[0] = d->unix_url[0] = d->metrics[0] = 0;
    unlink(d->ports);
    pid_t pid = fork();
    if (pid < 0)
        fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test (longjmp, exit) leaves no daemon behind */
        int o = open(d->ports, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (o < 0 || e < 0)
            _exit(127);
        dup2(o, 1);
        dup2(e, 2);
        execl(recd, "recd", "--config", d->config, "--print-ports", (char *)NULL);
        _exit(127);
    }
    td_set_pid(d, pid);
    uint64_t deadline = td_deadline(TD_START_TIMEOUT_MS);
    while (!td_read_ports(d)) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            td_set_pid(d, -1);
            td_dump_log(d);
            fail_msg("recd exited during startup (status %d)", status);
        }
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            fail_msg("recd did not print its ports within %u ms", tu_scaled_ms(TD_START_TIMEOUT_MS));
        }
        td_sleep_ms(20);
    }
}

/* Sends sig and waits for the exit; returns the exit code (128 + signal when killed). */
TD_FN int td_signal_wait(td_daemon *d, int sig)
{
    assert_true(d->pid > 0);
    kill(d->pid, sig);
    uint64_t deadline = td_deadline(TD_STOP_TIMEOUT_MS);
    int status = 0;
    for (;;) {
        pid_t r = waitpid(d->pid, &status, WNOHANG);
        if (r == d->pid)
            break;
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            kill(d->pid, SIGKILL);
            waitpid(d->pid, &status, 0);
            td_set_pid(d, -1);
            fail_msg("recd did not exit within %u ms of signal %d", tu_scaled_ms(TD_STOP_TIMEOUT_MS),
                     sig);
        }
        td_sleep_ms(10);
    }
    td_set_pid(d, -1);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

/* SIGTERM: must exit 0. */
TD_FN void td_stop(td_daemon *d)
{
    int code = td_signal_wait(d, SIGTERM);
    if (code != 0) {
        td_dump_log(d);
        fail_msg("recd exited with %d after SIGTERM", code);
    }
}

/* A socket bound to a free loopback port (*port), listening when it is a stream socket. */
TD_FN int td_loopback_socket(int type, uint16_t *port)
{
    int fd = socket(AF_INET, type, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || (type == SOCK_STREAM && listen(fd, 64) < 0) ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        int e = errno;
        close(fd);
        fail_msg("cannot bind a loopback socket: %s", strerror(e));
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* ---- metrics ---------------------------------------------------------------------------------- */

/* GET path from the metrics endpoint; malloc'd body or NULL. *status gets the HTTP status. */
TD_FN char *td_http_get(const td_daemon *d, const char *path, int *status)
{
    char host[64];
    int port = 0;
    const char *colon = strrchr(d->metrics, ':');
    if (!colon)
        return NULL;
    snprintf(host, sizeof host, "%.*s", (int)(colon - d->metrics), d->metrics);
    port = atoi(colon + 1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, host, &a.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return NULL;
    }
    recd_buf b = {0};
    char chunk[4096];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof chunk)) > 0)
        recd_buf_append(&b, chunk, (size_t)r);
    close(fd);
    recd_buf_append(&b, "", 1);
    if (status)
        *status = b.len > 12 ? atoi((const char *)b.data + 9) : 0;
    char *body = strstr((char *)b.data, "\r\n\r\n");
    char *out = body ? strdup(body + 4) : NULL;
    recd_buf_free(&b);
    return out;
}

/* Value of one series, e.g. "recd_decode_errors_total{reason=\"framing\"}"; -1 when absent. */
TD_FN double td_metric(const td_daemon *d, const char *series)
{
    char *body = td_http_get(d, "/metrics", NULL);
    if (!body)
        return -1;
    /* A family name without labels also matches its labelled series, summed
     * (recd_write_errors_total = the sum over its reasons). */
    double v = -1;
    size_t n = strlen(series);
    bool sum = strchr(series, '{') == NULL;
    for (char *line = body; line && *line;) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, series, n) == 0 && line[n] == ' ') {
            v = strtod(line + n + 1, NULL);
        } else if (sum && strncmp(line, series, n) == 0 && line[n] == '{') {
            char *close = strstr(line, "} ");
            if (close && (!nl || close < nl))
                v = (v < 0 ? 0 : v) + strtod(close + 2, NULL);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(body);
    return v;
}

/* Waits until a series reaches at least want (metrics are updated asynchronously); timeout_ms
 * is a base time, scaled under sanitizers. */
TD_FN double td_wait_metric(const td_daemon *d, const char *series, double want, unsigned timeout_ms)
{
    uint64_t deadline = td_deadline(timeout_ms);
    double v;
    while ((v = td_metric(d, series)) < want && td_now_ms() < deadline)
        td_sleep_ms(25);
    return v;
}

/* ---- output tree ------------------------------------------------------------------------------ */

typedef struct td_file {
    char path[1024]; /* relative to the output root */
    uint64_t size;
} td_file;

typedef struct td_files {
    td_file *items;
    size_t count, cap;
    size_t parts; /* *.part files among them */
    bool out_of_memory;
} td_files;

static void td_walk(const char *root, const char *rel, td_files *out)
{
    char path[2048];
    snprintf(path, sizeof path, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    struct dirent *e;
    while (!out->out_of_memory && (e = readdir(dir))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char child[1024];
        snprintf(child, sizeof child, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        char full[3100];
        snprintf(full, sizeof full, "%s/%s", root, child);
        struct stat st;
        if (lstat(full, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            td_walk(root, child, out);
        } else if (S_ISREG(st.st_mode)) {
            size_t n = strlen(child);
            if (n > 4 && strcmp(child + n - 4, ".idx") == 0)
                continue; /* a part's seek index: tests/integration/daemon_seek_index.sh */
            if (out->count == out->cap) {
                size_t cap = out->cap ? out->cap * 2 : 64;
                td_file *items = realloc(out->items, cap * sizeof *items);
                if (!items) { /* noted, not failed here: every directory gets closed */
                    out->out_of_memory = true;
                    break;
                }
                out->items = items;
                out->cap = cap;
            }
            snprintf(out->items[out->count].path, sizeof out->items[0].path, "%s", child);
            out->items[out->count].size = (uint64_t)st.st_size;
            size_t l = strlen(child);
            if (l > 5 && strcmp(child + l - 5, ".part") == 0)
                out->parts++;
            out->count++;
        }
    }
    closedir(dir);
}

static int td_file_cmp(const void *a, const void *b)
{
    return strcmp(((const td_file *)a)->path, ((const td_file *)b)->path);
}

/* The regular files under root/rel, sorted by path; td_teardown frees them if the test fails. */
static td_files td_walk_sorted(const char *root, const char *rel)
{
    td_files f = {0};
    td_walk(root, rel, &f);
    if (f.out_of_memory) {
        free(f.items);
        fail_msg("out of memory listing %s/%s", root, rel);
    }
    if (f.count)
        qsort(f.items, f.count, sizeof *f.items, td_file_cmp);
    if (f.items)
        td_hold(f.items, free);
    return f;
}

/* Every regular file under the output root, sorted by path. */
TD_FN td_files td_list(const td_daemon *d) { return td_walk_sorted(d->out, ""); }

TD_FN void td_files_free(td_files *f)
{
    td_unhold(f->items);
    free(f->items);
    memset(f, 0, sizeof *f);
}

/* Files of one session directory (default template: FORMAT/SESSION/...), sorted. */
TD_FN td_files td_session_files(const td_daemon *d, const char *format, const char *session)
{
    char rel[512];
    snprintf(rel, sizeof rel, "%s/%s", format, session);
    return td_walk_sorted(d->out, rel);
}

TD_FN uint8_t *td_read_output(const td_daemon *d, const char *rel, size_t *len)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", d->out, rel);
    uint8_t *data = tu_read_file(path, len);
    assert_non_null(data);
    return data;
}

/* True when the file is a complete, valid recording (the rectool verify checks). */
TD_FN bool td_valid_recording(const uint8_t *data, size_t len)
{
    if (len >= 4 && memcmp(data, RECD_RECAP_MAGIC, 4) == 0) {
        recd_recap_decode_result res;
        return recd_recap_verify(data, len, &res, NULL) == 0 && !res.truncated;
    }
    recd_rec_info info;
    return recd_rec_probe(data, len, &info, NULL) == 0 && info.trailing_bytes == 0 &&
           recd_rec_layout_is_standard(info.layout);
}

/* The bytes of a session's only file, which must be finalized and verify (free() them). */
TD_FN uint8_t *td_read_only_recording(const td_daemon *d, const char *format, const char *session,
                                      size_t *len)
{
    td_files f = td_session_files(d, format, session);
    if (f.count != 1 || f.parts != 0) {
        td_dump_log(d);
        fail_msg("expected 1 finalized file, found %zu (%zu .part)", f.count, f.parts);
    }
    uint8_t *data = td_read_output(d, f.items[0].path, len);
    td_files_free(&f);
    if (!td_valid_recording(data, *len)) {
        free(data);
        fail_msg("the recording does not verify");
    }
    return data;
}

/* ---- sending ---------------------------------------------------------------------------------- */

static void td_release_client(void *obj)
{
    char err[256];
    recd_client_close(obj, err, sizeof err);
}

/* A client whose close() waits as long as a busy sanitizer build needs. */
TD_FN recd_client *td_connect(const char *url)
{
    recd_client *c = NULL;
    char err[256] = "";
    recd_client_options opt = {.close_timeout_ms = tu_scaled_ms(TD_CLIENT_CLOSE_TIMEOUT_MS)};
    int rc = recd_client_connect(&c, url, &opt, err, sizeof err);
    if (rc < 0)
        fail_msg("connect %s: %s (%s)", url, err, recd_strerror(rc));
    td_hold(c, td_release_client);
    return c;
}

/* recd_client_close() for a td_connect() client: the error, if any, in err. */
TD_FN int td_close_client_rc(recd_client *c, char *err, size_t errlen)
{
    td_unhold(c);
    return recd_client_close(c, err, errlen);
}

TD_FN void td_close_client(recd_client *c)
{
    char err[512] = "";
    int rc = td_close_client_rc(c, err, sizeof err);
    if (rc < 0)
        fail_msg("client close: %s (%s)", err, recd_strerror(rc));
}

TD_FN void td_send(recd_client *c, const recd_msg *m)
{
    int rc = recd_client_send(c, m);
    if (rc < 0)
        fail_msg("send %s for '%s': %s", recd_msg_type_name(m->type), m->session, recd_strerror(rc));
}

TD_FN void td_send_open(recd_client *c, const char *session, recd_msg_format f, int64_t start_ms)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, f);
    snprintf(m.session, sizeof m.session, "%s", session);
    m.open.has_start_time = start_ms != 0;
    m.open.start_time_ms = start_ms;
    td_send(c, &m);
}

TD_FN void td_send_close(recd_client *c, const char *session, recd_msg_format f)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, f);
    snprintf(m.session, sizeof m.session, "%s", session);
    td_send(c, &m);
}

/* The heap parts of a td_rec_session, for td_teardown. */
typedef struct td_rec_session_guard {
    recd_synth_rec_gen *gen;
    uint8_t *expect_data; /* follows expect.data as it grows */
} td_rec_session_guard;

static void td_release_rec_session_guard(void *obj)
{
    td_rec_session_guard *g = obj;
    recd_synth_rec_gen_free(g->gen);
    free(g->expect_data);
    free(g);
}

/* A synthetic .rec session: the expected file bytes in *expect (when not NULL). */
typedef struct td_rec_session {
    td_rec_session_guard *guard;
    recd_synth_rec_gen *gen;
    recd_msg_format format;
    char session[RECD_SESSION_KEY_MAX + 1];
    uint64_t blocks;
    recd_buf expect;
    recd_rec_writer writer;
    bool done;
} td_rec_session;

static int td_buf_sink(void *ctx, const void *data, size_t len) { return recd_buf_append(ctx, data, len); }

TD_FN void td_rec_session_init(td_rec_session *s, const char *session, const recd_format *f,
                               recd_synth_scenario sc, uint64_t duration_ms, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    recd_synth_params p = {f, sc, duration_ms, seed};
    assert_int_equal(recd_synth_rec_gen_new(&p, &s->gen), 0);
    s->guard = calloc(1, sizeof *s->guard);
    if (!s->guard) {
        recd_synth_rec_gen_free(s->gen);
        fail_msg("out of memory");
    }
    s->guard->gen = s->gen;
    td_hold(s->guard, td_release_rec_session_guard);
    s->format = f == recd_synth_format_find("samp-vehicle") ? RECD_MSG_FMT_SAMP_VEHICLE : RECD_MSG_FMT_SAMP_ONFOOT;
    snprintf(s->session, sizeof s->session, "%s", session);
    recd_sink sink = {td_buf_sink, &s->expect};
    recd_rec_writer_init(&s->writer, f == recd_synth_format_find("samp-vehicle") ? RECD_REC_TYPE_VEHICLE
                                                                        : RECD_REC_TYPE_ONFOOT,
                         RECD_REC_TIME_REJECT, sink);
    s->guard->expect_data = s->expect.data;
}

/* Builds the next state message; false when the session has no more blocks. */
TD_FN bool td_rec_session_next(td_rec_session *s, recd_msg *m)
{
    recd_synth_rec_block b;
    if (s->done || recd_synth_rec_gen_next(s->gen, &b) != 1) {
        s->done = true;
        return false;
    }
    recd_msg_init(m, RECD_MSG_STATE, s->format);
    snprintf(m->session, sizeof m->session, "%s", s->session);
    if (b.type == RECD_REC_TYPE_ONFOOT) {
        m->onfoot = b.onfoot;
        recd_rec_writer_onfoot(&s->writer, &b.onfoot);
    } else {
        m->vehicle = b.vehicle;
        recd_rec_writer_vehicle(&s->writer, &b.vehicle);
    }
    s->guard->expect_data = s->expect.data;
    s->blocks++;
    return true;
}

TD_FN void td_rec_session_free(td_rec_session *s)
{
    td_unhold(s->guard);
    free(s->guard);
    s->guard = NULL;
    recd_synth_rec_gen_free(s->gen);
    recd_buf_free(&s->expect);
}

/* Sends one whole synthetic .rec session over url (open, states, close). */
TD_FN void td_send_rec_session(const char *url, td_rec_session *s, int64_t start_ms)
{
    recd_client *c = td_connect(url);
    td_send_open(c, s->session, s->format, start_ms);
    recd_msg m;
    unsigned n = 0;
    bool udp = strncmp(url, "udp:", 4) == 0;
    while (td_rec_session_next(s, &m)) {
        td_send(c, &m);
        if (udp && ++n % 64 == 0) /* UDP has no backpressure: keep the kernel queue short */
            td_sleep_ms(1);
    }
    td_send_close(c, s->session, s->format);
    td_close_client(c);
}

/* Asserts that a session directory holds exactly one finalized file equal to expect. */
TD_FN void td_expect_single_file(const td_daemon *d, const char *format, const char *session,
                                 const recd_buf *expect)
{
    td_files f = td_session_files(d, format, session);
    if (f.count != 1 || f.parts != 0) {
        for (size_t i = 0; i < f.count; i++)
            fprintf(stderr, "  %s (%llu bytes)\n", f.items[i].path, (unsigned long long)f.items[i].size);
        td_dump_log(d);
        size_t count = f.count, parts = f.parts;
        td_files_free(&f);
        fail_msg("session %s/%s: expected 1 finalized file, found %zu files (%zu .part)", format,
                 session, count, parts);
    }
    size_t len;
    uint8_t *data = td_read_output(d, f.items[0].path, &len);
    bool same = len == expect->len && memcmp(data, expect->data, len) == 0;
    size_t i = 0;
    while (!same && i < len && i < expect->len && data[i] == expect->data[i])
        i++;
    char path[sizeof f.items[0].path];
    snprintf(path, sizeof path, "%s", f.items[0].path);
    free(data);
    td_files_free(&f);
    if (!same)
        fail_msg("%s: %zu bytes, expected %zu; first difference at byte %zu", path, len, expect->len, i);
}

/* ---- the daemon's process ---------------------------------------------------------------------- */

/* Resident memory of pid in KiB (VmRSS). */
TD_FN long td_rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    assert_true(kib >= 0);
    return kib;
}

/* The IPv4 address of a tcp:// or udp:// url of recd's. */
TD_FN void td_addr_of(const char *url, struct sockaddr_in *a)
{
    recd_wire_url u;
    char err[128];
    assert_int_equal(recd_wire_url_parse(url, &u, err, sizeof err), 0);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons(u.port);
    assert_int_equal(inet_pton(AF_INET, u.host, &a->sin_addr), 1);
}

/* A blocking TCP connection to url with send and receive timeouts (scaled). */
TD_FN int td_raw_connect(const char *url)
{
    struct sockaddr_in a;
    td_addr_of(url, &a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        fail_msg("connect: %s", strerror(e));
    }
    unsigned ms = tu_scaled_ms(10000);
    struct timeval tv = {ms / 1000, (long)(ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return fd;
}

/* A binary frame header of the given type announcing body_len bytes, written to buf; its size. */
TD_FN size_t td_frame_header(uint8_t *buf, uint8_t type, uint32_t body_len)
{
    const uint8_t hdr[RECD_WIRE_HEADER_SIZE] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, type, 0,
                                                (uint8_t)body_len, (uint8_t)(body_len >> 8),
                                                (uint8_t)(body_len >> 16), (uint8_t)(body_len >> 24)};
    memcpy(buf, hdr, sizeof hdr);
    return sizeof hdr;
}

#endif
