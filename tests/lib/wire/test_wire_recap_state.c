/* SPDX-License-Identifier: MIT */
/* The hand-written FULL_STATE reader of the wire (recap_wire_state_read) against the table-driven
 * field codec it replaced on the hot path: for valid payloads and for truncated, corrupted and
 * padded ones, both must accept the same payloads, give the same state and fail with the same
 * text; and a state read into a lent block (the session's last one) is the same as one read into a
 * fresh block. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "formats/recap/recap_format.h"
#include "formats/recap/recap_internal.h"
#include "formats/recap/recap_msg.h"
#include "formats/recap/recap_wire.h"
#include "recd/formats/recap/recap_slot_mask.h"
#include "recd/formats/recap/recap_state_block.h"
#include "testutil.h"
#include "wire/wire_internal.h"

enum { EQUIP = RECD_RECAP_EQUIPMENT_SLOTS, INV = RECD_RECAP_INVENTORY_SLOTS, NFIELDS = 9 + 6 + EQUIP + 1 };

/* The oracle: the FULL_STATE row through recap_fields_parse, mapped the way the wire did before. */
static int table_read(const uint8_t *p, size_t len, recd_recap_state *st, recap_arena *a, char *why,
                      size_t whylen)
{
    static const char what[] = "state (FULL_STATE)";
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(RECD_RECAP_FULL_STATE);
    assert_non_null(ti);
    assert_int_equal(ti->field_count, NFIELDS);
    size_t first = recap_arena_push(a, ti->field_count);
    assert_int_equal(first, 0);
    recap_cur c = {p, len, 0};
    recap_perr pe = recap_fields_parse(&c, ti->fields, ti->field_count, a, first);
    if (pe == RECAP_E_UTF8) {
        snprintf(why, whylen, "%s: invalid UTF-8 in a text field", what);
        return -1;
    }
    assert_int_not_equal(pe, RECAP_E_NOMEM);
    if (pe != RECAP_OK) {
        snprintf(why, whylen, "%s: payload ends early", what);
        return -1;
    }
    if (c.pos != len) {
        snprintf(why, whylen, "%s: %lu bytes after the payload", what, (unsigned long)(len - c.pos));
        return -1;
    }
    recap_arena_fixup(a, 0);
    const recd_recap_value *v = a->v;
    memset(st, 0, sizeof *st);
    for (int i = 0; i < 3; i++) {
        st->pos[i] = v[i].f64;
        st->rot[i] = v[3 + i].f64;
        st->vel[i] = v[6 + i].f64;
    }
    st->flags = (uint16_t)v[9].u;
    st->pose = (uint8_t)v[10].u;
    st->game_mode = (uint8_t)v[11].u;
    st->hand_state = (uint8_t)v[12].u;
    st->health = v[13].f32;
    st->absorption = v[14].f32;
    for (int i = 0; i < EQUIP; i++)
        st->equipment[i] = v[15 + i].item;
    const recd_recap_list *inv = &v[15 + EQUIP].list;
    int last = -1;
    for (size_t r = 0; r < inv->count; r++) {
        uint32_t slot = inv->values[2 * r].u;
        if (slot >= INV || (int)slot <= last) {
            snprintf(why, whylen, "%s: inventory slots must be below %d and strictly ascending",
                     what, INV);
            return -1;
        }
        last = (int)slot;
        st->inventory[slot] = inv->values[2 * r + 1].item;
    }
    return 0;
}

static void expect_same_blob(recd_recap_blob a, recd_recap_blob b)
{
    assert_int_equal(a.len, b.len);
    if (a.len)
        assert_memory_equal(a.data, b.data, a.len);
}

static void expect_same_item(const recd_recap_item *a, const recd_recap_item *b)
{
    expect_same_blob(a->key, b->key);
    if (!a->key.len)
        return;
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->flags, b->flags);
    expect_same_blob(a->data, b->data);
}

