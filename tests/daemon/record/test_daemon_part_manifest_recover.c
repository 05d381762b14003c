/* SPDX-License-Identifier: MIT */
/* Crash recovery of part manifests (part_manifests_recover): an in-progress manifest left beside
 * a .part becomes the manifest of the part recovery finalized, or of a part the writer renamed
 * just before the crash; it is removed when its part held nothing or already has its manifest;
 * it stays beside a .part recovery left alone; and a file that only looks like one is left as it
 * is and never turned into a manifest. */
#include "testutil.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "recd/recovery.h"
#include "record/part_manifest.h"

static const char *progress_text(const char *file)
{
    static char text[1024];
    part_manifest_fields f = {
        .session = "s-1",
        .instance = "a",
        .format = "samp-onfoot",
        .file = file,
        .part = 4,
        .tally = {.on = true, .has_seq = true, .samples = 3, .first_seq = 10, .last_seq = 12},
        .end_ms = 1795668304101,
        .in_progress = true,
    };
    char *t = part_manifest_text(&f);
    assert_non_null(t);
    snprintf(text, sizeof text, "%s", t);
    free(t);
    return text;
}

static void put(const tu_root_fixture *r, const char *rel, const char *text)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", tu_at(r->root, rel));
    *strrchr(dir, '/') = '\0';
    assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
    assert_int_equal(tu_write_file(tu_at(r->root, rel), text, strlen(text)), 0);
}

static bool present(const tu_root_fixture *r, const char *rel) { return tu_exists(tu_at(r->root, rel)); }

static json_t *load(const tu_root_fixture *r, const char *rel)
{
    json_error_t err;
    json_t *m = json_load_file(tu_at(r->root, rel), JSON_REJECT_DUPLICATES, &err);
    if (!m)
        fail_msg("%s: %s", rel, err.text);
    return m;
}

static void add(recd_recover_summary *sum, const char *part, const char *final,
                recd_recover_action action)
{
    static recd_recover_file files[4];
    assert_true(sum->count < 4);
    sum->files = files;
    recd_recover_file *f = &files[sum->count++];
    memset(f, 0, sizeof *f);
    snprintf(f->part, sizeof f->part, "%s", part);
    snprintf(f->final, sizeof f->final, "%s", final);
    f->action = action;
}

static void test_each_leftover_finds_its_part(void **state)
{
    tu_root_fixture *r = *state;
    /* a: finalized by recovery, under a collision name */
    put(r, "a/1.rec", "block");
    put(r, "a/1-1.rec", "block");
    put(r, "a/1.rec.part.json", progress_text("a/1.rec"));
    /* b: the writer renamed the part, then died before storing its manifest */
    put(r, "b/2.rec", "block");
    put(r, "b/2.rec.part.json", progress_text("b/2.rec"));
    /* c: renamed and its manifest stored, the leftover not yet removed */
    put(r, "c/3.rec", "block");
    put(r, "c/3.rec.json", "kept\n");
    put(r, "c/3.rec.part.json", progress_text("c/3.rec"));
    /* d: recovery removed the part (no whole block) */
    put(r, "d/4.rec.part.json", progress_text("d/4.rec"));
    /* e: recovery left the .part as it is */
    put(r, "e/5.rec.part", "torn");
    put(r, "e/5.rec.part.json", progress_text("e/5.rec"));
    /* f: not an in-progress manifest of ours */
    put(r, "f/6.rec", "block");
    put(r, "f/6.rec.part.json", "{\"manifest\":\"recd-part\",\"in_progress\":false}");
    put(r, "g/7.rec", "block");
    put(r, "g/7.rec.part.json", "{\"manifest\":");
    recd_recover_summary sum = {0};
    add(&sum, "a/1.rec.part", "a/1-1.rec", RECD_RECOVER_FINALIZED);
    add(&sum, "d/4.rec.part", "", RECD_RECOVER_REMOVED);

    assert_int_equal(part_manifests_recover(r->root_fd, &sum), 2);

    json_t *m = load(r, "a/1-1.rec.json");
    assert_string_equal(json_string_value(json_object_get(m, "file")), "a/1-1.rec");
    assert_true(json_is_true(json_object_get(m, "recovered")));
    assert_null(json_object_get(m, "in_progress"));
    assert_int_equal(json_integer_value(json_object_get(m, "last_seq")), 12);
    assert_int_equal(json_integer_value(json_object_get(m, "part")), 4);
    json_decref(m);
    assert_false(present(r, "a/1.rec.json"));
    assert_false(present(r, "a/1.rec.part.json"));

    m = load(r, "b/2.rec.json");
    assert_string_equal(json_string_value(json_object_get(m, "file")), "b/2.rec");
    assert_true(json_is_true(json_object_get(m, "recovered")));
    json_decref(m);
    assert_false(present(r, "b/2.rec.part.json"));

    size_t len;
    char *kept = (char *)tu_read_file(tu_at(r->root, "c/3.rec.json"), &len);
    assert_non_null(kept);
    assert_memory_equal(kept, "kept\n", 5);
    free(kept);
    assert_false(present(r, "c/3.rec.part.json"));

    assert_false(present(r, "d/4.rec.part.json"));
    assert_false(present(r, "d/4.rec.json"));

    assert_true(present(r, "e/5.rec.part.json"));
    assert_false(present(r, "e/5.rec.json"));

    assert_true(present(r, "f/6.rec.part.json"));
    assert_false(present(r, "f/6.rec.json"));
    assert_true(present(r, "g/7.rec.part.json"));
    assert_false(present(r, "g/7.rec.json"));
}

/* Recovery found no .part at all (sum NULL): leftovers beside renamed parts still complete. */
static void test_without_a_summary(void **state)
{
    tu_root_fixture *r = *state;
    put(r, "x/9.rec", "block");
    put(r, "x/9.rec.part.json", progress_text("x/9.rec"));
    assert_int_equal(part_manifests_recover(r->root_fd, NULL), 1);
    assert_true(present(r, "x/9.rec.json"));
    assert_false(present(r, "x/9.rec.part.json"));
    assert_int_equal(part_manifests_recover(r->root_fd, NULL), 0); /* nothing left to do */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_leftover_finds_its_part, tu_root_setup,
                                        tu_root_teardown),
        cmocka_unit_test_setup_teardown(test_without_a_summary, tu_root_setup, tu_root_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
