/* SPDX-License-Identifier: MIT */
/* Sample messages of every type and format for the wire tests, a collecting receiver that turns
 * decoded messages into JSON lines (floats print bit-exactly, so equal text means equal messages)
 * and a format registry. Included by tests/lib/wire/test_wire_*.c and test_client.c. */
#ifndef RECD_TEST_WIRE_SAMPLES_H
#define RECD_TEST_WIRE_SAMPLES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/message.h"
#include "recd/wire.h"

#define WS_MAX 64

typedef struct ws_set {
    recd_msg m[WS_MAX];
    size_t n;
} ws_set;

static inline recd_msg *ws_add(ws_set *s, recd_msg_type t, recd_msg_format f, const char *session)
{
    recd_msg *m = &s->m[s->n++];
    recd_msg_init(m, t, f);
    snprintf(m->session, sizeof m->session, "%s", session);
    return m;
}

static inline void ws_onfoot(recd_rec_onfoot *b, uint32_t t, float k)
{
    memset(b, 0, sizeof *b);
    b->time_ms = t;
    b->left_right = -128;
    b->up_down = 128;
    b->keys = 0x0408;
    b->position = (recd_vec3f){1500.25f + k, -1700.5f, 13.0625f};
    b->rotation = (recd_quat){0.5f, -0.5f, 0.25f, -0.0f};
    b->health = 100;
    b->armour = 50;
    b->weapon = 31;
    b->additional_key = 2;
    b->special_action = 1;
    b->velocity = (recd_vec3f){0.1f, -0.2f, 1e-7f};
    b->surf_offset = (recd_vec3f){0, 0, 0};
    b->surf_id = 2001;
    b->anim_id = 1189;
    b->anim_flags = recd_rec_anim_flags_unpack(0xA5C3);
}

static inline void ws_vehicle(recd_rec_vehicle *b, uint32_t t, float k)
{
    memset(b, 0, sizeof *b);
    b->time_ms = t;
    b->vehicle_id = 411;
    b->left_right = 0;
    b->up_down = -128;
    b->keys = 8;
    b->rotation = (recd_quat){0.70710677f, 0, 0, 0.70710677f};
    b->position = (recd_vec3f){-2000.125f + k, 150.5f, 35.0f};
    b->velocity = (recd_vec3f){0.5f, 0.25f, 0};
    b->vehicle_health = 987.5f;
    b->driver_health = 77;
    b->driver_armour = 0;
    b->weapon = 0;
    b->additional_key = 0;
    b->siren = 1;
    b->landing_gear = 0;
    b->trailer_id = 0;
    b->extra = recd_rec_hydra_extra(5000, 1);
}

static inline void ws_recap_state(recd_recap_state *s, double k)
{
    memset(s, 0, sizeof *s);
    s->pos[0] = 100.5 + k;
    s->pos[1] = 64.0;
    s->pos[2] = -200.125;
    s->rot[0] = 90.0;
    s->rot[1] = -12.5;
    s->rot[2] = 91.0;
    s->vel[0] = 0.0625;
    s->vel[1] = -0.0784;
    s->vel[2] = 0.0;
    s->flags = RECD_RECAP_FLAG_SPRINTING | RECD_RECAP_FLAG_ON_GROUND;
    s->pose = 0;
    s->game_mode = 0;
    s->hand_state = 1;
    s->health = 19.5f;
    s->absorption = 4.0f;
    static const uint8_t nbt[] = {0x0A, 0x00, 0x00, 0x00};
    s->equipment[0] = (recd_recap_item){recd_recap_str("minecraft:diamond_sword"), 1, 1,
                                        {nbt, sizeof nbt}};
    s->equipment[5] = (recd_recap_item){recd_recap_str("minecraft:iron_helmet"), 1, 0, {NULL, 0}};
    s->inventory[3] = (recd_recap_item){recd_recap_str("minecraft:bread"), 12, 0, {NULL, 0}};
    s->inventory[40] = (recd_recap_item){recd_recap_str("minecraft:shield"), 1, 0, {NULL, 0}};
}

static inline void ws_chat(recd_msg *m, uint64_t tick, const char *text)
{
    recd_recap_value v[1];
    v[0].blob = recd_recap_str(text);
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, v};
    if (recd_msg_set_recap_event(m, tick, &ev) < 0)
        abort();
}

