/* SPDX-License-Identifier: MIT */
/* The rFactor 2 replay reader against files the test writer builds from the documented layout:
 * every decoded event type round-trips its values, unknown events keep every byte, long and
 * Latin-1 names survive, gzip'd and plain files read the same, and every cut of a small file is
 * reported with an offset without a crash. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/bytes.h"
#include "recd/format.h"
#include "recd/gzip_members.h"
#include "vcr_test_writer.h"

static const recd_format *rf2(void)
{
    const recd_format *f = recd_format_find("rf2-vcr");
    assert_non_null(f);
    return f;
}

/* Exported events, each as a parsed JSON line. */
typedef struct events {
    json_t *list;
} events;

static int collect(void *data, const recd_replay_event *ev)
{
    events *e = data;
    recd_buf line = {0};
    assert_int_equal(recd_replay_event_jsonl(ev, &line), 0);
    json_error_t jerr;
    json_t *j = json_loadb((const char *)line.data, line.len, 0, &jerr);
    if (!j)
        fail_msg("not JSON: %.*s (%s)", (int)line.len, (const char *)line.data, jerr.text);
    json_array_append_new(e->list, j);
    recd_buf_free(&line);
    return 0;
}

static json_t *export_all(const recd_buf *b, int want_rc, char *err, size_t errlen)
{
    events e = {json_array()};
    assert_int_equal(recd_format_export_events(rf2(), b->data, b->len, collect, &e, err, errlen), want_rc);
    return e.list;
}

static json_t *describe(const recd_buf *b)
{
    recd_buf out = {0};
    char err[256] = "";
    assert_int_equal(recd_format_describe(rf2(), b->data, b->len, &out, err, sizeof err), 0);
    json_error_t jerr;
    json_t *j = json_loadb((const char *)out.data, out.len, 0, &jerr);
    if (!j)
        fail_msg("describe is not JSON: %.*s (%s)", (int)out.len, (const char *)out.data, jerr.text);
    recd_buf_free(&out);
    return j;
}

static const vcrw_header plain_header = {"rFactor 2 test", 1.08f, "a.rfm", "info", "t.scn", "t.aiw",
                                         "Mod", "1.0", "uid", "Locations/T", 10};

static void begin_one_driver(vcrw *w, const char *name)
{
    vcrw_driver d = {2, name, "", "Car", "1.0", "CAR", "car.veh", 0.0f, 500.0f};
    assert_int_equal(vcrw_begin(w, &plain_header, &d, 1), 0);
}

/* One event alone in a replay, exported: the only exported event, checked for kind and actor. */
static json_t *one_event(uint8_t cls, uint8_t type, uint8_t slot, const uint8_t *payload, uint16_t size,
                         const char *kind)
{
    vcrw w;
    recd_buf b;
    begin_one_driver(&w, "Driver");
    assert_int_equal(vcrw_slice(&w, 12.5f), 0);
    assert_int_equal(vcrw_event(&w, cls, type, slot, 7, payload, size), 0);
    assert_int_equal(vcrw_finish(&w, 0.0f, 12.5f, false, &b), 0);
    char err[256] = "";
    json_t *list = export_all(&b, 0, err, sizeof err);
    assert_int_equal(json_array_size(list), 1);
    json_t *ev = json_incref(json_array_get(list, 0));
    json_decref(list);
    recd_buf_free(&b);
    assert_string_equal(json_string_value(json_object_get(ev, "source")), "rf2-vcr");
    assert_string_equal(json_string_value(json_object_get(ev, "kind")), kind);
    assert_int_equal(json_integer_value(json_object_get(ev, "actor")), slot == 255 ? -1 : slot);
    assert_true(json_real_value(json_object_get(ev, "t")) == 12.5);
    assert_int_equal(json_integer_value(json_object_get(ev, "t_raw")), 12500);
    json_t *fields = json_object_get(ev, "fields");
    assert_int_equal(json_integer_value(json_object_get(fields, "time_adjust")), 7);
    json_incref(fields);
    json_decref(ev);
    return fields;
}

static json_int_t int_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static double num_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static bool bool_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_boolean(v));
    return json_is_true(v);
}

