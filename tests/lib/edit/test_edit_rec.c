/* SPDX-License-Identifier: MIT */
/* Editing .rec files (recd/edit.h) against hand-computed blocks: cut, retime (speed, resampling
 * with control changes kept), transform (a quarter turn, four quarter turns back to the input, the
 * FCNPC #299 case), concat, split, diff, and tracks. Every output must verify. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "recd/edit.h"
#include "recd/format.h"
#include "recd/samp_rec.h"

#define PI 3.14159265358979323846

/* The stored (conjugate) rotation of a body facing `deg` (GTA heading, counter-clockwise). */
static recd_quat heading_quat(double deg)
{
    double h = deg * PI / 180.0;
    recd_quat q = {(float)cos(h / 2), 0, 0, (float)-sin(h / 2)};
    return q;
}

/* The heading a stored rotation faces, in degrees (-180, 180]. */
static double quat_heading(recd_quat q)
{
    return 2.0 * atan2(-q.z, q.w) * 180.0 / PI;
}

static recd_rec_onfoot foot(uint32_t t, float x, float y, float z, double heading)
{
    recd_rec_onfoot b;
    memset(&b, 0, sizeof b);
    b.time_ms = t;
    b.position = (recd_vec3f){x, y, z};
    b.rotation = heading_quat(heading);
    b.health = 100;
    return b;
}

static recd_rec_vehicle car(uint32_t t, float x, float y, double heading, uint16_t keys)
{
    recd_rec_vehicle b;
    memset(&b, 0, sizeof b);
    b.time_ms = t;
    b.vehicle_id = 5;
    b.keys = keys;
    b.position = (recd_vec3f){x, y, 10};
    b.rotation = heading_quat(heading);
    b.vehicle_health = 1000;
    b.driver_health = 100;
    return b;
}

static recd_buf foot_file(const recd_rec_onfoot *b, size_t n)
{
    recd_buf out = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT,
                                          recd_buf_sink(&out)), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(recd_rec_writer_onfoot(&w, &b[i]), 0);
    return out;
}

static recd_buf car_file(const recd_rec_vehicle *b, size_t n)
{
    recd_buf out = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT,
                                          recd_buf_sink(&out)), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(recd_rec_writer_vehicle(&w, &b[i]), 0);
    return out;
}

static recd_edit_input input_of(const recd_buf *b)
{
    recd_edit_input in = {b->data, b->len};
    return in;
}

/* The output verifies; returns its block count. */
static uint64_t check_valid(const recd_buf *b)
{
    const recd_format *f = recd_format_sniff(b->data, b->len, NULL);
    assert_non_null(f);
    recd_format_verdict v;
    assert_int_equal(recd_format_verify(f, b->data, b->len, &v, NULL), 0);
    assert_true(v.valid);
    return (b->len - RECD_REC_HEADER_SIZE) /
           (f->msg_format == RECD_MSG_FMT_SAMP_ONFOOT ? RECD_REC_ONFOOT_BLOCK_SIZE
                                                      : RECD_REC_VEHICLE_BLOCK_SIZE);
}

static recd_rec_onfoot foot_at(const recd_buf *b, size_t i)
{
    recd_rec_onfoot out;
    memset(&out, 0, sizeof out); /* padding too: blocks are compared as memory */
    recd_rec_onfoot_decode(b->data + RECD_REC_HEADER_SIZE + i * RECD_REC_ONFOOT_BLOCK_SIZE, &out);
    return out;
}

static recd_rec_vehicle car_at(const recd_buf *b, size_t i)
{
    recd_rec_vehicle out;
    memset(&out, 0, sizeof out);
    recd_rec_vehicle_decode(b->data + RECD_REC_HEADER_SIZE + i * RECD_REC_VEHICLE_BLOCK_SIZE, &out);
    return out;
}

/* Block i of a file is exactly the encoding of want (compared as bytes: structs have padding). */
static void assert_foot_block(const recd_buf *b, size_t i, const recd_rec_onfoot *want)
{
    uint8_t enc[RECD_REC_ONFOOT_BLOCK_SIZE];
    recd_rec_onfoot_encode(want, enc);
    assert_memory_equal(b->data + RECD_REC_HEADER_SIZE + i * sizeof enc, enc, sizeof enc);
}

