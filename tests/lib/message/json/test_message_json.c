/* SPDX-License-Identifier: MIT */
/* The message model's JSON encoding: exact round trips of every .rec field and of Recap
 * states/events/headers, whole-file export/import identity, and clear errors for hostile lines. */
#include "testutil.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "recd/message.h"

/* ---- helpers --------------------------------------------------------------------------------- */

static float rand_f32(tu_rng *r)
{
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, /* +0, -0 */
        0x00000001u, 0x80000001u, /* smallest denormals */
        0x007FFFFFu, 0x00400000u, /* largest / middle denormal */
        0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, /* FLT_MIN, +-FLT_MAX */
        0x3F800000u, 0x3DCCCCCDu, 0x447A0000u, 0x4B800001u /* 1, 0.1, 1000, 16777218 */
    };
    if (tu_rand_below(r, 4) == 0)
        return f32_from_bits(special[tu_rand_below(r, sizeof special / sizeof special[0])]);
    for (;;) {
        float f = f32_from_bits((uint32_t)tu_rand(r));
        if (isfinite(f))
            return f;
    }
}

static double rand_f64(tu_rng *r)
{
    if (tu_rand_below(r, 5) == 0) {
        static const double special[] = {0.0, -0.0, 5e-324, DBL_MAX, -DBL_MIN, 0.1, 1e300, 2.5};
        return special[tu_rand_below(r, sizeof special / sizeof special[0])];
    }
    for (;;) {
        double d = f64_from_bits(tu_rand(r));
        if (isfinite(d))
            return d;
    }
}

static uint32_t rand_int(tu_rng *r, uint32_t max)
{
    switch (tu_rand_below(r, 4)) {
    case 0: return 0;
    case 1: return max;
    default: return (uint32_t)(tu_rand(r) % ((uint64_t)max + 1));
    }
}

static int16_t rand_s16(tu_rng *r)
{
    switch (tu_rand_below(r, 4)) {
    case 0: return INT16_MIN;
    case 1: return INT16_MAX;
    default: return (int16_t)(uint16_t)tu_rand(r);
    }
}

static recd_vec3f rand_vec(tu_rng *r)
{
    recd_vec3f v = {rand_f32(r), rand_f32(r), rand_f32(r)};
    return v;
}

static recd_rec_onfoot rand_onfoot(tu_rng *r)
{
    recd_rec_onfoot b;
    memset(&b, 0, sizeof b);
    b.time_ms = rand_int(r, UINT32_MAX);
    b.left_right = rand_s16(r);
    b.up_down = rand_s16(r);
    b.keys = (uint16_t)rand_int(r, UINT16_MAX);
    b.position = rand_vec(r);
    b.rotation.w = rand_f32(r);
    b.rotation.x = rand_f32(r);
    b.rotation.y = rand_f32(r);
    b.rotation.z = rand_f32(r);
    b.health = (uint8_t)rand_int(r, 255);
    b.armour = (uint8_t)rand_int(r, 255);
    b.weapon = (uint8_t)rand_int(r, 63);
    b.additional_key = (uint8_t)rand_int(r, 3);
    b.special_action = (uint8_t)rand_int(r, 255);
    b.velocity = rand_vec(r);
    b.surf_offset = rand_vec(r);
    b.surf_id = (uint16_t)rand_int(r, UINT16_MAX);
    b.anim_id = (uint16_t)rand_int(r, UINT16_MAX);
    b.anim_flags = recd_rec_anim_flags_unpack((uint16_t)rand_int(r, UINT16_MAX));
    return b;
}

static recd_rec_vehicle rand_vehicle(tu_rng *r)
{
    recd_rec_vehicle b;
    memset(&b, 0, sizeof b);
    b.time_ms = rand_int(r, UINT32_MAX);
    b.vehicle_id = (uint16_t)rand_int(r, UINT16_MAX);
    b.left_right = rand_s16(r);
    b.up_down = rand_s16(r);
    b.keys = (uint16_t)rand_int(r, UINT16_MAX);
    b.rotation.w = rand_f32(r);
    b.rotation.x = rand_f32(r);
    b.rotation.y = rand_f32(r);
    b.rotation.z = rand_f32(r);
    b.position = rand_vec(r);
    b.velocity = rand_vec(r);
    b.vehicle_health = rand_f32(r);
    b.driver_health = (uint8_t)rand_int(r, 255);
    b.driver_armour = (uint8_t)rand_int(r, 255);
    b.weapon = (uint8_t)rand_int(r, 63);
    b.additional_key = (uint8_t)rand_int(r, 3);
    b.siren = (uint8_t)rand_int(r, 255);
    b.landing_gear = (uint8_t)rand_int(r, 255);
    b.trailer_id = (uint16_t)rand_int(r, UINT16_MAX);
    switch (tu_rand_below(r, 3)) {
    case 0: b.extra = recd_rec_hydra_extra((uint16_t)rand_int(r, 5000), (uint16_t)rand_int(r, 5000)); break;
    case 1: b.extra.train_speed = (float)tu_rand_double(r, -2, 2); break;
    default: b.extra.bits = (uint32_t)tu_rand(r); break; /* any bits, NaN patterns included */
    }
    return b;
}

static void json_roundtrip(const recd_msg *m, recd_msg_format fmt, recd_msg *back)
{
    recd_buf out = {0};
    char err[256] = "";
    assert_int_equal(recd_msg_to_json(m, &out), 0);
    assert_true(out.len > 0 && out.data[out.len - 1] == '\n');
    assert_null(memchr(out.data, '\n', out.len - 1));
    int rc = recd_msg_from_json((const char *)out.data, out.len, fmt, back, err, sizeof err);
    if (rc != 0)
        fail_msg("%s\nfor: %.*s", err, (int)out.len, (const char *)out.data);
    recd_buf_free(&out);
}

/* Parses line and expects failure with `want` in the error text. */
static void expect_error(const char *line, recd_msg_format fmt, const char *want)
{
    recd_msg m;
    char err[256] = "";
    int rc = recd_msg_from_json(line, strlen(line), fmt, &m, err, sizeof err);
    if (rc == 0 || !strstr(err, want))
        fail_msg("line %s\n  rc %d, error \"%s\", wanted \"%s\"", line, rc, err, want);
    assert_int_equal(rc, -EBADMSG);
    assert_int_equal(m.type, RECD_MSG_NONE);
}

static const char onfoot_ok[] =
    "{\"type\":\"state\",\"t\":100,\"left_right\":0,\"up_down\":-128,\"keys\":8,"
    "\"position\":[1.5,2.0,3.0],\"rotation\":[1.0,0.0,0.0,0.0],\"health\":100,\"armour\":0,"
    "\"weapon\":22,\"additional_key\":0,\"special_action\":0,\"velocity\":[0.0,0.0,0.0],"
    "\"surf_offset\":[0.0,0.0,0.0],\"surf_id\":0,\"anim_id\":1189,\"anim_flags\":{\"frame_delta\":4,"
    "\"loop\":false,\"lock_x\":false,\"lock_y\":false,\"freeze\":false,\"time\":8}}";

/* onfoot_ok with `from` replaced by `to`. */
static char *onfoot_with(const char *from, const char *to)
{
    static char buf[2048];
    const char *p = strstr(onfoot_ok, from);
    assert_non_null(p);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - onfoot_ok), onfoot_ok, to, p + strlen(from));
    return buf;
}

/* ---- .rec fields ----------------------------------------------------------------------------- */

