/* SPDX-License-Identifier: MIT */
/* Unit tests for the CARLA log codec (lib/src/formats/carla/): every packet kind in both vector
 * widths and all three id tables through writer, reader, JSON and back; ids 21-23 resolved by
 * size; unknown ids kept; truncation reported with its offset; held-back durations; counts
 * capped at 65535; cuts of the last 4 KiB repaired and recovered; binary-frame states read in
 * place; frames written in place equal those written through the sink. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_format.h"
#include "formats/carla/carla_reader.h"
#include "formats/carla/carla_schema.h"
#include "formats/carla/carla_wire.h"
#include "formats/carla/carla_writer.h"
#include "recd/format.h"
#include "recd/message.h"
#include "recd/synth.h"
#include "formats/carla/carla_synth.h"
#include "wire/wire_internal.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* One record of a layout with values derived from seed: 1-element lists, 2-byte strings. */
static void make_record(const carla_field *f, unsigned w, unsigned seed, recd_buf *out)
{
    for (; f->name; f++, seed++) {
        uint8_t b[8];
        switch (f->type) {
        case CF_U8: b[0] = (uint8_t)(seed & 3); recd_buf_append(out, b, 1); break;
        case CF_U16: st_le16(b, (uint16_t)seed); recd_buf_append(out, b, 2); break;
        case CF_U32:
        case CF_I32: st_le32(b, seed * 7u); recd_buf_append(out, b, 4); break;
        case CF_U64: st_le64(b, seed * 11u); recd_buf_append(out, b, 8); break;
        case CF_F32: st_le32(b, f32_to_bits((float)seed * 0.25f)); recd_buf_append(out, b, 4); break;
        case CF_F64: st_le64(b, f64_to_bits(seed * 0.125)); recd_buf_append(out, b, 8); break;
        case CF_VEC:
            for (int k = 0; k < 3; k++) {
                if (w == 4)
                    st_le32(b, f32_to_bits((float)(seed + k) * 1.5f));
                else
                    st_le64(b, f64_to_bits((seed + k) * 1.5 + 1e-9));
                recd_buf_append(out, b, w);
            }
            break;
        case CF_STR: st_le16(b, 2); recd_buf_append(out, b, 2); recd_buf_append(out, "ab", 2); break;
        case CF_LIST16: st_le16(b, 1); recd_buf_append(out, b, 2); make_record(f->sub, w, seed, out); break;
        case CF_LIST32: st_le32(b, 1); recd_buf_append(out, b, 4); make_record(f->sub, w, seed, out); break;
        default: break;
        }
    }
}

static bool is_event_kind(unsigned k)
{
    return k >= RECD_CARLA_EVENT_ADD && k <= RECD_CARLA_COLLISION;
}

/* Frame 1 with one record of every kind the table has (events as events), frame 2 empty. */
static void write_all_kinds(recd_carla_ids ids, unsigned w, recd_buf *file, recd_buf rec[RECD_CARLA_KIND_COUNT])
{
    char map[] = "Town03";
    recd_carla_open o = {.date = 1637671165, .map = map, .width = (uint8_t)w, .ids = ids,
                         .additional_data = true};
    carla_writer wr;
    assert_int_equal(carla_writer_init(&wr, &o, recd_buf_sink(file)), 0);
    recd_carla_packet pk[RECD_CARLA_KIND_COUNT];
    size_t n = 0;
    for (unsigned k = RECD_CARLA_EVENT_ADD; k < RECD_CARLA_KIND_COUNT; k++) {
        if (carla_id_of_kind(ids, k) < 0 || k == RECD_CARLA_FRAME_COUNTER)
            continue;
        make_record(carla_kind(k, w)->fields, w, k, &rec[k]);
        if (is_event_kind(k))
            continue;
        bool counted = carla_kind(k, w)->has_count;
        pk[n++] = (recd_carla_packet){.kind = (uint8_t)k, .count = counted, .len = (uint32_t)rec[k].len,
                                      .data = rec[k].data};
    }
    char err[256] = "";
    recd_carla_frame f = {.id = 1, .elapsed = 0.0, .width = (uint8_t)w, .count = n, .packets = pk};
    if (carla_writer_state(&wr, &f, err, sizeof err) != 0)
        fail_msg("state: %s", err);
    for (unsigned k = RECD_CARLA_EVENT_ADD; k <= RECD_CARLA_COLLISION; k++) {
        recd_carla_event e = {.kind = (uint8_t)k, .width = (uint8_t)w, .len = (uint32_t)rec[k].len,
                              .data = rec[k].data};
        assert_int_equal(carla_writer_event(&wr, &e, err, sizeof err), 0);
    }
    recd_carla_frame f2 = {.id = 2, .elapsed = 0.5, .width = (uint8_t)w};
    assert_int_equal(carla_writer_state(&wr, &f2, err, sizeof err), 0);
    assert_int_equal(carla_writer_finish(&wr, err, sizeof err), 0);
    carla_writer_free(&wr);
}

