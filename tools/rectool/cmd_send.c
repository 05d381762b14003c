/* SPDX-License-Identifier: MIT */
/* rectool send: stream recordings to a recd daemon at their original pace (or faster), one session
 * per file, interleaved by time, each file decoded by its own reader thread while it is sent; or
 * produce bounded synthetic load on loopback from librecd's synth generators. Both go through the
 * librecd client. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "formats.h"
#include "progress.h"
#include "recd/client.h"
#include "recd/edit.h"
#include "recd/fleet.h"
#include "recd/synth.h"
#include "send_queue.h"
#include "sniff.h"

#define MAX_SESSIONS 100000ul
#define MAX_FILES 1024 /* one reader thread each */
#define MAX_RATE 1000000.0    /* samples per second per session */
#define MAX_SEND_SECONDS 86400.0

static const char usage[] =
    "usage: rectool send FILE... --to URL [--session NAME] [--speed max|1|N] [--auth TOKEN]\n"
    "       rectool send --synthetic --format FORMAT --sessions N --rate R --duration DUR\n"
    "                    [--scenario SCENARIO] [--seed S] [--session PREFIX] --to URL\n"
    "\n"
    "Streams messages to a recd daemon with the librecd client and prints what was sent.\n"
    "\n"
    "  --to URL             tcp://HOST:PORT, udp://HOST:PORT or unix:///PATH, optionally\n"
    "                       ?encoding=binary|ndjson (default binary); or tls://HOST:PORT: TCP\n"
    "                       with TLS 1.2+, ?ca=FILE (default: the system's CAs), cert=FILE and\n"
    "                       key=FILE (a client certificate), servername=NAME (default HOST);\n"
    "                       the server's certificate and name are always checked (docs/wire.md);\n"
    "                       or nats://HOST:PORT/PREFIX:\n"
    "                       each message a binary frame published to NATS JetStream on\n"
    "                       PREFIX.<partition>.~ (docs/fleet.md), waiting for its ack;\n"
    "                       ?subjects=session: on PREFIX.<partition>.<session> instead\n"
    "                       ?pack_bytes=SIZE&linger=DUR: a session's frames share a message\n"
    "                       until it holds SIZE or its first is DUR old (default 64KiB, 20ms;\n"
    "                       pack_bytes=0: one frame per message)\n"
    "                       ?buffer=SIZE: kept while the server is unreachable (default 8MiB)\n"
    "                       ?tls_ca=, tls_cert=, tls_key=, creds=, nkey=PATH, USER:PASSWORD@ or\n"
    "                       TOKEN@ before HOST: TLS and credentials (docs/fleet.md)\n"
    "  --partitions N       with nats://: the fleet's partition count (default 8)\n"
    "  --max-in-flight N    with nats://: publishes awaiting their ack, at most (default 1024)\n"
    "  --ack-timeout DUR    with nats://: how long to wait for acks (a full window, or the last\n"
    "                       ones) before the unconfirmed messages are reported lost (default 10s)\n"
    "  --auth TOKEN         the daemon's auth.token, put in every open message (1..255\n"
    "                       printable ASCII characters, no spaces; 256 with ndjson)\n"
    "\n"
    "Replaying files (a format with messages, JSON lines or CSV, recognised by content; each\n"
    "file is checked whole, then decoded as it is sent; at most 1024 files):\n"
    "  --session NAME       session key; with several files NAME-1, NAME-2, ... (default: each\n"
    "                       file's base name without extension, other characters turned into '_')\n"
    "  --speed max|1|N      1 = the recording's own timing (default), N = N times faster (0.5 is\n"
    "                       half speed), max = as fast as the connection takes it\n"
    "                       Several files are several sessions, interleaved by their timestamps.\n"
    "\n"
    "Synthetic load (loopback and Unix sockets only):\n"
    "  --synthetic          generate recordings with librecd's deterministic generator\n"
    "  --format FORMAT      a format with synthetic sessions (below)\n"
    "  --scenario SCENARIO  idle | walk | drive | mixed (default mixed)\n"
    "  --sessions N         concurrent sessions (1..100000)\n"
    "  --rate R             samples per second PER SESSION (total = N x R); what a sample is\n"
    "                       depends on the format (below)\n"
    "  --duration DUR       how long to send: 1500ms, 90s, 5m, 1h30m (a unit is required)\n"
    "  --seed S             session i uses seed S + i (default 1)\n"
    "  --session PREFIX     session keys PREFIX-1 .. PREFIX-N (default synth)\n"
    "\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit codes: 0 sent, 1 invalid input or the server refused the data, 2 bad arguments,\n"
    "3 connection or I/O error.\n";

/* --partitions, --max-in-flight, --ack-timeout: query options of a nats:// URL (recd/client.h). */
typedef struct nats_args {
    uint32_t partitions;     /* 0: the client's default */
    uint32_t max_in_flight;  /* 0: the client's default */
    uint64_t ack_timeout_ms; /* 0: the client's default */
} nats_args;