static void test_onfoot_roundtrip_random(void **state)
{
    (void)state;
    tu_rng r = {20260101};
    for (int i = 0; i < 5000; i++) {
        recd_msg m, back;
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
        m.onfoot = rand_onfoot(&r);
        json_roundtrip(&m, RECD_MSG_FMT_SAMP_ONFOOT, &back);
        uint8_t a[RECD_REC_ONFOOT_BLOCK_SIZE], b[RECD_REC_ONFOOT_BLOCK_SIZE];
        recd_rec_onfoot_encode(&m.onfoot, a);
        recd_rec_onfoot_encode(&back.onfoot, b);
        assert_memory_equal(a, b, sizeof a);
        assert_int_equal(back.format, RECD_MSG_FMT_SAMP_ONFOOT);
    }
}

/* The reader matches each key from where the previous one matched (keys mostly come in field
 * order): any other order must read the same, and a misspelt key must still be found. */
static void test_key_order_does_not_matter(void **state)
{
    (void)state;
    const char *orders[] = {
        onfoot_ok,
        /* reversed */
        "{\"anim_flags\":{\"time\":8,\"freeze\":false,\"lock_y\":false,\"lock_x\":false,"
        "\"loop\":false,\"frame_delta\":4},\"anim_id\":1189,\"surf_id\":0,"
        "\"surf_offset\":[0.0,0.0,0.0],\"velocity\":[0.0,0.0,0.0],\"special_action\":0,"
        "\"additional_key\":0,\"weapon\":22,\"armour\":0,\"health\":100,"
        "\"rotation\":[1.0,0.0,0.0,0.0],\"position\":[1.5,2.0,3.0],\"keys\":8,\"up_down\":-128,"
        "\"left_right\":0,\"t\":100,\"type\":\"state\"}",
        /* rotated, common keys in the middle */
        "{\"health\":100,\"armour\":0,\"weapon\":22,\"additional_key\":0,\"special_action\":0,"
        "\"velocity\":[0.0,0.0,0.0],\"type\":\"state\",\"surf_offset\":[0.0,0.0,0.0],\"surf_id\":0,"
        "\"anim_id\":1189,\"anim_flags\":{\"frame_delta\":4,\"loop\":false,\"lock_x\":false,"
        "\"lock_y\":false,\"freeze\":false,\"time\":8},\"t\":100,\"left_right\":0,"
        "\"up_down\":-128,\"keys\":8,\"position\":[1.5,2.0,3.0],\"rotation\":[1.0,0.0,0.0,0.0]}",
    };
    uint8_t want[RECD_REC_ONFOOT_BLOCK_SIZE], got[RECD_REC_ONFOOT_BLOCK_SIZE];
    for (size_t i = 0; i < sizeof orders / sizeof *orders; i++) {
        recd_msg m;
        char err[256] = "";
        int rc = recd_msg_from_json(orders[i], strlen(orders[i]), RECD_MSG_FMT_SAMP_ONFOOT, &m, err,
                                    sizeof err);
        if (rc != 0)
            fail_msg("order %zu: %s", i, err);
        recd_rec_onfoot_encode(&m.onfoot, i == 0 ? want : got);
        if (i > 0)
            assert_memory_equal(want, got, sizeof want);
    }
    /* A repeated key is still refused (jansson's duplicate check), a misspelt one by name. */
    expect_error(onfoot_with("\"anim_id\":1189", "\"anim_id\":1189,\"t\":5"),
                 RECD_MSG_FMT_SAMP_ONFOOT, "invalid JSON");
    expect_error(onfoot_with("\"anim_id\":1189", "\"anim_id\":1189,\"left_rigth\":0"),
                 RECD_MSG_FMT_SAMP_ONFOOT, "state: unknown key \"left_rigth\"");
}

static void test_vehicle_roundtrip_random(void **state)
{
    (void)state;
    tu_rng r = {777};
    for (int i = 0; i < 5000; i++) {
        recd_msg m, back;
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
        m.vehicle = rand_vehicle(&r);
        json_roundtrip(&m, RECD_MSG_FMT_SAMP_VEHICLE, &back);
        uint8_t a[RECD_REC_VEHICLE_BLOCK_SIZE], b[RECD_REC_VEHICLE_BLOCK_SIZE];
        recd_rec_vehicle_encode(&m.vehicle, a);
        recd_rec_vehicle_encode(&back.vehicle, b);
        assert_memory_equal(a, b, sizeof a);
    }
}

/* Any block bytes without NaN/Inf floats survive bytes -> struct -> JSON -> struct -> bytes. */
static void test_random_block_bytes_exact(void **state)
{
    (void)state;
    tu_rng r = {42};
    int tried = 0;
    for (int i = 0; i < 20000; i++) {
        uint8_t in[RECD_REC_ONFOOT_BLOCK_SIZE], out[RECD_REC_ONFOOT_BLOCK_SIZE];
        for (size_t k = 0; k < sizeof in; k++)
            in[k] = (uint8_t)tu_rand(&r);
        bool vehicle = i & 1;
        recd_msg m, back;
        recd_msg_init(&m, RECD_MSG_STATE,
                      vehicle ? RECD_MSG_FMT_SAMP_VEHICLE : RECD_MSG_FMT_SAMP_ONFOOT);
        if (vehicle) {
            recd_rec_vehicle_decode(in, &m.vehicle);
            if (recd_rec_vehicle_check(&m.vehicle) < 0)
                continue;
        } else {
            recd_rec_onfoot_decode(in, &m.onfoot);
            if (recd_rec_onfoot_check(&m.onfoot) < 0)
                continue;
        }
        json_roundtrip(&m, m.format, &back);
        if (vehicle) {
            recd_rec_vehicle_encode(&back.vehicle, out);
            assert_memory_equal(in, out, RECD_REC_VEHICLE_BLOCK_SIZE);
        } else {
            recd_rec_onfoot_encode(&back.onfoot, out);
            assert_memory_equal(in, out, RECD_REC_ONFOOT_BLOCK_SIZE);
        }
        tried++;
    }
    assert_true(tried > 1000);
}

static void test_float_text(void **state)
{
    (void)state;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    m.onfoot.position.x = -0.0f;
    m.onfoot.position.y = 1000.0f;
    m.onfoot.position.z = 0.1f;
    m.onfoot.velocity.x = f32_from_bits(1); /* smallest denormal */
    recd_buf out = {0};
    assert_int_equal(recd_msg_to_json(&m, &out), 0);
    assert_int_equal(recd_buf_append(&out, "", 1), 0);
    const char *s = (const char *)out.data;
    assert_non_null(strstr(s, "\"position\":[-0.0,1000.0,0.1]"));
    assert_non_null(strstr(s, "\"velocity\":[1e-45,0.0,0.0]"));
    recd_buf_free(&out);

    /* jansson reads "-0" as the integer 0: our writer never emits it, and a reader gets +0. */
    recd_msg back;
    char err[200];
    assert_int_equal(recd_msg_from_json(onfoot_with("[1.5,2.0,3.0]", "[-0,-0.0,3]"),
                                        strlen(onfoot_with("[1.5,2.0,3.0]", "[-0,-0.0,3]")),
                                        RECD_MSG_FMT_SAMP_ONFOOT, &back, err, sizeof err),
                     0);
    assert_int_equal(f32_to_bits(back.onfoot.position.x), 0);
    assert_int_equal(f32_to_bits(back.onfoot.position.y), 0x80000000u);
    assert_true(back.onfoot.position.z == 3.0f);
}