static void text_round_trip(const recd_buf *file)
{
    const recd_text_encoding encs[] = {RECD_TEXT_JSONL, RECD_TEXT_CSV};
    for (int e = 0; e < 2; e++) {
        recd_buf text = {0}, back = {0};
        char err[256] = "";
        if (recd_export_text(file->data, file->len, encs[e], recd_buf_sink(&text), err, sizeof err) != 0)
            fail_msg("export (%s): %s", e ? "csv" : "jsonl", err);
        if (recd_import_text(text.data, text.len, RECD_TEXT_NONE, RECD_MSG_FMT_CARLA,
                             recd_buf_sink(&back), NULL, err, sizeof err) != 0)
            fail_msg("import (%s): %s", e ? "csv" : "jsonl", err);
        assert_int_equal(back.len, file->len);
        assert_memory_equal(back.data, file->data, file->len);
        recd_buf_free(&text);
        recd_buf_free(&back);
    }
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_every_kind_both_widths_all_tables(void **state)
{
    (void)state;
    const recd_carla_ids tables[] = {RECD_CARLA_IDS_0_9_13, RECD_CARLA_IDS_0_9_15, RECD_CARLA_IDS_0_9_16};
    for (size_t t = 0; t < 3; t++) {
        for (unsigned w = 4; w <= 8; w += 4) {
            recd_buf file = {0}, rec[RECD_CARLA_KIND_COUNT];
            memset(rec, 0, sizeof rec);
            write_all_kinds(tables[t], w, &file, rec);
            carla_reader r;
            recd_report report = {0};
            assert_int_equal(carla_reader_init(&r, file.data, file.len, &report), 0);
            assert_int_equal(r.ids, tables[t]);
            assert_int_equal(r.width, w);
            assert_true(r.additional_data);
            assert_false(r.interim_ids);
            recd_carla_frame f;
            size_t at;
            assert_int_equal(carla_reader_next(&r, &f, &at), 1);
            assert_int_equal(at, 28 + 6);
            assert_int_equal(f.id, 1);
            assert_true(f.duration == 0.5);
            bool seen[RECD_CARLA_KIND_COUNT] = {false};
            for (size_t i = 0; i < f.count; i++) {
                const recd_carla_packet *p = &f.packets[i];
                assert_false(p->raw);
                if (p->count == 0 && carla_kind(p->kind, w)->has_count)
                    continue; /* the empty packets CARLA writes: checked below */
                seen[p->kind] = true;
                assert_int_equal(p->len, rec[p->kind].len);
                assert_memory_equal(p->data, rec[p->kind].data, p->len);
            }
            for (unsigned k = RECD_CARLA_EVENT_ADD; k < RECD_CARLA_KIND_COUNT; k++)
                if (rec[k].len && !seen[k])
                    fail_msg("ids %s width %u: kind %s missing", recd_carla_ids_name(tables[t]), w,
                             carla_kind(k, w)->title);
            /* frame 2: only the always-written (and additional-data) packets, all empty */
            assert_int_equal(carla_reader_next(&r, &f, &at), 1);
            assert_true(f.duration == -1.0);
            for (size_t i = 0; i < f.count; i++)
                assert_int_equal(f.packets[i].count, 0);
            size_t want = tables[t] == RECD_CARLA_IDS_0_9_13 ? 11 : tables[t] == RECD_CARLA_IDS_0_9_15 ? 15 : 16;
            if (f.count != want)
                fail_msg("ids %s: %zu packets in an empty frame, want %zu", recd_carla_ids_name(tables[t]),
                         f.count, want);
            assert_int_equal(carla_reader_next(&r, &f, &at), 0);
            assert_int_equal(recd_report_errors(&report), 0);
            assert_int_equal(report.count, 0);
            carla_reader_free(&r);
            recd_report_free(&report);
            text_round_trip(&file);
            for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++)
                recd_buf_free(&rec[k]);
            recd_buf_free(&file);
        }
    }
}

