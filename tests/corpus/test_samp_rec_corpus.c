/* SPDX-License-Identifier: MIT */
/* Corpus tests for the .rec reader/codec on the real files in $RECD_CORPUS_DIR/samp-rec: each
 * file's layout must match its SOURCES.md row, standard files must verify cleanly, agree with the
 * statistics in DUMP.txt (written by an independent Python dumper), and decode+encode (and the
 * writer) must reproduce them byte for byte. Skips (77) when the corpus is absent. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/samp_rec.h"

#define MAX_FILES 64

typedef struct expected {
    char name[128];
    recd_rec_layout layout;
    bool have_dump;
    unsigned long blocks, first, last, equal, decreasing, max_gap;
} expected;

static expected table[MAX_FILES];
static size_t table_len;
static char corpus[4096];

static char *read_text(const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", corpus, name);
    size_t len;
    uint8_t *data = tu_read_file(path, &len);
    if (!data)
        fail_msg("cannot read %s", path);
    char *text = realloc(data, len + 1);
    assert_non_null(text);
    text[len] = '\0';
    return text;
}

static expected *lookup(const char *name)
{
    for (size_t i = 0; i < table_len; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

/* The SOURCES.md "layout (as detected)" column, in words, mapped to librecd's layouts. */
static recd_rec_layout layout_from_words(const char *cell)
{
    if (strstr(cell, "corrupt"))
        return RECD_REC_LAYOUT_TEXT_MANGLED;
    if (strstr(cell, "56-byte"))
        return RECD_REC_LAYOUT_LEGACY_ONFOOT_56;
    if (strstr(cell, "std vehicle"))
        return RECD_REC_LAYOUT_VEHICLE;
    if (strstr(cell, "std on-foot"))
        return RECD_REC_LAYOUT_ONFOOT;
    fail_msg("SOURCES.md layout cell not understood: %s", cell);
    return RECD_REC_LAYOUT_UNKNOWN;
}

/* Rows look like "| file.rec | layout words | size | ...". */
static void load_sources(void)
{
    char *text = read_text("SOURCES.md");
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "| ", 2) != 0)
            continue;
        char *name = line + 2, *bar = strstr(name, " | ");
        if (!bar || bar - name < 5 || strncmp(bar - 4, ".rec", 4) != 0)
            continue;
        assert_true(table_len < MAX_FILES);
        expected *e = &table[table_len++];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "%.*s", (int)(bar - name), name);
        char *cell = bar + 3, *end = strstr(cell, " | ");
        assert_non_null(end);
        *end = '\0';
        e->layout = layout_from_words(cell);
    }
    free(text);
    assert_true(table_len >= 11);
}

static unsigned long dict_value(const char *line, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "'%s': ", key);
    const char *p = strstr(line, pattern);
    if (!p)
        fail_msg("DUMP.txt time line lacks %s", key);
    return strtoul(p + strlen(pattern), NULL, 10);
}

/* DUMP.txt sections: "  file   NAME", "  blocks   N", "  time   {'first': ..., ...}". */
static void load_dump(void)
{
    char *text = read_text("DUMP.txt");
    expected *cur = NULL;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char key[32], value[160];
        if (sscanf(line, " %31s %159s", key, value) != 2)
            continue;
        if (strcmp(key, "file") == 0) {
            cur = lookup(value);
        } else if (cur && strcmp(key, "blocks") == 0) {
            cur->blocks = strtoul(value, NULL, 10);
        } else if (cur && strcmp(key, "time") == 0) {
            cur->first = dict_value(line, "first");
            cur->last = dict_value(line, "last");
            cur->equal = dict_value(line, "equal_steps");
            cur->decreasing = dict_value(line, "decreasing_steps");
            cur->max_gap = dict_value(line, "max_dt");
            cur->have_dump = true;
        }
    }
    free(text);
}

static int setup(void **state)
{
    (void)state;
    snprintf(corpus, sizeof corpus, "%s", tu_corpus_dir("samp-rec"));
    load_sources();
    load_dump();
    return 0;
}

static uint8_t *load_rec(const char *name, size_t *len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", corpus, name);
    uint8_t *data = tu_read_file(path, len);
    if (!data)
        fail_msg("cannot read %s", path);
    return data;
}

static void print_report(const char *name, const recd_report *r)
{
    for (size_t i = 0; i < r->count; i++)
        printf("  %s: [%d] @%llu %s: %s\n", name, r->items[i].severity,
               (unsigned long long)r->items[i].offset, r->items[i].code, r->items[i].message);
}