static void test_pose_every_gear(void **state)
{
    (void)state;
    vcrw_pose p = {.steer = 700, .horn = true, .in_pit_lane = true, .throttle = 41, .engine = 12345,
                   .acceleration = 200, .current_driver = 2, .damage = 0x20005, .following = true,
                   .warning_light = false, .driver_visible = true, .headlight = true, .brake = 33,
                   .traction_control = 3, .pos = {-120.25f, 3.5f, 987.125f}, .rot = {0.5f, -1.25f, 3.0f}};
    for (int i = 0; i < 5; i++)
        p.velocity[i] = (uint8_t)(0xA0 + i);
    for (int i = 0; i < 25; i++)
        p.unknown[i] = (uint8_t)i;
    uint8_t payload[63];
    vcrw_pose_encode(&p, payload);
    for (uint8_t type = 7; type <= 16; type++) {
        json_t *f = one_event(0, type, 4, payload, 63, "pose");
        if (type <= 15)
            assert_int_equal(int_of(f, "gear"), type - 8);
        else
            assert_true(json_is_null(json_object_get(f, "gear")));
        assert_int_equal(int_of(f, "steer"), 700);
        assert_true(bool_of(f, "horn"));
        assert_true(bool_of(f, "in_pit_lane"));
        assert_int_equal(int_of(f, "throttle"), 41);
        assert_int_equal(int_of(f, "engine"), 12345);
        assert_int_equal(int_of(f, "acceleration"), 200);
        assert_int_equal(int_of(f, "current_driver"), 2);
        assert_int_equal(int_of(f, "damage"), 0x20005);
        assert_true(bool_of(f, "following"));
        assert_false(bool_of(f, "warning_light"));
        assert_true(bool_of(f, "driver_visible"));
        assert_true(bool_of(f, "headlight"));
        assert_int_equal(int_of(f, "brake"), 33);
        assert_int_equal(int_of(f, "traction_control"), 3);
        assert_true(num_of(f, "x") == -120.25 && num_of(f, "y") == 3.5 && num_of(f, "z") == 987.125);
        assert_true(num_of(f, "rot_x") == 0.5 && num_of(f, "rot_y") == -1.25 && num_of(f, "rot_z") == 3.0);
        assert_string_equal(str_of(f, "velocity_raw"), "a0a1a2a3a4");
        assert_string_equal(str_of(f, "unknown_raw"), "000102030405060708090a0b0c0d0e0f101112131415161718");
        json_decref(f);
    }
    /* A pose of another size is not guessed at: it stays raw. */
    json_t *f = one_event(0, 9, 4, payload, 40, "unknown");
    assert_int_equal(int_of(f, "size"), 40);
    json_decref(f);
}

static void test_checkpoints(void **state)
{
    (void)state;
    uint8_t p[11];
    for (unsigned sector = 1; sector <= 3; sector++) {
        vcrw_checkpoint_encode(81.25f, 1234.5f, 17, sector, p);
        json_t *f = one_event(3, 6, 9, p, 11, "checkpoint");
        assert_int_equal(int_of(f, "lap"), 17);
        assert_int_equal(int_of(f, "sector"), sector);
        assert_true(num_of(f, "lap_time") == 81.25);
        assert_true(num_of(f, "crossing_time") == 1234.5);
        assert_string_equal(str_of(f, "rest"), "00"); /* the padding byte, kept */
        json_decref(f);
    }
    p[9] = 3 << 6; /* a code the layout does not name */
    json_t *f = one_event(3, 6, 9, p, 10, "checkpoint");
    assert_true(json_is_null(json_object_get(f, "sector")));
    assert_int_equal(int_of(f, "sector_byte"), 192);
    assert_null(json_object_get(f, "rest"));
    json_decref(f);
}

static void test_position_order(void **state)
{
    (void)state;
    uint8_t p[25] = {0};
    p[0] = 0xEE;
    p[21] = 5, p[22] = 0, p[23] = 3, p[24] = 1;
    json_t *f = one_event(3, 48, 255, p, 25, "position_order");
    json_t *order = json_object_get(f, "order");
    assert_int_equal(json_array_size(order), 4);
    assert_int_equal(json_integer_value(json_array_get(order, 0)), 5);
    assert_int_equal(json_integer_value(json_array_get(order, 3)), 1);
    assert_string_equal(str_of(f, "head"), "ee0000000000000000000000000000000000000000");
    json_decref(f);
}

