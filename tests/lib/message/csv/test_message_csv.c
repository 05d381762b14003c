/* SPDX-License-Identifier: MIT */
/* The message model's CSV encoding: exact round trips of every .rec field and of Recap files
 * (states, events with awkward text, flush points), and clear errors for hostile CSV. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "recd/message.h"

/* ---- helpers --------------------------------------------------------------------------------- */

static float rand_f32(tu_rng *r)
{
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu,
                                       0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3DCCCCCDu};
    if (tu_rand_below(r, 4) == 0)
        return f32_from_bits(special[tu_rand_below(r, sizeof special / sizeof special[0])]);
    for (;;) {
        float f = f32_from_bits((uint32_t)tu_rand(r));
        if (isfinite(f))
            return f;
    }
}

/* A random block as bytes: every bit pattern is a block, except NaN/Inf floats. */
static void rand_block(tu_rng *r, recd_msg *m, recd_msg_format fmt)
{
    recd_msg_init(m, RECD_MSG_STATE, fmt);
    for (;;) {
        uint8_t b[RECD_REC_ONFOOT_BLOCK_SIZE];
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (uint8_t)tu_rand(r);
        if (fmt == RECD_MSG_FMT_SAMP_ONFOOT) {
            recd_rec_onfoot_decode(b, &m->onfoot);
            m->onfoot.position.x = rand_f32(r);
            if (recd_rec_onfoot_check(&m->onfoot) == 0)
                return;
        } else {
            recd_rec_vehicle_decode(b, &m->vehicle);
            m->vehicle.vehicle_health = rand_f32(r);
            if (tu_rand_below(r, 2))
                m->vehicle.extra.train_speed = (float)tu_rand_double(r, -1, 1);
            if (recd_rec_vehicle_check(&m->vehicle) == 0)
                return;
        }
    }
}

typedef struct collect {
    recd_msg msgs[64];
    int n;
} collect;

static int collect_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    collect *c = ctx;
    if (c->n >= 64)
        return -ENOSPC;
    return recd_msg_copy(&c->msgs[c->n++], m);
}

static void collect_free(collect *c)
{
    for (int i = 0; i < c->n; i++)
        recd_msg_free(&c->msgs[i]);
    c->n = 0;
}

static void expect_csv_error(const char *doc, const char *want)
{
    collect *c = calloc(1, sizeof *c);
    char err[300] = "";
    int rc = recd_csv_read((const uint8_t *)doc, strlen(doc), collect_msg, c, err, sizeof err);
    if (rc == 0 || !strstr(err, want))
        fail_msg("csv:\n%s\n  rc %d error \"%s\" wanted \"%s\"", doc, rc, err, want);
    collect_free(c);
    free(c);
}

/* ---- .rec ------------------------------------------------------------------------------------ */