static void test_writer_refuses_nan_inf(void **state)
{
    (void)state;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    recd_buf out = {0};
    assert_int_equal(recd_buf_append(&out, "x", 1), 0);
    m.vehicle.vehicle_health = NAN;
    assert_int_equal(recd_msg_to_json(&m, &out), -EINVAL);
    m.vehicle.vehicle_health = 0;
    m.vehicle.position.y = -INFINITY;
    assert_int_equal(recd_msg_to_json(&m, &out), -EINVAL);
    m.vehicle.position.y = 0;
    m.vehicle.weapon = 64; /* does not fit its 6 bits */
    assert_int_equal(recd_msg_to_json(&m, &out), -EINVAL);
    assert_int_equal(out.len, 1); /* nothing appended on error */
    recd_buf_free(&out);
}

static void test_infer_state_format(void **state)
{
    (void)state;
    recd_msg m;
    char err[200];
    assert_int_equal(recd_msg_from_json(onfoot_ok, strlen(onfoot_ok), RECD_MSG_FMT_NONE, &m, err,
                                        sizeof err),
                     0);
    assert_int_equal(m.format, RECD_MSG_FMT_SAMP_ONFOOT);
    assert_int_equal(m.onfoot.anim_id, 1189);
    assert_int_equal(m.onfoot.anim_flags.time, 8);
    recd_msg_free(&m);
}

/* ---- hostile input --------------------------------------------------------------------------- */

static void test_bad_json(void **state)
{
    (void)state;
    const recd_msg_format F = RECD_MSG_FMT_SAMP_ONFOOT;
    expect_error("{\"type\":\"state\",", F, "invalid JSON");
    expect_error("", F, "invalid JSON");
    expect_error("{\"type\":\"open\",\"format\":\"samp-onfoot\",\"auth\":\"\xff\"}", F,
                 "invalid JSON");
    expect_error("{\"type\":\"open\",\"format\":\"samp-onfoot\",\"auth\":\"\xc3\x28\"}", F,
                 "invalid JSON");
    expect_error("{\"type\":\"open\",\"type\":\"open\",\"format\":\"recap\"}", F, "duplicate");
    expect_error("[1,2]", F, "must be a JSON object");
    expect_error("{\"type\":\"state\"}\n{\"type\":\"close\"}", F, "one line");
    expect_error(onfoot_with("1.5", "NaN"), F, "invalid JSON");
    expect_error(onfoot_with("1.5", "Infinity"), F, "invalid JSON");
    expect_error(onfoot_with("1.5", "\"nan\""), F, "state.position[0]: expected a number, got a string");
}

static void test_bad_fields(void **state)
{
    (void)state;
    const recd_msg_format F = RECD_MSG_FMT_SAMP_ONFOOT;
    expect_error(onfoot_with("\"health\":100", "\"health\":300"), F,
                 "state.health: 300 does not fit u8");
    expect_error(onfoot_with("\"health\":100", "\"health\":-1"), F, "state.health: -1 does not fit u8");
    expect_error(onfoot_with("\"health\":100", "\"health\":\"100\""), F,
                 "state.health: expected an integer, got a string");
    expect_error(onfoot_with("\"health\":100", "\"health\":100.0"), F,
                 "state.health: expected an integer, got a real number");
    expect_error(onfoot_with("\"weapon\":22", "\"weapon\":64"), F, "state.weapon: 64 does not fit 6 bits");
    expect_error(onfoot_with("\"additional_key\":0", "\"additional_key\":4"), F,
                 "state.additional_key: 4 does not fit 2 bits");
    expect_error(onfoot_with("\"left_right\":0", "\"left_right\":-32769"), F,
                 "state.left_right: -32769 does not fit s16");
    expect_error(onfoot_with("\"t\":100", "\"t\":4294967296"), F, "state.t: 4294967296 does not fit u32");
    expect_error(onfoot_with("1.5", "1e39"), F, "state.position[0]: 1e+39 does not fit f32");
    expect_error(onfoot_with("[1.5,2.0,3.0]", "[1.5,2.0]"), F, "state.position: expected an array of 3");
    expect_error(onfoot_with("[1.5,2.0,3.0]", "{\"x\":1}"), F, "state.position: expected an array of 3");
    expect_error(onfoot_with("\"loop\":false", "\"loop\":0"), F,
                 "state.anim_flags.loop: expected true or false");
    expect_error(onfoot_with("\"loop\":false,", ""), F, "state.anim_flags: missing key \"loop\"");
    expect_error(onfoot_with("\"time\":8", "\"time\":8,\"speed\":1"), F,
                 "state.anim_flags: unknown key \"speed\"");
    expect_error(onfoot_with("\"time\":8", "\"time\":16"), F, "state.anim_flags.time: 16 does not fit 4 bits");
    expect_error(onfoot_with("\"anim_id\":1189,", ""), F, "state: missing key \"anim_id\"");
    expect_error(onfoot_with("\"keys\":8", "\"keys\":8,\"kyes\":8"), F, "state: unknown key \"kyes\"");
    expect_error(onfoot_with("\"keys\":8", "\"keys\":8,\"\\u0001evil\":8"), F,
                 "state: unknown key \"?evil\"");
    expect_error("{\"state\":1}", F, "missing key \"type\"");
    expect_error("{\"type\":7}", F, "type: expected a string");
    expect_error("{\"type\":\"stat\"}", F, "type: \"stat\" is not open, state, event, flush, close or save");
    expect_error("{\"type\":\"open\"}", F, "open: missing key \"format\"");
    expect_error("{\"type\":\"open\",\"format\":\"samp\"}", F, "open.format: \"samp\" is not");
    expect_error("{\"type\":\"open\",\"format\":\"samp-onfoot\",\"recap\":{}}", F,
                 "open.recap: only allowed with format recap");
    expect_error("{\"type\":\"open\",\"format\":\"recap\"}", F, "open: missing key \"recap\"");
    expect_error("{\"type\":\"open\",\"format\":\"samp-onfoot\",\"auth\":\"a b\"}", F, "open.auth");
    expect_error("{\"type\":\"close\",\"seq\":-1}", F, "close.seq: -1 is below 0");
    expect_error("{\"type\":\"close\",\"seq\":99999999999999999999}", F, "invalid JSON");
    expect_error("{\"type\":\"close\",\"bye\":1}", F, "close: unknown key \"bye\"");
    expect_error("{\"type\":\"flush\",\"end_tick\":\"x\"}", F, "flush.end_tick: expected an integer");
    expect_error("{\"type\":\"event\",\"tick\":1,\"action\":\"TOTEM\"}", F,
                 "event: only recap and carla sessions have events");

    /* Vehicle bytes 63-66: exactly one of the two spellings. */
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    recd_buf out = {0};
    assert_int_equal(recd_msg_to_json(&m, &out), 0);
    assert_int_equal(recd_buf_append(&out, "", 1), 0);
    char *line = (char *)out.data;
    char *h = strstr(line, ",\"hydra_thrust\":[0,0]");
    assert_non_null(h);
    char both[2048], none[2048], big[2048];
    snprintf(both, sizeof both, "%.*s,\"hydra_thrust\":[0,0],\"train_speed\":0.5}", (int)(h - line), line);
    snprintf(none, sizeof none, "%.*s}", (int)(h - line), line);
    snprintf(big, sizeof big, "%.*s,\"hydra_thrust\":[0,65536]}", (int)(h - line), line);
    expect_error(both, RECD_MSG_FMT_SAMP_VEHICLE, "needs exactly one of \"hydra_thrust\" and \"train_speed\"");
    expect_error(none, RECD_MSG_FMT_SAMP_VEHICLE, "needs exactly one of");
    expect_error(big, RECD_MSG_FMT_SAMP_VEHICLE, "state.hydra_thrust[1]: 65536 does not fit u16");
    recd_buf_free(&out);
}

