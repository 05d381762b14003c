/* SPDX-License-Identifier: MIT */
/* Binary wire frames: encode/decode round trips for every message type and format, chunking
 * independence, key_len 0 continuation, untimed frames, and every framing or content error with
 * its message and the messages delivered before it; every stream is decoded both as messages and
 * with .rec states taken as blocks (on_rec_state), which must agree. */
#include "testutil.h"

#include <time.h>

#include "base/bytes.h"
#include "test_wire_samples.h"
#include "wire/wire_internal.h"

/* Feeds buf in chunks of 1..max bytes (max 0: all at once); returns feed/finish's result. */
static int feed_chunked(recd_wire_decoder *d, const uint8_t *buf, size_t len, uint32_t max,
                        uint64_t seed, char *err, size_t errlen)
{
    tu_rng rng = {seed};
    size_t pos = 0;
    while (pos < len) {
        size_t n = max ? 1 + tu_rand_below(&rng, max) : len;
        if (n > len - pos)
            n = len - pos;
        int rc = recd_wire_decoder_feed(d, buf + pos, n, err, errlen);
        if (rc < 0)
            return rc;
        pos += n;
    }
    return recd_wire_decoder_finish(d, err, errlen);
}

static int decode_with(recd_wire_decoder_config *cfg, const recd_buf *b, uint32_t max, char *err,
                       size_t errlen)
{
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, cfg), 0);
    int rc = feed_chunked(d, b->data, b->len, max, 42 + max, err, errlen);
    recd_wire_decoder_free(d);
    return rc;
}

/* Decodes a whole stream with a fresh decoder into k, and again with .rec states taken as
 * blocks (on_rec_state): both paths must deliver the same messages and fail the same way. */
static int decode_stream(ws_sink *k, recd_wire_encoding enc, const recd_buf *b, uint32_t max,
                         char *err, size_t errlen)
{
    size_t before;
    ws_sink kb = ws_twin(k, &before);
    recd_wire_decoder_config cfg = ws_config(k, enc);
    int rc = decode_with(&cfg, b, max, err, errlen);
    cfg = ws_config(&kb, enc);
    cfg.on_rec_state = ws_on_rec_state;
    char errb[320] = "";
    assert_int_equal(decode_with(&cfg, b, max, errb, sizeof errb), rc);
    assert_string_equal(errb, errlen ? err : "");
    ws_expect_same(k, before, &kb);
    return rc;
}

static int reencode(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                    size_t errlen)
{
    (void)meta, (void)err, (void)errlen;
    return recd_wire_encode(m, RECD_WIRE_BINARY, 0, ctx);
}

static void roundtrip_all_types(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf wire = {0}, want = {0};
    assert_int_equal(ws_encode_all(&s, RECD_WIRE_BINARY, &wire), 0);
    ws_json(&s, &want);
    ws_sink k = {0};
    char err[320] = "";
    assert_int_equal(decode_stream(&k, RECD_WIRE_BINARY, &wire, 0, err, sizeof err), 0);
    assert_int_equal(k.count, s.n);
    assert_int_equal(k.untimed, 0);
    assert_int_equal(k.json.len, want.len);
    assert_memory_equal(k.json.data, want.data, want.len);

    /* Re-encoding what was decoded gives the same bytes. */
    recd_buf again = {0};
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_BINARY, .on_msg = reencode, .ctx = &again};
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    assert_int_equal(recd_wire_decoder_feed(d, wire.data, wire.len, err, sizeof err), 0);
    recd_wire_decoder_free(d);
    assert_int_equal(again.len, wire.len);
    assert_memory_equal(again.data, wire.data, wire.len);
    recd_buf_free(&again);
    recd_buf_free(&k.json);
    recd_buf_free(&wire);
    recd_buf_free(&want);
    ws_free(&s);
}

