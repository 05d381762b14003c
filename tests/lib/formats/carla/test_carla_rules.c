/* SPDX-License-Identifier: MIT */
/* The reading rules docs/formats/carla.md section 5.4 states so that a reader can be written from
 * the document alone, one test per rule: which packets have a count, ids 21-23 (tie-break and
 * "door-sized"), Position sizes, UE5 PhysicsControl, header-only and truncated files, the
 * collision line, the sign of NaN, non-finite JSON, FrameStart/FrameEnd sizes, ids a table lacks. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_format.h"
#include "formats/carla/carla_reader.h"
#include "formats/carla/carla_schema.h"
#include "recd/carla.h"
#include "recd/format.h"
#include "recd/message.h"

/* ---- a file built byte by byte -------------------------------------------------------------- */

static void put(recd_buf *b, const void *p, size_t n) { assert_int_equal(recd_buf_append(b, p, n), 0); }
static void put8(recd_buf *b, uint8_t v) { put(b, &v, 1); }
static void put16(recd_buf *b, uint16_t v) { uint8_t t[2]; st_le16(t, v); put(b, t, 2); }
static void put32(recd_buf *b, uint32_t v) { uint8_t t[4]; st_le32(t, v); put(b, t, 4); }
static void put64(recd_buf *b, uint64_t v) { uint8_t t[8]; st_le64(t, v); put(b, t, 8); }
static void putf(recd_buf *b, float f) { put32(b, f32_to_bits(f)); }

static void header(recd_buf *b)
{
    put16(b, 1);
    put16(b, 14);
    put(b, "CARLA_RECORDER", 14);
    put64(b, 1637671165);
    put16(b, 6);
    put(b, "Town01", 6);
}

static void packet(recd_buf *b, uint8_t id, const recd_buf *payload)
{
    put8(b, id);
    put32(b, (uint32_t)payload->len);
    if (payload->len)
        put(b, payload->data, payload->len);
}

static void frame_start(recd_buf *b, uint64_t id, double duration, double elapsed)
{
    put8(b, 0);
    put32(b, 24);
    put64(b, id);
    put64(b, f64_to_bits(duration));
    put64(b, f64_to_bits(elapsed));
}

static void frame_end(recd_buf *b)
{
    put8(b, 1);
    put32(b, 0);
}

/* A packet of count records whose bytes are rec (rec_len bytes in all). */
static void counted(recd_buf *b, uint8_t id, uint16_t count, const void *rec, size_t rec_len)
{
    recd_buf p = {0};
    put16(&p, count);
    if (rec_len)
        put(&p, rec, rec_len);
    packet(b, id, &p);
    recd_buf_free(&p);
}


/* The packets of the first frame, read with a report. */
static void read_first(const recd_buf *file, carla_reader *r, recd_carla_frame *f, recd_report *rep)
{
    size_t at;
    assert_int_equal(carla_reader_init(r, file->data, file->len, rep), 0);
    assert_int_equal(carla_reader_next(r, f, &at), 1);
}

static const recd_carla_packet *packet_with_id(const recd_carla_frame *f, unsigned nth)
{
    assert_true(nth < f->count);
    return &f->packets[nth];
}

static bool reported(const recd_report *rep, const char *code)
{
    for (size_t i = 0; i < rep->count; i++)
        if (strcmp(rep->items[i].code, code) == 0)
            return true;
    return false;
}

static char *info_text(const recd_buf *file, bool all, bool json)
{
    recd_buf out = {0};
    char err[256] = "";
    int rc = recd_carla_info(file->data, file->len, all, json, &out, err, sizeof err);
    assert_int_equal(rc, 0);
    put8(&out, 0);
    return (char *)out.data;
}

/* ---- the rules ------------------------------------------------------------------------------ */

/* 5.4.1: every packet but FrameStart, FrameEnd, PlatformTime, FrameCounter and VisualTime starts
 * with a u16 count; the countless ones must be exactly 8 bytes, or they are kept raw. */