typedef struct send_args {
    const char *to;
    const char *auth; /* NULL: open messages go as they are */
    const char *session;
    double speed; /* 0 = max */
    bool synthetic;
    const rt_session_synth *own; /* a session-only format's sessions: p.format is its base */
    recd_msg_format own_format;  /* its message format */
    recd_synth_params p;
    bool have_format, have_duration;
    unsigned long sessions;
    double rate;
    nats_args nats;
} send_args;

/* ---- sending, pacing, summary ---------------------------------------------------------------- */

typedef struct sender {
    recd_client *client;
    bool nats; /* publishing to JetStream */
    const nats_args *nats_opt;
    struct timespec start;
    uint64_t messages, states, events;
    unsigned long sessions;
} sender;

static double elapsed_s(const sender *s)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - s->start.tv_sec) + (double)(now.tv_nsec - s->start.tv_nsec) / 1e9;
}

/* A JetStream publisher's lasting failures are told by finish(), with the count of lost messages
 * (recd/client.h). */
static int send_failed(const sender *s, int rc)
{
    if (s->nats && (rc == -EIO || rc == -ETIMEDOUT || rc == -ENOBUFS || rc == -ENOTCONN))
        return RT_EXIT_IO;
    rt_error("send: %s", recd_strerror(rc));
    return rc == -EINVAL ? RT_EXIT_INVALID : RT_EXIT_IO;
}

