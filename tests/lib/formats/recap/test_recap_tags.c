/* SPDX-License-Identifier: MIT */
/* Every Recap action tag 0x01..0x2B (and the 0xFF extension) encodes and decodes: events with
 * random field values, state tags from state changes, framing from idle ticks; plus the schema
 * table itself and the decoder's rejection of malformed action streams. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"
#include "recd/recap.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------------------------- */

typedef struct pool {
    void *p[4096];
    size_t n;
} pool;

static void *pool_alloc(pool *pl, size_t n)
{
    assert_true(pl->n < 4096);
    void *m = calloc(1, n ? n : 1);
    assert_non_null(m);
    return pl->p[pl->n++] = m;
}

static void pool_free(pool *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free(pl->p[i]);
    pl->n = 0;
}

static recd_recap_blob rand_blob(pool *pl, tu_rng *r, size_t max, bool utf8)
{
    uint8_t *m = pool_alloc(pl, max + 4);
    size_t n = tu_rand_below(r, (uint32_t)max + 1), k = 0;
    while (k < n) {
        if (!utf8) {
            m[k++] = (uint8_t)tu_rand(r);
        } else if (k + 2 <= n && tu_rand_below(r, 3) == 0) {
            m[k++] = 0xC3, m[k++] = (uint8_t)(0x80 + tu_rand_below(r, 0x40)); /* U+00C0.. */
        } else if (k + 4 <= n && tu_rand_below(r, 5) == 0) {
            m[k++] = 0xF0, m[k++] = 0x9F, m[k++] = 0x98, m[k++] = 0x80; /* U+1F600 */
        } else {
            m[k++] = (uint8_t)tu_rand_below(r, 0x80); /* ASCII, NUL included */
        }
    }
    recd_recap_blob b = {m, k};
    return b;
}

static recd_recap_item rand_item(pool *pl, tu_rng *r)
{
    recd_recap_item it;
    memset(&it, 0, sizeof(it));
    if (tu_rand_below(r, 4) == 0)
        return it;
    it.key = recd_recap_str(tu_rand_below(r, 2) ? "minecraft:stone" : "minecraft:netherite_axe");
    it.count = (uint8_t)tu_rand(r);
    it.flags = (uint8_t)tu_rand(r);
    it.data = rand_blob(pl, r, 40, false);
    return it;
}

static void rand_values(pool *pl, tu_rng *r, const recd_recap_field *f, size_t n,
                        recd_recap_value *v)
{
    for (size_t i = 0; i < n; i++) {
        switch (f[i].type) {
        case RECD_RECAP_T_U8: v[i].u = (uint32_t)tu_rand_below(r, 256); break;
        case RECD_RECAP_T_U16: v[i].u = (uint32_t)tu_rand_below(r, 65536); break;
        case RECD_RECAP_T_I32: v[i].i = (int32_t)(uint32_t)tu_rand(r); break;
        case RECD_RECAP_T_I64: v[i].i = (int64_t)tu_rand(r); break;
        case RECD_RECAP_T_F32: v[i].f32 = f32_from_bits((uint32_t)tu_rand(r)); break;
        case RECD_RECAP_T_F64: v[i].f64 = f64_from_bits(tu_rand(r)); break;
        case RECD_RECAP_T_STR: v[i].blob = rand_blob(pl, r, 250, true); break;
        case RECD_RECAP_T_TEXT: v[i].blob = rand_blob(pl, r, 700, true); break;
        case RECD_RECAP_T_BYTES: v[i].blob = rand_blob(pl, r, 300, false); break;
        case RECD_RECAP_T_ITEM: v[i].item = rand_item(pl, r); break;
        case RECD_RECAP_T_LIST: {
            size_t rows = tu_rand_below(r, 5);
            recd_recap_value *rv = pool_alloc(pl, rows * f[i].elem_count * sizeof(*rv));
            for (size_t k = 0; k < rows; k++)
                rand_values(pl, r, f[i].elem, f[i].elem_count, rv + k * f[i].elem_count);
            v[i].list.values = rv;
            v[i].list.count = rows;
            break;
        }
        case RECD_RECAP_T_MOVEMENT: break;
        }
    }
}

