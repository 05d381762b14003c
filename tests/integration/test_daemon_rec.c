/* SPDX-License-Identifier: MIT */
/* recd end to end for SA-MP .rec sessions: synthetic sessions sent over TCP (binary and NDJSON),
 * UDP and a Unix socket come out as byte-identical files; samples without a time are stamped on
 * arrival; rotation by size, by duration and by idle time gives complete, valid parts; large
 * batches end on 64 KiB boundaries of their file; datagrams the kernel joins (UDP GRO) are split
 * back into the datagrams sent. */
#include "test_daemon_harness.h"

#include <netinet/udp.h>

static recd_rec_info probe(const uint8_t *data, size_t len)
{
    recd_rec_info info;
    assert_int_equal(recd_rec_probe(data, len, &info, NULL), 0);
    assert_int_equal(info.trailing_bytes, 0);
    return info;
}

static void test_round_trip_every_transport(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 100ms\n");
    td_start(&d);
    char ndjson[160];
    snprintf(ndjson, sizeof ndjson, "%s?encoding=ndjson", d.tcp);
    struct {
        const char *url, *session;
        const recd_format *format;
        recd_synth_scenario scenario;
    } cases[] = {
        {d.tcp, "tcp-foot", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_MIXED},
        {ndjson, "ndjson-car", recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_MIXED},
        {d.udp, "udp-foot", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK},
        {d.unix_url, "unix-car", recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE},
    };
    td_rec_session s[4];
    for (int i = 0; i < 4; i++) {
        td_rec_session_init(&s[i], cases[i].session, cases[i].format, cases[i].scenario, 90000,
                            (uint64_t)i + 11);
        td_send_rec_session(cases[i].url, &s[i], 1763213398000);
    }
    assert_true(td_wait_metric(&d, "recd_samples_total{transport=\"udp\",format=\"samp-onfoot\"}",
                               (double)s[2].blocks, 10000) >= (double)s[2].blocks);
    td_stop(&d);
    for (int i = 0; i < 4; i++) {
        td_expect_single_file(&d, recd_msg_format_name(s[i].format), s[i].session, &s[i].expect);
        td_rec_session_free(&s[i]);
    }
    td_cleanup(&d);
}

