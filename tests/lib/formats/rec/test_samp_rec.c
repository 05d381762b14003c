/* SPDX-License-Identifier: MIT */
/* Unit tests for the SA-MP .rec codec, writer and probe (lib/src/formats/rec/samp_rec_*.c): field offsets,
 * bit layouts, exact round trips, writer rules and layout identification on synthetic files. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/rec/rec_format.h"
#include "formats/rec/samp_rec_detect.h"
#include "recd/samp_rec.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* Checks that blk holds want at off and zero everywhere else. */
static void expect_only(const uint8_t *blk, size_t n, size_t off, const uint8_t *want, size_t wn)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t expected = (i >= off && i < off + wn) ? want[i - off] : 0;
        if (blk[i] != expected)
            fail_msg("byte %zu is 0x%02x, expected 0x%02x (field at offset %zu)", i, blk[i], expected, off);
    }
}

#define ONFOOT_FIELD(assign, off, ...)                                                            \
    do {                                                                                          \
        recd_rec_onfoot b_, back_;                                                                \
        memset(&b_, 0, sizeof b_);                                                                \
        assign;                                                                                   \
        uint8_t o_[RECD_REC_ONFOOT_BLOCK_SIZE], again_[RECD_REC_ONFOOT_BLOCK_SIZE];               \
        recd_rec_onfoot_encode(&b_, o_);                                                          \
        const uint8_t w_[] = {__VA_ARGS__};                                                       \
        expect_only(o_, sizeof o_, off, w_, sizeof w_);                                           \
        recd_rec_onfoot_decode(o_, &back_);                                                       \
        recd_rec_onfoot_encode(&back_, again_);                                                   \
        assert_memory_equal(o_, again_, sizeof o_);                                               \
    } while (0)

#define VEHICLE_FIELD(assign, off, ...)                                                           \
    do {                                                                                          \
        recd_rec_vehicle b_, back_;                                                               \
        memset(&b_, 0, sizeof b_);                                                                \
        assign;                                                                                   \
        uint8_t o_[RECD_REC_VEHICLE_BLOCK_SIZE], again_[RECD_REC_VEHICLE_BLOCK_SIZE];             \
        recd_rec_vehicle_encode(&b_, o_);                                                         \
        const uint8_t w_[] = {__VA_ARGS__};                                                       \
        expect_only(o_, sizeof o_, off, w_, sizeof w_);                                           \
        recd_rec_vehicle_decode(o_, &back_);                                                      \
        recd_rec_vehicle_encode(&back_, again_);                                                  \
        assert_memory_equal(o_, again_, sizeof o_);                                               \
    } while (0)

/* A float whose little-endian bytes are 11 22 33 44 (any distinctive pattern will do). */
#define F_1234 f32_from_bits(0x44332211u)
#define B_1234 0x11, 0x22, 0x33, 0x44

typedef struct call_log {
    recd_buf data;
    size_t calls;
    size_t sizes[64];
    int fail_with; /* when nonzero, every write fails with it */
} call_log;

static int log_write(void *ctx, const void *data, size_t len)
{
    call_log *l = ctx;
    if (l->fail_with)
        return l->fail_with;
    if (l->calls < 64)
        l->sizes[l->calls] = len;
    l->calls++;
    return recd_buf_append(&l->data, data, len);
}

static recd_sink log_sink(call_log *l)
{
    recd_sink s = {log_write, l};
    return s;
}

static recd_quat yaw_quat(float yaw)
{
    recd_quat q = {cosf(yaw / 2), 0.0f, 0.0f, sinf(yaw / 2)};
    return q;
}

static recd_rec_onfoot sample_onfoot(uint32_t t)
{
    recd_rec_onfoot b;
    memset(&b, 0, sizeof b);
    b.time_ms = t;
    b.position.x = 2500.0f + (float)t / 1000.0f;
    b.position.y = -1670.0f;
    b.position.z = 13.5f;
    b.rotation = yaw_quat((float)t / 5000.0f);
    b.health = 100;
    b.anim_id = 1189;
    b.anim_flags = recd_rec_anim_flags_unpack(0x8004);
    return b;
}

static recd_rec_vehicle sample_vehicle(uint32_t t)
{
    recd_rec_vehicle b;
    memset(&b, 0, sizeof b);
    b.time_ms = t;
    b.vehicle_id = 13;
    b.rotation = yaw_quat(0.3f + (float)t / 9000.0f);
    b.position.x = 2008.0f;
    b.position.y = -2493.0f + (float)t / 100.0f;
    b.position.z = 13.4f;
    b.velocity.y = 0.5f;
    b.vehicle_health = 1000.0f;
    b.driver_health = 100;
    return b;
}

/* A standard file of n blocks, times start, start+step, ... */
static void build_onfoot_file(recd_buf *out, size_t n, uint32_t start, uint32_t step)
{
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, recd_buf_sink(out)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    for (size_t i = 0; i < n; i++) {
        recd_rec_onfoot b = sample_onfoot(start + (uint32_t)i * step);
        assert_int_equal(recd_rec_writer_onfoot(&w, &b), 0);
    }
}

static void build_vehicle_file(recd_buf *out, size_t n, uint32_t start, uint32_t step)
{
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT, recd_buf_sink(out)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    for (size_t i = 0; i < n; i++) {
        recd_rec_vehicle b = sample_vehicle(start + (uint32_t)i * step);
        assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
    }
}

static void put_header(recd_buf *out, uint32_t sig, uint32_t type)
{
    uint8_t h[8];
    st_le32(h, sig);
    st_le32(h + 4, type);
    assert_int_equal(recd_buf_append(out, h, 8), 0);
}

/* Also checks, on every lookup, that no message was cut at the report's 200-byte limit. */
static const recd_problem *find_problem(const recd_report *r, const char *code)
{
    for (size_t i = 0; i < r->count; i++)
        if (strlen(r->items[i].message) >= sizeof r->items[i].message - 1)
            fail_msg("message truncated: %s", r->items[i].message);
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->items[i].code, code) == 0)
            return &r->items[i];
    return NULL;
}

static size_t count_problems(const recd_report *r, const char *code)
{
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++)
        n += strcmp(r->items[i].code, code) == 0;
    return n;
}

static void dump_report(const recd_report *r)
{
    for (size_t i = 0; i < r->count; i++)
        printf("  [%d] @%llu %s: %s\n", r->items[i].severity, (unsigned long long)r->items[i].offset,
               r->items[i].code, r->items[i].message);
}

/* ---- codec: field offsets ----------------------------------------------------------------- */