/* Every block decodes and re-encodes to the same bytes, and the writer rebuilds the whole file. */
static void check_byte_exact(const char *name, const uint8_t *data, size_t len, const recd_rec_info *info)
{
    recd_buf rebuilt = {0};
    recd_rec_writer w;
    recd_rec_type type = info->layout == RECD_REC_LAYOUT_VEHICLE ? RECD_REC_TYPE_VEHICLE : RECD_REC_TYPE_ONFOOT;
    assert_int_equal(recd_rec_writer_init(&w, type, RECD_REC_TIME_REJECT, recd_buf_sink(&rebuilt)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    for (uint64_t i = 0; i < info->block_count; i++) {
        const uint8_t *blk = recd_rec_block_at(data, info, i);
        assert_non_null(blk);
        uint8_t out[RECD_REC_ONFOOT_BLOCK_SIZE];
        if (type == RECD_REC_TYPE_VEHICLE) {
            recd_rec_vehicle v;
            recd_rec_vehicle_decode(blk, &v);
            recd_rec_vehicle_encode(&v, out);
            assert_int_equal(recd_rec_writer_vehicle(&w, &v), 0);
        } else {
            recd_rec_onfoot f;
            recd_rec_onfoot_decode(blk, &f);
            recd_rec_onfoot_encode(&f, out);
            assert_int_equal(recd_rec_writer_onfoot(&w, &f), 0);
        }
        if (memcmp(out, blk, info->block_size) != 0)
            fail_msg("%s: block %llu does not survive decode+encode", name, (unsigned long long)i);
    }
    assert_int_equal(rebuilt.len, len);
    assert_memory_equal(rebuilt.data, data, len);
    recd_buf_free(&rebuilt);
}

static void check_against_dump(const expected *e, const recd_rec_info *info)
{
    if (!e->have_dump)
        fail_msg("%s has no statistics in DUMP.txt", e->name);
    assert_int_equal(info->block_count, e->blocks);
    assert_int_equal(info->first_time_ms, e->first);
    assert_int_equal(info->last_time_ms, e->last);
    assert_int_equal(info->equal_time_steps, e->equal);
    assert_int_equal(info->decreasing_time_steps, e->decreasing);
    assert_int_equal(info->max_gap_ms, e->max_gap);
}

static void test_every_file_matches_sources(void **state)
{
    (void)state;
    DIR *dir = opendir(corpus);
    assert_non_null(dir);
    size_t seen = 0, standard = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".rec") != 0)
            continue;
        const expected *e = lookup(de->d_name);
        if (!e)
            fail_msg("%s is not listed in SOURCES.md", de->d_name);
        size_t len;
        uint8_t *data = load_rec(de->d_name, &len);
        recd_rec_info info;
        recd_report r = {0};
        int rc = recd_rec_probe(data, len, &info, &r);
        printf("%-40s %-18s rc=%d blocks=%llu problems=%zu\n", de->d_name,
               recd_rec_layout_name(info.layout), rc, (unsigned long long)info.block_count, r.count);
        if (info.layout != e->layout) {
            print_report(de->d_name, &r);
            fail_msg("%s: layout %s, SOURCES.md says %s", de->d_name, recd_rec_layout_name(info.layout),
                     recd_rec_layout_name(e->layout));
        }
        if (recd_rec_layout_is_standard(info.layout)) {
            if (rc != 0 || recd_report_errors(&r) != 0) {
                print_report(de->d_name, &r);
                fail_msg("%s: a standard corpus file must verify without errors", de->d_name);
            }
            assert_true(info.samp_accepts);
            assert_true(info.open_mp_accepts);
            assert_int_equal(info.trailing_bytes, 0);
            assert_int_equal(recd_rec_valid_prefix(&info), len);
            check_against_dump(e, &info);
            check_byte_exact(de->d_name, data, len, &info);
            standard++;
        } else {
            assert_int_equal(rc, -EBADMSG);
            assert_true(recd_report_errors(&r) > 0);
        }
        seen++;
        recd_report_free(&r);
        free(data);
    }
    closedir(dir);
    assert_int_equal(seen, table_len);
    assert_true(standard >= 9);
}

static void test_truth1_is_legacy56(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = load_rec("lsg__truth1.rec", &len);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(data, len, &info, &r), -EBADMSG);
    assert_string_equal(recd_rec_layout_name(info.layout), "legacy-onfoot-56");
    assert_int_equal(info.block_size, 56);
    assert_int_equal(info.block_count, 424);
    assert_int_equal(info.first_time_ms, 339);
    assert_int_equal(info.last_time_ms, 25101);
    assert_false(info.samp_accepts); /* (size - 8) % 72 = 56 */
    const recd_problem *p = &r.items[0];
    assert_string_equal(p->code, "legacy-onfoot-56");
    assert_int_equal(p->offset, 8);
    recd_rec_legacy_onfoot b;
    recd_rec_legacy_onfoot_decode(recd_rec_block_at(data, &info, 0), &b);
    assert_true(b.facing_angle_deg > 96.7f && b.facing_angle_deg < 96.9f);
    recd_report_free(&r);
    free(data);
}

static void test_textmangled_is_rejected(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = load_rec("bryan__animtest1_textmangled.rec", &len);
    recd_rec_info info;
    recd_report r = {0};
    assert_int_equal(recd_rec_probe(data, len, &info, &r), -EBADMSG);
    assert_int_equal(info.layout, RECD_REC_LAYOUT_TEXT_MANGLED);
    assert_int_equal(info.signature, 537110723u);
    assert_int_equal(info.type, 538968608u);
    assert_int_equal(r.count, 1);
    assert_string_equal(r.items[0].code, "text-mangled");
    assert_int_equal(r.items[0].severity, RECD_SEV_ERROR);
    assert_false(info.samp_accepts);
    assert_false(info.open_mp_accepts);
    assert_int_equal(recd_rec_valid_prefix(&info), 0);
    recd_report_free(&r);
    free(data);
}

int main(void)
{
    tu_require_corpus("samp-rec");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_file_matches_sources),
        cmocka_unit_test(test_truth1_is_legacy56),
        cmocka_unit_test(test_textmangled_is_rejected),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
