/* SPDX-License-Identifier: MIT */
/* Disk faults against the real daemon (docs/reliability.md, "Write path"): a write error the
 * daemon cannot undo makes the stop message and the exit status say so; on a real tmpfs (root
 * only: mount), a full disk and a read-only remount lose nothing accepted: input waits, the
 * writes are retried, and every file ends complete. */
#include "test_daemon_harness.h"

#include <pthread.h>
#include <sys/mount.h>

#include "recd/format.h"
#include "recd/seek_index.h"

#define FAULT_CONFIG "flush:\n  interval: 50ms\n"

static bool log_has(const td_daemon *d, const char *text)
{
    size_t n;
    uint8_t *log = tu_read_file(d->log, &n);
    if (!log)
        return false;
    bool found = memmem(log, n, text, strlen(text)) != NULL;
    free(log);
    return found;
}

/* The only .part file under the output root, waiting until it holds bytes. */
static void wait_for_part(const td_daemon *d, char *rel, size_t cap)
{
    uint64_t deadline = td_deadline(10000);
    for (;;) {
        td_files f = td_list(d);
        for (size_t i = 0; i < f.count; i++) {
            size_t l = strlen(f.items[i].path);
            if (l > 5 && strcmp(f.items[i].path + l - 5, ".part") == 0 && f.items[i].size > 0) {
                snprintf(rel, cap, "%s", f.items[i].path);
                td_files_free(&f);
                return;
            }
        }
        td_files_free(&f);
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            fail_msg("no .part file with data appeared");
        }
        td_sleep_ms(20);
    }
}

static void send_states(recd_client *c, td_rec_session *s, unsigned n)
{
    recd_msg m;
    for (unsigned i = 0; i < n && td_rec_session_next(s, &m); i++)
        td_send(c, &m);
}

static void send_flush(recd_client *c, const td_rec_session *s)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_FLUSH, s->format);
    snprintf(m.session, sizeof m.session, "%s", s->session);
    td_send(c, &m);
    assert_int_equal(recd_client_flush(c), 0);
}

/* Waits until recd counts more write errors than before. */
static void wait_write_errors(const td_daemon *d, double before)
{
    uint64_t deadline = td_deadline(10000);
    while (td_metric(d, "recd_write_errors_total") <= before) {
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            fail_msg("recd reported no write error");
        }
        td_sleep_ms(10);
    }
}

/* Waits until /healthz reports a write error (503). */
static void wait_unhealthy(const td_daemon *d)
{
    uint64_t deadline = td_deadline(10000);
    for (;;) {
        int status = 0;
        free(td_http_get(d, "/healthz", &status));
        if (status == 503)
            return;
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            fail_msg("/healthz did not report the write error");
        }
        td_sleep_ms(20);
    }
}

/* A .part removed behind recd's back cannot be finalized: at the stop, recd says so and exits
 * non-zero instead of "every file is finalized". */
static void lost_part_makes_exit_status_fail(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, FAULT_CONFIG);
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "gone", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 7);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, s.session, s.format, 0);
    send_states(c, &s, 100);
    send_flush(c, &s);
    char rel[1024];
    wait_for_part(&d, rel, sizeof rel);
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", d.out, rel);
    assert_int_equal(unlink(path), 0);
    send_states(c, &s, 100);
    send_flush(c, &s);
    td_send_close(c, s.session, s.format);
    td_close_client(c);
    int code = td_signal_wait(&d, SIGTERM);
    if (code == 0 || log_has(&d, "every file is finalized")) {
        td_dump_log(&d);
        fail_msg("recd exited %d after losing a .part, expected a failure status", code);
    }
    assert_true(log_has(&d, "stopped with write errors"));
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* The output root removed while recd runs, then made again: recd notices, opens the new root,
 * and a session opened after that is recorded whole. Samples sent before the removal but still
 * queued when it happened (flush.interval is long) are not lost: the part whose file vanished
 * starts again in the new root, a .rec header first, and holds every sample after those the
 * removed file took. Nothing recd held is lost; the stop reports the removed file. */
