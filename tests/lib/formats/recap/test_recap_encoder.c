/* SPDX-License-Identifier: MIT */
/* Recap encoder/decoder: SKIP_TICKS chains, keyframes, determinism, random round trips (fixed
 * seeds), cut last member, unfinalized header, the 512-byte idle-minute target, and the
 * decode -> re-encode byte identity that export/import relies on. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"
#include "recd/format.h"
#include "recd/recap.h"
#include "recd/formats/recap/recap_slot_mask.h"
#include "testutil.h"

/* ---- helpers: memory pool, realistic state, random values --------------------------------- */

typedef struct pool {
    void **p;
    size_t n, cap;
} pool;

static void *pool_alloc(pool *pl, size_t n)
{
    if (pl->n == pl->cap) {
        pl->cap = pl->cap ? pl->cap * 2 : 256;
        pl->p = realloc(pl->p, pl->cap * sizeof(void *));
        assert_non_null(pl->p);
    }
    void *m = calloc(1, n ? n : 1);
    assert_non_null(m);
    pl->p[pl->n++] = m;
    return m;
}

static void pool_free(pool *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free(pl->p[i]);
    free(pl->p);
    memset(pl, 0, sizeof(*pl));
}

static recd_recap_item item(const char *key, uint8_t count, uint8_t flags, const char *data)
{
    recd_recap_item it = {recd_recap_str(key), count, flags, recd_recap_str(data)};
    return it;
}

static void realistic_state(recd_recap_state *s)
{
    memset(s, 0, sizeof(*s));
    s->pos[0] = 131.5, s->pos[1] = 64.0, s->pos[2] = -287.69999998807907;
    s->rot[0] = (double)178.35f, s->rot[1] = (double)12.6f, s->rot[2] = (double)178.35f;
    s->vel[1] = -0.0784000015258789;
    s->flags = RECD_RECAP_FLAG_ON_GROUND;
    s->health = 20.0f;
    s->equipment[0] = item("minecraft:diamond_sword", 1, 1, "{enchantments:{sharpness:5}}");
    s->equipment[1] = item("minecraft:shield", 1, 0, "");
    s->equipment[2] = item("minecraft:diamond_boots", 1, 0, "");
    s->equipment[3] = item("minecraft:diamond_leggings", 1, 0, "");
    s->equipment[4] = item("minecraft:diamond_chestplate", 1, 1, "{enchantments:{protection:4}}");
    s->equipment[5] = item("minecraft:diamond_helmet", 1, 0, "");
    s->inventory[0] = s->equipment[0];
    s->inventory[1] = item("minecraft:bow", 1, 0, "");
    s->inventory[2] = item("minecraft:arrow", 64, 0, "");
    s->inventory[3] = item("minecraft:cooked_beef", 32, 0, "");
    s->inventory[36] = s->equipment[2];
    s->inventory[37] = s->equipment[3];
    s->inventory[38] = s->equipment[4];
    s->inventory[39] = s->equipment[5];
    s->inventory[40] = s->equipment[1];
}

