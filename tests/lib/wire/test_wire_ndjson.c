/* SPDX-License-Identifier: MIT */
/* NDJSON on the wire: round trips through the message module's JSON mapping, chunking
 * independence, AUTO detection, blank and CRLF lines, session continuation, the last line without
 * a newline, and the errors (invalid UTF-8, line too long, unknown session, wrong format). */
#include "testutil.h"

#include "test_wire_samples.h"

static int feed_chunked(recd_wire_decoder *d, const uint8_t *buf, size_t len, uint32_t max,
                        char *err, size_t errlen)
{
    tu_rng rng = {7 + max};
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

static int decode_text(ws_sink *k, recd_wire_encoding enc, const void *text, size_t len,
                       uint32_t max, char *err, size_t errlen, recd_wire_encoding *seen)
{
    recd_wire_decoder_config cfg = ws_config(k, enc);
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    int rc = feed_chunked(d, text, len, max, err, errlen);
    if (seen)
        *seen = recd_wire_decoder_encoding(d);
    recd_wire_decoder_free(d);
    return rc;
}

static void roundtrip_all_types(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf wire = {0}, want = {0};
    assert_int_equal(ws_encode_all(&s, RECD_WIRE_NDJSON, &wire), 0);
    ws_json(&s, &want);
    /* On the wire a message is exactly its JSON line. */
    assert_int_equal(wire.len, want.len);
    assert_memory_equal(wire.data, want.data, want.len);
    const uint32_t sizes[] = {0, 1, 2, 13, 100, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ws_sink k = {0};
        char err[320] = "";
        recd_wire_encoding seen;
        assert_int_equal(decode_text(&k, RECD_WIRE_AUTO, wire.data, wire.len, sizes[i], err,
                                     sizeof err, &seen),
                         0);
        assert_int_equal(seen, RECD_WIRE_NDJSON);
        assert_int_equal(k.count, s.n);
        assert_int_equal(k.json.len, want.len);
        assert_memory_equal(k.json.data, want.data, want.len);
        recd_buf_free(&k.json);
    }
    recd_buf_free(&wire);
    recd_buf_free(&want);
    ws_free(&s);
}

static void auto_detection(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf bin = {0};
    assert_int_equal(ws_encode_all(&s, RECD_WIRE_BINARY, &bin), 0);
    ws_sink k = {0};
    char err[320];
    recd_wire_encoding seen;
    assert_int_equal(decode_text(&k, RECD_WIRE_AUTO, bin.data, bin.len, 1, err, sizeof err, &seen), 0);
    assert_int_equal(seen, RECD_WIRE_BINARY);
    assert_int_equal(k.count, s.n);
    recd_buf_free(&k.json);

    /* Leading blank lines and CRLF endings are NDJSON too. */
    const char text[] = "\r\n  \n{\"type\":\"open\",\"session\":\"a\",\"format\":\"samp-onfoot\"}\r\n"
                        "\t\n{\"type\":\"close\",\"session\":\"a\"}\r\n";
    ws_sink k2 = {0};
    assert_int_equal(decode_text(&k2, RECD_WIRE_AUTO, text, strlen(text), 3, err, sizeof err, &seen), 0);
    assert_int_equal(seen, RECD_WIRE_NDJSON);
    assert_int_equal(k2.count, 2);
    recd_buf_free(&k2.json);

    ws_sink k3 = {0};
    assert_int_equal(decode_text(&k3, RECD_WIRE_AUTO, "GET / HTTP/1.1\r\n", 16, 0, err, sizeof err, &seen),
                     -EPROTO);
    assert_non_null(strstr(err, "starts with byte 0x47"));
    recd_buf_free(&bin);
    ws_free(&s);
}

/* Two good lines, then bad. */
static void expect_line_error(const char *bad, size_t badlen, int want_rc, const char *want_text)
{
    static const char good[] = "{\"type\":\"open\",\"session\":\"p\",\"format\":\"samp-vehicle\"}\n"
                               "{\"type\":\"flush\",\"session\":\"p\"}\n";
    recd_buf text = {0};
    assert_int_equal(recd_buf_append(&text, good, strlen(good)), 0);
    assert_int_equal(recd_buf_append(&text, bad, badlen), 0);
    const uint32_t sizes[] = {0, 1, 17};
    for (size_t i = 0; i < 3; i++) {
        ws_sink k = {0};
        char err[320] = "";
        int rc = decode_text(&k, RECD_WIRE_AUTO, text.data, text.len, sizes[i], err, sizeof err, NULL);
        if (rc != want_rc || !strstr(err, want_text))
            fail_msg("chunks %u: rc %d (%s), wanted %d with \"%s\"", sizes[i], rc, err, want_rc,
                     want_text);
        char where[64];
        snprintf(where, sizeof where, "line 3 at byte %lu: ", (unsigned long)strlen(good));
        if (!strstr(err, where))
            fail_msg("error \"%s\" does not contain \"%s\"", err, where);
        assert_int_equal(k.count, 2);
        recd_buf_free(&k.json);
    }
    recd_buf_free(&text);
}

static void line_errors(void **state)
{
    (void)state;
    const char utf8[] = "{\"type\":\"close\",\"session\":\"p\",\"x\":\"\xC3\x28\"}\n";
    expect_line_error(utf8, strlen(utf8), -EBADMSG, "invalid UTF-8");
    const char overlong[] = "{\"type\":\"close\",\"session\":\"\xC0\xAF\"}\n";
    expect_line_error(overlong, strlen(overlong), -EBADMSG, "invalid UTF-8");
    const char unknown[] = "{\"type\":\"state\",\"session\":\"q\",\"t\":1}\n";
    expect_line_error(unknown, strlen(unknown), -EBADMSG, "state for unknown session 'q'");
    /* On-foot keys for a vehicle session: read as the session's format, and refused. */
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    strcpy(m.session, "p");
    ws_onfoot(&m.onfoot, 1, 0);
    recd_buf line = {0};
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_NDJSON, 0, &line), 0);
    expect_line_error((char *)line.data, line.len, -EBADMSG, "state");
    recd_buf_free(&line);
    const char event[] = "{\"type\":\"event\",\"session\":\"p\",\"tick\":1,\"action\":\"TOTEM\"}\n";
    expect_line_error(event, strlen(event), -EBADMSG, "only recap and carla sessions have events");
    const char key[] = "{\"type\":\"close\",\"session\":\"../etc\"}\n";
    expect_line_error(key, strlen(key), -EBADMSG, "not a valid session key");
    const char json[] = "{\"type\":\"close\",\"session\":\"p\"\n";
    expect_line_error(json, strlen(json), -EBADMSG, "invalid JSON");
    const char err_line[] = "{\"type\":\"error\",\"message\":\"x\"}\n";
    expect_line_error(err_line, strlen(err_line), -EBADMSG, "type: \"error\" is not open");
    /* A cut last line is a protocol error at the end of the stream. */
    const char cut[] = "{\"type\":\"close\",\"sess";
    expect_line_error(cut, strlen(cut), -EPROTO, "stream ended inside an unterminated line");
}