static void rows_roundtrip(recd_msg_format fmt, uint64_t seed)
{
    tu_rng r = {seed};
    recd_csv_writer w;
    assert_int_equal(recd_csv_writer_init(&w, fmt), 0);
    recd_buf text = {0};
    recd_msg open, close;
    recd_msg_init(&open, RECD_MSG_OPEN, fmt);
    recd_msg_init(&close, RECD_MSG_CLOSE, fmt);
    assert_int_equal(recd_csv_write(&w, &open, &text), 0);
    recd_msg blocks[60];
    for (int i = 0; i < 60; i++) {
        rand_block(&r, &blocks[i], fmt);
        assert_int_equal(recd_csv_write(&w, &blocks[i], &text), 0);
    }
    assert_int_equal(recd_csv_write(&w, &close, &text), 0);
    collect *c = calloc(1, sizeof *c);
    char err[300] = "";
    int rc = recd_csv_read(text.data, text.len, collect_msg, c, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(c->n, 62);
    assert_int_equal(c->msgs[0].type, RECD_MSG_OPEN);
    assert_int_equal(c->msgs[0].format, fmt);
    assert_int_equal(c->msgs[61].type, RECD_MSG_CLOSE);
    for (int i = 0; i < 60; i++) {
        uint8_t a[RECD_REC_ONFOOT_BLOCK_SIZE], b[RECD_REC_ONFOOT_BLOCK_SIZE];
        const recd_msg *got = &c->msgs[i + 1];
        assert_int_equal(got->format, fmt);
        if (fmt == RECD_MSG_FMT_SAMP_ONFOOT) {
            recd_rec_onfoot_encode(&blocks[i].onfoot, a);
            recd_rec_onfoot_encode(&got->onfoot, b);
            assert_memory_equal(a, b, RECD_REC_ONFOOT_BLOCK_SIZE);
        } else {
            recd_rec_vehicle_encode(&blocks[i].vehicle, a);
            recd_rec_vehicle_encode(&got->vehicle, b);
            assert_memory_equal(a, b, RECD_REC_VEHICLE_BLOCK_SIZE);
        }
    }
    collect_free(c);
    free(c);
    recd_buf_free(&text);
}

static void test_rec_rows_roundtrip(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        rows_roundtrip(RECD_MSG_FMT_SAMP_ONFOOT, seed);
        rows_roundtrip(RECD_MSG_FMT_SAMP_VEHICLE, seed * 1000);
    }
}

static void test_rec_header_and_cells(void **state)
{
    (void)state;
    recd_csv_writer w;
    recd_buf text = {0};
    recd_msg m;
    assert_int_equal(recd_csv_writer_init(&w, RECD_MSG_FMT_SAMP_VEHICLE), 0);
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    m.vehicle.time_ms = 31;
    m.vehicle.vehicle_health = 1000.0f;
    m.vehicle.position.x = -0.0f;
    m.vehicle.extra.train_speed = -0.17f;
    assert_int_equal(recd_csv_write(&w, &m, &text), 0);
    assert_int_equal(recd_buf_append(&text, "", 1), 0);
    const char *want =
        "t,vehicle_id,left_right,up_down,keys,rotation_w,rotation_x,rotation_y,rotation_z,"
        "position_x,position_y,position_z,velocity_x,velocity_y,velocity_z,vehicle_health,"
        "driver_health,driver_armour,weapon,additional_key,siren,landing_gear,trailer_id,"
        "hydra_thrust_0,hydra_thrust_1,train_speed\n"
        "31,0,0,0,0,0.0,0.0,0.0,0.0,-0.0,0.0,0.0,0.0,0.0,0.0,1000.0,0,0,0,0,0,0,0,,,-0.17\n";
    assert_string_equal((const char *)text.data, want);
    /* An on-foot block does not belong to a vehicle writer; nothing is appended. */
    size_t len = text.len;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    assert_int_equal(recd_csv_write(&w, &m, &text), -EINVAL);
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    m.vehicle.velocity.z = NAN;
    assert_int_equal(recd_csv_write(&w, &m, &text), -EINVAL);
    assert_int_equal(text.len, len);
    recd_buf_free(&text);
}

static void make_rec(recd_buf *file, recd_rec_type type, int blocks, uint64_t seed)
{
    tu_rng r = {seed};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, type, RECD_REC_TIME_REJECT, recd_buf_sink(file)), 0);
    assert_int_equal(recd_rec_writer_header(&w), 0);
    uint32_t t = 0;
    for (int i = 0; i < blocks; i++) {
        recd_msg m;
        rand_block(&r, &m, type == RECD_REC_TYPE_ONFOOT ? RECD_MSG_FMT_SAMP_ONFOOT
                                                        : RECD_MSG_FMT_SAMP_VEHICLE);
        t += tu_rand_below(&r, 200);
        if (type == RECD_REC_TYPE_ONFOOT) {
            m.onfoot.time_ms = t;
            assert_int_equal(recd_rec_writer_onfoot(&w, &m.onfoot), 0);
        } else {
            m.vehicle.time_ms = t;
            assert_int_equal(recd_rec_writer_vehicle(&w, &m.vehicle), 0);
        }
    }
}