static void realistic_header(recd_recap_header *h)
{
    recd_recap_header_init(h);
    h->name = recd_recap_str("arena-duel");
    h->player_name = recd_recap_str("Notch");
    h->player_uuid = recd_recap_str("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    h->world_name = recd_recap_str("world");
    h->origin[0] = 128, h->origin[1] = 64, h->origin[2] = -256;
    h->start_ms = 1767225600000;
    h->weather = 1;
    h->time_of_day = 6000;
}

static size_t rand_utf8(tu_rng *r, uint8_t *out, size_t max)
{
    size_t n = 0, want = tu_rand_below(r, (uint32_t)max + 1);
    while (n < want) {
        uint32_t kind = tu_rand_below(r, 4), cp;
        if (kind == 0 && n + 1 <= want) {
            out[n++] = (uint8_t)(0x20 + tu_rand_below(r, 0x5F));
            continue;
        }
        if (kind == 1 && n + 2 <= want) {
            cp = 0x80 + tu_rand_below(r, 0x780);
            out[n++] = (uint8_t)(0xC0 | (cp >> 6));
            out[n++] = (uint8_t)(0x80 | (cp & 0x3F));
            continue;
        }
        if (kind == 2 && n + 3 <= want) {
            cp = 0x800 + tu_rand_below(r, 0xD000 - 0x800);
            out[n++] = (uint8_t)(0xE0 | (cp >> 12));
            out[n++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = (uint8_t)(0x80 | (cp & 0x3F));
            continue;
        }
        if (kind == 3 && n + 4 <= want) {
            cp = 0x10000 + tu_rand_below(r, 0x100000);
            out[n++] = (uint8_t)(0xF0 | (cp >> 18));
            out[n++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
            out[n++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = (uint8_t)(0x80 | (cp & 0x3F));
            continue;
        }
        out[n++] = 'a';
    }
    return n;
}

static recd_recap_blob rand_blob(pool *pl, tu_rng *r, size_t max, bool utf8)
{
    uint8_t *m = pool_alloc(pl, max);
    size_t n;
    if (utf8) {
        n = rand_utf8(r, m, max);
    } else {
        n = tu_rand_below(r, (uint32_t)max + 1);
        for (size_t i = 0; i < n; i++)
            m[i] = (uint8_t)tu_rand(r);
    }
    recd_recap_blob b = {m, n};
    return b;
}

static const char *keys[] = {"minecraft:stone", "minecraft:diamond_sword", "minecraft:bow",
                             "minecraft:arrow", "minecraft:golden_apple", "minecraft:ender_pearl"};

static recd_recap_item rand_item(pool *pl, tu_rng *r)
{
    recd_recap_item it;
    memset(&it, 0, sizeof(it));
    if (tu_rand_below(r, 5) == 0)
        return it;
    it.key = recd_recap_str(keys[tu_rand_below(r, 6)]);
    it.count = (uint8_t)(1 + tu_rand_below(r, 64));
    it.flags = (uint8_t)tu_rand_below(r, 4);
    if (tu_rand_below(r, 3) == 0)
        it.data = rand_blob(pl, r, 24, false);
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
        case RECD_RECAP_T_STR: v[i].blob = rand_blob(pl, r, 40, true); break;
        case RECD_RECAP_T_TEXT: v[i].blob = rand_blob(pl, r, 300, true); break;
        case RECD_RECAP_T_BYTES: v[i].blob = rand_blob(pl, r, 64, false); break;
        case RECD_RECAP_T_ITEM: v[i].item = rand_item(pl, r); break;
        case RECD_RECAP_T_LIST: {
            size_t rows = tu_rand_below(r, 4);
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

static uint8_t event_tags[64];
static size_t n_event_tags;

static void collect_event_tags(void)
{
    n_event_tags = 0;
    for (int t = 0; t < 256; t++) {
        const recd_recap_tag_info *ti = recd_recap_tag_info_get((uint8_t)t);
        if (ti && ti->kind == RECD_RECAP_KIND_EVENT)
            event_tags[n_event_tags++] = (uint8_t)t;
    }
}

static recd_recap_event rand_event(pool *pl, tu_rng *r)
{
    uint8_t tag = event_tags[tu_rand_below(r, (uint32_t)n_event_tags)];
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(tag);
    recd_recap_value *v = pool_alloc(pl, ti->field_count * sizeof(*v));
    rand_values(pl, r, ti->fields, ti->field_count, v);
    recd_recap_event ev = {tag, ti->field_count, v};
    return ev;
}

/* ---- a random recording ---------------------------------------------------------------------- */

typedef struct step {
    uint64_t tick;
    recd_recap_state s;
    recd_recap_event *ev;
    size_t nev;
    bool flush_after;
} step;

typedef struct script {
    step *steps;
    size_t n;
    pool pl;
} script;

static double rand_channel_move(tu_rng *r, double cur)
{
    switch (tu_rand_below(r, 20)) {
    case 0: return cur + tu_rand_double(r, -0.004, 0.004); /* jitter below the tolerance */
    case 1: return tu_rand_double(r, -3e7, 3e7);            /* teleport */
    case 2: return cur + (double)(float)tu_rand_double(r, -2000, 2000);
    case 3: {
        static const double odd[] = {NAN, INFINITY, -INFINITY, 1e300, -1e300, 0.0, -0.0, 327.67};
        return odd[tu_rand_below(r, 8)];
    }
    case 4: case 5: case 6: case 7: return cur;
    default: return isfinite(cur) && fabs(cur) < 1e8 ? cur + tu_rand_double(r, -0.6, 0.6)
                                                      : tu_rand_double(r, -100, 100);
    }
}

static void make_script(script *sc, uint64_t seed, size_t n_steps, double change_rate)
{
    tu_rng r = {seed};
    memset(sc, 0, sizeof(*sc));
    sc->steps = calloc(n_steps, sizeof(step));
    assert_non_null(sc->steps);
    sc->n = n_steps;
    recd_recap_state cur;
    realistic_state(&cur);
    uint64_t tick = 1000 + tu_rand_below(&r, 1000);
    for (size_t i = 0; i < n_steps; i++) {
        step *st = &sc->steps[i];
        if (i > 0)
            tick += tu_rand_below(&r, 10) == 0 ? 1 + tu_rand_below(&r, 600) : 1;
        st->tick = tick;
        bool moving = tu_rand_double(&r, 0, 1) < change_rate;
        if (moving) {
            for (int c = 0; c < 3; c++) {
                if (tu_rand_below(&r, 2))
                    cur.pos[c] = rand_channel_move(&r, cur.pos[c]);
                if (tu_rand_below(&r, 3) == 0)
                    cur.rot[c] = tu_rand_below(&r, 2) ? (double)(float)tu_rand_double(&r, -180, 180)
                                                      : rand_channel_move(&r, cur.rot[c]);
                if (tu_rand_below(&r, 4) == 0)
                    cur.vel[c] = rand_channel_move(&r, cur.vel[c]);
            }
            if (tu_rand_below(&r, 10) == 0)
                cur.flags = (uint16_t)tu_rand(&r);
            if (tu_rand_below(&r, 15) == 0)
                cur.health = f32_from_bits((uint32_t)tu_rand(&r));
            if (tu_rand_below(&r, 20) == 0)
                cur.absorption = (float)tu_rand_below(&r, 20);
            if (tu_rand_below(&r, 30) == 0)
                cur.game_mode = (uint8_t)tu_rand_below(&r, 4);
            if (tu_rand_below(&r, 20) == 0)
                cur.pose = (uint8_t)tu_rand_below(&r, 8);
            if (tu_rand_below(&r, 20) == 0)
                cur.hand_state = (uint8_t)tu_rand_below(&r, 4);
            if (tu_rand_below(&r, 12) == 0)
                cur.equipment[tu_rand_below(&r, 6)] = rand_item(&sc->pl, &r);
            for (int k = (int)tu_rand_below(&r, 8); k < 3; k++)
                cur.inventory[tu_rand_below(&r, 41)] = rand_item(&sc->pl, &r);
        }
        st->s = cur;
        if (tu_rand_below(&r, 5) == 0) {
            st->nev = 1 + tu_rand_below(&r, 3);
            st->ev = pool_alloc(&sc->pl, st->nev * sizeof(recd_recap_event));
            for (size_t k = 0; k < st->nev; k++)
                st->ev[k] = rand_event(&sc->pl, &r);
        }
        st->flush_after = tu_rand_below(&r, 40) == 0;
    }
}

static void free_script(script *sc)
{
    free(sc->steps);
    pool_free(&sc->pl);
}

static void encode_script(const script *sc, const recd_recap_encoder_options *opt, bool patch,
                          recd_buf *out, recd_recap_finish_info *fi)
{
    recd_recap_header h;
    realistic_header(&h);
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, opt, recd_buf_sink(out)), 0);
    for (size_t i = 0; i < sc->n; i++) {
        const step *st = &sc->steps[i];
        assert_int_equal(recd_recap_encoder_tick(e, st->tick, &st->s, st->ev, st->nev), 0);
        if (st->flush_after)
            assert_int_equal(recd_recap_encoder_flush(e), 0);
    }
    recd_recap_finish_info info;
    assert_int_equal(recd_recap_encoder_finish(e, &info), 0);
    recd_recap_encoder_free(e);
    if (patch)
        assert_int_equal(recd_recap_header_patch(out->data, out->len, (uint32_t)info.frame_count,
                                                 info.end_ms),
                         0);
    if (fi)
        *fi = info;
}

/* ---- decoding checks ----------------------------------------------------------------------- */

static bool channel_ok(double want, double got)
{
    if (f64_to_bits(want) == f64_to_bits(got))
        return true;
    return isfinite(want) && isfinite(got) && fabs(want - got) <= RECD_RECAP_SHORT_TOLERANCE;
}

static void check_state(const recd_recap_state *want, const recd_recap_state *got)
{
    for (int c = 0; c < 3; c++) {
        if (!channel_ok(want->pos[c], got->pos[c]) || !channel_ok(want->rot[c], got->rot[c]) ||
            !channel_ok(want->vel[c], got->vel[c]))
            fail_msg("channel %d: pos %.17g/%.17g rot %.17g/%.17g vel %.17g/%.17g", c,
                     want->pos[c], got->pos[c], want->rot[c], got->rot[c], want->vel[c],
                     got->vel[c]);
    }
    assert_int_equal(want->flags, got->flags);
    assert_int_equal(want->pose, got->pose);
    assert_int_equal(want->game_mode, got->game_mode);
    assert_int_equal(want->hand_state, got->hand_state);
    assert_int_equal(f32_to_bits(want->health), f32_to_bits(got->health));
    assert_int_equal(f32_to_bits(want->absorption), f32_to_bits(got->absorption));
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        assert_true(recd_recap_item_equal(&want->equipment[i], &got->equipment[i]));
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++)
        assert_true(recd_recap_item_equal(&want->inventory[i], &got->inventory[i]));
}

/* Deep copy of a decoded state (items re-encoded into owned buffers). */
typedef struct held_state {
    recd_recap_state s;
    recd_buf items[RECD_RECAP_EQUIPMENT_SLOTS + RECD_RECAP_INVENTORY_SLOTS];
} held_state;

static void hold(held_state *h, const recd_recap_state *s)
{
    h->s = *s;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS + RECD_RECAP_INVENTORY_SLOTS; i++) {
        recd_recap_item *it = i < 6 ? &h->s.equipment[i] : &h->s.inventory[i - 6];
        h->items[i].len = 0;
        assert_int_equal(recap_item_write(&h->items[i], it), 0);
        recap_cur c = {h->items[i].data, h->items[i].len, 0};
        assert_int_equal(recap_item_parse(&c, it), RECAP_OK);
    }
}

static void held_free(held_state *h)
{
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS + RECD_RECAP_INVENTORY_SLOTS; i++)
        recd_buf_free(&h->items[i]);
}

typedef struct checker {
    const script *sc;
    uint64_t first_tick;
    size_t next_step; /* index of the first step not yet checked */
    uint64_t ticks_seen;
    held_state last;
    bool have_last;
    uint64_t member_end_ticks[4096];
    uint64_t member_end_offs[4096];
    size_t members;
    uint64_t skipped_ticks;
} checker;

/* Steps fed at file ticks [from, from+count) that the decoder says were idle. */
static void check_idle(checker *k, uint64_t from, uint64_t count)
{
    while (k->next_step < k->sc->n) {
        const step *st = &k->sc->steps[k->next_step];
        uint64_t t = st->tick - k->first_tick;
        if (t >= from + count)
            break;
        assert_true(t >= from);
        assert_int_equal(st->nev, 0);
        assert_true(k->have_last);
        check_state(&st->s, &k->last.s);
        k->next_step++;
    }
}

static int ck_tick(void *ctx, uint64_t tick, const recd_recap_state *s, const recd_recap_event *ev,
                   size_t n)
{
    checker *k = ctx;
    assert_int_equal(tick, k->ticks_seen);
    k->ticks_seen++;
    assert_true(k->next_step < k->sc->n);
    const step *st = &k->sc->steps[k->next_step++];
    assert_int_equal(st->tick - k->first_tick, tick);
    check_state(&st->s, s);
    assert_int_equal(n, st->nev);
    for (size_t i = 0; i < n; i++)
        assert_true(recd_recap_event_equal(&ev[i], &st->ev[i]));
    hold(&k->last, s);
    k->have_last = true;
    return 0;
}

static int ck_skip(void *ctx, uint64_t first, uint64_t count)
{
    checker *k = ctx;
    assert_int_equal(first, k->ticks_seen);
    assert_true(count >= 1);
    k->ticks_seen += count;
    k->skipped_ticks += count;
    check_idle(k, first, count);
    return 0;
}

static int ck_member(void *ctx, uint64_t end_tick, uint64_t end_off)
{
    checker *k = ctx;
    assert_int_equal(end_tick, k->ticks_seen);
    if (k->members < 4096) {
        k->member_end_ticks[k->members] = end_tick;
        k->member_end_offs[k->members] = end_off;
    }
    k->members++;
    return 0;
}

static checker *check_decode(const script *sc, const uint8_t *buf, size_t len,
                             recd_recap_decode_result *res, recd_report *rep)
{
    checker *k = calloc(1, sizeof(*k));
    assert_non_null(k);
    k->sc = sc;
    k->first_tick = sc->steps[0].tick;
    recd_recap_callbacks cb = {NULL, ck_tick, ck_skip, ck_member, k};
    int rc = recd_recap_decode(buf, len, NULL, &cb, res, rep);
    if (rc != 0 && rep) {
        for (size_t i = 0; i < rep->count; i++)
            print_message("problem %s @%llu: %s\n", rep->items[i].code,
                          (unsigned long long)rep->items[i].offset, rep->items[i].message);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(k->ticks_seen, res->ticks);
    return k;
}

static void checker_free(checker *k)
{
    held_free(&k->last);
    free(k);
}

/* ---- member inspection --------------------------------------------------------------------- */

typedef struct tags_out {
    uint8_t *tags;
    uint64_t *at; /* file tick of each action */
    size_t n, cap;
    recd_buf raw; /* inflated data of all members */
} tags_out;

static int gather(void *ctx, uint64_t off, uint64_t end, const uint8_t *d, size_t len)
{
    (void)off, (void)end;
    tags_out *o = ctx;
    return recd_buf_append(&o->raw, d, len);
}

/* Action tags of a whole file, in order. */
static void file_tags(const uint8_t *buf, size_t len, tags_out *o)
{
    recd_recap_header h;
    int hs = recd_recap_header_decode(buf, len, &h, NULL);
    assert_true(hs > 0);
    recd_gzip_scan scan;
    assert_int_equal(recd_gzip_members_read(buf + hs, len - (size_t)hs, 0, gather, o, &scan), 0);
    recap_cur c = {o->raw.data, o->raw.len, 0};
    recap_arena a = {0};
    uint64_t tick = 0;
    while (c.pos < c.len) {
        uint8_t tag = c.p[c.pos++];
        if (o->n == o->cap) {
            o->cap = o->cap ? o->cap * 2 : 256;
            o->tags = realloc(o->tags, o->cap);
            o->at = realloc(o->at, o->cap * sizeof(uint64_t));
        }
        o->at[o->n] = tick;
        o->tags[o->n++] = tag;
        const recd_recap_tag_info *ti = recd_recap_tag_info_get(tag);
        assert_non_null(ti);
        if (tag == RECD_RECAP_MOVEMENT) {
            assert_int_equal(recap_movement_parse(&c, NULL), RECAP_OK);
        } else {
            recap_arena_reset(&a);
            size_t first = recap_arena_push(&a, ti->field_count);
            assert_int_equal(recap_fields_parse(&c, ti->fields, ti->field_count, &a, first), RECAP_OK);
            if (tag == RECD_RECAP_SKIP_TICKS)
                tick += a.v[first].u;
        }
        if (tag == RECD_RECAP_NEXT_TICK)
            tick++;
    }
    recap_arena_free(&a);
}

static void tags_free(tags_out *o)
{
    free(o->tags);
    free(o->at);
    recd_buf_free(&o->raw);
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* A header's start comes from the file or the peer: one near the end of time gives an end that
 * holds at INT64_MAX instead of overflowing (found by fuzz_recap_decoder). */
static void test_end_time_holds_at_the_limit(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    h.start_ms = INT64_MAX - 60;
    recd_recap_state s;
    realistic_state(&s);
    recd_recap_encoder_options opt = {0};
    recd_buf out = {0};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&out)), 0);
    for (uint64_t t = 0; t < 3; t++)
        assert_int_equal(recd_recap_encoder_tick(e, t, &s, NULL, 0), 0);
    recd_recap_finish_info fi;
    assert_int_equal(recd_recap_encoder_finish(e, &fi), 0);
    recd_recap_encoder_free(e);
    assert_true(fi.end_ms == INT64_MAX);
    recd_buf_free(&out);

    assert_true(recd_recap_time_after(1000, 3) == 1150);
    assert_true(recd_recap_time_after(1000, -3) == 850);
    assert_true(recd_recap_time_after(INT64_MAX - 49, 1) == INT64_MAX);
    assert_true(recd_recap_time_after(INT64_MAX - 50, 1) == INT64_MAX);
    assert_true(recd_recap_time_after(INT64_MAX - 51, 1) == INT64_MAX - 1);
    assert_true(recd_recap_time_after(INT64_MIN + 10, -1) == INT64_MIN);
    assert_true(recd_recap_time_after(0, INT64_MAX) == INT64_MAX);
    assert_true(recd_recap_time_after(0, INT64_MIN) == INT64_MIN);
}