/* An open's resume flag: header flag bit 2 in binary, "resume": true in JSON; both round trip. */
static void resume_flag(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_msg o = s.m[0];
    o.open.resume = true;
    recd_buf wire = {0}, again = {0}, json = {0};
    assert_int_equal(recd_wire_encode(&o, RECD_WIRE_BINARY, 0, &wire), 0);
    assert_int_equal(wire.data[3] & 0x04, 0x04);
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_BINARY, .on_msg = reencode, .ctx = &again};
    recd_wire_decoder *d;
    char err[320] = "";
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    assert_int_equal(recd_wire_decoder_feed(d, wire.data, wire.len, err, sizeof err), 0);
    recd_wire_decoder_free(d);
    assert_int_equal(again.len, wire.len);
    assert_memory_equal(again.data, wire.data, wire.len);
    assert_int_equal(recd_msg_to_json(&o, &json), 0);
    assert_non_null(memmem(json.data, json.len, "\"resume\":true", 13));
    recd_msg back;
    assert_int_equal(recd_msg_from_json((const char *)json.data, json.len, RECD_MSG_FMT_NONE, &back,
                                        err, sizeof err),
                     0);
    assert_true(back.open.resume);
    recd_msg_free(&back);
    const char *bad = "{\"type\":\"open\",\"session\":\"a\",\"format\":\"recap\",\"resume\":1}";
    assert_true(recd_msg_from_json(bad, strlen(bad), RECD_MSG_FMT_NONE, &back, err, sizeof err) < 0);
    assert_non_null(strstr(err, "open.resume"));
    recd_buf_free(&wire);
    recd_buf_free(&again);
    recd_buf_free(&json);
    ws_free(&s);
}

static int note_save(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                     size_t errlen)
{
    (void)meta, (void)err, (void)errlen;
    if (m->type == RECD_MSG_STATE)
        *(int *)ctx = m->save_now ? 1 : 0;
    return 0;
}

/* A state's save flag: binary flag bit 4 and NDJSON "save": true, both ways; a state without it
 * is encoded as before (bit 4 clear, no key). */
static void save_flag(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_msg o = s.m[1];
    recd_buf wire = {0}, plain = {0}, json = {0};
    assert_int_equal(recd_wire_encode(&s.m[0], RECD_WIRE_BINARY, 0, &wire), 0);
    size_t at = wire.len;
    assert_int_equal(recd_wire_encode(&o, RECD_WIRE_BINARY, 0, &plain), 0);
    assert_int_equal(plain.data[3] & 0x10, 0);
    o.save_now = true;
    assert_int_equal(recd_wire_encode(&o, RECD_WIRE_BINARY, 0, &wire), 0);
    assert_int_equal(wire.data[at + 3] & 0x10, 0x10);
    int seen = -1;
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_BINARY, .on_msg = note_save, .ctx = &seen};
    recd_wire_decoder *d;
    char err[320] = "";
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    assert_int_equal(recd_wire_decoder_feed(d, wire.data, wire.len, err, sizeof err), 0);
    recd_wire_decoder_free(d);
    assert_int_equal(seen, 1);
    assert_int_equal(recd_msg_to_json(&o, &json), 0);
    assert_non_null(memmem(json.data, json.len, "\"save\":true", 11));
    recd_msg back;
    assert_int_equal(recd_msg_from_json((const char *)json.data, json.len, RECD_MSG_FMT_SAMP_ONFOOT,
                                        &back, err, sizeof err),
                     0);
    assert_true(back.save_now);
    recd_msg_free(&back);
    const char *bad = "{\"type\":\"close\",\"session\":\"a\",\"save\":true}";
    assert_true(recd_msg_from_json(bad, strlen(bad), RECD_MSG_FMT_NONE, &back, err, sizeof err) < 0);
    assert_non_null(strstr(err, "close.save"));
    recd_buf_free(&wire);
    recd_buf_free(&plain);
    recd_buf_free(&json);
    ws_free(&s);
}

