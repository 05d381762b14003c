/* SPDX-License-Identifier: MIT */
/* Crash recovery: .rec with a partial block, .recap cut mid-member, empty and header-only parts,
 * garbage quarantined, collisions, symlinks and hard links left alone, dry run, depth bound. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/recap.h"
#include "recd/recovery.h"
#include "recd/samp_rec.h"

static uint64_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* Writes root/rel, creating its directories. */
static void put(const tu_root_fixture *f, const char *rel, const void *data, size_t len)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", f->root, rel);
    for (char *s = path + strlen(f->root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    assert_int_equal(tu_write_file(path, data, len), 0);
}

/* A .rec of n blocks as the daemon's writer produces it. */
static void make_rec(recd_buf *b, recd_rec_type type, unsigned n)
{
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, type, RECD_REC_TIME_REJECT, recd_buf_sink(b)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    for (unsigned i = 0; i < n; i++) {
        if (type == RECD_REC_TYPE_ONFOOT) {
            recd_rec_onfoot o;
            memset(&o, 0, sizeof o);
            o.time_ms = 100 * i;
            o.rotation.w = 1.0f;
            o.position.x = (float)i;
            o.health = 100;
            assert_int_equal(recd_rec_writer_onfoot(&w, &o), 0);
        } else {
            recd_rec_vehicle v;
            memset(&v, 0, sizeof v);
            v.time_ms = 100 * i;
            v.rotation.w = 1.0f;
            v.vehicle_health = 1000.0f;
            v.position.y = (float)i;
            assert_int_equal(recd_rec_writer_vehicle(&w, &v), 0);
        }
    }
}

static const recd_recover_file *find(const recd_recover_summary *s, const char *part)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->files[i].part, part) == 0)
            return &s->files[i];
    fail_msg("no report for %s", part);
    return NULL;
}

static void test_rec_partial_block(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    make_rec(&b, RECD_REC_TYPE_ONFOOT, 3);
    size_t whole = b.len;
    assert_int_equal(whole, 8 + 3 * 72);
    static const uint8_t partial[30] = {0x2c, 0x01};
    assert_int_equal(recd_buf_append(&b, partial, sizeof partial), 0); /* 30 bytes of a 4th block */
    put(f, "samp-onfoot/s1/t.rec.part", b.data, b.len);
    recd_buf_reset(&b);
    make_rec(&b, RECD_REC_TYPE_VEHICLE, 2); /* complete: nothing to cut */
    put(f, "samp-vehicle/s2/v.rec.part", b.data, b.len);

    recd_recover_options opt = {.sync = true};
    recd_recover_summary s = {0};
    assert_int_equal(recd_recover_root(f->root_fd, &opt, &s), 2);
    assert_int_equal(s.finalized, 2);
    assert_int_equal(s.failed, 0);
    assert_int_equal(s.records_kept, 5);
    assert_int_equal(s.bytes_dropped, 30);
    const recd_recover_file *t = find(&s, "samp-onfoot/s1/t.rec.part");
    assert_int_equal(t->action, RECD_RECOVER_FINALIZED);
    assert_string_equal(t->final, "samp-onfoot/s1/t.rec");
    assert_string_equal(t->kind, "samp-onfoot");
    assert_int_equal(t->units_kept, 3);
    assert_string_equal(t->unit, "blocks"); /* the format table entry's unit */
    assert_int_equal(t->size_before, whole + 30);
    assert_int_equal(t->size_after, whole);
    assert_false(tu_exists(tu_at(f->root, "samp-onfoot/s1/t.rec.part")));
    assert_int_equal(file_size(tu_at(f->root, "samp-onfoot/s1/t.rec")), whole);
    const recd_recover_file *v = find(&s, "samp-vehicle/s2/v.rec.part");
    assert_string_equal(v->kind, "samp-vehicle");
    assert_int_equal(v->bytes_dropped, 0);
    assert_int_equal(file_size(tu_at(f->root, "samp-vehicle/s2/v.rec")), 8 + 2 * 67);

    /* The repaired file is a valid standard .rec. */
    size_t len;
    uint8_t *data = tu_read_file(tu_at(f->root, "samp-onfoot/s1/t.rec"), &len);
    assert_non_null(data);
    recd_rec_info info;
    assert_int_equal(recd_rec_probe(data, len, &info, NULL), 0);
    assert_int_equal(info.block_count, 3);
    free(data);
    recd_recover_summary_free(&s);

    /* A second run finds nothing to do. */
    assert_int_equal(recd_recover_root(f->root_fd, &opt, &s), 0);
    recd_recover_summary_free(&s);
    recd_buf_free(&b);
}

