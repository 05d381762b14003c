/* SPDX-License-Identifier: MIT */
/* Retention: only files recd marked as its own; by age, per-session count and total size; dry run; .part files never touched;
 * symlinks never followed; emptied directories removed; deterministic order; every format recd
 * writes is a candidate (by the format table), foreign replays never; a part's manifest goes with
 * it. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "recd/own_mark.h"
#include "recd/retention.h"

/* Creates root/rel (and its directories) with size bytes and the given mtime (Unix seconds);
 * with marked_as, carrying recd's mark for that name (own_mark.h), as recd's parts do. */
static void put_as(const tu_root_fixture *f, const char *rel, size_t size, int64_t mtime_s,
                   const char *marked_as)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", f->root, rel);
    for (char *s = path + strlen(f->root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    char *data = calloc(1, size + 1);
    assert_non_null(data);
    assert_int_equal(tu_write_file(path, data, size), 0);
    free(data);
    if (marked_as) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        int rc = recd_own_mark_set(fd, marked_as);
        close(fd);
        if (rc == -ENOTSUP || rc == -EOPNOTSUPP)
            skip(); /* this filesystem keeps no user xattrs: recd marks nothing, deletes nothing */
        assert_int_equal(rc, 0);
    }
    struct timespec ts[2] = {{mtime_s, 0}, {mtime_s, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/* A file recd wrote where it is. */
static void put(const tu_root_fixture *f, const char *rel, size_t size, int64_t mtime_s)
{
    put_as(f, rel, size, mtime_s, rel);
}

/* A file recd did not write. */
static void put_foreign(const tu_root_fixture *f, const char *rel, size_t size, int64_t mtime_s)
{
    put_as(f, rel, size, mtime_s, NULL);
}

/* A tree with three sessions, an open .part (the oldest file of all) and a quarantined file. */
static int setup(void **state)
{
    tu_root_setup(state);
    const tu_root_fixture *f = *state;
    put(f, "samp-onfoot/s1/a.rec", 100, 1000);
    put(f, "samp-onfoot/s1/b.rec", 200, 2000);
    put(f, "samp-onfoot/s1/c.rec", 300, 3000);
    put(f, "samp-onfoot/s1/open.rec.part", 5000, 10);
    put(f, "samp-onfoot/s2/d.rec", 400, 1500);
    put(f, "recap/s3/e.recap", 500, 500);
    put(f, "recap/s3/x.recap.part.bad", 50, 100);
    put_foreign(f, "README.txt", 7, 1); /* an operator's file: never a candidate */
    return 0;
}

static void expect_items(const recd_retention_result *r, const char *const *paths, size_t n)
{
    if (r->count != n) {
        for (size_t i = 0; i < r->count; i++)
            print_message("item %zu: %s\n", i, r->items[i].path);
        fail_msg("%zu items, want %zu", r->count, n);
    }
    for (size_t i = 0; i < n; i++)
        assert_string_equal(r->items[i].path, paths[i]);
}

static void test_by_age(void **state)
{
    tu_root_fixture *f = *state;
    recd_retention_policy p = {.max_age_s = 8800, .now_s = 10000}; /* older than t=1200 */
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 3);
    const char *want[] = {"recap/s3/x.recap.part.bad", "recap/s3/e.recap", "samp-onfoot/s1/a.rec"};
    expect_items(&r, want, 3);
    for (size_t i = 0; i < r.count; i++) {
        assert_int_equal(r.items[i].reason, RECD_RETENTION_AGE);
        assert_int_equal(r.items[i].error, 0);
    }
    assert_int_equal(r.files_scanned, 6);
    assert_int_equal(r.parts_skipped, 1);
    assert_int_equal(r.others_skipped, 1);
    assert_int_equal(r.deleted, 3);
    assert_int_equal(r.bytes_deleted, 650);
    assert_int_equal(r.bytes_kept, 900);
    assert_int_equal(r.dirs_removed, 2); /* recap/s3 and recap */
    assert_false(tu_exists(tu_at(f->root, "recap")));
    assert_false(tu_exists(tu_at(f->root, "samp-onfoot/s1/a.rec")));
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/b.rec")));
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/open.rec.part"))); /* oldest, but open */
    assert_string_equal(recd_retention_reason_name(r.items[0].reason), "age");
    recd_retention_result_free(&r);
}

static void test_by_session_count(void **state)
{
    tu_root_fixture *f = *state;
    recd_retention_policy p = {.max_files_per_session = 1, .now_s = 10000};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 3);
    const char *want[] = {"recap/s3/x.recap.part.bad", "samp-onfoot/s1/a.rec",
                          "samp-onfoot/s1/b.rec"};
    expect_items(&r, want, 3);
    assert_int_equal(r.items[1].reason, RECD_RETENTION_SESSION_COUNT);
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/c.rec")));
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s2/d.rec")));
    assert_true(tu_exists(tu_at(f->root, "recap/s3/e.recap")));
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/open.rec.part")));
    assert_int_equal(r.dirs_removed, 0);
    recd_retention_result_free(&r);
}

static void test_by_total_size(void **state)
{
    tu_root_fixture *f = *state;
    /* 1550 bytes of finalized files; the 5000-byte .part does not count and is never removed. */
    recd_retention_policy p = {.max_total_bytes = 800, .now_s = 10000};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 4);
    const char *want[] = {"recap/s3/x.recap.part.bad", "recap/s3/e.recap", "samp-onfoot/s1/a.rec",
                          "samp-onfoot/s2/d.rec"};
    expect_items(&r, want, 4);
    assert_int_equal(r.bytes_kept, 500); /* b + c */
    assert_true(r.bytes_kept <= 800);
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/open.rec.part")));
    assert_false(tu_exists(tu_at(f->root, "samp-onfoot/s2")));
    recd_retention_result_free(&r);

    /* A budget of one byte removes every finalized file, still not the .part. */
    p.max_total_bytes = 1;
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 2);
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/open.rec.part")));
    assert_true(tu_exists(tu_at(f->root, "README.txt")));
    assert_int_equal(r.bytes_kept, 0);
    recd_retention_result_free(&r);
}