static void roundtrip_file(const recd_buf *file)
{
    recd_buf text = {0}, back = {0};
    char err[300] = "";
    int rc = recd_export_text(file->data, file->len, RECD_TEXT_CSV, recd_buf_sink(&text), err,
                              sizeof err);
    if (rc)
        fail_msg("export: %s", err);
    assert_int_equal(recd_text_encoding_sniff(text.data, text.len), RECD_TEXT_CSV);
    rc = recd_import_text(text.data, text.len, RECD_TEXT_CSV, RECD_MSG_FMT_NONE, recd_buf_sink(&back),
                          NULL, err, sizeof err);
    if (rc)
        fail_msg("import: %s", err);
    assert_int_equal(back.len, file->len);
    assert_memory_equal(back.data, file->data, file->len);
    recd_buf_free(&text);
    recd_buf_free(&back);
}

static void test_rec_file_roundtrip(void **state)
{
    (void)state;
    for (int type = 1; type <= 2; type++) {
        for (int blocks = 0; blocks <= 500; blocks += 250) {
            recd_buf file = {0};
            make_rec(&file, (recd_rec_type)type, blocks, (uint64_t)(type * 7 + blocks));
            roundtrip_file(&file);
            recd_buf_free(&file);
        }
    }
}

static const char onfoot_header[] =
    "t,left_right,up_down,keys,position_x,position_y,position_z,rotation_w,rotation_x,rotation_y,"
    "rotation_z,health,armour,weapon,additional_key,special_action,velocity_x,velocity_y,"
    "velocity_z,surf_offset_x,surf_offset_y,surf_offset_z,surf_id,anim_id,anim_frame_delta,"
    "anim_loop,anim_lock_x,anim_lock_y,anim_freeze,anim_time";
static const char onfoot_row[] = "100,0,-128,8,1.5,2,3,1,0,0,0,100,0,22,0,0,0,0,0,0,0,0,0,1189,4,0,0,0,0,8";

/* onfoot_row with cell `index` replaced by `cell`. */
static const char *row_with(int index, const char *cell)
{
    static char out[512];
    const char *p = onfoot_row;
    for (int i = 0; i < index; i++)
        p = strchr(p, ',') + 1;
    const char *end = strchr(p, ',');
    if (!end)
        end = p + strlen(p);
    snprintf(out, sizeof out, "%.*s%s%s", (int)(p - onfoot_row), onfoot_row, cell, end);
    return out;
}