static void test_penalties(void **state)
{
    (void)state;
    uint8_t p[40] = {4, 0x34, 0x12};
    memcpy(p + 3, "Track limits", 12);
    json_t *f = one_event(2, 5, 1, p, 15, "penalty");
    assert_string_equal(str_of(f, "action"), "given");
    assert_int_equal(int_of(f, "id"), 4);
    assert_int_equal(int_of(f, "unknown"), 0x1234);
    assert_string_equal(str_of(f, "reason"), "Track limits");
    json_decref(f);
    p[0] = 0;
    f = one_event(2, 7, 1, p, 1, "penalty");
    assert_string_equal(str_of(f, "action"), "served");
    assert_string_equal(str_of(f, "penalty"), "stop_go");
    json_decref(f);
    p[0] = 1;
    f = one_event(2, 8, 1, p, 1, "penalty");
    assert_string_equal(str_of(f, "action"), "removed");
    assert_string_equal(str_of(f, "penalty"), "drive_through");
    json_decref(f);
}

static void test_pit_and_garage(void **state)
{
    (void)state;
    static const struct { uint8_t code; const char *what; } pit[] = {
        {32, "exited_lane"}, {33, "requested"}, {34, "entered_lane"}, {35, "in_box"}, {36, "off_jacks"},
        {0, "garage"}, {1, "garage"}, {99, "unknown"}};
    for (size_t i = 0; i < sizeof pit / sizeof pit[0]; i++) {
        uint8_t p[6] = {pit[i].code, 1, 2, 3, 4, 5};
        json_t *f = one_event(5, 2, 3, p, pit[i].code == 36 ? 6 : 1, "pit");
        assert_string_equal(str_of(f, "what"), pit[i].what);
        assert_int_equal(int_of(f, "code"), pit[i].code);
        if (pit[i].code == 36)
            assert_string_equal(str_of(f, "rest"), "0102030405");
        json_decref(f);
    }
    static const struct { uint8_t code; const char *what; } state49[] = {
        {3, "in_pit_lane"}, {4, "in_garage"}, {6, "removed_by_admin"}, {5, "unknown"}};
    for (size_t i = 0; i < sizeof state49 / sizeof state49[0]; i++) {
        json_t *f = one_event(3, 49, 3, &state49[i].code, 1, "pit_state");
        assert_string_equal(str_of(f, "what"), state49[i].what);
        json_decref(f);
    }
    uint8_t t[4];
    st_le32(t, f32_to_bits(321.75f));
    json_t *f = one_event(1, 7, 3, t, 4, "garage");
    assert_true(num_of(f, "time") == 321.75);
    json_decref(f);
}

static void test_lights_and_countdown(void **state)
{
    (void)state;
    uint8_t p[8] = {4, 0x02, 0x01};
    json_t *f = one_event(1, 10, 255, p, 3, "lights");
    assert_int_equal(int_of(f, "count"), 4);
    assert_int_equal(int_of(f, "unknown"), 0x102);
    json_decref(f);
    st_le32(p, 3);
    f = one_event(1, 23, 255, p, 4, "countdown");
    assert_int_equal(int_of(f, "value"), 3);
    json_decref(f);
    st_le32(p, f32_to_bits(10.0f)), st_le32(p + 4, f32_to_bits(15.5f));
    f = one_event(3, 9, 255, p, 8, "countdown_period");
    assert_true(num_of(f, "start") == 10.0 && num_of(f, "end") == 15.5);
    json_decref(f);
}

/* Unknown events, empty and of the largest size, and known ones cut below their layout, keep
 * every payload byte and their header's fields. */