static void test_nothing_valid(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    make_rec(&b, RECD_REC_TYPE_VEHICLE, 0);
    assert_int_equal(b.len, 8);
    put(f, "a/empty.rec.part", "", 0);
    put(f, "a/header.rec.part", b.data, b.len);
    put(f, "a/cut-header.rec.part", b.data, 5);
    static const uint8_t partial[40] = {0x10};
    assert_int_equal(recd_buf_append(&b, partial, sizeof partial), 0); /* 40 of 67 block bytes */
    put(f, "a/short.rec.part", b.data, b.len);
    put(f, "a/recap-magic.recap.part", "RCA", 3);
    put(f, "a/garbage.rec.part", "hello world, not a recording", 28);
    put(f, "a/bad-type.rec.part", "\xe8\x03\x00\x00\x07\x00\x00\x00", 8);

    recd_recover_summary s = {0};
    assert_int_equal(recd_recover_root(f->root_fd, NULL, &s), 7);
    assert_int_equal(s.removed, 5);
    assert_int_equal(s.quarantined, 2);
    assert_int_equal(s.finalized, 0);
    assert_int_equal(find(&s, "a/empty.rec.part")->action, RECD_RECOVER_REMOVED);
    assert_int_equal(find(&s, "a/header.rec.part")->action, RECD_RECOVER_REMOVED);
    assert_int_equal(find(&s, "a/cut-header.rec.part")->action, RECD_RECOVER_REMOVED);
    assert_int_equal(find(&s, "a/short.rec.part")->action, RECD_RECOVER_REMOVED);
    assert_int_equal(find(&s, "a/recap-magic.recap.part")->action, RECD_RECOVER_REMOVED);
    assert_int_equal(s.bytes_dropped, 0 + 8 + 5 + 48 + 3);
    const recd_recover_file *g = find(&s, "a/garbage.rec.part");
    assert_int_equal(g->action, RECD_RECOVER_QUARANTINED);
    assert_string_equal(g->final, "a/garbage.rec.part.bad");
    assert_string_equal(recd_recover_action_name(g->action), "quarantined");
    assert_true(tu_exists(tu_at(f->root, "a/garbage.rec.part.bad")));
    assert_true(tu_exists(tu_at(f->root, "a/bad-type.rec.part.bad")));
    assert_false(tu_exists(tu_at(f->root, "a/empty.rec.part")));
    assert_false(tu_exists(tu_at(f->root, "a/empty.rec")));
    assert_false(tu_exists(tu_at(f->root, "a/header.rec")));
    recd_recover_summary_free(&s);

    /* Quarantined files are not picked up again. */
    assert_int_equal(recd_recover_root(f->root_fd, NULL, &s), 0);
    recd_recover_summary_free(&s);
    recd_buf_free(&b);
}

static void test_collision_and_dry_run(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    make_rec(&b, RECD_REC_TYPE_ONFOOT, 2);
    put(f, "s/x.rec", "existing", 8);
    put(f, "s/x.rec.part", b.data, b.len);
    assert_int_equal(recd_buf_append(&b, "zz", 2), 0);
    put(f, "s/y.rec.part", b.data, b.len);

    recd_recover_options dry = {.dry_run = true};
    recd_recover_summary s = {0};
    assert_int_equal(recd_recover_root(f->root_fd, &dry, &s), 2);
    assert_int_equal(s.finalized, 2);
    assert_int_equal(s.bytes_dropped, 2);
    assert_true(tu_exists(tu_at(f->root, "s/x.rec.part")));
    assert_int_equal(file_size(tu_at(f->root, "s/y.rec.part")), b.len); /* untouched */
    recd_recover_summary_free(&s);

    assert_int_equal(recd_recover_root(f->root_fd, NULL, &s), 2);
    assert_string_equal(find(&s, "s/x.rec.part")->final, "s/x-1.rec");
    assert_int_equal(file_size(tu_at(f->root, "s/x.rec")), 8); /* never overwritten */
    assert_int_equal(file_size(tu_at(f->root, "s/x-1.rec")), 8 + 2 * 72);
    assert_int_equal(file_size(tu_at(f->root, "s/y.rec")), 8 + 2 * 72);
    recd_recover_summary_free(&s);
    recd_buf_free(&b);
}