static void test_session_keys(void **state)
{
    (void)state;
    const char *bad[] = {"../x", "/abs", "a\\u0000b", ".hidden", "", "a b", "x/y", "caf\\u00e9",
                         "..",
                         "0123456789012345678901234567890123456789012345678901234567890123X"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "{\"type\":\"open\",\"session\":\"%s\",\"format\":\"samp-onfoot\"}",
                 bad[i]);
        expect_error(line, RECD_MSG_FMT_NONE, "open.session:");
        expect_error(line, RECD_MSG_FMT_NONE, "is not a valid session key");
    }
    expect_error("{\"type\":\"open\",\"session\":5,\"format\":\"samp-onfoot\"}", RECD_MSG_FMT_NONE,
                 "open.session: expected a string");
    const char *good = "0123456789012345678901234567890123456789012345678901234567890123";
    char line[256];
    snprintf(line, sizeof line,
             "{\"type\":\"open\",\"session\":\"%s\",\"seq\":7,\"format\":\"samp-vehicle\","
             "\"start_time\":1700000000000,\"auth\":\"s3cr3t-token\"}",
             good);
    recd_msg m, back;
    char err[200];
    assert_int_equal(recd_msg_from_json(line, strlen(line), RECD_MSG_FMT_NONE, &m, err, sizeof err), 0);
    assert_string_equal(m.session, good);
    assert_true(m.has_seq && m.seq == 7);
    assert_int_equal(m.format, RECD_MSG_FMT_SAMP_VEHICLE);
    assert_true(m.open.has_start_time && m.open.start_time_ms == 1700000000000);
    assert_string_equal(m.open.auth, "s3cr3t-token");
    json_roundtrip(&m, RECD_MSG_FMT_NONE, &back);
    assert_string_equal(back.session, good);
    assert_string_equal(back.open.auth, "s3cr3t-token");
    recd_msg_free(&back);
    recd_msg_free(&m);
    assert_true(recd_session_key_valid("a.b_c-D9", 8));
    assert_false(recd_session_key_valid("a\0b", 3));
    /* Every byte value, first and later in a key. */
    for (int c = 0; c < 256; c++) {
        bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
        char key[3] = {'k', (char)c, 'z'};
        assert_int_equal(recd_session_key_valid(key, 3), allowed);
        key[0] = (char)c;
        assert_int_equal(recd_session_key_valid(key, 1), allowed && c != '.');
    }
    char longest[RECD_SESSION_KEY_MAX + 1];
    memset(longest, 'x', sizeof longest);
    assert_true(recd_session_key_valid(longest, RECD_SESSION_KEY_MAX));
    assert_false(recd_session_key_valid(longest, RECD_SESSION_KEY_MAX + 1));
    assert_false(recd_session_key_valid(longest, 0));
}

/* ---- JSONL documents ------------------------------------------------------------------------- */

typedef struct collect {
    int n;
    recd_msg_type types[16];
} collect;

static int collect_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    collect *c = ctx;
    if (c->n < 16)
        c->types[c->n] = m->type;
    c->n++;
    return 0;
}

static void expect_doc_error(const char *doc, const char *want)
{
    collect c = {0};
    char err[300] = "";
    int rc = recd_jsonl_read((const uint8_t *)doc, strlen(doc), collect_msg, &c, err, sizeof err);
    if (rc == 0 || !strstr(err, want))
        fail_msg("doc:\n%s\n  rc %d error \"%s\" wanted \"%s\"", doc, rc, err, want);
}

static void test_jsonl_documents(void **state)
{
    (void)state;
    char doc[4096];
    snprintf(doc, sizeof doc, "\xEF\xBB\xBF{\"type\":\"open\",\"format\":\"samp-onfoot\"}\r\n\r\n%s\n  \n%s\r\n{\"type\":\"close\"}",
             onfoot_ok, onfoot_with("\"t\":100", "\"t\":200"));
    collect c = {0};
    char err[300] = "";
    assert_int_equal(recd_jsonl_read((const uint8_t *)doc, strlen(doc), collect_msg, &c, err, sizeof err), 0);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.types[0], RECD_MSG_OPEN);
    assert_int_equal(c.types[3], RECD_MSG_CLOSE);

    snprintf(doc, sizeof doc, "{\"type\":\"open\",\"format\":\"samp-onfoot\"}\n\n%s\n",
             onfoot_with("\"health\":100", "\"health\":300"));
    expect_doc_error(doc, "line 3: state.health: 300 does not fit u8");
    expect_doc_error(onfoot_ok, "line 1: the first message must be open, got state");
    expect_doc_error("{\"type\":\"open\",\"format\":\"samp-onfoot\"}\n{\"type\":\"close\"}\n{\"type\":\"close\"}",
                     "line 3: close after close");
    expect_doc_error("{\"type\":\"open\",\"format\":\"samp-onfoot\"}\n{\"type\":\"open\",\"format\":\"samp-onfoot\"}",
                     "line 2: a second open");
    expect_doc_error("{\"type\":\"open\",\"session\":\"a\",\"format\":\"samp-onfoot\"}\n{\"type\":\"close\",\"session\":\"b\"}",
                     "line 2: close.session: \"b\" differs");
    expect_doc_error("", "empty");
    expect_doc_error("\n \n", "empty");
    /* The session format decides: a vehicle key in an on-foot session is unknown. */
    snprintf(doc, sizeof doc, "{\"type\":\"open\",\"format\":\"samp-onfoot\"}\n%s\n",
             onfoot_with("\"keys\":8", "\"keys\":8,\"vehicle_id\":3"));
    expect_doc_error(doc, "line 2: state: unknown key \"vehicle_id\"");
}

/* ---- whole .rec files ------------------------------------------------------------------------ */

static void make_rec(recd_buf *file, recd_rec_type type, int blocks, uint64_t seed)
{
    tu_rng r = {seed};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, type, RECD_REC_TIME_REJECT, recd_buf_sink(file)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    uint32_t t = 0;
    for (int i = 0; i < blocks; i++) {
        t += tu_rand_below(&r, 3) == 0 ? 0 : tu_rand_below(&r, 600);
        if (type == RECD_REC_TYPE_ONFOOT) {
            recd_rec_onfoot b = rand_onfoot(&r);
            b.time_ms = t;
            assert_int_equal(recd_rec_writer_onfoot(&w, &b), 0);
        } else {
            recd_rec_vehicle b = rand_vehicle(&r);
            b.time_ms = t;
            if (!isfinite(b.extra.train_speed)) /* the writer checks floats only, keep it tame */
                b.extra.bits = 0;
            assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
        }
    }
}

static void roundtrip_file(const recd_buf *file, recd_text_encoding enc)
{
    recd_buf text = {0}, back = {0};
    char err[300] = "";
    int rc = recd_export_text(file->data, file->len, enc, recd_buf_sink(&text), err, sizeof err);
    if (rc != 0)
        fail_msg("export: %s", err);
    recd_import_stats st;
    rc = recd_import_text(text.data, text.len, RECD_TEXT_NONE, RECD_MSG_FMT_NONE,
                          recd_buf_sink(&back), &st, err, sizeof err);
    if (rc != 0)
        fail_msg("import: %s", err);
    assert_int_equal(back.len, file->len);
    assert_memory_equal(back.data, file->data, file->len);
    recd_msg_format peek;
    assert_int_equal(recd_text_peek_format(text.data, text.len, enc, &peek, err, sizeof err), 0);
    assert_int_equal(peek, st.format);
    recd_buf_free(&text);
    recd_buf_free(&back);
}

