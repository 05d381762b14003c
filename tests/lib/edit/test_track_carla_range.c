/* SPDX-License-Identifier: MIT */
/* Plots of a time range of a CARLA log (recd_track_read_range) start at the range's seek point
 * and stop after it, yet give within [from, to] exactly the points the whole read gives (same
 * actors, kinds, times, positions and speeds, bit for bit): over a synthetic log of each vector
 * width, at frames that add or delete actors, past the end, in logs whose time goes back or
 * stands still, with positions that are not numbers, and in the corpus log when present. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_synth.h"
#include "recd/edit.h"
#include "recd/format.h"
#include "recd/seek_index.h"

typedef struct points {
    recd_track_point *v;
    size_t n, cap;
} points;

static int keep(void *data, const recd_track_point *p)
{
    points *l = data;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n++] = *p;
    return 0;
}

static recd_buf generate(uint64_t ms, uint8_t width, uint32_t actors)
{
    recd_synth_params p = {recd_synth_format_find("carla"), RECD_SYNTH_SCENARIO_TRAFFIC, ms, 11};
    recd_synth_carla_layout l = {actors, width, RECD_CARLA_IDS_0_9_16};
    assert_non_null(p.format);
    recd_buf out = {0};
    assert_int_equal(recd_synth_write_carla_layout(&p, &l, recd_buf_sink(&out), NULL), 0);
    return out;
}

static recd_buf index_of(const recd_buf *log)
{
    recd_buf idx = {0};
    const recd_format *f = recd_format_find("carla");
    assert_int_equal(recd_format_index_build(f, log->data, log->len, &idx), 0);
    return idx;
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static bool same_point(const recd_track_point *a, const recd_track_point *b)
{
    return a->actor == b->actor && a->kind == b->kind && same_bits(a->t, b->t) &&
           same_bits(a->x, b->x) && same_bits(a->y, b->y) && same_bits(a->z, b->z) &&
           same_bits(a->speed, b->speed);
}

static bool in_range(const recd_track_point *p, double from, double to)
{
    return !(p->t < from || (to >= 0 && p->t > to)); /* rectool plot's filter */
}

/* The range read of [from, to] against the whole read's points: the same points within it, in
 * the same order. With times going forward also: every point it gives, outside the range too, is
 * the whole read's (from its first frame on it knows what the whole read knows there), and it
 * read only from about its seek point on and not far past to. How many points lie in the range. */
static size_t check_range(const recd_buf *log, const recd_buf *idx, const points *whole,
                          double from, double to, bool forward)
{
    points got = {0};
    char err[256] = "";
    assert_int_equal(recd_track_read_range(log->data, log->len, idx ? idx->data : NULL,
                                           idx ? idx->len : 0, from, to, keep, &got, NULL, err,
                                           sizeof err), 0);
    size_t k = 0, in = 0;
    for (size_t i = 0; i < whole->n; i++) {
        if (!in_range(&whole->v[i], from, to))
            continue;
        while (k < got.n && !in_range(&got.v[k], from, to))
            k++;
        if (k == got.n || !same_point(&whole->v[i], &got.v[k]))
            fail_msg("[%g, %g]: point %zu of the whole read (actor %lld at %.6f, speed %.17g) is "
                     "not the range read's (%s actor %lld at %.6f, speed %.17g)", from, to, i,
                     (long long)whole->v[i].actor, whole->v[i].t, whole->v[i].speed,
                     k == got.n ? "it ended;" : "", k < got.n ? (long long)got.v[k].actor : 0,
                     k < got.n ? got.v[k].t : 0, k < got.n ? got.v[k].speed : 0);
        k++;
        in++;
    }
    while (k < got.n && !in_range(&got.v[k], from, to))
        k++;
    if (k != got.n)
        fail_msg("[%g, %g]: the range read has a point the whole read lacks (at %.6f)", from, to,
                 got.v[k].t);
    if (forward && got.n) { /* from its first frame on it is the whole read, speeds too */
        bool found = false;
        for (size_t i = 0; !found && i + got.n <= whole->n; i++) {
            found = true;
            for (size_t j = 0; found && j < got.n; j++)
                found = same_point(&whole->v[i + j], &got.v[j]);
        }
        if (!found)
            fail_msg("[%g, %g]: the range read's points are no run of the whole read's", from, to);
    }
    if (forward && got.n) { /* it started at the seek point and stopped after to */
        double end = whole->v[whole->n - 1].t; /* past it the seek lands on the last frame */
        if (from > 1 && got.v[0].t < fmin(from, end) - 0.5)
            fail_msg("[%g, %g]: the range read started at %.3f s", from, to, got.v[0].t);
        if (to >= 0 && got.v[got.n - 1].t > to + 0.5)
            fail_msg("[%g, %g]: the range read went on to %.3f s", from, to, got.v[got.n - 1].t);
    }
    free(got.v);
    return in;
}