static void test_untimed_samples_are_stamped(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, "stamped", RECD_MSG_FMT_SAMP_ONFOOT, 0);
    td_rec_session s;
    td_rec_session_init(&s, "stamped", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 3000, 5);
    recd_msg m;
    uint64_t t0 = td_now_ms();
    for (int i = 0; i < 20 && td_rec_session_next(&s, &m); i++) {
        assert_int_equal(recd_client_send_untimed(c, &m), 0);
        assert_int_equal(recd_client_flush(c), 0);
        if (i % 5 == 4 && i < 19)
            td_sleep_ms(400); /* four bursts, 400 ms apart */
    }
    uint64_t elapsed = td_now_ms() - t0;
    td_send_close(c, "stamped", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(c);
    td_stop(&d);
    td_files f = td_session_files(&d, "samp-onfoot", "stamped");
    assert_int_equal(f.count, 1);
    size_t len;
    uint8_t *data = td_read_output(&d, f.items[0].path, &len);
    recd_rec_info info = probe(data, len);
    assert_int_equal(info.block_count, 20);
    assert_int_equal(info.decreasing_time_steps, 0);
    /* Stamped on arrival: the bursts are 1.2 s apart in all (a busy host may delay a read, so
     * allow half of that), and the stamps never span more than the sender took. */
    assert_true(info.last_time_ms - info.first_time_ms >= 600);
    assert_true(info.last_time_ms - info.first_time_ms <= elapsed + 50);
    free(data);
    td_files_free(&f);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* Checks that parts are valid and, put back on one clock, hold exactly the original blocks. */
static void check_parts(const td_daemon *d, const char *session, const td_rec_session *s,
                        size_t min_parts, uint64_t max_span_ms)
{
    td_files f = td_session_files(d, "samp-onfoot", session);
    assert_int_equal(f.parts, 0);
    if (f.count < min_parts)
        fail_msg("%s: %zu parts, expected at least %zu", session, f.count, min_parts);
    recd_buf joined = {0};
    recd_buf_append(&joined, s->expect.data, RECD_REC_HEADER_SIZE);
    uint32_t offset = 0;
    for (size_t i = 0; i < f.count; i++) {
        size_t len;
        uint8_t *data = td_read_output(d, f.items[i].path, &len);
        recd_rec_info info = probe(data, len);
        assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
        assert_true(info.block_count > 0);
        if (i > 0)
            assert_int_equal(info.first_time_ms, 0); /* output.rebase_parts */
        if (max_span_ms)
            assert_true(info.last_time_ms - info.first_time_ms < max_span_ms);
        for (uint64_t b = 0; b < info.block_count; b++) {
            uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
            memcpy(block, recd_rec_block_at(data, &info, b), sizeof block);
            recd_rec_onfoot foot;
            recd_rec_onfoot_decode(block, &foot);
            if (i > 0 && b == 0) { /* where this part starts on the session clock */
                size_t at = joined.len;
                recd_rec_onfoot orig;
                recd_rec_onfoot_decode(s->expect.data + at, &orig);
                offset = orig.time_ms;
            }
            foot.time_ms += i > 0 ? offset : 0;
            recd_rec_onfoot_encode(&foot, block);
            recd_buf_append(&joined, block, sizeof block);
        }
        free(data);
    }
    assert_int_equal(joined.len, s->expect.len);
    assert_memory_equal(joined.data, s->expect.data, joined.len);
    recd_buf_free(&joined);
    td_files_free(&f);
}

static void test_rotation_by_size_and_duration(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "rotation:\n  max_size: 64KiB\n  max_duration: 1m\n");
    td_start(&d);
    td_rec_session big, longer;
    /* 10 minutes of walking: several 64 KiB parts; 3.5 minutes of idling: 1-minute parts. */
    td_rec_session_init(&big, "big", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_MIXED, 600000, 3);
    td_rec_session_init(&longer, "longer", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_IDLE, 210000, 4);
    td_send_rec_session(d.tcp, &big, 1763213398000);
    td_send_rec_session(d.tcp, &longer, 1763213398000);
    td_stop(&d);
    size_t min_big = (size_t)(big.expect.len / 65536);
    check_parts(&d, "big", &big, min_big > 1 ? min_big : 2, 60000);
    check_parts(&d, "longer", &longer, 4, 60000);
    td_files f = td_session_files(&d, "samp-onfoot", "big");
    for (size_t i = 0; i < f.count; i++)
        assert_true(f.items[i].size <= 65536);
    td_files_free(&f);
    td_rec_session_free(&big);
    td_rec_session_free(&longer);
    td_cleanup(&d);
}

static void test_rotation_by_idle_time(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "rotation:\n  idle_timeout: 1s\nflush:\n  interval: 100ms\n");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "pauses", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 20000, 9);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, "pauses", RECD_MSG_FMT_SAMP_ONFOOT, 1763213398000);
    recd_msg m;
    for (int i = 0; i < 40 && td_rec_session_next(&s, &m); i++)
        td_send(c, &m);
    assert_int_equal(recd_client_flush(c), 0);
    /* Idle for longer than the timeout: the first file is finalized while the client waits. */
    uint64_t deadline = td_deadline(10000);
    td_files f = {0};
    for (;;) {
        f = td_session_files(&d, "samp-onfoot", "pauses");
        if ((f.count == 1 && f.parts == 0) || td_now_ms() > deadline)
            break;
        td_files_free(&f);
        td_sleep_ms(50);
    }
    assert_int_equal(f.count, 1);
    assert_int_equal(f.parts, 0);
    td_files_free(&f);
    /* The session resumes on the same key (no new open needed). */
    while (td_rec_session_next(&s, &m))
        td_send(c, &m);
    td_send_close(c, "pauses", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(c);
    td_stop(&d);
    check_parts(&d, "pauses", &s, 2, 0);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

static void test_reconnecting_client_resumes(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "resumed", recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_MIXED, 60000, 15);
    const char *urls[] = {d.tcp, d.unix_url, d.udp};
    recd_msg m;
    /* Three connections, none closes before the last; each sends an open with resume, which
     * opens the session the first time and then takes it over (test_daemon_session_rules.c). */
    for (int k = 0; k < 3; k++) {
        recd_client *c = td_connect(urls[k]);
        recd_msg o;
        recd_msg_init(&o, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_VEHICLE);
        snprintf(o.session, sizeof o.session, "resumed");
        o.open.has_start_time = true;
        o.open.start_time_ms = 1763213398000;
        o.open.resume = true;
        td_send(c, &o);
        for (int i = 0; i < 150 && td_rec_session_next(&s, &m); i++)
            td_send(c, &m);
        if (k == 2) {
            while (td_rec_session_next(&s, &m))
                td_send(c, &m);
            td_send_close(c, "resumed", RECD_MSG_FMT_SAMP_VEHICLE);
        }
        td_close_client(c);
    }
    /* A repeated open with another format is refused. */
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, "other", RECD_MSG_FMT_SAMP_ONFOOT, 0);
    td_send_open(c, "other", RECD_MSG_FMT_SAMP_VEHICLE, 0);
    char err[512];
    assert_true(td_close_client_rc(c, err, sizeof err) < 0);
    assert_non_null(strstr(err, "open as samp-onfoot"));
    td_stop(&d);
    td_expect_single_file(&d, "samp-vehicle", "resumed", &s.expect);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* The size of the only file of a session (finalized or not). */