static void frame_layout(void **state)
{
    (void)state;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_ONFOOT);
    strcpy(m.session, "ab");
    m.has_seq = true;
    m.seq = 0x0102030405060708ull;
    m.close.has_end_time = true;
    m.close.end_time_ms = -2;
    recd_buf b = {0};
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), 0);
    const uint8_t want[] = {0xD7, 1, 5, 1, 19, 0, 0, 0, 2, 'a', 'b', 8, 7, 6, 5, 4, 3, 2, 1,
                            0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);

    /* A samp state carries the block body after its time: 68 bytes on foot. */
    recd_msg st;
    recd_msg_init(&st, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    strcpy(st.session, "ab");
    ws_onfoot(&st.onfoot, 0x11223344u, 0);
    recd_buf_reset(&b);
    assert_int_equal(recd_wire_encode(&st, RECD_WIRE_BINARY, 0, &b), 0);
    assert_int_equal(b.len, 8 + 3 + 8 + 68);
    assert_int_equal(b.data[3], 2); /* has_time */
    assert_int_equal(ld_le64(b.data + 11), 0x11223344u);
    uint8_t block[72];
    recd_rec_onfoot_encode(&st.onfoot, block);
    assert_memory_equal(b.data + 19, block + 4, 68);
    recd_buf_free(&b);
}

static void random_chunks(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf wire = {0}, want = {0};
    assert_int_equal(ws_encode_all(&s, RECD_WIRE_BINARY, &wire), 0);
    ws_json(&s, &want);
    const uint32_t sizes[] = {1, 2, 7, 9, 64, 300, 5000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ws_sink k = {0};
        k.move = i % 2; /* a receiver that takes the messages gets the same ones */
        char err[320] = "";
        assert_int_equal(decode_stream(&k, RECD_WIRE_AUTO, &wire, sizes[i], err, sizeof err), 0);
        assert_int_equal(k.json.len, want.len);
        assert_memory_equal(k.json.data, want.data, want.len);
        recd_buf_free(&k.json);
    }
    recd_buf_free(&wire);
    recd_buf_free(&want);
    ws_free(&s);
}

/* A frame of almost max_frame bytes fed one byte at a time is linear: one copy per byte. */
static void big_frame_byte_by_byte(void **state)
{
    (void)state;
    size_t n = 60000;
    char *text = malloc(n + 1);
    memset(text, 'x', n);
    text[n] = 0;
    ws_set s;
    memset(&s, 0, sizeof s);
    recd_recap_header h;
    ws_recap_header(&h);
    recd_msg *m = ws_add(&s, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP, "big");
    assert_int_equal(recd_msg_set_recap_open(m, &h), 0);
    for (int i = 0; i < 20; i++) {
        m = ws_add(&s, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP, "big");
        ws_chat(m, (uint64_t)i, text);
    }
    recd_buf wire = {0};
    assert_int_equal(ws_encode_all(&s, RECD_WIRE_BINARY, &wire), 0);
    assert_true(wire.len > 20 * n);
    ws_sink k = {0};
    recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_AUTO);
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    char err[320];
    clock_t t0 = clock();
    for (size_t i = 0; i < wire.len; i++)
        assert_int_equal(recd_wire_decoder_feed(d, wire.data + i, 1, err, sizeof err), 0);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    assert_int_equal(recd_wire_decoder_finish(d, err, sizeof err), 0);
    assert_int_equal(k.count, 21);
    assert_int_equal(recd_wire_decoder_pending(d), 0);
    /* 1.2 MB byte by byte; a quadratic decoder would need minutes. */
    assert_true(secs < 10.0);
    recd_wire_decoder_free(d);
    recd_buf_free(&k.json);
    recd_buf_free(&wire);
    ws_free(&s);
    free(text);
}

static void key_continuation(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf wire = {0}, want = {0};
    const char *prev = "";
    size_t omitted = 0;
    for (size_t i = 0; i < s.n; i++) {
        bool same = strcmp(prev, s.m[i].session) == 0;
        omitted += same;
        assert_int_equal(wire_binary_encode(&s.m[i], 0, same, true, &wire), 0);
        prev = s.m[i].session;
    }
    assert_true(omitted >= 5);
    ws_json(&s, &want);
    ws_sink k = {0};
    char err[320] = "";
    assert_int_equal(decode_stream(&k, RECD_WIRE_BINARY, &wire, 5, err, sizeof err), 0);
    assert_int_equal(k.json.len, want.len);
    assert_memory_equal(k.json.data, want.data, want.len);

    /* key_len 0 on the first frame of a connection has nothing to continue. */
    recd_buf first = {0};
    assert_int_equal(wire_binary_encode(&s.m[0], 0, true, true, &first), 0);
    ws_sink k2 = {0};
    assert_int_equal(decode_stream(&k2, RECD_WIRE_BINARY, &first, 0, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "frame 1 at byte 0: key_len 0"));
    recd_buf_free(&first);
    recd_buf_free(&k.json);
    recd_buf_free(&wire);
    recd_buf_free(&want);
    ws_free(&s);
}

