/* SPDX-License-Identifier: MIT */
/* Editing .recap files (recd/edit.h): a cut starts with the player's full state at its first tick,
 * holds exactly the asked ticks and moves the header's start; split then concat gives the same
 * samples back; retime and transform are refused with a reason; every output verifies. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recd/edit.h"
#include "recd/format.h"
#include "recd/recap.h"
#include "recd/synth.h"

/* The mixed Recap recording these tests cut, MS long. */
static recd_buf generate(uint64_t ms)
{
    return tu_synth("recap", RECD_SYNTH_SCENARIO_MIXED, ms, 5);
}

static recd_edit_input input_of(const recd_buf *b)
{
    recd_edit_input in = {b->data, b->len};
    return in;
}

static recd_recap_header check_valid(const recd_buf *b)
{
    const recd_format *f = recd_format_sniff(b->data, b->len, NULL);
    assert_non_null(f);
    recd_format_verdict v;
    assert_int_equal(recd_format_verify(f, b->data, b->len, &v, NULL), 0);
    assert_true(v.valid);
    recd_recap_header h;
    assert_true(recd_recap_header_decode(b->data, b->len, &h, NULL) > 0);
    return h;
}

/* Movement a Recap encoder stores in short form is lossy within RECD_RECAP_SHORT_TOLERANCE per
 * channel, so a re-encoded file (every edit re-encodes) matches its source within it. */
#define MOVE_TOLERANCE (2 * RECD_RECAP_SHORT_TOLERANCE)

/* What a reader holds at each tick: the last state at or before it. */
typedef struct timeline {
    uint64_t frames;
    double (*pos)[6];
    float *health;
    uint64_t last_tick;
} timeline;

static int on_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    timeline *tl = ctx;
    if (m->type != RECD_MSG_STATE)
        return 0;
    const recd_recap_state *st = &m->recap_state->state;
    for (uint64_t t = m->recap_state->tick; t < tl->frames; t++) {
        memcpy(tl->pos[t], st->pos, 3 * sizeof(double));
        memcpy(tl->pos[t] + 3, st->rot, 3 * sizeof(double));
        tl->health[t] = st->health;
    }
    return 0;
}

static timeline timeline_of(const recd_buf *b, uint64_t frames)
{
    timeline tl = {frames, calloc(frames, sizeof *tl.pos), calloc(frames, sizeof *tl.health), 0};
    assert_non_null(tl.pos);
    assert_non_null(tl.health);
    char err[256];
    assert_int_equal(recd_export_msgs(b->data, b->len, on_msg, &tl, err, sizeof err), 0);
    return tl;
}

static void timeline_free(timeline *tl)
{
    free(tl->pos);
    free(tl->health);
}

/* b's ticks 0.. are a's ticks from `offset`, within the movement tolerance. */
static void assert_same_ticks(const timeline *a, uint64_t offset, const timeline *b)
{
    for (uint64_t t = 0; t < b->frames; t++) {
        for (int k = 0; k < 6; k++)
            assert_true(fabs(a->pos[offset + t][k] - b->pos[t][k]) <= MOVE_TOLERANCE);
        assert_true(a->health[offset + t] == b->health[t]);
    }
}