/* A state read from JSON holds f64 vectors; an f32 file narrows them. */
static void test_json_state_into_f32_file(void **state)
{
    (void)state;
    const char *text =
        "{\"type\":\"open\",\"format\":\"carla\",\"carla\":{\"map\":\"Town01\",\"date\":5,\"ids\":\"0.9.13\"}}\n"
        "{\"type\":\"state\",\"frame\":1,\"elapsed\":0.0,\"positions\":[{\"id\":7,\"location\":[1.5,2,\"-inf\"],"
        "\"rotation\":[0,0,\"nan\"]}]}\n"
        "{\"type\":\"event\",\"kind\":\"add\",\"id\":7,\"actor_type\":1,\"location\":[1,2,3],\"rotation\":[0,0,0],"
        "\"uid\":3,\"blueprint\":\"vehicle.audi.a2\",\"attributes\":[{\"type\":3,\"id\":\"role_name\",\"value\":\"hero\"}]}\n"
        "{\"type\":\"state\",\"frame\":2,\"elapsed\":0.25}\n";
    recd_buf file = {0};
    char err[256] = "";
    if (recd_import_text((const uint8_t *)text, strlen(text), RECD_TEXT_NONE, RECD_MSG_FMT_NONE,
                         recd_buf_sink(&file), NULL, err, sizeof err) != 0)
        fail_msg("import: %s", err);
    carla_reader r;
    assert_int_equal(carla_reader_init(&r, file.data, file.len, NULL), 0);
    assert_int_equal(r.width, 4);
    assert_int_equal(r.ids, RECD_CARLA_IDS_0_9_13);
    recd_carla_frame f;
    size_t at;
    assert_int_equal(carla_reader_next(&r, &f, &at), 1);
    assert_true(f.duration == 0.25);
    bool found = false;
    for (size_t i = 0; i < f.count; i++) {
        if (f.packets[i].kind != RECD_CARLA_POSITION)
            continue;
        found = true;
        assert_int_equal(f.packets[i].count, 1);
        assert_int_equal(f.packets[i].len, 28);
        assert_true(f32_from_bits(ld_le32(f.packets[i].data + 4)) == 1.5f);
        assert_true(isinf(f32_from_bits(ld_le32(f.packets[i].data + 12))));
        assert_true(isnan(f32_from_bits(ld_le32(f.packets[i].data + 24))));
    }
    assert_true(found);
    carla_reader_free(&r);
    text_round_trip(&file);
    recd_buf_free(&file);
}

/* ue4-dev numbered 21 door, 22 wheels, 23 biker for a while: resolved by record size. */
static void test_ids_21_to_23_by_size(void **state)
{
    (void)state;
    recd_buf file = {0}, rec[RECD_CARLA_KIND_COUNT];
    memset(rec, 0, sizeof rec);
    write_all_kinds(RECD_CARLA_IDS_0_9_16, 4, &file, rec);
    /* renumber the non-empty 21/22/23 packets of frame 1 as the interim table does */
    size_t pos = 34;
    int renamed = 0;
    while (pos + 5 <= file.len) {
        uint8_t id = file.data[pos];
        uint32_t size = ld_le32(file.data + pos + 1);
        if (size > 2 && id >= 21 && id <= 23) {
            file.data[pos] = id == 23 ? 21 : id == 21 ? 22 : 23;
            renamed++;
        }
        pos += 5 + size;
    }
    assert_int_equal(renamed, 3);
    carla_reader r;
    assert_int_equal(carla_reader_init(&r, file.data, file.len, NULL), 0);
    assert_true(r.interim_ids);
    recd_carla_frame f;
    size_t at;
    assert_int_equal(carla_reader_next(&r, &f, &at), 1);
    int kinds = 0;
    for (size_t i = 0; i < f.count; i++) {
        const recd_carla_packet *p = &f.packets[i];
        assert_false(p->raw);
        if (p->count && (p->kind == RECD_CARLA_VEHICLE_DOOR || p->kind == RECD_CARLA_ANIM_WHEELS ||
                         p->kind == RECD_CARLA_ANIM_BIKER)) {
            assert_memory_equal(p->data, rec[p->kind].data, p->len);
            kinds++;
        }
    }
    assert_int_equal(kinds, 3);
    assert_string_equal(carla_reader_ids_label(&r), "ue4-dev-interim");
    carla_reader_free(&r);
    /* info --json and verify name the same table export refuses, not 0.9.16 */
    recd_buf info = {0};
    char ierr[256] = "";
    assert_int_equal(recd_carla_info(file.data, file.len, false, true, &info, ierr, sizeof ierr), 0);
    recd_buf_append(&info, "", 1);
    assert_non_null(strstr((const char *)info.data, "\"ids\":\"ue4-dev-interim\""));
    recd_buf_free(&info);
    recd_format_verdict v;
    memset(&v, 0, sizeof v);
    recd_format_verify(recd_format_find("carla"), file.data, file.len, &v, NULL);
    assert_non_null(strstr(v.summary, "carla ue4-dev-interim f32"));
    /* recd cannot write that table again: export says so instead of changing bytes */
    recd_buf text = {0};
    char err[256] = "";
    assert_int_equal(recd_export_text(file.data, file.len, RECD_TEXT_JSONL, recd_buf_sink(&text), err, sizeof err),
                     -EBADMSG);
    assert_non_null(strstr(err, "ids 21-23"));
    recd_buf_free(&text);
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++)
        recd_buf_free(&rec[k]);
    recd_buf_free(&file);
}

