/* SPDX-License-Identifier: MIT */
/* The stream decoder's memory for an unfinished binary frame follows the bytes that arrived, not
 * the size its header announces: a peer that sends only headers cannot make it allocate
 * max_frame per connection (docs/reliability.md, "Partial frames"). Frames grown piece by piece
 * still decode to what was sent. */
#include "testutil.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "test_wire_samples.h"

#define DECODERS 16
#define CHAT_BYTES 60000
#define FIRST_PIECE 1000 /* body bytes fed after the header, in small pieces */

/* Bytes the C library's heap has handed out; -1 when that cannot be told (sanitizers, no glibc). */
static long long heap_in_use(void)
{
#if !defined(TU_SANITIZED) && defined(__GLIBC__) &&                                              \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
#else
    return -1;
#endif
}

static void feed_ok(recd_wire_decoder *d, const uint8_t *p, size_t n, size_t piece)
{
    char err[320] = "";
    for (size_t at = 0; at < n; at += piece) {
        size_t take = n - at < piece ? n - at : piece;
        if (recd_wire_decoder_feed(d, p + at, take, err, sizeof err) != 0)
            fail_msg("feed: %s", err);
    }
}

static void check_growth(long long before, long long most, const char *when)
{
    long long now = heap_in_use();
    if (before < 0 || now < 0)
        return;
    printf("%s: %d decoders hold %lld bytes (at most %lld allowed)\n", when, DECODERS,
           now - before, most);
    if (now - before > most)
        fail_msg("%s: %d decoders took %lld bytes of heap, more than %lld", when, DECODERS,
                 now - before, most);
}

static void an_unfinished_frame_holds_what_arrived(void **state)
{
    (void)state;
    char *text = malloc(CHAT_BYTES + 1);
    memset(text, 'y', CHAT_BYTES);
    text[CHAT_BYTES] = 0;
    ws_set s;
    memset(&s, 0, sizeof s);
    recd_recap_header h;
    ws_recap_header(&h);
    assert_int_equal(recd_msg_set_recap_open(ws_add(&s, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP, "big"),
                                             &h), 0);
    ws_chat(ws_add(&s, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP, "big"), 1, text);
    recd_buf open = {0}, event = {0};
    assert_int_equal(recd_wire_encode(&s.m[0], RECD_WIRE_BINARY, 0, &open), 0);
    assert_int_equal(recd_wire_encode(&s.m[1], RECD_WIRE_BINARY, 0, &event), 0);
    assert_true(event.len > CHAT_BYTES);

    ws_sink k[DECODERS];
    recd_wire_decoder *d[DECODERS];
    memset(k, 0, sizeof k);
    for (int i = 0; i < DECODERS; i++) {
        recd_wire_decoder_config cfg = ws_config(&k[i], RECD_WIRE_BINARY);
        cfg.max_frame = 16u << 20; /* a frame may be this large: none is reserved ahead */
        assert_int_equal(recd_wire_decoder_new(&d[i], &cfg), 0);
        feed_ok(d[i], open.data, open.len, open.len);
    }
    long long before = heap_in_use();
    /* Only the header: it announces about 60 KB, which must not be allocated yet. */
    for (int i = 0; i < DECODERS; i++)
        feed_ok(d[i], event.data, RECD_WIRE_HEADER_SIZE, RECD_WIRE_HEADER_SIZE);
    check_growth(before, DECODERS * 1024LL, "after the header");
    /* Some of the body, in small pieces: the buffer grows with it, at most doubling. */
    for (int i = 0; i < DECODERS; i++) {
        feed_ok(d[i], event.data + RECD_WIRE_HEADER_SIZE, FIRST_PIECE, 10);
        assert_int_equal(recd_wire_decoder_pending(d[i]), RECD_WIRE_HEADER_SIZE + FIRST_PIECE);
    }
    check_growth(before, DECODERS * (2LL * (RECD_WIRE_HEADER_SIZE + FIRST_PIECE) + 1024),
                 "after 1,000 bytes of the body");
    /* The rest in uneven pieces: the frame is delivered whole. */
    size_t done = RECD_WIRE_HEADER_SIZE + FIRST_PIECE;
    for (int i = 0; i < DECODERS; i++) {
        feed_ok(d[i], event.data + done, event.len - done, 777 + 1000 * (size_t)i);
        assert_int_equal(recd_wire_decoder_pending(d[i]), 0);
        assert_int_equal(k[i].count, 2);
        recd_buf want = {0};
        ws_json(&s, &want);
        assert_int_equal(k[i].json.len, want.len);
        assert_memory_equal(k[i].json.data, want.data, want.len);
        recd_buf_free(&want);
        char err[320] = "";
        assert_int_equal(recd_wire_decoder_finish(d[i], err, sizeof err), 0);
        recd_wire_decoder_free(d[i]);
        recd_buf_free(&k[i].json);
    }
    recd_buf_free(&open);
    recd_buf_free(&event);
    ws_free(&s);
    free(text);
}

/* A header announcing the largest frame allowed, and nothing more: a few bytes held, not 16 MiB;
 * the stream's end still reports the frame as cut. */
static void a_bare_header_announcing_max_frame_takes_little(void **state)
{
    (void)state;
    const uint32_t body = (16u << 20) - RECD_WIRE_HEADER_SIZE;
    const uint8_t hdr[RECD_WIRE_HEADER_SIZE] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, 1, 0,
                                                (uint8_t)body, (uint8_t)(body >> 8),
                                                (uint8_t)(body >> 16), (uint8_t)(body >> 24)};
    ws_sink k = {0};
    recd_wire_decoder *d[DECODERS];
    long long before = heap_in_use();
    for (int i = 0; i < DECODERS; i++) {
        recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_AUTO);
        cfg.max_frame = 16u << 20;
        assert_int_equal(recd_wire_decoder_new(&d[i], &cfg), 0);
        /* Whole, and split inside the header: both paths must hold back. */
        if (i % 2)
            feed_ok(d[i], hdr, sizeof hdr, sizeof hdr);
        else
            feed_ok(d[i], hdr, sizeof hdr, 3);
        assert_int_equal(recd_wire_decoder_pending(d[i]), RECD_WIRE_HEADER_SIZE);
    }
    check_growth(before, DECODERS * 4096LL, "bare headers announcing 16 MiB");
    for (int i = 0; i < DECODERS; i++) {
        char err[320] = "";
        assert_int_equal(recd_wire_decoder_finish(d[i], err, sizeof err), -EPROTO);
        assert_non_null(strstr(err, "stream ended inside a frame (8 of 16777216 bytes)"));
        recd_wire_decoder_free(d[i]);
    }
    assert_int_equal(k.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_unfinished_frame_holds_what_arrived),
        cmocka_unit_test(a_bare_header_announcing_max_frame_takes_little),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
