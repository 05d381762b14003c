/* SPDX-License-Identifier: MIT */
/* The 7 StarCraft II replays of the shared corpus (2010-2020) through the format table: the
 * values corpus/sc2/SOURCES.md lists appear in the describe summary, the tracker counts equal
 * s2protocol's where it decodes the file, the exported stream agrees with the counts, and cut
 * copies are reported with a byte offset and keep what came before. Skips (77) without the corpus. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "recd/format.h"

typedef struct expected {
    const char *file, *version, *map, *date;
    int base_build, loops, mpq;
    const char *names[2], *races[2], *results[2];
    long tracker; /* -1: no tracker events; 0: no reference count */
    bool metadata;
} expected;

/* From corpus/sc2/SOURCES.md (players, results, loops, maps) and reference/sc2replay.md
 * (s2protocol's tracker counts for 2.0.9, 3.0 and 5.0 with historical protocol modules). */
static const expected corpus[] = {
    {"wol_1.0.0.16117_b15405.SC2Replay", "1.0.0.16117", "Lost Temple", "2010-07-30", 15405, 6349, 2,
     {"Froadac", "Jdorty"}, {"Protoss", "Terran"}, {"win", "loss"}, -1, false},
    {"wol_1.2.2.17811_b17326.SC2Replay", "1.2.2.17811", "Lost Temple", "2011-02-20", 17326, 8796, 2,
     {"Laquendi", "Boom"}, {"Protoss", "Terran"}, {"loss", "win"}, -1, false},
    {"hots_2.0.9.26147_b24944.SC2Replay", "2.0.9.26147", "Derelict Watcher TE", "2013-07-10", 24944,
     2804, 4, {"KansasFF", "Lowrisk"}, {"Terran", "Terran"}, {"loss", "win"}, 255, false},
    {"hots_2.1.3.30508_b28667.SC2Replay", "2.1.3.30508", "Habitation Station LE", "2014-06-22",
     28667, 3787, 4, {"[GGTr] GGTracker", "A.I. 1 (Elite)"}, {"Protoss", "Zerg"}, {"loss", "win"}, 0,
     false},
    {"lotv_3.0.0.38215_b38215.SC2Replay", "3.0.0.38215", "Cactus Valley LE", "2015-10-07", 38215,
     9096, 4, {"ImNew", "A.I. 1 (Very Easy)"}, {"Protoss", "Protoss"}, {"win", "loss"}, 519, false},
    {"lotv_4.7.0.70154_b70154.SC2Replay", "4.7.0.70154", "Acid Plant LE", "2018-11-16", 70154, 4724,
     4, {"<WoS> StoicLoofah", "A.I. 1 (Very Easy)"}, {"Protoss", "Terran"}, {"loss", "win"}, 0, true},
    {"lotv_5.0.0.80949_b80949.SC2Replay", "5.0.0.80949", "Ever Dream LE", "2020-07-29", 80949, 24908,
     4, {"JiaanN", "Rairden"}, {"Terran", "Zerg"}, {"loss", "win"}, 4442, true},
};

#define NFILES (sizeof corpus / sizeof corpus[0])

static const recd_format *sc2(void)
{
    const recd_format *f = recd_format_find("sc2replay");
    assert_non_null(f);
    return f;
}

static uint8_t *load(const expected *e, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tu_corpus_dir("sc2"), e->file);
    uint8_t *data = tu_read_file(path, len);
    assert_non_null(data);
    return data;
}

static json_t *describe(const uint8_t *buf, size_t len, int *rc, char *err, size_t errlen)
{
    recd_buf out = {0};
    *rc = recd_format_describe(sc2(), buf, len, &out, err, errlen);
    json_t *o = json_loadb((const char *)out.data, out.len, 0, NULL);
    recd_buf_free(&out);
    assert_true(json_is_object(o));
    return o;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void test_sources_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFILES; i++) {
        const expected *e = &corpus[i];
        size_t len;
        uint8_t *buf = load(e, &len);
        assert_ptr_equal(recd_format_sniff(buf, len, NULL), sc2());
        int rc;
        char err[256];
        json_t *o = describe(buf, len, &rc, err, sizeof err);
        if (rc != 0)
            fail_msg("%s: %s", e->file, err);
        assert_string_equal(str(o, "format"), "sc2replay");
        assert_string_equal(str(o, "version"), e->version);
        assert_int_equal(json_integer_value(json_object_get(o, "base_build")), e->base_build);
        assert_int_equal(json_integer_value(json_object_get(o, "game_loops")), e->loops);
        assert_true(json_real_value(json_object_get(o, "duration_s")) == e->loops / 16.0);
        assert_int_equal(json_integer_value(json_object_get(o, "mpq_format_version")), e->mpq);
        assert_string_equal(str(o, "map"), e->map);
        assert_memory_equal(str(o, "time_utc"), e->date, 10);
        json_t *players = json_object_get(o, "players");
        assert_int_equal(json_array_size(players), 2);
        for (size_t p = 0; p < 2; p++) {
            json_t *pl = json_array_get(players, p);
            assert_string_equal(str(pl, "name_plain"), e->names[p]);
            assert_string_equal(str(pl, "race"), e->races[p]);
            assert_string_equal(str(pl, "result"), e->results[p]);
            const char *control = str(pl, "control");
            assert_string_equal(control, strncmp(e->names[p], "A.I.", 4) == 0 ? "computer" : "human");
            assert_int_equal(strlen(str(pl, "color")), 7);
            assert_true(json_is_integer(json_object_get(pl, "team")));
            assert_true(json_object_get(pl, "mmr") != NULL || !e->metadata ||
                        strcmp(control, "computer") == 0);
        }
        assert_true(json_array_size(json_object_get(o, "members")) >= 8);
        json_t *counts = json_object_get(o, "tracker_counts");
        if (e->tracker < 0) {
            assert_null(counts);
        } else {
            assert_int_equal(json_object_size(counts), 10);
            json_int_t total = 0;
            const char *k;
            json_t *v;
            json_object_foreach(counts, k, v) total += json_integer_value(v);
            assert_int_equal(total, json_integer_value(json_object_get(o, "tracker_events")));
            if (e->tracker > 0)
                assert_int_equal(total, e->tracker);
        }
        json_decref(o);
        free(buf);
    }
}