static void test_links_and_depth(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    make_rec(&b, RECD_REC_TYPE_ONFOOT, 1);
    assert_int_equal(recd_buf_append(&b, "tail", 4), 0);
    /* A file outside the root, reachable through a symlinked .part and a symlinked directory. */
    assert_int_equal(tu_write_file(tu_at(f->outside, "victim.rec.part"), b.data, b.len), 0);
    put(f, "s/keep", "", 0);
    assert_int_equal(symlink(tu_at(f->outside, "victim.rec.part"), tu_at(f->root, "s/l.rec.part")), 0);
    assert_int_equal(symlink(f->outside, tu_at(f->root, "dirlink")), 0);
    /* A hard link to it inside the root: truncating would change the outside file. */
    int hard = link(tu_at(f->outside, "victim.rec.part"), tu_at(f->root, "s/h.rec.part"));
    /* Deeper than the walk goes. */
    put(f, "d1/d2/d3/deep.rec.part", b.data, b.len);

    recd_recover_options opt = {.max_depth = 2};
    recd_recover_summary s = {0};
    int found = recd_recover_root(f->root_fd, &opt, &s);
    assert_int_equal(s.symlinks_skipped, 2);
    assert_int_equal(s.too_deep, 1);
    if (hard == 0) {
        assert_int_equal(found, 1);
        const recd_recover_file *h = find(&s, "s/h.rec.part");
        assert_int_equal(h->action, RECD_RECOVER_FAILED);
        assert_int_equal(h->error, -EPERM);
        assert_non_null(strstr(h->message, "links"));
    } else {
        assert_int_equal(found, 0); /* link() refused (e.g. a different filesystem) */
    }
    assert_int_equal(file_size(tu_at(f->outside, "victim.rec.part")), b.len);
    assert_true(tu_exists(tu_at(f->root, "d1/d2/d3/deep.rec.part")));
    recd_recover_summary_free(&s);
    recd_buf_free(&b);
}

/* A Recap file: ticks 0..9, 10..19, 20..29 in three members; returns member end offsets. */
static void make_recap(recd_buf *b, int64_t start_ms, size_t ends[3])
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("crash-test");
    h.player_name = recd_recap_str("Steve");
    h.start_ms = start_ms;
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, NULL, recd_buf_sink(b)), 0);
    recd_recap_state st;
    memset(&st, 0, sizeof st);
    st.health = 20.0f;
    for (unsigned m = 0; m < 3; m++) {
        for (unsigned t = 10 * m; t < 10 * m + 10; t++) {
            st.pos[0] = t * 0.25;
            st.pos[1] = 64.0;
            assert_int_equal(recd_recap_encoder_tick(e, t, &st, NULL, 0), 0);
        }
        assert_int_equal(recd_recap_encoder_flush(e), 0);
        ends[m] = b->len;
    }
    recd_recap_encoder_free(e);
}

static void test_recap_cut_mid_member(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    size_t ends[3];
    const int64_t start = INT64_C(1700000000000);
    make_recap(&b, start, ends);
    size_t cut = (ends[1] + ends[2]) / 2; /* inside the third member */
    put(f, "recap/p1/r.recap.part", b.data, cut);

    recd_recover_summary s = {0};
    assert_int_equal(recd_recover_root(f->root_fd, NULL, &s), 1);
    const recd_recover_file *r = find(&s, "recap/p1/r.recap.part");
    if (r->action != RECD_RECOVER_FINALIZED)
        fail_msg("%s: %s", recd_recover_action_name(r->action), r->message);
    assert_string_equal(r->kind, "recap");
    assert_int_equal(r->units_kept, 20);
    assert_string_equal(r->unit, "ticks");
    assert_int_equal(r->size_after, ends[1]);
    assert_int_equal(r->bytes_dropped, cut - ends[1]);
    assert_int_equal(s.records_kept, 20);

    size_t len;
    uint8_t *data = tu_read_file(tu_at(f->root, "recap/p1/r.recap"), &len);
    assert_non_null(data);
    assert_int_equal(len, ends[1]);
    recd_recap_decode_result res;
    recd_report rep = {0};
    assert_int_equal(recd_recap_decode(data, len, NULL, NULL, &res, &rep), 0);
    assert_int_equal(recd_report_errors(&rep), 0);
    assert_int_equal(res.ticks, 20);
    assert_int_equal(res.header.frame_count, 20);
    assert_int_equal(res.header.end_ms, start + 20 * RECD_RECAP_TICK_MS);
    assert_false(res.truncated);
    recd_report_free(&rep);
    free(data);
    recd_recover_summary_free(&s);
    recd_buf_free(&b);
}

