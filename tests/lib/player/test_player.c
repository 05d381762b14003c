/* SPDX-License-Identifier: MIT */
/* samp-player in librecd: vehicle states with model and seat in JSON and binary frames (round
 * trip and refusals), the manifest's text, parser and refusals, and the instant-replay save
 * message and ring flag. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/player_manifest.h"
#include "recd/wire.h"

static const char onfoot_json[] =
    "{\"type\":\"state\",\"t\":5,\"left_right\":0,\"up_down\":0,\"keys\":0,\"position\":[1.0,2.0,3.0],"
    "\"rotation\":[1.0,0.0,0.0,0.0],\"health\":100,\"armour\":0,\"weapon\":0,\"additional_key\":0,"
    "\"special_action\":0,\"velocity\":[0.0,0.0,0.0],\"surf_offset\":[0.0,0.0,0.0],\"surf_id\":0,"
    "\"anim_id\":0,\"anim_flags\":{\"frame_delta\":0,\"loop\":false,\"lock_x\":false,\"lock_y\":false,"
    "\"freeze\":false,\"time\":0}%s}";
static const char vehicle_json[] =
    "{\"type\":\"state\",\"t\":9,\"vehicle_id\":3,\"left_right\":0,\"up_down\":0,\"keys\":0,"
    "\"rotation\":[1.0,0.0,0.0,0.0],\"position\":[4.0,5.0,6.0],\"velocity\":[0.0,0.0,0.0],"
    "\"vehicle_health\":1000.0,\"driver_health\":100,\"driver_armour\":0,\"weapon\":0,"
    "\"additional_key\":0,\"siren\":0,\"landing_gear\":0,\"trailer_id\":0,\"hydra_thrust\":[0,0]%s}";

static int from_json(const char *fmt, const char *extra, recd_msg *m, char *err, size_t errlen)
{
    char line[2048];
    snprintf(line, sizeof line, fmt, extra);
    return recd_msg_from_json(line, strlen(line), RECD_MSG_FMT_SAMP_PLAYER, m, err, errlen);
}

static void json_states(void **state)
{
    (void)state;
    recd_msg m;
    char err[256];
    assert_int_equal(from_json(onfoot_json, "", &m, err, sizeof err), 0);
    assert_int_equal(m.format, RECD_MSG_FMT_SAMP_PLAYER);
    assert_int_equal(m.player.rec_type, RECD_REC_TYPE_ONFOOT);
    assert_true(m.onfoot.time_ms == 5 && m.onfoot.position.y == 2.0f);
    recd_msg_free(&m);
    assert_int_equal(from_json(vehicle_json, ",\"vehicle_model\":411,\"seat\":1", &m, err, sizeof err), 0);
    assert_int_equal(m.player.rec_type, RECD_REC_TYPE_VEHICLE);
    assert_true(m.player.has_model && m.player.vehicle_model == 411 && m.player.has_seat && m.player.seat == 1);
    assert_true(m.vehicle.time_ms == 9 && m.vehicle.vehicle_id == 3);
    recd_msg_free(&m);
    assert_int_equal(from_json(vehicle_json, "", &m, err, sizeof err), 0);
    assert_false(m.player.has_model || m.player.has_seat);
    recd_msg_free(&m);
    /* refusals, naming the field */
    assert_int_equal(from_json(vehicle_json, ",\"vehicle_model\":399", &m, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "vehicle_model"));
    assert_int_equal(from_json(vehicle_json, ",\"seat\":4", &m, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "seat"));
    assert_int_equal(from_json(onfoot_json, ",\"seat\":0", &m, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "seat"));
    /* a samp-vehicle session knows no such keys */
    char line[2048];
    snprintf(line, sizeof line, vehicle_json, ",\"vehicle_model\":411");
    assert_int_equal(recd_msg_from_json(line, strlen(line), RECD_MSG_FMT_SAMP_VEHICLE, &m, err, sizeof err),
                     -EBADMSG);
}

