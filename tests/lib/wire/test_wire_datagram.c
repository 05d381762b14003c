/* SPDX-License-Identifier: MIT */
/* Datagram decoding: several frames or lines per datagram, opens that serve the states after them
 * in the same datagram, and the all-or-nothing rule: a datagram with any bad frame or line
 * delivers nothing and names the bad one. */
#include "testutil.h"

#include "base/bytes.h"
#include "test_wire_samples.h"

/* Decodes as messages, and again with .rec states taken as blocks (on_rec_state): both paths
 * must deliver the same and fail the same way. */
static int decode(ws_sink *k, recd_wire_encoding enc, const void *data, size_t len, char *err,
                  size_t errlen)
{
    size_t before;
    ws_sink kb = ws_twin(k, &before);
    recd_wire_decoder_config cfg = ws_config(k, enc);
    int rc = recd_wire_decode_datagram(&cfg, data, len, err, errlen);
    cfg = ws_config(&kb, enc);
    cfg.on_rec_state = ws_on_rec_state;
    char errb[320] = "";
    assert_int_equal(recd_wire_decode_datagram(&cfg, data, len, errb, sizeof errb), rc);
    if (rc < 0)
        assert_string_equal(errb, err);
    ws_expect_same(k, before, &kb);
    return rc;
}

static void several_frames(void **state)
{
    (void)state;
    const recd_wire_encoding encs[] = {RECD_WIRE_BINARY, RECD_WIRE_NDJSON};
    for (int e = 0; e < 4; e++) {
        ws_set s;
        ws_build(&s);
        recd_buf dgram = {0}, want = {0};
        assert_int_equal(ws_encode_all(&s, encs[e % 2], &dgram), 0);
        ws_json(&s, &want);
        ws_sink k = {0};
        k.move = e >= 2; /* a receiver that takes the messages gets the same ones */
        char err[320] = "";
        assert_int_equal(decode(&k, RECD_WIRE_AUTO, dgram.data, dgram.len, err, sizeof err), 0);
        assert_int_equal(k.count, s.n);
        assert_int_equal(k.json.len, want.len);
        assert_memory_equal(k.json.data, want.data, want.len);
        recd_buf_free(&k.json);
        recd_buf_free(&dgram);
        recd_buf_free(&want);
        ws_free(&s);
    }
}

static void registry_and_local_opens(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    /* A state alone needs the receiver's registry... */
    recd_buf one = {0};
    assert_int_equal(recd_wire_encode(&s.m[1], RECD_WIRE_BINARY, 0, &one), 0);
    ws_sink k = {0};
    char err[320];
    assert_int_equal(decode(&k, RECD_WIRE_BINARY, one.data, one.len, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "datagram frame 1 at byte 0: state for unknown session 'foot-1'"));
    k.known_session = "foot-1";
    k.known_format = RECD_MSG_FMT_SAMP_ONFOOT;
    recd_wire_decoder_config cfg = ws_config(&k, RECD_WIRE_BINARY);
    cfg.format_of = ws_format_of;
    assert_int_equal(recd_wire_decode_datagram(&cfg, one.data, one.len, err, sizeof err), 0);
    assert_int_equal(k.count, 1);
    /* ...or an open earlier in the same datagram, which wins over the registry. */
    recd_buf two = {0};
    recd_msg open = s.m[4]; /* car_2 opens as samp-vehicle */
    strcpy(open.session, "foot-1");
    recd_msg st = s.m[5];
    strcpy(st.session, "foot-1");
    assert_int_equal(recd_wire_encode(&open, RECD_WIRE_BINARY, 0, &two), 0);
    assert_int_equal(recd_wire_encode(&st, RECD_WIRE_BINARY, 0, &two), 0);
    assert_int_equal(recd_wire_decode_datagram(&cfg, two.data, two.len, err, sizeof err), 0);
    assert_int_equal(k.count, 3);
    /* On the .rec path the registry's answer comes with its handle; the local open's without. */
    cfg.on_rec_state = ws_on_rec_state;
    assert_int_equal(recd_wire_decode_datagram(&cfg, one.data, one.len, err, sizeof err), 0);
    assert_int_equal(k.handles, 1);
    assert_int_equal(recd_wire_decode_datagram(&cfg, two.data, two.len, err, sizeof err), 0);
    assert_int_equal(k.handles, 1);
    assert_int_equal(k.count, 6);
    recd_buf_free(&k.json);
    recd_buf_free(&one);
    recd_buf_free(&two);
    ws_free(&s);
}