static void test_onfoot_field_offsets(void **state)
{
    (void)state;
    ONFOOT_FIELD(b_.time_ms = 0x04030201u, 0, 0x01, 0x02, 0x03, 0x04);
    ONFOOT_FIELD(b_.left_right = -128, 4, 0x80, 0xFF);
    ONFOOT_FIELD(b_.up_down = 0x1234, 6, 0x34, 0x12);
    ONFOOT_FIELD(b_.keys = 0xBEEF, 8, 0xEF, 0xBE);
    ONFOOT_FIELD(b_.position.x = F_1234, 10, B_1234);
    ONFOOT_FIELD(b_.position.y = F_1234, 14, B_1234);
    ONFOOT_FIELD(b_.position.z = F_1234, 18, B_1234);
    ONFOOT_FIELD(b_.rotation.w = F_1234, 22, B_1234);
    ONFOOT_FIELD(b_.rotation.x = F_1234, 26, B_1234);
    ONFOOT_FIELD(b_.rotation.y = F_1234, 30, B_1234);
    ONFOOT_FIELD(b_.rotation.z = F_1234, 34, B_1234);
    ONFOOT_FIELD(b_.health = 0xA1, 38, 0xA1);
    ONFOOT_FIELD(b_.armour = 0xA2, 39, 0xA2);
    ONFOOT_FIELD(b_.weapon = 0x2A, 40, 0x2A);
    ONFOOT_FIELD(b_.additional_key = 2, 40, 0x80);
    ONFOOT_FIELD(b_.special_action = 0xA3, 41, 0xA3);
    ONFOOT_FIELD(b_.velocity.x = F_1234, 42, B_1234);
    ONFOOT_FIELD(b_.velocity.y = F_1234, 46, B_1234);
    ONFOOT_FIELD(b_.velocity.z = F_1234, 50, B_1234);
    ONFOOT_FIELD(b_.surf_offset.x = F_1234, 54, B_1234);
    ONFOOT_FIELD(b_.surf_offset.y = F_1234, 58, B_1234);
    ONFOOT_FIELD(b_.surf_offset.z = F_1234, 62, B_1234);
    ONFOOT_FIELD(b_.surf_id = 0x07D5, 66, 0xD5, 0x07);
    ONFOOT_FIELD(b_.anim_id = 0x04A5, 68, 0xA5, 0x04);
    ONFOOT_FIELD(b_.anim_flags.frame_delta = 0xE8, 70, 0xE8, 0x00);
    ONFOOT_FIELD(b_.anim_flags.loop = 1, 70, 0x00, 0x01);
    ONFOOT_FIELD(b_.anim_flags.time = 8, 70, 0x00, 0x80);
}

static void test_vehicle_field_offsets(void **state)
{
    (void)state;
    VEHICLE_FIELD(b_.time_ms = 0x04030201u, 0, 0x01, 0x02, 0x03, 0x04);
    VEHICLE_FIELD(b_.vehicle_id = 0x0407, 4, 0x07, 0x04);
    VEHICLE_FIELD(b_.left_right = -103, 6, 0x99, 0xFF);
    VEHICLE_FIELD(b_.up_down = 128, 8, 0x80, 0x00);
    VEHICLE_FIELD(b_.keys = 0xBEEF, 10, 0xEF, 0xBE);
    VEHICLE_FIELD(b_.rotation.w = F_1234, 12, B_1234);
    VEHICLE_FIELD(b_.rotation.x = F_1234, 16, B_1234);
    VEHICLE_FIELD(b_.rotation.y = F_1234, 20, B_1234);
    VEHICLE_FIELD(b_.rotation.z = F_1234, 24, B_1234);
    VEHICLE_FIELD(b_.position.x = F_1234, 28, B_1234);
    VEHICLE_FIELD(b_.position.y = F_1234, 32, B_1234);
    VEHICLE_FIELD(b_.position.z = F_1234, 36, B_1234);
    VEHICLE_FIELD(b_.velocity.x = F_1234, 40, B_1234);
    VEHICLE_FIELD(b_.velocity.y = F_1234, 44, B_1234);
    VEHICLE_FIELD(b_.velocity.z = F_1234, 48, B_1234);
    VEHICLE_FIELD(b_.vehicle_health = F_1234, 52, B_1234);
    VEHICLE_FIELD(b_.driver_health = 0xA1, 56, 0xA1);
    VEHICLE_FIELD(b_.driver_armour = 0xA2, 57, 0xA2);
    VEHICLE_FIELD(b_.weapon = 22, 58, 22);
    VEHICLE_FIELD(b_.additional_key = 3, 58, 0xC0);
    VEHICLE_FIELD(b_.siren = 1, 59, 0x01);
    VEHICLE_FIELD(b_.landing_gear = 1, 60, 0x01);
    VEHICLE_FIELD(b_.trailer_id = 0xFFFE, 61, 0xFE, 0xFF);
    VEHICLE_FIELD(b_.extra.bits = 0x44332211u, 63, B_1234);
}

static void test_legacy_field_offsets(void **state)
{
    (void)state;
    recd_rec_legacy_onfoot f;
    memset(&f, 0, sizeof f);
    f.facing_angle_deg = F_1234;
    uint8_t o56[56];
    recd_rec_legacy_onfoot_encode(&f, o56);
    expect_only(o56, 56, 22, (const uint8_t[]){B_1234}, 4);
    memset(&f, 0, sizeof f);
    f.surf_id = 0x0102;
    recd_rec_legacy_onfoot_encode(&f, o56);
    expect_only(o56, 56, 54, (const uint8_t[]){0x02, 0x01}, 2);
    memset(&f, 0, sizeof f);
    f.weapon = 5;
    f.additional_key = 1;
    f.special_action = 7;
    recd_rec_legacy_onfoot_encode(&f, o56);
    expect_only(o56, 56, 28, (const uint8_t[]){0x45, 0x07}, 2);

    recd_rec_legacy_vehicle v;
    memset(&v, 0, sizeof v);
    v.direction.z = F_1234;
    uint8_t o75[75];
    recd_rec_legacy_vehicle_encode(&v, o75);
    expect_only(o75, 75, 32, (const uint8_t[]){B_1234}, 4);
    memset(&v, 0, sizeof v);
    v.extra = recd_rec_hydra_extra(5000, 5000);
    recd_rec_legacy_vehicle_encode(&v, o75);
    expect_only(o75, 75, 71, (const uint8_t[]){0x88, 0x13, 0x88, 0x13}, 4);
    memset(&v, 0, sizeof v);
    v.vehicle_health = F_1234;
    recd_rec_legacy_vehicle_encode(&v, o75);
    expect_only(o75, 75, 60, (const uint8_t[]){B_1234}, 4);
}

/* ---- codec: bit fields ---------------------------------------------------------------------- */

static void test_anim_flags_every_bit(void **state)
{
    (void)state;
    for (int bit = 0; bit < 16; bit++) {
        uint16_t raw = (uint16_t)(1u << bit);
        recd_rec_anim_flags f = recd_rec_anim_flags_unpack(raw);
        assert_int_equal(f.frame_delta, bit < 8 ? raw : 0);
        assert_int_equal(f.loop, bit == 8);
        assert_int_equal(f.lock_x, bit == 9);
        assert_int_equal(f.lock_y, bit == 10);
        assert_int_equal(f.freeze, bit == 11);
        assert_int_equal(f.time, bit >= 12 ? 1u << (bit - 12) : 0);
        assert_int_equal(recd_rec_anim_flags_pack(f), raw);
    }
    for (uint32_t raw = 0; raw <= 0xFFFF; raw++)
        assert_int_equal(recd_rec_anim_flags_pack(recd_rec_anim_flags_unpack((uint16_t)raw)), raw);
    recd_rec_anim_flags f = recd_rec_anim_flags_unpack(0x1104); /* observed: loop, time 1, delta 4 */
    assert_int_equal(f.frame_delta, 4);
    assert_int_equal(f.loop, 1);
    assert_int_equal(f.time, 1);
}

