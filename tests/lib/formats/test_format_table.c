/* SPDX-License-Identifier: MIT */
/* The format table: every entry is complete, names are unique, lookups work, sniffing recognises a
 * generated sample of each format and rejects garbage, and the hooks agree with each other
 * (verify, count, export/import round trip, repair and recovery of a cut file). */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "formats/format_import.h"
#include "recd/format.h"
#include "recd/synth.h"

/* A few seconds of the format's synthetic recording; false when the generator lacks the format. */
static bool generate(const recd_format *f, recd_buf *out, uint64_t *units)
{
    if (!recd_synth_has_format(f)) /* its descriptor has no synth hook */
        return false;
    recd_synth_params p = {f, RECD_SYNTH_SCENARIO_MIXED, 5000, 7};
    memset(out, 0, sizeof *out);
    assert_int_equal(recd_synth_write(&p, recd_buf_sink(out), units), 0);
    return true;
}

static void test_entries_complete(void **state)
{
    (void)state;
    assert_true(recd_format_count() >= 3);
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        assert_non_null(f);
        assert_true(f->name && f->name[0]);
        assert_true(f->extension && f->extension[0] && f->extension[0] != '.');
        assert_true(f->description && f->description[0]);
        assert_true(f->unit && f->unit[0]);
        assert_non_null(f->sniff);
        assert_non_null(f->verify);
        if (!recd_format_is_recorded(f)) { /* a foreign replay: read, never written */
            assert_non_null(f->export_events);
            assert_non_null(f->describe);
            assert_null(f->export_msgs);
            assert_null(f->import_text);
            assert_null(f->recover);
            continue;
        }
        assert_non_null(f->repair);
        assert_non_null(f->recover);
        assert_non_null(f->count_units);
        assert_non_null(f->export_msgs);
        assert_non_null(f->import_text);
    }
    assert_null(recd_format_at(recd_format_count()));
}

/* The message model names formats through the table (session-only entries included): every entry
 * and every message format must agree with it. */
static void test_message_model_agrees(void **state)
{
    (void)state;
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        if (!recd_format_is_recorded(f))
            continue;
        assert_string_equal(recd_msg_format_name(f->msg_format), f->name);
        assert_string_equal(recd_msg_format_ext(f->msg_format), f->extension);
        assert_int_equal(recd_msg_format_parse(f->name), f->msg_format);
    }
    for (recd_msg_format mf = RECD_MSG_FMT_SAMP_ONFOOT; recd_msg_format_name(mf)[0]; mf++) {
        if (mf == RECD_MSG_FMT_SAMP_PLAYER) /* wire only: its files are on-foot/vehicle .rec parts */
            continue;
        const recd_format *f = recd_format_of_msg(mf);
        assert_non_null(f);
        assert_string_equal(f->name, recd_msg_format_name(mf));
    }
    assert_string_equal(recd_msg_format_name(RECD_MSG_FMT_NONE), "");
    assert_int_equal(recd_msg_format_parse("carla"), RECD_MSG_FMT_CARLA);
    assert_int_equal(recd_msg_format_parse("samp-player"), RECD_MSG_FMT_SAMP_PLAYER);
    assert_null(recd_format_of_msg(RECD_MSG_FMT_SAMP_PLAYER));
    assert_int_equal(recd_msg_format_parse("unreal"), RECD_MSG_FMT_NONE);
    assert_int_equal(recd_msg_format_parse(NULL), RECD_MSG_FMT_NONE);
}

/* An importer lists the message formats it writes, which the importer engine checks states against
 * without the table: exactly the entries that share it. */
static void test_importer_formats_agree(void **state)
{
    (void)state;
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        if (!f->importer)
            continue;
        for (size_t k = 0; k < recd_format_count(); k++) {
            const recd_format *g = recd_format_at(k);
            assert_int_equal(recd_format__importer_writes(f->importer, g->msg_format),
                             f->importer == g->importer);
        }
        assert_false(recd_format__importer_writes(f->importer, RECD_MSG_FMT_NONE));
    }
}

static void test_names_unique(void **state)
{
    (void)state;
    for (size_t i = 0; i < recd_format_count(); i++)
        for (size_t k = i + 1; k < recd_format_count(); k++)
            assert_string_not_equal(recd_format_at(i)->name, recd_format_at(k)->name);
}