/* Good frames, then a bad one: nothing at all is delivered. */
static void bad_datagram_rejected_whole(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf dgram = {0};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(recd_wire_encode(&s.m[i], RECD_WIRE_BINARY, 0, &dgram), 0);
    size_t good = dgram.len;
    const uint8_t bad[] = {0xD7, 1, 5, 0x80, 2, 0, 0, 0, 1, 'a'};
    assert_int_equal(recd_buf_append(&dgram, bad, sizeof bad), 0);
    ws_sink k = {0};
    char err[320], where[80];
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, dgram.data, dgram.len, err, sizeof err), -EPROTO);
    snprintf(where, sizeof where, "datagram frame 5 at byte %lu: unknown flag bits 0x80",
             (unsigned long)good);
    assert_string_equal(err, where);
    assert_int_equal(k.count, 0);

    /* A truncated last frame. */
    dgram.len = good;
    const uint8_t cut[] = {0xD7, 1, 5, 0, 9, 0, 0, 0, 1, 'a'};
    assert_int_equal(recd_buf_append(&dgram, cut, sizeof cut), 0);
    assert_int_equal(decode(&k, RECD_WIRE_BINARY, dgram.data, dgram.len, err, sizeof err), -EPROTO);
    assert_non_null(strstr(err, "truncated frame"));
    assert_int_equal(k.count, 0);

    /* key_len 0 has nothing to continue in a datagram. */
    dgram.len = good;
    const uint8_t cont[] = {0xD7, 1, 5, 0, 1, 0, 0, 0, 0};
    assert_int_equal(recd_buf_append(&dgram, cont, sizeof cont), 0);
    assert_int_equal(decode(&k, RECD_WIRE_BINARY, dgram.data, dgram.len, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "must name its session"));
    assert_int_equal(k.count, 0);

    /* Too large a frame. */
    dgram.len = good;
    const uint8_t big[] = {0xD7, 1, 5, 0, 0, 0, 2, 0};
    assert_int_equal(recd_buf_append(&dgram, big, sizeof big), 0);
    assert_int_equal(decode(&k, RECD_WIRE_BINARY, dgram.data, dgram.len, err, sizeof err), -EMSGSIZE);
    assert_int_equal(k.count, 0);

    /* A receiver error stops delivery at that message. */
    ws_sink k2 = {0};
    k2.fail_at = 2;
    assert_int_equal(decode(&k2, RECD_WIRE_BINARY, dgram.data, good, err, sizeof err), -EACCES);
    assert_int_equal(k2.count, 1);
    recd_buf_free(&k2.json);
    recd_buf_free(&dgram);
    ws_free(&s);
}

static void ndjson_datagrams(void **state)
{
    (void)state;
    ws_sink k = {0};
    char err[320];
    const char ok[] = "{\"type\":\"open\",\"session\":\"u\",\"format\":\"samp-onfoot\"}\n\n"
                      "{\"type\":\"close\",\"session\":\"u\"}";
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, ok, strlen(ok), err, sizeof err), 0);
    assert_int_equal(k.count, 2);
    const char nokey[] = "{\"type\":\"open\",\"session\":\"u\",\"format\":\"samp-onfoot\"}\n"
                         "{\"type\":\"close\"}\n";
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, nokey, strlen(nokey), err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "datagram line 2 at byte 53: close: \"session\" is required"));
    const char junk[] = "\x01\x02";
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, junk, 2, err, sizeof err), -EPROTO);
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, "", 0, err, sizeof err), 0);
    assert_int_equal(k.count, 2);
    recd_buf_free(&k.json);
}

/* One frame or line is delivered in a single pass: exactly once, and never when it is followed by
 * anything that makes the datagram more than one message. */
static void single_message_datagrams(void **state)
{
    (void)state;
    ws_set s;
    ws_build(&s);
    recd_buf one = {0};
    assert_int_equal(recd_wire_encode(&s.m[0], RECD_WIRE_BINARY, 0, &one), 0); /* an open */
    ws_sink k = {0};
    char err[320];
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, one.data, one.len, err, sizeof err), 0);
    assert_int_equal(k.count, 1);
    const uint8_t tail[] = {0xD7, 1};
    assert_int_equal(recd_buf_append(&one, tail, sizeof tail), 0);
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, one.data, one.len, err, sizeof err), -EPROTO);
    assert_int_equal(k.count, 1); /* the good frame before the cut one was not applied */

    const char line[] = "{\"type\":\"open\",\"session\":\"u\",\"format\":\"samp-onfoot\"}\n";
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, line, strlen(line), err, sizeof err), 0);
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, line, strlen(line) - 1, err, sizeof err), 0);
    assert_int_equal(k.count, 3);
    const char two[] = "{\"type\":\"open\",\"session\":\"u\",\"format\":\"samp-onfoot\"}\n{";
    assert_int_equal(decode(&k, RECD_WIRE_AUTO, two, strlen(two), err, sizeof err), -EBADMSG);
    assert_int_equal(k.count, 3);
    recd_buf_free(&k.json);
    recd_buf_free(&one);
    ws_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(several_frames),
        cmocka_unit_test(registry_and_local_opens),
        cmocka_unit_test(bad_datagram_rejected_whole),
        cmocka_unit_test(ndjson_datagrams),
        cmocka_unit_test(single_message_datagrams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