static void test_rules_combine_and_dry_run(void **state)
{
    tu_root_fixture *f = *state;
    recd_retention_policy p = {.max_age_s = 9000, .max_files_per_session = 1,
                               .max_total_bytes = 350, .now_s = 10000, .dry_run = true};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 5);
    /* age: x.bad, e; count: a, b (s1 keeps c); size: d (400), leaving c (300). */
    const char *want[] = {"recap/s3/x.recap.part.bad", "recap/s3/e.recap", "samp-onfoot/s1/a.rec",
                          "samp-onfoot/s2/d.rec", "samp-onfoot/s1/b.rec"};
    expect_items(&r, want, 5);
    assert_int_equal(r.items[2].reason, RECD_RETENTION_SESSION_COUNT);
    assert_int_equal(r.items[3].reason, RECD_RETENTION_TOTAL_SIZE);
    assert_int_equal(r.bytes_kept, 300);
    /* Dry run: everything is still there. */
    assert_true(tu_exists(tu_at(f->root, "recap/s3/e.recap")));
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/a.rec")));
    recd_retention_result_free(&r);
}

static void test_symlinks_not_followed(void **state)
{
    tu_root_fixture *f = *state;
    /* Old files outside the root, reachable through a planted directory link and a file link. */
    assert_int_equal(tu_write_file(tu_at(f->outside, "victim.rec"), "x", 1), 0);
    struct timespec ts[2] = {{1, 0}, {1, 0}};
    assert_int_equal(utimensat(AT_FDCWD, tu_at(f->outside, "victim.rec"), ts, 0), 0);
    assert_int_equal(symlink(f->outside, tu_at(f->root, "link")), 0);
    assert_int_equal(symlink(tu_at(f->outside, "victim.rec"), tu_at(f->root, "samp-onfoot/s2/v.rec")), 0);
    recd_retention_policy p = {.max_age_s = 1, .now_s = 10000};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 6);
    assert_true(tu_exists(tu_at(f->outside, "victim.rec")));
    for (size_t i = 0; i < r.count; i++)
        assert_null(strstr(r.items[i].path, "v.rec"));
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/open.rec.part")));
    recd_retention_result_free(&r);
}

