/* SPDX-License-Identifier: MIT */
/* Confined part files: exclusive create, appends and patches, close/reopen, finalize collisions,
 * and symlink escape attempts (symlinked directory, symlinked .part, .part swapped for a link). */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/part_file.h"

static void expect_content(const char *path, const char *want)
{
    size_t len = 0;
    uint8_t *data = tu_read_file(path, &len);
    assert_non_null(data);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(data, want, len);
    free(data);
}

static void test_create_append_patch_finalize(void **state)
{
    tu_root_fixture *f = *state;
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "samp-onfoot/s1/a.rec"), 0);
    assert_string_equal(p.name, "samp-onfoot/s1/a.rec");
    assert_true(tu_exists(tu_at(f->root, "samp-onfoot/s1/a.rec.part")));
    assert_int_equal(recd_part_append(&p, "HDR0", 4), 0);
    recd_sink sink = recd_part_sink(&p);
    assert_int_equal(sink.write(sink.ctx, "body", 4), 0);
    assert_int_equal(recd_part_pwrite(&p, 3, "1", 1), 0);
    assert_int_equal(recd_part_pwrite(&p, 6, "xyz", 3), -ERANGE); /* beyond what was written */
    assert_int_equal(p.size, 8);
    assert_int_equal(p.bytes_written, 9);
    assert_int_equal(recd_part_finalize(&p, RECD_PART_FINALIZE_SYNC), 0);
    assert_true(p.finalized);
    assert_string_equal(p.name, "samp-onfoot/s1/a.rec");
    assert_false(tu_exists(tu_at(f->root, "samp-onfoot/s1/a.rec.part")));
    expect_content(tu_at(f->root, "samp-onfoot/s1/a.rec"), "HDR1body");
    assert_int_equal(recd_part_append(&p, "x", 1), -EINVAL); /* finalized */
}

static void test_exclusive_create_picks_suffix(void **state)
{
    tu_root_fixture *f = *state;
    recd_part a, b, c;
    assert_int_equal(recd_part_create(&a, f->root_fd, "s/x.rec"), 0);
    assert_int_equal(recd_part_create(&b, f->root_fd, "s/x.rec"), 0); /* x.rec.part exists */
    assert_string_equal(b.name, "s/x-1.rec");
    assert_int_equal(recd_part_finalize(&a, 0), 0);
    assert_int_equal(recd_part_create(&c, f->root_fd, "s/x.rec"), 0); /* x.rec exists now */
    assert_string_equal(c.name, "s/x-2.rec");
    assert_int_equal(recd_part_discard(&b), 0);
    assert_false(tu_exists(tu_at(f->root, "s/x-1.rec.part")));
    assert_int_equal(recd_part_discard(&c), 0);
}

static void test_finalize_never_overwrites(void **state)
{
    tu_root_fixture *f = *state;
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "s/y.recap"), 0);
    assert_int_equal(recd_part_append(&p, "new", 3), 0);
    /* Something else took the final name while we were writing. */
    assert_int_equal(tu_write_file(tu_at(f->root, "s/y.recap"), "old", 3), 0);
    assert_int_equal(recd_part_finalize(&p, 0), 0);
    assert_string_equal(p.name, "s/y-1.recap");
    expect_content(tu_at(f->root, "s/y.recap"), "old");
    expect_content(tu_at(f->root, "s/y-1.recap"), "new");
}

static void test_close_and_reopen(void **state)
{
    tu_root_fixture *f = *state;
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "r/z.rec"), 0);
    assert_int_equal(recd_part_append(&p, "ab", 2), 0);
    assert_int_equal(recd_part_close_fd(&p), 0);
    assert_false(recd_part_is_open(&p));
    assert_int_equal(recd_part_append(&p, "cd", 2), 0); /* reopens by path */
    assert_true(recd_part_is_open(&p));
    assert_int_equal(p.reopens, 1);
    assert_int_equal(recd_part_close_fd(&p), 0);
    assert_int_equal(recd_part_pwrite(&p, 0, "A", 1), 0);
    assert_int_equal(p.reopens, 2);
    assert_int_equal(recd_part_close_fd(&p), 0);
    assert_int_equal(recd_part_finalize(&p, RECD_PART_FINALIZE_SYNC), 0); /* sync reopens too */
    expect_content(tu_at(f->root, "r/z.rec"), "Abcd");
}