static void test_unknown_events_byte_for_byte(void **state)
{
    (void)state;
    static const struct { uint8_t cls, type; uint16_t size; } cases[] = {
        {0, 1, 0}, {0, 5, 24}, {1, 4, 41}, {2, 15, 511}, {3, 38, 100}, {7, 63, 3}, {1, 23, 2}, {3, 6, 9}};
    uint8_t payload[511];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 31 + 7);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *f = one_event(cases[i].cls, cases[i].type, 0, payload, cases[i].size, "unknown");
        assert_int_equal(int_of(f, "class"), cases[i].cls);
        assert_int_equal(int_of(f, "type"), cases[i].type);
        assert_int_equal(int_of(f, "size"), cases[i].size);
        const char *raw = str_of(f, "raw");
        assert_int_equal(strlen(raw), 2u * cases[i].size);
        for (size_t k = 0; k < cases[i].size; k++) {
            unsigned byte;
            assert_int_equal(sscanf(raw + 2 * k, "%2x", &byte), 1);
            assert_int_equal(byte, payload[k]);
        }
        json_decref(f);
    }
}

/* Names up to 255 bytes (a signed length byte would break them past 127), and Latin-1 text. */
static void test_long_and_latin1_names(void **state)
{
    (void)state;
    char name255[256], name128[129];
    memset(name255, 'n', 255), name255[255] = 0;
    memset(name128, 'm', 128), name128[128] = 0;
    vcrw_driver d[3] = {
        {0, name255, name128, "Car", "1", "ID", "a.veh", 0, 10},
        {1, "Jos\xe9 P\xe9rez", "", "Voiture \xe0 moteur", "1", "ID", "b.veh", 0, 10},
        {2, "Zo\xc3\xab", "", "Car", "1", "ID", "exactly-thirty-two-bytes-veh.veh", 0, 10},
    };
    vcrw w;
    recd_buf b;
    assert_int_equal(vcrw_begin(&w, &plain_header, d, 3), 0);
    assert_int_equal(vcrw_finish(&w, 0, 0, false, &b), 0);
    json_t *j = describe(&b);
    json_t *drivers = json_object_get(j, "drivers");
    assert_int_equal(json_array_size(drivers), 3);
    assert_string_equal(str_of(json_array_get(drivers, 0), "name"), name255);
    assert_string_equal(str_of(json_array_get(drivers, 0), "co_driver"), name128);
    assert_string_equal(str_of(json_array_get(drivers, 1), "name"), "Jos\xc3\xa9 P\xc3\xa9rez");
    assert_string_equal(str_of(json_array_get(drivers, 1), "vehicle"), "Voiture \xc3\xa0 moteur");
    assert_string_equal(str_of(json_array_get(drivers, 2), "name"), "Zo\xc3\xab");
    assert_string_equal(str_of(json_array_get(drivers, 2), "veh_file"), "exactly-thirty-two-bytes-veh.veh");
    json_decref(j);
    recd_format_verdict v;
    assert_int_equal(recd_format_verify(rf2(), b.data, b.len, &v, NULL), 0);
    assert_int_equal(v.units, 0);
    recd_buf_free(&b);
}

static void check_sample_summary(const recd_buf *b, bool gzip)
{
    json_t *j = describe(b);
    assert_string_equal(str_of(j, "format"), "rf2-vcr");
    assert_int_equal(bool_of(j, "compressed"), gzip);
    assert_true(num_of(j, "version") == 1.08); /* f32 numbers print as their shortest text */
    assert_string_equal(str_of(j, "session"), "race");
    assert_int_equal(int_of(j, "session_code"), 10);
    assert_string_equal(str_of(j, "track"), "Locations/Sample/Track");
    assert_string_equal(str_of(json_object_get(j, "mod"), "name"), "Sample Series");
    assert_string_equal(str_of(json_object_get(j, "mod"), "version"), "1.0");
    json_t *drivers = json_object_get(j, "drivers");
    assert_int_equal(json_array_size(drivers), 2);
    json_t *d0 = json_array_get(drivers, 0), *d1 = json_array_get(drivers, 1);
    assert_string_equal(str_of(d0, "name"), "Alice Example");
    assert_string_equal(str_of(d0, "vehicle"), "Sample Car #1");
    assert_int_equal(int_of(d1, "slot"), 3);
    assert_int_equal(strlen(str_of(d1, "name")), 200);
    assert_int_equal(int_of(d0, "laps"), 3);
    assert_int_equal(int_of(d1, "laps"), 3);
    /* 1 start slice + 9 crossings x 2 cars + 1 closing slice. */
    assert_int_equal(int_of(j, "slices"), 20);
    assert_int_equal(int_of(j, "declared_slices"), 20);
    assert_int_equal(int_of(j, "events"), int_of(j, "declared_events"));
    assert_int_equal(int_of(j, "events"), 3 + 18 * 2 + 3 + 8);
    json_t *kinds = json_object_get(j, "event_kinds");
    assert_int_equal(int_of(kinds, "pose"), 18);
    assert_int_equal(int_of(kinds, "checkpoint"), 18);
    assert_int_equal(int_of(kinds, "unknown"), 2);
    assert_int_equal(int_of(kinds, "penalty"), 3);
    assert_null(json_object_get(j, "damage"));
    json_decref(j);
}