static uint64_t only_file_size(const td_daemon *d, const char *session)
{
    td_files f = td_session_files(d, "samp-onfoot", session);
    assert_int_equal(f.count, 1);
    uint64_t size = f.items[0].size;
    td_files_free(&f);
    return size;
}

/* A batch sealed because it is large ends on a 64 KiB boundary of its file (ext4 takes such
 * writes into large page-cache folios); the bytes past the boundary wait in the next batch, the
 * flush timer still writes them when nothing more comes, and the file is exactly what was sent. */
static void test_large_batches_end_on_aligned_offsets(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 4s\n  buffer_size: 64KiB\n");
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    td_rec_session s;
    td_rec_session_init(&s, "aligned", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                        3600000, 21);
    td_send_open(c, s.session, s.format, 1763213398000);
    const uint64_t two_batches = 2 * 65536;
    uint64_t size = RECD_REC_HEADER_SIZE;
    recd_msg m;
    while (size < two_batches + 5000 && td_rec_session_next(&s, &m)) {
        td_send(c, &m);
        size += RECD_REC_ONFOOT_BLOCK_SIZE;
    }
    assert_int_equal(recd_client_flush(c), 0);
    assert_true(td_wait_metric(&d, "recd_bytes_written_total", (double)two_batches, 10000) >=
                (double)two_batches);
    td_sleep_ms(200);
    /* Two full batches: 131,072 bytes on disk, not the 131,144 their whole blocks made. */
    assert_int_equal(only_file_size(&d, s.session), two_batches);
    assert_true(td_wait_metric(&d, "recd_bytes_written_total", (double)size, 15000) >= (double)size);
    assert_int_equal(only_file_size(&d, s.session), size);
    td_send_close(c, s.session, s.format);
    td_close_client(c);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", s.session, &s.expect);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

static void test_udp_sequence_numbers(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    recd_client *c = td_connect(d.udp);
    td_rec_session s;
    td_rec_session_init(&s, "numbered", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 5000, 14);
    recd_msg open;
    recd_msg_init(&open, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(open.session, sizeof open.session, "numbered");
    open.has_seq = true;
    open.seq = 0;
    td_send(c, &open);
    assert_int_equal(recd_client_flush(c), 0);
    /* seq 1, 2, 3, 2 (duplicate), 3 (duplicate), 6 (4 and 5 lost), 7 */
    static const uint64_t seqs[] = {1, 2, 3, 2, 3, 6, 7};
    recd_msg blocks[8];
    for (int i = 1; i <= 7; i++)
        assert_true(td_rec_session_next(&s, &blocks[i]));
    recd_buf expect = {0};
    recd_buf_append(&expect, s.expect.data, RECD_REC_HEADER_SIZE);
    for (size_t i = 0; i < sizeof seqs / sizeof *seqs; i++) {
        recd_msg m = blocks[seqs[i]];
        m.has_seq = true;
        m.seq = seqs[i];
        td_send(c, &m);
        assert_int_equal(recd_client_flush(c), 0); /* one datagram each */
    }
    static const int kept[] = {1, 2, 3, 6, 7};
    for (size_t i = 0; i < 5; i++)
        recd_buf_append(&expect, s.expect.data + RECD_REC_HEADER_SIZE + (size_t)(kept[i] - 1) * 72, 72);
    recd_msg close;
    recd_msg_init(&close, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(close.session, sizeof close.session, "numbered");
    close.has_seq = true;
    close.seq = 8;
    td_send(c, &close);
    td_close_client(c);
    assert_true(td_wait_metric(&d, "recd_udp_duplicates_total", 2, 10000) == 2);
    assert_true(td_wait_metric(&d, "recd_udp_gaps_total", 2, 10000) == 2);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "numbered", &expect);
    recd_buf_free(&expect);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* One UDP GSO send: the datagrams in data, each seg bytes but the last. */
static void send_segments(int fd, const struct sockaddr_in *to, const uint8_t *data, size_t len,
                          uint16_t seg)
{
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(uint16_t))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
    struct msghdr mh = {.msg_name = (void *)to,
                        .msg_namelen = sizeof *to,
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.bytes,
                        .msg_controllen = sizeof control.bytes};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof seg);
    memcpy(CMSG_DATA(c), &seg, sizeof seg);
    if (sendmsg(fd, &mh, 0) != (ssize_t)len)
        fail_msg("GSO send of %zu bytes in %u-byte datagrams: %s", len, seg, strerror(errno));
}

/* A sender that hands the kernel runs of equal-length datagrams (GSO) reaches a socket that asks
 * for UDP GRO as one buffer per run: recd splits each at the segment size, the last datagram of a
 * run shorter, and records every sample once. */
static void test_udp_joined_datagrams(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    recd_client *c = td_connect(d.udp);
    td_send_open(c, "joined", RECD_MSG_FMT_SAMP_ONFOOT, 1763213398000);
    assert_int_equal(recd_client_flush(c), 0);
    td_close_client(c);
    assert_true(td_wait_metric(&d, "recd_sessions_open", 1, 10000) >= 1);

    enum { RUNS = 6, PER_RUN = 40 };
    td_rec_session s;
    td_rec_session_init(&s, "joined", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                        RUNS * PER_RUN * 1000u, 21); /* more blocks than sent */
    struct sockaddr_in to;
    td_addr_of(d.udp, &to);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    recd_buf frame = {0}, run = {0};
    size_t seg = 0;
    recd_msg m;
    for (int r = 0; r < RUNS; r++) {
        run.len = 0;
        for (int i = 0; i < PER_RUN; i++) {
            assert_true(td_rec_session_next(&s, &m));
            frame.len = 0;
            assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &frame), 0);
            if (!seg)
                seg = frame.len;
            assert_int_equal(frame.len, seg); /* GSO needs equal lengths */
            recd_buf_append(&run, frame.data, frame.len);
        }
        if (r == RUNS - 1) { /* the close ends the last run, shorter than a state */
            recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_ONFOOT);
            snprintf(m.session, sizeof m.session, "joined");
            frame.len = 0;
            assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &frame), 0);
            assert_true(frame.len < seg);
            recd_buf_append(&run, frame.data, frame.len);
        }
        send_segments(fd, &to, run.data, run.len, (uint16_t)seg);
    }
    close(fd);
    recd_buf_free(&frame);
    recd_buf_free(&run);
    assert_true(td_wait_metric(&d, "recd_samples_total{transport=\"udp\",format=\"samp-onfoot\"}",
                               RUNS * PER_RUN, 10000) >= RUNS * PER_RUN);
    double joined = td_metric(&d, "recd_udp_joined_datagrams_total");
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "joined", &s.expect);
    /* Every datagram of the runs came joined where the kernel can join them (Linux >= 5.0). */
    if (joined != (double)(RUNS * PER_RUN + 1))
        fail_msg("recd_udp_joined_datagrams_total is %g, expected %d", joined, RUNS * PER_RUN + 1);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_round_trip_every_transport),
        td_unit_test(test_untimed_samples_are_stamped),
        td_unit_test(test_rotation_by_size_and_duration),
        td_unit_test(test_rotation_by_idle_time),
        td_unit_test(test_reconnecting_client_resumes),
        td_unit_test(test_udp_sequence_numbers),
        td_unit_test(test_udp_joined_datagrams),
        td_unit_test(test_large_batches_end_on_aligned_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