/* The clan markup of names stays as stored in name, unescaped in name_plain. */
static void test_name_markup(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = load(&corpus[5], &len);
    int rc;
    char err[256];
    json_t *o = describe(buf, len, &rc, err, sizeof err);
    json_t *p = json_array_get(json_object_get(o, "players"), 0);
    assert_string_equal(str(p, "name"), "&lt;WoS&gt;<sp/>StoicLoofah");
    assert_string_equal(str(p, "name_plain"), "<WoS> StoicLoofah");
    json_decref(o);
    free(buf);
}

typedef struct stream_count {
    uint64_t events, born;
    int64_t last_loop;
    bool ordered;
} stream_count;

static int count(void *data, const recd_replay_event *ev)
{
    stream_count *c = data;
    c->events++;
    if (ev->t_raw < c->last_loop)
        c->ordered = false;
    c->last_loop = ev->t_raw;
    assert_true(ev->t == ev->t_raw / 16.0);
    assert_string_equal(ev->source, "sc2replay");
    if (strcmp(ev->kind, "unit_born") == 0)
        c->born++;
    recd_buf line = {0};
    assert_int_equal(recd_replay_event_jsonl(ev, &line), 0); /* fields is one JSON object */
    recd_buf_free(&line);
    return 0;
}

static void test_export_agrees_with_counts(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFILES; i++) {
        size_t len;
        uint8_t *buf = load(&corpus[i], &len);
        stream_count c = {0, 0, 0, true};
        char err[256];
        assert_int_equal(recd_format_export_events(sc2(), buf, len, count, &c, err, sizeof err), 0);
        assert_true(c.ordered);
        int rc;
        json_t *o = describe(buf, len, &rc, err, sizeof err);
        json_int_t want = json_integer_value(json_object_get(o, "tracker_events"));
        assert_int_equal(c.events, want);
        json_int_t born = json_integer_value(
            json_object_get(json_object_get(o, "tracker_counts"), "unit_born"));
        assert_int_equal(c.born, born);
        json_decref(o);
        free(buf);
    }
}

/* Cut copies: never a crash, always -EBADMSG with "byte" in the message, and the header's values
 * (decoded before the damage) are still there once the header itself is whole. */
static void test_truncated_copies(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFILES; i++) {
        size_t len;
        uint8_t *buf = load(&corpus[i], &len);
        size_t cuts[] = {0, 3, 17, 40, 200, 1024, 1030, 1100, len / 3, len / 2, len - 100, len - 1};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            size_t cut = cuts[k];
            uint8_t *copy = malloc(cut ? cut : 1);
            memcpy(copy, buf, cut);
            int rc;
            char err[256] = "";
            recd_buf out = {0};
            rc = recd_format_describe(sc2(), copy, cut, &out, err, sizeof err);
            if (rc != -EBADMSG)
                fail_msg("%s cut at %zu: rc %d", corpus[i].file, cut, rc);
            if (!strstr(err, "byte"))
                fail_msg("%s cut at %zu: no offset in '%s'", corpus[i].file, cut, err);
            json_t *o = json_loadb((const char *)out.data, out.len, 0, NULL);
            assert_non_null(o);
            if (cut >= 1024)
                assert_string_equal(str(o, "version"), corpus[i].version);
            json_decref(o);
            recd_buf_free(&out);
            stream_count c = {0, 0, 0, true};
            rc = recd_format_export_events(sc2(), copy, cut, count, &c, err, sizeof err);
            assert_true(rc == -EBADMSG || (rc == 0 && corpus[i].tracker < 0 && cut >= len / 3));
            free(copy);
        }
        free(buf);
    }
}

int main(void)
{
    tu_require_corpus("sc2");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sources_values),
        cmocka_unit_test(test_name_markup),
        cmocka_unit_test(test_export_agrees_with_counts),
        cmocka_unit_test(test_truncated_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