static void test_sample_plain_and_gzip(void **state)
{
    (void)state;
    recd_buf plain, gz;
    assert_int_equal(vcrw_sample(false, &plain), 0);
    assert_int_equal(vcrw_sample(true, &gz), 0);
    assert_true(gz.data[0] == 0x1F && gz.data[1] == 0x8B);
    recd_sniff_result r;
    assert_ptr_equal(recd_format_sniff(plain.data, plain.len, &r), rf2());
    assert_int_equal(r.level, RECD_SNIFF_SIGNATURE);
    assert_ptr_equal(recd_format_sniff(gz.data, gz.len, &r), rf2());
    assert_ptr_equal(recd_format_by_extension("vcr", 0), rf2());
    assert_false(recd_format_is_recorded(rf2()));

    recd_format_verdict v;
    recd_report report = {0};
    assert_int_equal(recd_format_verify(rf2(), plain.data, plain.len, &v, &report), 0);
    assert_true(v.valid);
    assert_int_equal(v.units, 20);
    assert_int_equal(report.count, 0);
    assert_int_equal(recd_format_verify(rf2(), gz.data, gz.len, &v, NULL), 0);
    assert_int_equal(v.units, 20);
    check_sample_summary(&plain, false);
    check_sample_summary(&gz, true);

    /* Both exports are the same lines. */
    char err[256];
    json_t *a = export_all(&plain, 0, err, sizeof err), *b = export_all(&gz, 0, err, sizeof err);
    assert_true(json_equal(a, b));
    assert_int_equal(json_array_size(a), 50);
    /* Time order. */
    double last = -1;
    for (size_t i = 0; i < json_array_size(a); i++) {
        double t = json_real_value(json_object_get(json_array_get(a, i), "t"));
        assert_true(t >= last);
        last = t;
    }
    json_decref(a);
    json_decref(b);
    recd_buf_free(&plain);
    recd_buf_free(&gz);
}

/* Every cut of the sample (plain and gzip'd): no crash, verify refuses it with an offset inside
 * what is there, export keeps the events before the cut and names the offset. */
static void check_cuts(const recd_buf *whole, bool gzip)
{
    char err[256];
    json_t *all = export_all(whole, 0, err, sizeof err);
    size_t total = json_array_size(all);
    json_decref(all);
    size_t last_count = 0;
    for (size_t cut = 0; cut < whole->len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any read past the cut */
        assert_non_null(copy);
        memcpy(copy, whole->data, cut);
        recd_format_verdict v;
        recd_report report = {0};
        assert_int_equal(recd_format_verify(rf2(), copy, cut, &v, &report), -EBADMSG);
        assert_false(v.valid);
        assert_true(v.fallback[0]);
        if (!gzip)
            assert_true(v.fallback_offset <= cut);
        assert_int_equal(recd_report_errors(&report), 1);
        recd_report_free(&report);

        events e = {json_array()};
        err[0] = 0;
        int rc = recd_format_export_events(rf2(), copy, cut, collect, &e, err, sizeof err);
        assert_int_equal(rc, -EBADMSG);
        assert_true(strncmp(err, "offset ", 7) == 0);
        size_t n = json_array_size(e.list);
        assert_true(n < total || (gzip && n == total));
        if (!gzip) /* a longer prefix never holds fewer whole events */
            assert_true(n >= last_count);
        last_count = n;
        json_decref(e.list);

        recd_buf out = {0};
        rc = recd_format_describe(rf2(), copy, cut, &out, err, sizeof err);
        assert_true(rc == 0 || rc == -EBADMSG);
        if (rc == 0)
            assert_non_null(strstr((const char *)out.data, "\"damage\":{\"offset\":"));
        recd_buf_free(&out);
        free(copy);
    }
}

