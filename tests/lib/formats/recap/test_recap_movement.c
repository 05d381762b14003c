/* SPDX-License-Identifier: MIT */
/* MOVEMENT encoding: mode choice at every boundary (+-327.67, 327.68, NaN, +-Inf, 1e300, FLOAT vs
 * DOUBLE), the exact byte layout, decoded precision, and no error build-up over 100k ticks. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"
#include "recd/recap.h"
#include "testutil.h"

static int mode_of(double r, double v)
{
    recap_choice c;
    recap_channel_choose(r, v, &c);
    return c.mode;
}

static void test_mode_boundaries(void **st)
{
    (void)st;
    recap_choice c;
    recap_channel_choose(0, 327.67, &c);
    assert_int_equal(c.mode, RECAP_MODE_SHORT);
    assert_int_equal(c.q, 32767);
    assert_true(c.rec == 327.67);
    recap_channel_choose(0, -327.67, &c);
    assert_int_equal(c.mode, RECAP_MODE_SHORT);
    assert_int_equal(c.q, -32767);
    recap_channel_choose(100, 427.67, &c);
    assert_int_equal(c.mode, RECAP_MODE_SHORT);
    assert_int_equal(mode_of(0, 327.68), RECAP_MODE_DOUBLE); /* not SHORT; f32 delta inexact */
    assert_int_equal(mode_of(0, -327.68), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(0, 327.6875), RECAP_MODE_FLOAT); /* not SHORT; exact as f32 */
    assert_int_equal(mode_of(0, 327.675), RECAP_MODE_DOUBLE); /* rounds to 32768 */
    assert_int_equal(mode_of(0, 1000.5), RECAP_MODE_FLOAT);
    assert_int_equal(mode_of(0, 1000.1), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(0.25, 0.25 + 4096.0625), RECAP_MODE_FLOAT);
    assert_int_equal(mode_of(0, (double)16777217.0f), RECAP_MODE_FLOAT);
    assert_int_equal(mode_of(0, 16777217.0), RECAP_MODE_DOUBLE); /* 2^24 + 1: not an f32 */
    assert_int_equal(mode_of(0, NAN), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(0, INFINITY), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(0, -INFINITY), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(0, 1e300), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(1e300, 1e300), RECAP_MODE_UNCHANGED);
    assert_int_equal(mode_of(1e300, 0), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(NAN, NAN), RECAP_MODE_UNCHANGED);
    assert_int_equal(mode_of(NAN, 1.0), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(INFINITY, INFINITY), RECAP_MODE_UNCHANGED);
    assert_int_equal(mode_of(INFINITY, -INFINITY), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(-INFINITY, 5.0), RECAP_MODE_DOUBLE);
    assert_int_equal(mode_of(5.0, 5.0), RECAP_MODE_UNCHANGED);
    assert_int_equal(mode_of(5.0, 5.004), RECAP_MODE_UNCHANGED); /* within the tolerance */
    assert_int_equal(mode_of(0.0, -0.0), RECAP_MODE_UNCHANGED);
    assert_int_equal(mode_of(0.0, 1e-12), RECAP_MODE_UNCHANGED);
    recap_channel_choose(5.0, 5.006, &c);
    assert_int_equal(c.mode, RECAP_MODE_SHORT);
    assert_int_equal(c.q, 1);
    assert_true(fabs(c.rec - 5.006) <= RECD_RECAP_SHORT_TOLERANCE);
    recap_channel_choose(-20.0, -20.5, &c);
    assert_int_equal(c.mode, RECAP_MODE_SHORT);
    assert_int_equal(c.q, -50);
    assert_true(c.rec == -20.5);
    /* Large magnitudes where 0.01 steps are below one ulp still reconstruct within 0.005. */
    double big = 1e15;
    recap_channel_choose(big, big + 0.125, &c);
    assert_true(c.mode != RECAP_MODE_UNCHANGED);
    assert_true(fabs(c.rec - (big + 0.125)) <= RECD_RECAP_SHORT_TOLERANCE);
}

/* Re-choosing from the reconstructed value gives the same choice (canonical encoding). */
/* The inline rounding is lround on the whole range quantise gives it: halves and the doubles
 * next to them, integers, both signs, and random values. */