static void test_skip_chain_1000_idle(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    recd_recap_state s;
    realistic_state(&s);
    recd_recap_encoder_options opt = {.keyframe_interval = 5000};
    recd_buf a = {0}, b = {0};
    recd_recap_encoder *e;
    /* Every tick fed ... */
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&a)), 0);
    for (uint64_t t = 0; t <= 1000; t++)
        assert_int_equal(recd_recap_encoder_tick(e, 77 + t, &s, NULL, 0), 0);
    recd_recap_finish_info fi;
    assert_int_equal(recd_recap_encoder_finish(e, &fi), 0);
    recd_recap_encoder_free(e);
    assert_int_equal(fi.frame_count, 1001);
    /* ... or the tick number jumping ahead: same bytes. */
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&b)), 0);
    assert_int_equal(recd_recap_encoder_tick(e, 77, &s, NULL, 0), 0);
    assert_int_equal(recd_recap_encoder_flush_at(e, 77 + 1001), 0);
    assert_int_equal(recd_recap_encoder_finish(e, &fi), 0);
    recd_recap_encoder_free(e);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);

    tags_out o = {0};
    file_tags(a.data, a.len, &o);
    static const uint8_t want[] = {RECD_RECAP_FULL_STATE, RECD_RECAP_NEXT_TICK,
                                   RECD_RECAP_SKIP_TICKS, RECD_RECAP_SKIP_TICKS,
                                   RECD_RECAP_SKIP_TICKS, RECD_RECAP_SKIP_TICKS};
    assert_int_equal(o.n, sizeof(want));
    assert_memory_equal(o.tags, want, sizeof(want));
    static const uint8_t tail[] = {0x0B, 0x0C, 0xFF, 0x0C, 0xFF, 0x0C, 0xFF, 0x0C, 235};
    assert_memory_equal(o.raw.data + o.raw.len - sizeof(tail), tail, sizeof(tail));
    tags_free(&o);

    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(a.data, a.len, NULL, NULL, &res, NULL), 0);
    assert_int_equal(res.ticks, 1001);
    recd_buf_free(&a);
    recd_buf_free(&b);
}