static void test_weapon_additional_key_bits(void **state)
{
    (void)state;
    for (unsigned raw = 0; raw < 256; raw++) {
        uint8_t blk[RECD_REC_VEHICLE_BLOCK_SIZE] = {0}, again[RECD_REC_VEHICLE_BLOCK_SIZE];
        blk[58] = (uint8_t)raw;
        recd_rec_vehicle v;
        recd_rec_vehicle_decode(blk, &v);
        assert_int_equal(v.weapon, raw & 0x3F);
        assert_int_equal(v.additional_key, raw >> 6);
        recd_rec_vehicle_encode(&v, again);
        assert_memory_equal(blk, again, sizeof blk);
    }
    recd_rec_onfoot b = sample_onfoot(0);
    b.weapon = 63;
    b.additional_key = 3;
    assert_int_equal(recd_rec_onfoot_check(&b), 0);
    b.weapon = 64;
    assert_int_equal(recd_rec_onfoot_check(&b), -EINVAL);
    b.weapon = 0;
    b.additional_key = 4;
    assert_int_equal(recd_rec_onfoot_check(&b), -EINVAL);
    recd_rec_vehicle v = sample_vehicle(0);
    v.additional_key = 4;
    assert_int_equal(recd_rec_vehicle_check(&v), -EINVAL);
}

static void test_surf_classify_boundaries(void **state)
{
    (void)state;
    assert_int_equal(recd_rec_surf_classify(0), RECD_REC_SURF_NONE);
    assert_int_equal(recd_rec_surf_classify(1), RECD_REC_SURF_VEHICLE);
    assert_int_equal(recd_rec_surf_classify(1999), RECD_REC_SURF_VEHICLE);
    assert_int_equal(recd_rec_surf_classify(2000), RECD_REC_SURF_OBJECT);
    assert_int_equal(recd_rec_surf_classify(2999), RECD_REC_SURF_OBJECT);
    assert_int_equal(recd_rec_surf_classify(3000), RECD_REC_SURF_OTHER);
    assert_int_equal(recd_rec_surf_classify(0xFFFE), RECD_REC_SURF_OTHER);
    assert_int_equal(recd_rec_surf_classify(0xFFFF), RECD_REC_SURF_NONE);
}

static void test_hydra_train_union(void **state)
{
    (void)state;
    recd_rec_vehicle v = sample_vehicle(10), back;
    v.extra = recd_rec_hydra_extra(5000, 1234);
    uint8_t blk[RECD_REC_VEHICLE_BLOCK_SIZE];
    recd_rec_vehicle_encode(&v, blk);
    assert_memory_equal(blk + 63, ((const uint8_t[]){0x88, 0x13, 0xD2, 0x04}), 4);
    recd_rec_vehicle_decode(blk, &back);
    assert_int_equal(recd_rec_hydra_thrust(back.extra, 0), 5000);
    assert_int_equal(recd_rec_hydra_thrust(back.extra, 1), 1234);

    v.extra.train_speed = -0.17f;
    recd_rec_vehicle_encode(&v, blk);
    assert_int_equal(ld_le32(blk + 63), f32_to_bits(-0.17f));
    recd_rec_vehicle_decode(blk, &back);
    assert_int_equal(f32_to_bits(back.extra.train_speed), f32_to_bits(-0.17f));
    assert_int_equal(back.extra.bits, f32_to_bits(-0.17f));
}

/* ---- codec: exact round trips --------------------------------------------------------------- */

static void fill_random(tu_rng *rng, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)tu_rand(rng);
}

/* Puts NaN payloads, -0.0 and infinities into float slots now and then. */
static void sprinkle_special_floats(tu_rng *rng, uint8_t *p, size_t n)
{
    static const uint32_t specials[] = {0x7FC00001u, 0xFFBFFFFFu, 0x7F800001u, 0x80000000u,
                                        0x7F800000u, 0xFF800000u, 0x00000001u};
    for (size_t off = 10; off + 4 <= n; off += 4)
        if (tu_rand_below(rng, 5) == 0)
            st_le32(p + off, specials[tu_rand_below(rng, sizeof specials / sizeof specials[0])]);
}

static void test_random_roundtrip(void **state)
{
    (void)state;
    tu_rng rng = {0x5A3Dull};
    for (int i = 0; i < 5000; i++) {
        uint8_t in[RECD_REC_ONFOOT_BLOCK_SIZE], out[RECD_REC_ONFOOT_BLOCK_SIZE], out2[RECD_REC_ONFOOT_BLOCK_SIZE];
        fill_random(&rng, in, sizeof in);
        sprinkle_special_floats(&rng, in, sizeof in);
        recd_rec_onfoot a, b;
        recd_rec_onfoot_decode(in, &a);
        recd_rec_onfoot_encode(&a, out);
        assert_memory_equal(in, out, sizeof in);
        recd_rec_onfoot_decode(out, &b); /* decode(encode(x)) == x, compared bit for bit */
        recd_rec_onfoot_encode(&b, out2);
        assert_memory_equal(out, out2, sizeof out);
        assert_int_equal(f32_to_bits(a.rotation.w), f32_to_bits(b.rotation.w));
        assert_int_equal(a.left_right, b.left_right);
    }
    for (int i = 0; i < 5000; i++) {
        uint8_t in[RECD_REC_VEHICLE_BLOCK_SIZE], out[RECD_REC_VEHICLE_BLOCK_SIZE];
        fill_random(&rng, in, sizeof in);
        sprinkle_special_floats(&rng, in, sizeof in);
        recd_rec_vehicle a;
        recd_rec_vehicle_decode(in, &a);
        recd_rec_vehicle_encode(&a, out);
        assert_memory_equal(in, out, sizeof in);
    }
    for (int i = 0; i < 2000; i++) {
        uint8_t in56[56], out56[56], in75[75], out75[75];
        fill_random(&rng, in56, sizeof in56);
        fill_random(&rng, in75, sizeof in75);
        recd_rec_legacy_onfoot f;
        recd_rec_legacy_vehicle v;
        recd_rec_legacy_onfoot_decode(in56, &f);
        recd_rec_legacy_onfoot_encode(&f, out56);
        assert_memory_equal(in56, out56, sizeof in56);
        recd_rec_legacy_vehicle_decode(in75, &v);
        recd_rec_legacy_vehicle_encode(&v, out75);
        assert_memory_equal(in75, out75, sizeof in75);
    }
}

static void test_struct_roundtrip_keeps_signed_zero_and_nan(void **state)
{
    (void)state;
    recd_rec_onfoot a = sample_onfoot(1), b;
    a.velocity.x = -0.0f;
    a.surf_offset.y = f32_from_bits(0x7FA12345u); /* signalling NaN with a payload */
    a.left_right = -32768;
    uint8_t blk[RECD_REC_ONFOOT_BLOCK_SIZE];
    recd_rec_onfoot_encode(&a, blk);
    recd_rec_onfoot_decode(blk, &b);
    assert_int_equal(f32_to_bits(b.velocity.x), 0x80000000u);
    assert_int_equal(f32_to_bits(b.surf_offset.y), 0x7FA12345u);
    assert_int_equal(b.left_right, -32768);
    assert_int_equal(recd_rec_onfoot_check(&a), -EINVAL);
}

/* ---- writer ------------------------------------------------------------------------------- */