static void test_lookups(void **state)
{
    (void)state;
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        assert_ptr_equal(recd_format_find(f->name), f);
        if (recd_format_is_recorded(f))
            assert_ptr_equal(recd_format_of_msg(f->msg_format), f);
    }
    assert_string_equal(recd_format_find("recap")->extension, "recap");
    assert_string_equal(recd_format_find("samp-onfoot")->extension, "rec");
    assert_string_equal(recd_format_find("carla")->extension, "log");
    assert_null(recd_format_find("unreal"));
    assert_null(recd_format_find(NULL));
    assert_null(recd_format_of_msg(RECD_MSG_FMT_NONE));
    /* Both SA-MP formats share .rec; Recap has its own. */
    assert_non_null(recd_format_by_extension("rec", 0));
    assert_non_null(recd_format_by_extension("rec", 1));
    assert_null(recd_format_by_extension("rec", 2));
    assert_ptr_equal(recd_format_by_extension("recap", 0), recd_format_find("recap"));
    assert_null(recd_format_by_extension("recap", 1));
    assert_null(recd_format_by_extension("txt", 0));
}

static void test_sniff_generated(void **state)
{
    (void)state;
    size_t generated = 0, recorded = 0;
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        recd_buf b;
        uint64_t units = 0;
        recorded += recd_format_is_recorded(f);
        if (!generate(f, &b, &units))
            continue;
        generated++;
        recd_sniff_result r;
        assert_ptr_equal(recd_format_sniff(b.data, b.len, &r), f);
        assert_ptr_equal(r.format, f);
        assert_int_equal(r.level, RECD_SNIFF_SIGNATURE);
        assert_true(r.standard);
        assert_true(r.kind[0] && r.description[0]);

        recd_format_verdict v;
        recd_report report = {0};
        assert_int_equal(recd_format_verify(f, b.data, b.len, &v, &report), 0);
        assert_true(v.valid);
        assert_int_equal(v.units, units);
        assert_true(v.summary[0]);
        assert_int_equal(recd_report_errors(&report), 0);
        recd_report_free(&report);
        assert_int_equal(recd_format_count_units(f, b.data, b.len), units);
        recd_buf_free(&b);
    }
    assert_int_equal(generated, recorded); /* foreign replays have their own writers in tests */
}

static void test_sniff_rejects_garbage(void **state)
{
    (void)state;
    static const char text[] = "hello, world\nthis is, plainly, text\n";
    uint8_t noise[1000], zeros[1000];
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < sizeof noise; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        noise[i] = (uint8_t)x;
    }
    noise[2] = 0; /* no accidental UTF-8-only text */
    memset(zeros, 0, sizeof zeros);
    recd_sniff_result r;
    assert_null(recd_format_sniff(noise, sizeof noise, &r));
    assert_int_equal(r.level, RECD_SNIFF_NONE);
    assert_null(recd_format_sniff(zeros, sizeof zeros, &r));
    assert_null(recd_format_sniff((const uint8_t *)text, sizeof text - 1, &r));
    assert_null(recd_format_sniff((const uint8_t *)"", 0, &r));
    assert_null(recd_format_sniff((const uint8_t *)"RCA", 3, NULL));
}

static void test_export_import_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        recd_buf b, text = {0}, back = {0};
        if (!generate(f, &b, NULL))
            continue;
        char err[256] = "";
        assert_int_equal(recd_export_text(b.data, b.len, RECD_TEXT_JSONL, recd_buf_sink(&text), err,
                                          sizeof err), 0);
        recd_import_stats stats;
        assert_int_equal(recd_format_import(f, text.data, text.len, RECD_TEXT_NONE,
                                            recd_buf_sink(&back), &stats, err, sizeof err), 0);
        assert_int_equal(stats.format, f->msg_format);
        assert_int_equal(back.len, b.len);
        assert_memory_equal(back.data, b.data, b.len);
        /* Another format's import refuses the text. */
        for (size_t k = 0; k < recd_format_count(); k++) {
            const recd_format *g = recd_format_at(k);
            if (g == f || !recd_format_is_recorded(g))
                continue;
            recd_buf other = {0};
            assert_int_equal(recd_format_import(g, text.data, text.len, RECD_TEXT_NONE,
                                                recd_buf_sink(&other), NULL, err, sizeof err),
                             -EBADMSG);
            recd_buf_free(&other);
        }
        recd_buf_free(&b);
        recd_buf_free(&text);
        recd_buf_free(&back);
    }
}