static void untimed_state(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf wire = {0};
    assert_int_equal(recd_wire_encode(&s.m[0], RECD_WIRE_BINARY, 0, &wire), 0);
    assert_int_equal(recd_wire_encode_untimed(&s.m[1], 0, &wire), 0);
    assert_int_equal(recd_wire_encode_untimed(&s.m[0], 0, &wire), -EINVAL); /* open */
    ws_sink k = {0};
    char err[320] = "";
    assert_int_equal(decode_stream(&k, RECD_WIRE_BINARY, &wire, 0, err, sizeof err), 0);
    assert_int_equal(k.count, 2);
    assert_int_equal(k.untimed, 1);
    assert_non_null(strstr((char *)k.json.data, "\"t\":0,"));
    recd_buf_free(&k.json);
    recd_buf_free(&wire);
    ws_free(&s);
}

/* The good part of ws_build (open + 3 states of foot-1) followed by bad bytes. */
static void expect_error(const uint8_t *bad, size_t badlen, int want_rc, const char *want_text)
{
    ws_set s;
    ws_build(&s);
    recd_buf wire = {0};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(recd_wire_encode(&s.m[i], RECD_WIRE_BINARY, 0, &wire), 0);
    size_t good = wire.len;
    assert_int_equal(recd_buf_append(&wire, bad, badlen), 0);
    const uint32_t chunkings[] = {0, 1, 3};
    for (size_t c = 0; c < 3; c++) {
        ws_sink k = {0};
        char err[320] = "";
        int rc = decode_stream(&k, RECD_WIRE_BINARY, &wire, chunkings[c], err, sizeof err);
        if (rc != want_rc || !strstr(err, want_text))
            fail_msg("chunking %u: rc %d (%s), wanted %d with \"%s\"", chunkings[c], rc, err,
                     want_rc, want_text);
        assert_int_equal(k.count, 4);
        char where[64];
        snprintf(where, sizeof where, "frame 5 at byte %lu: ", (unsigned long)good);
        if (!strstr(err, where))
            fail_msg("error \"%s\" does not start with \"%s\"", err, where);
        recd_buf_free(&k.json);
    }
    recd_buf_free(&wire);
    ws_free(&s);
}

