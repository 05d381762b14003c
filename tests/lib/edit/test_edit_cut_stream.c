/* SPDX-License-Identifier: MIT */
/* A ranged cut streams (recd_format_edit.cut_take): fed by the ranged read, the cut writes each
 * state and event of the range before the read makes the next one, so it never holds the range;
 * and a cut that fails while the read goes on still names the read's own failure, as a cut of
 * the loaded range does. A read from a seek point hands over nothing before its keyframe. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/format_edit.h"
#include "formats/format_seek.h"
#include "recd/edit.h"
#include "recd/format.h"
#include "recd/seek_index.h"
#include "recd/synth.h"

/* The mixed Recap recording these tests cut, MS long. */
static recd_buf generate(uint64_t ms)
{
    return tu_synth("recap", RECD_SYNTH_SCENARIO_MIXED, ms, 5);
}

static recd_buf build_index(const recd_buf *data)
{
    const recd_format *f = recd_format_sniff(data->data, data->len, NULL);
    recd_buf idx = {0};
    assert_int_equal(recd_format_index_build(f, data->data, data->len, &idx), 0);
    return idx;
}

/* How many index entries (keyframes) share the first one's gzip member. */
static size_t entries_in_one_member(const recd_buf *idx)
{
    size_t n = 0;
    const uint8_t *first = idx->data + 64;
    for (const uint8_t *e = first; e + 32 <= idx->data + idx->len; e += 32)
        n += ld_le64(e + 8) == ld_le64(first + 8);
    return n;
}

/* The cut between the read and a counting writer. */
typedef struct streaming {
    const struct recd_format_edit *e;
    recd_edit_cutter *cutter;
    int64_t from, to;
    size_t taken, emitted;
    int64_t first_state; /* the tick of the first state the read handed over; -1: none yet */
    size_t in_range;      /* states and events of [from, to) taken */
    size_t most_held;     /* of those, the most taken and not yet written */
    size_t written_there; /* of those, written while the cut had them */
} streaming;

static int count_emit(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)m;
    (void)err;
    (void)errlen;
    streaming *s = ctx;
    s->emitted++;
    return 0;
}

static int take(void *ctx, recd_msg *m, char *err, size_t errlen)
{
    streaming *s = ctx;
    int64_t t = s->e->time_of(m);
    bool in_range = t >= s->from && t < s->to;
    size_t before = s->emitted;
    s->taken++;
    if (m->type == RECD_MSG_STATE && s->first_state < 0)
        s->first_state = t;
    int rc = s->e->cut_take(s->cutter, m, err, errlen); /* m is the cut's now */
    if (in_range) {
        s->in_range++;
        s->written_there += s->emitted > before;
        size_t held = s->in_range > s->emitted ? s->in_range - s->emitted : 0;
        if (held > s->most_held)
            s->most_held = held;
    }
    return rc;
}

static int lend(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    recd_msg copy;
    int rc = recd_msg_copy(&copy, m);
    return rc < 0 ? rc : take(ctx, &copy, err, errlen);
}

static void test_each_message_written_as_read(void **state)
{
    (void)state;
    recd_buf data = generate(3 * 60 * 1000);
    recd_buf idx = build_index(&data);
    const recd_format *f = recd_format_sniff(data.data, data.len, NULL);
    assert_non_null(f->edit->cut_take); /* Recap's cut streams */
    recd_cut_opts o = {1234, 2345, false};
    streaming s = {f->edit, NULL, o.from, o.to, 0, 0, -1, 0, 0, 0};
    s.cutter = f->edit->cut_start(&o, count_emit, &s);
    assert_non_null(s.cutter);
    recd_seek_read r = {o.from, o.to, true, take};
    char err[256] = "";
    assert_int_equal(recd_format__export_range(f, data.data, data.len, idx.data, idx.len, &r,
                                               lend, &s, err, sizeof err), 1);
    size_t before_end = s.emitted;
    assert_int_equal(f->edit->cut_finish(s.cutter, 0, err, sizeof err), 0);
    assert_int_equal(s.emitted, before_end + 2); /* the end's flush and the close */
    /* The read starts at the keyframe before `from` (one every 200 ticks), not at the first of
     * the gzip member that holds it (this file has one member). */
    assert_true(entries_in_one_member(&idx) > 6);
    assert_int_equal(s.first_state, 1200);
    assert_true(s.taken > s.in_range);
    assert_true(s.in_range > 100);
    assert_int_equal(s.written_there, s.in_range);
    assert_int_equal(s.most_held, 0);
    recd_buf_free(&idx);
    recd_buf_free(&data);
}

/* A streamed cut fails as soon as it reads the open here (keep-time after 0), while the read goes
 * on into a damaged gzip member: the read's failure is the one named, and nothing is written. */
static void test_read_failure_named_first(void **state)
{
    (void)state;
    recd_buf data = generate(10 * 60 * 1000); /* a gzip member every few minutes */
    recd_buf idx = build_index(&data);
    /* The last keyframe in a gzip member of its own, not the first member's: the cuts from
     * before it below read none of it. */
    size_t entries = (idx.len - 64) / 32;
    int64_t key = -1;
    uint64_t member = 0;
    for (size_t i = entries; i-- > 1 && key < 0;) {
        const uint8_t *e = idx.data + 64 + 32 * i, *first = idx.data + 64;
        if (ld_le64(e + 8) != ld_le64(first + 8) && ld_le64(e + 8) != ld_le64(e - 32 + 8)) {
            key = (int64_t)ld_le64(e);
            member = ld_le64(e + 8);
        }
    }
    assert_true(key > 1000);
    data.data[member + 40] ^= 0x55; /* inside the member's deflate data */
    recd_edit_input in = {data.data, data.len};
    for (int keep = 0; keep < 2; keep++) {
        recd_cut_opts o = {key + 10, key + 1000, keep == 1};
        recd_buf out = {0};
        char err[256] = "";
        int rc = recd_edit_cut_seek(in, idx.data, idx.len, &o, recd_buf_sink(&out), NULL, err,
                                    sizeof err);
        assert_int_equal(rc, -EBADMSG);
        assert_non_null(strstr(err, "not a valid Recap file"));
        assert_int_equal(out.len, 0);
        recd_buf_free(&out);
    }
    /* Before the damage, the cut's own refusals are named, as in a cut of the loaded range. */
    recd_cut_opts early = {10, 100, true};
    recd_cut_opts empty = {100, 100, false};
    const recd_cut_opts *refused[] = {&early, &empty};
    for (size_t i = 0; i < 2; i++) {
        recd_buf seek = {0}, full = {0};
        char e1[256] = "", e2[256] = "";
        assert_int_equal(recd_edit_cut_seek(in, idx.data, idx.len, refused[i],
                                            recd_buf_sink(&seek), NULL, e1, sizeof e1), -EINVAL);
        recd_buf whole = generate(10 * 60 * 1000);
        recd_edit_input undamaged = {whole.data, whole.len};
        assert_int_equal(recd_edit_cut(undamaged, refused[i], recd_buf_sink(&full), NULL, e2,
                                       sizeof e2), -EINVAL);
        assert_string_equal(e1, e2);
        assert_int_equal(seek.len, 0);
        recd_buf_free(&whole);
        recd_buf_free(&seek);
        recd_buf_free(&full);
    }
    recd_buf_free(&idx);
    recd_buf_free(&data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_message_written_as_read),
        cmocka_unit_test(test_read_failure_named_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
