/* SPDX-License-Identifier: MIT */
/* Sampled track reads (recd_track_read_sparse, the console's overview of a long file): the
 * points it gives are exactly the samples a full read gives at the keyframes it picked, spread
 * over the window and at most as many as asked, at most one per gzip member when members are
 * long; it declines (0) when there is no index, when
 * the window holds fewer keyframes than reads, and for formats not entered at keyframes; a
 * range read (recd_track_read_range) from 0 with an end stops at the end. */
#include "testutil.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recd/edit.h"
#include "recd/format.h"
#include "recd/recap.h"
#include "recd/seek_index.h"
#include "recd/synth.h"
#include "recd/track_point.h"

static recd_buf generate(const char *format, uint64_t ms)
{
    return tu_synth(format, RECD_SYNTH_SCENARIO_WALK, ms, 7);
}

/* A Recap file as recd writes one from a live session: a gzip member a second (a flush), so
 * keyframes (every 200 ticks) sit in members of their own. Re-encoded from a synthetic one. */
typedef struct rechunk {
    recd_recap_encoder *e;
    recd_buf out;
} rechunk;

static int on_header(void *ctx, const recd_recap_header *h)
{
    rechunk *r = ctx;
    recd_recap_encoder_options opt;
    recd_recap_encoder_options_from_header(h, &opt);
    return recd_recap_encoder_new(&r->e, h, &opt, recd_buf_sink(&r->out));
}

static int on_tick(void *ctx, uint64_t tick, const recd_recap_state *s, const recd_recap_event *ev, size_t n)
{
    rechunk *r = ctx;
    int rc = tick && tick % 20 == 0 ? recd_recap_encoder_flush(r->e) : 0;
    return rc ? rc : recd_recap_encoder_tick(r->e, tick, s, ev, n);
}

static recd_buf recorded_live(uint64_t ms)
{
    recd_buf src = generate("recap", ms);
    rechunk r = {0};
    recd_recap_callbacks cb = {on_header, on_tick, NULL, NULL, &r};
    assert_int_equal(recd_recap_decode(src.data, src.len, NULL, &cb, NULL, NULL), 0);
    recd_recap_finish_info fi;
    assert_int_equal(recd_recap_encoder_finish(r.e, &fi), 0);
    recd_recap_encoder_free(r.e);
    assert_int_equal(recd_recap_header_patch(r.out.data, r.out.len, (uint32_t)fi.frame_count, fi.end_ms), 0);
    recd_buf_free(&src);
    return r.out;
}

typedef struct points {
    recd_track_point *p;
    size_t n, cap;
} points;

static int keep(void *data, const recd_track_point *p)
{
    points *ps = data;
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 1024;
        ps->p = realloc(ps->p, ps->cap * sizeof *ps->p);
        assert_non_null(ps->p);
    }
    ps->p[ps->n++] = *p;
    return 0;
}

static const recd_track_point *at_time(const points *all, double t)
{
    for (size_t i = 0; i < all->n; i++)
        if (all->p[i].t == t)
            return &all->p[i];
    return NULL;
}

/* Field by field (the struct has padding), doubles bit for bit (a missing value is NaN). */
static bool same_point(const recd_track_point *a, const recd_track_point *b)
{
    const double va[] = {a->t, a->x, a->y, a->z, a->speed, a->health, a->armour, a->vehicle_health};
    const double vb[] = {b->t, b->x, b->y, b->z, b->speed, b->health, b->armour, b->vehicle_health};
    return a->actor == b->actor && a->kind == b->kind && memcmp(va, vb, sizeof va) == 0;
}