static void base_state(recd_recap_state *s)
{
    memset(s, 0, sizeof(*s));
    s->pos[0] = 10.5, s->pos[1] = 65, s->pos[2] = -3.25;
    s->rot[0] = 45;
    s->health = 20;
    s->equipment[5] = (recd_recap_item){recd_recap_str("minecraft:iron_helmet"), 1, 0, {NULL, 0}};
    s->inventory[9] = (recd_recap_item){recd_recap_str("minecraft:torch"), 16, 0, {NULL, 0}};
}

typedef struct members {
    recd_buf raw[8];
    int n;
} members;

static int grab(void *ctx, uint64_t off, uint64_t end, const uint8_t *d, size_t len)
{
    (void)off, (void)end;
    members *m = ctx;
    assert_true(m->n < 8);
    return recd_buf_append(&m->raw[m->n++], d, len);
}

static void split_members(const recd_buf *file, members *m)
{
    memset(m, 0, sizeof(*m));
    recd_recap_header h;
    int hs = recd_recap_header_decode(file->data, file->len, &h, NULL);
    assert_true(hs > 0);
    recd_gzip_scan scan;
    assert_int_equal(
        recd_gzip_members_read(file->data + hs, file->len - (size_t)hs, 0, grab, m, &scan), 0);
}

static void members_free(members *m)
{
    for (int i = 0; i < 8; i++)
        recd_buf_free(&m->raw[i]);
}

/* Decoded tick 1 (events and state) captured for comparison. */
typedef struct tick1 {
    const recd_recap_event *want;
    const recd_recap_state *want_state;
    size_t want_n;
    int ticks_seen;
    int events_checked;
} tick1;

static int on_tick1(void *ctx, uint64_t tick, const recd_recap_state *s,
                    const recd_recap_event *ev, size_t n)
{
    tick1 *t = ctx;
    t->ticks_seen++;
    if (tick != 1)
        return 0;
    assert_int_equal(n, t->want_n);
    for (size_t i = 0; i < n; i++) {
        assert_true(recd_recap_event_equal(&ev[i], &t->want[i]));
        t->events_checked++;
    }
    if (t->want_state) {
        assert_memory_equal(s->pos, t->want_state->pos, sizeof(s->pos));
        assert_int_equal(s->flags, t->want_state->flags);
        assert_int_equal(s->pose, t->want_state->pose);
        assert_int_equal(s->game_mode, t->want_state->game_mode);
        assert_int_equal(s->hand_state, t->want_state->hand_state);
        assert_true(s->health == t->want_state->health);
        for (int i = 0; i < 6; i++)
            assert_true(recd_recap_item_equal(&s->equipment[i], &t->want_state->equipment[i]));
        for (int i = 0; i < 41; i++)
            assert_true(recd_recap_item_equal(&s->inventory[i], &t->want_state->inventory[i]));
    }
    return 0;
}

/* Encodes tick 0 (keyframe, own member) and tick 1 (state s1, events) in a second member. */
static void encode_two_ticks(const recd_recap_state *s1, const recd_recap_event *ev, size_t n,
                             recd_buf *file)
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    recd_recap_state s0;
    base_state(&s0);
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, NULL, recd_buf_sink(file)), 0);
    assert_int_equal(recd_recap_encoder_tick(e, 0, &s0, NULL, 0), 0);
    assert_int_equal(recd_recap_encoder_flush(e), 0);
    assert_int_equal(recd_recap_encoder_tick(e, 1, s1, ev, n), 0);
    assert_int_equal(recd_recap_encoder_finish(e, NULL), 0);
    recd_recap_encoder_free(e);
}

/* ---- the table ----------------------------------------------------------------------------- */