static void test_unknown_ids_kept(void **state)
{
    (void)state;
    const char *text =
        "{\"type\":\"open\",\"format\":\"carla\",\"carla\":{\"map\":\"Town01\"}}\n"
        "{\"type\":\"state\",\"frame\":1,\"elapsed\":0.0,\"raw\":[{\"id\":139,\"data\":\"AQIDBA==\"}]}\n";
    recd_buf file = {0};
    char err[256] = "";
    if (recd_import_text((const uint8_t *)text, strlen(text), RECD_TEXT_NONE, RECD_MSG_FMT_CARLA,
                         recd_buf_sink(&file), NULL, err, sizeof err) != 0)
        fail_msg("import: %s", err);
    /* the user packet sits last before FrameEnd */
    assert_memory_equal(file.data + file.len - 5 - 9, "\x8b\x04\x00\x00\x00\x01\x02\x03\x04", 9);
    carla_reader r;
    assert_int_equal(carla_reader_init(&r, file.data, file.len, NULL), 0);
    recd_carla_frame f;
    size_t at;
    assert_int_equal(carla_reader_next(&r, &f, &at), 1);
    assert_int_equal(r.raw_packets, 1);
    carla_reader_free(&r);
    text_round_trip(&file);
    recd_buf_free(&file);
}

static void test_truncation_reported_with_offset(void **state)
{
    (void)state;
    recd_buf file = {0}, rec[RECD_CARLA_KIND_COUNT];
    memset(rec, 0, sizeof rec);
    write_all_kinds(RECD_CARLA_IDS_0_9_16, 4, &file, rec);
    size_t cut = file.len - 20; /* inside frame 2 */
    recd_format_verdict v;
    recd_report report = {0};
    const recd_format *fmt = recd_format_find("carla");
    assert_int_equal(recd_format_verify(fmt, file.data, cut, &v, &report), -EBADMSG);
    assert_int_equal(v.units, 1);
    assert_true(recd_report_errors(&report) >= 1);
    assert_non_null(strstr(report.items[0].message, "offset"));
    assert_true(report.items[0].offset > 34 && report.items[0].offset < cut);
    recd_report_free(&report);
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++)
        recd_buf_free(&rec[k]);
    recd_buf_free(&file);
}

static void test_held_back_durations(void **state)
{
    (void)state;
    char map[] = "Town01";
    recd_carla_open o = {.map = map, .width = 4, .ids = RECD_CARLA_IDS_0_9_16};
    recd_buf file = {0};
    carla_writer w;
    assert_int_equal(carla_writer_init(&w, &o, recd_buf_sink(&file)), 0);
    const double t[] = {0.0, 0.1, 0.25};
    char err[128];
    for (int i = 0; i < 3; i++) {
        recd_carla_frame f = {.id = (uint64_t)i + 1, .elapsed = t[i], .width = 4};
        assert_int_equal(carla_writer_state(&w, &f, err, sizeof err), 0);
        assert_int_equal(w.frames_written, (uint64_t)i); /* one frame held back */
    }
    assert_int_equal(carla_writer_finish(&w, err, sizeof err), 0);
    carla_writer_free(&w);
    carla_reader r;
    assert_int_equal(carla_reader_init(&r, file.data, file.len, NULL), 0);
    recd_carla_frame f;
    size_t at;
    const double want[] = {0.1 - 0.0, 0.25 - 0.1, -1.0};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(carla_reader_next(&r, &f, &at), 1);
        assert_true(f.duration == want[i]);
    }
    carla_reader_free(&r);
    recd_buf_free(&file);
}

static void test_counts_capped(void **state)
{
    (void)state;
    char map[] = "Town01";
    recd_carla_open o = {.map = map, .width = 4, .ids = RECD_CARLA_IDS_0_9_13};
    recd_buf file = {0}, walkers = {0};
    for (uint32_t i = 0; i < 70000; i++) {
        uint8_t r[8];
        st_le32(r, i);
        st_le32(r + 4, f32_to_bits(1.0f));
        recd_buf_append(&walkers, r, 8);
    }
    carla_writer w;
    assert_int_equal(carla_writer_init(&w, &o, recd_buf_sink(&file)), 0);
    recd_carla_packet p = {.kind = RECD_CARLA_ANIM_WALKER, .count = 70000, .len = (uint32_t)walkers.len,
                           .data = walkers.data};
    recd_carla_frame f = {.id = 1, .width = 4, .count = 1, .packets = &p};
    char err[200] = "";
    assert_int_equal(carla_writer_state(&w, &f, err, sizeof err), 0);
    assert_int_equal(carla_writer_finish(&w, err, sizeof err), 0);
    carla_writer_free(&w);
    carla_reader r;
    assert_int_equal(carla_reader_init(&r, file.data, file.len, NULL), 0);
    recd_carla_frame g;
    size_t at;
    assert_int_equal(carla_reader_next(&r, &g, &at), 1);
    uint32_t counts[2], n = 0;
    for (size_t i = 0; i < g.count; i++)
        if (g.packets[i].kind == RECD_CARLA_ANIM_WALKER)
            counts[n++] = g.packets[i].count;
    assert_int_equal(n, 2);
    assert_int_equal(counts[0], 65535);
    assert_int_equal(counts[1], 70000 - 65535);
    carla_reader_free(&r);
    text_round_trip(&file); /* one list in JSON, two packets again in the file */
    /* positions are one packet per frame: more than 65535 is refused */
    recd_buf_reset(&file);
    assert_int_equal(carla_writer_init(&w, &o, recd_buf_sink(&file)), 0);
    p.kind = RECD_CARLA_POSITION;
    assert_int_equal(carla_writer_state(&w, &f, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "65535"));
    carla_writer_free(&w);
    recd_buf_free(&walkers);
    recd_buf_free(&file);
}