/* The instant-replay messages: save (both encodings) and the open's ring flag. */
static void save_and_ring(void **state)
{
    (void)state;
    recd_msg m;
    char err[256];
    const char *line = "{\"type\":\"save\",\"session\":\"p\",\"last_ms\":30000,\"label\":\"kill-cam.1\"}";
    assert_int_equal(recd_msg_from_json(line, strlen(line), RECD_MSG_FMT_SAMP_ONFOOT, &m, err, sizeof err), 0);
    assert_int_equal(m.type, RECD_MSG_SAVE);
    assert_int_equal(m.save.last_ms, 30000);
    assert_string_equal(m.save.label, "kill-cam.1");
    recd_buf b = {0};
    assert_int_equal(recd_msg_to_json(&m, &b), 0);
    recd_msg back;
    assert_int_equal(recd_msg_from_json((const char *)b.data, b.len, RECD_MSG_FMT_NONE, &back, err, sizeof err), 0);
    assert_true(back.save.last_ms == 30000 && strcmp(back.save.label, "kill-cam.1") == 0);
    recd_buf_free(&b);
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), 0);
    assert_int_equal(b.len, 8 + 2 + 4 + 1 + 10);
    recd_buf_free(&b);
    static const char *const bad[][2] = {
        {"{\"type\":\"save\",\"label\":\"x\"}", "missing key \"last_ms\""},
        {"{\"type\":\"save\",\"last_ms\":0,\"label\":\"x\"}", "save.last_ms: 0 is below 1"},
        {"{\"type\":\"save\",\"last_ms\":4294967296,\"label\":\"x\"}", "does not fit u32"},
        {"{\"type\":\"save\",\"last_ms\":5}", "save.label: missing"},
        {"{\"type\":\"save\",\"last_ms\":5,\"label\":\"../x\"}", "save.label: not"},
        {"{\"type\":\"save\",\"last_ms\":5,\"label\":\"x\",\"when\":1}", "unknown key"},
        {"{\"type\":\"open\",\"format\":\"samp-onfoot\",\"ring\":1}", "open.ring: expected true or false"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(recd_msg_from_json(bad[i][0], strlen(bad[i][0]), RECD_MSG_FMT_NONE, &back, err, sizeof err),
                         -EBADMSG);
        if (!strstr(err, bad[i][1]))
            fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i][1]);
    }
    line = "{\"type\":\"open\",\"session\":\"p\",\"format\":\"samp-onfoot\",\"ring\":true}";
    assert_int_equal(recd_msg_from_json(line, strlen(line), RECD_MSG_FMT_NONE, &m, err, sizeof err), 0);
    assert_true(m.open.ring);
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), 0);
    assert_int_equal(b.data[3], 0x08); /* the ring flag */
    recd_buf_free(&b);
    recd_msg_free(&m);
}

typedef struct sink {
    recd_msg got[4];
    size_t n;
} sink;

static recd_msg_format format_of(void *ctx, const char *key, size_t len, void **handle)
{
    (void)ctx, (void)key, (void)len;
    *handle = NULL;
    return RECD_MSG_FMT_SAMP_PLAYER;
}

static int on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err, size_t errlen)
{
    (void)meta, (void)err, (void)errlen;
    sink *k = ctx;
    if (k->n < 4)
        assert_int_equal(recd_msg_copy(&k->got[k->n++], m), 0);
    return 0;
}

static int decode(const recd_buf *b, sink *k, char *err, size_t errlen)
{
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_BINARY, .format_of = format_of,
                                    .on_msg = on_msg, .ctx = k};
    return recd_wire_decode_datagram(&cfg, b->data, b->len, err, errlen);
}

static void binary_states(void **state)
{
    (void)state;
    recd_msg foot, car;
    char err[256];
    assert_int_equal(from_json(onfoot_json, "", &foot, err, sizeof err), 0);
    assert_int_equal(from_json(vehicle_json, ",\"vehicle_model\":560", &car, err, sizeof err), 0);
    strcpy(foot.session, "p1");
    strcpy(car.session, "p1");
    recd_buf b = {0};
    assert_int_equal(recd_wire_encode(&foot, RECD_WIRE_BINARY, 0, &b), 0);
    assert_int_equal(b.len, 8 + 3 + 8 + 69);
    size_t first = b.len;
    assert_int_equal(recd_wire_encode(&car, RECD_WIRE_BINARY, 0, &b), 0);
    assert_int_equal(b.len - first, 8 + 3 + 8 + 67);
    sink k = {0};
    assert_int_equal(decode(&b, &k, err, sizeof err), 0);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.got[0].player.rec_type, RECD_REC_TYPE_ONFOOT);
    uint8_t want[RECD_REC_ONFOOT_BLOCK_SIZE], got[RECD_REC_ONFOOT_BLOCK_SIZE]; /* bytes, not padding */
    recd_rec_onfoot_encode(&foot.onfoot, want);
    recd_rec_onfoot_encode(&k.got[0].onfoot, got);
    assert_memory_equal(got, want, RECD_REC_ONFOOT_BLOCK_SIZE);
    assert_int_equal(k.got[1].player.rec_type, RECD_REC_TYPE_VEHICLE);
    assert_true(k.got[1].player.has_model && k.got[1].player.vehicle_model == 560 && !k.got[1].player.has_seat);
    recd_rec_vehicle_encode(&car.vehicle, want);
    recd_rec_vehicle_encode(&k.got[1].vehicle, got);
    assert_memory_equal(got, want, RECD_REC_VEHICLE_BLOCK_SIZE);
    for (size_t i = 0; i < k.n; i++)
        recd_msg_free(&k.got[i]);
    /* hostile payloads: type, model, seat, size */
    static const struct {
        size_t at;
        uint8_t value;
        const char *says;
    } bad[] = {{19, 3, "type 3"}, {21, 0x03, "model 816"}, {22, 7, "seat 7"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        recd_buf c = {0};
        assert_int_equal(recd_buf_append(&c, b.data + first, b.len - first), 0);
        c.data[bad[i].at] = bad[i].value;
        k.n = 0;
        assert_int_equal(decode(&c, &k, err, sizeof err), -EBADMSG);
        assert_non_null(strstr(err, bad[i].says));
        assert_int_equal(k.n, 0);
        recd_buf_free(&c);
    }
    recd_buf_free(&b);
    recd_msg_free(&foot);
    recd_msg_free(&car);
}