static void test_ticks_must_increase(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    recd_recap_state s;
    realistic_state(&s);
    recd_buf a = {0};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, NULL, recd_buf_sink(&a)), 0);
    assert_int_equal(recd_recap_encoder_tick(e, 10, NULL, NULL, 0), -EINVAL); /* no first state */
    /* An empty member before the first tick ends at tick 0 and writes nothing. */
    size_t header_len = a.len;
    assert_int_equal(recd_recap_encoder_flush_at(e, 0), 0);
    assert_int_equal(recd_recap_encoder_flush_at(e, 5), -ERANGE);
    assert_int_equal(a.len, header_len);
    assert_int_equal(recd_recap_encoder_tick(e, 10, &s, NULL, 0), 0);
    assert_int_equal(recd_recap_encoder_tick(e, 10, &s, NULL, 0), -ERANGE);
    assert_int_equal(recd_recap_encoder_tick(e, 9, &s, NULL, 0), -ERANGE);
    assert_int_equal(recd_recap_encoder_tick(e, 11, NULL, NULL, 0), 0);
    assert_int_equal(recd_recap_encoder_flush_at(e, 11), -ERANGE);
    assert_int_equal(recd_recap_encoder_flush_at(e, 20), 0);
    assert_int_equal(recd_recap_encoder_tick(e, 19, &s, NULL, 0), -ERANGE);
    /* A bad event leaves nothing behind. */
    recd_recap_value v = {.u = 300};
    recd_recap_event bad = {RECD_RECAP_SWING_ARM, 1, &v};
    size_t before = a.len;
    assert_int_equal(recd_recap_encoder_tick(e, 20, &s, &bad, 1), -ERANGE);
    recd_recap_event state_tag = {RECD_RECAP_HEALTH, 0, NULL};
    assert_int_equal(recd_recap_encoder_tick(e, 20, &s, &state_tag, 1), -EINVAL);
    recd_recap_finish_info fi;
    assert_int_equal(recd_recap_encoder_finish(e, &fi), 0);
    assert_int_equal(fi.frame_count, 20 - 10);
    assert_int_equal(a.len, before);
    recd_recap_encoder_free(e);
    recd_buf_free(&a);
}

