/* SPDX-License-Identifier: MIT */
/* Recap header: round trip, patch offsets, extension records (known, unknown, skipped by
 * readers), string truncation, and rejection of bad magic / version / UTF-8 / lengths. */
#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "recd/recap.h"
#include "testutil.h"

static void full_header(recd_recap_header *h)
{
    recd_recap_header_init(h);
    h->name = recd_recap_str("match-42-Notch");
    h->player_name = recd_recap_str("Notch");
    h->player_uuid = recd_recap_str("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    h->world_name = recd_recap_str("w\xC3\xB6rld"); /* "wörld" */
    h->origin[0] = -1.5, h->origin[1] = 70.25, h->origin[2] = 1e10;
    h->start_ms = 1767225600123;
    h->end_ms = 1767225660123;
    h->frame_count = 1200;
    h->weather = -7;
    h->time_of_day = 18000;
    h->skin_texture = recd_recap_str("dGV4dHVyZQ==");
    h->skin_signature = recd_recap_str("c2lnbmF0dXJl");
    h->has_encoder_params = true;
    h->keyframe_interval = 200;
    h->gzip_level = 6;
    h->member_limit = 65536;
}

static bool blob_is(recd_recap_blob b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

static void test_round_trip(void **st)
{
    (void)st;
    recd_recap_header h, g;
    full_header(&h);
    recd_buf b = {0};
    assert_int_equal(recd_recap_header_encode(&h, &b), 0);
    assert_memory_equal(b.data, "RCAP\x04", 5);
    assert_int_equal(ld_be16(b.data + 5), b.len - 7);
    assert_int_equal(recd_recap_header_decode(b.data, b.len, &g, NULL), (int)b.len);
    assert_int_equal(g.version, 4);
    assert_true(blob_is(g.name, "match-42-Notch"));
    assert_true(blob_is(g.player_name, "Notch"));
    assert_true(blob_is(g.player_uuid, "069a79f4-44e9-4726-a5be-fca90e38aaf5"));
    assert_true(blob_is(g.world_name, "w\xC3\xB6rld"));
    assert_true(g.origin[0] == -1.5 && g.origin[1] == 70.25 && g.origin[2] == 1e10);
    assert_int_equal(g.start_ms, h.start_ms);
    assert_int_equal(g.end_ms, h.end_ms);
    assert_int_equal(g.frame_count, 1200);
    assert_int_equal(g.weather, -7);
    assert_int_equal(g.time_of_day, 18000);
    assert_true(blob_is(g.skin_texture, "dGV4dHVyZQ=="));
    assert_true(blob_is(g.skin_signature, "c2lnbmF0dXJl"));
    assert_true(g.has_encoder_params);
    assert_int_equal(g.keyframe_interval, 200);
    assert_int_equal(g.gzip_level, 6);
    assert_int_equal(g.member_limit, 65536);
    assert_int_equal(g.ext_unknown.len, 0);
    recd_buf c = {0};
    assert_int_equal(recd_recap_header_encode(&g, &c), 0);
    assert_int_equal(b.len, c.len);
    assert_memory_equal(b.data, c.data, b.len);
    recd_buf_free(&b);
    recd_buf_free(&c);
}

static void test_version1_layout(void **st)
{
    (void)st;
    recd_recap_header h, g;
    full_header(&h);
    h.version = 1;
    recd_buf b = {0}, v4 = {0};
    assert_int_equal(recd_recap_header_encode(&h, &b), 0);
    h.version = 4;
    assert_int_equal(recd_recap_header_encode(&h, &v4), 0);
    assert_int_equal(v4.len - b.len, 12); /* no weather, no time of day */
    assert_int_equal(recd_recap_header_decode(b.data, b.len, &g, NULL), (int)b.len);
    assert_int_equal(g.version, 1);
    assert_int_equal(g.weather, 0);
    assert_int_equal(g.frame_count, 1200);
    assert_true(blob_is(g.skin_signature, "c2lnbmF0dXJl"));
    recd_buf_free(&b);
    recd_buf_free(&v4);
}

static void test_patch_offsets(void **st)
{
    (void)st;
    recd_recap_header h, g;
    full_header(&h);
    recd_buf b = {0};
    assert_int_equal(recd_recap_header_encode(&h, &b), 0);
    uint64_t end_off, fc_off;
    recd_recap_header_patch_offsets(&h, &end_off, &fc_off);
    size_t strings = 4 + strlen("match-42-Notch") + 5 + 36 + 6;
    assert_int_equal(end_off, 7 + strings + 32);
    assert_int_equal(fc_off, end_off + 8);
    assert_int_equal(ld_be64(b.data + end_off), (uint64_t)h.end_ms);
    assert_int_equal(ld_be32(b.data + fc_off), 1200);
    /* pwrite-style patch at the offsets, and the buffer helper, give the same result. */
    recd_buf c = {0};
    assert_int_equal(recd_buf_append(&c, b.data, b.len), 0);
    st_be64(b.data + end_off, 42);
    st_be32(b.data + fc_off, 7);
    assert_int_equal(recd_recap_header_patch(c.data, c.len, 7, 42), 0);
    assert_memory_equal(b.data, c.data, b.len);
    assert_int_equal(recd_recap_header_decode(c.data, c.len, &g, NULL), (int)c.len);
    assert_int_equal(g.frame_count, 7);
    assert_int_equal(g.end_ms, 42);
    assert_int_equal(g.start_ms, h.start_ms);
    assert_int_equal(g.weather, -7);
    recd_buf_free(&b);
    recd_buf_free(&c);
}

static void test_unknown_extensions_skipped_and_kept(void **st)
{
    (void)st;
    recd_recap_header h, g;
    full_header(&h);
    static const uint8_t unknown[] = {5, 0, 3, 1, 2, 3, 200, 0, 0, 255, 0, 1, 9};
    h.ext_unknown.data = unknown;
    h.ext_unknown.len = sizeof(unknown);
    recd_buf b = {0};
    assert_int_equal(recd_recap_header_encode(&h, &b), 0);
    assert_int_equal(recd_buf_append(&b, "\x1f\x8b", 2), 0); /* frame data follows */
    int hs = recd_recap_header_decode(b.data, b.len, &g, NULL);
    assert_int_equal(hs, (int)b.len - 2);
    assert_int_equal(g.ext_unknown.len, sizeof(unknown));
    assert_memory_equal(g.ext_unknown.data, unknown, sizeof(unknown));
    assert_int_equal(g.keyframe_interval, 200);
    recd_buf c = {0};
    assert_int_equal(recd_recap_header_encode(&g, &c), 0);
    assert_int_equal(c.len, (size_t)hs);
    assert_memory_equal(c.data, b.data, c.len);
    /* Unknown records must sort after the known ones. */
    static const uint8_t low[] = {2, 0, 0};
    h.ext_unknown.data = low;
    h.ext_unknown.len = sizeof(low);
    assert_int_equal(recd_recap_header_encode(&h, &c), -EINVAL);
    recd_buf_free(&b);
    recd_buf_free(&c);
}

/* A header from a newer writer with extra fields we do not know is skipped by header length. */
/* Record 4 names libdeflate; zlib, the default, writes no record, so zlib files keep their bytes. */
static void test_compressor_record(void **st)
{
    (void)st;
    recd_recap_header h, g;
    full_header(&h);
    recd_buf zlib = {0}, ld = {0};
    assert_int_equal(recd_recap_header_encode(&h, &zlib), 0);
    h.compressor = RECD_GZIP_LIBDEFLATE;
    assert_int_equal(recd_recap_header_encode(&h, &ld), 0);
    assert_int_equal(ld.len, zlib.len + 4);
    static const uint8_t rec[] = {4, 0, 1, RECD_GZIP_LIBDEFLATE};
    assert_memory_equal(ld.data + ld.len - 4, rec, 4); /* the last record of full_header's */
    assert_int_equal(recd_recap_header_decode(ld.data, ld.len, &g, NULL), (int)ld.len);
    assert_int_equal(g.compressor, RECD_GZIP_LIBDEFLATE);
    assert_int_equal(recd_recap_header_decode(zlib.data, zlib.len, &g, NULL), (int)zlib.len);
    assert_int_equal(g.compressor, RECD_GZIP_ZLIB);
    /* Not written without the encoder settings it belongs to, nor for an unknown compressor. */
    recd_buf c = {0};
    h.compressor = 2;
    assert_int_equal(recd_recap_header_encode(&h, &c), -EINVAL);
    h.compressor = RECD_GZIP_LIBDEFLATE;
    h.has_encoder_params = false;
    assert_int_equal(recd_recap_header_encode(&h, &c), -EINVAL);
    /* A record naming zlib (not canonical) or anything else is refused when read. */
    for (uint8_t v = 0; v < 3; v += 2) {
        ld.data[ld.len - 1] = v;
        recd_report rep = {0};
        assert_int_equal(recd_recap_header_decode(ld.data, ld.len, &g, &rep), -EBADMSG);
        assert_int_equal(recd_report_errors(&rep), 1);
        assert_string_equal(rep.items[0].code, "bad-extension");
        recd_report_free(&rep);
    }
    recd_buf_free(&zlib);
    recd_buf_free(&ld);
    recd_buf_free(&c);
}

static void test_reader_skips_by_header_length(void **st)
{
    (void)st;
    recd_recap_header h, g;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("x");
    recd_buf b = {0};
    assert_int_equal(recd_recap_header_encode(&h, &b), 0);
    /* Append an unknown record by hand and fix the header length. */
    static const uint8_t rec[] = {77, 0, 4, 'a', 'b', 'c', 'd'};
    assert_int_equal(recd_buf_append(&b, rec, sizeof(rec)), 0);
    st_be16(b.data + 5, (uint16_t)(b.len - 7));
    assert_int_equal(recd_buf_append(&b, "FRAMES", 6), 0);
    assert_int_equal(recd_recap_header_decode(b.data, b.len, &g, NULL), (int)b.len - 6);
    assert_int_equal(g.ext_unknown.len, sizeof(rec));
    recd_buf_free(&b);
}

static void test_string_truncation(void **st)
{
    (void)st;
    /* 100 x "é" (2 bytes) + "a": 201 bytes; 130 x "€" (3 bytes): 390 bytes. */
    char name[512], world[512];
    size_t n = 0;
    for (int i = 0; i < 100; i++)
        name[n++] = '\xC3', name[n++] = '\xA9';
    name[n++] = 'a';
    name[n] = 0;
    n = 0;
    for (int i = 0; i < 130; i++)
        world[n++] = '\xE2', world[n++] = '\x82', world[n++] = '\xAC';
    world[n] = 0;
    recd_recap_header h, g;
    recd_recap_header_init(&h);
    h.name = recd_recap_str(name);
    h.world_name = recd_recap_str(world);
    recd_buf b = {0};
    assert_int_equal(recd_recap_header_encode(&h, &b), 0);
    assert_true(recd_recap_header_decode(b.data, b.len, &g, NULL) > 0);
    assert_int_equal(g.name.len, 201);
    assert_int_equal(g.world_name.len, 255); /* 85 whole code points */
    assert_memory_equal(g.world_name.data, world, 255);
    uint64_t end_off;
    recd_recap_header_patch_offsets(&h, &end_off, NULL);
    assert_int_equal(end_off, 7 + 4 + 201 + 255 + 32);
    /* Invalid UTF-8 is refused, not repaired. */
    h.player_name = recd_recap_str("bad\xC3(");
    assert_int_equal(recd_recap_header_encode(&h, &b), -EINVAL);
    recd_buf_free(&b);
}

static const char *first_code(const recd_report *r) { return r->count ? r->items[0].code : ""; }

static void expect_reject(uint8_t *buf, size_t len, int rc, const char *code, uint64_t off)
{
    recd_recap_header g;
    recd_report r = {0};
    assert_int_equal(recd_recap_header_decode(buf, len, &g, &r), rc);
    assert_string_equal(first_code(&r), code);
    assert_int_equal(r.items[0].offset, off);
    assert_int_equal(r.items[0].severity, RECD_SEV_ERROR);
    recd_recap_decode_result res;
    recd_report r2 = {0};
    assert_int_equal(recd_recap_verify(buf, len, &res, &r2), -EBADMSG);
    assert_false(res.header_valid);
    assert_string_equal(first_code(&r2), code);
    recd_report_free(&r);
    recd_report_free(&r2);
}

static void test_rejections(void **st)
{
    (void)st;
    recd_recap_header h;
    full_header(&h);
    recd_buf b = {0};
    assert_int_equal(recd_recap_header_encode(&h, &b), 0);

    b.data[0] = 'X';
    expect_reject(b.data, b.len, -EBADMSG, "bad-magic", 0);
    b.data[0] = 'R';
    b.data[4] = 5;
    expect_reject(b.data, b.len, -EBADMSG, "bad-version", 4);
    b.data[4] = 0;
    expect_reject(b.data, b.len, -EBADMSG, "bad-version", 4);
    b.data[4] = 4;
    expect_reject(b.data, 5, -EAGAIN, "truncated-header", 5);
    expect_reject(b.data, b.len - 1, -EAGAIN, "truncated-header", b.len - 1);

    /* Player name byte -> invalid UTF-8 (lone continuation byte). */
    size_t pn = 7 + 1 + strlen("match-42-Notch") + 1;
    uint8_t saved = b.data[pn];
    b.data[pn] = 0x80;
    expect_reject(b.data, b.len, -EBADMSG, "bad-utf8", pn - 1);
    b.data[pn] = saved;

    /* Header length too short for the fixed fields. */
    uint16_t hl = ld_be16(b.data + 5);
    st_be16(b.data + 5, 70);
    expect_reject(b.data, b.len, -EBADMSG, "bad-header-length", 7 + 4 + 14 + 5 + 36 + 6);
    /* Header length cutting an extension record. */
    st_be16(b.data + 5, (uint16_t)(hl - 1));
    recd_recap_header g;
    recd_report r = {0};
    assert_int_equal(recd_recap_header_decode(b.data, b.len, &g, &r), -EBADMSG);
    assert_string_equal(first_code(&r), "bad-extension");
    recd_report_free(&r);
    st_be16(b.data + 5, hl);

    /* Records out of order: swap type bytes of records 1 and 2. */
    size_t ext = 7 + 4 + 14 + 5 + 36 + 6 + 56;
    assert_int_equal(b.data[ext], 1);
    size_t second = ext + 3 + ld_be16(b.data + ext + 1);
    assert_int_equal(b.data[second], 2);
    b.data[ext] = 2, b.data[second] = 1;
    expect_reject(b.data, b.len, -EBADMSG, "bad-extension", second);
    b.data[ext] = 1, b.data[second] = 2;

    /* ENCODER record with a bad gzip level. */
    size_t enc = second + 3 + ld_be16(b.data + second + 1);
    assert_int_equal(b.data[enc], 3);
    b.data[enc + 3 + 4] = 10;
    expect_reject(b.data, b.len, -EBADMSG, "bad-extension", enc);
    b.data[enc + 3 + 4] = 6;

    recd_recap_header ok;
    assert_int_equal(recd_recap_header_decode(b.data, b.len, &ok, NULL), (int)b.len);
    recd_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_version1_layout),
        cmocka_unit_test(test_patch_offsets),
        cmocka_unit_test(test_unknown_extensions_skipped_and_kept),
        cmocka_unit_test(test_compressor_record),
        cmocka_unit_test(test_reader_skips_by_header_length),
        cmocka_unit_test(test_string_truncation),
        cmocka_unit_test(test_rejections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