static void test_table(void **st)
{
    (void)st;
    int kinds[4] = {0};
    for (int t = RECD_RECAP_TAG_FIRST; t <= RECD_RECAP_TAG_LAST; t++) {
        const recd_recap_tag_info *ti = recd_recap_tag_info_get((uint8_t)t);
        assert_non_null(ti);
        assert_int_equal(ti->tag, t);
        assert_non_null(ti->name);
        assert_ptr_equal(recd_recap_tag_by_name(ti->name), ti);
        kinds[ti->kind]++;
        for (size_t i = 0; i < ti->field_count; i++) {
            assert_non_null(ti->fields[i].name);
            assert_string_not_equal(recd_recap_ftype_name(ti->fields[i].type), "?");
            if (ti->fields[i].type == RECD_RECAP_T_LIST)
                assert_true(ti->fields[i].elem_count > 0);
        }
    }
    assert_int_equal(kinds[RECD_RECAP_KIND_STATE], 9);
    assert_int_equal(kinds[RECD_RECAP_KIND_FRAMING], 2);
    assert_int_equal(kinds[RECD_RECAP_KIND_EVENT], 32);
    assert_string_equal(recd_recap_tag_info_get(0x2B)->name, "BLOCK_CHANGES");
    assert_int_equal(recd_recap_tag_info_get(0x2B)->min_version, 4);
    assert_string_equal(recd_recap_tag_info_get(0xFF)->name, "EXTENSION");
    assert_null(recd_recap_tag_info_get(0));
    assert_null(recd_recap_tag_info_get(0x2C));
    assert_null(recd_recap_tag_by_name("NOPE"));
    assert_int_equal(recd_recap_tag_info_get(RECD_RECAP_FULL_STATE)->field_count, 22);
}

static void test_event_check(void **st)
{
    (void)st;
    recd_recap_value v[4] = {{.i = 1}, {.i = 2}, {.i = 3}, {.blob = recd_recap_str("minecraft:dirt")}};
    recd_recap_event ev = {RECD_RECAP_BLOCK_PLACE, 4, v};
    assert_int_equal(recd_recap_event_check(&ev), 0);
    ev.field_count = 3;
    assert_int_equal(recd_recap_event_check(&ev), -EINVAL);
    ev.field_count = 4;
    v[0].i = (int64_t)INT32_MAX + 1;
    assert_int_equal(recd_recap_event_check(&ev), -ERANGE);
    v[0].i = 1;
    v[3].blob = recd_recap_str("\xFF");
    assert_int_equal(recd_recap_event_check(&ev), -EINVAL);
    recd_recap_value hv = {.u = 256};
    recd_recap_event hand = {RECD_RECAP_SWING_ARM, 1, &hv};
    assert_int_equal(recd_recap_event_check(&hand), -ERANGE);
    recd_recap_event state = {RECD_RECAP_POSE, 1, &hv};
    assert_int_equal(recd_recap_event_check(&state), -EINVAL);
    recd_recap_event framing = {RECD_RECAP_NEXT_TICK, 0, NULL};
    assert_int_equal(recd_recap_event_check(&framing), -EINVAL);
    recd_recap_event totem = {RECD_RECAP_TOTEM, 0, NULL};
    assert_int_equal(recd_recap_event_check(&totem), 0);
}

/* ---- every event tag ------------------------------------------------------------------------- */