static inline void ws_explosion(recd_msg *m, uint64_t tick)
{
    recd_recap_value rows[6];
    for (int i = 0; i < 6; i++)
        rows[i].i = i * 7 - 20;
    recd_recap_value v[5];
    v[0].f64 = 10.5;
    v[1].f64 = 70.0;
    v[2].f64 = -3.25;
    v[3].f32 = 4.0f;
    v[4].list.values = rows;
    v[4].list.count = 2;
    recd_recap_event ev = {RECD_RECAP_EXPLOSION, 5, v};
    if (recd_msg_set_recap_event(m, tick, &ev) < 0)
        abort();
}

static inline void ws_recap_header(recd_recap_header *h)
{
    recd_recap_header_init(h);
    h->name = recd_recap_str("arena-run");
    h->player_name = recd_recap_str("Steve");
    h->player_uuid = recd_recap_str("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    h->world_name = recd_recap_str("world");
    h->origin[0] = 0.5;
    h->start_ms = 1700000000000;
    h->weather = 1;
    h->time_of_day = 6000;
    h->has_encoder_params = true;
    h->keyframe_interval = 200;
    h->gzip_level = 6;
    h->member_limit = 65536;
}

/* Every message type for all three formats, in a valid session order. */
static inline void ws_build(ws_set *s)
{
    memset(s, 0, sizeof *s);
    recd_msg *m = ws_add(s, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT, "foot-1");
    m->open.has_start_time = true;
    m->open.start_time_ms = 1700000000123;
    m->open.auth = strdup("s3cret-token");
    m->has_seq = true;
    m->seq = 0;
    for (int i = 0; i < 3; i++) {
        m = ws_add(s, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT, "foot-1");
        ws_onfoot(&m->onfoot, 100u * (uint32_t)i, (float)i);
        m->has_seq = true;
        m->seq = 1u + (uint64_t)i;
    }
    m = ws_add(s, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_VEHICLE, "car_2");
    m = ws_add(s, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE, "car_2");
    ws_vehicle(&m->vehicle, 5, 0);
    m = ws_add(s, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT, "foot-1");
    ws_onfoot(&m->onfoot, 4000000000u, 9);
    m = ws_add(s, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE, "car_2");
    ws_vehicle(&m->vehicle, 50, 1);
    m = ws_add(s, RECD_MSG_FLUSH, RECD_MSG_FMT_SAMP_VEHICLE, "car_2");

    recd_recap_header h;
    ws_recap_header(&h);
    m = ws_add(s, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP, "mc.Steve");
    if (recd_msg_set_recap_open(m, &h) < 0)
        abort();
    m->open.has_start_time = true;
    m->open.start_time_ms = 1700000000000;
    recd_recap_state st;
    ws_recap_state(&st, 0);
    m = ws_add(s, RECD_MSG_STATE, RECD_MSG_FMT_RECAP, "mc.Steve");
    if (recd_msg_set_recap_state(m, 0, &st) < 0)
        abort();
    m = ws_add(s, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP, "mc.Steve");
    ws_chat(m, 0, "hello \xC3\xA9t\xC3\xA9 \"quoted\"");
    ws_recap_state(&st, 1.25);
    st.inventory[3].key.len = 0; /* slot emptied */
    m = ws_add(s, RECD_MSG_STATE, RECD_MSG_FMT_RECAP, "mc.Steve");
    if (recd_msg_set_recap_state(m, 7, &st) < 0)
        abort();
    m->has_seq = true;
    m->seq = 9223372036854775807ull;
    m = ws_add(s, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP, "mc.Steve");
    ws_explosion(m, 7);
    m = ws_add(s, RECD_MSG_FLUSH, RECD_MSG_FMT_RECAP, "mc.Steve");
    m->flush.has_end_tick = true;
    m->flush.end_tick = 20;
    m = ws_add(s, RECD_MSG_CLOSE, RECD_MSG_FMT_RECAP, "mc.Steve");
    m->close.has_end_time = true;
    m->close.end_time_ms = 1700000001000;
    m = ws_add(s, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_ONFOOT, "foot-1");
    m = ws_add(s, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_VEHICLE, "car_2");
    m->close.has_end_time = true;
    m->close.end_time_ms = -5;
}

static inline void ws_free(ws_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        recd_msg_free(&s->m[i]);
    s->n = 0;
}

static inline int ws_encode_all(const ws_set *s, recd_wire_encoding enc, recd_buf *out)
{
    for (size_t i = 0; i < s->n; i++) {
        int rc = recd_wire_encode(&s->m[i], enc, 0, out);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The JSON lines of a message set: what the receiver must see. */
static inline void ws_json(const ws_set *s, recd_buf *out)
{
    for (size_t i = 0; i < s->n; i++)
        if (recd_msg_to_json(&s->m[i], out) < 0)
            abort();
}

/* A receiver that logs every message as a JSON line. */
typedef struct ws_sink {
    recd_buf json;
    size_t count;
    size_t untimed;
    int fail_at;          /* 1-based message number to reject, 0 never */
    const char *fail_why; /* text for the rejection */
    recd_msg_format known_format; /* format_of answer for known_session */
    const char *known_session;
    bool move; /* take each message out of the decoder (meta->movable) before logging it */
    size_t handles; /* .rec states that came with format_of's handle */
} ws_sink;

static inline int ws_on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                            size_t errlen)
{
    ws_sink *k = ctx;
    if (k->fail_at && (size_t)k->fail_at == k->count + 1) {
        snprintf(err, errlen, "%s", k->fail_why ? k->fail_why : "rejected");
        return -EACCES;
    }
    k->count++;
    if (!meta->has_time)
        k->untimed++;
    recd_msg taken;
    if (k->move) { /* the decoder frees what is left: a double free shows under ASan */
        if (meta->movable != m)
            abort();
        recd_msg_move(&taken, meta->movable);
        if (m->type != RECD_MSG_NONE)
            abort();
        m = &taken;
    }
    if (recd_msg_to_json(m, &k->json) < 0)
        abort();
    if (k->move)
        recd_msg_free(&taken);
    return 0;
}

/* The .rec path's receiver: the block becomes the message on_msg would have seen, logged the
 * same way, so both paths can be compared line by line. */
static inline int ws_on_rec_state(void *ctx, const recd_wire_rec_state *st,
                                  const recd_wire_meta *meta, char *err, size_t errlen)
{
    ws_sink *k = ctx;
    recd_msg m;
    if (recd_wire_rec_state_msg(st, &m) < 0)
        abort();
    if (meta->movable)
        abort();
    if (st->handle) { /* only ws_format_of sets one, for known_session */
        if (st->handle != &k->known_format || strcmp(m.session, k->known_session) != 0)
            abort();
        k->handles++;
    }
    recd_wire_meta as_msg = *meta;
    as_msg.movable = &m;
    int rc = ws_on_msg(ctx, &m, &as_msg, err, errlen);
    recd_msg_free(&m);
    return rc;
}

/* A second receiver for the same input through the .rec block path: k's settings, an empty log.
 * ws_expect_same() then compares it with what k received after byte `before` of its log. */
static inline ws_sink ws_twin(const ws_sink *k, size_t *before)
{
    ws_sink t = *k;
    t.json = (recd_buf){0};
    *before = k->json.len;
    return t;
}

static inline void ws_expect_same(const ws_sink *k, size_t before, ws_sink *twin)
{
    if (twin->count != k->count || twin->untimed != k->untimed ||
        twin->json.len != k->json.len - before ||
        (twin->json.len && memcmp(twin->json.data, k->json.data + before, twin->json.len) != 0)) {
        fprintf(stderr, "the .rec block path delivered other messages than the message path\n");
        abort();
    }
    recd_buf_free(&twin->json);
}

static inline recd_msg_format ws_format_of(void *ctx, const char *key, size_t len, void **handle)
{
    ws_sink *k = ctx;
    if (k->known_session && strlen(k->known_session) == len &&
        memcmp(key, k->known_session, len) == 0) {
        *handle = &k->known_format;
        return k->known_format;
    }
    return RECD_MSG_FMT_NONE;
}

static inline recd_wire_decoder_config ws_config(ws_sink *k, recd_wire_encoding enc)
{
    recd_wire_decoder_config c = {.encoding = enc, .on_msg = ws_on_msg, .ctx = k};
    return c;
}

#endif