/* Waits until at_s seconds after the start; queued bytes go out first so they are on time. */
static int pace(sender *s, double at_s)
{
    double wait = at_s - elapsed_s(s);
    if (wait < 0.001)
        return 0;
    int rc = s->nats ? 0 : recd_client_flush(s->client); /* JetStream publishes go out at once */
    if (rc < 0)
        return rc;
    struct timespec until = s->start;
    double whole = floor(at_s);
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((at_s - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
    return 0;
}

static int send_msg(sender *s, const recd_msg *m)
{
    int rc = recd_client_send(s->client, m);
    if (rc == 0) {
        s->messages++;
        s->states += m->type == RECD_MSG_STATE;
        s->events += m->type == RECD_MSG_EVENT;
    }
    return rc;
}

/* url with the --partitions, --max-in-flight and --ack-timeout query options added; 0 or
 * -ENAMETOOLONG. */
static int nats_url(const char *url, const nats_args *a, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "%s", url);
    char sep = strchr(url, '?') ? '&' : '?';
    if (a->partitions && n < cap) {
        n += (size_t)snprintf(out + n, cap - n, "%cpartitions=%u", sep, (unsigned)a->partitions);
        sep = '&';
    }
    if (a->max_in_flight && n < cap) {
        n += (size_t)snprintf(out + n, cap - n, "%cmax_in_flight=%u", sep,
                              (unsigned)a->max_in_flight);
        sep = '&';
    }
    if (a->ack_timeout_ms && n < cap)
        n += (size_t)snprintf(out + n, cap - n, "%cack_timeout=%llums", sep,
                              (unsigned long long)a->ack_timeout_ms);
    return n < cap ? 0 : -ENAMETOOLONG;
}

static int connect_to(sender *s, const char *url)
{
    char err[600], with_options[2048];
    const nats_args *nats_opt = s->nats_opt;
    memset(s, 0, sizeof *s);
    s->nats = strncmp(url, "nats://", 7) == 0;
    if (s->nats && nats_url(url, nats_opt, with_options, sizeof with_options) < 0) {
        rt_error("send: the URL is too long: %s", url);
        return RT_EXIT_USAGE;
    }
    int rc = recd_client_connect(&s->client, s->nats ? with_options : url, NULL, err, sizeof err);
    if (rc < 0) {
        rt_error("send: %s", err);
        return rc == -EINVAL ? RT_EXIT_USAGE : RT_EXIT_IO;
    }
    clock_gettime(CLOCK_MONOTONIC, &s->start);
    return RT_EXIT_OK;
}

/* Closes the connection, reading the server's verdict; a refusal is the exit code's business.
 * A server that refused the data often resets the connection while we still send: its reply,
 * not the reset, says what went wrong. */
static int finish(sender *s, int exit_code)
{
    char err[1100];
    err[0] = '\0';
    int rc = recd_client_close(s->client, err, sizeof err);
    if (rc < 0) {
        rt_error("send: %s", err[0] ? err : recd_strerror(rc));
        if (rc == -EPROTO)
            exit_code = RT_EXIT_INVALID;
        else if (exit_code == RT_EXIT_OK)
            exit_code = RT_EXIT_IO;
    }
    return exit_code;
}

/* Pushes out what is queued, closes with the server's verdict (finish()), and prints what was
 * sent only when the server took it: a refused send never says "sent". */
static int summarise(sender *s, int exit_code)
{
    if (exit_code != RT_EXIT_OK)
        return finish(s, exit_code);
    int rc = recd_client_flush(s->client);
    if (rc < 0)
        return finish(s, send_failed(s, rc));
    double secs = elapsed_s(s);
    uint64_t bytes = recd_client_bytes_sent(s->client);
    const char *over = s->nats ? "nats" : recd_wire_encoding_name(recd_client_encoding(s->client));
    exit_code = finish(s, RT_EXIT_OK); /* frees the client */
    if (exit_code != RT_EXIT_OK)
        return exit_code;
    double rate = secs > 0 ? (double)s->messages / secs : 0;
    printf("sent %llu messages (%llu states, %llu events) in %lu session%s over %s: %llu bytes in "
           "%.3f s, %.0f messages/s, %.2f MB/s\n",
           (unsigned long long)s->messages, (unsigned long long)s->states,
           (unsigned long long)s->events, s->sessions, s->sessions == 1 ? "" : "s",
           over,
           (unsigned long long)bytes,
           secs, rate, secs > 0 ? (double)bytes / secs / 1e6 : 0.0);
    fflush(stdout);
    return RT_EXIT_OK;
}

/* ---- replaying files ------------------------------------------------------------------------- */

/* One file: its reader thread decodes it into the queue, the sending loop takes from there. */
typedef struct track {
    char session[RECD_SESSION_KEY_MAX + 1];
    const char *path;
    rt_send_queue q;
    bool queue_ready, reader_started;
    pthread_t reader;
    int code; /* the reader's exit code, valid once the queue is closed */
    uint64_t last_ms, seq;
    bool text;     /* JSON lines or CSV: progress counts messages (lines), else blocks / ticks */
    uint64_t done; /* progress units sent (sending loop only) */
    const recd_format *format; /* of the last message sent (sending loop only) */
} track;

/* When m is due: its own time, or (open, flush, events without one) the message's before it. */
static uint64_t msg_time_ms(const recd_msg *m, uint64_t last)
{
    int64_t t = recd_edit_msg_time_ms(m);
    return t >= 0 && (uint64_t)t > last ? (uint64_t)t : last;
}

/* Reader thread: hands one decoded message to the sending loop, waiting while its queue is full. */
static int collect(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    track *t = ctx;
    rt_timed_msg tm;
    if (recd_msg_copy(&tm.m, m) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    memcpy(tm.m.session, t->session, sizeof t->session);
    tm.m.has_seq = true;
    tm.m.seq = t->seq++;
    t->last_ms = tm.at_ms = msg_time_ms(m, t->last_ms);
    return rt_send_queue_put(&t->q, &tm);
}

/* The first pass over a text file: every line is checked before anything is sent. */
static int check_only(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)m;
    (void)err;
    (void)errlen;
    track *t = ctx;
    return rt_send_queue_cancelled(&t->q) ? -ECANCELED : 0;
}

/* Base name without directory and extension, reduced to a valid session key. */
static void session_from_path(const char *path, char out[RECD_SESSION_KEY_MAX + 1])
{
    const char *base = rt_base_name(path);
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (n > RECD_SESSION_KEY_MAX)
        n = RECD_SESSION_KEY_MAX;
    for (size_t i = 0; i < n; i++) {
        char c = base[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        out[i] = ok && !(i == 0 && c == '.') ? c : '_';
    }
    out[n] = 0;
    if (n == 0 || strcmp(path, "-") == 0)
        strcpy(out, "stdin");
}

/* Appends "-K" within the key length limit. */
static void key_with_suffix(const char *base, unsigned long k, char out[RECD_SESSION_KEY_MAX + 1])
{
    char suffix[24];
    snprintf(suffix, sizeof suffix, "-%lu", k);
    size_t keep = strlen(base);
    if (keep + strlen(suffix) > RECD_SESSION_KEY_MAX)
        keep = RECD_SESSION_KEY_MAX - strlen(suffix);
    snprintf(out, RECD_SESSION_KEY_MAX + 1, "%.*s%s", (int)keep, base, suffix);
}

static void name_tracks(track *tracks, int n, const char *const *paths, const char *name)
{
    for (int i = 0; i < n; i++) {
        if (name && n == 1)
            snprintf(tracks[i].session, sizeof tracks[i].session, "%s", name);
        else if (name)
            key_with_suffix(name, (unsigned long)i + 1, tracks[i].session);
        else
            session_from_path(paths[i], tracks[i].session);
    }
    if (name)
        return;
    for (int i = 1; i < n; i++) { /* the same base name twice: number the later ones */
        char base[RECD_SESSION_KEY_MAX + 1];
        memcpy(base, tracks[i].session, sizeof base);
        for (unsigned long k = 2;; k++) {
            bool clash = false;
            for (int j = 0; j < i && !clash; j++)
                clash = strcmp(tracks[j].session, tracks[i].session) == 0;
            if (!clash)
                break;
            key_with_suffix(base, k, tracks[i].session);
        }
    }
}

/* Runs on the track's reader thread: decodes the file into the queue. */
static int load_track(track *t, const char *path)
{
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        rt_error("send: %s: %s", path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    char err[300] = "";
    rt_sniffed what;
    rt_sniff(in.data, in.len, &what);
    if (rt_sniffed_recording(&what)) {
        /* the export checks the whole file before its first message */
        rc = recd_format_export(what.format, in.data, in.len, collect, t, err, sizeof err);
    } else if (what.text == RECD_TEXT_JSONL) {
        rc = recd_jsonl_read(in.data, in.len, check_only, t, err, sizeof err);
        if (rc == 0)
            rc = recd_jsonl_read(in.data, in.len, collect, t, err, sizeof err);
    } else if (what.text == RECD_TEXT_CSV) {
        rc = recd_csv_read(in.data, in.len, check_only, t, err, sizeof err);
        if (rc == 0)
            rc = recd_csv_read(in.data, in.len, collect, t, err, sizeof err);
    } else {
        rt_error("send: %s: %s", path, what.description);
        rt_input_close(&in);
        return RT_EXIT_INVALID;
    }
    rt_input_close(&in);
    if (rc == -ECANCELED)
        return RT_EXIT_OK; /* the sending loop stopped and has its own reason */
    if (rc < 0) {
        rt_error("send: %s: %s", path, err[0] ? err : recd_strerror(rc));
        return rt_exit_for_error(rc);
    }
    return RT_EXIT_OK;
}

static void *reader_main(void *arg)
{
    track *t = arg;
    t->code = load_track(t, t->path);
    rt_send_queue_close(&t->q);
    return NULL;
}

/* The track whose next message is due first (earliest time, then file order); NULL when all are
 * done, or when a reader failed (*code says how). Waits for the readers as needed. */
static track *next_due(track *tracks, int n, int *code)
{
    track *best = NULL;
    const rt_timed_msg *best_head = NULL;
    for (int i = 0; i < n; i++) {
        track *t = &tracks[i];
        const rt_timed_msg *head = rt_send_queue_peek(&t->q);
        if (!head && t->code != RT_EXIT_OK) {
            *code = t->code;
            return NULL;
        }
        if (head && (!best || head->at_ms < best_head->at_ms)) {
            best = t;
            best_head = head;
        }
    }
    return best;
}

/* Replaces the open message's token with the one given on the command line. */
static int set_auth(recd_msg *m, const char *auth)
{
    char *copy = strdup(auth);
    if (!copy)
        return -ENOMEM;
    free(m->open.auth);
    m->open.auth = copy;
    return 0;
}

/* The progress bar's total: the files' blocks or ticks (their formats count them from the size
 * or the header), or lines of text; 0 (no bar) when one is standard input. Marks text tracks. */
/* The latest message time of a file, for the warning before a long paced send. */
static int note_span(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    uint64_t *span_ms = ctx;
    *span_ms = msg_time_ms(m, *span_ms);
    return 0;
}

/* How long a paced send of the files lasts: the longest file's last time over speed; 0 when
 * unknown (standard input, text files) or sent at full speed. */
static double paced_seconds(char **files, int nfiles, double speed)
{
    uint64_t longest = 0;
    for (int i = 0; i < nfiles && speed > 0; i++) {
        rt_input in;
        if (strcmp(files[i], "-") == 0 || rt_input_open(&in, files[i]) < 0)
            return 0;
        rt_sniffed what;
        rt_sniff(in.data, in.len, &what);
        uint64_t span = 0;
        char err[200];
        int rc = rt_sniffed_recording(&what) ? recd_format_export(what.format, in.data, in.len,
                                                                  note_span, &span, err, sizeof err)
                                              : -EINVAL;
        if (rc == 0 && span > longest)
            longest = span;
        rt_input_close(&in);
    }
    return speed > 0 ? (double)longest / 1000.0 / speed : 0;
}

/* A paced send longer than this says how long it will take, and how not to wait. */
#define PACED_WARN_SECONDS 10.0

static void warn_if_slow(char **files, int nfiles, double speed)
{
    double secs = paced_seconds(files, nfiles, speed);
    if (secs <= PACED_WARN_SECONDS)
        return;
    unsigned long whole = (unsigned long)(secs + 0.5);
    fprintf(stderr,
            "rectool send: paced at %gx the recording's own timing, this takes about %lum%02lus; "
            "--speed max sends as fast as the connection takes it\n",
            speed, whole / 60, whole % 60);
}

static uint64_t count_work(track *tracks, int nfiles, char **files)
{
    uint64_t total = 0;
    for (int i = 0; i < nfiles; i++) {
        rt_input in;
        if (strcmp(files[i], "-") == 0 || rt_input_open(&in, files[i]) < 0)
            return 0;
        rt_sniffed what;
        rt_sniff(in.data, in.len, &what);
        tracks[i].text = what.text != RECD_TEXT_NONE;
        if (rt_sniffed_recording(&what))
            total += recd_format_count_units(what.format, in.data, in.len);
        else if (tracks[i].text)
            total += rt_count_lines(in.data, in.len);
        rt_input_close(&in);
    }
    return total;
}

/* After a message went out: a state is a unit, or reaches the unit it says (the format's
 * state_unit); a text line is a message. */
static void note_sent(track *t, const recd_msg *m)
{
    if (t->text) {
        t->done++;
        return;
    }
    if (m->type != RECD_MSG_STATE)
        return;
    if (!t->format || t->format->msg_format != m->format)
        t->format = recd_format_of_msg(m->format);
    int64_t unit = t->format && t->format->state_unit ? t->format->state_unit(m) : -1;
    t->done = unit >= 0 ? (uint64_t)unit + 1 : t->done + 1;
}

/* Starts one reader thread per file; the exit code says whether all of them run. */
static int start_readers(track *tracks, int nfiles, char **files)
{
    for (int i = 0; i < nfiles; i++) {
        track *t = &tracks[i];
        t->path = files[i];
        int rc = rt_send_queue_init(&t->q);
        if (rc == 0) {
            t->queue_ready = true;
            rc = -pthread_create(&t->reader, NULL, reader_main, t);
        }
        if (rc < 0) {
            rt_error("send: %s: cannot start its reader: %s", files[i], recd_strerror(rc));
            return RT_EXIT_IO;
        }
        t->reader_started = true;
    }
    return RT_EXIT_OK;
}

static void stop_readers(track *tracks, int nfiles)
{
    for (int i = 0; i < nfiles; i++) {
        if (tracks[i].queue_ready)
            rt_send_queue_cancel(&tracks[i].q);
    }
    for (int i = 0; i < nfiles; i++) {
        if (tracks[i].reader_started)
            pthread_join(tracks[i].reader, NULL);
        if (tracks[i].queue_ready)
            rt_send_queue_destroy(&tracks[i].q);
    }
}

static int replay(const send_args *a, int nfiles, char **files)
{
    if (nfiles > MAX_FILES)
        return rt_usage_error("send", usage, "%d files; at most %d at once", nfiles, MAX_FILES);
    track *tracks = calloc((size_t)nfiles, sizeof *tracks);
    if (!tracks)
        return RT_EXIT_IO;
    name_tracks(tracks, nfiles, (const char *const *)files, a->session);
    uint64_t work = count_work(tracks, nfiles, files);
    int code = start_readers(tracks, nfiles, files);
    /* Nothing goes out before every file has passed its checks: a reader's first message (or
     * its end) comes after them. */
    for (int i = 0; i < nfiles && code == RT_EXIT_OK; i++) {
        if (!rt_send_queue_peek(&tracks[i].q))
            code = tracks[i].code;
    }
    sender s;
    s.nats_opt = &a->nats;
    if (code == RT_EXIT_OK)
        code = connect_to(&s, a->to);
    if (code == RT_EXIT_OK) {
        warn_if_slow(files, nfiles, a->speed);
        s.sessions = (unsigned long)nfiles;
        track *t;
        int reader_code = RT_EXIT_OK;
        rt_progress bar;
        uint64_t done = 0;
        rt_progress_start(&bar, "sending", work, true);
        rt_progress_set_unit(&bar, RT_UNIT_ITEMS, "samples");
        while (code == RT_EXIT_OK && (t = next_due(tracks, nfiles, &reader_code))) {
            rt_timed_msg tm;
            rt_send_queue_pop(&t->q, &tm);
            int rc = 0;
            if (tm.m.type == RECD_MSG_OPEN && a->auth)
                rc = set_auth(&tm.m, a->auth);
            if (rc == 0 && a->speed > 0)
                rc = pace(&s, (double)tm.at_ms / 1000.0 / a->speed);
            if (rc == 0)
                rc = send_msg(&s, &tm.m);
            if (rc == 0 && bar.active) {
                uint64_t before = t->done;
                note_sent(t, &tm.m);
                done += t->done - before;
                rt_progress_update(&bar, done);
            }
            recd_msg_free(&tm.m);
            if (rc < 0) {
                rt_progress_clear(&bar);
                code = send_failed(&s, rc);
            }
        }
        rt_progress_finish(&bar);
        if (code == RT_EXIT_OK)
            code = reader_code;
        code = summarise(&s, code);
    }
    stop_readers(tracks, nfiles);
    free(tracks);
    return code;
}

/* ---- synthetic load -------------------------------------------------------------------------- */

typedef struct synth_session {
    recd_synth_session *gen; /* the format's generator; NULL for a session-only one or once dry */
    char session[RECD_SESSION_KEY_MAX + 1];
    uint64_t seq;
    void *own;               /* a session-only format's generator (rectool's); NULL once dry */
} synth_session;


static recd_msg_format msg_format(const send_args *a)
{
    return a->own ? a->own_format : a->p.format->msg_format;
}

/* Ends a session-only format's generator (a->own's). */
static void free_own(const send_args *a, synth_session *ss)
{
    if (ss->own)
        a->own->free(ss->own);
    ss->own = NULL;
}

/* url parsed; a tls:// URL as the tcp:// one beneath it (its TLS options left out). */
static int parse_target(const char *url, recd_wire_url *u)
{
    if (strncmp(url, "tls://", 6) != 0)
        return recd_wire_url_parse(url, u, NULL, 0);
    char tcp[RECD_WIRE_HOST_MAX + 64];
    const char *q = strchr(url, '?');
    int n = q ? (int)(q - url - 6) : (int)strlen(url + 6);
    bool ndjson = q && strstr(q, "encoding=ndjson");
    if (snprintf(tcp, sizeof tcp, "tcp://%.*s%s", n, url + 6, ndjson ? "?encoding=ndjson" : "") >=
        (int)sizeof tcp)
        return -EINVAL;
    return recd_wire_url_parse(tcp, u, NULL, 0);
}

static bool loopback_target(const char *url)
{
    recd_wire_url u;
    if (parse_target(url, &u) < 0)
        return true; /* the client reports the bad URL */
    if (u.transport == RECD_WIRE_UNIX || strcmp(u.host, "localhost") == 0 ||
        strcmp(u.host, "::1") == 0)
        return true;
    struct in_addr v4;
    return inet_pton(AF_INET, u.host, &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

static int synth_open(sender *s, synth_session *ss, const send_args *a, unsigned long i,
                      uint64_t samples)
{
    recd_synth_params p = a->p;
    p.seed = a->p.seed + i;
    /* A generator long enough for every sample: one that makes a sample per sample_ms gets that
     * much; others end by duration, so give them the longest one (samples are made on demand). */
    uint32_t sample_ms = recd_synth_sample_ms(a->p.format);
    p.duration_ms = sample_ms ? (samples + 1) * sample_ms : RECD_SYNTH_MAX_DURATION_MS;
    if (p.duration_ms > RECD_SYNTH_MAX_DURATION_MS)
        p.duration_ms = RECD_SYNTH_MAX_DURATION_MS;
    key_with_suffix(a->session ? a->session : "synth", i + 1, ss->session);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, msg_format(a));
    int rc;
    if (a->own) {
        rc = a->own->init(&ss->own, p.seed, p.duration_ms);
    } else {
        rc = recd_synth_session_new(&p, &ss->gen);
        if (rc == 0)
            rc = recd_synth_session_open(ss->gen, &m, -1);
    }
    memcpy(m.session, ss->session, sizeof m.session);
    m.has_seq = true;
    m.seq = ss->seq++;
    if (rc == 0 && a->auth)
        rc = set_auth(&m, a->auth);
    if (rc == 0)
        rc = send_msg(s, &m);
    recd_msg_free(&m);
    return rc;
}

typedef struct synth_emit {
    sender *s;
    synth_session *ss;
} synth_emit;

/* A generated message of the session: its key and sequence number added, sent. */
static int emit_msg(void *ctx, recd_msg *m)
{
    synth_emit *e = ctx;
    memcpy(m->session, e->ss->session, sizeof m->session);
    m->has_seq = true;
    m->seq = e->ss->seq++;
    return send_msg(e->s, m);
}

/* Sends the session's next sample; 1 when the generator has run dry. */
static int synth_sample(sender *s, synth_session *ss, const rt_session_synth *own,
                        recd_msg_format f)
{
    if (ss->gen) {
        synth_emit e = {s, ss};
        return recd_synth_session_next(ss->gen, emit_msg, &e);
    }
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, f);
    int rc = own->next(ss->own, &m);
    if (rc != 0)
        return rc;
    synth_emit e = {s, ss};
    return emit_msg(&e, &m);
}

static int synth_close(sender *s, synth_session *ss, recd_msg_format f)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, f);
    memcpy(m.session, ss->session, sizeof m.session);
    m.has_seq = true;
    m.seq = ss->seq++;
    return send_msg(s, &m);
}

static int synthetic(const send_args *a)
{
    if (!loopback_target(a->to))
        return rt_usage_error("send", usage,
                              "synthetic load only goes to loopback addresses or Unix sockets");
    double total_rate = a->rate * (double)a->sessions;
    double secs = (double)a->p.duration_ms / 1000.0;
    uint64_t samples = (uint64_t)ceil(a->rate * secs); /* per session */
    synth_session *ss = calloc(a->sessions, sizeof *ss);
    if (!ss)
        return RT_EXIT_IO;
    sender s;
    s.nats_opt = &a->nats;
    int code = connect_to(&s, a->to);
    recd_msg_format f = msg_format(a);
    int rc = 0;
    if (code == RT_EXIT_OK) {
        s.sessions = a->sessions;
        for (unsigned long i = 0; i < a->sessions && rc == 0; i++)
            rc = synth_open(&s, &ss[i], a, i, samples);
        /* Message j (sample j / N of session j % N) is due at j / (N x R): a smooth total rate. */
        uint64_t total = samples * a->sessions;
        rt_progress bar;
        rt_progress_start(&bar, "sending", total, true);
        rt_progress_set_unit(&bar, RT_UNIT_ITEMS, "samples");
        for (uint64_t j = 0; j < total && rc == 0; j++) {
            if ((j & 1023) == 0 && elapsed_s(&s) > secs)
                break; /* behind schedule: the duration still bounds the run */
            if (bar.active && (total_rate < 10000 || (j & 63) == 0))
                rt_progress_update(&bar, j);
            synth_session *one = &ss[j % a->sessions];
            bool live = one->gen || one->own;
            if ((rc = pace(&s, (double)j / total_rate)) == 0 && live)
                rc = synth_sample(&s, one, a->own, f);
            if (rc == 1) { /* generator finished early: that session just stops */
                recd_synth_session_free(one->gen);
                free_own(a, one);
                one->gen = NULL;
                rc = 0;
            }
        }
        rt_progress_finish(&bar);
        for (unsigned long i = 0; i < a->sessions && rc == 0; i++)
            rc = synth_close(&s, &ss[i], f);
        if (rc < 0)
            code = send_failed(&s, rc);
        code = summarise(&s, code);
    }
    for (unsigned long i = 0; i < a->sessions; i++) {
        recd_synth_session_free(ss[i].gen);
        free_own(a, &ss[i]);
    }
    free(ss);
    return code;
}

/* ---- arguments ------------------------------------------------------------------------------- */

static int parse_positive(const char *text, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v > 0) || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_seed(const char *text, uint64_t *out)
{
    if (!text || text[0] < '0' || text[0] > '9')
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end)
        return -EINVAL;
    *out = (uint64_t)v;
    return 0;
}