static void test_keyframes_every_n(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    recd_recap_state s;
    realistic_state(&s);
    recd_recap_encoder_options opt = {.keyframe_interval = 50};
    recd_buf a = {0};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&a)), 0);
    for (uint64_t t = 0; t < 230; t++) {
        s.pos[0] += 0.25;
        if (t == 120) /* a gap across tick 150: the keyframe lands on the next tick fed */
            t = 160;
        assert_int_equal(recd_recap_encoder_tick(e, t, &s, NULL, 0), 0);
        if (t % 37 == 0)
            assert_int_equal(recd_recap_encoder_flush(e), 0);
    }
    assert_int_equal(recd_recap_encoder_finish(e, NULL), 0);
    recd_recap_encoder_free(e);
    tags_out o = {0};
    file_tags(a.data, a.len, &o);
    uint64_t kf[16];
    size_t nkf = 0;
    for (size_t i = 0; i < o.n && nkf < 16; i++)
        if (o.tags[i] == RECD_RECAP_FULL_STATE)
            kf[nkf++] = o.at[i];
    tags_free(&o);
    /* Fed: 0..119 and 160..229; the keyframe due at 150 lands on 160. */
    uint64_t want[] = {0, 50, 100, 160, 210};
    assert_int_equal(nkf, 5);
    assert_memory_equal(kf, want, sizeof(want));
    recd_buf_free(&a);
}

/* The keyframes take_member_keyframes() hands over with each member are the seek points a scan of
 * the file finds (the daemon's seek index is kept from them): ticks, members' offsets and the
 * ticks before them, across gaps, idle ticks and members with none or several keyframes. */
static void test_member_keyframes_are_seek_points(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    recd_recap_state s;
    realistic_state(&s);
    recd_recap_encoder_options opt = {.keyframe_interval = 20, .defer_compression = true};
    recd_buf file = {0}, raw = {0}, kf = {0};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&file)), 0);
    recd_seek_point got[64];
    size_t ngot = 0;
    for (uint64_t t = 5; t < 400; t++) {
        if (t % 9 != 0) /* idle ticks too */
            s.pos[0] += 0.25;
        if (t == 120)
            t = 175; /* a gap */
        assert_int_equal(recd_recap_encoder_tick(e, t, &s, NULL, 0), 0);
        if (t % 43 != 0 && t != 399)
            continue;
        raw.len = kf.len = 0;
        int n = recd_recap_encoder_take_member_keyframes(e, &raw, &kf);
        assert_true(n > 0);
        const recd_recap_keyframe *k = (const recd_recap_keyframe *)(const void *)kf.data;
        for (size_t i = 0; i < kf.len / sizeof *k; i++) {
            assert_true(ngot < 64);
            got[ngot++] = (recd_seek_point){(int64_t)k[i].tick, file.len, (int64_t)k[i].ticks_before};
        }
        assert_int_equal(recd_gzip_member_write_with(NULL, recd_recap_encoder_compressor(e),
                                                     recd_recap_encoder_gzip_level(e), raw.data,
                                                     raw.len, &file),
                         0);
    }
    assert_int_equal(recd_recap_encoder_finish(e, NULL), 0);
    recd_recap_encoder_free(e);
    recd_buf idx = {0};
    assert_int_equal(recd_format_index_build(recd_format_find("recap"), file.data, file.len, &idx), 0);
    size_t want = (idx.len - 64) / 32;
    assert_true(want > 10);
    assert_int_equal(ngot, want);
    for (size_t i = 0; i < want; i++) {
        const uint8_t *en = idx.data + 64 + 32 * i;
        assert_int_equal(got[i].time, (int64_t)ld_le64(en));
        assert_int_equal(got[i].offset, ld_le64(en + 8));
        assert_int_equal(got[i].aux, (int64_t)ld_le64(en + 16));
    }
    recd_buf_free(&idx);
    recd_buf_free(&raw);
    recd_buf_free(&kf);
    recd_buf_free(&file);
}