static void test_symlinked_directory_is_refused(void **state)
{
    tu_root_fixture *f = *state;
    assert_int_equal(symlink(f->outside, tu_at(f->root, "evil")), 0);
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "evil/x.rec"), -ELOOP);
    assert_non_null(strstr(p.error, "symbolic link"));
    assert_non_null(strstr(p.error, "'evil'"));
    /* Deeper: a symlink planted below real directories. */
    assert_int_equal(mkdir(tu_at(f->root, "a"), 0755), 0);
    assert_int_equal(symlink(f->outside, tu_at(f->root, "a/evil")), 0);
    assert_int_equal(recd_part_create(&p, f->root_fd, "a/evil/b/x.rec"), -ELOOP);
    assert_non_null(strstr(p.error, "'a/evil'"));
    assert_false(tu_exists(tu_at(f->outside, "x.rec.part")));
    assert_false(tu_exists(tu_at(f->outside, "b")));
    /* A regular file where a directory belongs. */
    assert_int_equal(tu_write_file(tu_at(f->root, "file"), "", 0), 0);
    assert_int_equal(recd_part_create(&p, f->root_fd, "file/x.rec"), -ENOTDIR);
    assert_non_null(strstr(p.error, "not a directory"));
}

static void test_symlinked_part_is_never_followed(void **state)
{
    tu_root_fixture *f = *state;
    assert_int_equal(mkdir(tu_at(f->root, "s"), 0755), 0);
    /* A dangling link where our .part would go: O_EXCL must not create its target. */
    assert_int_equal(symlink(tu_at(f->outside, "target"), tu_at(f->root, "s/x.rec.part")), 0);
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "s/x.rec"), 0);
    assert_string_equal(p.name, "s/x-1.rec");
    assert_int_equal(recd_part_append(&p, "data", 4), 0);
    assert_false(tu_exists(tu_at(f->outside, "target")));
    assert_int_equal(recd_part_finalize(&p, 0), 0);
    assert_false(tu_exists(tu_at(f->outside, "target")));
}

static void test_reopen_refuses_swapped_part(void **state)
{
    tu_root_fixture *f = *state;
    assert_int_equal(tu_write_file(tu_at(f->outside, "victim"), "keep", 4), 0);
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "s/v.rec"), 0);
    assert_int_equal(recd_part_append(&p, "ab", 2), 0);
    assert_int_equal(recd_part_close_fd(&p), 0);
    /* While the fd is evicted, the .part becomes a symlink to a file outside the root. */
    assert_int_equal(rename(tu_at(f->root, "s/v.rec.part"), tu_at(f->root, "s/moved")), 0);
    assert_int_equal(symlink(tu_at(f->outside, "victim"), tu_at(f->root, "s/v.rec.part")), 0);
    assert_int_equal(recd_part_reopen(&p), -ELOOP);
    assert_non_null(strstr(p.error, "symbolic link"));
    assert_int_equal(recd_part_append(&p, "cd", 2), -ELOOP);
    assert_int_equal(recd_part_finalize(&p, 0), -ESTALE); /* the entry is not our file */
    expect_content(tu_at(f->outside, "victim"), "keep");
    /* Replaced by a different regular file: refused too. */
    assert_int_equal(unlink(tu_at(f->root, "s/v.rec.part")), 0);
    assert_int_equal(tu_write_file(tu_at(f->root, "s/v.rec.part"), "", 0), 0);
    assert_int_equal(recd_part_reopen(&p), -ESTALE);
    /* The original file moved back: accepted again. */
    assert_int_equal(rename(tu_at(f->root, "s/moved"), tu_at(f->root, "s/v.rec.part")), 0);
    assert_int_equal(recd_part_append(&p, "cd", 2), 0);
    assert_int_equal(recd_part_finalize(&p, 0), 0);
    expect_content(tu_at(f->root, "s/v.rec"), "abcd");
}