static void bad_headers(void **state)
{
    (void)state;
    const uint8_t magic[] = {0xD8, 1, 5, 0, 2, 0, 0, 0, 1, 'a'};
    expect_error(magic, sizeof magic, -EPROTO, "bad magic byte 0xD8");
    const uint8_t version[] = {0xD7, 2, 5, 0, 2, 0, 0, 0, 1, 'a'};
    expect_error(version, sizeof version, -EPROTO, "unsupported protocol version 2");
    const uint8_t type[] = {0xD7, 1, 9, 0, 2, 0, 0, 0, 1, 'a'};
    expect_error(type, sizeof type, -EPROTO, "unknown frame type 9");
    const uint8_t errframe[] = {0xD7, 1, 0x7F, 0, 3, 0, 0, 0, 0, 0, 0};
    expect_error(errframe, sizeof errframe, -EPROTO, "error frames only travel from server");
    const uint8_t flags[] = {0xD7, 1, 5, 0x21, 2, 0, 0, 0, 1, 'a'};
    expect_error(flags, sizeof flags, -EPROTO, "unknown flag bits 0x20");
    const uint8_t saved_close[] = {0xD7, 1, 5, 0x10, 2, 0, 0, 0, 1, 'a'};
    expect_error(saved_close, sizeof saved_close, -EPROTO, "only state and event frames carry the save flag");
    const uint8_t ringed_close[] = {0xD7, 1, 5, 0x08, 2, 0, 0, 0, 1, 'a'};
    expect_error(ringed_close, sizeof ringed_close, -EPROTO, "only open frames carry the resume and ring");
    const uint8_t save_zero[] = {0xD7, 1, 6, 0, 8, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 1, 'x'};
    expect_error(save_zero, sizeof save_zero, -EBADMSG, "save: last_ms is 0");
    const uint8_t save_label[] = {0xD7, 1, 6, 0, 9, 0, 0, 0, 1, 'a', 1, 0, 0, 0, 2, '.', 'x'};
    expect_error(save_label, sizeof save_label, -EBADMSG, "save: the label");
    const uint8_t resumed_close[] = {0xD7, 1, 5, 0x04, 2, 0, 0, 0, 1, 'a'};
    expect_error(resumed_close, sizeof resumed_close, -EPROTO, "only open frames carry the resume");
    const uint8_t timed_close[] = {0xD7, 1, 5, 0x02, 10, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0};
    expect_error(timed_close, sizeof timed_close, -EPROTO, "only state and event frames carry");
    const uint8_t big[] = {0xD7, 1, 2, 0, 0x01, 0x00, 0x01, 0x00};
    expect_error(big, sizeof big, -EMSGSIZE, "frame body of 65537 bytes exceeds the limit of 65536");
    const uint8_t cut[] = {0xD7, 1, 5, 0, 9, 0, 0, 0, 1, 'a'};
    expect_error(cut, sizeof cut, -EPROTO, "stream ended inside a frame (10 of 17 bytes)");
    const uint8_t cut_header[] = {0xD7, 1, 5};
    expect_error(cut_header, sizeof cut_header, -EPROTO, "inside a frame header (3 of 8 bytes)");
}

static void bad_bodies(void **state)
{
    (void)state;
    /* A state for a session nobody opened. */
    uint8_t unknown[8 + 1 + 2 + 8 + 68] = {0xD7, 1, 2, 2, 1 + 2 + 8 + 68, 0, 0, 0, 2, 'p', '1'};
    expect_error(unknown, sizeof unknown, -EBADMSG, "state for unknown session 'p1'");
    /* A state of the wrong size for its session's format. */
    uint8_t shortstate[8 + 1 + 6 + 63] = {0xD7, 1, 2, 0, 1 + 6 + 63, 0, 0, 0, 6, 'f', 'o', 'o', 't', '-', '1'};
    expect_error(shortstate, sizeof shortstate, -EBADMSG, "samp-onfoot payload is 68 bytes, this one is 63");
    /* NaN position. */
    uint8_t nan[8 + 1 + 68] = {0xD7, 1, 2, 0, 1 + 68, 0, 0, 0, 0};
    st_le32(nan + 9 + 6, 0x7FC00000u);
    expect_error(nan, sizeof nan, -EBADMSG, "NaN or infinite");
    /* An event for a samp session. */
    const uint8_t ev[] = {0xD7, 1, 3, 0, 2, 0, 0, 0, 0, 0x23};
    expect_error(ev, sizeof ev, -EBADMSG, "only recap and carla sessions have events");
    /* A close with 3 payload bytes. */
    const uint8_t close3[] = {0xD7, 1, 5, 0, 4, 0, 0, 0, 0, 1, 2, 3};
    expect_error(close3, sizeof close3, -EBADMSG, "close: payload is 3 bytes (0 or 8 expected)");
    /* An open with an unknown format and one that ends early. */
    const uint8_t fmt[] = {0xD7, 1, 1, 0, 12, 0, 0, 0, 1, 'z', 9, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_error(fmt, sizeof fmt, -EBADMSG, "open: unknown format 9");
    const uint8_t opencut[] = {0xD7, 1, 1, 0, 4, 0, 0, 0, 1, 'z', 1, 0};
    expect_error(opencut, sizeof opencut, -EBADMSG, "open: body ends inside the payload");
    /* A recap open whose header is garbage. */
    const uint8_t rcap[] = {0xD7, 1, 1, 0, 16, 0, 0, 0, 1, 'z', 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'R', 'C', 'A', 'X'};
    expect_error(rcap, sizeof rcap, -EBADMSG, "open: invalid recap header");
    /* seq beyond 2^63-1. */
    const uint8_t seq[] = {0xD7, 1, 5, 1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
    expect_error(seq, sizeof seq, -EBADMSG, "seq above 2^63-1");
}

/* Session keys a frame may carry that are not valid keys (with their lengths: one holds a NUL). */
static const struct {
    const char *key;
    size_t len;
} hostile_key_list[] = {
    {"../x", 4},
    {"/abs", 4},
    {"a\0b", 3},
    {".hidden", 7},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 65},
    {"a b", 3},
};
#define HOSTILE_KEYS (sizeof hostile_key_list / sizeof hostile_key_list[0])

static void hostile_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < HOSTILE_KEYS; i++) {
        size_t len = hostile_key_list[i].len;
        uint8_t frame[8 + 1 + 65];
        memcpy(frame, (const uint8_t[]){0xD7, 1, 5, 0}, 4);
        st_le32(frame + 4, (uint32_t)(1 + len));
        frame[8] = (uint8_t)len;
        memcpy(frame + 9, hostile_key_list[i].key, len);
        expect_error(frame, 9 + len, -EBADMSG, "is invalid: 1..64 bytes");
    }
}