static void test_rec_file_roundtrip(void **state)
{
    (void)state;
    for (int type = 1; type <= 2; type++) {
        for (int blocks = 0; blocks < 300; blocks += 149) {
            recd_buf file = {0};
            make_rec(&file, (recd_rec_type)type, blocks, 1000u + (uint64_t)blocks);
            roundtrip_file(&file, RECD_TEXT_JSONL);
            recd_buf_free(&file);
        }
    }
}

static void expect_export_error(const recd_buf *file, const char *want)
{
    recd_buf text = {0};
    char err[300] = "";
    int rc = recd_export_text(file->data, file->len, RECD_TEXT_JSONL, recd_buf_sink(&text), err,
                              sizeof err);
    if (rc == 0 || !strstr(err, want))
        fail_msg("rc %d error \"%s\" wanted \"%s\"", rc, err, want);
    recd_buf_free(&text);
}

static void test_export_refuses_inexact(void **state)
{
    (void)state;
    recd_buf file = {0};
    make_rec(&file, RECD_REC_TYPE_ONFOOT, 3, 5);
    assert_int_equal(recd_buf_append(&file, "xyz", 3), 0);
    expect_export_error(&file, "3 bytes after the last whole block");
    file.len -= 3;
    /* A NaN in block 1's position x (block offset 8 + 72, field offset 10). */
    st_le32(file.data + 8 + 72 + 10, 0x7FC00000u);
    expect_export_error(&file, "block 1 (offset 80): a float is NaN or infinite");
    file.len = 8;
    st_le32(file.data + 4, 0);
    expect_export_error(&file, "not a standard SA-MP recording with blocks");
    recd_buf_free(&file);
}

static void test_import_errors(void **state)
{
    (void)state;
    char doc[4096];
    recd_buf out = {0};
    char err[300] = "";
    snprintf(doc, sizeof doc, "{\"type\":\"open\",\"format\":\"samp-onfoot\"}\n%s\n%s\n",
             onfoot_with("\"t\":100", "\"t\":200"), onfoot_ok);
    int rc = recd_import_text((const uint8_t *)doc, strlen(doc), RECD_TEXT_JSONL, RECD_MSG_FMT_NONE,
                              recd_buf_sink(&out), NULL, err, sizeof err);
    assert_int_equal(rc, -EBADMSG);
    assert_non_null(strstr(err, "line 3: state.t: 100 is before the previous block's 200"));

    recd_buf_reset(&out);
    rc = recd_import_text((const uint8_t *)doc, strlen(doc), RECD_TEXT_JSONL, RECD_MSG_FMT_RECAP,
                          recd_buf_sink(&out), NULL, err, sizeof err);
    assert_int_equal(rc, -EBADMSG);
    assert_non_null(strstr(err, "line 1: open.format: the input is samp-onfoot, but recap was asked for"));
    assert_int_equal(out.len, 0);

    /* Header only: an on-foot session without blocks is the 8-byte header. */
    recd_buf_reset(&out);
    const char *empty = "{\"type\":\"open\",\"format\":\"samp-onfoot\"}\n";
    assert_int_equal(recd_import_text((const uint8_t *)empty, strlen(empty), RECD_TEXT_NONE,
                                      RECD_MSG_FMT_SAMP_ONFOOT, recd_buf_sink(&out), NULL, err,
                                      sizeof err),
                     0);
    assert_int_equal(out.len, 8);
    assert_int_equal(ld_le32(out.data), 1000);
    assert_int_equal(ld_le32(out.data + 4), 2);
    recd_buf_free(&out);
}

/* ---- Recap ----------------------------------------------------------------------------------- */

/* Every allocation made while building random Recap values, freed at the end of a test. */
typedef struct pool {
    void *p[4096];
    size_t n;
} pool;

static void *pool_alloc(pool *pl, size_t n)
{
    assert_true(pl->n < 4096);
    void *m = calloc(1, n ? n : 1);
    assert_non_null(m);
    pl->p[pl->n++] = m;
    return m;
}

static void pool_free(pool *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free(pl->p[i]);
    pl->n = 0;
}

static recd_recap_blob rand_text(tu_rng *r, pool *pl, size_t max)
{
    static const char *const pieces[] = {"a", "Z", "0", " ", ",", "\"", "\\", "\n", "\t", "\x01",
                                         "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "{", "}"};
    size_t want = tu_rand_below(r, (uint32_t)(max < 40 ? max + 1 : 40));
    uint8_t *s = pool_alloc(pl, want + 4);
    size_t n = 0;
    while (n < want) {
        const char *p = pieces[tu_rand_below(r, sizeof pieces / sizeof pieces[0])];
        size_t l = strlen(p);
        if (n + l > want)
            break;
        memcpy(s + n, p, l);
        n += l;
    }
    recd_recap_blob b = {s, n};
    return b;
}

static recd_recap_blob rand_bytes(tu_rng *r, pool *pl, size_t max)
{
    size_t n = tu_rand_below(r, (uint32_t)max + 1);
    uint8_t *s = pool_alloc(pl, n);
    for (size_t i = 0; i < n; i++)
        s[i] = (uint8_t)tu_rand(r);
    recd_recap_blob b = {s, n};
    return b;
}

static recd_recap_item rand_item(tu_rng *r, pool *pl, bool allow_empty)
{
    recd_recap_item it;
    memset(&it, 0, sizeof it);
    if (allow_empty && tu_rand_below(r, 4) == 0)
        return it;
    static const char *const keys[] = {"minecraft:diamond_sword", "minecraft:torch",
                                       "minecraft:written_book", "x"};
    it.key = recd_recap_str(keys[tu_rand_below(r, 4)]);
    it.count = (uint8_t)rand_int(r, 255);
    it.flags = (uint8_t)rand_int(r, 255);
    if (tu_rand_below(r, 2))
        it.data = rand_bytes(r, pl, 40);
    return it;
}

static void rand_value(tu_rng *r, pool *pl, const recd_recap_field *f, recd_recap_value *v)
{
    memset(v, 0, sizeof *v);
    switch (f->type) {
    case RECD_RECAP_T_U8: v->u = rand_int(r, 255); break;
    case RECD_RECAP_T_U16: v->u = rand_int(r, 65535); break;
    case RECD_RECAP_T_I32: v->i = (int32_t)rand_int(r, UINT32_MAX); break;
    case RECD_RECAP_T_I64: v->i = (int64_t)tu_rand(r); break;
    case RECD_RECAP_T_F32: v->f32 = rand_f32(r); break;
    case RECD_RECAP_T_F64: v->f64 = rand_f64(r); break;
    case RECD_RECAP_T_STR: v->blob = rand_text(r, pl, 255); break;
    case RECD_RECAP_T_TEXT: v->blob = rand_text(r, pl, 1000); break;
    case RECD_RECAP_T_BYTES: v->blob = rand_bytes(r, pl, 64); break;
    case RECD_RECAP_T_ITEM: v->item = rand_item(r, pl, true); break;
    case RECD_RECAP_T_LIST: {
        size_t rows = tu_rand_below(r, 4);
        recd_recap_value *vals = pool_alloc(pl, (rows * f->elem_count + 1) * sizeof *vals);
        for (size_t i = 0; i < rows * f->elem_count; i++)
            rand_value(r, pl, &f->elem[i % f->elem_count], &vals[i]);
        v->list.values = vals;
        v->list.count = rows;
        break;
    }
    default: fail_msg("unexpected field type in an event");
    }
}

static recd_recap_event rand_event(tu_rng *r, pool *pl, const recd_recap_tag_info *ti)
{
    recd_recap_value *vals = pool_alloc(pl, (ti->field_count + 1) * sizeof *vals);
    for (size_t i = 0; i < ti->field_count; i++)
        rand_value(r, pl, &ti->fields[i], &vals[i]);
    recd_recap_event ev = {ti->tag, ti->field_count, vals};
    return ev;
}

static void rand_state(tu_rng *r, pool *pl, recd_recap_state *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 3; i++) {
        s->pos[i] = rand_f64(r);
        s->rot[i] = rand_f64(r);
        s->vel[i] = rand_f64(r);
    }
    s->flags = (uint16_t)rand_int(r, 65535);
    s->pose = (uint8_t)rand_int(r, 255);
    s->game_mode = (uint8_t)rand_int(r, 255);
    s->hand_state = (uint8_t)rand_int(r, 255);
    s->health = rand_f32(r);
    s->absorption = rand_f32(r);
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        s->equipment[i] = rand_item(r, pl, true);
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++)
        s->inventory[i] = rand_item(r, pl, tu_rand_below(r, 8) != 0);
}