/* The last 4 KiB cut at every offset: repair keeps the whole frames, ending with -1, and the
 * recovery plan agrees. */
static void test_cuts_repaired(void **state)
{
    (void)state;
    recd_synth_params p = {recd_synth_format_find("carla"), RECD_SYNTH_SCENARIO_TRAFFIC, 3000, 9};
    recd_buf file = {0};
    uint64_t frames = 0;
    assert_int_equal(recd_synth_write_carla(&p, 2, recd_buf_sink(&file), &frames), 0);
    assert_true(file.len > 4096);
    const recd_format *fmt = recd_format_find("carla");
    uint8_t *copy = malloc(file.len);
    assert_non_null(copy);
    uint64_t last_frames = 0;
    for (size_t cut = file.len - 4096; cut <= file.len; cut++) {
        recd_repair_result res = {0};
        int rc = recd_format_repair(fmt, file.data, cut, &res);
        if (rc != 0)
            fail_msg("cut %zu: %s", cut, res.detail);
        assert_true(res.kept_units >= last_frames);
        last_frames = res.kept_units;
        recd_format_verdict v;
        assert_int_equal(recd_format_verify(fmt, res.out.data, res.out.len, &v, NULL), 0);
        assert_int_equal(v.units, res.kept_units);
        memcpy(copy, file.data, cut);
        recd_recover_plan plan;
        assert_int_equal(recd_format_recover(copy, cut, &plan), 1);
        assert_int_equal(plan.action, RECD_RECOVER_FINALIZED);
        assert_int_equal(plan.keep, res.out.len);
        assert_memory_equal(copy, res.out.data, plan.header_len ? plan.header_len : 0);
        recd_buf_free(&res.out);
    }
    assert_int_equal(last_frames, frames);
    free(copy);
    recd_buf_free(&file);
}

static void test_not_carla(void **state)
{
    (void)state;
    static const uint8_t junk[] = "\x01\x00\x0e\x00CARLA_RECORDEX";
    recd_buf out = {0};
    char err[128] = "";
    assert_int_equal(recd_carla_info(junk, sizeof junk - 1, false, false, &out, err, sizeof err), -EBADMSG);
    assert_int_equal(out.len, 29);
    assert_memory_equal(out.data, "File is not a CARLA recorder\n", 29);
    recd_buf_free(&out);
    assert_int_equal(recd_carla_info(junk, sizeof junk - 1, false, true, &out, err, sizeof err), -EBADMSG);
    recd_buf_free(&out);
}

/* Binary frames: a frame and an event survive encode/decode; short, overlong and misfit
 * payloads are refused. */