static void test_ties_break_by_path(void **state)
{
    tu_root_fixture *f = *state;
    put(f, "samp-onfoot/s9/z.rec", 10, 700);
    put(f, "samp-onfoot/s9/m.rec", 10, 700);
    put(f, "samp-onfoot/s8/q.rec", 10, 700);
    recd_retention_policy p = {.max_age_s = 10000 - 800, .now_s = 10000, .dry_run = true};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 5);
    const char *want[] = {"recap/s3/x.recap.part.bad", "recap/s3/e.recap", "samp-onfoot/s8/q.rec",
                          "samp-onfoot/s9/m.rec", "samp-onfoot/s9/z.rec"};
    expect_items(&r, want, 5);
    recd_retention_result_free(&r);
}

static void test_nothing_to_do(void **state)
{
    tu_root_fixture *f = *state;
    recd_retention_policy p = {0};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 0);
    assert_int_equal(r.files_scanned, 6);
    assert_int_equal(r.bytes_kept, 1550);
    recd_retention_result_free(&r);
    assert_int_equal(recd_retention_run(f->root_fd, NULL, &r), -EINVAL);
}

/* CARLA logs are recordings like .rec and .recap; .SC2Replay and .vcr are only read by recd, and
 * NAME.json (output.part_manifest) and NAME.idx (its seek index) leave with NAME. */
static void test_every_written_format_and_manifests(void **state)
{
    tu_root_setup(state);
    tu_root_fixture *f = *state;
    put(f, "carla/s4/old.log", 100, 1000);
    put(f, "carla/s4/old.log.json", 10, 1000);
    put(f, "carla/s4/old.log.idx", 96, 1000);
    put(f, "samp-vehicle/s5/new.rec", 100, 9000);
    put(f, "samp-vehicle/s5/new.rec.json", 10, 1000); /* its part is young: it stays */
    put(f, "replays/old.SC2Replay", 100, 1000);
    put(f, "replays/old.vcr", 100, 1000);
    recd_retention_policy p = {.max_age_s = 5000, .now_s = 10000};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 1);
    const char *want[] = {"carla/s4/old.log"};
    expect_items(&r, want, 1);
    assert_int_equal(r.errors, 0);
    assert_int_equal(r.files_scanned, 2);
    assert_false(tu_exists(tu_at(f->root, "carla")));
    assert_true(tu_exists(tu_at(f->root, "samp-vehicle/s5/new.rec.json")));
    assert_true(tu_exists(tu_at(f->root, "replays/old.SC2Replay")));
    assert_true(tu_exists(tu_at(f->root, "replays/old.vcr")));
    recd_retention_result_free(&r);
    /* A dry run names the part and leaves its manifest. */
    put(f, "carla/s6/dry.log", 100, 1000);
    put(f, "carla/s6/dry.log.json", 10, 1000);
    put(f, "carla/s6/dry.log.idx", 96, 1000);
    p.dry_run = true;
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 1);
    assert_true(tu_exists(tu_at(f->root, "carla/s6/dry.log.json")));
    assert_true(tu_exists(tu_at(f->root, "carla/s6/dry.log.idx")));
    recd_retention_result_free(&r);
}

/* Issue 35 row 8: only what recd marked as its own where it lies is deleted. An operator's
 * notes.log and README.rec, a foreign .recap, a foreign file in recd's own naming scheme and
 * folder, a recd file moved or copied to another folder or name by hand all stay; recd's
 * renames of its parts (NAME-N.EXT, NAME.part.bad) still age out. */