static bool same_f64(double a, double b) { return f64_to_bits(a) == f64_to_bits(b); }
static bool same_f32(float a, float b) { return f32_to_bits(a) == f32_to_bits(b); }

static void assert_state_equal(const recd_recap_state *a, const recd_recap_state *b)
{
    for (int i = 0; i < 3; i++) {
        assert_true(same_f64(a->pos[i], b->pos[i]));
        assert_true(same_f64(a->rot[i], b->rot[i]));
        assert_true(same_f64(a->vel[i], b->vel[i]));
    }
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->pose, b->pose);
    assert_int_equal(a->game_mode, b->game_mode);
    assert_int_equal(a->hand_state, b->hand_state);
    assert_true(same_f32(a->health, b->health));
    assert_true(same_f32(a->absorption, b->absorption));
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        assert_true(recd_recap_item_equal(&a->equipment[i], &b->equipment[i]));
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++)
        assert_true(recd_recap_item_equal(&a->inventory[i], &b->inventory[i]));
}

static void test_recap_state_roundtrip(void **state)
{
    (void)state;
    tu_rng r = {99};
    pool *pl = calloc(1, sizeof *pl);
    for (int i = 0; i < 300; i++) {
        recd_recap_state s;
        rand_state(&r, pl, &s);
        recd_msg m, back, copy;
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
        uint64_t tick = tu_rand(&r) >> 1;
        assert_int_equal(recd_msg_set_recap_state(&m, tick, &s), 0);
        pool_free(pl); /* the message owns its copy */
        json_roundtrip(&m, RECD_MSG_FMT_RECAP, &back);
        assert_int_equal(back.recap_state->tick, tick);
        assert_state_equal(&m.recap_state->state, &back.recap_state->state);
        assert_int_equal(recd_msg_copy(&copy, &back), 0);
        recd_msg_free(&back);
        assert_state_equal(&m.recap_state->state, &copy.recap_state->state);
        recd_msg_free(&copy);
        recd_msg_free(&m);
    }
    free(pl);
}

static void test_recap_every_event_roundtrip(void **state)
{
    (void)state;
    tu_rng r = {31337};
    pool *pl = calloc(1, sizeof *pl);
    int kinds = 0;
    for (int tag = 1; tag <= 0xFF; tag++) {
        const recd_recap_tag_info *ti = recd_recap_tag_info_get((uint8_t)tag);
        if (!ti || ti->kind != RECD_RECAP_KIND_EVENT)
            continue;
        kinds++;
        for (int i = 0; i < 40; i++) {
            recd_recap_event ev = rand_event(&r, pl, ti);
            assert_int_equal(recd_recap_event_check(&ev), 0);
            recd_msg m, back;
            recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
            assert_int_equal(recd_msg_set_recap_event(&m, (uint64_t)i * 7, &ev), 0);
            pool_free(pl);
            json_roundtrip(&m, RECD_MSG_FMT_RECAP, &back);
            assert_int_equal(back.type, RECD_MSG_EVENT);
            assert_int_equal(back.recap_event->tick, (uint64_t)i * 7);
            assert_true(recd_recap_event_equal(&m.recap_event->event, &back.recap_event->event));
            recd_msg_free(&back);
            recd_msg_free(&m);
        }
    }
    assert_true(kinds >= 30);
    free(pl);
}