static void test_cut(void **state)
{
    (void)state;
    recd_buf f = generate(60000), out = {0};
    recd_recap_header h = check_valid(&f);
    assert_int_equal(h.frame_count, 1200);
    char err[256];
    recd_cut_opts o = {333, 777, false};
    assert_int_equal(recd_edit_cut(input_of(&f), &o, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    recd_recap_header c = check_valid(&out);
    assert_int_equal(c.frame_count, 777 - 333);
    assert_int_equal(c.start_ms, h.start_ms + 333 * 50);
    assert_int_equal(c.end_ms, c.start_ms + (777 - 333) * 50);
    /* Tick 0 of the cut is the original's tick 333, and so on. */
    timeline ta = timeline_of(&f, 1200), tb = timeline_of(&out, 444);
    assert_same_ticks(&ta, 333, &tb);
    timeline_free(&ta);
    timeline_free(&tb);
    /* Past the end: up to the end. keep-time cannot apply. */
    recd_buf_reset(&out);
    recd_cut_opts tail = {1100, 5000, false};
    assert_int_equal(recd_edit_cut(input_of(&f), &tail, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    assert_int_equal(check_valid(&out).frame_count, 100);
    recd_buf_reset(&out);
    recd_cut_opts keep = {10, 20, true};
    assert_int_equal(recd_edit_cut(input_of(&f), &keep, recd_buf_sink(&out), NULL, err, sizeof err),
                     -EINVAL);
    recd_cut_opts beyond = {1200, -1, false};
    assert_int_equal(recd_edit_cut(input_of(&f), &beyond, recd_buf_sink(&out), NULL, err, sizeof err),
                     -EINVAL);
    recd_buf_free(&f);
    recd_buf_free(&out);
}

typedef struct pieces {
    recd_buf b[3];
} pieces;

static int piece_sink(void *data, size_t i, recd_sink *sink)
{
    *sink = recd_buf_sink(&((pieces *)data)->b[i]);
    return 0;
}

static void test_split_concat_round_trip(void **state)
{
    (void)state;
    recd_buf f = generate(30000), joined = {0}, report = {0};
    pieces p = {{{0}}};
    int64_t at[2] = {150, 401};
    char err[256];
    assert_int_equal(recd_edit_split(input_of(&f), at, 2, false, piece_sink, &p, NULL, err, sizeof err), 0);
    assert_int_equal(check_valid(&p.b[0]).frame_count, 150);
    assert_int_equal(check_valid(&p.b[1]).frame_count, 251);
    assert_int_equal(check_valid(&p.b[2]).frame_count, 600 - 401);
    recd_edit_input in[3] = {input_of(&p.b[0]), input_of(&p.b[1]), input_of(&p.b[2])};
    assert_int_equal(recd_edit_concat(in, 3, -1, recd_buf_sink(&joined), NULL, err, sizeof err), 0);
    recd_recap_header j = check_valid(&joined), o = check_valid(&f);
    assert_int_equal(j.frame_count, o.frame_count);
    assert_int_equal(j.end_ms, o.end_ms);
    timeline ta = timeline_of(&f, 600), tb = timeline_of(&joined, 600);
    assert_same_ticks(&ta, 0, &tb);
    timeline_free(&ta);
    timeline_free(&tb);
    /* Split at keyframes (every 200 ticks), nothing is re-quantised: diff finds the same samples
     * and events (it ignores where gzip members end). */
    int64_t at_keyframe[1] = {200};
    for (int i = 0; i < 3; i++)
        recd_buf_reset(&p.b[i]);
    recd_buf_reset(&joined);
    assert_int_equal(
        recd_edit_split(input_of(&f), at_keyframe, 1, false, piece_sink, &p, NULL, err, sizeof err), 0);
    in[0] = input_of(&p.b[0]);
    in[1] = input_of(&p.b[1]);
    assert_int_equal(recd_edit_concat(in, 2, -1, recd_buf_sink(&joined), NULL, err, sizeof err), 0);
    assert_int_equal(recd_edit_diff(input_of(&f), input_of(&joined), &report, NULL, err, sizeof err), 0);
    for (int i = 0; i < 3; i++)
        recd_buf_free(&p.b[i]);
    recd_buf_free(&f);
    recd_buf_free(&joined);
    recd_buf_free(&report);
}

static void test_refused(void **state)
{
    (void)state;
    recd_buf f = generate(5000), out = {0};
    char err[256];
    recd_retime_opts r = {2, 0};
    assert_int_equal(recd_edit_retime(input_of(&f), &r, recd_buf_sink(&out), NULL, err, sizeof err),
                     -ENOTSUP);
    assert_non_null(strstr(err, "recap"));
    recd_transform_opts t = {{1, 2, 3}, 0, false, {0, 0, 0}};
    assert_int_equal(recd_edit_transform(input_of(&f), &t, recd_buf_sink(&out), NULL, err, sizeof err),
                     -ENOTSUP);
    assert_int_equal(out.len, 0);
    recd_buf_free(&f);
}

static int last_point(void *data, const recd_track_point *p)
{
    *(recd_track_point *)data = *p;
    return 0;
}

static void test_track(void **state)
{
    (void)state;
    recd_buf f = generate(5000);
    recd_track_point p;
    char err[256];
    assert_int_equal(recd_track_read(f.data, f.len, last_point, &p, NULL, err, sizeof err), 0);
    assert_int_equal(p.kind, RECD_TRACK_PLAYER);
    assert_true(p.t < 5.0 && p.t > 0);
    /* The last state: map y is Minecraft's -z, health 0..20 shown as percent. */
    timeline tl = timeline_of(&f, 100);
    assert_true(p.x == tl.pos[99][0] && p.y == -tl.pos[99][2] && p.z == tl.pos[99][1]);
    assert_true(p.health == tl.health[99] * 5.0);
    timeline_free(&tl);
    recd_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_split_concat_round_trip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_track),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