static void line_too_long(void **state)
{
    (void)state;
    size_t n = RECD_WIRE_DEFAULT_MAX_FRAME + 10;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    memcpy(big, "{\"type\":\"close\",\"session\":\"p\"}", 30);
    big[n] = '\n';
    expect_line_error(big, n + 1, -EMSGSIZE, "line longer than the limit of 65536 bytes");
    /* Exactly at the limit is fine (a close needs no open on this connection). */
    ws_sink k = {0};
    char err[320];
    size_t at = RECD_WIRE_DEFAULT_MAX_FRAME;
    big[at] = '\n';
    assert_int_equal(decode_text(&k, RECD_WIRE_NDJSON, big, at + 1, 1000, err, sizeof err, NULL), 0);
    assert_int_equal(k.count, 1);
    recd_buf_free(&k.json);
    free(big);
}

/* recd_wire_decoder_set_max_frame: a lowered limit holds from the next line, and a line already
 * held past it fails on the next feed (the length check must not wrap around). */
static void lowered_limit(void **state)
{
    (void)state;
    ws_sink k = {0};
    recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_NDJSON);
    recd_wire_decoder *d;
    char err[320];
    const char close_line[] = "{\"type\":\"close\",\"session\":\"p\"}\n";
    char big[2048];
    memset(big, ' ', sizeof big);
    memcpy(big, close_line, sizeof close_line - 2);
    big[sizeof big - 1] = '\n';

    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    assert_int_equal(recd_wire_decoder_feed(d, (const uint8_t *)big, sizeof big, err, sizeof err), 0);
    recd_wire_decoder_set_max_frame(d, 1024);
    assert_int_equal(recd_wire_decoder_feed(d, (const uint8_t *)close_line, sizeof close_line - 1, err, sizeof err), 0);
    assert_int_equal(recd_wire_decoder_feed(d, (const uint8_t *)big, sizeof big, err, sizeof err), -EMSGSIZE);
    assert_non_null(strstr(err, "line longer than the limit of 1024 bytes"));
    assert_int_equal(k.count, 2);
    recd_wire_decoder_free(d);

    /* 1500 bytes of a line held, then the limit drops to 1024: the next piece fails. */
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    assert_int_equal(recd_wire_decoder_feed(d, (const uint8_t *)big, 1500, err, sizeof err), 0);
    recd_wire_decoder_set_max_frame(d, 1024);
    assert_int_equal(recd_wire_decoder_feed(d, (const uint8_t *)"  \n", 3, err, sizeof err), -EMSGSIZE);
    recd_wire_decoder_free(d);
    recd_buf_free(&k.json);
}

static void continuation_and_last_line(void **state)
{
    (void)state;
    const char text[] = "{\"type\":\"open\",\"session\":\"p\",\"format\":\"samp-onfoot\"}\n"
                        "{\"type\":\"flush\"}\n"
                        "{\"type\":\"close\"}";
    ws_sink k = {0};
    char err[320];
    assert_int_equal(decode_text(&k, RECD_WIRE_NDJSON, text, strlen(text), 4, err, sizeof err, NULL), 0);
    assert_int_equal(k.count, 3);
    assert_non_null(strstr((char *)k.json.data, "{\"type\":\"close\",\"session\":\"p\"}"));
    recd_buf_free(&k.json);

    const char first[] = "{\"type\":\"flush\"}\n";
    ws_sink k2 = {0};
    assert_int_equal(decode_text(&k2, RECD_WIRE_NDJSON, first, strlen(first), 0, err, sizeof err, NULL),
                     -EBADMSG);
    assert_non_null(strstr(err, "line 1 at byte 0: flush: no \"session\""));
    recd_buf_free(&k2.json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip_all_types),
        cmocka_unit_test(auto_detection),
        cmocka_unit_test(line_errors),
        cmocka_unit_test(line_too_long),
        cmocka_unit_test(lowered_limit),
        cmocka_unit_test(continuation_and_last_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