static void removed_root_is_opened_again(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 1h\n");
    td_start(&d);
    td_rec_session before, after;
    td_rec_session_init(&before, "before", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 3);
    td_rec_session_init(&after, "after", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 4);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, before.session, before.format, 0);
    send_states(c, &before, 100);
    send_flush(c, &before);
    char rel[1024];
    wait_for_part(&d, rel, sizeof rel);
    uint64_t gone = before.blocks; /* in the file that is removed now */

    tu_rmtree(d.out);
    send_states(c, &before, 100); /* queued: the flush interval is long */
    assert_int_equal(recd_client_flush(c), 0);
    wait_unhealthy(&d);
    assert_int_equal(mkdir(d.out, 0755), 0);
    send_states(c, &before, UINT32_MAX);
    td_send_close(c, before.session, before.format);
    td_close_client(c);

    td_send_rec_session(d.tcp, &after, 0);
    uint64_t deadline = td_deadline(30000);
    for (;;) {
        td_files f = td_session_files(&d, "samp-onfoot", after.session);
        bool done = f.count == 1 && f.parts == 0;
        td_files_free(&f);
        if (done || td_now_ms() > deadline)
            break;
        td_sleep_ms(50);
    }
    td_expect_single_file(&d, "samp-onfoot", after.session, &after.expect);
    for (;;) { /* the part started again in the new root, once its retries got through */
        td_files f = td_session_files(&d, "samp-onfoot", before.session);
        bool done = f.count >= 1 && f.parts == 0;
        td_files_free(&f);
        if (done)
            break;
        if (td_now_ms() > deadline) {
            td_dump_log(&d);
            fail_msg("session 'before' has no finalized file in the new root");
        }
        td_sleep_ms(50);
    }
    /* Its file: a header, then every block after the ones the removed file held. */
    size_t block = RECD_REC_ONFOOT_BLOCK_SIZE;
    recd_buf rest = {0};
    assert_int_equal(recd_buf_append(&rest, before.expect.data, RECD_REC_HEADER_SIZE), 0);
    size_t skip = RECD_REC_HEADER_SIZE + (size_t)gone * block;
    assert_true(before.expect.len > skip);
    assert_int_equal(recd_buf_append(&rest, before.expect.data + skip, before.expect.len - skip), 0);
    td_expect_single_file(&d, "samp-onfoot", before.session, &rest);
    recd_buf_free(&rest);
    assert_true(td_metric(&d, "recd_lost_bytes_total") == 0);
    /* Nothing recd held was lost, but the removed file was: the stop says so. */
    assert_int_not_equal(td_signal_wait(&d, SIGTERM), 0);
    assert_true(log_has(&d, "1 files removed behind recd's back"));
    assert_true(log_has(&d, "is there again"));
    td_rec_session_free(&before);
    td_rec_session_free(&after);
    td_cleanup(&d);
}

/* ---- a Recap part whose file vanished ----------------------------------------------------- */

#define RECAP_TICKS 1200
#define RECAP_CUT 400 /* ticks in the file that is removed */

/* What was sent, also encoded here without faults: the x position a reader reconstructs at each
 * tick (MOVEMENT deltas are rounded, so the reader's value is the reference, not the sent one). */
typedef struct recap_sent {
    recd_recap_encoder *enc;
    recd_buf file;
    double x[RECAP_TICKS];
    size_t events_after_cut;
} recap_sent;

static int note_tick(void *ctx, uint64_t tick, const recd_recap_state *st,
                     const recd_recap_event *ev, size_t n)
{
    (void)ev;
    (void)n;
    recap_sent *sent = ctx;
    for (uint64_t t = tick; t < RECAP_TICKS; t++)
        sent->x[t] = st->pos[0]; /* idle ticks after it keep it */
    return 0;
}