static void expect_same_state(const recd_recap_state *a, const recd_recap_state *b)
{
    assert_memory_equal(a->pos, b->pos, sizeof a->pos);
    assert_memory_equal(a->rot, b->rot, sizeof a->rot);
    assert_memory_equal(a->vel, b->vel, sizeof a->vel);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->pose, b->pose);
    assert_int_equal(a->game_mode, b->game_mode);
    assert_int_equal(a->hand_state, b->hand_state);
    assert_memory_equal(&a->health, &b->health, sizeof a->health);
    assert_memory_equal(&a->absorption, &b->absorption, sizeof a->absorption);
    for (int i = 0; i < EQUIP; i++)
        expect_same_item(&a->equipment[i], &b->equipment[i]);
    for (int i = 0; i < INV; i++)
        expect_same_item(&a->inventory[i], &b->inventory[i]);
}

/* Both readers on one payload: same verdict, same error text, same state. Returns the verdict. */
static int check_payload(const uint8_t *p, size_t len)
{
    char why_table[256] = "", why_wire[256] = "";
    recd_recap_state want;
    recap_arena a = {0};
    int rc_table = table_read(p, len, &want, &a, why_table, sizeof why_table);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    int rc_wire = recap_wire_state_read(p, len, 7, &m, why_wire, sizeof why_wire);
    if (rc_table < 0) {
        /* invalid UTF-8 is told apart for the decoder's error kind (wire_binary_decode) */
        assert_int_equal(rc_wire, strstr(why_table, "UTF-8") ? -EILSEQ : -EBADMSG);
        assert_string_equal(why_wire, why_table);
    } else {
        assert_int_equal(rc_wire, 0);
        assert_int_equal(m.type, RECD_MSG_STATE);
        assert_int_equal(m.format, RECD_MSG_FMT_RECAP);
        assert_int_equal(m.recap_state->tick, 7);
        expect_same_state(&m.recap_state->state, &want);
        /* Its extent (recap_slot_mask.h) covers the filled slots and counts their bytes,
         * and so does a copy's. */
        recd_msg copy;
        assert_int_equal(recd_msg_copy(&copy, &m), 0);
        const recd_recap_state_extent *ext[2] = {recd_recap__state_extent(m.recap_state),
                                                 recd_recap__state_extent(copy.recap_state)};
        uint64_t bytes = 0;
        for (int i = 0; i < EQUIP + INV; i++) {
            const recd_recap_state *st = &m.recap_state->state;
            const recd_recap_item *it = i < EQUIP ? &st->equipment[i] : &st->inventory[i - EQUIP];
            bytes += it->key.len + it->data.len;
            for (int k = 0; k < 2; k++)
                assert_true(!it->key.len || (ext[k]->slots >> i & 1));
        }
        assert_int_equal(ext[0]->item_bytes, bytes);
        assert_int_equal(ext[1]->item_bytes, bytes);
        recd_msg_free(&copy);
        /* The message owns its bytes: the payload may go away. */
        for (int i = 0; i < EQUIP + INV; i++) {
            const recd_recap_state *st = &m.recap_state->state;
            const recd_recap_item *it = i < EQUIP ? &st->equipment[i] : &st->inventory[i - EQUIP];
            if (it->key.len)
                assert_true(it->key.data < p || it->key.data >= p + len);
            if (it->data.len)
                assert_true(it->data.data < p || it->data.data >= p + len);
        }
        recd_msg_free(&m);
    }
    recap_arena_free(&a);
    return rc_table;
}

static void random_item(tu_rng *rng, recd_recap_item *it, uint8_t *bytes)
{
    memset(it, 0, sizeof *it);
    if (tu_rand_below(rng, 3) == 0)
        return; /* empty */
    size_t klen = 1 + tu_rand_below(rng, 30), dlen = tu_rand_below(rng, 3) ? 0 : tu_rand_below(rng, 90);
    for (size_t i = 0; i < klen; i++)
        bytes[i] = (uint8_t)('a' + tu_rand_below(rng, 26));
    for (size_t i = 0; i < dlen; i++)
        bytes[klen + i] = (uint8_t)tu_rand(rng);
    it->key = (recd_recap_blob){bytes, klen};
    it->count = (uint8_t)(1 + tu_rand_below(rng, 64));
    it->flags = (uint8_t)tu_rand_below(rng, 4);
    it->data = (recd_recap_blob){dlen ? bytes + klen : NULL, dlen};
}