static void test_determinism(void **st)
{
    (void)st;
    collect_event_tags();
    script sc;
    make_script(&sc, 0xD5EEDu, 600, 0.6);
    recd_buf a = {0}, b = {0};
    encode_script(&sc, NULL, true, &a, NULL);
    encode_script(&sc, NULL, true, &b, NULL);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    /* A shared deflater gives the same bytes as one-shot compression. */
    recd_buf c = {0};
    recd_recap_encoder_options opt = {.deflater = recd_gzip_deflater_new()};
    encode_script(&sc, &opt, true, &c, NULL);
    recd_gzip_deflater_free(opt.deflater);
    assert_int_equal(a.len, c.len);
    assert_memory_equal(a.data, c.data, a.len);
    free_script(&sc);
    recd_buf_free(&a);
    recd_buf_free(&b);
    recd_buf_free(&c);
}

/* Deferred compression: members taken raw and compressed by the caller (as the daemon's writer
 * threads do) give the same file as the encoder compressing them itself. */
static void take_and_compress(recd_recap_encoder *e, recd_buf *out)
{
    recd_buf raw = {0};
    int n = recd_recap_encoder_take_member(e, &raw);
    assert_true(n >= 0);
    assert_int_equal((size_t)n, raw.len);
    if (n > 0)
        assert_int_equal(recd_gzip_member_write_with(NULL, recd_recap_encoder_compressor(e),
                                                     recd_recap_encoder_gzip_level(e), raw.data,
                                                     raw.len, out),
                         0);
    recd_buf_free(&raw);
}

/* Finishes and frees e, patches got's header as a writer would, and expects want's bytes. */
static void finish_and_expect(recd_recap_encoder *e, recd_buf *got, const recd_buf *want)
{
    tu_recap_finish(e, got);
    assert_int_equal(got->len, want->len);
    assert_memory_equal(got->data, want->data, want->len);
}

static void test_deferred_compression(void **st)
{
    (void)st;
    collect_event_tags();
    script sc;
    make_script(&sc, 0xDEFE22u, 3000, 0.7);
    for (uint8_t c = RECD_GZIP_ZLIB; c <= RECD_GZIP_LIBDEFLATE; c++) {
        recd_recap_encoder_options wopt = {.compressor = c};
        recd_buf want = {0};
        encode_script(&sc, &wopt, true, &want, NULL);

        recd_recap_header h;
        realistic_header(&h);
        recd_buf got = {0};
        recd_recap_encoder_options opt = {.defer_compression = true, .compressor = c};
        recd_recap_encoder *e;
        assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&got)), 0);
        assert_int_equal(recd_recap_encoder_compressor(e), c);
        for (size_t i = 0; i < sc.n; i++) {
            const step *s = &sc.steps[i];
            assert_int_equal(recd_recap_encoder_tick(e, s->tick, &s->s, s->ev, s->nev), 0);
            if (s->flush_after || recd_recap_encoder_pending(e) >= RECD_RECAP_DEFAULT_MEMBER_LIMIT)
                take_and_compress(e, &got);
        }
        take_and_compress(e, &got);
        assert_int_equal(recd_recap_encoder_pending(e), 0);
        finish_and_expect(e, &got, &want);
        recd_buf_free(&want);
        recd_buf_free(&got);
    }
    free_script(&sc);
}

/* The slot-mask entry (recap_slot_mask.h, the daemon's) gives the public entry's bytes for
 * a mask of exactly the filled slots and for any superset of them. */
static uint64_t filled_slots(const recd_recap_state *s)
{
    uint64_t m = 0;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        m |= (uint64_t)(s->equipment[i].key.len != 0) << i;
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++)
        m |= (uint64_t)(s->inventory[i].key.len != 0) << (RECD_RECAP_EQUIPMENT_SLOTS + i);
    return m;
}

static void test_slot_mask_same_bytes(void **st)
{
    (void)st;
    collect_event_tags();
    script sc;
    make_script(&sc, 0x5107u, 2000, 0.8);
    recd_recap_encoder_options opt = {.keyframe_interval = 50, .member_limit = 4000};
    recd_buf want = {0};
    encode_script(&sc, &opt, true, &want, NULL);
    for (int superset = 0; superset < 2; superset++) {
        tu_rng r = {0x5107u + (uint64_t)superset};
        recd_recap_header h;
        realistic_header(&h);
        recd_buf got = {0};
        recd_recap_encoder *e;
        assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&got)), 0);
        for (size_t i = 0; i < sc.n; i++) {
            const step *s = &sc.steps[i];
            uint64_t slots = filled_slots(&s->s);
            if (superset)
                slots |= tu_rand(&r) & RECD_RECAP_ALL_SLOTS;
            assert_int_equal(recd_recap__encoder_tick_slots(e, s->tick, &s->s, slots, s->ev,
                                                            s->nev),
                             0);
            if (s->flush_after)
                assert_int_equal(recd_recap_encoder_flush(e), 0);
        }
        finish_and_expect(e, &got, &want);
        recd_buf_free(&got);
    }
    recd_buf_free(&want);
    free_script(&sc);
}

static void test_property_round_trip(void **st)
{
    (void)st;
    collect_event_tags();
    static const uint64_t seeds[] = {1, 2, 3, 0xC0FFEE, 0xBADC0DE, 20260101};
    for (size_t si = 0; si < sizeof(seeds) / sizeof(seeds[0]); si++) {
        script sc;
        make_script(&sc, seeds[si], 1500, si % 2 ? 0.9 : 0.3);
        recd_recap_encoder_options opt = {.keyframe_interval = 40 + 30 * (uint32_t)si,
                                          .member_limit = 2000 + 3000 * (uint32_t)si,
                                          .gzip_level = (uint8_t)(1 + si)};
        recd_buf f = {0};
        recd_recap_finish_info fi;
        encode_script(&sc, &opt, true, &f, &fi);
        recd_report rep = {0};
        recd_recap_decode_result res;
        checker *k = check_decode(&sc, f.data, f.len, &res, &rep);
        assert_int_equal(k->next_step, sc.n);
        assert_int_equal(res.ticks, fi.frame_count);
        assert_int_equal(res.members, fi.members);
        assert_int_equal(res.valid_end, f.len);
        assert_false(res.truncated);
        for (size_t i = 0; i < rep.count; i++)
            print_message("problem %s @%llu: %s\n", rep.items[i].code,
                          (unsigned long long)rep.items[i].offset, rep.items[i].message);
        assert_int_equal(rep.count, 0);
        assert_true(fi.members > 3);
        recd_report_free(&rep);
        checker_free(k);
        free_script(&sc);
        recd_buf_free(&f);
    }
}