/* Decodes the fault-free encoding into sent->x. */
static void reference_positions(recap_sent *sent)
{
    recd_recap_finish_info info;
    assert_int_equal(recd_recap_encoder_finish(sent->enc, &info), 0);
    recd_recap_encoder_free(sent->enc);
    recd_recap_callbacks cb = {NULL, note_tick, NULL, NULL, sent};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(sent->file.data, sent->file.len, NULL, &cb, &res, NULL), 0);
    assert_int_equal(res.ticks, RECAP_TICKS);
    recd_buf_free(&sent->file);
}

static void send_recap_ticks(recd_client *c, recd_synth_recap_gen *g, uint64_t until,
                             recap_sent *sent)
{
    recd_synth_recap_tick t;
    while (recd_synth_recap_gen_next(g, &t) == 1) {
        recd_msg m;
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
        snprintf(m.session, sizeof m.session, "cap");
        assert_int_equal(recd_msg_set_recap_state(&m, t.tick, t.state), 0);
        td_send(c, &m);
        recd_msg_free(&m);
        for (size_t i = 0; i < t.n_events; i++) {
            recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
            snprintf(m.session, sizeof m.session, "cap");
            assert_int_equal(recd_msg_set_recap_event(&m, t.tick, &t.events[i]), 0);
            td_send(c, &m);
            recd_msg_free(&m);
        }
        assert_int_equal(recd_recap_encoder_tick(sent->enc, t.tick, t.state, t.events, t.n_events), 0);
        if (t.tick >= RECAP_CUT)
            sent->events_after_cut += t.n_events;
        if (t.tick + 1 >= until)
            return;
    }
}

static void send_recap_flush(recd_client *c)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_FLUSH, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "cap");
    td_send(c, &m);
    assert_int_equal(recd_client_flush(c), 0);
}

typedef struct recap_seen {
    const recap_sent *sent;
    uint64_t offset; /* the session tick of file tick 0 */
    size_t events, action_ticks, wrong;
} recap_seen;

static int check_tick(void *ctx, uint64_t tick, const recd_recap_state *st,
                      const recd_recap_event *ev, size_t n)
{
    (void)ev;
    recap_seen *seen = ctx;
    uint64_t at = tick + seen->offset;
    seen->action_ticks++;
    seen->events += n;
    if (at >= RECAP_TICKS || st->pos[0] != seen->sent->x[at])
        seen->wrong++;
    return 0;
}

/* The output root is removed while a Recap session has members queued for its part: the part
 * starts again in the new root as a standalone .recap (its header, a full state for the last
 * tick the removed file held, then the queued members); it verifies, its header says where it
 * starts and how many ticks it holds, and every tick sent after the removed file's last one is
 * there, state and events. Nothing recd held is lost. Before, the part was given up and its
 * queued bytes counted as lost. */