/* A state frame of an on-foot sample under key (len bytes, valid or not), cut from a valid
 * frame's bytes; the 8 bytes after the key are its time. Returns the frame's length. */
static size_t state_frame(uint8_t *out, size_t cap, const char *key, size_t len)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    strcpy(m.session, "k");
    ws_onfoot(&m.onfoot, 500, 1);
    recd_buf one = {0};
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &one), 0);
    assert_int_equal(one.data[2], WIRE_T_STATE);
    assert_true(one.data[3] & WIRE_F_TIME);
    size_t rest = one.len - 10; /* after header, key_len and "k" */
    assert_true(8 + 1 + len + rest <= cap);
    memcpy(out, one.data, 8);
    st_le32(out + 4, (uint32_t)(1 + len + rest));
    out[8] = (uint8_t)len;
    memcpy(out + 9, key, len);
    memcpy(out + 9 + len, one.data + 10, rest);
    recd_buf_free(&one);
    return 9 + len + rest;
}

/* A careless registry: it answers every key with known_format, and hands out a handle for it
 * when lax_vouch is set. The decoder must still refuse keys that are not valid. */
static bool lax_vouch;

static recd_msg_format lax_format_of(void *ctx, const char *key, size_t len, void **handle)
{
    ws_sink *k = ctx;
    (void)key, (void)len;
    if (lax_vouch)
        *handle = &k->known_format;
    return k->known_format;
}

/* Decodes one frame through the .rec block path and through the message path; both must fail
 * with want_rc and the same text, containing want_text, and deliver nothing. */
static void expect_rec_refusal(const uint8_t *frame, size_t len, recd_wire_format_fn format_of,
                               recd_msg_format answer, int want_rc, const char *want_text)
{
    char errs[2][320];
    for (int path = 0; path < 2; path++) {
        ws_sink k = {0};
        k.known_format = answer;
        k.known_session = "unused";
        recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_BINARY);
        cfg.format_of = format_of;
        if (path == 0)
            cfg.on_rec_state = ws_on_rec_state;
        recd_buf b = {(uint8_t *)frame, len, len};
        errs[path][0] = 0;
        int rc = decode_with(&cfg, &b, 0, errs[path], sizeof errs[path]);
        if (rc != want_rc || !strstr(errs[path], want_text))
            fail_msg("path %d: rc %d (%s), wanted %d with \"%s\"", path, rc, errs[path], want_rc,
                     want_text);
        assert_int_equal(k.count, 0);
        recd_buf_free(&k.json);
    }
    assert_string_equal(errs[0], errs[1]);
}

/* On the .rec path the receiver is asked before the key's bytes are checked (a session it holds
 * vouches for them). Whatever it answers, an invalid key is refused as invalid, before a bad time
 * and instead of "unknown session"; an over-long key even when the receiver hands out a handle. */