static void test_only_what_recd_marked(void **state)
{
    tu_root_setup(state);
    tu_root_fixture *f = *state;
    put_foreign(f, "ops/notes.log", 10, 1000);
    put_foreign(f, "README.rec", 10, 1000);
    put_foreign(f, "recap/s1/theirs.recap", 10, 1000);
    put_foreign(f, "samp-onfoot/s1/20250101T000000Z.rec", 10, 1000); /* the template's shape */
    put_as(f, "archive/kept.rec", 10, 1000, "samp-onfoot/s1/kept.rec");      /* moved away */
    put_as(f, "samp-onfoot/s1/renamed.rec", 10, 1000, "samp-onfoot/s1/a.rec"); /* another name */
    put(f, "samp-onfoot/s1/20250101T000001Z.rec", 10, 1000);
    put_as(f, "samp-onfoot/s1/20250101T000002Z-1.rec", 10, 1000,
           "samp-onfoot/s1/20250101T000002Z.rec");
    put_as(f, "recap/s1/20250101T000003Z.recap.part.bad", 10, 1000,
           "recap/s1/20250101T000003Z.recap");
    recd_retention_policy p = {.max_age_s = 5000, .now_s = 10000};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 3);
    const char *want[] = {"recap/s1/20250101T000003Z.recap.part.bad",
                          "samp-onfoot/s1/20250101T000001Z.rec",
                          "samp-onfoot/s1/20250101T000002Z-1.rec"};
    expect_items(&r, want, 3);
    assert_int_equal(r.unmarked_skipped, 6);
    static const char *const kept[] = {"ops/notes.log", "README.rec", "recap/s1/theirs.recap",
                                       "samp-onfoot/s1/20250101T000000Z.rec", "archive/kept.rec",
                                       "samp-onfoot/s1/renamed.rec"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        assert_true(tu_exists(tu_at(f->root, kept[i])));
    recd_retention_result_free(&r);
}

/* A part recd creates carries the mark, and keeps it through finalize's rename. */
static void test_parts_are_marked(void **state)
{
    tu_root_setup(state);
    tu_root_fixture *f = *state;
    recd_part part;
    assert_int_equal(recd_part_create(&part, f->root_fd, "samp-onfoot/s7/x.rec"), 0);
    assert_int_equal(recd_part_append(&part, "abc", 3), 0);
    assert_int_equal(recd_part_finalize(&part, 0), 0);
    char got[RECD_PATH_MAX] = "";
    ssize_t n = getxattr(tu_at(f->root, "samp-onfoot/s7/x.rec"), RECD_OWN_MARK_XATTR, got,
                         sizeof got - 1);
    if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
        skip();
    assert_int_equal(n, (ssize_t)strlen("samp-onfoot/s7/x.rec"));
    assert_string_equal(got, "samp-onfoot/s7/x.rec");
    struct timespec ts[2] = {{1000, 0}, {1000, 0}};
    assert_int_equal(utimensat(AT_FDCWD, tu_at(f->root, "samp-onfoot/s7/x.rec"), ts, 0), 0);
    recd_retention_policy p = {.max_age_s = 5000, .now_s = 10000};
    recd_retention_result r = {0};
    assert_int_equal(recd_retention_run(f->root_fd, &p, &r), 1);
    assert_false(tu_exists(tu_at(f->root, "samp-onfoot/s7/x.rec")));
    recd_retention_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_by_age, setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_by_session_count, setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_by_total_size, setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_rules_combine_and_dry_run, setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_symlinks_not_followed, setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_ties_break_by_path, setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_nothing_to_do, setup, tu_root_teardown),
        cmocka_unit_test_teardown(test_every_written_format_and_manifests, tu_root_teardown),
        cmocka_unit_test_teardown(test_only_what_recd_marked, tu_root_teardown),
        cmocka_unit_test_teardown(test_parts_are_marked, tu_root_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
