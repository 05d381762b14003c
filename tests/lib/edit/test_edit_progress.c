/* SPDX-License-Identifier: MIT */
/* The progress watcher of the edit calls and recd_track_read (recd/edit.h): done never goes back
 * nor past total, the last call says done == total, and calls come every few thousand messages,
 * not for each one. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "recd/edit.h"
#include "recd/samp_rec.h"

#define BLOCKS 20000u

typedef struct watch {
    size_t calls;
    uint64_t done, total;
    bool backwards, beyond;
} watch;

static void on_progress(void *data, uint64_t done, uint64_t total)
{
    watch *w = data;
    if (w->calls > 0 && done < w->done)
        w->backwards = true;
    if (done > total)
        w->beyond = true;
    w->calls++;
    w->done = done;
    w->total = total;
}

/* A walk of BLOCKS on-foot blocks, 100 ms apart. */
static recd_buf walk_file(void)
{
    recd_buf out = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT,
                                          recd_buf_sink(&out)), 0);
    for (uint32_t i = 0; i < BLOCKS; i++) {
        recd_rec_onfoot b;
        memset(&b, 0, sizeof b);
        b.time_ms = i * 100;
        b.position = (recd_vec3f){(float)i * 0.1f, 0, 10};
        b.rotation = (recd_quat){1, 0, 0, 0};
        b.health = 100;
        assert_int_equal(recd_rec_writer_onfoot(&w, &b), 0);
    }
    return out;
}

/* What every watched call must have told: finished, in order, and not once per message. */
static void assert_watched(const watch *w, uint64_t messages_at_most)
{
    assert_false(w->backwards);
    assert_false(w->beyond);
    assert_true(w->calls >= 2); /* the start and the end at least */
    assert_true(w->total > 0);
    assert_true(w->done == w->total);
    assert_true(w->calls <= messages_at_most / 1000 + 8);
}

static int one_sink(void *data, size_t i, recd_sink *sink)
{
    recd_buf *bufs = data;
    *sink = recd_buf_sink(&bufs[i]);
    return 0;
}

static int count_point(void *data, const recd_track_point *p)
{
    (void)p;
    (*(size_t *)data)++;
    return 0;
}

static void test_every_edit_reports(void **state)
{
    (void)state;
    recd_buf f = walk_file();
    recd_edit_input in = {f.data, f.len};
    char err[256] = "";

    watch w = {0};
    recd_progress p = {on_progress, &w};
    recd_buf out = {0};
    recd_cut_opts cut = {1000, 1500000, false};
    assert_int_equal(recd_edit_cut(in, &cut, recd_buf_sink(&out), &p, err, sizeof err), 0);
    assert_watched(&w, 2 * BLOCKS);

    memset(&w, 0, sizeof w);
    recd_buf_reset(&out);
    recd_retime_opts retime = {2.0, 5.0};
    assert_int_equal(recd_edit_retime(in, &retime, recd_buf_sink(&out), &p, err, sizeof err), 0);
    assert_watched(&w, 3 * BLOCKS);

    memset(&w, 0, sizeof w);
    recd_buf_reset(&out);
    recd_transform_opts move = {{1, 2, 3}, 90, false, {0, 0, 0}};
    assert_int_equal(recd_edit_transform(in, &move, recd_buf_sink(&out), &p, err, sizeof err), 0);
    assert_watched(&w, 2 * BLOCKS);

    memset(&w, 0, sizeof w);
    recd_buf_reset(&out);
    recd_edit_input two[2] = {in, in};
    assert_int_equal(recd_edit_concat(two, 2, -1, recd_buf_sink(&out), &p, err, sizeof err), 0);
    assert_watched(&w, 4 * BLOCKS);

    memset(&w, 0, sizeof w);
    recd_buf pieces[2] = {{0}, {0}};
    int64_t at[1] = {1000000};
    assert_int_equal(recd_edit_split(in, at, 1, false, one_sink, pieces, &p, err, sizeof err), 0);
    assert_watched(&w, 2 * BLOCKS);
    recd_buf_free(&pieces[0]);
    recd_buf_free(&pieces[1]);

    memset(&w, 0, sizeof w);
    recd_buf report = {0};
    assert_int_equal(recd_edit_diff(in, in, &report, &p, err, sizeof err), 0);
    assert_watched(&w, 3 * BLOCKS);
    recd_buf_free(&report);

    memset(&w, 0, sizeof w);
    size_t points = 0;
    assert_int_equal(recd_track_read(f.data, f.len, count_point, &points, &p, err, sizeof err), 0);
    assert_int_equal(points, BLOCKS);
    assert_watched(&w, BLOCKS);

    /* No watcher, or one without a function: the same results. */
    recd_progress none = {NULL, NULL};
    recd_buf_reset(&out);
    assert_int_equal(recd_edit_cut(in, &cut, recd_buf_sink(&out), &none, err, sizeof err), 0);
    recd_buf_reset(&out);
    assert_int_equal(recd_edit_cut(in, &cut, recd_buf_sink(&out), NULL, err, sizeof err), 0);
    recd_buf_free(&out);
    recd_buf_free(&f);
}

/* A failed edit does not claim to be finished. */
static void test_failure_does_not_finish(void **state)
{
    (void)state;
    recd_buf f = walk_file();
    recd_edit_input in = {f.data, f.len};
    char err[256] = "";
    watch w = {0};
    recd_progress p = {on_progress, &w};
    recd_buf out = {0};
    recd_cut_opts empty = {5000, 5000, false};
    assert_int_equal(recd_edit_cut(in, &empty, recd_buf_sink(&out), &p, err, sizeof err), -EINVAL);
    assert_false(w.backwards);
    assert_true(w.done < w.total);
    recd_buf_free(&out);
    recd_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_edit_reports),
        cmocka_unit_test(test_failure_does_not_finish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