static void assert_car_block(const recd_buf *b, size_t i, const recd_rec_vehicle *want)
{
    uint8_t enc[RECD_REC_VEHICLE_BLOCK_SIZE];
    recd_rec_vehicle_encode(want, enc);
    assert_memory_equal(b->data + RECD_REC_HEADER_SIZE + i * sizeof enc, enc, sizeof enc);
}

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static void test_cut_rebases(void **state)
{
    (void)state;
    recd_rec_onfoot in[5];
    for (int i = 0; i < 5; i++)
        in[i] = foot((uint32_t)(100 * (i + 1)), (float)i, 0, 0, 0);
    recd_buf f = foot_file(in, 5), out = {0};
    char err[256];
    recd_cut_opts o = {200, 400, false};
    assert_int_equal(recd_edit_cut(input_of(&f), &o, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    assert_int_equal(check_valid(&out), 2);
    /* Blocks 1 and 2 (t 200, 300), starting again at 0; everything else as it was. */
    recd_rec_onfoot e0 = in[1], e1 = in[2];
    e0.time_ms = 0;
    e1.time_ms = 100;
    assert_foot_block(&out, 0, &e0);
    assert_foot_block(&out, 1, &e1);

    recd_buf_reset(&out);
    o.keep_time = true;
    assert_int_equal(recd_edit_cut(input_of(&f), &o, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    assert_int_equal(foot_at(&out, 0).time_ms, 200);
    assert_int_equal(foot_at(&out, 1).time_ms, 300);

    /* A range with no block writes nothing and says why: here it starts past the last block. */
    recd_buf_reset(&out);
    recd_cut_opts none = {510, 900, false};
    assert_int_equal(recd_edit_cut(input_of(&f), &none, recd_buf_sink(&out), NULL, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "past the end"));
    recd_buf_free(&f);
    recd_buf_free(&out);
}

static void test_retime_speed(void **state)
{
    (void)state;
    recd_rec_onfoot in[3] = {foot(0, 0, 0, 0, 0), foot(100, 1, 0, 0, 0), foot(301, 2, 0, 0, 0)};
    in[1].velocity = (recd_vec3f){0.25f, -0.5f, 0};
    recd_buf f = foot_file(in, 3), out = {0};
    char err[256];
    recd_retime_opts o = {2.0, 0};
    assert_int_equal(recd_edit_retime(input_of(&f), &o, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    assert_int_equal(check_valid(&out), 3);
    assert_int_equal(foot_at(&out, 0).time_ms, 0);
    assert_int_equal(foot_at(&out, 1).time_ms, 50);
    assert_int_equal(foot_at(&out, 2).time_ms, 151); /* 150.5 rounds away from zero */
    assert_true(foot_at(&out, 1).velocity.x == 0.5f && foot_at(&out, 1).velocity.y == -1.0f);
    recd_buf_free(&f);
    recd_buf_free(&out);
}

/* 0..1000 ms, straight and steady; the keys change at 600 ms. Resampled at 4 Hz: the grid
 * 0, 250, 500, 750, 1000 plus the key change at 600, positions and headings linear in time. */
static void test_retime_rate_keeps_controls(void **state)
{
    (void)state;
    recd_rec_vehicle in[3] = {car(0, 0, 0, 0, 0), car(600, 6, 12, 54, 8), car(1000, 10, 20, 90, 8)};
    recd_buf f = car_file(in, 3), out = {0};
    char err[256];
    recd_retime_opts o = {1.0, 4.0};
    assert_int_equal(recd_edit_retime(input_of(&f), &o, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    assert_int_equal(check_valid(&out), 6);
    static const uint32_t times[6] = {0, 250, 500, 600, 750, 1000};
    static const uint16_t keys[6] = {0, 0, 0, 8, 8, 8};
    for (size_t i = 0; i < 6; i++) {
        recd_rec_vehicle b = car_at(&out, i);
        assert_int_equal(b.time_ms, times[i]);
        assert_int_equal(b.keys, keys[i]);
        assert_near(b.position.x, times[i] / 100.0, 1e-4);
        assert_near(b.position.y, times[i] / 50.0, 1e-4);
        assert_near(quat_heading(b.rotation), times[i] * 0.09, 1e-3);
        double n = b.rotation.w * b.rotation.w + b.rotation.z * b.rotation.z;
        assert_near(n, 1.0, 1e-6);
    }
    /* Two blocks 49 days apart at 1000 Hz would be billions of blocks: refused. */
    recd_rec_vehicle far[2] = {car(0, 0, 0, 0, 0), car(4000000000u, 1, 1, 0, 0)};
    recd_buf ff = car_file(far, 2), none = {0};
    recd_retime_opts fast = {1.0, 1000.0};
    assert_int_equal(recd_edit_retime(input_of(&ff), &fast, recd_buf_sink(&none), NULL, err, sizeof err),
                     -E2BIG);
    assert_int_equal(none.len, 0);
    recd_buf_free(&ff);
    /* The kept originals are the input blocks exactly. */
    assert_car_block(&out, 3, &in[1]);
    recd_buf_free(&f);
    recd_buf_free(&out);
}

static void test_transform_quarter_turn(void **state)
{
    (void)state;
    recd_rec_onfoot in[1] = {foot(0, 1, 2, 3, 0)};
    in[0].velocity = (recd_vec3f){0.1f, 0, 0.5f};
    in[0].surf_offset = (recd_vec3f){1, 1, 1};
    recd_buf f = foot_file(in, 1), out = {0};
    char err[256];
    recd_transform_opts o = {{10, 0, -1}, 90, true, {0, 0, 0}};
    assert_int_equal(recd_edit_transform(input_of(&f), &o, recd_buf_sink(&out), NULL, err, sizeof err),
                     0);
    check_valid(&out);
    recd_rec_onfoot b = foot_at(&out, 0);
    /* (x, y) -> (-y, x), then + (10, 0, -1). */
    assert_true(b.position.x == 8.0f && b.position.y == 1.0f && b.position.z == 2.0f);
    assert_true(b.velocity.x == 0.0f && b.velocity.y == 0.1f && b.velocity.z == 0.5f);
    assert_near(b.rotation.w, cos(PI / 4), 1e-6);
    assert_near(b.rotation.z, -sin(PI / 4), 1e-6);
    assert_near(quat_heading(b.rotation), 90.0, 1e-4);
    assert_true(b.surf_offset.x == 1.0f); /* relative to the surfed entity: not turned */
    recd_buf_free(&f);
    recd_buf_free(&out);
}

/* Four quarter turns about one pivot (the default, the first block, or a given one) give the
 * input back within float precision. */
static void four_quarter_turns(bool has_pivot)
{
    recd_rec_vehicle in[4];
    for (int i = 0; i < 4; i++) {
        in[i] = car((uint32_t)(i * 100), 1500.5f + 3.25f * (float)i, -820.75f + (float)i, 0, 0);
        /* A little pitch and roll, so the whole quaternion takes part. */
        double n = sqrt(0.49 + 0.01 + 0.0025 + 0.49);
        in[i].rotation.w = (float)(0.70 / n), in[i].rotation.x = (float)(0.10 / n);
        in[i].rotation.y = (float)(-0.05 / n), in[i].rotation.z = (float)(0.70 / n);
        in[i].velocity = (recd_vec3f){0.3f, -0.2f, 0.01f};
    }
    recd_buf cur = car_file(in, 4);
    char err[256];
    for (int turn = 0; turn < 4; turn++) {
        recd_buf next = {0};
        recd_transform_opts o = {{0, 0, 0}, 90, has_pivot, {100, 200, 0}};
        assert_int_equal(
            recd_edit_transform(input_of(&cur), &o, recd_buf_sink(&next), NULL, err, sizeof err), 0);
        check_valid(&next);
        recd_buf_free(&cur);
        cur = next;
    }
    for (size_t i = 0; i < 4; i++) {
        recd_rec_vehicle b = car_at(&cur, i);
        assert_near(b.position.x, in[i].position.x, 1e-3);
        assert_near(b.position.y, in[i].position.y, 1e-3);
        assert_true(b.position.z == in[i].position.z);
        assert_near(b.velocity.x, in[i].velocity.x, 1e-6);
        assert_near(b.velocity.y, in[i].velocity.y, 1e-6);
        assert_near(b.rotation.w, in[i].rotation.w, 1e-6);
        assert_near(b.rotation.x, in[i].rotation.x, 1e-6);
        assert_near(b.rotation.y, in[i].rotation.y, 1e-6);
        assert_near(b.rotation.z, in[i].rotation.z, 1e-6);
    }
    recd_buf_free(&cur);
}

static void test_transform_four_quarter_turns(void **state)
{
    (void)state;
    four_quarter_turns(false);
    four_quarter_turns(true);
}

/* FCNPC #299: FCNPC's playback offset moves the positions but leaves every rotation as recorded
 * (its rotation loop edits a copy). Translating only does the same here; turning as well makes
 * the facing follow the new direction of travel. A walk north, turned 90 degrees about its start
 * and moved to (100, 100): it walks west and faces west (heading 90). */
static void test_transform_fcnpc_299(void **state)
{
    (void)state;
    recd_rec_onfoot in[3] = {foot(0, 0, 0, 5, 0), foot(1000, 0, 10, 5, 0), foot(2000, 0, 20, 5, 0)};
    for (int i = 0; i < 3; i++)
        in[i].velocity = (recd_vec3f){0, 0.2f, 0};
    recd_buf f = foot_file(in, 3), offset = {0}, turned = {0};
    char err[256];
    recd_transform_opts only_move = {{100, 100, 0}, 0, false, {0, 0, 0}};
    assert_int_equal(recd_edit_transform(input_of(&f), &only_move, recd_buf_sink(&offset), NULL, err,
                                         sizeof err), 0);
    recd_transform_opts move_and_turn = {{100, 100, 0}, 90, false, {0, 0, 0}};
    assert_int_equal(recd_edit_transform(input_of(&f), &move_and_turn, recd_buf_sink(&turned), NULL, err,
                                         sizeof err), 0);
    assert_int_equal(check_valid(&offset), 3);
    assert_int_equal(check_valid(&turned), 3);
    for (size_t i = 0; i < 3; i++) {
        recd_rec_onfoot a = foot_at(&offset, i), b = foot_at(&turned, i);
        /* The offset: positions moved, rotation and velocity untouched (what FCNPC plays). */
        assert_true(a.position.x == 100.0f && a.position.y == 100.0f + 10.0f * (float)i);
        assert_memory_equal(&a.rotation, &in[i].rotation, sizeof a.rotation);
        assert_memory_equal(&a.velocity, &in[i].velocity, sizeof a.velocity);
        /* Turned about the first block (0, 0): (0, 10i) -> (-10i, 0), then + (100, 100). */
        assert_true(b.position.x == 100.0f - 10.0f * (float)i && b.position.y == 100.0f);
        assert_true(b.position.z == 5.0f);
        assert_true(b.velocity.x == -0.2f && b.velocity.y == 0.0f);
        assert_near(quat_heading(b.rotation), 90.0, 1e-4);
        /* Facing (-sin h, cos h) = the direction of travel (-1, 0). */
        double h = quat_heading(b.rotation) * PI / 180.0;
        assert_near(-sin(h), -1.0, 1e-6);
        assert_near(cos(h), 0.0, 1e-6);
    }
    recd_buf_free(&f);
    recd_buf_free(&offset);
    recd_buf_free(&turned);
}

static void test_concat_times_continue(void **state)
{
    (void)state;
    recd_rec_onfoot a[3] = {foot(0, 0, 0, 0, 0), foot(100, 1, 0, 0, 0), foot(200, 2, 0, 0, 0)};
    recd_rec_onfoot b[2] = {foot(50, 3, 0, 0, 0), foot(150, 4, 0, 0, 0)};
    recd_buf fa = foot_file(a, 3), fb = foot_file(b, 2), out = {0};
    recd_edit_input in[2] = {input_of(&fa), input_of(&fb)};
    char err[256];
    assert_int_equal(recd_edit_concat(in, 2, -1, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    assert_int_equal(check_valid(&out), 5);
    static const uint32_t times[5] = {0, 100, 200, 300, 400}; /* A's last step: 100 ms */
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(foot_at(&out, i).time_ms, times[i]);
        assert_true(foot_at(&out, i).position.x == (float)i);
    }
    recd_buf_reset(&out);
    assert_int_equal(recd_edit_concat(in, 2, 0, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    assert_int_equal(foot_at(&out, 3).time_ms, 200);
    assert_int_equal(foot_at(&out, 4).time_ms, 300);
    /* On foot and in a vehicle cannot be joined. */
    recd_rec_vehicle c[1] = {car(0, 0, 0, 0, 0)};
    recd_buf fc = car_file(c, 1);
    in[1] = input_of(&fc);
    recd_buf_reset(&out);
    assert_int_equal(recd_edit_concat(in, 2, -1, recd_buf_sink(&out), NULL, err, sizeof err), -EBADMSG);
    recd_buf_free(&fa);
    recd_buf_free(&fb);
    recd_buf_free(&fc);
    recd_buf_free(&out);
}

typedef struct pieces {
    recd_buf b[3];
} pieces;

static int piece_sink(void *data, size_t i, recd_sink *sink)
{
    pieces *p = data;
    if (i >= 3)
        return -EINVAL;
    *sink = recd_buf_sink(&p->b[i]);
    return 0;
}

static void test_split(void **state)
{
    (void)state;
    recd_rec_onfoot in[6];
    for (int i = 0; i < 6; i++)
        in[i] = foot((uint32_t)(100 * i), (float)i, 0, 0, 0);
    recd_buf f = foot_file(in, 6);
    pieces p = {{{0}}};
    int64_t at[2] = {250, 400};
    char err[256];
    assert_int_equal(recd_edit_split(input_of(&f), at, 2, false, piece_sink, &p, NULL, err, sizeof err), 0);
    assert_int_equal(check_valid(&p.b[0]), 3); /* 0 100 200 */
    assert_int_equal(check_valid(&p.b[1]), 1); /* 300 -> 0 */
    assert_int_equal(check_valid(&p.b[2]), 2); /* 400 500 -> 0 100 */
    assert_int_equal(foot_at(&p.b[1], 0).time_ms, 0);
    assert_true(foot_at(&p.b[1], 0).position.x == 3.0f);
    assert_int_equal(foot_at(&p.b[2], 1).time_ms, 100);
    /* An empty piece is refused. */
    for (int i = 0; i < 3; i++)
        recd_buf_reset(&p.b[i]);
    int64_t bad[2] = {250, 260};
    assert_int_equal(recd_edit_split(input_of(&f), bad, 2, false, piece_sink, &p, NULL, err, sizeof err),
                     -EINVAL);
    for (int i = 0; i < 3; i++)
        recd_buf_free(&p.b[i]);
    recd_buf_free(&f);
}

static void test_diff(void **state)
{
    (void)state;
    recd_rec_onfoot in[3] = {foot(0, 0, 0, 0, 0), foot(100, 1, 0, 0, 0), foot(200, 2, 0, 0, 0)};
    recd_buf a = foot_file(in, 3), report = {0};
    char err[256];
    assert_int_equal(recd_edit_diff(input_of(&a), input_of(&a), &report, NULL, err, sizeof err), 0);
    in[2].position.y = 7.5f;
    in[2].armour = 50;
    recd_buf b = foot_file(in, 3);
    assert_int_equal(recd_edit_diff(input_of(&a), input_of(&b), &report, NULL, err, sizeof err), 1);
    assert_int_equal(recd_buf_append(&report, "", 1), 0);
    const char *text = (const char *)report.data;
    assert_non_null(strstr(text, "block 2 (t 200 ms)"));
    assert_non_null(strstr(text, "position[1]: 0.0 vs 7.5"));
    assert_non_null(strstr(text, "armour: 0 vs 50"));
    assert_null(strstr(text, "position[0]"));
    recd_buf c = foot_file(in, 2);
    recd_buf_reset(&report);
    assert_int_equal(recd_edit_diff(input_of(&b), input_of(&c), &report, NULL, err, sizeof err), 1);
    assert_int_equal(recd_buf_append(&report, "", 1), 0);
    assert_non_null(strstr((const char *)report.data, "B ends first"));
    recd_buf_free(&a);
    recd_buf_free(&b);
    recd_buf_free(&c);
    recd_buf_free(&report);
}

static int count_point(void *data, const recd_track_point *p)
{
    recd_track_point *last = data;
    *last = *p;
    return 0;
}

static void test_track(void **state)
{
    (void)state;
    recd_rec_vehicle in[1] = {car(1500, 3, 4, 0, 0)};
    in[0].velocity = (recd_vec3f){0.2f, 0, 0};
    in[0].vehicle_health = 650;
    recd_buf f = car_file(in, 1);
    recd_track_point p;
    char err[256];
    assert_int_equal(recd_track_read(f.data, f.len, count_point, &p, NULL, err, sizeof err), 0);
    assert_int_equal(p.kind, RECD_TRACK_VEHICLE);
    assert_near(p.t, 1.5, 1e-9);
    assert_near(p.x, 3, 1e-9);
    assert_near(p.speed, 10.0, 1e-5); /* 0.2 m per 1/50 s */
    assert_near(p.vehicle_health, 650, 1e-9);
    assert_true(isnan(p.health));
    recd_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_rebases),
        cmocka_unit_test(test_retime_speed),
        cmocka_unit_test(test_retime_rate_keeps_controls),
        cmocka_unit_test(test_transform_quarter_turn),
        cmocka_unit_test(test_transform_four_quarter_turns),
        cmocka_unit_test(test_transform_fcnpc_299),
        cmocka_unit_test(test_concat_times_continue),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_track),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