static void test_wire_payloads(void **state)
{
    (void)state;
    recd_buf pos = {0}, out = {0};
    make_record(carla_kind(RECD_CARLA_POSITION, 4)->fields, 4, 3, &pos);
    recd_carla_packet pk[2] = {
        {.kind = RECD_CARLA_POSITION, .count = 1, .len = (uint32_t)pos.len, .data = pos.data},
        {.kind = 139, .raw = true, .len = 3, .data = (const uint8_t *)"abc"},
    };
    recd_carla_frame f = {.id = 9, .elapsed = 1.5, .has_duration = true, .duration = 0.25, .width = 4,
                          .count = 2, .packets = pk};
    assert_int_equal(carla_wire_state_write(&f, &out), 0);
    char why[200];
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
    assert_int_equal(carla_wire_state_read(out.data, out.len, &m, why, sizeof why), 0);
    const recd_carla_frame *g = m.carla_state;
    assert_int_equal(g->id, 9);
    assert_true(g->elapsed == 1.5 && g->has_duration && g->duration == 0.25);
    assert_int_equal(g->count, 2);
    assert_memory_equal(g->packets[0].data, pos.data, pos.len);
    assert_true(g->packets[1].raw);
    assert_memory_equal(g->packets[1].data, "abc", 3);
    recd_msg_free(&m);
    for (size_t cut = 0; cut < out.len; cut++) {
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
        assert_int_equal(carla_wire_state_read(out.data, cut, &m, why, sizeof why), -EBADMSG);
        recd_msg_free(&m);
    }
    recd_buf_append(&out, "x", 1);
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
    assert_int_equal(carla_wire_state_read(out.data, out.len, &m, why, sizeof why), -EBADMSG);
    recd_msg_free(&m);
    /* a Position packet claiming 2 records in the bytes of 1 */
    out.len--;
    st_le32(out.data + 28 + 2, 2);
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
    assert_int_equal(carla_wire_state_read(out.data, out.len, &m, why, sizeof why), -EBADMSG);
    assert_non_null(strstr(why, "whole records"));
    recd_msg_free(&m);

    recd_buf ev = {0};
    recd_buf_reset(&out);
    make_record(carla_kind(RECD_CARLA_COLLISION, 8)->fields, 8, 5, &ev);
    recd_carla_event e = {.kind = RECD_CARLA_COLLISION, .width = 8, .len = (uint32_t)ev.len, .data = ev.data};
    assert_int_equal(carla_wire_event_write(&e, &out), 0);
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_CARLA);
    assert_int_equal(carla_wire_event_read(out.data, out.len, &m, why, sizeof why), 0);
    assert_int_equal(m.carla_event->len, 14);
    recd_msg_free(&m);
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_CARLA);
    assert_int_equal(carla_wire_event_read(out.data, out.len - 1, &m, why, sizeof why), -EBADMSG);
    recd_msg_free(&m);
    out.data[0] = RECD_CARLA_POSITION; /* not an event kind */
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_CARLA);
    assert_int_equal(carla_wire_event_read(out.data, out.len, &m, why, sizeof why), -EBADMSG);
    recd_msg_free(&m);
    recd_buf_free(&ev);
    recd_buf_free(&pos);
    recd_buf_free(&out);
}

/* A state from a binary frame is read in place: its packets point into the frame, the decoder
 * hands it over as not movable, and a copy owns its bytes. */
typedef struct inplace_sink {
    const uint8_t *fed;
    size_t fed_len;
    int states;
    recd_msg kept;
} inplace_sink;

static int inplace_on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                          size_t errlen)
{
    (void)err;
    (void)errlen;
    inplace_sink *k = ctx;
    if (m->type != RECD_MSG_STATE) {
        assert_ptr_equal(meta->movable, m);
        return 0;
    }
    assert_null(meta->movable);
    const recd_carla_frame *f = m->carla_state;
    for (size_t i = 0; i < f->count; i++)
        assert_true(f->packets[i].data >= k->fed && f->packets[i].data < k->fed + k->fed_len);
    k->states++;
    return recd_msg_copy(&k->kept, m);
}

static void test_wire_state_in_place(void **state)
{
    (void)state;
    char map[] = "Town10HD";
    recd_carla_open o = {.date = 1, .map = map, .width = 4, .ids = RECD_CARLA_IDS_0_9_16};
    recd_buf pos = {0}, stream = {0};
    make_record(carla_kind(RECD_CARLA_POSITION, 4)->fields, 4, 3, &pos);
    recd_carla_packet pk = {.kind = RECD_CARLA_POSITION, .count = 1, .len = (uint32_t)pos.len,
                            .data = pos.data};
    recd_carla_frame f = {.id = 1, .elapsed = 0.05, .width = 4, .count = 1, .packets = &pk};
    recd_msg open, st;
    recd_msg_init(&open, RECD_MSG_OPEN, RECD_MSG_FMT_CARLA);
    strcpy(open.session, "ep-1");
    open.open.carla = &o;
    recd_msg_init(&st, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
    strcpy(st.session, "ep-1");
    st.carla_state = &f;
    assert_int_equal(recd_wire_encode(&open, RECD_WIRE_BINARY, 0, &stream), 0);
    assert_int_equal(recd_wire_encode(&st, RECD_WIRE_BINARY, 0, &stream), 0);
    inplace_sink k = {.fed = stream.data, .fed_len = stream.len};
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_BINARY, .on_msg = inplace_on_msg, .ctx = &k};
    recd_wire_decoder *d;
    assert_int_equal(recd_wire_decoder_new(&d, &cfg), 0);
    char err[256] = "";
    assert_int_equal(recd_wire_decoder_feed(d, stream.data, stream.len, err, sizeof err), 0);
    recd_wire_decoder_free(d);
    assert_int_equal(k.states, 1);
    memset(stream.data, 0xAA, stream.len); /* the frame's bytes are gone: the copy keeps its own */
    const recd_carla_frame *g = k.kept.carla_state;
    assert_int_equal(g->count, 1);
    assert_int_equal(g->packets[0].len, pos.len);
    assert_memory_equal(g->packets[0].data, pos.data, pos.len);
    recd_msg_free(&k.kept);
    recd_buf_free(&pos);
    recd_buf_free(&stream);
}