static void test_writer_header_and_whole_blocks(void **state)
{
    (void)state;
    call_log log = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT, log_sink(&log)), 0);
    assert_int_equal(log.calls, 0);
    recd_rec_vehicle b = sample_vehicle(100);
    assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0); /* header comes implicitly */
    b.time_ms = 150;
    assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0); /* already written: no-op */
    assert_int_equal(log.calls, 3);
    assert_int_equal(log.sizes[0], 8);
    assert_int_equal(log.sizes[1], 67);
    assert_int_equal(log.sizes[2], 67);
    assert_memory_equal(log.data.data, ((const uint8_t[]){0xE8, 0x03, 0, 0, 0x01, 0, 0, 0}), 8);
    assert_int_equal(w.blocks, 2);
    recd_buf_free(&log.data);

    call_log log2 = {0};
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, log_sink(&log2)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    recd_rec_onfoot f = sample_onfoot(0);
    assert_int_equal(recd_rec_writer_onfoot(&w, &f), 0);
    assert_int_equal(log2.calls, 2);
    assert_int_equal(log2.sizes[1], 72);
    assert_memory_equal(log2.data.data, ((const uint8_t[]){0xE8, 0x03, 0, 0, 0x02, 0, 0, 0}), 8);
    recd_buf_free(&log2.data);
}

static void test_writer_time_reject(void **state)
{
    (void)state;
    call_log log = {0};
    recd_rec_writer w;
    recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, log_sink(&log));
    recd_rec_onfoot b = sample_onfoot(500);
    assert_int_equal(recd_rec_writer_onfoot(&w, &b), 0);
    size_t before = log.data.len;
    b.time_ms = 499;
    assert_int_equal(recd_rec_writer_onfoot(&w, &b), -ERANGE);
    assert_int_equal(log.data.len, before);
    b.time_ms = 500; /* equal is allowed: a burst */
    assert_int_equal(recd_rec_writer_onfoot(&w, &b), 0);
    assert_int_equal(w.blocks, 2);
    assert_int_equal(w.clamped, 0);
    recd_buf_free(&log.data);
}

static void test_writer_time_clamp(void **state)
{
    (void)state;
    call_log log = {0};
    recd_rec_writer w;
    recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_CLAMP, log_sink(&log));
    recd_rec_vehicle b = sample_vehicle(1000);
    assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
    b.time_ms = 10;
    assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
    assert_int_equal(w.clamped, 1);
    assert_int_equal(ld_le32(log.data.data + 8 + 67), 1000);
    b.time_ms = 1200;
    assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
    assert_int_equal(w.clamped, 1);
    assert_int_equal(w.last_time_ms, 1200);
    recd_buf_free(&log.data);
}

static void test_writer_refuses_nan_inf(void **state)
{
    (void)state;
    call_log log = {0};
    recd_rec_writer w;
    recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, log_sink(&log));
    recd_rec_onfoot b = sample_onfoot(0);
    b.position.z = NAN;
    assert_int_equal(recd_rec_writer_onfoot(&w, &b), -EINVAL);
    b = sample_onfoot(0);
    b.rotation.x = INFINITY;
    assert_int_equal(recd_rec_writer_onfoot(&w, &b), -EINVAL);
    b = sample_onfoot(0);
    b.surf_offset.x = -INFINITY;
    assert_int_equal(recd_rec_writer_onfoot(&w, &b), -EINVAL);
    assert_int_equal(log.calls, 0); /* not even the header */
    assert_false(w.header_written);

    recd_rec_writer wv;
    recd_rec_writer_init(&wv, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT, log_sink(&log));
    recd_rec_vehicle v = sample_vehicle(0);
    assert_int_equal(recd_rec_writer_vehicle(&wv, &v), 0);
    size_t calls = log.calls;
    v.vehicle_health = NAN;
    assert_int_equal(recd_rec_writer_vehicle(&wv, &v), -EINVAL);
    v = sample_vehicle(1);
    v.velocity.z = INFINITY;
    assert_int_equal(recd_rec_writer_vehicle(&wv, &v), -EINVAL);
    assert_int_equal(log.calls, calls);
    assert_int_equal(wv.blocks, 1);
    recd_buf_free(&log.data);
}

/* The in-place check agrees with decode + struct check on every block, with NaN and infinity
 * bit patterns dropped at any offset (so every float field and the bytes around them are hit). */
static void test_block_check_matches_struct_check(void **state)
{
    (void)state;
    static const uint32_t specials[] = {0x7FC00001u, 0xFFBFFFFFu, 0x7F800001u, 0x7F800000u,
                                        0xFF800000u, 0x7F7FFFFFu, 0x80000000u};
    tu_rng rng = {0xB10Cull};
    size_t rejected[2] = {0, 0};
    for (int i = 0; i < 20000; i++) {
        bool foot = i % 2 == 0;
        size_t n = foot ? RECD_REC_ONFOOT_BLOCK_SIZE : RECD_REC_VEHICLE_BLOCK_SIZE;
        uint8_t blk[RECD_REC_ONFOOT_BLOCK_SIZE];
        fill_random(&rng, blk, n);
        for (size_t k = 0, m = tu_rand_below(&rng, 3); k < m; k++)
            st_le32(blk + tu_rand_below(&rng, (uint32_t)(n - 3)),
                    specials[tu_rand_below(&rng, sizeof specials / sizeof specials[0])]);
        int want;
        if (foot) {
            recd_rec_onfoot b;
            recd_rec_onfoot_decode(blk, &b);
            want = recd_rec_onfoot_check(&b);
        } else {
            recd_rec_vehicle b;
            recd_rec_vehicle_decode(blk, &b);
            want = recd_rec_vehicle_check(&b);
        }
        recd_rec_type type = foot ? RECD_REC_TYPE_ONFOOT : RECD_REC_TYPE_VEHICLE;
        assert_int_equal(recd_rec_block_check(type, blk), want);
        assert_int_equal(recd_rec_fields_check(type, blk + 4), want);
        rejected[foot] += want < 0;
    }
    assert_true(rejected[0] > 1000 && rejected[1] > 1000); /* both answers were exercised */
    uint8_t zero[RECD_REC_ONFOOT_BLOCK_SIZE] = {0};
    assert_int_equal(recd_rec_block_check(RECD_REC_TYPE_NONE, zero), -EINVAL);
    assert_int_equal(recd_rec_fields_check(RECD_REC_TYPE_NONE, zero), -EINVAL);
}

static void test_header_encode(void **state)
{
    (void)state;
    uint8_t h[RECD_REC_HEADER_SIZE];
    recd_rec_header_encode(RECD_REC_TYPE_ONFOOT, h);
    assert_memory_equal(h, "\xE8\x03\x00\x00\x02\x00\x00\x00", sizeof h);
    recd_rec_header_encode(RECD_REC_TYPE_VEHICLE, h);
    assert_memory_equal(h, "\xE8\x03\x00\x00\x01\x00\x00\x00", sizeof h);
}

