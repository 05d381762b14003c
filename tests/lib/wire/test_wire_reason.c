/* SPDX-License-Identifier: MIT */
/* The kind of a decoder's error (recd/wire_reason.h), which a receiver counts without reading the
 * error text: syntax, unknown session, schema, framing and too large, from a stream decoder and
 * from a datagram. */
#include "testutil.h"

#include "recd/wire_reason.h"
#include "test_wire_samples.h"

/* Feeds data to a new stream decoder; the kind of its error (rc must be negative). */
static recd_wire_reason stream_reason(recd_wire_encoding enc, const void *data, size_t len,
                                      int want_rc)
{
    ws_sink k = {0};
    recd_wire_decoder_config cfg = ws_config(&k, enc);
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    assert_int_equal(recd_wire_decoder_reason(d), RECD_WIRE_REASON_NONE);
    char err[320] = "";
    int rc = recd_wire_decoder_feed(d, data, len, err, sizeof err);
    if (rc == 0)
        rc = recd_wire_decoder_finish(d, err, sizeof err);
    assert_int_equal(rc, want_rc);
    recd_wire_reason r = recd_wire_reason_of(rc, recd_wire_decoder_reason(d));
    recd_wire_decoder_free(d);
    recd_buf_free(&k.json);
    return r;
}

static void ndjson_reasons(void **state)
{
    (void)state;
    static const char not_json[] = "{\"type\":\"state\",\n";
    assert_int_equal(stream_reason(RECD_WIRE_NDJSON, not_json, sizeof not_json - 1, -EBADMSG),
                     RECD_WIRE_REASON_SYNTAX);
    static const char not_utf8[] = "{\"type\":\"open\",\"session\":\"u\xff\"}\n";
    assert_int_equal(stream_reason(RECD_WIRE_NDJSON, not_utf8, sizeof not_utf8 - 1, -EBADMSG),
                     RECD_WIRE_REASON_SYNTAX);
    static const char no_type[] = "{\"session\":\"a\"}\n";
    assert_int_equal(stream_reason(RECD_WIRE_NDJSON, no_type, sizeof no_type - 1, -EBADMSG),
                     RECD_WIRE_REASON_SCHEMA);
    static const char too_long[] = "{\"type\":\"close\",\"session\":\"a\"}"; /* no newline */
    ws_sink k = {0};
    recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_NDJSON);
    cfg.max_frame = 8;
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    char err[320];
    const uint8_t *bytes = (const uint8_t *)too_long;
    int rc = recd_wire_decoder_feed(d, bytes, sizeof too_long - 1, err, sizeof err);
    assert_int_equal(rc, -EMSGSIZE);
    assert_int_equal(recd_wire_reason_of(rc, recd_wire_decoder_reason(d)),
                     RECD_WIRE_REASON_TOO_LARGE);
    recd_wire_decoder_free(d);
}

static void binary_reasons(void **state)
{
    (void)state;
    uint8_t unknown[8 + 1 + 2 + 8 + 68] = {0xD7, 1, 2, 2, 1 + 2 + 8 + 68, 0, 0, 0, 2, 'p', '1'};
    assert_int_equal(stream_reason(RECD_WIRE_BINARY, unknown, sizeof unknown, -EBADMSG),
                     RECD_WIRE_REASON_UNKNOWN_SESSION);
    const uint8_t save_zero[] = {0xD7, 1, 6, 0, 8, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 1, 'x'};
    assert_int_equal(stream_reason(RECD_WIRE_BINARY, save_zero, sizeof save_zero, -EBADMSG),
                     RECD_WIRE_REASON_SCHEMA);
    const uint8_t cut[] = {0xD7, 1, 5, 0, 9, 0, 0, 0, 1, 'a'};
    assert_int_equal(stream_reason(RECD_WIRE_BINARY, cut, sizeof cut, -EPROTO),
                     RECD_WIRE_REASON_FRAMING);
}

static void datagram_reasons(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf one = {0};
    assert_int_equal(recd_wire_encode(&s.m[1], RECD_WIRE_BINARY, 0, &one), 0);
    ws_sink k = {0};
    recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_BINARY);
    char err[320];
    recd_wire_reason noted = RECD_WIRE_REASON_OTHER;
    int rc = recd_wire_decode_datagram_noted(&cfg, one.data, one.len, err, sizeof err, &noted);
    assert_int_equal(rc, -EBADMSG);
    assert_int_equal(noted, RECD_WIRE_REASON_UNKNOWN_SESSION);
    /* a datagram that decodes notes nothing */
    k.known_session = "foot-1";
    k.known_format = RECD_MSG_FMT_SAMP_ONFOOT;
    cfg.format_of = ws_format_of;
    assert_int_equal(recd_wire_decode_datagram_noted(&cfg, one.data, one.len, err, sizeof err,
                                                     &noted), 0);
    assert_int_equal(noted, RECD_WIRE_REASON_NONE);
    recd_buf_free(&k.json);
    recd_buf_free(&one);
    ws_free(&s);
}

static void errno_alone(void **state)
{
    (void)state;
    assert_int_equal(recd_wire_reason_of(-ENOMEM, RECD_WIRE_REASON_NONE), RECD_WIRE_REASON_OTHER);
    assert_int_equal(recd_wire_reason_of(-EBADMSG, RECD_WIRE_REASON_SYNTAX),
                     RECD_WIRE_REASON_SYNTAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ndjson_reasons),
        cmocka_unit_test(binary_reasons),
        cmocka_unit_test(datagram_reasons),
        cmocka_unit_test(errno_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