/* Room handed out by a buffer, for the writer's in-place frames. */
static uint8_t *buf_reserve(void *ctx, size_t len)
{
    recd_buf *b = ctx;
    if (recd_buf_reserve(b, len) < 0)
        return NULL;
    uint8_t *at = b->data + b->len;
    b->len += len;
    return at;
}

/* The same frames written through sink.write and in place (a reserve sink): the
 * same bytes, also for kinds split into packets of 65535 records, fixed-size (walkers) and not
 * (EventAdd, whose records are walked), in either event width. */
static void test_reserve_matches_sink(void **state)
{
    (void)state;
    char map[] = "Town05";
    for (unsigned w = 4; w <= 8; w += 4) {
        recd_carla_open o = {.date = 7, .map = map, .width = (uint8_t)w, .ids = RECD_CARLA_IDS_0_9_16,
                             .additional_data = true};
        recd_buf walkers = {0}, add = {0}, pos = {0}, files[2] = {{0}, {0}};
        make_record(carla_kind(RECD_CARLA_POSITION, 4)->fields, 4, 1, &pos); /* the width's mark */
        for (uint32_t i = 0; i < 70000; i++) {
            uint8_t r[8];
            st_le32(r, i);
            st_le32(r + 4, f32_to_bits(1.0f));
            recd_buf_append(&walkers, r, 8);
        }
        for (int pass = 0; pass < 2; pass++) {
            recd_carla_writer *wr;
            recd_reserve_sink rs = {recd_buf_sink(&files[pass]).write, buf_reserve, &files[pass]};
            recd_sink sink = pass ? recd_reserve_sink_as_sink(&rs) : recd_buf_sink(&files[pass]);
            assert_int_equal(recd_carla_writer_new(&wr, &o, sink), 0);
            recd_carla_packet p[3] = {
                {.kind = RECD_CARLA_ANIM_WALKER, .count = 70000, .len = (uint32_t)walkers.len,
                 .data = walkers.data},
                {.kind = 200, .raw = true, .len = 3, .data = (const uint8_t *)"xyz"},
                {.kind = RECD_CARLA_POSITION, .count = 1, .len = (uint32_t)pos.len, .data = pos.data},
            };
            recd_carla_frame f = {.id = 1, .elapsed = 0.0, .width = 4, .count = 3, .packets = p};
            char err[200] = "";
            assert_int_equal(recd_carla_writer_state(wr, &f, err, sizeof err), 0);
            for (unsigned i = 0; i < 70000; i++) {
                unsigned ew = i % 2 ? 8 : 4; /* half of them converted to the file's width */
                recd_buf_reset(&add);
                make_record(carla_kind(RECD_CARLA_EVENT_ADD, ew)->fields, ew, i, &add);
                recd_carla_event e = {.kind = RECD_CARLA_EVENT_ADD, .width = (uint8_t)ew,
                                      .len = (uint32_t)add.len, .data = add.data};
                assert_int_equal(recd_carla_writer_event(wr, &e, err, sizeof err), 0);
            }
            recd_carla_frame f2 = {.id = 2, .elapsed = 0.05, .width = (uint8_t)w};
            assert_int_equal(recd_carla_writer_state(wr, &f2, err, sizeof err), 0);
            assert_int_equal(recd_carla_writer_finish(wr, err, sizeof err), 0);
            recd_carla_writer_free(wr);
        }
        assert_int_equal(files[1].len, files[0].len);
        assert_memory_equal(files[1].data, files[0].data, files[0].len);
        carla_reader r;
        assert_int_equal(carla_reader_init(&r, files[1].data, files[1].len, NULL), 0);
        recd_carla_frame g;
        size_t at;
        assert_int_equal(carla_reader_next(&r, &g, &at), 1);
        uint32_t adds = 0, packets = 0;
        for (size_t i = 0; i < g.count; i++)
            if (g.packets[i].kind == RECD_CARLA_EVENT_ADD) {
                adds += g.packets[i].count;
                packets++;
            }
        assert_int_equal(adds, 70000);
        assert_int_equal(packets, 2);
        carla_reader_free(&r);
        recd_buf_free(&walkers);
        recd_buf_free(&add);
        recd_buf_free(&pos);
        recd_buf_free(&files[0]);
        recd_buf_free(&files[1]);
    }
}

/* PlatformTime marks a log as recorded with additional data, so a session without it may not
 * write one: refused with a reason, while the same state with additional_data gives a log that
 * exports again. */