static void test_every_event_tag(void **st)
{
    (void)st;
    int tested = 0;
    for (int t = 1; t <= 0xFF; t++) {
        const recd_recap_tag_info *ti = recd_recap_tag_info_get((uint8_t)t);
        if (!ti || ti->kind != RECD_RECAP_KIND_EVENT)
            continue;
        for (uint64_t seed = 1; seed <= 8; seed++) {
            pool pl = {.n = 0};
            tu_rng r = {seed * 1000 + (uint64_t)t};
            recd_recap_value *v = pool_alloc(&pl, (ti->field_count + 1) * sizeof(*v));
            rand_values(&pl, &r, ti->fields, ti->field_count, v);
            recd_recap_event ev[2] = {{(uint8_t)t, ti->field_count, v},
                                      {RECD_RECAP_TOTEM, 0, NULL}};
            recd_recap_state s1;
            base_state(&s1);
            recd_buf file = {0};
            encode_two_ticks(&s1, ev, 2, &file);
            members m;
            split_members(&file, &m);
            assert_int_equal(m.n, 2);
            assert_int_equal(m.raw[1].data[0], t); /* tick 1 = this event, TOTEM, NEXT_TICK */
            assert_int_equal(m.raw[1].data[m.raw[1].len - 2], RECD_RECAP_TOTEM);
            assert_int_equal(m.raw[1].data[m.raw[1].len - 1], RECD_RECAP_NEXT_TICK);
            tick1 cap = {ev, &s1, 2, 0, 0};
            recd_recap_callbacks cb = {NULL, on_tick1, NULL, NULL, &cap};
            recd_recap_decode_result res;
            assert_int_equal(recd_recap_decode(file.data, file.len, NULL, &cb, &res, NULL), 0);
            assert_int_equal(cap.events_checked, 2);
            assert_int_equal(res.ticks, 2);
            members_free(&m);
            recd_buf_free(&file);
            pool_free(&pl);
        }
        tested++;
    }
    assert_int_equal(tested, 32 + 1); /* 32 event tags of 0x01..0x2B, plus EXTENSION */
}

/* ---- every state tag ----------------------------------------------------------------------- */

static void test_every_state_tag(void **st)
{
    (void)st;
    int tested = 0;
    for (int t = RECD_RECAP_TAG_FIRST; t <= RECD_RECAP_TAG_LAST; t++) {
        const recd_recap_tag_info *ti = recd_recap_tag_info_get((uint8_t)t);
        if (ti->kind != RECD_RECAP_KIND_STATE)
            continue;
        recd_recap_state s1;
        base_state(&s1);
        switch (t) {
        case RECD_RECAP_FULL_STATE: break; /* checked on member 1 below */
        case RECD_RECAP_MOVEMENT: s1.pos[1] += 1.25; break;
        case RECD_RECAP_STATE_FLAGS: s1.flags = RECD_RECAP_FLAG_SNEAKING | RECD_RECAP_FLAG_ON_GROUND; break;
        case RECD_RECAP_EQUIPMENT:
            s1.equipment[0] = (recd_recap_item){recd_recap_str("minecraft:bow"), 1, 1, recd_recap_str("nbt")};
            break;
        case RECD_RECAP_HEALTH: s1.health = 13.5f; break;
        case RECD_RECAP_GAME_MODE: s1.game_mode = 1; break;
        case RECD_RECAP_HAND_STATE: s1.hand_state = 3; break;
        case RECD_RECAP_POSE: s1.pose = 5; break;
        case RECD_RECAP_FULL_INVENTORY:
            s1.inventory[9].key.len = 0; /* cleared */
            s1.inventory[40] = (recd_recap_item){recd_recap_str("minecraft:totem_of_undying"), 1, 0, {NULL, 0}};
            break;
        default: fail();
        }
        recd_buf file = {0};
        encode_two_ticks(&s1, NULL, 0, &file);
        members m;
        split_members(&file, &m);
        assert_int_equal(m.raw[0].data[0], RECD_RECAP_FULL_STATE);
        if (t == RECD_RECAP_FULL_STATE) {
            assert_int_equal(m.n, 2); /* tick 1 is idle: finish writes SKIP_TICKS 1 */
            assert_int_equal(m.raw[1].len, 2);
            assert_int_equal(m.raw[1].data[0], RECD_RECAP_SKIP_TICKS);
        } else {
            assert_int_equal(m.n, 2);
            assert_int_equal(m.raw[1].data[0], t);
            /* exactly one action, then NEXT_TICK */
            recap_cur c = {m.raw[1].data, m.raw[1].len, 1};
            recap_arena a = {0};
            if (t == RECD_RECAP_MOVEMENT) {
                assert_int_equal(recap_movement_parse(&c, NULL), RECAP_OK);
            } else {
                size_t first = recap_arena_push(&a, ti->field_count);
                assert_int_equal(recap_fields_parse(&c, ti->fields, ti->field_count, &a, first),
                                 RECAP_OK);
            }
            recap_arena_free(&a);
            assert_int_equal(c.pos + 1, m.raw[1].len);
            assert_int_equal(m.raw[1].data[c.pos], RECD_RECAP_NEXT_TICK);
        }
        tick1 cap = {NULL, &s1, 0, 0, 0};
        recd_recap_callbacks cb = {NULL, on_tick1, NULL, NULL, &cap};
        recd_recap_decode_result res;
        assert_int_equal(recd_recap_decode(file.data, file.len, NULL, &cb, &res, NULL), 0);
        assert_int_equal(res.ticks, 2);
        members_free(&m);
        recd_buf_free(&file);
        tested++;
    }
    assert_int_equal(tested, 9);
}