static void test_repair_and_recover_cut_file(void **state)
{
    (void)state;
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        recd_buf b;
        uint64_t units = 0;
        if (!generate(f, &b, &units))
            continue;
        size_t cut = b.len - 3; /* inside the last block / gzip member */
        recd_repair_result r = {0};
        assert_int_equal(recd_format_repair(f, b.data, cut, &r), 0);
        assert_true(r.changed);
        assert_true(r.kept_units < units); /* 0 when the whole file was one gzip member */
        assert_string_equal(r.unit, f->unit);
        recd_format_verdict v;
        assert_int_equal(recd_format_verify(f, r.out.data, r.out.len, &v, NULL), 0);
        assert_int_equal(v.units, r.kept_units);

        recd_recover_plan plan;
        memset(&plan, 0, sizeof plan);
        assert_int_equal(recd_format_recover(b.data, cut, &plan), 1);
        if (r.kept_units == 0) { /* a header alone is not worth keeping */
            assert_int_equal(plan.action, RECD_RECOVER_REMOVED);
        } else {
            assert_int_equal(plan.action, RECD_RECOVER_FINALIZED);
            assert_int_equal(plan.units, r.kept_units);
            assert_int_equal(plan.keep, r.kept_bytes);
        }
        recd_buf_free(&r.out);
        recd_buf_free(&b);
    }
    recd_recover_plan plan;
    uint8_t junk[16] = {0x42};
    assert_int_equal(recd_format_recover(junk, sizeof junk, &plan), 0);
}

static void test_end_part(void **state)
{
    (void)state;
    const recd_format *recap = recd_format_find("recap");
    recd_buf b;
    uint64_t ticks = 0;
    assert_true(generate(recap, &b, &ticks));
    recd_recap_header h;
    int hlen = recd_recap_header_decode(b.data, b.len, &h, NULL);
    assert_true(hlen > 0);
    assert_int_equal(recd_format_end_part(recap, b.data, (size_t)hlen, 5, 1234), 0);
    assert_int_equal(recd_recap_header_decode(b.data, b.len, &h, NULL), hlen);
    assert_int_equal(h.frame_count, 5);
    assert_int_equal(h.end_ms, 1234);
    /* A .rec header holds no totals: nothing to patch. */
    assert_int_equal(recd_format_end_part(recd_format_find("samp-onfoot"), b.data, 8, 5, 0), 0);
    recd_buf_free(&b);
}

/* The importer hands each message to its session format's importer; the order rules and the
 * messages that do not fit the session stay the same for every format. */
static void test_importer_dispatch(void **state)
{
    (void)state;
    recd_buf out = {0};
    recd_importer im;
    char err[256] = "";
    recd_importer_init(&im, RECD_MSG_FMT_NONE, recd_buf_sink(&out));
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), 0);

    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "state: a samp-vehicle block in a samp-onfoot session");
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "state: a recap state in a samp-onfoot session");
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "event: .rec sessions have no events");
    recd_msg_init(&m, RECD_MSG_FLUSH, RECD_MSG_FMT_SAMP_ONFOOT);
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), 0); /* .rec ignores flush */
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    m.onfoot.rotation.w = 1;
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), 0);
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_ONFOOT);
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), 0);
    assert_int_equal(recd_importer_finish(&im, err, sizeof err), 0);
    assert_int_equal(out.len, RECD_REC_HEADER_SIZE + RECD_REC_ONFOOT_BLOCK_SIZE);
    recd_importer_free(&im);

    /* A recap open without its header is refused by the recap importer. */
    recd_buf_reset(&out);
    recd_importer_init(&im, RECD_MSG_FMT_NONE, recd_buf_sink(&out));
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    assert_int_equal(recd_importer_msg(&im, &m, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "open: missing key \"recap\" (format recap)");
    recd_importer_free(&im);
    recd_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_complete),
        cmocka_unit_test(test_message_model_agrees),
        cmocka_unit_test(test_importer_formats_agree),
        cmocka_unit_test(test_names_unique),
        cmocka_unit_test(test_lookups),
        cmocka_unit_test(test_sniff_generated),
        cmocka_unit_test(test_sniff_rejects_garbage),
        cmocka_unit_test(test_export_import_round_trip),
        cmocka_unit_test(test_repair_and_recover_cut_file),
        cmocka_unit_test(test_end_part),
        cmocka_unit_test(test_importer_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