static void test_which_packets_have_a_count(void **state)
{
    (void)state;
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++) {
        bool countless = k == RECD_CARLA_FRAME_START || k == RECD_CARLA_FRAME_END ||
                         k == RECD_CARLA_PLATFORM_TIME || k == RECD_CARLA_FRAME_COUNTER ||
                         k == RECD_CARLA_VISUAL_TIME;
        assert_int_equal(carla_kind(k, 4)->has_count, !countless);
    }
    recd_buf file = {0}, p = {0};
    header(&file);
    frame_start(&file, 1, -1, 0);
    put64(&p, f64_to_bits(1.5));
    packet(&file, 14, &p); /* PlatformTime, 8 bytes */
    put16(&p, 0);
    packet(&file, 20, &p); /* VisualTime, 10 bytes: raw */
    frame_end(&file);
    carla_reader r;
    recd_carla_frame f;
    recd_report rep = {0};
    read_first(&file, &r, &f, &rep);
    assert_int_equal(f.count, 2);
    assert_false(packet_with_id(&f, 0)->raw);
    assert_int_equal(packet_with_id(&f, 0)->kind, RECD_CARLA_PLATFORM_TIME);
    assert_true(packet_with_id(&f, 1)->raw);
    assert_true(reported(&rep, "carla-packet-size"));
    carla_reader_free(&r);
    recd_report_free(&rep);
    recd_buf_free(&p);
    recd_buf_free(&file);
}

/* One frame with packets 21, 22, 23 of the given (count, bytes), after an optional door-sized
 * id 21 packet that makes the table ue4-dev's interim one. */
static void ids_21_to_23_file(recd_buf *file, bool interim, uint16_t count, const void *rec, size_t len)
{
    header(file);
    frame_start(file, 1, -1, 0);
    if (interim) {
        uint8_t door[6] = {7, 0, 0, 0, 1, 1};
        counted(file, 21, 1, door, sizeof door);
    }
    for (uint8_t id = 21; id <= 23; id++)
        counted(file, id, count, rec, len);
    frame_end(file);
}

/* 5.4.2: when several meanings fill an id 21-23 packet exactly (every empty packet does), the
 * table's own meaning wins, then the order the table lists. */
static void test_ids_21_to_23_tie_break(void **state)
{
    (void)state;
    static const unsigned std_first[3] = {RECD_CARLA_ANIM_WHEELS, RECD_CARLA_ANIM_BIKER, RECD_CARLA_VEHICLE_DOOR};
    static const unsigned interim_first[3] = {RECD_CARLA_VEHICLE_DOOR, RECD_CARLA_ANIM_WHEELS, RECD_CARLA_ANIM_BIKER};
    for (int interim = 0; interim <= 1; interim++) {
        recd_buf file = {0};
        ids_21_to_23_file(&file, interim, 0, NULL, 0);
        carla_reader r;
        recd_carla_frame f;
        read_first(&file, &r, &f, NULL);
        assert_int_equal(r.interim_ids, interim);
        for (unsigned i = 0; i < 3; i++) {
            const recd_carla_packet *p = packet_with_id(&f, i + (unsigned)interim);
            assert_false(p->raw);
            assert_int_equal(p->kind, interim ? interim_first[i] : std_first[i]);
        }
        carla_reader_free(&r);
        recd_buf_free(&file);
    }
    /* nine wheels records with four wheels in all (9 x 8 + 4 x 9 = 108 bytes) are also nine biker
     * records (9 x 12): 21 stays wheels and 22 biker under 0.9.16; 23 (door first) takes biker,
     * the next in its order that fits */
    recd_buf rec = {0}, file = {0};
    for (uint32_t i = 0; i < 9; i++) {
        put32(&rec, i);
        put32(&rec, i < 4 ? 1 : 0);
        if (i < 4) {
            put8(&rec, 0);
            putf(&rec, 0.5f);
            putf(&rec, 1.0f);
        }
    }
    assert_int_equal(rec.len, 108);
    ids_21_to_23_file(&file, false, 9, rec.data, rec.len);
    carla_reader r;
    recd_carla_frame f;
    read_first(&file, &r, &f, NULL);
    assert_int_equal(packet_with_id(&f, 0)->kind, RECD_CARLA_ANIM_WHEELS);
    assert_int_equal(packet_with_id(&f, 1)->kind, RECD_CARLA_ANIM_BIKER);
    assert_int_equal(packet_with_id(&f, 2)->kind, RECD_CARLA_ANIM_BIKER);
    carla_reader_free(&r);
    recd_buf_free(&rec);
    recd_buf_free(&file);
}