static bool session_name_ok(const char *name, bool numbered)
{
    size_t n = strlen(name);
    return recd_session_key_valid(name, n) && (!numbered || n <= RECD_SESSION_KEY_MAX - 7);
}

/* The token as the wire carries it: printable ASCII without spaces, at most 255 bytes in the
 * binary encoding (a one-byte length) and RECD_AUTH_TOKEN_MAX in NDJSON. -1 when it will do. */
static int check_auth(const char *token, const char *url)
{
    size_t n = strlen(token);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)token[i] <= 0x20 || (unsigned char)token[i] >= 0x7F)
            return rt_usage_error("send", usage, "--auth: the token must be printable ASCII "
                                  "without spaces (character %zu is not)", i + 1);
    recd_wire_url u;
    bool ndjson = parse_target(url, &u) == 0 && u.encoding == RECD_WIRE_NDJSON;
    size_t max = ndjson ? RECD_AUTH_TOKEN_MAX : 255;
    if (n == 0)
        return rt_usage_error("send", usage, "--auth needs a token; it is empty (is the variable "
                              "that should hold it set?)");
    if (n > max)
        return rt_usage_error("send", usage, "--auth: the token has %zu characters; 1..%zu%s", n,
                              max, ndjson ? "" : " in the binary encoding");
    return -1;
}