/* A raw block goes out exactly as given, under the same rules as the struct entry points. */
static void test_writer_block(void **state)
{
    (void)state;
    call_log log = {0};
    recd_rec_writer w;
    recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_CLAMP, log_sink(&log));
    recd_rec_onfoot f = sample_onfoot(700);
    uint8_t blk[RECD_REC_ONFOOT_BLOCK_SIZE];
    recd_rec_onfoot_encode(&f, blk);
    assert_int_equal(recd_rec_writer_block(&w, blk, sizeof blk), 0);
    assert_int_equal(log.calls, 2); /* header, block */
    assert_memory_equal(log.data.data + 8, blk, sizeof blk);
    st_le32(blk, 650); /* earlier: clamped to 700 in the copy written, the caller's untouched */
    assert_int_equal(recd_rec_writer_block(&w, blk, sizeof blk), 0);
    assert_int_equal(ld_le32(log.data.data + 8 + 72), 700);
    assert_memory_equal(log.data.data + 8 + 72 + 4, blk + 4, sizeof blk - 4);
    assert_int_equal(ld_le32(blk), 650);
    assert_int_equal(w.clamped, 1);
    size_t calls = log.calls;
    assert_int_equal(recd_rec_writer_block(&w, blk, RECD_REC_VEHICLE_BLOCK_SIZE), -EINVAL);
    st_le32(blk + 58, 0x7FC00000u); /* velocity.y NaN */
    assert_int_equal(recd_rec_writer_block(&w, blk, sizeof blk), -EINVAL);
    assert_int_equal(log.calls, calls);
    recd_buf_free(&log.data);

    call_log vlog = {0};
    recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT, log_sink(&vlog));
    recd_rec_vehicle v = sample_vehicle(100);
    uint8_t vb[RECD_REC_VEHICLE_BLOCK_SIZE];
    recd_rec_vehicle_encode(&v, vb);
    assert_int_equal(recd_rec_writer_block(&w, vb, sizeof vb), 0);
    st_le32(vb, 99);
    assert_int_equal(recd_rec_writer_block(&w, vb, sizeof vb), -ERANGE);
    assert_int_equal(recd_rec_writer_block(&w, vb, RECD_REC_ONFOOT_BLOCK_SIZE), -EINVAL);
    assert_int_equal(vlog.calls, 2);
    recd_buf_free(&vlog.data);
}

static void test_writer_wrong_type_and_bad_init(void **state)
{
    (void)state;
    call_log log = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_NONE, RECD_REC_TIME_REJECT, log_sink(&log)), -EINVAL);
    assert_int_equal(recd_rec_writer_init(&w, (recd_rec_type)3, RECD_REC_TIME_REJECT, log_sink(&log)), -EINVAL);
    recd_sink none = {NULL, NULL};
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, none), -EINVAL);
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, (recd_rec_time_policy)7, log_sink(&log)), -EINVAL);

    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, log_sink(&log)), 0);
    recd_rec_vehicle v = sample_vehicle(0);
    assert_int_equal(recd_rec_writer_vehicle(&w, &v), -EINVAL);
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT, log_sink(&log)), 0);
    recd_rec_onfoot f = sample_onfoot(0);
    assert_int_equal(recd_rec_writer_onfoot(&w, &f), -EINVAL);
    assert_int_equal(log.calls, 0);
}

static void test_writer_sink_error(void **state)
{
    (void)state;
    call_log log = {0};
    log.fail_with = -ENOSPC;
    recd_rec_writer w;
    recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, log_sink(&log));
    recd_rec_onfoot f = sample_onfoot(0);
    assert_int_equal(recd_rec_writer_onfoot(&w, &f), -ENOSPC);
    assert_false(w.header_written);
    assert_int_equal(w.blocks, 0);
}

/* ---- probe: standard files ------------------------------------------------------------------ */

static void test_probe_good_files(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_vehicle_file(&f, 30, 110, 63);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_VEHICLE);
    assert_int_equal(info.signature, 1000);
    assert_int_equal(info.type, 1);
    assert_int_equal(info.data_offset, 8);
    assert_int_equal(info.block_size, 67);
    assert_int_equal(info.block_count, 30);
    assert_int_equal(info.trailing_bytes, 0);
    assert_int_equal(info.first_time_ms, 110);
    assert_int_equal(info.last_time_ms, 110 + 29 * 63);
    assert_int_equal(info.max_gap_ms, 63);
    assert_int_equal(info.equal_time_steps, 0);
    assert_int_equal(info.decreasing_time_steps, 0);
    assert_true(info.open_mp_accepts);
    assert_true(info.samp_accepts);
    assert_int_equal(r.count, 0);
    assert_int_equal(recd_rec_valid_prefix(&info), f.len);
    recd_buf_free(&f);

    build_onfoot_file(&f, 12, 285, 50);
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, NULL), 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    assert_int_equal(info.block_count, 12);
    assert_string_equal(recd_rec_layout_name(info.layout), "samp-onfoot");
    recd_buf_free(&f);
    recd_report_free(&r);
}

static void test_probe_equal_times_and_gaps(void **state)
{
    (void)state;
    recd_buf f = {0};
    recd_rec_writer w;
    recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT, recd_buf_sink(&f));
    static const uint32_t times[] = {100, 150, 150, 150, 200, 15200, 15250};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        recd_rec_onfoot b = sample_onfoot(times[i]);
        assert_int_equal(recd_rec_writer_onfoot(&w, &b), 0);
    }
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), 0);
    assert_int_equal(info.equal_time_steps, 2);
    assert_int_equal(info.max_gap_ms, 15000);
    const recd_problem *p = find_problem(&r, "equal-times");
    assert_non_null(p);
    assert_int_equal(p->severity, RECD_SEV_INFO);
    assert_int_equal(p->offset, 8 + 2 * 72);
    p = find_problem(&r, "long-gap");
    assert_non_null(p);
    assert_int_equal(p->offset, 8 + 5 * 72);
    assert_int_equal(recd_report_errors(&r), 0);
    recd_buf_free(&f);
    recd_report_free(&r);
}

static void test_probe_empty_and_short(void **state)
{
    (void)state;
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(NULL, 0, &info, &r), -EBADMSG);
    assert_non_null(find_problem(&r, "empty"));
    assert_int_equal(r.items[0].offset, 0);
    assert_false(info.samp_accepts);
    assert_false(info.open_mp_accepts);
    recd_report_free(&r);

    const uint8_t five[] = {0xE8, 0x03, 0, 0, 1};
    assert_int_equal(recd_rec_probe(five, sizeof five, &info, &r), -EBADMSG);
    assert_non_null(find_problem(&r, "short-header"));
    assert_int_equal(info.layout, RECD_REC_LAYOUT_UNKNOWN);
    assert_int_equal(recd_rec_valid_prefix(&info), 0);
    recd_report_free(&r);
}

static void test_probe_header_only(void **state)
{
    (void)state;
    recd_buf f = {0};
    put_header(&f, 1000, 0);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_HEADER_ONLY);
    assert_string_equal(recd_rec_layout_name(info.layout), "samp-header-only");
    const recd_problem *p = find_problem(&r, "type-none");
    assert_non_null(p);
    assert_int_equal(p->severity, RECD_SEV_WARNING);
    assert_int_equal(p->offset, 4);
    assert_false(info.open_mp_accepts);
    assert_true(info.samp_accepts);
    assert_int_equal(recd_rec_valid_prefix(&info), 8);
    recd_report_free(&r);

    recd_buf_reset(&f);
    put_header(&f, 1000, 2); /* a type-2 file with zero blocks */
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    assert_int_equal(info.block_count, 0);
    assert_non_null(find_problem(&r, "no-blocks"));
    assert_true(info.open_mp_accepts);
    assert_true(info.samp_accepts);
    recd_buf_free(&f);
    recd_report_free(&r);
}

