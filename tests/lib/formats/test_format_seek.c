/* SPDX-License-Identifier: MIT */
/* Seeking (recd_format_seek, the sidecar index of docs/formats/seek-index.md): a cut that starts
 * at the keyframe the index points to is byte for byte the cut of a full scan, at every keyframe,
 * next to it, between keyframes and at gzip members that start without a keyframe; a torn,
 * damaged, foreign or empty index, or one that points past a shortened file, is used only for its
 * valid prefix and gives the same results; a frame log's seek lands on the last frame at or before
 * the time; fixed-size blocks seek arithmetically, without an index. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "recd/edit.h"
#include "recd/format.h"
#include "recd/recap.h"
#include "recd/seek_index.h"
#include "recd/synth.h"

/* A recording as the daemon writes one: a gzip member per flush, every `every` ticks, so members
 * start between keyframes. Made by re-encoding a synthetic one. */
typedef struct reencode {
    recd_recap_encoder *e;
    recd_buf out;
    uint64_t every, last_flush;
} reencode;

static int re_header(void *ctx, const recd_recap_header *h)
{
    reencode *r = ctx;
    recd_recap_encoder_options opt;
    recd_recap_encoder_options_from_header(h, &opt);
    return recd_recap_encoder_new(&r->e, h, &opt, recd_buf_sink(&r->out));
}

static int re_tick(void *ctx, uint64_t tick, const recd_recap_state *s, const recd_recap_event *ev,
                   size_t n)
{
    reencode *r = ctx;
    if (tick / r->every != r->last_flush) {
        r->last_flush = tick / r->every;
        int rc = recd_recap_encoder_flush(r->e);
        if (rc)
            return rc;
    }
    return recd_recap_encoder_tick(r->e, tick, s, ev, n);
}

static recd_buf daemon_like(uint64_t ms, uint64_t every)
{
    recd_buf src = tu_synth("recap", RECD_SYNTH_SCENARIO_MIXED, ms, 9);
    reencode r = {NULL, {0}, every, 0};
    recd_recap_callbacks cb = {re_header, re_tick, NULL, NULL, &r};
    assert_int_equal(recd_recap_decode(src.data, src.len, NULL, &cb, NULL, NULL), 0);
    recd_recap_finish_info fi;
    assert_int_equal(recd_recap_encoder_finish(r.e, &fi), 0);
    recd_recap_encoder_free(r.e);
    assert_int_equal(recd_recap_header_patch(r.out.data, r.out.len, (uint32_t)fi.frame_count,
                                             fi.end_ms), 0);
    assert_true(fi.members > ms / 50 / every / 2);
    recd_buf_free(&src);
    return r.out;
}

static recd_buf build_index(const recd_buf *data)
{
    const recd_format *f = recd_format_sniff(data->data, data->len, NULL);
    recd_buf idx = {0};
    assert_int_equal(recd_format_index_build(f, data->data, data->len, &idx), 0);
    return idx;
}

static size_t entries_of(const recd_buf *idx) { return (idx->len - 64) / 32; }

static recd_seek_point entry_at(const recd_buf *idx, size_t i)
{
    const uint8_t *e = idx->data + 64 + 32 * i;
    recd_seek_point p = {(int64_t)ld_le64(e), ld_le64(e + 8), (int64_t)ld_le64(e + 16)};
    return p;
}

/* The seek cut of [from, to) through index equals the full-scan cut (both may fail alike). */
static void same_cut(const recd_buf *data, const recd_buf *idx, int64_t from, int64_t to)
{
    recd_edit_input in = {data->data, data->len};
    recd_cut_opts o = {from, to, false};
    recd_buf full = {0}, seek = {0};
    char e1[256] = "", e2[256] = "";
    int rc1 = recd_edit_cut(in, &o, recd_buf_sink(&full), NULL, e1, sizeof e1);
    int rc2 = recd_edit_cut_seek(in, idx ? idx->data : NULL, idx ? idx->len : 0, &o,
                                 recd_buf_sink(&seek), NULL, e2, sizeof e2);
    if (rc1 != rc2 || full.len != seek.len ||
        (full.len && memcmp(full.data, seek.data, full.len) != 0)) /* no memcmp of NULL */
        fail_msg("cut [%lld, %lld): full scan rc %d (%s, %zu bytes), seek rc %d (%s, %zu bytes)",
                 (long long)from, (long long)to, rc1, e1, full.len, rc2, e2, seek.len);
    recd_buf_free(&full);
    recd_buf_free(&seek);
}