static void test_truncated_last_member(void **st)
{
    (void)st;
    collect_event_tags();
    script sc;
    make_script(&sc, 0x7E57, 300, 0.5);
    recd_recap_encoder_options opt = {.member_limit = 1500};
    recd_buf f = {0};
    encode_script(&sc, &opt, false, &f, NULL); /* crashed writer: frame count 0 */
    recd_recap_decode_result full;
    recd_report rep = {0};
    checker *k = check_decode(&sc, f.data, f.len, &full, &rep);
    assert_true(k->members >= 3);
    assert_int_equal(rep.count, 1);
    assert_string_equal(rep.items[0].code, "not-finalized");
    assert_int_equal(rep.items[0].severity, RECD_SEV_INFO);
    recd_report_free(&rep);
    size_t last_start = (size_t)k->member_end_offs[k->members - 2];
    uint64_t ticks_before = k->member_end_ticks[k->members - 2];
    uint64_t members_before = k->members - 1;
    checker_free(k);
    for (size_t cut = last_start; cut < f.len; cut++) {
        checker *kc = calloc(1, sizeof(*kc));
        kc->sc = &sc;
        kc->first_tick = sc.steps[0].tick;
        recd_recap_callbacks cb = {NULL, ck_tick, ck_skip, ck_member, kc};
        recd_recap_decode_result res;
        int rc = recd_recap_decode(f.data, cut, NULL, &cb, &res, NULL);
        assert_int_equal(res.ticks, ticks_before);
        assert_int_equal(kc->ticks_seen, ticks_before);
        assert_int_equal(res.valid_end, last_start);
        assert_int_equal(res.members, members_before);
        assert_int_equal(res.truncated, cut > last_start);
        assert_int_equal(rc, cut > last_start ? -EBADMSG : 0);
        checker_free(kc);
    }
    free_script(&sc);
    recd_buf_free(&f);
}

static void test_frame_count_checks(void **st)
{
    (void)st;
    collect_event_tags();
    script sc;
    make_script(&sc, 99, 200, 0.5);
    recd_buf f = {0};
    recd_recap_finish_info fi;
    encode_script(&sc, NULL, false, &f, &fi);
    recd_report rep = {0};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_verify(f.data, f.len, &res, &rep), 0); /* 0 = not finalized */
    assert_int_equal(res.ticks, fi.frame_count);
    assert_int_equal(recd_report_errors(&rep), 0);
    recd_report_free(&rep);
    /* Patched at the reported offsets. */
    uint8_t *p = f.data;
    st_be32(p + fi.frame_count_offset, (uint32_t)fi.frame_count);
    st_be64(p + fi.end_ms_offset, (uint64_t)fi.end_ms);
    memset(&rep, 0, sizeof(rep));
    assert_int_equal(recd_recap_verify(f.data, f.len, &res, &rep), 0);
    assert_int_equal(rep.count, 0);
    assert_int_equal(res.header.frame_count, fi.frame_count);
    assert_int_equal(res.header.end_ms, res.header.start_ms + (int64_t)fi.frame_count * 50);
    /* A wrong count is an error. */
    st_be32(p + fi.frame_count_offset, (uint32_t)fi.frame_count + 1);
    assert_int_equal(recd_recap_verify(f.data, f.len, &res, &rep), -EBADMSG);
    assert_string_equal(rep.items[rep.count - 1].code, "frame-count-mismatch");
    recd_report_free(&rep);
    free_script(&sc);
    recd_buf_free(&f);
}

static void test_idle_minute_size(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    recd_recap_state s;
    realistic_state(&s);
    recd_buf f = {0};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, NULL, recd_buf_sink(&f)), 0);
    for (uint64_t t = 0; t < 1200; t++)
        assert_int_equal(recd_recap_encoder_tick(e, t, &s, NULL, 0), 0);
    recd_recap_finish_info fi;
    assert_int_equal(recd_recap_encoder_finish(e, &fi), 0);
    assert_true(recd_recap_encoder_memory(e) < 8192);
    recd_recap_encoder_free(e);
    assert_int_equal(fi.frame_count, 1200);
    print_message("60 s idle recording: %zu bytes (header + 1 member)\n", f.len);
    assert_true(f.len <= 512);
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(f.data, f.len, NULL, NULL, &res, NULL), 0);
    assert_int_equal(res.ticks, 1200);
    recd_buf_free(&f);
}

static void test_idle_session_memory(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    recd_recap_state s;
    realistic_state(&s);
    recd_buf f = {0};
    recd_recap_encoder *e;
    recd_recap_encoder_options opt = {.member_limit = 1000000};
    assert_int_equal(recd_recap_encoder_new(&e, &h, &opt, recd_buf_sink(&f)), 0);
    char chat[4000];
    memset(chat, 'x', sizeof(chat));
    recd_recap_value v = {.blob = {(const uint8_t *)chat, sizeof(chat)}};
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &v};
    for (uint64_t t = 0; t < 100; t++)
        assert_int_equal(recd_recap_encoder_tick(e, t, &s, &ev, 1), 0);
    assert_true(recd_recap_encoder_memory(e) > 100000);
    assert_int_equal(recd_recap_encoder_flush(e), 0);
    recd_recap_encoder_trim(e);
    print_message("idle encoder holds %zu bytes\n", recd_recap_encoder_memory(e));
    assert_true(recd_recap_encoder_memory(e) < 2048);
    recd_recap_encoder_free(e);
    recd_buf_free(&f);
}