static void test_sampled_points_are_real_samples(void **state)
{
    (void)state;
    recd_buf data = recorded_live(30 * 60 * 1000); /* 36,000 ticks, a keyframe every 200 */
    const recd_format *f = recd_format_sniff(data.data, data.len, NULL);
    recd_buf idx = {0};
    assert_int_equal(recd_format_index_build(f, data.data, data.len, &idx), 0);
    char err[256];
    points all = {0}, some = {0};
    assert_int_equal(recd_track_read(data.data, data.len, keep, &all, NULL, err, sizeof err), 0);

    assert_int_equal(recd_track_read_sparse(data.data, data.len, idx.data, idx.len, 0, -1, 50, keep,
                                            &some, err, sizeof err), 1);
    assert_int_equal(some.n, 50);
    for (size_t i = 0; i < some.n; i++) {
        const recd_track_point *full = at_time(&all, some.p[i].t);
        assert_non_null(full); /* a sample the file holds, with its values */
        assert_true(same_point(full, &some.p[i]));
        if (i)
            assert_true(some.p[i].t > some.p[i - 1].t);
    }
    assert_true(some.p[0].t == 0.0);
    assert_true(some.p[some.n - 1].t > 1700.0); /* spread to the end, not bunched at the start */

    /* A window: its keyframes only. */
    some.n = 0;
    assert_int_equal(recd_track_read_sparse(data.data, data.len, idx.data, idx.len, 600, 1200, 20, keep,
                                            &some, err, sizeof err), 1);
    assert_int_equal(some.n, 20);
    for (size_t i = 0; i < some.n; i++)
        assert_true(some.p[i].t >= 600 && some.p[i].t <= 1200);

    /* Declined: no index, more reads than keyframes in the window, nothing to read. */
    assert_int_equal(recd_track_read_sparse(data.data, data.len, NULL, 0, 0, -1, 50, keep, &some, err,
                                            sizeof err), 0);
    assert_int_equal(recd_track_read_sparse(data.data, data.len, idx.data, idx.len, 600, 620, 50, keep,
                                            &some, err, sizeof err), 0);
    assert_int_equal(recd_track_read_sparse(data.data, data.len, idx.data, idx.len, 0, -1, 0, keep, &some,
                                            err, sizeof err), 0);
    free(all.p);
    free(some.p);
    recd_buf_free(&idx);
    recd_buf_free(&data);
}

/* Long gzip members (rectool generate writes a few): one pick per member, fewer than asked. */
static void test_one_pick_per_member(void **state)
{
    (void)state;
    recd_buf data = generate("recap", 30 * 60 * 1000);
    const recd_format *f = recd_format_sniff(data.data, data.len, NULL);
    recd_buf idx = {0};
    assert_int_equal(recd_format_index_build(f, data.data, data.len, &idx), 0);
    char err[256];
    points some = {0};
    assert_int_equal(recd_track_read_sparse(data.data, data.len, idx.data, idx.len, 0, -1, 50, keep,
                                            &some, err, sizeof err), 1);
    assert_true(some.n >= 2 && some.n < 50);
    free(some.p);
    recd_buf_free(&idx);
    recd_buf_free(&data);
}

static void test_range_from_zero_stops_at_its_end(void **state)
{
    (void)state;
    recd_buf data = generate("recap", 10 * 60 * 1000);
    char err[256];
    points head = {0};
    assert_int_equal(recd_track_read_range(data.data, data.len, NULL, 0, 0, 30, keep, &head, NULL, err,
                                           sizeof err), 0);
    assert_true(head.n > 0);
    for (size_t i = 0; i < head.n; i++)
        assert_true(head.p[i].t <= 31.0); /* the read stopped near 30 s, not at 600 */
    free(head.p);
    recd_buf_free(&data);
}

static void test_blocks_are_not_sampled(void **state)
{
    (void)state;
    recd_buf data = generate("samp-onfoot", 10 * 60 * 1000);
    char err[256];
    points some = {0};
    uint8_t fake_index[64] = {0};
    assert_int_equal(recd_track_read_sparse(data.data, data.len, fake_index, sizeof fake_index, 0, -1, 10,
                                            keep, &some, err, sizeof err), 0);
    assert_int_equal(some.n, 0);
    recd_buf_free(&data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_points_are_real_samples),
        cmocka_unit_test(test_one_pick_per_member),
        cmocka_unit_test(test_range_from_zero_stops_at_its_end),
        cmocka_unit_test(test_blocks_are_not_sampled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
