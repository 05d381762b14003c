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

typedef struct fixture {
    char root[4096];
    char outside[4096]; /* a directory outside the root that must never be written */
    int root_fd;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->root, sizeof f->root, "%s", tu_tmpdir());
    snprintf(f->outside, sizeof f->outside, "%s", tu_tmpdir());
    f->root_fd = recd_out_root_open(f->root, false);
    assert_true(f->root_fd >= 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    close(f->root_fd);
    free(f);
    return 0;
}

static const char *at(const char *dir, const char *rel)
{
    static char buf[4][8192];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, rel);
    return buf[i];
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

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
    fixture *f = *state;
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "samp-onfoot/s1/a.rec"), 0);
    assert_string_equal(p.name, "samp-onfoot/s1/a.rec");
    assert_true(exists(at(f->root, "samp-onfoot/s1/a.rec.part")));
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
    assert_false(exists(at(f->root, "samp-onfoot/s1/a.rec.part")));
    expect_content(at(f->root, "samp-onfoot/s1/a.rec"), "HDR1body");
    assert_int_equal(recd_part_append(&p, "x", 1), -EINVAL); /* finalized */
}

static void test_exclusive_create_picks_suffix(void **state)
{
    fixture *f = *state;
    recd_part a, b, c;
    assert_int_equal(recd_part_create(&a, f->root_fd, "s/x.rec"), 0);
    assert_int_equal(recd_part_create(&b, f->root_fd, "s/x.rec"), 0); /* x.rec.part exists */
    assert_string_equal(b.name, "s/x-1.rec");
    assert_int_equal(recd_part_finalize(&a, 0), 0);
    assert_int_equal(recd_part_create(&c, f->root_fd, "s/x.rec"), 0); /* x.rec exists now */
    assert_string_equal(c.name, "s/x-2.rec");
    assert_int_equal(recd_part_discard(&b), 0);
    assert_false(exists(at(f->root, "s/x-1.rec.part")));
    assert_int_equal(recd_part_discard(&c), 0);
}

static void test_finalize_never_overwrites(void **state)
{
    fixture *f = *state;
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "s/y.recap"), 0);
    assert_int_equal(recd_part_append(&p, "new", 3), 0);
    /* Something else took the final name while we were writing. */
    assert_int_equal(tu_write_file(at(f->root, "s/y.recap"), "old", 3), 0);
    assert_int_equal(recd_part_finalize(&p, 0), 0);
    assert_string_equal(p.name, "s/y-1.recap");
    expect_content(at(f->root, "s/y.recap"), "old");
    expect_content(at(f->root, "s/y-1.recap"), "new");
}

static void test_close_and_reopen(void **state)
{
    fixture *f = *state;
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
    expect_content(at(f->root, "r/z.rec"), "Abcd");
}

static void test_symlinked_directory_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_equal(symlink(f->outside, at(f->root, "evil")), 0);
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "evil/x.rec"), -ELOOP);
    assert_non_null(strstr(p.error, "symbolic link"));
    assert_non_null(strstr(p.error, "'evil'"));
    /* Deeper: a symlink planted below real directories. */
    assert_int_equal(mkdir(at(f->root, "a"), 0755), 0);
    assert_int_equal(symlink(f->outside, at(f->root, "a/evil")), 0);
    assert_int_equal(recd_part_create(&p, f->root_fd, "a/evil/b/x.rec"), -ELOOP);
    assert_non_null(strstr(p.error, "'a/evil'"));
    assert_false(exists(at(f->outside, "x.rec.part")));
    assert_false(exists(at(f->outside, "b")));
    /* A regular file where a directory belongs. */
    assert_int_equal(tu_write_file(at(f->root, "file"), "", 0), 0);
    assert_int_equal(recd_part_create(&p, f->root_fd, "file/x.rec"), -ENOTDIR);
    assert_non_null(strstr(p.error, "not a directory"));
}

static void test_symlinked_part_is_never_followed(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(at(f->root, "s"), 0755), 0);
    /* A dangling link where our .part would go: O_EXCL must not create its target. */
    assert_int_equal(symlink(at(f->outside, "target"), at(f->root, "s/x.rec.part")), 0);
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "s/x.rec"), 0);
    assert_string_equal(p.name, "s/x-1.rec");
    assert_int_equal(recd_part_append(&p, "data", 4), 0);
    assert_false(exists(at(f->outside, "target")));
    assert_int_equal(recd_part_finalize(&p, 0), 0);
    assert_false(exists(at(f->outside, "target")));
}

static void test_reopen_refuses_swapped_part(void **state)
{
    fixture *f = *state;
    assert_int_equal(tu_write_file(at(f->outside, "victim"), "keep", 4), 0);
    recd_part p;
    assert_int_equal(recd_part_create(&p, f->root_fd, "s/v.rec"), 0);
    assert_int_equal(recd_part_append(&p, "ab", 2), 0);
    assert_int_equal(recd_part_close_fd(&p), 0);
    /* While the fd is evicted, the .part becomes a symlink to a file outside the root. */
    assert_int_equal(rename(at(f->root, "s/v.rec.part"), at(f->root, "s/moved")), 0);
    assert_int_equal(symlink(at(f->outside, "victim"), at(f->root, "s/v.rec.part")), 0);
    assert_int_equal(recd_part_reopen(&p), -ELOOP);
    assert_non_null(strstr(p.error, "symbolic link"));
    assert_int_equal(recd_part_append(&p, "cd", 2), -ELOOP);
    assert_int_equal(recd_part_finalize(&p, 0), -ESTALE); /* the entry is not our file */
    expect_content(at(f->outside, "victim"), "keep");
    /* Replaced by a different regular file: refused too. */
    assert_int_equal(unlink(at(f->root, "s/v.rec.part")), 0);
    assert_int_equal(tu_write_file(at(f->root, "s/v.rec.part"), "", 0), 0);
    assert_int_equal(recd_part_reopen(&p), -ESTALE);
    /* The original file moved back: accepted again. */
    assert_int_equal(rename(at(f->root, "s/moved"), at(f->root, "s/v.rec.part")), 0);
    assert_int_equal(recd_part_append(&p, "cd", 2), 0);
    assert_int_equal(recd_part_finalize(&p, 0), 0);
    expect_content(at(f->root, "s/v.rec"), "abcd");
}

static void test_rejects_unconfined_names(void **state)
{
    fixture *f = *state;
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
    fixture *f = *state;
    const char *deep = at(f->root, "new/root/dir");
    int fd = recd_out_root_open(deep, true);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(recd_out_root_open(at(f->root, "missing"), false), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_append_patch_finalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclusive_create_picks_suffix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_never_overwrites, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinked_directory_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinked_part_is_never_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_refuses_swapped_part, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejects_unconfined_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_open_creates, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