static void rec_state_keys(void **state)
{
    (void)state;
    char longest[255]; /* the most a key_len byte can announce */
    memset(longest, 'a', sizeof longest);
    uint8_t frame[512];
    for (size_t i = 0; i <= HOSTILE_KEYS; i++) {
        const char *key = i < HOSTILE_KEYS ? hostile_key_list[i].key : longest;
        size_t len = i < HOSTILE_KEYS ? hostile_key_list[i].len : sizeof longest;
        size_t n = state_frame(frame, sizeof frame, key, len);
        const char *invalid = "is invalid: 1..64 bytes";
        lax_vouch = false;
        expect_rec_refusal(frame, n, ws_format_of, RECD_MSG_FMT_SAMP_ONFOOT, -EBADMSG, invalid);
        expect_rec_refusal(frame, n, lax_format_of, RECD_MSG_FMT_SAMP_ONFOOT, -EBADMSG, invalid);
        expect_rec_refusal(frame, n, lax_format_of, RECD_MSG_FMT_NONE, -EBADMSG, invalid);
        if (len > RECD_SESSION_KEY_MAX) {
            lax_vouch = true; /* no copy of the key may depend on the receiver's word */
            expect_rec_refusal(frame, n, lax_format_of, RECD_MSG_FMT_SAMP_ONFOOT, -EBADMSG,
                               invalid);
            lax_vouch = false;
        }
        memset(frame + 9 + len, 0xFF, 8); /* time above 2^63-1: the key's error comes first */
        expect_rec_refusal(frame, n, lax_format_of, RECD_MSG_FMT_SAMP_ONFOOT, -EBADMSG, invalid);
    }
    /* A valid key nobody opened is an unknown session; with a bad time, the time's error. */
    size_t n = state_frame(frame, sizeof frame, "nobody", 6);
    expect_rec_refusal(frame, n, ws_format_of, RECD_MSG_FMT_SAMP_ONFOOT, -EBADMSG,
                       "unknown session 'nobody'");
    memset(frame + 9 + 6, 0xFF, 8);
    expect_rec_refusal(frame, n, ws_format_of, RECD_MSG_FMT_SAMP_ONFOOT, -EBADMSG,
                       "time above 2^63-1");
}

static void sticky_after_error(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf good = {0};
    assert_int_equal(recd_wire_encode(&s.m[0], RECD_WIRE_BINARY, 0, &good), 0);
    ws_sink k = {0};
    recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_BINARY);
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    char err[320], err2[320];
    const uint8_t bad[] = {0x00};
    assert_int_equal(recd_wire_decoder_feed(d, bad, 1, err, sizeof err), -EPROTO);
    assert_int_equal(recd_wire_decoder_feed(d, good.data, good.len, err2, sizeof err2), -EPROTO);
    assert_string_equal(err, err2);
    assert_int_equal(recd_wire_decoder_finish(d, err2, sizeof err2), -EPROTO);
    assert_int_equal(k.count, 0);
    recd_wire_decoder_free(d);
    recd_buf_free(&good);
    ws_free(&s);
}

static void receiver_rejects(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf wire = {0};
    assert_int_equal(ws_encode_all(&s, RECD_WIRE_BINARY, &wire), 0);
    ws_sink k = {0};
    k.fail_at = 3;
    k.fail_why = "session foot-1 is over its quota";
    char err[320];
    assert_int_equal(decode_stream(&k, RECD_WIRE_BINARY, &wire, 0, err, sizeof err), -EACCES);
    assert_int_equal(k.count, 2);
    assert_non_null(strstr(err, "frame 3 at byte "));
    assert_non_null(strstr(err, "over its quota"));
    recd_buf_free(&k.json);
    recd_buf_free(&wire);
    ws_free(&s);
}