static void test_probe_bad_signature(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_vehicle_file(&f, 5, 100, 50);
    st_le32(f.data, 999);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_VEHICLE);
    const recd_problem *p = find_problem(&r, "bad-signature");
    assert_non_null(p);
    assert_int_equal(p->severity, RECD_SEV_ERROR);
    assert_int_equal(p->offset, 0);
    assert_non_null(strstr(p->message, "999"));
    assert_false(info.samp_accepts);
    assert_true(info.open_mp_accepts);
    assert_int_equal(info.block_count, 5);
    recd_report_free(&r);

    /* One block: 8 + 67 = 75 bytes, which also fits one headerless 75-byte block. */
    recd_buf_reset(&f);
    build_vehicle_file(&f, 1, 100, 50);
    st_le32(f.data, 999);
    assert_int_equal(f.len, 75);
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_VEHICLE);
    assert_non_null(find_problem(&r, "bad-signature"));
    recd_buf_free(&f);
    recd_report_free(&r);
}

static void test_probe_partial_block(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_onfoot_file(&f, 3, 100, 50);
    uint8_t junk[10];
    memset(junk, 0xAB, sizeof junk);
    recd_buf_append(&f, junk, sizeof junk);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    assert_int_equal(info.block_count, 3);
    assert_int_equal(info.trailing_bytes, 10);
    const recd_problem *p = find_problem(&r, "partial-block");
    assert_non_null(p);
    assert_int_equal(p->severity, RECD_SEV_ERROR);
    assert_int_equal(p->offset, 8 + 3 * 72);
    assert_non_null(strstr(p->message, "10 of 72 bytes present, 62 missing"));
    assert_true(info.open_mp_accepts);
    assert_false(info.samp_accepts);
    assert_int_equal(recd_rec_valid_prefix(&info), 8 + 3 * 72);
    recd_buf_free(&f);
    recd_report_free(&r);

    build_vehicle_file(&f, 2, 0, 10);
    f.len -= 1; /* cut the last block */
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    p = find_problem(&r, "partial-block");
    assert_non_null(p);
    assert_int_equal(p->offset, 8 + 67);
    assert_non_null(strstr(p->message, "66 of 67 bytes present, 1 missing"));
    recd_buf_free(&f);
    recd_report_free(&r);
}

/* ---- probe: legacy and foreign layouts -------------------------------------------------------- */

static void build_legacy56(recd_buf *f, size_t n)
{
    put_header(f, 1000, 2);
    for (size_t i = 0; i < n; i++) {
        recd_rec_legacy_onfoot b;
        memset(&b, 0, sizeof b);
        b.time_ms = 339 + 52 * (uint32_t)i;
        b.position.x = 2480.0f + (float)i;
        b.position.y = -1660.0f;
        b.position.z = 13.3f;
        b.facing_angle_deg = 96.8f + (float)i;
        b.health = 100;
        uint8_t blk[56];
        recd_rec_legacy_onfoot_encode(&b, blk);
        recd_buf_append(f, blk, sizeof blk);
    }
}

static void test_probe_legacy56(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_legacy56(&f, 10); /* payload 560: not a multiple of 72 */
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_LEGACY_ONFOOT_56);
    assert_string_equal(recd_rec_layout_name(info.layout), "legacy-onfoot-56");
    assert_int_equal(info.block_size, 56);
    assert_int_equal(info.block_count, 10);
    assert_int_equal(info.first_time_ms, 339);
    const recd_problem *p = find_problem(&r, "legacy-onfoot-56");
    assert_non_null(p);
    assert_int_equal(p->offset, 8);
    assert_false(info.samp_accepts);
    assert_true(info.open_mp_accepts);
    assert_int_equal(recd_rec_valid_prefix(&info), 0);
    const uint8_t *b9 = recd_rec_block_at(f.data, &info, 9);
    assert_ptr_equal(b9, f.data + 8 + 9 * 56);
    recd_rec_legacy_onfoot lb;
    recd_rec_legacy_onfoot_decode(b9, &lb);
    assert_true(fabsf(lb.facing_angle_deg - 105.8f) < 1e-3f);
    recd_buf_free(&f);
    recd_report_free(&r);

    build_legacy56(&f, 9); /* payload 504 = 7 x 72 = 9 x 56: the quaternion test decides */
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_LEGACY_ONFOOT_56);
    assert_int_equal(info.block_count, 9);
    assert_true(info.samp_accepts); /* the size fits 72, so the 0.3.7 client loads garbage */
    assert_non_null(strstr(find_problem(&r, "legacy-onfoot-56")->message, "garbage"));
    recd_buf_free(&f);
    recd_report_free(&r);

    build_onfoot_file(&f, 7, 100, 50); /* the same size with real 72-byte blocks */
    assert_int_equal(f.len, 8 + 504);
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, NULL), 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    recd_buf_free(&f);
}

static void test_probe_headerless75(void **state)
{
    (void)state;
    recd_buf f = {0};
    for (uint32_t i = 0; i < 20; i++) {
        recd_rec_legacy_vehicle b;
        memset(&b, 0, sizeof b);
        b.time_ms = 78 + 77 * i;
        b.vehicle_id = 400;
        b.roll.x = 1.0f;
        b.direction.y = 1.0f;
        b.position.x = 1500.0f + (float)i;
        b.position.y = -2400.0f;
        b.position.z = 14.0f;
        b.vehicle_health = 3000.0f;
        b.driver_health = 100;
        uint8_t blk[75];
        recd_rec_legacy_vehicle_encode(&b, blk);
        recd_buf_append(&f, blk, sizeof blk);
    }
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_LEGACY_HEADERLESS_75);
    assert_string_equal(recd_rec_layout_name(info.layout), "legacy-headerless-75");
    assert_int_equal(info.data_offset, 0);
    assert_int_equal(info.block_size, 75);
    assert_int_equal(info.block_count, 20);
    assert_int_equal(info.first_time_ms, 78);
    assert_int_equal(info.last_time_ms, 78 + 77 * 19);
    assert_non_null(find_problem(&r, "legacy-headerless-75"));
    assert_false(info.samp_accepts);
    assert_false(info.open_mp_accepts); /* second u32 = vehicle id 400 */
    recd_rec_legacy_vehicle lv;
    recd_rec_legacy_vehicle_decode(recd_rec_block_at(f.data, &info, 3), &lv);
    assert_int_equal(lv.time_ms, 78 + 77 * 3);
    assert_int_equal(lv.vehicle_id, 400);
    recd_buf_free(&f);
    recd_report_free(&r);
}

/* A VC:MP plugin on-foot-like 76-byte block: time, u32 keys, position, angle, bytes, speed, aim. */
static void vcmp_block(uint8_t *blk, uint32_t t, uint32_t i)
{
    memset(blk, 0, 76);
    st_le32(blk, t);
    st_le32(blk + 4, 0);
    st_le32(blk + 8, f32_to_bits(-378.5f + (float)i));
    st_le32(blk + 12, f32_to_bits(-537.2f));
    st_le32(blk + 16, f32_to_bits(17.28f));
    st_le32(blk + 20, f32_to_bits(1.57f));
    blk[24] = 100;
    blk[26] = 21;
    st_le32(blk + 28, f32_to_bits(0.11f));
    st_le32(blk + 44, f32_to_bits(0.7f));
    st_le32(blk + 56, f32_to_bits(-375.0f));
    st_le32(blk + 60, f32_to_bits(-530.0f));
    st_le32(blk + 64, f32_to_bits(18.0f));
    st_le16(blk + 70, 250);
}