static void random_payload(tu_rng *rng, recd_buf *out)
{
    static uint8_t bytes[EQUIP + INV][128];
    recd_msg_recap_state s;
    memset(&s, 0, sizeof s);
    recd_recap_state *st = &s.state;
    for (int i = 0; i < 3; i++) {
        st->pos[i] = tu_rand_double(rng, -3e7, 3e7);
        st->rot[i] = tu_rand_double(rng, -180, 180);
        st->vel[i] = tu_rand_double(rng, -4, 4);
    }
    st->flags = (uint16_t)tu_rand(rng);
    st->pose = (uint8_t)tu_rand_below(rng, 8);
    st->game_mode = (uint8_t)tu_rand_below(rng, 4);
    st->hand_state = (uint8_t)tu_rand_below(rng, 4);
    st->health = (float)tu_rand_double(rng, 0, 20);
    st->absorption = (float)tu_rand_double(rng, 0, 4);
    for (int i = 0; i < EQUIP; i++)
        random_item(rng, &st->equipment[i], bytes[i]);
    for (int i = 0; i < INV; i++)
        random_item(rng, &st->inventory[i], bytes[EQUIP + i]);
    out->len = 0;
    assert_int_equal(recap_wire_state_write(&s, out), 0);
}

static void valid_payloads_agree(void **state)
{
    (void)state;
    tu_rng rng = {0x5eed5};
    recd_buf b = {0};
    for (int n = 0; n < 2000; n++) {
        random_payload(&rng, &b);
        assert_int_equal(check_payload(b.data, b.len), 0);
    }
    recd_buf_free(&b);
}

/* Every prefix, bytes flipped (slots, lengths, keys: all reachable), bytes appended, and a slot
 * list out of order. */
static void damaged_payloads_agree(void **state)
{
    (void)state;
    tu_rng rng = {0xbad5};
    recd_buf b = {0};
    uint8_t work[16384];
    size_t accepted = 0, refused = 0;
    for (int n = 0; n < 300; n++) {
        random_payload(&rng, &b);
        assert_true(b.len + 8 <= sizeof work);
        for (size_t cut = 0; cut < b.len; cut += 1 + tu_rand_below(&rng, 4))
            assert_int_equal(check_payload(b.data, cut), -1);
        for (int k = 0; k < 60; k++) {
            memcpy(work, b.data, b.len);
            int flips = 1 + (int)tu_rand_below(&rng, 3);
            for (int f = 0; f < flips; f++) {
                size_t at = tu_rand_below(&rng, (uint32_t)b.len);
                work[at] = tu_rand_below(&rng, 2) ? (uint8_t)tu_rand(&rng) : (uint8_t)(work[at] ^ 0x80);
            }
            size_t extra = tu_rand_below(&rng, 4) == 0 ? 1 + tu_rand_below(&rng, 8) : 0;
            for (size_t i = 0; i < extra; i++)
                work[b.len + i] = (uint8_t)tu_rand(&rng);
            if (check_payload(work, b.len + extra) == 0)
                accepted++;
            else
                refused++;
        }
    }
    assert_true(accepted > 100 && refused > 100); /* both verdicts were exercised */
    recd_buf_free(&b);
}

/* Hand-built: a slot past the last one, and two rows for one slot, refused after the parse. */
static void slot_rules(void **state)
{
    (void)state;
    recd_msg_recap_state s;
    memset(&s, 0, sizeof s);
    static const uint8_t key[] = "minecraft:stone";
    s.state.inventory[3] = (recd_recap_item){{key, sizeof key - 1}, 1, 0, {NULL, 0}};
    s.state.inventory[4] = s.state.inventory[3];
    recd_buf b = {0};
    assert_int_equal(recap_wire_state_write(&s, &b), 0);
    assert_int_equal(check_payload(b.data, b.len), 0);
    /* The last row's slot byte sits right after the list count and the first row. */
    size_t row = (sizeof key - 1) + 1 + 2 + 2 + 1;
    uint8_t *second_slot = b.data + b.len - row;
    assert_int_equal(*second_slot, 4);
    *second_slot = 3;
    assert_int_equal(check_payload(b.data, b.len), -1);
    *second_slot = INV;
    assert_int_equal(check_payload(b.data, b.len), -1);
    char why[256] = "";
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    assert_int_equal(recap_wire_state_read(b.data, b.len, 1, &m, why, sizeof why), -EBADMSG);
    assert_string_equal(why, "state (FULL_STATE): inventory slots must be below 41 and strictly "
                             "ascending");
    recd_buf_free(&b);
}