static void test_rec_bad_csv(void **state)
{
    (void)state;
    char doc[2048];
    /* The good document first: BOM, CRLF, blank lines, header columns in another order. */
    snprintf(doc, sizeof doc, "\xEF\xBB\xBF%s\r\n\r\n%s\r\n%s\r\n\n", onfoot_header, onfoot_row,
             row_with(0, "200"));
    collect *c = calloc(1, sizeof *c);
    char err[300] = "";
    assert_int_equal(recd_csv_read((const uint8_t *)doc, strlen(doc), collect_msg, c, err, sizeof err), 0);
    assert_int_equal(c->n, 4);
    assert_int_equal(c->msgs[2].onfoot.time_ms, 200);
    assert_int_equal(c->msgs[1].onfoot.anim_flags.time, 8);
    assert_true(c->msgs[1].onfoot.position.y == 2.0f);
    collect_free(c);
    free(c);

    snprintf(doc, sizeof doc, "%s\n%s\n%s\n", onfoot_header, onfoot_row, row_with(11, "300"));
    expect_csv_error(doc, "line 3: column health: 300 does not fit u8");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(13, "64"));
    expect_csv_error(doc, "line 2: column weapon: 64 does not fit 6 bits");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(25, "2"));
    expect_csv_error(doc, "line 2: column anim_loop: 2 is not 0 or 1");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(4, "1e39"));
    expect_csv_error(doc, "line 2: column position_x: 1e+39 does not fit f32");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(4, "nan"));
    expect_csv_error(doc, "line 2: column position_x: \"nan\" is not a number");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(4, " 1"));
    expect_csv_error(doc, "column position_x: \" 1\" is not a number");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(0, "1.5"));
    expect_csv_error(doc, "line 2: column t: expected an integer, got a real number");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(0, "99999999999999999999999"));
    expect_csv_error(doc, "is not a number");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(3, ""));
    expect_csv_error(doc, "line 2: column keys: empty");
    snprintf(doc, sizeof doc, "%s\n%s,7\n", onfoot_header, onfoot_row);
    expect_csv_error(doc, "line 2: 31 cells, the header has 30");
    snprintf(doc, sizeof doc, "%s,extra\n%s\n", onfoot_header, onfoot_row);
    expect_csv_error(doc, "line 1: unknown column \"extra\"");
    snprintf(doc, sizeof doc, "%s,t\n", onfoot_header);
    expect_csv_error(doc, "line 1: column \"t\" appears twice");
    expect_csv_error("t,health\n1,2\n", "line 1: missing column \"left_right\"");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(0, "\"10"));
    expect_csv_error(doc, "line 2: unterminated quoted cell");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(0, "\"10\"x"));
    expect_csv_error(doc, "line 2: text after a closing quote");
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(0, "1\"0"));
    expect_csv_error(doc, "line 2: quote inside an unquoted cell");
    snprintf(doc, sizeof doc, "%s\n%s\r\r\n", onfoot_header, onfoot_row);
    expect_csv_error(doc, "carriage return");
    expect_csv_error("", "no header row");
    expect_csv_error("\xEF\xBB\xBF\r\n", "no header row");
    /* Decreasing times are refused by the importer with the row's line. */
    snprintf(doc, sizeof doc, "%s\n%s\n%s\n", onfoot_header, row_with(0, "200"), onfoot_row);
    recd_buf out = {0};
    int rc = recd_import_text((const uint8_t *)doc, strlen(doc), RECD_TEXT_CSV, RECD_MSG_FMT_NONE,
                              recd_buf_sink(&out), NULL, err, sizeof err);
    assert_int_equal(rc, -EBADMSG);
    assert_non_null(strstr(err, "line 3: state.t: 100 is before the previous block's 200"));
    recd_buf_free(&out);
    /* A quoted number is fine: spreadsheets quote freely. */
    snprintf(doc, sizeof doc, "%s\n%s\n", onfoot_header, row_with(0, "\"100\""));
    c = calloc(1, sizeof *c);
    assert_int_equal(recd_csv_read((const uint8_t *)doc, strlen(doc), collect_msg, c, err, sizeof err), 0);
    collect_free(c);
    free(c);
}

static void test_vehicle_extra_cells(void **state)
{
    (void)state;
    const char *header =
        "t,vehicle_id,left_right,up_down,keys,rotation_w,rotation_x,rotation_y,rotation_z,"
        "position_x,position_y,position_z,velocity_x,velocity_y,velocity_z,vehicle_health,"
        "driver_health,driver_armour,weapon,additional_key,siren,landing_gear,trailer_id,"
        "hydra_thrust_0,hydra_thrust_1,train_speed";
    const char *base = "0,1,0,0,0,1,0,0,0,0,0,0,0,0,0,1000,100,0,0,0,0,0,0,";
    char doc[2048];
    snprintf(doc, sizeof doc, "%s\n%s5000,5000,\n", header, base);
    collect *c = calloc(1, sizeof *c);
    char err[300];
    assert_int_equal(recd_csv_read((const uint8_t *)doc, strlen(doc), collect_msg, c, err, sizeof err), 0);
    assert_int_equal(c->msgs[0].format, RECD_MSG_FMT_SAMP_VEHICLE);
    assert_int_equal(c->msgs[1].vehicle.extra.bits, (5000u << 16) | 5000u);
    collect_free(c);
    free(c);
    snprintf(doc, sizeof doc, "%s\n%s5000,,\n", header, base);
    expect_csv_error(doc, "line 2: fill either hydra_thrust_0 and hydra_thrust_1, or train_speed");
    snprintf(doc, sizeof doc, "%s\n%s1,2,0.5\n", header, base);
    expect_csv_error(doc, "fill either");
    snprintf(doc, sizeof doc, "%s\n%s,,\n", header, base);
    expect_csv_error(doc, "fill either");
    snprintf(doc, sizeof doc, "%s\n%s65536,0,\n", header, base);
    expect_csv_error(doc, "column hydra_thrust_0: 65536 does not fit u16");
}