static void build_vcmp(recd_buf *f, uint32_t sig, uint32_t type, size_t n)
{
    put_header(f, sig, type);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t blk[76];
        vcmp_block(blk, 40 + 100 * i, i);
        recd_buf_append(f, blk, sizeof blk);
    }
}

static void test_probe_vcmp(void **state)
{
    (void)state;
    recd_buf f = {0};
    recd_rec_info info;
    recd_report r = {0};
    build_vcmp(&f, 1000, 2, 10); /* payload 760: multiple of 76, not of 72, 67 or 56 */
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_VCMP);
    assert_string_equal(recd_rec_layout_name(info.layout), "vcmp");
    assert_non_null(find_problem(&r, "vcmp"));
    assert_int_equal(info.block_count, 0);
    assert_null(recd_rec_block_at(f.data, &info, 0));
    recd_buf_free(&f);
    recd_report_free(&r);

    build_vcmp(&f, 1000, 1, 9); /* type 1 = on foot in VC:MP */
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_VCMP);
    recd_buf_free(&f);
    recd_report_free(&r);

    for (uint32_t sig = 1001; sig <= 1005; sig++) {
        build_vcmp(&f, sig, 1, 3);
        assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
        assert_int_equal(info.layout, RECD_REC_LAYOUT_VCMP);
        recd_buf_free(&f);
        recd_report_free(&r);
    }
}

static void text_mangle(const recd_buf *in, recd_buf *out)
{
    for (size_t i = 0; i < in->len; i++) {
        uint8_t b = in->data[i];
        if (b == 0) {
            recd_buf_append(out, " ", 1);
        } else if (b < 0x80) {
            recd_buf_append(out, &b, 1);
        } else {
            uint8_t two[2] = {(uint8_t)(0xC0 | (b >> 6)), (uint8_t)(0x80 | (b & 0x3F))};
            recd_buf_append(out, two, 2);
        }
    }
}

static void test_probe_text_mangled(void **state)
{
    (void)state;
    recd_buf f = {0}, m = {0};
    build_onfoot_file(&f, 20, 111, 47);
    text_mangle(&f, &m);
    assert_memory_equal(m.data, ((const uint8_t[]){0xC3, 0xA8, 0x03, 0x20, 0x20, 0x02, 0x20}), 7);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(m.data, m.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_TEXT_MANGLED);
    assert_string_equal(recd_rec_layout_name(info.layout), "text-mangled");
    const recd_problem *p = find_problem(&r, "text-mangled");
    assert_non_null(p);
    assert_int_equal(p->severity, RECD_SEV_ERROR);
    assert_false(info.open_mp_accepts);
    assert_false(info.samp_accepts);
    recd_report_free(&r);

    /* Without the telltale header: judged from the whole body (no NUL, valid UTF-8). */
    assert_int_equal(recd_rec_probe(m.data + 5, m.len - 5, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_TEXT_MANGLED);
    p = find_problem(&r, "text-mangled");
    assert_non_null(p);
    assert_true(p->offset < m.len);
    assert_true(m.data[5 + p->offset] >= 0xC2);
    recd_buf_free(&f);
    recd_buf_free(&m);
    recd_report_free(&r);
}

/* The byte-at-a-time check that recd_rec__text_mangled's 16-byte ASCII skip must agree with. */
static bool text_mangled_bytewise(const uint8_t *buf, size_t len, size_t *evidence)
{
    static const uint8_t sig[] = {0xC3, 0xA8, 0x03, 0x20, 0x20};
    *evidence = 0;
    if (len >= sizeof sig && memcmp(buf, sig, sizeof sig) == 0)
        return true;
    bool seen = false;
    for (size_t i = 0; i < len;) {
        uint8_t b = buf[i];
        if (b == 0)
            return false;
        if (b < 0x80) {
            i++;
            continue;
        }
        size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
        if (n == 0)
            return false;
        for (size_t k = 1; k < n && i + k < len; k++)
            if ((buf[i + k] & 0xC0) != 0x80)
                return false;
        if (!seen)
            *evidence = i;
        seen = true;
        i += n;
    }
    return seen;
}

/* ASCII text with a NUL, a stray byte >= 0x80 or a UTF-8 sequence (whole or cut) at every
 * offset around the skip's 16-byte steps, and plain ASCII of every length. */
static void test_text_mangled_ascii_skip(void **state)
{
    (void)state;
    static const uint8_t inserts[][4] = {{0x00}, {0x80}, {0xFF}, {0xC3, 0xA8}, {0xE2, 0x82, 0xAC},
                                         {0xF0, 0x9F, 0x98, 0x80}, {0xC3, 0x41}, {0x7F}};
    static const size_t insert_len[] = {1, 1, 1, 2, 3, 4, 2, 1};
    uint8_t buf[80];
    for (size_t len = 0; len <= sizeof buf; len++) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(' ' + (i * 7) % 95);
        for (size_t k = 0; k <= sizeof inserts / sizeof inserts[0]; k++) {
            for (size_t at = 0; at < len; at++) {
                uint8_t b[sizeof buf];
                memcpy(b, buf, len);
                if (k < sizeof inserts / sizeof inserts[0])
                    for (size_t j = 0; j < insert_len[k] && at + j < len; j++)
                        b[at + j] = inserts[k][j];
                size_t e1 = 99, e2 = 99;
                bool fast = recd_rec__text_mangled(b, len, &e1);
                bool slow = text_mangled_bytewise(b, len, &e2);
                assert_int_equal(fast, slow);
                if (slow)
                    assert_int_equal(e1, e2);
            }
        }
    }
}

static void test_probe_type_mismatch(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_onfoot_file(&f, 10, 100, 50);
    st_le32(f.data + 4, 1); /* driver header, on-foot blocks: the June 2023 open.mp recorder bug */
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    const recd_problem *p = find_problem(&r, "type-mismatch");
    assert_non_null(p);
    assert_int_equal(p->offset, 4);
    recd_buf_free(&f);
    recd_report_free(&r);
}

/* One on-foot block whose bytes happen to hold a unit quaternion where a vehicle block keeps
 * one: the stored type, whose block size fits the length exactly, wins over one block of chance
 * (found by fuzz_edit: a cut down to one block no longer verified). */