static void test_every_cut(void **state)
{
    (void)state;
    recd_buf plain, gz;
    assert_int_equal(vcrw_sample(false, &plain), 0);
    assert_int_equal(vcrw_sample(true, &gz), 0);
    check_cuts(&plain, false);
    check_cuts(&gz, true);
    recd_buf_free(&plain);
    recd_buf_free(&gz);
}

/* Lengths and counts larger than the file: refused at their own offset, nothing allocated for
 * them, what came before kept. */
static void test_hostile_lengths(void **state)
{
    (void)state;
    vcrw w;
    recd_buf b;
    begin_one_driver(&w, "Driver");
    assert_int_equal(vcrw_slice(&w, 1.0f), 0);
    uint8_t p[11];
    vcrw_checkpoint_encode(0, 1.0f, 1, 1, p);
    assert_int_equal(vcrw_event(&w, 3, 6, 2, 0, p, 11), 0);
    assert_int_equal(vcrw_finish(&w, 0, 1, false, &b), 0);
    size_t rfm_len_at = strlen(plain_header.preamble) + 1 + 4 + 4;
    size_t counts_at = b.len - (4 + 2 + 5 + 11) - 16;
    size_t driver_count_at = counts_at - (1 + 1 + 6 + 1 + 2 + 3 + 2 + 3 + 2 + 3 + 32 + 48 + 8) - 4;
    assert_int_equal(ld_le32(b.data + driver_count_at), 1);

    recd_format_verdict v;
    char err[256];
    st_le32(b.data + rfm_len_at, 0xFFFFFFFFu);
    assert_int_equal(recd_format_verify(rf2(), b.data, b.len, &v, NULL), -EBADMSG);
    assert_int_equal(v.fallback_offset, rfm_len_at);
    st_le32(b.data + rfm_len_at, 5);

    st_le32(b.data + driver_count_at, 0x7FFFFFFFu);
    assert_int_equal(recd_format_verify(rf2(), b.data, b.len, &v, NULL), -EBADMSG);
    assert_int_equal(v.fallback_offset, driver_count_at);
    assert_non_null(strstr(v.fallback, "driver count"));
    st_le32(b.data + driver_count_at, 1);

    /* More slices declared than present: the one there is exported, the end is reported. */
    st_le32(b.data + counts_at, 1000);
    json_t *list = export_all(&b, -EBADMSG, err, sizeof err);
    assert_int_equal(json_array_size(list), 1);
    assert_non_null(strstr(err, "after 1 of 1000 slices"));
    json_decref(list);
    st_le32(b.data + counts_at, 1);

    /* An event declaring more payload than is left. */
    b.data[b.len - 11 - 5 + 1] = 0xFF; /* size bits 8-15 */
    assert_int_equal(recd_format_verify(rf2(), b.data, b.len, &v, NULL), -EBADMSG);
    assert_int_equal(v.fallback_offset, b.len - 16);
    assert_non_null(strstr(v.fallback, "declares"));
    b.data[b.len - 11 - 5 + 1] = 11;

    /* Bytes after the last slice. */
    assert_int_equal(recd_buf_append(&b, "xyz", 3), 0);
    list = export_all(&b, -EBADMSG, err, sizeof err);
    assert_int_equal(json_array_size(list), 1);
    assert_non_null(strstr(err, "3 bytes after the last of 1 slices"));
    json_decref(list);
    recd_buf_free(&b);
}