/* Every keyframe (k - 1, k, k + 1, between two) and every member that starts between keyframes. */
static void cuts_around_keyframes(const recd_buf *data, const recd_buf *idx)
{
    size_t n = entries_of(idx);
    int64_t last_member = -1;
    for (size_t i = 0; i < n; i++) {
        recd_seek_point p = entry_at(idx, i);
        if (p.time > 0)
            same_cut(data, idx, p.time - 1, p.time + 250);
        same_cut(data, idx, p.time, p.time + 250);
        same_cut(data, idx, p.time + (i % 2 ? 1 : 100), i % 5 ? p.time + 201 : -1);
        if (p.aux != last_member && p.aux % 200 != 0) {
            same_cut(data, idx, p.aux - 1, p.aux + 300);
            same_cut(data, idx, p.aux, p.aux + 1);
            same_cut(data, idx, p.aux + 1, p.aux + 450);
        }
        last_member = p.aux;
    }
}

static void test_recap_cuts_match_full_scan(void **state)
{
    (void)state;
    recd_buf data = tu_synth("recap", RECD_SYNTH_SCENARIO_WALK, 5 * 60 * 1000, 1);
    recd_buf idx = build_index(&data);
    size_t n = entries_of(&idx);
    assert_int_equal(n, 30); /* a keyframe every 200 ticks of 6000 */
    bool late_member = false;
    for (size_t i = 0; i < n; i++) {
        recd_seek_point p = entry_at(&idx, i);
        assert_int_equal(p.time, (int64_t)(200 * i));
        late_member |= p.aux % 200 != 0;
    }
    assert_true(late_member); /* a member that starts between keyframes is exercised */
    cuts_around_keyframes(&data, &idx);
    same_cut(&data, NULL, 4321, 4700); /* no index: the seek scans */
    same_cut(&data, &idx, 0, -1);
    same_cut(&data, &idx, 5999, -1);
    same_cut(&data, &idx, 6000, -1); /* past the end: both refuse */
    recd_buf_free(&idx);
    recd_buf_free(&data);
}

static void test_daemon_like_cuts_match_full_scan(void **state)
{
    (void)state; /* events, inventories, idle runs; a member every 1.5 s as the daemon flushes */
    recd_buf data = daemon_like(2 * 60 * 1000, 30);
    recd_buf idx = build_index(&data);
    assert_int_equal(entries_of(&idx), 12);
    cuts_around_keyframes(&data, &idx);
    for (int64_t t = 15; t < 2400; t += 290) /* members that start between keyframes */
        same_cut(&data, &idx, t, t + 90);
    recd_buf_free(&idx);
    recd_buf_free(&data);
}

/* The seek of `time` through idx equals the one without an index (the scan). */
static void same_seek(const recd_format *f, const recd_buf *data, const recd_buf *idx, int64_t t)
{
    recd_seek_point a, b;
    assert_int_equal(recd_format_seek(f, data->data, data->len, NULL, 0, t, &a), 0);
    assert_int_equal(recd_format_seek(f, data->data, data->len, idx->data, idx->len, t, &b), 0);
    assert_int_equal(a.time, b.time);
    assert_int_equal(a.offset, b.offset);
    assert_int_equal(a.aux, b.aux);
}

