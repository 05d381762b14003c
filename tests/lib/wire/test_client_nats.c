/* SPDX-License-Identifier: MIT */
/* recd_client to nats://: against a real `nats-server -js` on a free loopback port with a
 * temporary store, every message arrives once, in order, as the very bytes of its binary frame, on
 * PREFIX.<partition>.~ (PREFIX.<partition>.<key> with subjects=session); a small in-flight window
 * still gets everything through; messages no
 * stream takes, or left without an ack when the server is killed, or beyond the buffer kept while
 * it is away, are reported by flush and close with their count. URL options are checked without a
 * server. Skipped when nats-server is not installed; without libnats only -ENOTSUP is checked. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recd/client.h"
#include "recd/fleet.h"
#include "recd/fleet_subject.h"
#include "recd/fleet_pack.h"
#include "recd/nats_connect.h"
#include "test_wire_samples.h"
#include "wire/client_nats.h"

/* ---- URL options (no server needed) ---------------------------------------------------------- */

static void test_url_options(void **state)
{
    (void)state;
    char base[256], err[300];
    client_nats_options o;
    assert_int_equal(client_nats_parse("nats://127.0.0.1:4222/recd.eu", base, sizeof base, &o, err,
                                       sizeof err),
                     0);
    assert_string_equal(base, "nats://127.0.0.1:4222/recd.eu");
    assert_int_equal(o.partitions, RECD_FLEET_DEFAULT_PARTITIONS);
    assert_int_equal(o.max_in_flight, 1024);
    assert_true(o.buffer_bytes == 8u << 20);
    assert_true(o.ack_timeout_ms == 10000);
    assert_int_equal(client_nats_parse("nats://h/p?partitions=4&max_in_flight=16&buffer=64KiB&"
                                       "ack_timeout=1500ms&encoding=binary",
                                       base, sizeof base, &o, err, sizeof err),
                     0);
    assert_string_equal(base, "nats://h/p");
    assert_int_equal(o.partitions, 4);
    assert_int_equal(o.max_in_flight, 16);
    assert_true(o.buffer_bytes == 64u << 10);
    assert_true(o.ack_timeout_ms == 1500);
    assert_int_equal(o.pack_bytes, 64u << 10); /* packing is on by default: 64 KiB or 20 ms */
    assert_int_equal(o.linger_ms, 20);
    assert_int_equal(client_nats_parse("nats://h/p?pack_bytes=0&linger=5ms", base, sizeof base, &o,
                                       err, sizeof err),
                     0);
    assert_int_equal(o.pack_bytes, 0);
    assert_int_equal(o.linger_ms, 5);
    assert_int_equal(client_nats_parse("nats://h/p?pack_bytes=1KiB", base, sizeof base, &o, err,
                                       sizeof err),
                     0);
    assert_int_equal(o.pack_bytes, 1024);
    assert_false(o.session_subjects); /* PREFIX.<p>.~ by default */
    assert_int_equal(client_nats_parse("nats://h/p?subjects=session", base, sizeof base, &o, err,
                                       sizeof err),
                     0);
    assert_true(o.session_subjects);
    assert_int_equal(client_nats_parse("nats://h/p?subjects=partition", base, sizeof base, &o, err,
                                       sizeof err),
                     0);
    assert_false(o.session_subjects);

    static const struct {
        const char *url, *why;
    } bad[] = {
        {"nats://127.0.0.1:4222/p?partitions=0", "partitions=0"},
        {"nats://127.0.0.1:4222/p?partitions=1025", "partitions=1025"},
        {"nats://127.0.0.1:4222/p?max_in_flight=x", "max_in_flight=x"},
        {"nats://127.0.0.1:4222/p?buffer=12", "buffer=12"},
        {"nats://127.0.0.1:4222/p?ack_timeout=10", "ack_timeout=10"},
        {"nats://127.0.0.1:4222/p?encoding=ndjson", "encoding=ndjson"},
        {"nats://127.0.0.1:4222/p?pack_bytes=100", "pack_bytes=100"},
        {"nats://127.0.0.1:4222/p?pack_bytes=1MiB", "pack_bytes=1MiB"},
        {"nats://127.0.0.1:4222/p?linger=0ms", "linger=0ms"},
        {"nats://127.0.0.1:4222/p?linger=11s", "linger=11s"},
        {"nats://127.0.0.1:4222/p?subjects=key", "subjects=key: expected partition"},
        {"nats://127.0.0.1:4222/p?partitions=2&partitions=2", "given twice"},
        {"nats://127.0.0.1:4222/p?speed=2", "unknown option 'speed'"},
        {"nats://127.0.0.1:4222/p?partitions", "partitions needs a value"},
        {"nats://127.0.0.1:4222/", "subject prefix"},
        {"nats://127.0.0.1:99999/p", "port"},
        {"nats://127.0.0.1:4222/p..q", "subject prefix"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        recd_client *c = (recd_client *)&err; /* must be reset to NULL */
        err[0] = 0;
        int rc = recd_client_connect(&c, bad[i].url, NULL, err, sizeof err);
        if (rc != -EINVAL || !strstr(err, bad[i].why))
            fail_msg("%s: %d '%s', expected -EINVAL naming '%s'", bad[i].url, rc, err, bad[i].why);
        assert_null(c);
    }
}

/* TLS files and credentials: the names and rules of the Python publisher (recd_client/nats.py). */
static void test_url_security_options(void **state)
{
    (void)state;
    char base[256], err[300];
    client_nats_options o;
    assert_int_equal(client_nats_parse("nats://h:4223/p?tls_ca=/etc/a%20b/ca.pem&tls_cert=c.pem&"
                                       "tls_key=k.pem&nkey=%2Fs%2Fseed&partitions=2",
                                       base, sizeof base, &o, err, sizeof err),
                     0);
    assert_string_equal(base, "nats://h:4223/p");
    assert_string_equal(o.auth.tls_ca, "/etc/a b/ca.pem");
    assert_string_equal(o.auth.tls_cert, "c.pem");
    assert_string_equal(o.auth.tls_key, "k.pem");
    assert_string_equal(o.auth.nkey, "/s/seed");
    assert_string_equal(o.auth.creds, "");
    assert_int_equal(o.partitions, 2);
    assert_int_equal(client_nats_parse("nats://alice:s%40cret:x@[::1]:4222/p", base, sizeof base,
                                       &o, err, sizeof err),
                     0);
    assert_string_equal(base, "nats://[::1]:4222/p");
    assert_string_equal(o.auth.user, "alice");
    assert_string_equal(o.auth.password, "s@cret:x");
    assert_string_equal(o.auth.token, "");
    assert_int_equal(client_nats_parse("nats://t0k%2Fen@h/p?tls_ca=/x.pem", base, sizeof base, &o,
                                       err, sizeof err),
                     0);
    assert_string_equal(base, "nats://h/p");
    assert_string_equal(o.auth.token, "t0k/en");
    assert_string_equal(o.auth.user, "");
    assert_string_equal(o.auth.tls_ca, "/x.pem");
    assert_int_equal(client_nats_parse("nats://bob:@h/p", base, sizeof base, &o, err, sizeof err), 0);
    assert_string_equal(o.auth.user, "bob");
    assert_string_equal(o.auth.password, "");

    assert_int_equal(client_nats_parse("nats://h/p?tls_ca=/x.pem&tls_name=nats.example", base,
                                       sizeof base, &o, err, sizeof err),
                     0);
    assert_string_equal(o.auth.tls_name, "nats.example");

    static const struct {
        const char *url, *why;
    } bad[] = {
        {"nats://127.0.0.1:4222/p?tls_key=k.pem", "tls_key needs tls_cert"},
        {"nats://127.0.0.1:4222/p?tls_name=", "tls_name=: expected a host name"},
        {"nats://127.0.0.1:4222/p?tls_ca=", "tls_ca=: expected a file path"},
        {"nats://127.0.0.1:4222/p?tls_cert", "tls_cert=: expected a file path"},
        {"nats://127.0.0.1:4222/p?nkey=a%00b", "nkey=a%00b: expected a file path"},
        {"nats://127.0.0.1:4222/p?creds=a&creds=b", "creds is given twice"},
        {"nats://127.0.0.1:4222/p?creds=a&nkey=b", "credentials: give one of creds, nkey,"},
        {"nats://tok@127.0.0.1:4222/p?nkey=b", "give one of nkey, TOKEN@, not several"},
        {"nats://:pw@127.0.0.1:4222/p", "the user (or token) before '@' is empty"},
        {"nats://127.0.0.1:4222/p?tls=1", "unknown option 'tls' (partitions, max_in_flight, buffer, "
                                          "ack_timeout, pack_bytes, linger, encoding, subjects, "
                                          "tls_ca, tls_cert, tls_key, tls_name, creds, nkey)"},
        {"nats://127.0.0.1:4222/p?tls_ca=/nonexistent/ca.pem", "tls_ca /nonexistent/ca.pem: No such"},
        {"nats://127.0.0.1:4222/p?tls_cert=/nonexistent/c.pem", "tls_cert /nonexistent/c.pem: No such"},
        {"nats://127.0.0.1:4222/p?creds=/nonexistent/u.creds", "creds /nonexistent/u.creds: No such"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        recd_client *c = NULL;
        err[0] = 0;
        int rc = recd_client_connect(&c, bad[i].url, NULL, err, sizeof err);
#ifndef RECD_TEST_HAVE_NATS
        if (rc == -ENOTSUP && strstr(bad[i].why, "No such")) /* files are looked at on connect */
            continue;
#endif
        if (rc != -EINVAL || !strstr(err, bad[i].why))
            fail_msg("%s: %d '%s', expected -EINVAL naming '%s'", bad[i].url, rc, err, bad[i].why);
        assert_null(c);
    }
    /* A password or token never shows in a message. */
    recd_client *c = NULL;
    assert_int_equal(recd_client_connect(&c, "nats://u:hunter2@h/p?speed=1", NULL, err, sizeof err),
                     -EINVAL);
    assert_null(strstr(err, "hunter2"));
    assert_non_null(strstr(err, "nats://***@h/p"));
    assert_int_equal(recd_client_connect(&c, "nats://hunter2@h/p..q", NULL, err, sizeof err),
                     -EINVAL);
    assert_null(strstr(err, "hunter2"));
}

/* recd's listen URL (recd/nats_connect.h): the same user part and connection options, and none of
 * the publisher's. */
static void test_listen_url(void **state)
{
    (void)state;
    char err[300];
    recd_fleet_url fu;
    recd_nats_auth a;
    assert_int_equal(recd_nats_url_split("nats://u:p%40ss@[::1]:4223/game.eu?tls_name=n.x&tls_ca=/c",
                                         &fu, &a, err, sizeof err),
                     0);
    assert_string_equal(fu.host, "::1");
    assert_int_equal(fu.port, 4223);
    assert_string_equal(fu.prefix, "game.eu");
    assert_string_equal(a.user, "u");
    assert_string_equal(a.password, "p@ss");
    assert_string_equal(a.tls_name, "n.x");
    assert_string_equal(a.tls_ca, "/c");
    assert_int_equal(recd_nats_url_split("nats://u:hunter2@h/p?partitions=2", &fu, &a, err,
                                         sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "'nats://***@h/p?partitions=2': unknown option 'partitions'"));
    assert_int_equal(recd_nats_url_split("nats://h/a..b", &fu, &a, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "subject prefix"));
}

#ifndef RECD_TEST_HAVE_NATS

static void test_without_libnats(void **state)
{
    (void)state;
    recd_client *c = NULL;
    char err[300];
    assert_int_equal(recd_client_connect(&c, "nats://127.0.0.1:4222/p", NULL, err, sizeof err),
                     -ENOTSUP);
    assert_non_null(strstr(err, "without NATS support"));
    assert_null(c);
}

int main(void)
{
    printf("note: librecd was built without libnats: only URL checks and -ENOTSUP are tested\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_options),
        cmocka_unit_test(test_url_security_options),
        cmocka_unit_test(test_listen_url),
        cmocka_unit_test(test_without_libnats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

#include <nats/nats.h>

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* ---- a nats-server of our own ---------------------------------------------------------------- */

static char nats_server_path[4096];

static bool find_nats_server(void)
{
    const char *path = getenv("PATH");
    char dirs[8192];
    /* /usr/sbin is where Debian puts it, and not every user's PATH has it. */
    snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/usr/local/sbin", path ? path : "/usr/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(nats_server_path, sizeof nats_server_path, "%s/nats-server", d);
        if (access(nats_server_path, X_OK) == 0)
            return true;
    }
    return false;
}

typedef struct nats_server {
    pid_t pid;
    char dir[4096];
    char log[4200];
    unsigned port;
} nats_server;

/* Starts nats-server -js on 127.0.0.1 (any free port), its store and log in a fresh directory;
 * it dies with the test process. Fails the test when it does not come up. */
static void server_start(nats_server *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", tu_tmpdir());
    snprintf(s->log, sizeof s->log, "%s/nats.log", s->dir);
    char store[4200];
    snprintf(store, sizeof store, "%s/js", s->dir);
    pid_t parent = getpid();
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execl(nats_server_path, "nats-server", "-js", "-a", "127.0.0.1", "-p", "-1", "-sd", store,
              (char *)NULL);
        _exit(127);
    }
    unsigned waited = 0, limit = tu_scaled_ms(20000);
    static const char marker[] = "client connections on 127.0.0.1:";
    while (waited < limit) {
        char log[16384];
        FILE *fp = fopen(s->log, "r");
        size_t len = fp ? fread(log, 1, sizeof log - 1, fp) : 0;
        if (fp)
            fclose(fp);
        log[len] = 0;
        const char *at = strstr(log, marker);
        if (at && strstr(log, "Server is ready"))
            s->port = (unsigned)strtoul(at + sizeof marker - 1, NULL, 10);
        if (s->port)
            return;
        sleep_ms(50);
        waited += 50;
    }
    fail_msg("nats-server did not start within %u ms (log: %s)", limit, s->log);
}

static void server_kill(nats_server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}

static void server_free(nats_server *s)
{
    server_kill(s);
    if (s->dir[0])
        tu_rmtree(s->dir);
    s->dir[0] = 0;
}

/* A JetStream context of the test's own (not recd_client's) on the server. */
typedef struct reader {
    natsConnection *nc;
    jsCtx *js;
} reader;

static void reader_open(reader *r, const nats_server *s)
{
    char url[64];
    snprintf(url, sizeof url, "nats://127.0.0.1:%u", s->port);
    assert_int_equal(natsConnection_ConnectTo(&r->nc, url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&r->js, r->nc, NULL), NATS_OK);
}

static void reader_close(reader *r)
{
    jsCtx_Destroy(r->js);
    natsConnection_Destroy(r->nc);
}

static void add_stream(reader *r, const char *name, const char *subject)
{
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = name;
    const char *subjects[] = {subject};
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_MemoryStorage;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus st = js_AddStream(&si, r->js, &cfg, NULL, &jerr);
    if (st != NATS_OK)
        fail_msg("js_AddStream %s: %s (%d)", name, natsStatus_GetText(st), (int)jerr);
    jsStreamInfo_Destroy(si);
}

static uint64_t stream_msgs(reader *r, const char *name)
{
    jsStreamInfo *si = NULL;
    assert_int_equal(js_GetStreamInfo(&si, r->js, name, NULL, NULL), NATS_OK);
    uint64_t n = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    return n;
}

typedef struct fixture {
    nats_server server;
    reader r;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    *state = f;
    server_start(&f->server);
    reader_open(&f->r, &f->server);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    reader_close(&f->r);
    server_free(&f->server);
    free(f);
    return 0;
}

static recd_client *connect_ok(const fixture *f, const char *prefix, const char *query)
{
    char url[256], err[300];
    snprintf(url, sizeof url, "nats://127.0.0.1:%u/%s%s", f->server.port, prefix, query);
    recd_client *c = NULL;
    int rc = recd_client_connect(&c, url, NULL, err, sizeof err);
    if (rc < 0)
        fail_msg("connect %s: %s", url, err);
    assert_int_equal(recd_client_transport(c), RECD_WIRE_NATS);
    assert_int_equal(recd_client_encoding(c), RECD_WIRE_BINARY);
    return c;
}

/* ---- tests ----------------------------------------------------------------------------------- */

#define ROUNDS 40 /* of the sample set: 720 messages through a window of 16 */

/* One frame per message on stream (subjects prefix.>), each on its session's subject in the
 * layout the URL asks for: PREFIX.<p>.~, or PREFIX.<p>.<key> with subjects=session. */
static void round_trip(fixture *f, const char *stream, const char *prefix, bool session_subjects)
{
    char filter[32], query[128];
    snprintf(filter, sizeof filter, "%s.>", prefix);
    add_stream(&f->r, stream, filter);
    ws_set set;
    ws_build(&set);
    snprintf(query, sizeof query, "?partitions=4&max_in_flight=16&ack_timeout=20s&pack_bytes=0%s",
             session_subjects ? "&subjects=session" : "");
    recd_client *c = connect_ok(f, prefix, query);
    /* Untimed messages have no place on a stream (docs/fleet.md). */
    assert_int_equal(recd_client_send_untimed(c, &set.m[1]), -EINVAL);
    uint64_t frame_bytes = 0;
    recd_buf frame = {0};
    for (int round = 0; round < ROUNDS; round++)
        for (size_t i = 0; i < set.n; i++) {
            assert_int_equal(recd_client_send(c, &set.m[i]), 0);
            recd_buf_reset(&frame);
            assert_int_equal(recd_wire_encode(&set.m[i], RECD_WIRE_BINARY, 0, &frame), 0);
            frame_bytes += frame.len;
        }
    assert_int_equal(recd_client_flush(c), 0);
    assert_true(recd_client_bytes_sent(c) == frame_bytes);
    char err[300] = "";
    int rc = recd_client_close(c, err, sizeof err);
    if (rc != 0)
        fail_msg("close: %d %s", rc, err);

    uint64_t total = (uint64_t)ROUNDS * set.n;
    assert_true(stream_msgs(&f->r, stream) == total);
    for (uint64_t seq = 1; seq <= total; seq++) {
        const recd_msg *m = &set.m[(seq - 1) % set.n];
        natsMsg *got = NULL;
        natsStatus st = js_GetMsg(&got, f->r.js, stream, seq, NULL, NULL);
        if (st != NATS_OK)
            fail_msg("stream message %llu: %s", (unsigned long long)seq, natsStatus_GetText(st));
        char subject[RECD_FLEET_SUBJECT_MAX];
        size_t klen = strlen(m->session);
        assert_true((session_subjects ? fleet_session_subject(prefix, m->session, klen, 4, subject,
                                                              sizeof subject)
                                      : recd_fleet_subject(prefix, m->session, klen, 4, subject,
                                                           sizeof subject)) > 0);
        recd_buf_reset(&frame);
        assert_int_equal(recd_wire_encode(m, RECD_WIRE_BINARY, 0, &frame), 0);
        if (strcmp(natsMsg_GetSubject(got), subject) != 0 ||
            (size_t)natsMsg_GetDataLength(got) != frame.len ||
            memcmp(natsMsg_GetData(got), frame.data, frame.len) != 0)
            fail_msg("stream message %llu: %d bytes on %s, expected the %lu-byte frame on %s",
                     (unsigned long long)seq, natsMsg_GetDataLength(got), natsMsg_GetSubject(got),
                     (unsigned long)frame.len, subject);
        natsMsg_Destroy(got);
    }
    recd_buf_free(&frame);
    ws_free(&set);
}

static void test_round_trip(void **state)
{
    round_trip(*state, "RT", "rt", false);
}

/* subjects=session keeps the earlier layout, a subject per session. */
static void test_round_trip_session_subjects(void **state)
{
    round_trip(*state, "RS", "rs", true);
}

static bool contains_count(const char *err, unsigned long n)
{
    char want[64];
    snprintf(want, sizeof want, "%lu messages were not confirmed by JetStream", n);
    return strstr(err, want) != NULL;
}

/* No stream takes the subject: JetStream refuses each message; flush and close say so. */
static void test_no_stream(void **state)
{
    fixture *f = *state;
    ws_set set;
    ws_build(&set);
    recd_client *c = connect_ok(f, "nostream", "?ack_timeout=5s&pack_bytes=0");
    int rc = 0;
    size_t sent = 0;
    for (size_t i = 0; i < 3 && rc == 0; i++)
        if ((rc = recd_client_send(c, &set.m[i])) == 0)
            sent++;
    assert_int_equal(rc, 0);
    assert_int_equal(recd_client_flush(c), -EIO);
    assert_int_equal(recd_client_send(c, &set.m[3]), -EIO); /* sticky */
    char err[400] = "";
    assert_int_equal(recd_client_close(c, err, sizeof err), -EIO);
    print_message("no stream: %s\n", err);
    if (!contains_count(err, (unsigned long)sent) || !strstr(err, "nostream."))
        fail_msg("close did not report %lu lost messages: %s", (unsigned long)sent, err);
    ws_free(&set);
}

/* Packed, no stream: the one pack of three messages is one JetStream message, refused and
 * counted as one (docs/fleet.md: losses count JetStream messages). */
static void test_packed_no_stream(void **state)
{
    fixture *f = *state;
    ws_set set;
    ws_build(&set);
    recd_client *c = connect_ok(f, "nostream", "?ack_timeout=5s&linger=10s");
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(recd_client_send(c, &set.m[i]), 0);
    assert_int_equal(recd_client_flush(c), -EIO);
    char err[400] = "";
    assert_int_equal(recd_client_close(c, err, sizeof err), -EIO);
    if (!contains_count(err, 1) || !strstr(err, "nostream."))
        fail_msg("close did not report the lost pack: %s", err);
    ws_free(&set);
}

/* The server dies after some messages were confirmed: the later ones are counted, by close. */
static void test_server_killed(void **state)
{
    fixture *f = *state;
    add_stream(&f->r, "KILL", "kill.>");
    ws_set set;
    ws_build(&set);
    char query[64];
    snprintf(query, sizeof query, "?ack_timeout=%ums&pack_bytes=0", tu_scaled_ms(1000));
    recd_client *c = connect_ok(f, "kill", query);
    for (size_t i = 0; i < set.n; i++)
        assert_int_equal(recd_client_send(c, &set.m[i]), 0);
    assert_int_equal(recd_client_flush(c), 0);
    assert_true(stream_msgs(&f->r, "KILL") == set.n);
    server_kill(&f->server);
    size_t after = 0;
    for (size_t i = 0; i < set.n; i++)
        if (recd_client_send(c, &set.m[i]) == 0) /* kept while the client reconnects */
            after++;
    assert_int_equal(after, set.n);
    char err[400] = "";
    int rc = recd_client_close(c, err, sizeof err);
    assert_int_equal(rc, -EIO);
    print_message("server killed: %s\n", err);
    if (!contains_count(err, (unsigned long)after) || !strstr(err, "no ack within"))
        fail_msg("close did not report the %lu unconfirmed messages: %s", (unsigned long)after,
                 err);
    ws_free(&set);
}

/* Past the buffer kept while the server is away, a send fails at once; close counts the rest. */
static void test_buffer_limit(void **state)
{
    fixture *f = *state;
    add_stream(&f->r, "BUF", "buf.>");
    ws_set set;
    ws_build(&set);
    char query[96];
    snprintf(query, sizeof query, "?buffer=1KiB&ack_timeout=%ums&pack_bytes=0",
             tu_scaled_ms(1000));
    recd_client *c = connect_ok(f, "buf", query);
    assert_int_equal(recd_client_send(c, &set.m[0]), 0);
    assert_int_equal(recd_client_flush(c), 0);
    server_kill(&f->server);
    int rc = 0;
    unsigned long accepted = 0;
    unsigned waited = 0, limit = tu_scaled_ms(10000);
    for (size_t i = 1; rc == 0 && waited < limit; i++) {
        if ((rc = recd_client_send(c, &set.m[i % set.n])) == 0)
            accepted++;
        sleep_ms(2); /* until the client notices the server is gone */
        waited += 2;
    }
    assert_int_equal(rc, -ENOBUFS);
    assert_int_equal(recd_client_send(c, &set.m[1]), -ENOBUFS); /* sticky */
    char err[600] = "";
    assert_int_not_equal(recd_client_close(c, err, sizeof err), 0);
    print_message("buffer full after %lu messages: %s\n", accepted, err);
    if (!strstr(err, "1024 bytes kept meanwhile are used up") || !contains_count(err, accepted))
        fail_msg("close did not report the full buffer and %lu unconfirmed messages: %s",
                 accepted, err);
    ws_free(&set);
}

/* Where each session's next expected message is, for test_packed_round_trip. */
typedef struct session_cursor {
    char key[RECD_SESSION_KEY_MAX + 1];
    size_t next; /* index into the expected sequence of the session's messages */
} session_cursor;

/* Every stream message of a packed publisher is a packed message (recd/fleet_pack.h) holding the
 * session's next messages in order, byte for byte as a fresh packer packs them. */
static void check_packed_stream(fixture *f, const char *stream, const ws_set *set, int rounds,
                                uint64_t *frames_seen)
{
    uint64_t msgs = stream_msgs(&f->r, stream);
    session_cursor cur[WS_MAX] = {0};
    size_t ncur = 0;
    fleet_packer want = {0};
    *frames_seen = 0;
    for (uint64_t seq = 1; seq <= msgs; seq++) {
        natsMsg *got = NULL;
        assert_int_equal(js_GetMsg(&got, f->r.js, stream, seq, NULL, NULL), NATS_OK);
        fleet_pack pk;
        char why[200] = "";
        const uint8_t *data = (const uint8_t *)natsMsg_GetData(got);
        size_t len = (size_t)natsMsg_GetDataLength(got);
        if (fleet_pack_parse(data, len, 0, &pk, why, sizeof why) < 0)
            fail_msg("stream message %llu: %s", (unsigned long long)seq, why);
        session_cursor *c = NULL;
        for (size_t i = 0; i < ncur; i++)
            if (strlen(cur[i].key) == pk.key_len && memcmp(cur[i].key, pk.key, pk.key_len) == 0)
                c = &cur[i];
        if (!c) {
            c = &cur[ncur++];
            memcpy(c->key, pk.key, pk.key_len);
        }
        assert_int_equal(fleet_packer_start(&want, c->key, strlen(c->key)), 0);
        for (uint32_t k = 0; k < pk.count; k++) { /* the session's next pk.count messages */
            const recd_msg *m = NULL;
            size_t seen = 0;
            for (size_t i = 0; i < (size_t)rounds * set->n && !m; i++)
                if (strcmp(set->m[i % set->n].session, c->key) == 0 && seen++ == c->next)
                    m = &set->m[i % set->n];
            if (!m)
                fail_msg("stream message %llu: more frames of %s than were sent",
                         (unsigned long long)seq, c->key);
            assert_int_equal(fleet_packer_add(&want, m, 0), 0);
            c->next++;
        }
        fleet_packer_seal(&want);
        char subject[RECD_FLEET_SUBJECT_MAX];
        assert_true(recd_fleet_subject("pk", c->key, strlen(c->key), 4, subject, sizeof subject) > 0);
        if (strcmp(natsMsg_GetSubject(got), subject) != 0 || want.buf.len != len ||
            memcmp(want.buf.data, data, len) != 0)
            fail_msg("stream message %llu on %s: not the packed %u messages of %s",
                     (unsigned long long)seq, natsMsg_GetSubject(got), pk.count, c->key);
        *frames_seen += pk.count;
        natsMsg_Destroy(got);
    }
    fleet_packer_free(&want);
}

/* Packed publishing: every frame arrives once, in order, in fewer messages than frames. */
static void test_packed_round_trip(void **state)
{
    fixture *f = *state;
    add_stream(&f->r, "PK", "pk.>");
    ws_set set;
    ws_build(&set);
    recd_client *c = connect_ok(f, "pk", "?partitions=4&pack_bytes=1KiB&linger=10s");
    for (int round = 0; round < ROUNDS; round++)
        for (size_t i = 0; i < set.n; i++)
            assert_int_equal(recd_client_send(c, &set.m[i]), 0);
    char err[300] = "";
    int rc = recd_client_close(c, err, sizeof err);
    if (rc != 0)
        fail_msg("close: %d %s", rc, err);
    uint64_t frames = 0, msgs = stream_msgs(&f->r, "PK");
    check_packed_stream(f, "PK", &set, ROUNDS, &frames);
    print_message("packed: %llu frames in %llu messages\n", (unsigned long long)frames,
                  (unsigned long long)msgs);
    assert_true(frames == (uint64_t)ROUNDS * set.n);
    assert_true(msgs * 4 < frames);
    ws_free(&set);
}

/* A pack nobody fills is published once its first frame is linger old, without a flush. */
static void test_packed_linger(void **state)
{
    fixture *f = *state;
    add_stream(&f->r, "LG", "lg.>");
    ws_set set;
    ws_build(&set);
    recd_client *c = connect_ok(f, "lg", "?linger=300ms");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(recd_client_send(c, &set.m[0]), 0);
    uint64_t early = stream_msgs(&f->r, "LG");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 250)
        assert_true(early == 0); /* packed, waiting (checked only when the check was quick) */
    unsigned waited = 0, limit = tu_scaled_ms(5000);
    while (stream_msgs(&f->r, "LG") == 0 && waited < limit) {
        sleep_ms(10);
        waited += 10;
    }
    assert_true(stream_msgs(&f->r, "LG") == 1);
    char err[300] = "";
    assert_int_equal(recd_client_close(c, err, sizeof err), 0);
    assert_true(stream_msgs(&f->r, "LG") == 1);
    ws_free(&set);
}

static void test_refused_connection(void **state)
{
    (void)state;
    nats_server s;
    server_start(&s);
    unsigned port = s.port;
    server_free(&s); /* a port nothing listens on now */
    char url[96], err[300];
    snprintf(url, sizeof url, "nats://127.0.0.1:%u/p", port);
    recd_client *c = NULL;
    assert_int_equal(recd_client_connect(&c, url, NULL, err, sizeof err), -ECONNREFUSED);
    assert_non_null(strstr(err, "cannot connect to nats://127.0.0.1:"));
    assert_null(c);
}

int main(void)
{
    if (!find_nats_server()) {
        printf("SKIP: nats-server is not installed (scripts/install-deps.sh installs it)\n");
        return TEST_SKIP_EXIT;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_options),
        cmocka_unit_test(test_url_security_options),
        cmocka_unit_test(test_listen_url),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_session_subjects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_packed_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_packed_linger, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_packed_no_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_killed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffer_limit, setup, teardown),
        cmocka_unit_test(test_refused_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