static void test_recap_open_roundtrip(void **state)
{
    (void)state;
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("match-42-\"Steve\"");
    h.player_name = recd_recap_str("Steve");
    h.player_uuid = recd_recap_str("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    h.world_name = recd_recap_str("w\xc3\xb6rld");
    h.origin[0] = -0.0;
    h.origin[1] = 64.5;
    h.origin[2] = 1e-300;
    h.start_ms = 1700000000000;
    h.end_ms = 1700000060000;
    h.frame_count = 1200;
    h.weather = -3;
    h.time_of_day = 6000;
    h.skin_texture = recd_recap_str("ewogICJ0aW1lc3RhbXAiIDog");
    h.skin_signature = recd_recap_str("c2lnbmF0dXJl");
    h.has_encoder_params = true;
    h.keyframe_interval = 100;
    h.gzip_level = 9;
    h.member_limit = 4096;
    static const uint8_t ext[] = {0x40, 0x00, 0x03, 1, 2, 0};
    h.ext_unknown.data = ext;
    h.ext_unknown.len = sizeof ext;
    recd_msg m, back;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    strcpy(m.session, "mc.lobby-1");
    assert_int_equal(recd_msg_set_recap_open(&m, &h), 0);
    json_roundtrip(&m, RECD_MSG_FMT_NONE, &back);
    const recd_recap_header *a = &m.open.recap->header, *b = &back.open.recap->header;
    assert_int_equal(back.format, RECD_MSG_FMT_RECAP);
    assert_string_equal(back.session, "mc.lobby-1");
    assert_int_equal(b->name.len, a->name.len);
    assert_memory_equal(b->name.data, a->name.data, a->name.len);
    assert_memory_equal(b->world_name.data, a->world_name.data, a->world_name.len);
    assert_true(same_f64(a->origin[0], b->origin[0]) && same_f64(a->origin[2], b->origin[2]));
    assert_int_equal(b->start_ms, a->start_ms);
    assert_int_equal(b->end_ms, a->end_ms);
    assert_int_equal(b->frame_count, 1200);
    assert_int_equal(b->weather, -3);
    assert_int_equal(b->time_of_day, 6000);
    assert_int_equal(b->skin_signature.len, a->skin_signature.len);
    assert_true(b->has_encoder_params && b->keyframe_interval == 100 && b->gzip_level == 9 &&
                b->member_limit == 4096);
    assert_int_equal(b->ext_unknown.len, sizeof ext);
    assert_memory_equal(b->ext_unknown.data, ext, sizeof ext);
    assert_true(back.open.recap->has_start_time && back.open.recap->has_frame_count);
    recd_msg_free(&back);
    recd_msg_free(&m);

    /* The wire form: everything optional but the format. */
    const char *minimal = "{\"type\":\"open\",\"session\":\"s1\",\"format\":\"recap\",\"start_time\":5,\"recap\":{}}";
    assert_int_equal(recd_msg_from_json(minimal, strlen(minimal), RECD_MSG_FMT_NONE, &m, NULL, 0), 0);
    assert_false(m.open.recap->has_start_time || m.open.recap->has_end_time ||
                 m.open.recap->has_frame_count);
    assert_int_equal(m.open.recap->header.version, RECD_RECAP_VERSION);
    recd_msg_free(&m);
}

static void test_recap_bad_input(void **state)
{
    (void)state;
    const recd_msg_format R = RECD_MSG_FMT_RECAP;
    const char *st = "{\"type\":\"state\",\"tick\":3,\"pos\":[0,0,0],\"rot\":[0,0,0],\"vel\":[0,0,0],"
                     "\"flags\":0,\"pose\":0,\"game_mode\":0,\"hand_state\":0,\"health\":20,"
                     "\"absorption\":0";
    char line[1024];
    snprintf(line, sizeof line, "%s}", st);
    recd_msg m;
    assert_int_equal(recd_msg_from_json(line, strlen(line), R, &m, NULL, 0), 0);
    recd_msg_free(&m);
    snprintf(line, sizeof line, "%s,\"inventory\":[{\"slot\":0,\"key\":\"minecraft:torch\",\"count\":300}]}", st);
    expect_error(line, R, "state.inventory[0].count: 300 does not fit u8");
    snprintf(line, sizeof line, "%s,\"inventory\":[{\"slot\":41,\"key\":\"a\",\"count\":1}]}", st);
    expect_error(line, R, "state.inventory[0].slot: 41 is outside 0..40");
    snprintf(line, sizeof line, "%s,\"equipment\":[{\"slot\":1,\"key\":\"a\",\"count\":1},{\"slot\":1,\"key\":\"b\",\"count\":1}]}", st);
    expect_error(line, R, "state.equipment[1]: slot 1 appears twice");
    snprintf(line, sizeof line, "%s,\"equipment\":[{\"slot\":1,\"key\":\"\"}]}", st);
    expect_error(line, R, "state.equipment[0].key: empty");
    snprintf(line, sizeof line, "%s,\"equipment\":[{\"slot\":1,\"key\":\"a\",\"count\":1,\"data\":\"@@@@\"}]}", st);
    expect_error(line, R, "state.equipment[0].data: not valid base64");
    snprintf(line, sizeof line, "%s,\"equipment\":[{\"slot\":1,\"key\":\"a\",\"count\":1,\"nbt\":1}]}", st);
    expect_error(line, R, "state.equipment[0]: unknown key \"nbt\"");
    /* Paths with a two-digit index and every item field (joined without printf). */
    int n = snprintf(line, sizeof line, "%s,\"inventory\":[", st);
    for (int i = 0; i < 12; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s{\"slot\":%d,\"key\":\"a\",\"count\":%d}",
                      i ? "," : "", i, i == 11 ? 256 : 1);
    snprintf(line + n, sizeof line - (size_t)n, "]}");
    expect_error(line, R, "state.inventory[11].count: 256 does not fit u8");
    snprintf(line, sizeof line, "%s,\"equipment\":[{\"slot\":1,\"key\":\"a\",\"count\":1,\"flags\":-1}]}", st);
    expect_error(line, R, "state.equipment[0].flags: -1 does not fit u8");
    snprintf(line, sizeof line, "%s,\"equipment\":[{\"slot\":1,\"key\":7}]}", st);
    expect_error(line, R, "state.equipment[0].key: expected a string, got an integer");
    snprintf(line, sizeof line, "%s,\"equipment\":[{\"slot\":\"1\",\"key\":\"a\"}]}", st);
    expect_error(line, R, "state.equipment[0].slot: expected an integer, got a string");
    expect_error("{\"type\":\"state\",\"tick\":1,\"pos\":[0,0,\"z\"]}", R,
                 "state.pos[2]: expected a number, got a string");
    snprintf(line, sizeof line, "%s,\"speed\":1}", st);
    expect_error(line, R, "state: unknown key \"speed\"");
    expect_error("{\"type\":\"state\",\"tick\":1}", R, "state: missing key \"pos\"");
    snprintf(line, sizeof line, "%s,\"health\":1}", st);
    expect_error(line, R, "invalid JSON"); /* a duplicate key */
    expect_error("{\"type\":\"state\",\"tick\":3,\"pos\":[0,0,0],\"rot\":[0,0,0],\"vel\":[0,0,0],"
                 "\"flags\":0,\"pose\":0,\"game_mode\":0,\"hand_state\":0,\"health\":1e39,"
                 "\"absorption\":0}",
                 R, "state.health: 1e+39 does not fit f32");
    expect_error("{\"type\":\"event\",\"tick\":1,\"action\":\"MOVEMENT\"}", R,
                 "event.action: \"MOVEMENT\" is not a Recap event action");
    expect_error("{\"type\":\"event\",\"tick\":1,\"action\":\"NOPE\"}", R, "is not a Recap event action");
    expect_error("{\"type\":\"event\",\"action\":\"TOTEM\"}", R, "event: missing key \"tick\"");
    expect_error("{\"type\":\"event\",\"tick\":-1,\"action\":\"TOTEM\"}", R, "event.tick: -1 is outside");
    expect_error("{\"type\":\"event\",\"tick\":1,\"action\":\"TOTEM\",\"x\":1}", R, "event: unknown key \"x\"");
    expect_error("{\"type\":\"event\",\"tick\":1,\"action\":\"CHAT_MESSAGE\"}", R,
                 "event: missing key \"message\"");
    expect_error("{\"type\":\"event\",\"tick\":1,\"action\":\"SWING_ARM\",\"hand\":256}", R,
                 "event.hand: 256 does not fit u8");
    char longstr[600];
    memset(longstr, 'a', 300);
    longstr[300] = 0;
    snprintf(line, sizeof line,
             "{\"type\":\"event\",\"tick\":1,\"action\":\"VEHICLE_ENTER\",\"entity_id\":1,\"entity_type\":\"%s\"}",
             longstr);
    expect_error(line, R, "event.entity_type: 300 bytes, at most 255 fit");
    expect_error("{\"type\":\"event\",\"tick\":1,\"action\":\"EXPLOSION\",\"x\":0,\"y\":0,\"z\":0,"
                 "\"power\":1,\"blocks\":[{\"x\":1,\"y\":2}]}",
                 R, "event.blocks[0]: missing key \"z\"");
    expect_error("{\"type\":\"open\",\"format\":\"recap\",\"recap\":{\"encoder\":{\"keyframe_interval\":1,"
                 "\"gzip_level\":10,\"member_limit\":1}}}",
                 R, "open.recap.encoder.gzip_level: 10 is outside 1..9");
    expect_error("{\"type\":\"open\",\"format\":\"recap\",\"recap\":{\"nam\":\"x\"}}", R,
                 "open.recap: unknown key \"nam\"");
    expect_error("{\"type\":\"open\",\"format\":\"recap\",\"recap\":[]}", R,
                 "open.recap: expected an object");
    expect_error("{\"type\":\"open\",\"format\":\"recap\",\"recap\":{\"version\":5}}", R,
                 "open.recap.version: 5 is outside 1..4");
}

/* A .recap written by the encoder with random states, skipped ticks, events and flushes. */
static void make_recap(recd_buf *file, uint64_t seed, int ticks)
{
    tu_rng r = {seed};
    pool *pl = calloc(1, sizeof *pl);
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("test");
    h.player_name = recd_recap_str("Alex");
    h.player_uuid = recd_recap_str("00000000-0000-0000-0000-000000000001");
    h.world_name = recd_recap_str("world");
    h.start_ms = 1700000000000 + (int64_t)seed;
    h.weather = 1;
    h.time_of_day = 1000;
    recd_recap_encoder_options opt = {.keyframe_interval = 50, .gzip_level = 6, .member_limit = 2048};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(file)), 0);
    recd_recap_state s;
    rand_state(&r, pl, &s);
    for (int i = 0; i < 3; i++) {
        s.pos[i] = tu_rand_double(&r, -1000, 1000);
        s.rot[i] = tu_rand_double(&r, -180, 180);
        s.vel[i] = 0;
    }
    uint64_t tick = 0;
    for (int i = 0; i < ticks; i++) {
        s.pos[0] += tu_rand_double(&r, -0.3, 0.3);
        s.pos[2] += tu_rand_below(&r, 50) == 0 ? 5000.123 : tu_rand_double(&r, -0.3, 0.3);
        s.rot[0] = tu_rand_double(&r, -180, 180);
        if (tu_rand_below(&r, 20) == 0)
            s.inventory[tu_rand_below(&r, 41)] = rand_item(&r, pl, true);
        if (tu_rand_below(&r, 10) == 0)
            s.health = (float)tu_rand_double(&r, 0, 20);
        recd_recap_event evs[3];
        size_t n = tu_rand_below(&r, 3) == 0 ? tu_rand_below(&r, 4) : 0;
        for (size_t k = 0; k < n; k++) {
            const recd_recap_tag_info *ti;
            do {
                ti = recd_recap_tag_info_get((uint8_t)(1 + tu_rand_below(&r, RECD_RECAP_TAG_LAST)));
            } while (!ti || ti->kind != RECD_RECAP_KIND_EVENT);
            evs[k] = rand_event(&r, pl, ti);
        }
        assert_int_equal(recd_recap_encoder_tick(e, tick, &s, evs, n), 0);
        tick += tu_rand_below(&r, 6) == 0 ? 1 + tu_rand_below(&r, 600) : 1;
        if (tu_rand_below(&r, 30) == 0)
            assert_int_equal(recd_recap_encoder_flush(e), 0);
        if (tu_rand_below(&r, 40) == 0) {
            assert_int_equal(recd_recap_encoder_flush_at(e, tick), 0);
            tick++;
        }
        pool_free(pl);
        rand_state(&r, pl, &s); /* fresh item storage; keep the moving parts */
    }
    tu_recap_finish(e, file);
    pool_free(pl);
    free(pl);
}