static void registry_lookup(void **state)
{
    (void)state;
    /* With format_of, a state needs no open on this connection. */
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    strcpy(m.session, "elsewhere");
    ws_vehicle(&m.vehicle, 77, 0);
    recd_buf wire = {0};
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &wire), 0);
    ws_sink k = {0};
    k.known_session = "elsewhere";
    k.known_format = RECD_MSG_FMT_SAMP_VEHICLE;
    recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_AUTO);
    cfg.format_of = ws_format_of;
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    char err[320];
    assert_int_equal(recd_wire_decoder_feed(d, wire.data, wire.len, err, sizeof err), 0);
    assert_int_equal(recd_wire_decoder_finish(d, err, sizeof err), 0);
    assert_int_equal(k.count, 1);
    recd_buf want = {0};
    assert_int_equal(recd_msg_to_json(&m, &want), 0);
    assert_int_equal(want.len, k.json.len);
    assert_memory_equal(want.data, k.json.data, want.len);
    recd_wire_decoder_free(d);
    /* The .rec path hands the state over with the receiver's own handle for the session. */
    recd_buf_free(&k.json);
    k.count = 0;
    cfg.on_rec_state = ws_on_rec_state;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    assert_int_equal(recd_wire_decoder_feed(d, wire.data, wire.len, err, sizeof err), 0);
    assert_int_equal(k.count, 1);
    assert_int_equal(k.handles, 1);
    assert_int_equal(want.len, k.json.len);
    assert_memory_equal(want.data, k.json.data, want.len);
    recd_wire_decoder_free(d);
    recd_buf_free(&want);
    recd_buf_free(&k.json);
    recd_buf_free(&wire);
}

static void encoder_refusals(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf b = {0};
    assert_int_equal(recd_wire_encode(&s.m[1], RECD_WIRE_AUTO, 0, &b), -EINVAL);
    recd_msg m = s.m[1];
    m.session[0] = 0;
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), -EINVAL);
    m = s.m[1];
    m.onfoot.position.x = f32_from_bits(0x7F800000u);
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), -EINVAL);
    assert_int_equal(recd_wire_encode(&s.m[1], RECD_WIRE_BINARY, 50, &b), -EMSGSIZE);
    assert_int_equal(b.len, 0);
    /* A 256-byte token fits JSON but not the one-byte binary length. */
    recd_msg o = s.m[0];
    char tok[257];
    memset(tok, 'k', 256);
    tok[256] = 0;
    o.open.auth = tok;
    assert_int_equal(recd_wire_encode(&o, RECD_WIRE_BINARY, 0, &b), -EINVAL);
    assert_int_equal(b.len, 0);
    recd_buf_free(&b);
    ws_free(&s);
}

static void error_replies(void **state)
{
    (void)state;
    const recd_wire_encoding encs[] = {RECD_WIRE_BINARY, RECD_WIRE_NDJSON};
    for (int i = 0; i < 2; i++) {
        recd_buf b = {0};
        assert_int_equal(recd_wire_encode_error(encs[i], "frame 3: bad \"key\" \x01\xff", &b), 0);
        char msg[200];
        assert_int_equal(recd_wire_decode_error(b.data, b.len, msg, sizeof msg), 1);
        assert_string_equal(msg, "frame 3: bad \"key\" ??");
        assert_int_equal(recd_wire_decode_error(b.data, b.len - 1, msg, sizeof msg), -EAGAIN);
        recd_buf_free(&b);
    }
    char msg[64];
    assert_int_equal(recd_wire_decode_error(NULL, 0, msg, sizeof msg), 0);
    assert_int_equal(recd_wire_decode_error((const uint8_t *)"hello\n", 6, msg, sizeof msg), -EPROTO);
    const uint8_t state_frame[] = {0xD7, 1, 2, 0, 0, 0, 0, 0};
    assert_int_equal(recd_wire_decode_error(state_frame, sizeof state_frame, msg, sizeof msg), -EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip_all_types), cmocka_unit_test(resume_flag),
        cmocka_unit_test(save_flag),
        cmocka_unit_test(frame_layout),
        cmocka_unit_test(random_chunks),       cmocka_unit_test(big_frame_byte_by_byte),
        cmocka_unit_test(key_continuation),    cmocka_unit_test(untimed_state),
        cmocka_unit_test(bad_headers),         cmocka_unit_test(bad_bodies),
        cmocka_unit_test(hostile_keys),        cmocka_unit_test(rec_state_keys),
        cmocka_unit_test(sticky_after_error),
        cmocka_unit_test(receiver_rejects),    cmocka_unit_test(registry_lookup),
        cmocka_unit_test(encoder_refusals),    cmocka_unit_test(error_replies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