static points read_whole(const recd_buf *log)
{
    points all = {0};
    char err[256] = "";
    assert_int_equal(recd_track_read(log->data, log->len, keep, &all, NULL, err, sizeof err), 0);
    assert_true(all.n > 0);
    return all;
}

/* The byte offset of the k-th (0-based) FrameStart, or 0. */
static size_t frame_at(const recd_buf *log, size_t k)
{
    size_t pos = 28 + ld_le16(log->data + 26), seen = 0;
    while (pos + 5 <= log->len) {
        if (log->data[pos] == 0 && seen++ == k)
            return pos;
        pos += 5 + ld_le32(log->data + pos + 1);
    }
    return 0;
}

static double frame_elapsed(const recd_buf *log, size_t k)
{
    size_t at = frame_at(log, k);
    assert_true(at > 0);
    return f64_from_bits(ld_le64(log->data + at + 5 + 16));
}

static void set_frame_elapsed(recd_buf *log, size_t k, double elapsed)
{
    size_t at = frame_at(log, k);
    assert_true(at > 0);
    st_le64(log->data + at + 5 + 16, f64_to_bits(elapsed));
}

/* Times (s) of frames after the first that add or delete actors (EventAdd id 2, EventDel 3). */
static size_t event_times(const recd_buf *log, double *out, size_t max)
{
    size_t pos = 28 + ld_le16(log->data + 26), n = 0;
    double t = 0, start = -1, last = -1;
    while (pos + 5 <= log->len && n < max) {
        uint8_t id = log->data[pos];
        uint32_t size = ld_le32(log->data + pos + 1);
        if (id == 0)
            t = f64_from_bits(ld_le64(log->data + pos + 5 + 16));
        if (start < 0)
            start = t;
        if ((id == 2 || id == 3) && size >= 2 && ld_le16(log->data + pos + 5) && t > start &&
            t != last)
            out[n++] = last = t - start;
        pos += 5 + size;
    }
    return n;
}

/* Ranges over the whole log, short and open-ended, and around frames with events. */
static void check_spread(const recd_buf *log, const recd_buf *idx, bool forward)
{
    points whole = read_whole(log);
    double end = whole.v[whole.n - 1].t;
    size_t checked = 0;
    for (double from = 0.05; from < end + 5; from += end / 13)
        checked += check_range(log, idx, &whole, from, from + 1.5, forward) > 0;
    check_range(log, idx, &whole, end / 2, -1, forward);
    check_range(log, idx, &whole, end - 0.5, end + 60, forward);
    check_range(log, idx, &whole, end + 1, end + 10, forward); /* past the end: nothing */
    check_range(log, idx, &whole, 0, 3, forward);
    double ev[8];
    size_t n = event_times(log, ev, 8);
    for (size_t i = 0; i < n; i++)
        for (double d = -0.1; d < 0.12; d += 0.05) {
            check_range(log, idx, &whole, ev[i] + d, ev[i] + d + 2, forward);
            check_range(log, idx, &whole, ev[i] - 3 + d, ev[i] + d, forward);
        }
    assert_true(checked >= 10);
    free(whole.v);
}