static void test_recap_file_roundtrip(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        recd_buf file = {0};
        make_recap(&file, seed, 150);
        assert_int_equal(recd_recap_verify(file.data, file.len, NULL, NULL), 0);
        roundtrip_file(&file, RECD_TEXT_JSONL);
        recd_buf_free(&file);
    }
}

static void test_recap_import_rules(void **state)
{
    (void)state;
    const char *open = "{\"type\":\"open\",\"format\":\"recap\",\"start_time\":1000,\"recap\":{\"name\":\"n\"}}\n";
    const char *st = "{\"type\":\"state\",\"tick\":%d,\"pos\":[0,64,0],\"rot\":[0,0,0],\"vel\":[0,0,0],"
                     "\"flags\":0,\"pose\":0,\"game_mode\":0,\"hand_state\":0,\"health\":20,\"absorption\":0}\n";
    char doc[4096], s1[512], s2[512];
    recd_buf out = {0};
    char err[300];
    recd_import_stats stats;
    snprintf(s1, sizeof s1, st, 0);
    snprintf(s2, sizeof s2, st, 40);
    snprintf(doc, sizeof doc, "%s%s{\"type\":\"event\",\"tick\":0,\"action\":\"CHAT_MESSAGE\",\"message\":\"hi\"}\n%s"
             "{\"type\":\"flush\",\"end_tick\":100}\n{\"type\":\"close\"}\n", open, s1, s2);
    int rc = recd_import_text((const uint8_t *)doc, strlen(doc), RECD_TEXT_NONE, RECD_MSG_FMT_RECAP,
                              recd_buf_sink(&out), &stats, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(stats.states, 2);
    assert_int_equal(stats.events, 1);
    assert_int_equal(stats.flushes, 1);
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_verify(out.data, out.len, &res, NULL), 0);
    assert_int_equal(res.ticks, 100); /* end_tick 100: ticks 41..99 unchanged */
    assert_int_equal(res.header.frame_count, 100);
    assert_int_equal(res.header.start_ms, 1000); /* from open.start_time */

    /* Ticks only move forward; the first tick carries a state. */
    snprintf(doc, sizeof doc, "%s%s%s%s", open, s2, s1, "");
    recd_buf_reset(&out);
    rc = recd_import_text((const uint8_t *)doc, strlen(doc), RECD_TEXT_NONE, RECD_MSG_FMT_NONE,
                          recd_buf_sink(&out), NULL, err, sizeof err);
    assert_int_equal(rc, -EBADMSG);
    assert_non_null(strstr(err, "line 3: state.tick: 0, but tick 40 came before"));
    snprintf(doc, sizeof doc, "%s{\"type\":\"event\",\"tick\":0,\"action\":\"TOTEM\"}\n%s", open, s2);
    rc = recd_import_text((const uint8_t *)doc, strlen(doc), RECD_TEXT_NONE, RECD_MSG_FMT_NONE,
                          recd_buf_sink(&out), NULL, err, sizeof err);
    assert_int_equal(rc, -EBADMSG);
    assert_non_null(strstr(err, "line 3: tick 0: the first tick needs a state"));
    snprintf(doc, sizeof doc, "%s%s%s", open, s1, s1);
    rc = recd_import_text((const uint8_t *)doc, strlen(doc), RECD_TEXT_NONE, RECD_MSG_FMT_NONE,
                          recd_buf_sink(&out), NULL, err, sizeof err);
    assert_non_null(strstr(err, "line 3: state.tick: a second state for tick 0"));
    recd_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onfoot_roundtrip_random),
        cmocka_unit_test(test_key_order_does_not_matter),
        cmocka_unit_test(test_vehicle_roundtrip_random),
        cmocka_unit_test(test_random_block_bytes_exact),
        cmocka_unit_test(test_float_text),
        cmocka_unit_test(test_writer_refuses_nan_inf),
        cmocka_unit_test(test_infer_state_format),
        cmocka_unit_test(test_bad_json),
        cmocka_unit_test(test_bad_fields),
        cmocka_unit_test(test_session_keys),
        cmocka_unit_test(test_jsonl_documents),
        cmocka_unit_test(test_rec_file_roundtrip),
        cmocka_unit_test(test_export_refuses_inexact),
        cmocka_unit_test(test_import_errors),
        cmocka_unit_test(test_recap_state_roundtrip),
        cmocka_unit_test(test_recap_every_event_roundtrip),
        cmocka_unit_test(test_recap_open_roundtrip),
        cmocka_unit_test(test_recap_bad_input),
        cmocka_unit_test(test_recap_file_roundtrip),
        cmocka_unit_test(test_recap_import_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
