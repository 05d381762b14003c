/* SPDX-License-Identifier: MIT */
/* Frame headers alone cannot make recd allocate the frames they announce (docs/reliability.md,
 * "Hostile peers" -> "Partial frames"): connections that each send one header announcing a frame
 * of limits.max_frame take a few bytes each, not max_frame each, beyond what
 * limits.process_buffer counts; a good sender is still recorded beside them. */
#include "test_daemon_harness.h"

#include "recd/wire.h"

#define HEADER_CONNS 200
#define MAX_FRAME (1u << 20)

#ifndef TU_SANITIZED
/* A TCP connection to url that sends one binary frame header announcing body bytes. */
static int send_header(const char *url, uint32_t body)
{
    int fd = td_raw_connect(url);
    uint8_t hdr[RECD_WIRE_HEADER_SIZE];
    size_t n = td_frame_header(hdr, 1, body);
    assert_true(send(fd, hdr, n, MSG_NOSIGNAL) == (ssize_t)n);
    return fd;
}
#endif

static void frame_headers_alone_take_no_frame_sized_memory(void **state)
{
    (void)state;
#ifdef TU_SANITIZED
    printf("SKIP: the sanitizer's allocator keeps no glibc heap statistics (the normal build runs "
           "this)\n");
    skip();
#else
    td_daemon d;
    td_setup(&d, "limits:\n  max_frame: 1MiB\n  session_buffer: 1MiB\n  process_buffer: 1MiB\n");
    td_start(&d);
    double before = td_metric(&d, "recd_heap_bytes");
    if (before <= 0) {
        td_stop(&d);
        td_cleanup(&d);
        printf("SKIP: this C library is not glibc (recd_heap_bytes is 0)\n");
        skip();
    }
    static int fds[HEADER_CONNS];
    for (int i = 0; i < HEADER_CONNS; i++)
        fds[i] = send_header(d.tcp, MAX_FRAME - RECD_WIRE_HEADER_SIZE);
    /* Every header has been read once the count shows them all. */
    double want = (double)HEADER_CONNS * RECD_WIRE_HEADER_SIZE;
    double partial = td_wait_metric(&d, "recd_partial_frame_bytes", want, 10000);
    double heap = td_metric(&d, "recd_heap_bytes");
    printf("%d headers announcing %u bytes each: %.0f bytes of unfinished frames counted, heap "
           "grew by %.0f KiB\n", HEADER_CONNS, MAX_FRAME, partial, (heap - before) / 1024);
    td_rec_session good;
    td_rec_session_init(&good, "good", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                        3000, 3);
    td_send_rec_session(d.tcp, &good, 0);
    for (int i = 0; i < HEADER_CONNS; i++)
        close(fds[i]);
    /* 200 x 1 MiB would be 200 MiB; what is counted (1.6 KB), the connections themselves and the
     * limit's 1 MiB are all recd may hold. */
    if (partial < want || heap - before > 8.0 * 1024 * 1024) {
        td_dump_log(&d);
        fail_msg("frame headers made recd allocate %.0f KiB while %.0f bytes were counted",
                 (heap - before) / 1024, partial);
    }
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "good", &good.expect);
    td_rec_session_free(&good);
    td_cleanup(&d);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        td_unit_test(frame_headers_alone_take_no_frame_sized_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