static int count_skips(void *ctx, uint64_t first, uint64_t count)
{
    (void)first;
    *(uint64_t *)ctx += count;
    return 0;
}

static void test_framing_tags(void **st)
{
    (void)st;
    recd_recap_state s;
    base_state(&s);
    recd_buf file = {0};
    recd_recap_header h;
    recd_recap_header_init(&h);
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, NULL, recd_buf_sink(&file)), 0);
    for (int t = 0; t < 4; t++)
        assert_int_equal(recd_recap_encoder_tick(e, (uint64_t)t, &s, NULL, 0), 0);
    assert_int_equal(recd_recap_encoder_finish(e, NULL), 0);
    recd_recap_encoder_free(e);
    members m;
    split_members(&file, &m);
    size_t n = m.raw[0].len;
    assert_int_equal(m.raw[0].data[n - 3], RECD_RECAP_NEXT_TICK);
    assert_int_equal(m.raw[0].data[n - 2], RECD_RECAP_SKIP_TICKS);
    assert_int_equal(m.raw[0].data[n - 1], 3);
    uint64_t skipped = 0;
    recd_recap_callbacks cb = {NULL, NULL, count_skips, NULL, &skipped};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(file.data, file.len, NULL, &cb, &res, NULL), 0);
    assert_int_equal(skipped, 3);
    assert_int_equal(res.ticks, 4);
    members_free(&m);
    recd_buf_free(&file);
}

/* ---- hand-made action streams ---------------------------------------------------------------- */

static recd_buf keyframe; /* FULL_STATE ... NEXT_TICK of base_state */

static void make_keyframe(void)
{
    if (keyframe.len)
        return;
    recd_recap_state s;
    base_state(&s);
    recd_buf file = {0};
    encode_two_ticks(&s, NULL, 0, &file);
    members m;
    split_members(&file, &m);
    /* member 1 is the keyframe tick followed by nothing else */
    assert_int_equal(recd_buf_append(&keyframe, m.raw[0].data, m.raw[0].len), 0);
    assert_int_equal(keyframe.data[keyframe.len - 1], RECD_RECAP_NEXT_TICK);
    members_free(&m);
    recd_buf_free(&file);
}

/* Header (version) + one member: [keyframe if with_kf] + body. */
static void crafted(recd_buf *file, uint8_t version, bool with_kf, const uint8_t *body, size_t n)
{
    make_keyframe();
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.version = version;
    file->len = 0;
    assert_int_equal(recd_recap_header_encode(&h, file), 0);
    recd_buf raw = {0};
    if (with_kf)
        assert_int_equal(recd_buf_append(&raw, keyframe.data, keyframe.len), 0);
    assert_int_equal(recd_buf_append(&raw, body, n), 0);
    assert_int_equal(recd_gzip_member_write(NULL, 6, raw.data, raw.len, file), 0);
    recd_buf_free(&raw);
}

typedef struct ext_seen {
    int ticks;
    size_t n;
    uint8_t tags[4];
    uint8_t ext_id;
    size_t ext_len;
} ext_seen;