static void test_rejects_unconfined_names(void **state)
{
    tu_root_fixture *f = *state;
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "../x.rec"), -EINVAL);
    assert_int_equal(recd_part_create(&p, f->root_fd, "/tmp/x.rec"), -EINVAL);
    assert_int_equal(recd_part_create(&p, f->root_fd, "a//x.rec"), -EINVAL);
    assert_int_equal(recd_part_create(&p, f->root_fd, ".x.rec"), -EINVAL);
    char longname[300];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(recd_part_create(&p, f->root_fd, longname), -EINVAL);
    longname[220] = '\0';
    assert_int_equal(recd_part_create(&p, f->root_fd, longname), -ENAMETOOLONG);
}

static void test_root_open_creates(void **state)
{
    tu_root_fixture *f = *state;
    const char *deep = tu_at(f->root, "new/root/dir");
    int fd = recd_out_root_open(deep, true);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(recd_out_root_open(tu_at(f->root, "missing"), false), -ENOENT);
}

/* Small files stored whole: store_text replaces, store_text_new never does (it takes the next
 * free -N name and says which), and unlink removes, all confined to the root. */
static void test_store_text_variants(void **state)
{
    tu_root_fixture *f = *state;
    char chosen[RECD_PATH_MAX];
    assert_int_equal(recd_confined_store_text(f->root_fd, "d/k.json", "one\n", false), 0);
    assert_int_equal(recd_confined_store_text(f->root_fd, "d/k.json", "two\n", true), 0);
    size_t len;
    char *t = (char *)tu_read_file(tu_at(f->root, "d/k.json"), &len);
    assert_non_null(t);
    assert_memory_equal(t, "two\n", 4);
    free(t);
    assert_int_equal(recd_confined_store_text_new(f->root_fd, "d/k.json", "three\n", false,
                                                  chosen, sizeof chosen), 0);
    assert_string_equal(chosen, "d/k-1.json");
    assert_int_equal(recd_confined_store_text_new(f->root_fd, "d/n.json", "new\n", true, chosen,
                                                  sizeof chosen), 0);
    assert_string_equal(chosen, "d/n.json");
    t = (char *)tu_read_file(tu_at(f->root, "d/k.json"), &len);
    assert_memory_equal(t, "two\n", 4); /* never replaced */
    free(t);
    char small[4];
    assert_int_equal(recd_confined_store_text_new(f->root_fd, "d/k.json", "x\n", false, small,
                                                  sizeof small), -ENAMETOOLONG);
    assert_false(tu_exists(tu_at(f->root, "d/k-2.json"))); /* nothing left behind */
    assert_int_equal(recd_confined_unlink(f->root_fd, "d/k-1.json"), 0);
    assert_int_equal(recd_confined_unlink(f->root_fd, "d/k-1.json"), -ENOENT);
    assert_int_equal(recd_confined_unlink(f->root_fd, "../x.json"), -EINVAL);
}

/* A hard link planted at the temporary name (.LEAF.tmp) is never written through: store_text
 * creates a new file there (issue 35, rule 8 for librecd's sidecar files). */
static void test_store_text_never_writes_through_a_planted_link(void **state)
{
    tu_root_fixture *f = *state;
    char victim[4096], planted[4096];
    snprintf(victim, sizeof victim, "%s", tu_at(f->root, "victim.txt"));
    snprintf(planted, sizeof planted, "%s", tu_at(f->root, "d/.m.json.tmp"));
    assert_int_equal(tu_write_file(victim, "precious", 8), 0);
    assert_int_equal(mkdir(tu_at(f->root, "d"), 0755), 0);
    if (link(victim, planted) < 0)
        skip(); /* hard links refused here (protected_hardlinks, filesystem) */
    assert_int_equal(recd_confined_store_text(f->root_fd, "d/m.json", "data\n", false), 0);
    size_t len;
    char *t = (char *)tu_read_file(victim, &len);
    assert_non_null(t);
    assert_int_equal(len, 8);
    assert_memory_equal(t, "precious", 8);
    free(t);
    t = (char *)tu_read_file(tu_at(f->root, "d/m.json"), &len);
    assert_non_null(t);
    assert_memory_equal(t, "data\n", 5);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_append_patch_finalize, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_exclusive_create_picks_suffix, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_finalize_never_overwrites, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_close_and_reopen, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_symlinked_directory_is_refused, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_symlinked_part_is_never_followed, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_reopen_refuses_swapped_part, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_rejects_unconfined_names, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_root_open_creates, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_store_text_variants, tu_root_setup, tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_store_text_never_writes_through_a_planted_link,
                                        tu_root_setup, tu_root_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