static void test_recap_header_only_and_corrupt(void **state)
{
    tu_root_fixture *f = *state;
    recd_buf b = {0};
    size_t ends[3];
    make_recap(&b, 0, ends);
    recd_recap_header h;
    int hlen = recd_recap_header_decode(b.data, b.len, &h, NULL);
    assert_true(hlen > 7);
    put(f, "recap/p2/header.recap.part", b.data, (size_t)hlen + 5); /* 5 bytes of member 1 */
    put(f, "recap/p2/cut-header.recap.part", b.data, (size_t)hlen - 3);
    uint8_t bad[16] = {'R', 'C', 'A', 'P', 99, 0, 2, 0, 0};
    put(f, "recap/p2/version.recap.part", bad, sizeof bad);

    recd_recover_summary s = {0};
    assert_int_equal(recd_recover_root(f->root_fd, NULL, &s), 3);
    assert_int_equal(find(&s, "recap/p2/header.recap.part")->action, RECD_RECOVER_REMOVED);
    assert_int_equal(find(&s, "recap/p2/cut-header.recap.part")->action, RECD_RECOVER_REMOVED);
    assert_int_equal(find(&s, "recap/p2/version.recap.part")->action, RECD_RECOVER_QUARANTINED);
    assert_true(tu_exists(tu_at(f->root, "recap/p2/version.recap.part.bad")));
    recd_recover_summary_free(&s);
    recd_buf_free(&b);
}

/* The planner on hostile bytes never reads out of bounds and always decides: random bytes, and
 * valid .rec / .recap files with random cuts and byte flips. */
static void test_plan_hostile_bytes(void **state)
{
    (void)state;
    tu_rng rng = {42};
    recd_buf valid[2] = {{0}, {0}};
    size_t ends[3];
    make_recap(&valid[0], 1, ends);
    make_rec(&valid[1], RECD_REC_TYPE_VEHICLE, 5);
    for (int round = 0; round < 4000; round++) {
        const recd_buf *v = &valid[round % 2];
        size_t len = tu_rand_below(&rng, (uint32_t)v->len + 1);
        uint8_t *copy = malloc(len ? len : 1);
        assert_non_null(copy);
        memcpy(copy, v->data, len);
        for (unsigned flips = tu_rand_below(&rng, 4); flips > 0 && len > 0; flips--)
            copy[tu_rand_below(&rng, (uint32_t)len)] ^= (uint8_t)(1u << tu_rand_below(&rng, 8));
        recd_recover_plan plan;
        assert_int_equal(recd_recover_plan_buffer(copy, len, &plan), 0);
        assert_true(plan.keep <= len);
        assert_true(plan.header_len <= plan.keep);
        free(copy);
    }
    recd_buf_free(&valid[0]);
    recd_buf_free(&valid[1]);
    uint8_t buf[600];
    for (int round = 0; round < 2000; round++) {
        size_t len = tu_rand_below(&rng, sizeof buf + 1);
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)tu_rand(&rng);
        if (len > 0 && round % 3 == 0)
            buf[0] = round % 2 ? 0xE8 : 'R';
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        recd_recover_plan plan;
        assert_int_equal(recd_recover_plan_buffer(copy, len, &plan), 0);
        assert_true(plan.keep <= len);
        free(copy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rec_partial_block, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_nothing_valid, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_collision_and_dry_run, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_links_and_depth, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_recap_cut_mid_member, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_recap_header_only_and_corrupt, tu_root_setup, tu_root_teardown),
        cmocka_unit_test(test_plan_hostile_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