static void test_synthetic_f32(void **state)
{
    (void)state;
    recd_buf log = generate(90000, 4, 40), idx = index_of(&log);
    double ev[1];
    assert_int_equal(event_times(&log, ev, 1), 1); /* the log adds or deletes actors on the way */
    check_spread(&log, &idx, true);
    check_spread(&log, NULL, true); /* no sidecar: the seek scans */
    recd_buf_free(&log);
    recd_buf_free(&idx);
}

static void test_synthetic_f64(void **state)
{
    (void)state;
    recd_buf log = generate(40000, 8, 25), idx = index_of(&log);
    check_spread(&log, &idx, true);
    recd_buf_free(&log);
    recd_buf_free(&idx);
}

/* A frame in the middle claims an earlier time: the range read cannot stop at to. */
static void test_time_goes_back(void **state)
{
    (void)state;
    recd_buf log = generate(60000, 4, 30);
    set_frame_elapsed(&log, 700, 12.0);
    recd_buf idx = index_of(&log);
    points whole = read_whole(&log);
    double at = frame_elapsed(&log, 699) - frame_elapsed(&log, 0);
    double starts[] = {11.5, 12, 12.01, at - 1, at, at + 0.05, 40};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
        check_range(&log, &idx, &whole, starts[i], starts[i] + 1, false);
        check_range(&log, &idx, &whole, starts[i], -1, false);
    }
    free(whole.v);
    recd_buf_free(&log);
    recd_buf_free(&idx);
}

/* Frames that repeat the time before them: an actor's speed stays what it was, so the range
 * read must find it further back than the last two positions. */
static void test_time_stands_still(void **state)
{
    (void)state;
    recd_buf log = generate(40000, 4, 20);
    double t0 = frame_elapsed(&log, 400);
    for (size_t k = 401; k <= 404; k++)
        set_frame_elapsed(&log, k, t0);
    recd_buf idx = index_of(&log);
    points whole = read_whole(&log);
    double first = frame_elapsed(&log, 0), rel = t0 - first;
    double next = frame_elapsed(&log, 405) - first;
    double starts[] = {rel - 0.01, rel, rel + 0.001, next - 0.001, next, next + 0.01};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        check_range(&log, &idx, &whole, starts[i], starts[i] + 1, true);
    free(whole.v);
    recd_buf_free(&log);
    recd_buf_free(&idx);
}

/* Position records that are not numbers are skipped by both reads, before the range too. */
static void test_positions_not_numbers(void **state)
{
    (void)state;
    recd_buf log = generate(30000, 4, 20);
    size_t from = frame_at(&log, 300), to = frame_at(&log, 303), broken = 0;
    for (size_t pos = from; pos + 5 <= to; pos += 5 + ld_le32(log.data + pos + 1))
        if (log.data[pos] == 6 && ld_le16(log.data + pos + 5) > 2) { /* Position packet */
            st_le32(log.data + pos + 7 + 4, f32_to_bits(NAN));
            st_le32(log.data + pos + 7 + 28 + 8, f32_to_bits(INFINITY));
            broken++;
        }
    assert_true(broken > 0);
    recd_buf idx = index_of(&log);
    points whole = read_whole(&log);
    double t = frame_elapsed(&log, 302) - frame_elapsed(&log, 0);
    double starts[] = {t - 0.1, t, t + 0.05, t + 0.1, t + 0.2};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        check_range(&log, &idx, &whole, starts[i], starts[i] + 1, true);
    free(whole.v);
    recd_buf_free(&log);
    recd_buf_free(&idx);
}

static void test_corpus_log(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = tu_corpus_file("carla", "DistanceToLaneCenter.log", &len);
    recd_buf log = {data, len, len};
    recd_buf idx = index_of(&log);
    check_spread(&log, &idx, true);
    free(data);
    recd_buf_free(&idx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_f32),
        cmocka_unit_test(test_synthetic_f64),
        cmocka_unit_test(test_time_goes_back),
        cmocka_unit_test(test_time_stands_still),
        cmocka_unit_test(test_positions_not_numbers),
        cmocka_unit_test(test_corpus_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