static void test_round_short_is_lround(void **st)
{
    (void)st;
    for (long i = -32767; i <= 32767; i++) {
        double base[] = {(double)i, i + 0.5, i - 0.5, i + 0.25, i - 0.75};
        for (size_t k = 0; k < sizeof base / sizeof *base; k++) {
            double d = base[k];
            for (int step = 0; step < 3; step++) {
                if (fabs(d) < 32767.5)
                    assert_int_equal(recap_round_short(d), lround(d));
                d = nextafter(d, step == 0 ? INFINITY : -INFINITY);
                if (step == 1)
                    d = nextafter(d, -INFINITY); /* one below the value */
            }
        }
    }
    tu_rng rng = {0x0dd5};
    for (int n = 0; n < 2000000; n++) {
        double d = tu_rand_double(&rng, -32767.4999, 32767.4999);
        assert_int_equal(recap_round_short(d), lround(d));
    }
    assert_int_equal(recap_round_short(0.49999999999999994), 0);
    assert_int_equal(recap_round_short(-0.49999999999999994), 0);
    assert_int_equal(recap_round_short(-0.0), 0);
}

static void test_choice_is_idempotent(void **st)
{
    (void)st;
    tu_rng r = {42};
    for (int i = 0; i < 200000; i++) {
        double base = tu_rand_below(&r, 4) == 0 ? tu_rand_double(&r, -3e7, 3e7)
                                                : tu_rand_double(&r, -1000, 1000);
        double v = base + tu_rand_double(&r, -400, 400) * (tu_rand_below(&r, 2) ? 1 : 1e-3);
        recap_choice a, b;
        recap_channel_choose(base, v, &a);
        recap_channel_choose(base, a.rec, &b);
        assert_int_equal(a.mode, b.mode);
        assert_int_equal(a.q, b.q);
        assert_int_equal(f32_to_bits(a.f), f32_to_bits(b.f));
        assert_int_equal(f64_to_bits(a.rec), f64_to_bits(b.rec));
        if (a.mode == RECAP_MODE_SHORT || a.mode == RECAP_MODE_UNCHANGED)
            assert_true(fabs(a.rec - v) <= RECD_RECAP_SHORT_TOLERANCE);
        else
            assert_int_equal(f64_to_bits(a.rec), f64_to_bits(v));
    }
}

static void test_byte_layout(void **st)
{
    (void)st;
    double r[RECAP_CHANNELS] = {0};
    double v[RECAP_CHANNELS] = {0};
    v[0] = 1.5;                /* x SHORT 150 */
    v[1] = 1000.5;             /* y FLOAT */
    v[3] = 1000.1;             /* yaw DOUBLE */
    recd_buf b = {0};
    assert_int_equal(recap_movement_write(&b, r, v), 1);
    static const uint8_t head[] = {RECD_RECAP_MOVEMENT, 0x01 | (0x02 << 2) | 0x40, 0x03, 0x00, 150};
    assert_int_equal(b.len, sizeof(head) + 4 + 8);
    assert_memory_equal(b.data, head, sizeof(head));
    assert_int_equal(ld_be32(b.data + 5), f32_to_bits(1000.5f));
    assert_int_equal(ld_be64(b.data + 9), f64_to_bits(1000.1));
    assert_true(r[0] == 1.5 && r[1] == 1000.5 && r[3] == 1000.1);
    /* Parse back from zero. */
    double d[RECAP_CHANNELS] = {0};
    recap_cur c = {b.data, b.len, 1};
    assert_int_equal(recap_movement_parse(&c, d), RECAP_OK);
    assert_int_equal(c.pos, b.len);
    assert_memory_equal(d, r, sizeof(d));
    /* Only velocity: the velocity byte alone. */
    b.len = 0;
    memcpy(v, r, sizeof(v));
    v[8] = -1000.0625; /* beyond SHORT, exact as an f32 delta */
    assert_int_equal(recap_movement_write(&b, r, v), 1);
    static const uint8_t vel[] = {RECD_RECAP_MOVEMENT, 0x80, 0x02 << 4};
    assert_memory_equal(b.data, vel, sizeof(vel));
    /* Nothing changed: nothing written. */
    b.len = 0;
    assert_int_equal(recap_movement_write(&b, r, r), 0);
    assert_int_equal(b.len, 0);
    recd_buf_free(&b);
}

/* ---- through the encoder and decoder --------------------------------------------------------- */

typedef struct track {
    const double (*truth)[RECAP_CHANNELS]; /* per tick */
    double held[RECAP_CHANNELS];
    double max_err;
    uint64_t ticks;
    bool exact_required;
} track;

static double err_of(double want, double got)
{
    if (f64_to_bits(want) == f64_to_bits(got))
        return 0;
    if (!isfinite(want) || !isfinite(got))
        return INFINITY;
    return fabs(want - got);
}

static void compare(track *t, uint64_t tick)
{
    for (int i = 0; i < RECAP_CHANNELS; i++) {
        double e = err_of(t->truth[tick][i], t->held[i]);
        if (e > t->max_err)
            t->max_err = e;
    }
}