static int on_ext_tick(void *ctx, uint64_t tick, const recd_recap_state *s,
                       const recd_recap_event *ev, size_t n)
{
    (void)s;
    ext_seen *x = ctx;
    x->ticks++;
    if (tick == 1) {
        x->n = n;
        for (size_t i = 0; i < n && i < 4; i++)
            x->tags[i] = ev[i].tag;
        if (n >= 2) {
            x->ext_id = (uint8_t)ev[1].fields[0].u;
            x->ext_len = ev[1].fields[1].blob.len;
        }
    }
    return 0;
}

static void test_extension_skipped(void **st)
{
    (void)st;
    /* SWING_ARM, EXTENSION id 7 with 5 opaque bytes, TOTEM, NEXT_TICK. */
    static const uint8_t body[] = {0x05, 0x01, 0xFF, 7, 0, 0, 0, 5, 0xDE, 0xAD, 0xBE, 0xEF, 0x0C,
                                   0x23, 0x0B};
    recd_buf file = {0};
    crafted(&file, 4, true, body, sizeof(body));
    ext_seen x = {0};
    recd_recap_callbacks cb = {NULL, on_ext_tick, NULL, NULL, &x};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(file.data, file.len, NULL, &cb, &res, NULL), 0);
    assert_int_equal(res.ticks, 2);
    assert_int_equal(x.n, 3);
    assert_int_equal(x.tags[0], RECD_RECAP_SWING_ARM);
    assert_int_equal(x.tags[1], RECD_RECAP_EXTENSION);
    assert_int_equal(x.tags[2], RECD_RECAP_TOTEM);
    assert_int_equal(x.ext_id, 7);
    assert_int_equal(x.ext_len, 5);
    recd_buf_free(&file);
}

static void expect_bad(uint8_t version, bool with_kf, const uint8_t *body, size_t n,
                       const char *code)
{
    recd_buf file = {0};
    crafted(&file, version, with_kf, body, n);
    recd_report rep = {0};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_verify(file.data, file.len, &res, &rep), -EBADMSG);
    assert_true(rep.count >= 1);
    if (strcmp(rep.items[0].code, code) != 0)
        fail_msg("expected %s, got %s: %s", code, rep.items[0].code, rep.items[0].message);
    assert_int_equal(rep.items[0].severity, RECD_SEV_ERROR);
    recd_recap_header h;
    int hs = recd_recap_header_decode(file.data, file.len, &h, NULL);
    assert_int_equal(rep.items[0].offset, (uint64_t)hs); /* the member's offset */
    /* Nothing of the bad member is kept. */
    assert_int_equal(res.ticks, 0);
    assert_int_equal(res.valid_end, (uint64_t)hs);
    recd_report_free(&rep);
    recd_buf_free(&file);
}