static void test_damaged_index(void **state)
{
    (void)state;
    recd_buf data = tu_synth("recap", RECD_SYNTH_SCENARIO_WALK, 5 * 60 * 1000, 1);
    const recd_format *f = recd_format_sniff(data.data, data.len, NULL);
    recd_buf good = build_index(&data);
    size_t n = entries_of(&good);
    recd_seek_index_status st;
    assert_int_equal(recd_seek_index_check(f, data.data, data.len, good.data, good.len, &st), 0);
    assert_true(st.header_ok);
    assert_int_equal(st.valid, n);
    assert_false(recd_seek_index_stale(f, data.data, data.len, good.data, good.len));
    for (int how = 0; how < 5; how++) {
        recd_buf bad = {0};
        assert_int_equal(recd_buf_append(&bad, good.data, good.len), 0);
        size_t want_valid = n / 2;
        if (how == 0)
            bad.len = 64 + 32 * (n / 2) + 13; /* torn inside an entry */
        else if (how == 1)
            bad.data[64 + 32 * (n / 2) + 9] ^= 0x40; /* an offset bit: its CRC fails */
        else if (how == 2)
            bad.data[64 + 32 * (n / 2) + 24] ^= 1; /* the probe CRC of the data it points at */
        else if (how == 3)
            bad.data[30] ^= 1, want_valid = 0; /* the header's CRC */
        else
            bad.len = 64, want_valid = 0; /* a header only */
        recd_seek_index_check(f, data.data, data.len, bad.data, bad.len, &st);
        assert_int_equal(st.valid, want_valid);
        assert_true(recd_seek_index_stale(f, data.data, data.len, bad.data, bad.len));
        for (int64_t t = 0; t < 6000; t += 137)
            same_seek(f, &data, &bad, t);
        same_cut(&data, &bad, 3100, 3400);
        recd_buf_free(&bad);
    }
    /* Another recording's index: its identity does not match, nothing of it is used. */
    recd_buf other = tu_synth("recap", RECD_SYNTH_SCENARIO_WALK, 5 * 60 * 1000, 2);
    recd_buf oidx = build_index(&other);
    recd_seek_index_check(f, data.data, data.len, oidx.data, oidx.len, &st);
    assert_false(st.header_ok);
    same_cut(&data, &oidx, 3100, 3400);
    /* A file shortened to its first member: the entries past its end are not valid. */
    recd_seek_point second = {0};
    for (size_t i = 0; i < n && second.offset == 0; i++)
        if (entry_at(&good, i).offset != entry_at(&good, 0).offset)
            second = entry_at(&good, i);
    assert_true(second.offset > 0);
    recd_seek_index_check(f, data.data, (size_t)second.offset, good.data, good.len, &st);
    assert_true(st.header_ok);
    assert_true(st.valid > 0 && st.valid < n);
    assert_true(st.last.offset < second.offset);
    recd_buf_free(&oidx);
    recd_buf_free(&other);
    recd_buf_free(&good);
    recd_buf_free(&data);
}

static void test_frame_log_seek(void **state)
{
    (void)state;
    recd_buf data = tu_synth("carla", RECD_SYNTH_SCENARIO_TRAFFIC, 90 * 1000, 3);
    const recd_format *f = recd_format_sniff(data.data, data.len, NULL);
    recd_buf idx = build_index(&data);
    assert_true(entries_of(&idx) >= 80 && entries_of(&idx) <= 92); /* about one a second */
    /* Complete, though frames follow its last entry: fewer than a second of them. */
    assert_false(recd_seek_index_stale(f, data.data, data.len, idx.data, idx.len));
    assert_true(recd_seek_index_stale(f, data.data, data.len, idx.data, idx.len - 32));
    for (int64_t t = 0; t < 90000; t += 777) {
        same_seek(f, &data, &idx, t);
        recd_seek_point p;
        assert_int_equal(recd_format_seek(f, data.data, data.len, idx.data, idx.len, t, &p), 0);
        assert_true(p.time <= t);
        assert_int_equal(data.data[p.offset], 0); /* a FrameStart packet */
        assert_true(t - p.time < 200); /* frames are 50 ms apart: the last one before t */
    }
    recd_buf_free(&idx);
    recd_buf_free(&data);
}

static void test_blocks_seek_arithmetically(void **state)
{
    (void)state;
    recd_buf data = tu_synth("samp-onfoot", RECD_SYNTH_SCENARIO_WALK, 60 * 1000, 4);
    const recd_format *f = recd_format_sniff(data.data, data.len, NULL);
    recd_buf idx = {0};
    assert_int_equal(recd_format_index_build(f, data.data, data.len, &idx), -ENOTSUP);
    size_t blocks = (data.len - 8) / 72;
    for (int64_t t = 0; t < 61000; t += 333) {
        recd_seek_point p;
        assert_int_equal(recd_format_seek(f, data.data, data.len, NULL, 0, t, &p), 0);
        assert_int_equal(p.offset, 8 + (uint64_t)p.aux * 72); /* header + n x block size */
        assert_int_equal(p.time, (int64_t)ld_le32(data.data + p.offset));
        uint64_t next = (uint64_t)p.aux + 1;
        if (p.aux > 0 || p.time <= t)
            assert_true(p.time <= t);
        if (next < blocks)
            assert_true((int64_t)ld_le32(data.data + 8 + next * 72) > t);
    }
    recd_buf_free(&data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recap_cuts_match_full_scan),
        cmocka_unit_test(test_daemon_like_cuts_match_full_scan),
        cmocka_unit_test(test_damaged_index),
        cmocka_unit_test(test_frame_log_seek),
        cmocka_unit_test(test_blocks_seek_arithmetically),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