/* Fills a from argv; returns -1 to go on, or the exit code to return now. */
static int parse_args(int argc, char **argv, send_args *a)
{
    static const struct option opts[] = {
        {"to", required_argument, NULL, 't'},        {"session", required_argument, NULL, 'n'},
        {"speed", required_argument, NULL, 'x'},     {"synthetic", no_argument, NULL, 'y'},
        {"format", required_argument, NULL, 'f'},    {"scenario", required_argument, NULL, 'c'},
        {"sessions", required_argument, NULL, 'N'},  {"rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'},  {"seed", required_argument, NULL, 'S'},
        {"auth", required_argument, NULL, 'a'},      {"help", no_argument, NULL, 'h'},
        {"partitions", required_argument, NULL, 'P'}, {"max-in-flight", required_argument, NULL, 'M'},
        {"ack-timeout", required_argument, NULL, 'A'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->speed = 1;
    a->p.scenario = RECD_SYNTH_SCENARIO_MIXED;
    a->p.seed = 1;
    double v;
    int code;
    rt_getopt_reset();
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 't': a->to = optarg; break;
        case 'a': a->auth = optarg; break;
        case 'n': a->session = optarg; break;
        case 'x':
            if (strcmp(optarg, "max") == 0)
                a->speed = 0;
            else if (parse_positive(optarg, 1e9, &a->speed) < 0)
                return rt_usage_error("send", usage, "bad speed '%s' (max, 1, or a factor > 0)",
                                      optarg);
            break;
        case 'y': a->synthetic = true; break;
        case 'f':
            if (rt_parse_synth_format("send", usage, optarg, &a->p.format, &a->own) != 0)
                return RT_EXIT_USAGE;
            if (a->own) {
                const rt_format_tool *t;
                a->own_format = rt_format_find_any(optarg, &t)->msg_format;
            }
            a->have_format = true;
            break;
        case 'c':
            if (rt_parse_synth_scenario("send", usage, optarg, &a->p.scenario) != 0)
                return RT_EXIT_USAGE;
            break;
        case 'N':
            if (parse_positive(optarg, (double)MAX_SESSIONS, &v) < 0 || v != floor(v))
                return rt_usage_error("send", usage, "bad --sessions '%s' (1..%lu)", optarg,
                                      MAX_SESSIONS);
            a->sessions = (unsigned long)v;
            break;
        case 'r':
            if (parse_positive(optarg, MAX_RATE, &a->rate) < 0)
                return rt_usage_error("send", usage, "bad --rate '%s' (samples/s per session, > 0)",
                                      optarg);
            break;
        case 'd':
            if (rt_parse_duration("send", usage, "--duration", optarg, &a->p.duration_ms) != 0)
                return RT_EXIT_USAGE;
            if (a->p.duration_ms == 0 || (double)a->p.duration_ms / 1000.0 > MAX_SEND_SECONDS)
                return rt_usage_error("send", usage, "--duration: '%s' is out of range (1ms .. 24h)", optarg);
            a->have_duration = true;
            break;
        case 'S':
            if (parse_seed(optarg, &a->p.seed) < 0)
                return rt_usage_error("send", usage, "bad seed '%s' (an unsigned 64-bit number)",
                                      optarg);
            break;
        case 'P':
            if (parse_positive(optarg, RECD_FLEET_PARTITIONS_MAX, &v) < 0 || v != floor(v))
                return rt_usage_error("send", usage, "bad --partitions '%s' (1..%u)", optarg,
                                      RECD_FLEET_PARTITIONS_MAX);
            a->nats.partitions = (uint32_t)v;
            break;
        case 'M':
            if (parse_positive(optarg, 1e6, &v) < 0 || v != floor(v))
                return rt_usage_error("send", usage, "bad --max-in-flight '%s' (1..1000000)", optarg);
            a->nats.max_in_flight = (uint32_t)v;
            break;
        case 'A': {
            uint64_t ms;
            if (rt_parse_duration("send", usage, "--ack-timeout", optarg, &ms) != 0)
                return RT_EXIT_USAGE;
            if (ms == 0 || ms > 3600000)
                return rt_usage_error("send", usage, "--ack-timeout: '%s' is out of range (1ms .. 1h)", optarg);
            a->nats.ack_timeout_ms = ms;
            break;
        }
        case 'h': rt_print_usage("send", usage); return RT_EXIT_OK;
        default: return rt_bad_option("send", usage, argv, c);
        }
    }
    if (!a->to)
        return rt_usage_error("send", usage, "--to URL is required");
    if (a->auth && (code = check_auth(a->auth, a->to)) >= 0)
        return code;
    if (a->session && !session_name_ok(a->session, a->synthetic || argc - optind > 1))
        return rt_usage_error("send", usage,
                              "bad --session '%s' (A-Z a-z 0-9 . _ -, not starting with '.', "
                              "short enough for a -N suffix)",
                              a->session);
    if (!a->synthetic) {
        if (optind >= argc)
            return rt_usage_error("send", usage, "no input files");
        if (a->have_format || a->have_duration || a->sessions || a->rate > 0)
            return rt_usage_error("send", usage,
                                  "--format, --sessions, --rate and --duration need --synthetic");
        return -1;
    }
    if (optind < argc)
        return rt_usage_error("send", usage, "--synthetic takes no input files");
    if (!a->have_format || !a->have_duration || !a->sessions || !(a->rate > 0))
        return rt_usage_error("send", usage,
                              "--synthetic needs --format, --sessions, --rate and --duration");
    if (!a->own && !recd_synth_has_sessions(a->p.format))
        return rt_usage_error("send", usage,
                              "--synthetic has no %s load yet: write a file with 'rectool "
                              "generate --format %s' and send that file",
                              a->p.format->name, a->p.format->name);
    const char *why;
    recd_synth_params check = a->p;
    if (a->own)
        check.scenario = a->own->scenario;
    if (recd_synth_params_check(&check, &why) < 0)
        return rt_usage_error("send", usage, "%s", why);
    if (a->rate * (double)a->p.duration_ms / 1000.0 * (double)a->sessions > 1e10)
        return rt_usage_error("send", usage, "more than 10^10 samples: lower --rate or --duration");
    return -1;
}

int cmd_send(int argc, char **argv)
{
    send_args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0)
        return code;
    return a.synthetic ? synthetic(&a) : replay(&a, argc - optind, argv + optind);
}