static void removed_root_recap_part_starts_again(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 1h\n");
    td_start(&d);
    recd_synth_params p = {recd_synth_format_find("recap"), RECD_SYNTH_SCENARIO_MIXED,
                           RECAP_TICKS * RECD_RECAP_TICK_MS, 11};
    recd_synth_recap_gen *g;
    assert_int_equal(recd_synth_recap_gen_new(&p, &g), 0);
    recap_sent *sent = calloc(1, sizeof *sent);
    assert_non_null(sent);
    recd_recap_header h;
    recd_synth_recap_gen_header(g, &h);
    const int64_t start_ms = h.start_ms;
    assert_int_equal(recd_recap_encoder_new(&sent->enc, &h, NULL, recd_buf_sink(&sent->file)), 0);
    recd_client *c = td_connect(d.tcp);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "cap");
    assert_int_equal(recd_msg_set_recap_open(&m, &h), 0);
    td_send(c, &m);
    recd_msg_free(&m);
    send_recap_ticks(c, g, RECAP_CUT, sent);
    send_recap_flush(c);
    char rel[1024];
    wait_for_part(&d, rel, sizeof rel);

    tu_rmtree(d.out);
    send_recap_ticks(c, g, 2 * RECAP_CUT, sent); /* queued, then their write finds no file */
    send_recap_flush(c);
    wait_unhealthy(&d);
    assert_int_equal(mkdir(d.out, 0755), 0);
    send_recap_ticks(c, g, RECAP_TICKS, sent);
    td_send_close(c, "cap", RECD_MSG_FMT_RECAP);
    td_close_client(c);
    reference_positions(sent);
    recd_synth_recap_gen_free(g);

    uint64_t deadline = td_deadline(30000);
    for (;;) {
        td_files f = td_session_files(&d, "recap", "cap");
        bool done = f.count >= 1 && f.parts == 0;
        td_files_free(&f);
        if (done)
            break;
        if (td_now_ms() > deadline) {
            td_dump_log(&d);
            fail_msg("session 'cap' has no finalized file in the new root");
        }
        td_sleep_ms(50);
    }
    size_t len;
    uint8_t *data = td_read_only_recording(&d, "recap", "cap", &len); /* it verifies */
    /* Its seek index, kept from the keyframes recd encoded (the restart point's first), is the
     * one built by scanning the file. */
    td_files f = td_session_files(&d, "recap", "cap");
    char idx_rel[1100], idx_path[3200];
    snprintf(idx_rel, sizeof idx_rel, "%s.idx", f.items[0].path);
    td_files_free(&f);
    /* The sidecar is stored after the part's rename (it is named after the final name). */
    snprintf(idx_path, sizeof idx_path, "%s/%s", d.out, idx_rel);
    for (deadline = td_deadline(30000); access(idx_path, F_OK) != 0; td_sleep_ms(50))
        if (td_now_ms() > deadline)
            fail_msg("no %s beside the finalized file", idx_rel);
    size_t idx_len;
    uint8_t *idx = td_read_output(&d, idx_rel, &idx_len);
    recd_buf built = {0};
    assert_int_equal(recd_format_index_build(recd_format_find("recap"), data, len, &built), 0);
    assert_true(built.len > RECD_SEEK_INDEX_HEADER_SIZE + RECD_SEEK_INDEX_ENTRY_SIZE);
    assert_int_equal(idx_len, built.len);
    assert_memory_equal(idx, built.data, built.len);
    recd_buf_free(&built);
    free(idx);
    recap_seen seen = {sent, RECAP_CUT - 1, 0, 0, 0};
    recd_recap_callbacks cb = {NULL, check_tick, NULL, NULL, &seen};
    recd_recap_decode_result res;
    recd_report rep = {0};
    if (recd_recap_decode(data, len, NULL, &cb, &res, &rep) != 0)
        fail_msg("the restarted file does not decode cleanly (%zu errors)", recd_report_errors(&rep));
    recd_report_free(&rep);
    free(data);
    /* It starts at the removed file's last tick: a full state, then every later tick. */
    assert_int_equal(res.ticks, RECAP_TICKS - (RECAP_CUT - 1));
    assert_int_equal(res.header.frame_count, RECAP_TICKS - (RECAP_CUT - 1));
    assert_int_equal(res.header.start_ms, start_ms + (RECAP_CUT - 1) * RECD_RECAP_TICK_MS);
    assert_int_equal(seen.wrong, 0);
    assert_int_equal(seen.events, sent->events_after_cut);
    assert_true(seen.action_ticks > RECAP_CUT);
    free(sent);
    assert_true(td_metric(&d, "recd_lost_bytes_total") == 0);
    assert_int_not_equal(td_signal_wait(&d, SIGTERM), 0);
    assert_true(log_has(&d, "1 files removed behind recd's back"));
    td_cleanup(&d);
}

/* ---- a real small filesystem ---------------------------------------------------------------- */

typedef struct tmpfs_mount {
    char path[600];
} tmpfs_mount;

static void release_mount(void *obj)
{
    tmpfs_mount *m = obj;
    umount2(m->path, MNT_DETACH);
    free(m);
}