static void manifest_round_trip(void **state)
{
    (void)state;
    recd_player_manifest m = {0};
    strcpy(m.session, "p7");
    m.start_time_ms = 1763213398000;
    recd_player_part *p = recd_player_manifest_add(&m);
    strcpy(p->path, "samp-player/p7/a.rec");
    p->type = RECD_REC_TYPE_ONFOOT;
    p->duration_ms = 1000;
    p->complete = true;
    p = recd_player_manifest_add(&m);
    strcpy(p->path, "samp-player/p7/a \"q\".rec");
    p->type = RECD_REC_TYPE_VEHICLE;
    p->start_ms = 1100;
    p->duration_ms = 1900;
    p->has_model = true;
    p->vehicle_model = 411;
    char *text = recd_player_manifest_to_json(&m);
    assert_non_null(text);
    recd_player_manifest back;
    char why[256];
    assert_int_equal(recd_player_manifest_parse(text, strlen(text), &back, why, sizeof why), 0);
    assert_int_equal(back.nparts, 2);
    assert_string_equal(back.session, "p7");
    assert_true(back.start_time_ms == m.start_time_ms && !back.complete);
    assert_string_equal(back.parts[1].path, m.parts[1].path);
    assert_true(back.parts[1].has_model && back.parts[1].vehicle_model == 411 && !back.parts[1].has_seat);
    assert_true(back.parts[0].complete && !back.parts[1].complete && back.parts[1].start_ms == 1100);
    recd_player_manifest_free(&back);
    free(text);
    recd_player_manifest_free(&m);

    static const struct {
        const char *text, *says;
    } bad[] = {
        {"{\"format\":\"carla\",\"session\":\"x\",\"parts\":[]}", "samp-player"},
        {"{\"format\":\"samp-player\",\"session\":\"../x\",\"parts\":[]}", "session"},
        {"{\"format\":\"samp-player\",\"session\":\"x\",\"parts\":[{\"path\":\"a\",\"type\":\"onfoot\","
         "\"start_ms\":0}]}", "parts[0]: missing key \"duration_ms\""},
        {"{\"format\":\"samp-player\",\"session\":\"x\",\"parts\":[{\"path\":\"a\",\"type\":\"onfoot\","
         "\"start_ms\":0,\"duration_ms\":1,\"seat\":0}]}", "onfoot part"},
        {"{\"format\":\"samp-player\",\"session\":\"x\",\"parts\":[{\"path\":\"a\",\"type\":\"vehicle\","
         "\"start_ms\":0,\"duration_ms\":1,\"vehicle_model\":700}]}", "vehicle_model"},
        {"{\"format\":\"samp-player\"", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(recd_player_manifest_parse(bad[i].text, strlen(bad[i].text), &back, why, sizeof why),
                         -EBADMSG);
        if (!strstr(why, bad[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, why, bad[i].says);
    }
}

/* recd appends to a manifest while it records: one cut short in the middle of a store (a torn
 * last line, or a longer old tail after the new one) reads as far as its whole lines go, and the
 * first line is as long whether the session is complete or not. */
static void manifest_torn(void **state)
{
    (void)state;
    recd_player_manifest m = {0};
    strcpy(m.session, "p7");
    char head[RECD_PLAYER_LINE_MAX], head_done[RECD_PLAYER_LINE_MAX];
    int n = recd_player_manifest_header(&m, head, sizeof head);
    m.complete = true;
    assert_int_equal(recd_player_manifest_header(&m, head_done, sizeof head_done), n);
    recd_player_part part = {.type = RECD_REC_TYPE_ONFOOT, .duration_ms = 5, .complete = true};
    strcpy(part.path, "samp-player/p7/a.rec");
    char line[RECD_PLAYER_LINE_MAX];
    assert_true(recd_player_part_line(&part, true, line, sizeof line) > 0);
    char text[4 * RECD_PLAYER_LINE_MAX];
    snprintf(text, sizeof text, "%s%s%s  {\"path\":\"samp-player/p7/b.r", head, line, line);
    recd_player_manifest back;
    char why[256];
    assert_int_equal(recd_player_manifest_parse(text, strlen(text), &back, why, sizeof why), 0);
    assert_int_equal(back.nparts, 2);
    assert_false(back.complete);
    assert_string_equal(back.parts[1].path, "samp-player/p7/a.rec");
    recd_player_manifest_free(&back);
    snprintf(text, sizeof text, "%s%s]}\n  {\"path\":\"x\"}\n]}\n", head_done, line);
    assert_int_equal(recd_player_manifest_parse(text, strlen(text), &back, why, sizeof why), 0);
    assert_int_equal(back.nparts, 1);
    assert_true(back.complete);
    recd_player_manifest_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_states),
        cmocka_unit_test(binary_states),
        cmocka_unit_test(manifest_round_trip),
        cmocka_unit_test(manifest_torn),
        cmocka_unit_test(save_and_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