/* 5.4.3: "door-sized" = count >= 1 and size = 2 + 6 x count exactly. */
static void test_door_sized(void **state)
{
    (void)state;
    uint8_t twelve[12] = {0};
    struct {
        uint8_t id;
        uint16_t count;
        size_t len;
        bool interim;
    } cases[] = {
        {21, 2, 12, true},   /* two door records */
        {21, 1, 12, false},  /* one biker record: not door-sized */
        {21, 0, 0, false},   /* empty: not door-sized */
        {23, 2, 12, false},  /* a door-sized 23 means 0.9.16 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recd_buf file = {0};
        header(&file);
        frame_start(&file, 1, -1, 0);
        counted(&file, cases[i].id, cases[i].count, twelve, cases[i].len);
        if (cases[i].id == 23) /* and a door-sized 21 as well */
            counted(&file, 21, 2, twelve, 12);
        frame_end(&file);
        carla_reader r;
        assert_int_equal(carla_reader_init(&r, file.data, file.len, NULL), 0);
        assert_int_equal(r.interim_ids, cases[i].interim);
        assert_string_equal(carla_reader_ids_label(&r),
                            cases[i].interim ? "ue4-dev-interim" : cases[i].id == 23 ? "0.9.16" : "0.9.13");
        carla_reader_free(&r);
        recd_buf_free(&file);
    }
}

/* 5.4.4: the width comes from the first non-empty Position packet whose integer quotient
 * (size - 2) / count is 28 or 52; Position packets of other sizes are kept raw with a warning. */
static void test_position_other_sizes(void **state)
{
    (void)state;
    uint8_t rec[80] = {0};
    recd_buf file = {0};
    header(&file);
    frame_start(&file, 1, -1, 0);
    counted(&file, 6, 1, rec, 40); /* 40 per record: neither width */
    counted(&file, 6, 2, rec, 57); /* 28.5: quotient 28 says f32, but 57 bytes fit no record */
    counted(&file, 6, 1, rec, 52); /* f64-sized, but the width is already known */
    counted(&file, 6, 1, rec, 28);
    frame_end(&file);
    carla_reader r;
    recd_carla_frame f;
    recd_report rep = {0};
    read_first(&file, &r, &f, &rep);
    assert_int_equal(r.width, 4);
    assert_true(packet_with_id(&f, 0)->raw);
    assert_true(packet_with_id(&f, 1)->raw);
    assert_true(packet_with_id(&f, 2)->raw);
    assert_false(packet_with_id(&f, 3)->raw);
    assert_int_equal(rep.count, 3);
    assert_true(reported(&rep, "carla-packet-size"));
    carla_reader_free(&r);
    recd_report_free(&rep);
    recd_buf_free(&file);
}

/* 5.4.5: PhysicsControl is always read with the UE4 layout (it has no vectors, so both widths
 * read it alike); a UE5 record, which that layout does not fill, is kept raw with a warning. */
static void test_ue5_physics_control_kept_raw(void **state)
{
    (void)state;
    recd_buf ue4 = {0}, ue5 = {0}, file = {0};
    put32(&ue4, 9);
    for (int i = 0; i < 5; i++)
        putf(&ue4, 1.0f);
    put8(&ue4, 1);
    for (int i = 0; i < 7; i++)
        putf(&ue4, 2.0f);
    for (int i = 0; i < 4; i++)
        put32(&ue4, 0); /* four empty lists */
    put32(&ue5, 9);     /* UE5: 14 f32/u8 fields more before the lists */
    for (int i = 0; i < 30; i++)
        putf(&ue5, 1.0f);
    for (int i = 0; i < 5; i++)
        put32(&ue5, 0);
    uint8_t pos[52] = {0};
    header(&file);
    frame_start(&file, 1, -1, 0);
    counted(&file, 6, 1, pos, 52); /* an f64 file */
    counted(&file, 15, 1, ue4.data, ue4.len);
    counted(&file, 15, 1, ue5.data, ue5.len);
    frame_end(&file);
    carla_reader r;
    recd_carla_frame f;
    recd_report rep = {0};
    read_first(&file, &r, &f, &rep);
    assert_int_equal(r.width, 8);
    assert_false(packet_with_id(&f, 1)->raw);
    assert_int_equal(packet_with_id(&f, 1)->kind, RECD_CARLA_PHYSICS_CONTROL);
    assert_true(packet_with_id(&f, 2)->raw);
    assert_int_equal(packet_with_id(&f, 2)->kind, 15);
    assert_true(reported(&rep, "carla-packet-size"));
    carla_reader_free(&r);
    recd_report_free(&rep);
    recd_buf_free(&ue4);
    recd_buf_free(&ue5);
    recd_buf_free(&file);
}