static void test_platform_time_needs_additional_data(void **state)
{
    (void)state;
    static const char *const opens[] = {
        "{\"type\":\"open\",\"format\":\"carla\",\"carla\":{\"map\":\"Town01\"}}\n",
        "{\"type\":\"open\",\"format\":\"carla\",\"carla\":{\"map\":\"Town01\","
        "\"additional_data\":true}}\n"};
    const char *rest = "{\"type\":\"state\",\"frame\":1,\"elapsed\":0,\"platform_time\":0.5}\n"
                       "{\"type\":\"state\",\"frame\":2,\"elapsed\":0.05,\"platform_time\":0.6}\n"
                       "{\"type\":\"close\"}\n";
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", opens[i], rest);
        recd_buf file = {0}, back = {0};
        char err[256] = "";
        int rc = recd_import_text((const uint8_t *)text, strlen(text), RECD_TEXT_NONE,
                                  RECD_MSG_FMT_CARLA, recd_buf_sink(&file), NULL, err, sizeof err);
        if (i == 0) {
            assert_int_equal(rc, -EBADMSG);
            assert_non_null(strstr(err, "additional_data"));
        } else {
            if (rc != 0)
                fail_msg("import: %s", err);
            if (recd_export_text(file.data, file.len, RECD_TEXT_JSONL, recd_buf_sink(&back), err,
                                 sizeof err) != 0)
                fail_msg("export: %s", err);
        }
        recd_buf_free(&file);
        recd_buf_free(&back);
    }
}

/* The fixed-size path (one multiplication per packet) agrees with the walk over every record, for
 * every kind in both widths, and still refuses a byte too few or too many. */
static void test_fixed_size_matches_walk(void **state)
{
    (void)state;
    static const uint8_t zeros[512]; /* lists and strings of length 0 */
    unsigned fixed_kinds = 0;
    for (unsigned width = 4; width <= 8; width += 4)
        for (unsigned kind = 0; kind < RECD_CARLA_KIND_COUNT; kind++) {
            const carla_kind_info *ki = carla_kind(kind, width);
            if (!ki || !ki->fields)
                continue;
            size_t fixed = carla_fixed_size(ki->fields, width);
            size_t walked = carla_record_size(ki->fields, width, zeros, sizeof zeros);
            if (fixed == 0)
                continue; /* has a string or a list */
            fixed_kinds++;
            assert_int_equal(fixed, walked);
            uint8_t buf[3 * 512];
            memset(buf, 0, sizeof buf);
            assert_true(carla_records_fill(ki->fields, width, 3, buf, 3 * fixed));
            assert_false(carla_records_fill(ki->fields, width, 3, buf, 3 * fixed - 1));
            assert_false(carla_records_fill(ki->fields, width, 3, buf, 3 * fixed + 1));
            assert_false(carla_records_fill(ki->fields, width, 2, buf, 3 * fixed));
            assert_true(carla_records_fill(ki->fields, width, 0, buf, 0));
        }
    assert_true(fixed_kinds >= 10); /* positions, animations, lights, kinematics, ... both widths */
    /* EventAdd holds a blueprint string and an attribute list: sized by the walk */
    assert_int_equal(carla_fixed_size(carla_kind(RECD_CARLA_EVENT_ADD, 4)->fields, 4), 0);
}

/* The hand-written table of fixed record sizes says what the layouts give: each kind with a count
 * and a layout of scalars only has its record size there, every other kind 0, in both widths. */
static void test_fixed_size_table_matches_schema(void **state)
{
    (void)state;
    for (unsigned width = 4; width <= 8; width += 4) {
        const uint16_t *table = carla_kind_fixed_sizes(width);
        for (unsigned kind = 0; kind < RECD_CARLA_KIND_COUNT; kind++) {
            const carla_kind_info *ki = carla_kind(kind, width);
            size_t want = ki->has_count && ki->fields ? carla_fixed_size(ki->fields, width) : 0;
            assert_int_equal(table[kind], want);
        }
    }
    assert_int_equal(carla_kind_fixed_sizes(4)[RECD_CARLA_POSITION], 28);
    assert_int_equal(carla_kind_fixed_sizes(8)[RECD_CARLA_POSITION], 52);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_both_widths_all_tables),
        cmocka_unit_test(test_json_state_into_f32_file),
        cmocka_unit_test(test_ids_21_to_23_by_size),
        cmocka_unit_test(test_unknown_ids_kept),
        cmocka_unit_test(test_truncation_reported_with_offset),
        cmocka_unit_test(test_held_back_durations),
        cmocka_unit_test(test_counts_capped),
        cmocka_unit_test(test_cuts_repaired),
        cmocka_unit_test(test_not_carla),
        cmocka_unit_test(test_wire_payloads),
        cmocka_unit_test(test_platform_time_needs_additional_data),
        cmocka_unit_test(test_fixed_size_matches_walk),
        cmocka_unit_test(test_fixed_size_table_matches_schema),
        cmocka_unit_test(test_wire_state_in_place),
        cmocka_unit_test(test_reserve_matches_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