/* Mounts a tmpfs of size bytes on d's output root, or skips the test (exit 77). */
static tmpfs_mount *mount_small_root(const td_daemon *d, const char *size)
{
    if (geteuid() != 0) {
        printf("SKIP: the tmpfs disk-full test needs root (mount)\n");
        exit(TEST_SKIP_EXIT);
    }
    mkdir(d->out, 0755);
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s", size);
    if (mount("tmpfs", d->out, "tmpfs", 0, opts) < 0) {
        printf("SKIP: cannot mount a tmpfs here: %s\n", strerror(errno));
        exit(TEST_SKIP_EXIT);
    }
    tmpfs_mount *m = calloc(1, sizeof *m);
    if (!m) {
        umount2(d->out, MNT_DETACH);
        fail_msg("out of memory");
    }
    snprintf(m->path, sizeof m->path, "%s", d->out);
    td_hold(m, release_mount);
    return m;
}

static void unmount_root(tmpfs_mount *m)
{
    td_unhold(m);
    release_mount(m);
}

/* Fills the filesystem at dir with dir/filler until it is full. */
static void fill_up(const char *dir)
{
    int fd = open(tu_at(dir, "filler"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    static char chunk[4096];
    while (write(fd, chunk, sizeof chunk) > 0) {
    }
    assert_int_equal(errno, ENOSPC);
    close(fd);
}

typedef struct fault_end {
    pthread_t thread;
    unsigned after_ms;
    char dir[600];
    bool remount_rw; /* else remove the filler */
} fault_end;

/* Ends the fault after a while, on its own thread: the test's sender blocks meanwhile. */
static void *end_fault(void *arg)
{
    fault_end *f = arg;
    td_sleep_ms(f->after_ms);
    if (f->remount_rw)
        mount(NULL, f->dir, NULL, MS_REMOUNT, "");
    else
        unlink(tu_at(f->dir, "filler"));
    return NULL;
}

static void start_fault_end(fault_end *f, const char *dir, bool remount_rw)
{
    f->after_ms = tu_scaled_ms(1500);
    f->remount_rw = remount_rw;
    snprintf(f->dir, sizeof f->dir, "%s", dir);
    assert_int_equal(pthread_create(&f->thread, NULL, end_fault, f), 0);
}

/* Two sessions, one over TCP and one over the Unix socket: their first states until the writes
 * fail, the rest while the fault lasts (their connections are paused), then each file is checked
 * whole. */
static void send_two_sessions(const td_daemon *d, const char *tag, uint64_t seed)
{
    td_rec_session s[2];
    recd_client *c[2];
    const char *urls[2] = {d->tcp, d->unix_url};
    double errors = td_metric(d, "recd_write_errors_total");
    for (int i = 0; i < 2; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%d", tag, i);
        td_rec_session_init(&s[i], name, i ? recd_synth_format_find("samp-vehicle") : recd_synth_format_find("samp-onfoot"),
                            i ? RECD_SYNTH_SCENARIO_DRIVE : RECD_SYNTH_SCENARIO_WALK, 120000, seed + (uint64_t)i);
        c[i] = td_connect(urls[i]);
        td_send_open(c[i], s[i].session, s[i].format, 0);
        send_states(c[i], &s[i], 50);
        send_flush(c[i], &s[i]);
    }
    wait_write_errors(d, errors);
    fault_end f;
    start_fault_end(&f, d->out, strcmp(tag, "ro") == 0);
    for (int i = 0; i < 2; i++) {
        send_states(c[i], &s[i], UINT32_MAX);
        td_send_close(c[i], s[i].session, s[i].format);
        td_close_client(c[i]);
    }
    pthread_join(f.thread, NULL);
    uint64_t deadline = td_deadline(30000);
    for (int i = 0; i < 2; i++) {
        const char *format = recd_msg_format_name(s[i].format);
        for (;;) {
            td_files files = td_session_files(d, format, s[i].session);
            bool done = files.count == 1 && files.parts == 0;
            td_files_free(&files);
            if (done || td_now_ms() > deadline)
                break;
            td_sleep_ms(50);
        }
        td_expect_single_file(d, format, s[i].session, &s[i].expect);
        td_rec_session_free(&s[i]);
    }
}

/* A full disk, then a read-only remount: input waits and nothing accepted is lost. */
static void full_and_read_only_tmpfs_lose_nothing(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, FAULT_CONFIG);
    tmpfs_mount *m = mount_small_root(&d, "2m");
    fill_up(d.out);
    td_start(&d);

    send_two_sessions(&d, "full", 11);
    assert_true(td_metric(&d, "recd_write_errors_total") > 0);
    assert_true(td_metric(&d, "recd_backpressure_events_total") > 0);

    double errors = td_metric(&d, "recd_write_errors_total");
    assert_int_equal(mount(NULL, d.out, NULL, MS_REMOUNT | MS_RDONLY, ""), 0);
    send_two_sessions(&d, "ro", 21);
    assert_true(td_metric(&d, "recd_write_errors_total") > errors);
    assert_true(td_metric(&d, "recd_lost_bytes_total") == 0);

    td_files all = td_list(&d);
    assert_int_equal(all.parts, 0); /* no empty parts left behind */
    td_files_free(&all);
    td_stop(&d);
    unmount_root(m);
    td_cleanup(&d);
}

/* UDP cannot be paused: while the disk is full a UDP session is buffered up to its limit, and
 * what comes past it is dropped and counted, never lost in silence. */
static void udp_past_its_limit_is_counted(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, FAULT_CONFIG "limits:\n  session_buffer: 64KiB\n");
    tmpfs_mount *m = mount_small_root(&d, "1m");
    fill_up(d.out);
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "udp", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 600000, 9);
    recd_client *c = td_connect(d.udp);
    td_send_open(c, s.session, s.format, 0);
    send_states(c, &s, 50);
    send_flush(c, &s);
    wait_write_errors(&d, 0);
    recd_msg msg;
    unsigned n = 0;
    while (td_rec_session_next(&s, &msg)) {
        td_send(c, &msg);
        if (++n % 64 == 0) {
            assert_int_equal(recd_client_flush(c), 0);
            td_sleep_ms(1);
        }
    }
    assert_int_equal(recd_client_flush(c), 0);
    uint64_t deadline = td_deadline(10000);
    while (td_metric(&d, "recd_samples_dropped_total{reason=\"buffer_full\"}") <= 0) {
        if (td_now_ms() > deadline) {
            td_dump_log(&d);
            fail_msg("no datagram was counted as dropped (%llu blocks sent)", (unsigned long long)s.blocks);
        }
        td_sleep_ms(20);
    }
    unlink(tu_at(d.out, "filler"));
    td_send_close(c, s.session, s.format);
    td_close_client(c);
    double dropped = td_metric(&d, "recd_samples_dropped_total{reason=\"buffer_full\"}");
    td_stop(&d);
    td_files f = td_session_files(&d, "samp-onfoot", s.session);
    assert_int_equal(f.count, 1);
    assert_int_equal(f.parts, 0);
    uint64_t kept = (f.items[0].size - RECD_REC_HEADER_SIZE) / RECD_REC_ONFOOT_BLOCK_SIZE;
    td_files_free(&f);
    /* What is neither in the file nor counted could only be lost by the kernel's socket buffer. */
    assert_true(kept + (uint64_t)dropped <= s.blocks);
    assert_true(kept > 0 && dropped > 0);
    td_rec_session_free(&s);
    unmount_root(m);
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        td_unit_test(lost_part_makes_exit_status_fail),
        td_unit_test(removed_root_is_opened_again),
        td_unit_test(removed_root_recap_part_starts_again),
        td_unit_test(full_and_read_only_tmpfs_lose_nothing),
        td_unit_test(udp_past_its_limit_is_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