/* 5.4.6: a file of only the header is a valid log of 0 frames (0.9.13, f32). */
static void test_header_only(void **state)
{
    (void)state;
    recd_buf file = {0};
    header(&file);
    recd_format_verdict v;
    memset(&v, 0, sizeof v);
    assert_int_equal(recd_format_verify(recd_format_find("carla"), file.data, file.len, &v, NULL), 0);
    assert_true(v.valid);
    assert_string_equal(v.summary, "carla 0.9.13 f32, 0 frames, 0 s");
    char *text = info_text(&file, false, false);
    assert_non_null(strstr(text, "Date: "));
    assert_non_null(strstr(text, "\n\n\nFrames: 0\nDuration: 0 seconds\n"));
    free(text);
    text = info_text(&file, false, true);
    assert_non_null(strstr(text, "\"events\":[],\"frames\":0,\"duration\":0.0}"));
    free(text);
    recd_buf_free(&file);
}

/* 5.4.7: in a truncated file the footer is the last whole frame's (FrameStart .. FrameEnd), not
 * the cut frame's FrameStart; JSON adds the error with its offset. */
static void test_truncated_footer(void **state)
{
    (void)state;
    recd_buf file = {0};
    header(&file);
    frame_start(&file, 1, 0.25, 0);
    frame_end(&file);
    frame_start(&file, 2, 0.25, 0.25);
    frame_end(&file);
    size_t third = file.len;
    frame_start(&file, 3, -1, 0.5); /* no FrameEnd */
    char *text = info_text(&file, false, false);
    assert_non_null(strstr(text, "\nFrames: 2\nDuration: 0.25 seconds\n"));
    free(text);
    text = info_text(&file, false, true);
    char want[64];
    snprintf(want, sizeof want, "\"error\":{\"offset\":%zu,", third + 29);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "\"frames\":2,\"duration\":0.25}"));
    free(text);
    recd_buf_free(&file);
}

/* 5.4.8: " (hero) " follows a hero actor, so "234 (hero)  with" has two spaces and a line whose
 * second actor is a hero ends in a space. */
static void test_collision_spacing(void **state)
{
    (void)state;
    static const struct {
        uint8_t hero1, hero2;
        const char *line;
    } cases[] = {
        {0, 0, "\n Collision id 3 between 234 with 51\n"},
        {1, 0, "\n Collision id 3 between 234 (hero)  with 51\n"},
        {0, 1, "\n Collision id 3 between 234 with 51 (hero) \n"},
        {1, 1, "\n Collision id 3 between 234 (hero)  with 51 (hero) \n"},
    };
    for (size_t i = 0; i < 4; i++) {
        recd_buf file = {0}, rec = {0};
        put32(&rec, 3);
        put32(&rec, 234);
        put32(&rec, 51);
        put8(&rec, cases[i].hero1);
        put8(&rec, cases[i].hero2);
        header(&file);
        frame_start(&file, 1, -1, 0);
        counted(&file, 5, 1, rec.data, rec.len);
        frame_end(&file);
        char *text = info_text(&file, false, false);
        assert_non_null(strstr(text, cases[i].line));
        free(text);
        recd_buf_free(&rec);
        recd_buf_free(&file);
    }
}

/* One Position record at (x, y, z) in f32. */
static void position_file(recd_buf *file, float x, float y, float z)
{
    recd_buf rec = {0};
    put32(&rec, 7);
    putf(&rec, x);
    putf(&rec, y);
    putf(&rec, z);
    for (int i = 0; i < 3; i++)
        putf(&rec, 0);
    header(file);
    frame_start(file, 1, -1, 0);
    counted(file, 6, 1, rec.data, rec.len);
    frame_end(file);
    recd_buf_free(&rec);
}

/* 5.4.9: text prints NaN's sign ("-nan" when the sign bit is set, as printf does); JSON keeps it
 * too, and a NaN other than the default quiet one keeps its bits. */
static void test_nan_sign(void **state)
{
    (void)state;
    recd_buf file = {0};
    position_file(&file, f32_from_bits(0xFFC00000u), f32_from_bits(0x7FC00000u), f32_from_bits(0x7FC00001u));
    char *text = info_text(&file, true, false);
    assert_non_null(strstr(text, "  Id: 7 Location: (-nan, nan, nan) Rotation: (0, 0, 0)\n"));
    free(text);
    text = info_text(&file, true, true);
    assert_non_null(strstr(text, "\"location\":[\"-nan\",\"nan\",\"nan:0x7fc00001\"]"));
    free(text);
    recd_buf_free(&file);
}

/* 5.4.10: JSON writes non-finite numbers as strings: "inf", "-inf", "nan", "-nan",
 * "nan:0x<8 hex digits>" (f32) or "nan:0x<16 hex digits>" (f64); import reads them back. */