/* Decode -> re-encode: the decoder's states, events and member ends, fed back, give the same
 * bytes. The re-encoder runs inside the decoder's callbacks, as an exporter/importer pair would. */
typedef struct reenc {
    recd_recap_encoder *e;
    recd_buf out;
} reenc;

static int re_header(void *ctx, const recd_recap_header *h)
{
    reenc *r = ctx;
    recd_recap_encoder_options opt;
    recd_recap_encoder_options_from_header(h, &opt);
    return recd_recap_encoder_new(&r->e, h, &opt, recd_buf_sink(&r->out));
}

static int re_tick(void *ctx, uint64_t tick, const recd_recap_state *s, const recd_recap_event *ev,
                   size_t n)
{
    reenc *r = ctx;
    return recd_recap_encoder_tick(r->e, tick, s, ev, n);
}

static int re_member(void *ctx, uint64_t end_tick, uint64_t end_off)
{
    reenc *r = ctx;
    int rc = recd_recap_encoder_flush_at(r->e, end_tick);
    /* Same bytes so far, member by member. */
    if (rc == 0 && r->out.len != end_off)
        return -EPROTO;
    return rc;
}

static void test_decode_reencode_identity(void **st)
{
    (void)st;
    collect_event_tags();
    static const uint64_t seeds[] = {11, 12, 13, 14};
    for (size_t si = 0; si < 4; si++) {
        script sc;
        make_script(&sc, seeds[si], 1200, si % 2 ? 0.8 : 0.25);
        recd_recap_encoder_options opt = {.keyframe_interval = 100 + 50 * (uint32_t)si,
                                          .member_limit = 1000 + 1500 * (uint32_t)si,
                                          .gzip_level = (uint8_t)(9 - si),
                                          .compressor = (uint8_t)(si % 2)}; /* both kinds */
        recd_buf f = {0};
        encode_script(&sc, &opt, true, &f, NULL);
        /* Give the header skin records and an unknown extension too. */
        recd_recap_decode_result res;
        reenc r = {0};
        recd_recap_callbacks cb = {re_header, re_tick, NULL, re_member, &r};
        assert_int_equal(recd_recap_decode(f.data, f.len, NULL, &cb, &res, NULL), 0);
        assert_int_equal(recd_recap_encoder_finish(r.e, NULL), 0);
        recd_recap_encoder_free(r.e);
        assert_int_equal(r.out.len, f.len);
        assert_memory_equal(r.out.data, f.data, f.len);
        recd_buf_free(&r.out);
        free_script(&sc);
        recd_buf_free(&f);
    }
}

static void test_reencode_rich_header(void **st)
{
    (void)st;
    recd_recap_header h;
    realistic_header(&h);
    h.skin_texture = recd_recap_str("ewogICJ0aW1lc3RhbXAiIDogMTYxMzQ5NTY0MDc4MCwKICAicHJvZmlsZUlk");
    h.skin_signature = recd_recap_str("c2lnbmF0dXJlIGJ5dGVzIGluIGJhc2U2NA==");
    static const uint8_t unknown[] = {9, 0, 2, 'h', 'i', 40, 0, 0};
    h.ext_unknown.data = unknown;
    h.ext_unknown.len = sizeof(unknown);
    recd_recap_state s;
    realistic_state(&s);
    recd_buf f = {0};
    recd_recap_encoder *e;
    assert_int_equal(recd_recap_encoder_new(&e, &h, NULL, recd_buf_sink(&f)), 0);
    for (uint64_t t = 0; t < 300; t++) {
        s.pos[2] += 0.1;
        assert_int_equal(recd_recap_encoder_tick(e, t * 2, &s, NULL, 0), 0);
    }
    recd_recap_finish_info fi;
    assert_int_equal(recd_recap_encoder_finish(e, &fi), 0);
    recd_recap_encoder_free(e);
    assert_int_equal(recd_recap_header_patch(f.data, f.len, (uint32_t)fi.frame_count, fi.end_ms), 0);
    reenc r = {0};
    recd_recap_callbacks cb = {re_header, re_tick, NULL, re_member, &r};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(f.data, f.len, NULL, &cb, &res, NULL), 0);
    assert_int_equal(recd_recap_encoder_finish(r.e, NULL), 0);
    recd_recap_encoder_free(r.e);
    assert_int_equal(r.out.len, f.len);
    assert_memory_equal(r.out.data, f.data, f.len);
    recd_buf_free(&r.out);
    recd_buf_free(&f);
}

static int stop_at_third(void *ctx, uint64_t tick, const recd_recap_state *s,
                         const recd_recap_event *ev, size_t n)
{
    (void)s, (void)ev, (void)n;
    int *seen = ctx;
    return ++*seen == 3 ? 5 : (tick > 1000 ? -1 : 0);
}

static void test_callback_stops_decoding(void **st)
{
    (void)st;
    collect_event_tags();
    script sc;
    make_script(&sc, 5, 100, 1.0);
    recd_buf f = {0};
    encode_script(&sc, NULL, true, &f, NULL);
    int seen = 0;
    recd_recap_callbacks cb = {NULL, stop_at_third, NULL, NULL, &seen};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(f.data, f.len, NULL, &cb, &res, NULL), 5);
    assert_int_equal(seen, 3);
    free_script(&sc);
    recd_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_chain_1000_idle),
        cmocka_unit_test(test_deferred_compression),
        cmocka_unit_test(test_ticks_must_increase),
        cmocka_unit_test(test_keyframes_every_n),
        cmocka_unit_test(test_member_keyframes_are_seek_points),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_slot_mask_same_bytes),
        cmocka_unit_test(test_property_round_trip),
        cmocka_unit_test(test_truncated_last_member),
        cmocka_unit_test(test_frame_count_checks),
        cmocka_unit_test(test_idle_minute_size),
        cmocka_unit_test(test_idle_session_memory),
        cmocka_unit_test(test_decode_reencode_identity),
        cmocka_unit_test(test_reencode_rich_header),
        cmocka_unit_test(test_callback_stops_decoding),
        cmocka_unit_test(test_end_time_holds_at_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