/* ---- Recap ----------------------------------------------------------------------------------- */

static void make_recap(recd_buf *file, uint64_t seed)
{
    tu_rng r = {seed};
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("csv, \"quoted\"\nname");
    h.player_name = recd_recap_str("Alex");
    h.world_name = recd_recap_str("world");
    h.start_ms = 1700000000000;
    recd_recap_encoder_options opt = {.keyframe_interval = 20, .gzip_level = 1, .member_limit = 1024};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(file)), 0);
    recd_recap_state s;
    memset(&s, 0, sizeof s);
    s.health = 20.0f;
    s.equipment[0].key = recd_recap_str("minecraft:diamond_sword");
    s.equipment[0].count = 1;
    s.equipment[0].flags = 1;
    static const uint8_t nbt[] = {0x0A, 0x00, 0x00, 0x2C, 0x22, 0x0A, 0x00};
    s.inventory[40].key = recd_recap_str("minecraft:written_book");
    s.inventory[40].count = 1;
    s.inventory[40].data.data = nbt;
    s.inventory[40].data.len = sizeof nbt;
    static const char *const chat[] = {"hello, world", "she said \"hi\"", "two\nlines", "", "\r\n,\",",
                                       "caf\xc3\xa9 \xf0\x9f\x98\x80"};
    uint64_t tick = 0;
    for (int i = 0; i < 400; i++) {
        s.pos[0] += tu_rand_double(&r, -0.2, 0.2);
        s.pos[1] = 64 + tu_rand_double(&r, 0, 1);
        s.rot[0] = tu_rand_double(&r, -180, 180);
        s.flags = (uint16_t)tu_rand_below(&r, 8);
        recd_recap_value v;
        v.blob = recd_recap_str(chat[tu_rand_below(&r, 6)]);
        recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &v};
        assert_int_equal(recd_recap_encoder_tick(e, tick, &s, &ev, tu_rand_below(&r, 5) == 0), 0);
        tick += tu_rand_below(&r, 10) == 0 ? 300 : 1;
        if (tu_rand_below(&r, 25) == 0)
            assert_int_equal(recd_recap_encoder_flush(e), 0);
    }
    tu_recap_finish(e, file);
}

static void test_recap_file_roundtrip(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        recd_buf file = {0};
        make_recap(&file, seed);
        assert_int_equal(recd_recap_verify(file.data, file.len, NULL, NULL), 0);
        roundtrip_file(&file);
        recd_buf_free(&file);
    }
}

static const char recap_header[] =
    "kind,tick,pos_x,pos_y,pos_z,yaw,pitch,head_yaw,vel_x,vel_y,vel_z,flags,pose,game_mode,"
    "hand_state,health,absorption,equipment,inventory,data\n";
static const char recap_open[] = "open,,,,,,,,,,,,,,,,,,,\"{\"\"format\"\":\"\"recap\"\",\"\"recap\"\":{}}\"\n";
static const char recap_state[] = "state,0,1.5,64,2.5,90,0,90,0,0,0,512,0,0,0,20,0,,,\n";