static int tr_tick(void *ctx, uint64_t tick, const recd_recap_state *s, const recd_recap_event *ev,
                   size_t n)
{
    (void)ev, (void)n;
    track *t = ctx;
    memcpy(t->held, s->pos, 3 * sizeof(double));
    memcpy(t->held + 3, s->rot, 3 * sizeof(double));
    memcpy(t->held + 6, s->vel, 3 * sizeof(double));
    compare(t, tick);
    t->ticks++;
    return 0;
}

static int tr_skip(void *ctx, uint64_t first, uint64_t count)
{
    track *t = ctx;
    for (uint64_t k = 0; k < count; k++)
        compare(t, first + k);
    t->ticks += count;
    return 0;
}

static void run_track(const double (*truth)[RECAP_CHANNELS], uint64_t n, uint32_t keyframe,
                      track *t, recd_buf *file)
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    recd_recap_encoder_options opt = {.keyframe_interval = keyframe};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(file)), 0);
    recd_recap_state s;
    memset(&s, 0, sizeof(s));
    for (uint64_t i = 0; i < n; i++) {
        memcpy(s.pos, truth[i], 3 * sizeof(double));
        memcpy(s.rot, truth[i] + 3, 3 * sizeof(double));
        memcpy(s.vel, truth[i] + 6, 3 * sizeof(double));
        assert_int_equal(recd_recap_encoder_tick(e, i, &s, NULL, 0), 0);
    }
    assert_int_equal(recd_recap_encoder_finish(e, NULL), 0);
    recd_recap_encoder_free(e);
    memset(t, 0, sizeof(*t));
    t->truth = truth;
    recd_recap_callbacks cb = {NULL, tr_tick, tr_skip, NULL, t};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(file->data, file->len, NULL, &cb, &res, NULL), 0);
    assert_int_equal(t->ticks, n);
}

static void test_special_values_round_trip(void **st)
{
    (void)st;
    static const double seq[] = {0,       327.67,  0,         -327.67, 327.68, 1e300,
                                 -1e300,  NAN,     INFINITY,  -INFINITY, 12.5,  12.5,
                                 1000.5,  1000.1,  -0.0,      5e-324,  1.7976931348623157e308,
                                 3.0e7,   3.0e7 + 0.01, 3.0e7 + 0.3, 64.0};
    size_t n = sizeof(seq) / sizeof(seq[0]);
    double (*truth)[RECAP_CHANNELS] = calloc(n, sizeof(*truth));
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < RECAP_CHANNELS; c++)
            truth[i][c] = seq[(i + (size_t)c) % n];
    recd_buf f = {0};
    track t;
    run_track((const double(*)[RECAP_CHANNELS])truth, n, 1000, &t, &f);
    assert_true(t.max_err <= RECD_RECAP_SHORT_TOLERANCE);
    free(truth);
    recd_buf_free(&f);
}

static void test_no_accumulation_100k(void **st)
{
    (void)st;
    const uint64_t n = 100000;
    double (*truth)[RECAP_CHANNELS] = calloc(n, sizeof(*truth));
    tu_rng r = {7};
    double cur[RECAP_CHANNELS] = {1234.5678, 70.123, -9876.54321, 10, -5, 10, 0, 0, 0};
    for (uint64_t i = 0; i < n; i++) {
        /* Steps that are not multiples of 0.01: each SHORT rounds, none may add up. */
        cur[0] += 0.0123456789;
        cur[1] += tu_rand_double(&r, -0.2, 0.2);
        cur[2] -= 0.0049999;
        cur[3] = fmod(cur[3] + 1.2345678 + 180.0, 360.0) - 180.0;
        cur[4] = (double)(float)tu_rand_double(&r, -90, 90);
        cur[5] = cur[3] + 0.003;
        cur[6] = tu_rand_double(&r, -0.3, 0.3);
        cur[7] = -0.0784000015258789;
        cur[8] = (i % 50 < 25) ? 0.0 : 0.2873;
        memcpy(truth[i], cur, sizeof(cur));
    }
    recd_buf f = {0};
    track t;
    run_track((const double(*)[RECAP_CHANNELS])truth, n, UINT32_MAX, &t, &f);
    print_message("100k ticks: max error %.6g, %zu bytes\n", t.max_err, f.len);
    assert_true(t.max_err <= RECD_RECAP_SHORT_TOLERANCE);
    /* x drifted 1234.57 blocks over the run: a rounding error that accumulated would show. */
    assert_true(truth[n - 1][0] - truth[0][0] > 1234);
    free(truth);
    recd_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_boundaries),
        cmocka_unit_test(test_round_short_is_lround),
        cmocka_unit_test(test_choice_is_idempotent),
        cmocka_unit_test(test_byte_layout),
        cmocka_unit_test(test_special_values_round_trip),
        cmocka_unit_test(test_no_accumulation_100k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