/* An item's pointer as its offset in the message's block, so two blocks compare. */
static ptrdiff_t at(const recd_msg_recap_state *s, const void *p)
{
    return p ? (const uint8_t *)p - (const uint8_t *)s : -1;
}

/* A state read into a block kept from the last one (recap_state_block.h, the lend hook) is the
 * state a fresh block gets, byte for byte, pointers taken as offsets in their blocks: the lent
 * block is zeroed only in the slots its last state filled. Payloads of every size in turn, so a
 * block is sometimes too small and replaced, and damaged ones, whose lent block is freed. */
static void lent_blocks_read_the_same(void **state)
{
    (void)state;
    tu_rng rng = {0x1e47};
    recd_buf b = {0};
    recd_msg_recap_state *spare = NULL;
    size_t reused = 0;
    for (int n = 0; n < 3000; n++) {
        random_payload(&rng, &b);
        if (tu_rand_below(&rng, 10) == 0)
            b.data[tu_rand_below(&rng, (uint32_t)b.len)] ^= 0x80; /* often refused */
        char why_fresh[256] = "", why_lent[256] = "";
        recd_msg fresh, lent;
        recd_msg_init(&fresh, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
        recd_msg_init(&lent, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
        int rc_fresh = recap_wire_state_read(b.data, b.len, 9, &fresh, why_fresh, sizeof why_fresh);
        recd_msg_recap_state *block = spare;
        int rc_lent = spare ? recd_recap__wire.state_read_lent(b.data, b.len, 9, spare, &lent,
                                                               why_lent, sizeof why_lent)
                            : recap_wire_state_read(b.data, b.len, 9, &lent, why_lent,
                                                    sizeof why_lent);
        spare = NULL; /* the read owns it now */
        assert_int_equal(rc_lent, rc_fresh);
        assert_string_equal(why_lent, why_fresh);
        if (rc_fresh < 0)
            continue;
        const recd_msg_recap_state *f = fresh.recap_state, *l = lent.recap_state;
        reused += l == block;
        assert_int_equal(l->tick, 9);
        assert_null(l->storage);
        assert_memory_equal(&f->state, &l->state, offsetof(recd_recap_state, equipment));
        for (int i = 0; i < EQUIP + INV; i++) {
            const recd_recap_item *x = i < EQUIP ? &f->state.equipment[i]
                                                 : &f->state.inventory[i - EQUIP];
            const recd_recap_item *y = i < EQUIP ? &l->state.equipment[i]
                                                 : &l->state.inventory[i - EQUIP];
            assert_int_equal(x->key.len, y->key.len);
            assert_int_equal(x->data.len, y->data.len);
            assert_int_equal(x->count, y->count);
            assert_int_equal(x->flags, y->flags);
            assert_int_equal(at(f, x->key.data), at(l, y->key.data));
            assert_int_equal(at(f, x->data.data), at(l, y->data.data));
        }
        const recd_recap_state_extent *ef = recd_recap__state_extent(f), *el = recd_recap__state_extent(l);
        assert_int_equal(ef->slots, el->slots);
        assert_int_equal(ef->item_bytes, el->item_bytes);
        recd_msg_free(&fresh);
        /* every other message's block is kept as a copy's, whose extent is exact */
        if (n % 2) {
            recd_msg copy;
            assert_int_equal(recd_msg_copy(&copy, &lent), 0);
            recd_msg_free(&lent);
            lent = copy;
        }
        recd_recap__state_keep(&lent, &spare);
        assert_int_equal(lent.type, RECD_MSG_NONE);
    }
    assert_true(reused > 300);
    recd_recap__state_block_free(spare);
    recd_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_payloads_agree),
        cmocka_unit_test(damaged_payloads_agree),
        cmocka_unit_test(slot_rules),
        cmocka_unit_test(lent_blocks_read_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