static void test_recap_rows(void **state)
{
    (void)state;
    char doc[2048];
    snprintf(doc, sizeof doc,
             "%s%s%s"
             "event,0,,,,,,,,,,,,,,,,,,\"{\"\"action\"\":\"\"CHAT_MESSAGE\"\",\"\"message\"\":\"\"a,\\\"\"b\"\"}\"\n"
             "state,5,1.5,64,2.5,90,0,90,0,0,0,512,0,0,0,19.5,0,"
             "\"[{\"\"slot\"\":0,\"\"key\"\":\"\"minecraft:torch\"\",\"\"count\"\":3}]\",,\n"
             "flush,,,,,,,,,,,,,,,,,,,\"{\"\"end_tick\"\":10}\"\n"
             "close,,,,,,,,,,,,,,,,,,,\n",
             recap_header, recap_open, recap_state);
    collect *c = calloc(1, sizeof *c);
    char err[300] = "";
    int rc = recd_csv_read((const uint8_t *)doc, strlen(doc), collect_msg, c, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(c->n, 6);
    assert_int_equal(c->msgs[2].type, RECD_MSG_EVENT);
    const recd_recap_blob *msg = &c->msgs[2].recap_event->event.fields[0].blob;
    assert_int_equal(msg->len, 4);
    assert_memory_equal(msg->data, "a,\"b", 4);
    assert_int_equal(c->msgs[3].recap_state->tick, 5);
    assert_true(c->msgs[3].recap_state->state.health == 19.5f);
    assert_int_equal(c->msgs[3].recap_state->state.equipment[0].count, 3);
    assert_true(c->msgs[4].flush.has_end_tick && c->msgs[4].flush.end_tick == 10);
    collect_free(c);
    free(c);

    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open,
             "state,0,x,64,2.5,90,0,90,0,0,0,512,0,0,0,20,0,,,\n");
    expect_csv_error(doc, "line 3: column pos_x: \"x\" is not a number");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open,
             "state,0,1,64,2.5,90,0,90,0,0,0,70000,0,0,0,20,0,,,\n");
    expect_csv_error(doc, "line 3: state.flags: 70000 does not fit u16");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open,
             "state,0,1,64,2.5,90,0,90,0,0,0,0,0,0,0,20,0,[,,\n");
    expect_csv_error(doc, "line 3: column equipment: invalid JSON");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open,
             "state,0,1,64,2.5,90,0,90,0,0,0,0,0,0,0,20,0,,,{}\n");
    expect_csv_error(doc, "line 3: column data: must be empty in a state row");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open,
             "close,,1,,,,,,,,,,,,,,,,,\n");
    expect_csv_error(doc, "line 3: column pos_x: must be empty in a non-state row");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open, "flush,4,,,,,,,,,,,,,,,,,,\n");
    expect_csv_error(doc, "line 3: column tick: only state and event rows have a tick");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open,
             "close,,,,,,,,,,,,,,,,,,,\"{\"\"type\"\":\"\"open\"\"}\"\n");
    expect_csv_error(doc, "line 3: column data: \"type\" belongs in the kind column");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open, "bogus,,,,,,,,,,,,,,,,,,,\n");
    expect_csv_error(doc, "line 3: type: \"bogus\" is not open, state, event, flush, close or save");
    snprintf(doc, sizeof doc, "%s%s", recap_header, recap_state);
    expect_csv_error(doc, "line 2: the first message must be open, got state");
    snprintf(doc, sizeof doc, "%s%s%s", recap_header, recap_open,
             "event,1,,,,,,,,,,,,,,,,,,\"{\"\"action\"\":\"\"DEATH\"\"}\"\n");
    expect_csv_error(doc, "line 3: event: missing key \"message\"");
    snprintf(doc, sizeof doc, "%s%s", recap_header, "open,,,,,,,,,,,,,,,,,,,\"{\"\"format\"\":\"\"recap\"\"}\"\n");
    expect_csv_error(doc, "line 2: open: missing key \"recap\"");
    expect_csv_error("kind,tick\n", "line 1: missing column \"pos_x\" (recap CSV)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rec_rows_roundtrip),
        cmocka_unit_test(test_rec_header_and_cells),
        cmocka_unit_test(test_rec_file_roundtrip),
        cmocka_unit_test(test_rec_bad_csv),
        cmocka_unit_test(test_vehicle_extra_cells),
        cmocka_unit_test(test_recap_file_roundtrip),
        cmocka_unit_test(test_recap_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