static void test_rejections(void **st)
{
    (void)st;
    static const uint8_t skip0[] = {0x0C, 0x00};
    expect_bad(4, true, skip0, sizeof(skip0), "bad-skip");
    static const uint8_t unknown[] = {0x2C, 0x0B};
    expect_bad(4, true, unknown, sizeof(unknown), "unknown-tag");
    static const uint8_t unknown2[] = {0x80, 0x0B};
    expect_bad(4, true, unknown2, sizeof(unknown2), "unknown-tag");
    static const uint8_t zero[] = {0x00};
    expect_bad(4, true, zero, sizeof(zero), "unknown-tag");
    static const uint8_t changes[] = {0x2B, 0, 0, 0x0B};
    expect_bad(3, true, changes, sizeof(changes), "tag-version");
    static const uint8_t cut[] = {0x07, 0, 0, 0, 1, 0, 0};
    expect_bad(4, true, cut, sizeof(cut), "truncated-payload");
    static const uint8_t cut_ext[] = {0xFF, 1, 0, 0, 0, 9, 1, 2, 0x0B};
    expect_bad(4, true, cut_ext, sizeof(cut_ext), "truncated-payload");
    static const uint8_t inside[] = {0x05, 0x00, 0x0C, 0x01};
    expect_bad(4, true, inside, sizeof(inside), "skip-inside-tick");
    static const uint8_t open_tick[] = {0x05, 0x00};
    expect_bad(4, true, open_tick, sizeof(open_tick), "unterminated-tick");
    static const uint8_t no_kf[] = {0x05, 0x00, 0x0B};
    expect_bad(4, false, no_kf, sizeof(no_kf), "no-keyframe");
    static const uint8_t skip_first[] = {0x0C, 0x05};
    expect_bad(4, false, skip_first, sizeof(skip_first), "no-keyframe");
    static const uint8_t bad_equip[] = {0x04, 6, 0x00, 0x0B};
    expect_bad(4, true, bad_equip, sizeof(bad_equip), "bad-slot");
    static const uint8_t bad_inv[] = {0x2A, 0, 2, 5, 0x00, 5, 0x00, 0x0B};
    expect_bad(4, true, bad_inv, sizeof(bad_inv), "bad-slot");
    static const uint8_t inv_range[] = {0x2A, 0, 1, 41, 0x00, 0x0B};
    expect_bad(4, true, inv_range, sizeof(inv_range), "bad-slot");
    static const uint8_t mv_empty[] = {0x02, 0x00, 0x0B};
    expect_bad(4, true, mv_empty, sizeof(mv_empty), "bad-movement");
    static const uint8_t mv_zero_rot[] = {0x02, 0x41, 0x00, 0, 1, 0x0B};
    expect_bad(4, true, mv_zero_rot, sizeof(mv_zero_rot), "bad-movement");
    static const uint8_t mv_reserved[] = {0x02, 0x80, 0xC1, 0, 1, 0x0B};
    expect_bad(4, true, mv_reserved, sizeof(mv_reserved), "bad-movement");
    static const uint8_t bad_utf8[] = {0x1D, 0, 2, 0xC3, 0x28, 0x0B};
    expect_bad(4, true, bad_utf8, sizeof(bad_utf8), "bad-utf8");
    static const uint8_t bad_key[] = {0x04, 0, 1, 0xFF, 1, 0, 0, 0, 0x0B};
    expect_bad(4, true, bad_key, sizeof(bad_key), "bad-utf8");
}

/* A valid empty tick (NEXT_TICK alone) and a version-3 file without BLOCK_CHANGES are fine. */
static void test_lenient_cases(void **st)
{
    (void)st;
    static const uint8_t empty_tick[] = {0x0B, 0x0C, 0x02, 0x1D, 0, 0, 0x0B};
    recd_buf file = {0};
    crafted(&file, 3, true, empty_tick, sizeof(empty_tick));
    uint64_t skipped = 0;
    recd_recap_callbacks cb = {NULL, NULL, count_skips, NULL, &skipped};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(file.data, file.len, NULL, &cb, &res, NULL), 0);
    assert_int_equal(res.ticks, 1 + 1 + 2 + 1);
    assert_int_equal(skipped, 3);
    recd_buf_free(&file);
}

static void test_long_text_truncated(void **st)
{
    (void)st;
    /* 70000 bytes of "€" (3 bytes each) cut to 65535 -> 21845 whole code points. */
    size_t n = 70002;
    uint8_t *msg = malloc(n);
    for (size_t i = 0; i < n; i += 3)
        msg[i] = 0xE2, msg[i + 1] = 0x82, msg[i + 2] = 0xAC;
    recd_recap_value v = {.blob = {msg, n}};
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &v};
    recd_recap_state s;
    base_state(&s);
    recd_buf file = {0};
    encode_two_ticks(&s, &ev, 1, &file);
    members m;
    split_members(&file, &m);
    assert_int_equal(ld_be16(m.raw[1].data + 1), 65535);
    members_free(&m);
    free(msg);
    recd_buf_free(&file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_event_check),
        cmocka_unit_test(test_every_event_tag),
        cmocka_unit_test(test_every_state_tag),
        cmocka_unit_test(test_framing_tags),
        cmocka_unit_test(test_extension_skipped),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_lenient_cases),
        cmocka_unit_test(test_long_text_truncated),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    recd_buf_free(&keyframe);
    return rc;
}