static void test_json_non_finite(void **state)
{
    (void)state;
    recd_buf file = {0};
    position_file(&file, INFINITY, -INFINITY, 1.5f);
    char *text = info_text(&file, true, true);
    assert_non_null(strstr(text, "\"location\":[\"inf\",\"-inf\",1.5]"));
    free(text);
    recd_buf out = {0};
    assert_int_equal(carla_put_f64(&out, f64_from_bits(0x7FF8000000000001ull)), 0);
    put8(&out, 0);
    assert_string_equal((char *)out.data, "\"nan:0x7ff8000000000001\"");
    recd_buf_free(&out);
    double d = 0;
    json_t *j = json_string("nan:0x7ff8000000000001");
    assert_true(carla_get_f64(j, &d));
    assert_true(f64_to_bits(d) == 0x7FF8000000000001ull);
    json_decref(j);
    recd_buf_free(&file);
}

/* 5.4.11: a FrameStart must be 24 bytes (else an error at its offset); a FrameEnd with a payload
 * ends the frame, its payload skipped with a warning. */
static void test_frame_start_end_sizes(void **state)
{
    (void)state;
    recd_buf file = {0}, p = {0};
    header(&file);
    frame_start(&file, 1, -1, 0);
    put32(&p, 0xdeadbeef);
    packet(&file, 1, &p); /* FrameEnd with 4 bytes */
    carla_reader r;
    recd_carla_frame f;
    recd_report rep = {0};
    read_first(&file, &r, &f, &rep);
    assert_int_equal(f.count, 0);
    assert_true(reported(&rep, "carla-frame-end-size"));
    carla_reader_free(&r);
    recd_report_free(&rep);
    recd_buf_free(&file);
    header(&file);
    size_t at = file.len;
    put8(&file, 0);
    put32(&file, 16);
    put64(&file, 1);
    put64(&file, 0);
    frame_end(&file);
    size_t off;
    assert_int_equal(carla_reader_init(&r, file.data, file.len, NULL), 0);
    assert_int_equal(carla_reader_next(&r, &f, &off), -EBADMSG);
    assert_int_equal(r.err_offset, at);
    assert_non_null(strstr(r.err, "not 24"));
    carla_reader_free(&r);
    recd_buf_free(&p);
    recd_buf_free(&file);
}

/* 5.4.12: an id the detected table does not have (18 in a 0.9.13 file, 25..255) is kept raw
 * without a warning; 24 is Weather under every table; 21-23 resolve by size under every table. */
static void test_ids_a_table_lacks(void **state)
{
    (void)state;
    recd_buf file = {0}, p = {0}, weather = {0};
    put64(&p, 5);
    for (int i = 0; i < 14; i++)
        putf(&weather, 0.5f);
    uint8_t door[6] = {7, 0, 0, 0, 1, 1};
    header(&file);
    frame_start(&file, 1, -1, 0);
    packet(&file, 18, &p); /* FrameCounter: 0.9.15 and later */
    packet(&file, 50, &p);
    counted(&file, 24, 1, weather.data, weather.len);
    counted(&file, 22, 1, door, sizeof door);
    frame_end(&file);
    carla_reader r;
    recd_carla_frame f;
    recd_report rep = {0};
    read_first(&file, &r, &f, &rep);
    assert_string_equal(carla_reader_ids_label(&r), "0.9.13");
    assert_true(packet_with_id(&f, 0)->raw);
    assert_int_equal(packet_with_id(&f, 0)->kind, 18);
    assert_true(packet_with_id(&f, 1)->raw);
    assert_false(packet_with_id(&f, 2)->raw);
    assert_int_equal(packet_with_id(&f, 2)->kind, RECD_CARLA_WEATHER);
    assert_false(packet_with_id(&f, 3)->raw);
    assert_int_equal(packet_with_id(&f, 3)->kind, RECD_CARLA_VEHICLE_DOOR);
    assert_int_equal(rep.count, 0);
    carla_reader_free(&r);
    recd_report_free(&rep);
    recd_buf_free(&p);
    recd_buf_free(&weather);
    recd_buf_free(&file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which_packets_have_a_count),
        cmocka_unit_test(test_ids_21_to_23_tie_break),
        cmocka_unit_test(test_door_sized),
        cmocka_unit_test(test_position_other_sizes),
        cmocka_unit_test(test_ue5_physics_control_kept_raw),
        cmocka_unit_test(test_header_only),
        cmocka_unit_test(test_truncated_footer),
        cmocka_unit_test(test_collision_spacing),
        cmocka_unit_test(test_nan_sign),
        cmocka_unit_test(test_json_non_finite),
        cmocka_unit_test(test_frame_start_end_sizes),
        cmocka_unit_test(test_ids_a_table_lacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