static void test_probe_one_block_keeps_stored_type(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_onfoot_file(&f, 1, 100, 50);
    uint8_t *b = f.data + 8;
    memset(b + 12, 0, 26); /* the vehicle quaternion (1, 0, 0, 0); the on-foot one all zero */
    st_le32(b + 12, 0x3F800000u);
    recd_rec_info info;
    recd_report r = {0};
    assert_true(recd_rec_probe(f.data, f.len, &info, &r) >= 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    assert_null(find_problem(&r, "type-mismatch"));
    recd_report_free(&r);

    /* A driver header over the same block: the on-foot size fits and the vehicle one does not,
     * so the June 2023 reading still applies when the on-foot quaternion is a unit one. */
    recd_buf_reset(&f);
    build_onfoot_file(&f, 1, 100, 50);
    st_le32(f.data + 4, 1);
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    recd_buf_free(&f);
    recd_report_free(&r);
}

static void test_probe_unknown_type(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_vehicle_file(&f, 6, 100, 50);
    st_le32(f.data + 4, 7);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_VEHICLE);
    const recd_problem *p = find_problem(&r, "unknown-type");
    assert_non_null(p);
    assert_int_equal(p->severity, RECD_SEV_WARNING);
    assert_int_equal(p->offset, 4);
    assert_false(info.open_mp_accepts);
    assert_true(info.samp_accepts);
    recd_report_free(&r);

    uint8_t junk[8 + 100];
    memset(junk, 0x41, sizeof junk);
    st_le32(junk, 1000);
    st_le32(junk + 4, 9);
    assert_int_equal(recd_rec_probe(junk, sizeof junk, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_UNKNOWN);
    assert_non_null(find_problem(&r, "unknown-layout"));
    assert_false(info.samp_accepts);
    recd_buf_free(&f);
    recd_report_free(&r);
}

/* ---- probe: per-block anomalies --------------------------------------------------------------- */

static void test_probe_decreasing_times_capped(void **state)
{
    (void)state;
    recd_buf f = {0};
    put_header(&f, 1000, 1);
    for (uint32_t i = 0; i < 60; i++) {
        recd_rec_vehicle b = sample_vehicle(i % 2 ? 1000 + i * 10 : 900 + i * 10);
        uint8_t blk[67];
        recd_rec_vehicle_encode(&b, blk);
        recd_buf_append(&f, blk, sizeof blk);
    }
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), 0); /* warnings only */
    assert_int_equal(info.decreasing_time_steps, 29);
    size_t listed = count_problems(&r, "time-backwards");
    assert_int_equal(listed, 16 + 1); /* 16 individually, then one summary */
    const recd_problem *p = find_problem(&r, "time-backwards");
    assert_int_equal(p->severity, RECD_SEV_WARNING);
    assert_int_equal(p->offset, 8 + 2 * 67); /* block 2 goes back from 1010 to 920 */
    assert_non_null(strstr(p->message, "1010"));
    bool summary = false;
    for (size_t i = 0; i < r.count; i++)
        if (strstr(r.items[i].message, "13 more"))
            summary = true;
    assert_true(summary);
    recd_buf_free(&f);
    recd_report_free(&r);
}

static void test_probe_nonfinite_and_nonunit(void **state)
{
    (void)state;
    recd_buf f = {0};
    put_header(&f, 1000, 2);
    for (uint32_t i = 0; i < 20; i++) {
        recd_rec_onfoot b = sample_onfoot(100 + 50 * i);
        if (i == 4)
            b.velocity.y = NAN;
        if (i == 6)
            b.rotation.w = 0.5f;
        uint8_t blk[72];
        recd_rec_onfoot_encode(&b, blk);
        if (i == 8)
            st_le32(blk + 14, 0x7F800000u); /* +Inf in position.y */
        recd_buf_append(&f, blk, sizeof blk);
    }
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, &r), 0);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_ONFOOT);
    assert_int_equal(count_problems(&r, "non-finite"), 2);
    const recd_problem *p = find_problem(&r, "non-finite");
    assert_int_equal(p->offset, 8 + 4 * 72 + 46);
    assert_non_null(strstr(p->message, "NaN"));
    const recd_problem *second = NULL;
    for (size_t i = 0; i < r.count; i++)
        if (strcmp(r.items[i].code, "non-finite") == 0 && &r.items[i] != p)
            second = &r.items[i];
    assert_non_null(second);
    assert_int_equal(second->offset, 8 + 8 * 72 + 14);
    p = find_problem(&r, "non-unit-quaternion");
    assert_non_null(p);
    assert_int_equal(p->offset, 8 + 6 * 72 + 22);
    assert_int_equal(count_problems(&r, "non-unit-quaternion"), 1);
    if (recd_report_errors(&r))
        dump_report(&r);
    assert_int_equal(recd_report_errors(&r), 0);
    recd_buf_free(&f);
    recd_report_free(&r);
}

static void test_block_at_and_valid_prefix(void **state)
{
    (void)state;
    recd_buf f = {0};
    build_vehicle_file(&f, 4, 0, 100);
    recd_rec_info info;
    assert_int_equal(recd_rec_probe(f.data, f.len, &info, NULL), 0);
    for (uint64_t i = 0; i < 4; i++) {
        const uint8_t *b = recd_rec_block_at(f.data, &info, i);
        assert_ptr_equal(b, f.data + 8 + i * 67);
        assert_int_equal(ld_le32(b), i * 100);
    }
    assert_null(recd_rec_block_at(f.data, &info, 4));
    assert_null(recd_rec_block_at(NULL, &info, 0));
    assert_int_equal(recd_rec_valid_prefix(NULL), 0);
    assert_true(recd_rec_layout_is_standard(RECD_REC_LAYOUT_HEADER_ONLY));
    assert_false(recd_rec_layout_is_standard(RECD_REC_LAYOUT_LEGACY_ONFOOT_56));
    assert_int_equal(recd_rec_probe(f.data, 0, NULL, NULL), -EINVAL);
    recd_buf_free(&f);
}

static void test_layout_names(void **state)
{
    (void)state;
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_VEHICLE), "samp-vehicle");
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_ONFOOT), "samp-onfoot");
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_HEADER_ONLY), "samp-header-only");
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_LEGACY_ONFOOT_56), "legacy-onfoot-56");
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_LEGACY_HEADERLESS_75), "legacy-headerless-75");
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_VCMP), "vcmp");
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_TEXT_MANGLED), "text-mangled");
    assert_string_equal(recd_rec_layout_name(RECD_REC_LAYOUT_UNKNOWN), "unknown");
    assert_string_equal(recd_rec_layout_name((recd_rec_layout)99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onfoot_field_offsets),
        cmocka_unit_test(test_vehicle_field_offsets),
        cmocka_unit_test(test_legacy_field_offsets),
        cmocka_unit_test(test_anim_flags_every_bit),
        cmocka_unit_test(test_weapon_additional_key_bits),
        cmocka_unit_test(test_surf_classify_boundaries),
        cmocka_unit_test(test_hydra_train_union),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_struct_roundtrip_keeps_signed_zero_and_nan),
        cmocka_unit_test(test_writer_header_and_whole_blocks),
        cmocka_unit_test(test_writer_time_reject),
        cmocka_unit_test(test_writer_time_clamp),
        cmocka_unit_test(test_writer_refuses_nan_inf),
        cmocka_unit_test(test_writer_wrong_type_and_bad_init),
        cmocka_unit_test(test_writer_sink_error),
        cmocka_unit_test(test_probe_good_files),
        cmocka_unit_test(test_probe_equal_times_and_gaps),
        cmocka_unit_test(test_probe_empty_and_short),
        cmocka_unit_test(test_probe_header_only),
        cmocka_unit_test(test_probe_bad_signature),
        cmocka_unit_test(test_probe_partial_block),
        cmocka_unit_test(test_probe_legacy56),
        cmocka_unit_test(test_probe_headerless75),
        cmocka_unit_test(test_probe_vcmp),
        cmocka_unit_test(test_probe_text_mangled),
        cmocka_unit_test(test_text_mangled_ascii_skip),
        cmocka_unit_test(test_probe_type_mismatch),
        cmocka_unit_test(test_probe_one_block_keeps_stored_type),
        cmocka_unit_test(test_probe_unknown_type),
        cmocka_unit_test(test_probe_decreasing_times_capped),
        cmocka_unit_test(test_probe_nonfinite_and_nonunit),
        cmocka_unit_test(test_block_at_and_valid_prefix),
        cmocka_unit_test(test_layout_names),
        cmocka_unit_test(test_block_check_matches_struct_check),
        cmocka_unit_test(test_writer_block),
        cmocka_unit_test(test_header_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