/* Slots are reused when drivers leave: laps count for the entry whose stay covers them. */
static void test_reused_slot_laps(void **state)
{
    (void)state;
    vcrw_driver d[2] = {{1, "First", "", "Car", "1", "ID", "a.veh", 0.0f, 100.0f},
                        {1, "Second", "", "Car", "1", "ID", "b.veh", 100.5f, 500.0f}};
    vcrw w;
    recd_buf b;
    uint8_t p[11];
    assert_int_equal(vcrw_begin(&w, &plain_header, d, 2), 0);
    static const float times[] = {50.0f, 90.0f, 200.0f, 600.0f};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(vcrw_slice(&w, times[i]), 0);
        vcrw_checkpoint_encode(40.0f, times[i], (uint8_t)(i + 1), 3, p);
        assert_int_equal(vcrw_event(&w, 3, 6, 1, 0, p, 11), 0);
    }
    assert_int_equal(vcrw_finish(&w, 0, 600, false, &b), 0);
    json_t *j = describe(&b);
    json_t *drivers = json_object_get(j, "drivers");
    assert_int_equal(int_of(json_array_get(drivers, 0), "laps"), 2);
    assert_int_equal(int_of(json_array_get(drivers, 1), "laps"), 2); /* 600: after its exit, still the last */
    json_decref(j);
    recd_buf_free(&b);
}

/* A gzip'd replay with bytes after its stream, or a corrupt stream, is damaged. */
static void test_gzip_damage(void **state)
{
    (void)state;
    recd_buf gz;
    char err[256];
    assert_int_equal(vcrw_sample(true, &gz), 0);
    assert_int_equal(recd_buf_append(&gz, "tail", 4), 0);
    json_t *list = export_all(&gz, -EBADMSG, err, sizeof err);
    assert_int_equal(json_array_size(list), 50); /* every event is there */
    assert_non_null(strstr(err, "4 bytes after the gzip stream"));
    json_decref(list);
    gz.len -= 4;
    gz.data[gz.len / 2] ^= 0x55;
    recd_format_verdict v;
    assert_int_equal(recd_format_verify(rf2(), gz.data, gz.len, &v, NULL), -EBADMSG);
    assert_true(v.fallback[0]);
    recd_buf_free(&gz);
}

/* Another version still reads, with a warning: only 1.08 is documented. */
static void test_other_version_warns(void **state)
{
    (void)state;
    vcrw_header h = plain_header;
    h.version = 1.1f;
    vcrw w;
    recd_buf b;
    assert_int_equal(vcrw_begin(&w, &h, NULL, 0), 0);
    assert_int_equal(vcrw_finish(&w, 0, 0, true, &b), 0);
    recd_format_verdict v;
    recd_report report = {0};
    assert_int_equal(recd_format_verify(rf2(), b.data, b.len, &v, &report), 0);
    assert_int_equal(report.count, 1);
    assert_int_equal(report.items[0].severity, RECD_SEV_WARNING);
    assert_string_equal(report.items[0].code, "rf2-version");
    recd_report_free(&report);
    recd_buf_free(&b);
}

static void test_not_a_replay(void **state)
{
    (void)state;
    recd_buf b = {0}, out = {0};
    char err[256];
    assert_int_equal(recd_buf_append(&b, "just a line\nIRSX", 16), 0);
    assert_null(recd_format_sniff(b.data, b.len, NULL));
    assert_int_equal(recd_format_describe(rf2(), b.data, b.len, &out, err, sizeof err), -EBADMSG);
    assert_int_equal(out.len, 0);
    assert_non_null(strstr(err, "IRSR"));
    recd_buf_reset(&b);
    /* gzip'd text is gzip, not a replay. */
    assert_int_equal(recd_gzip_member_write(NULL, 6, "hello\nworld\n", 12, &b), 0);
    assert_null(recd_format_sniff(b.data, b.len, NULL));
    recd_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pose_every_gear),
        cmocka_unit_test(test_checkpoints),
        cmocka_unit_test(test_position_order),
        cmocka_unit_test(test_penalties),
        cmocka_unit_test(test_pit_and_garage),
        cmocka_unit_test(test_lights_and_countdown),
        cmocka_unit_test(test_unknown_events_byte_for_byte),
        cmocka_unit_test(test_long_and_latin1_names),
        cmocka_unit_test(test_sample_plain_and_gzip),
        cmocka_unit_test(test_every_cut),
        cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_reused_slot_laps),
        cmocka_unit_test(test_gzip_damage),
        cmocka_unit_test(test_other_version_warns),
        cmocka_unit_test(test_not_a_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
