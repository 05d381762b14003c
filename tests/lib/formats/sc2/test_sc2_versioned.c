/* SPDX-License-Identifier: MIT */
/* The versioned decoder: integer coding (sign in bit 0, groups of 7 bits), every type marker,
 * struct lookups by tag, and damage reported at the right byte instead of read past or trusted. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "formats/sc2/sc2_versioned.h"

static int decode(const uint8_t *buf, size_t len, sc2v_tree *t, uint32_t *root, size_t *pos)
{
    sc2v_init(t, buf, len);
    *pos = 0;
    return sc2v_decode(t, pos, root);
}

static void test_integers(void **state)
{
    (void)state;
    static const struct { uint8_t bytes[10]; size_t len; int64_t value; } cases[] = {
        {{0x09, 0x08}, 2, 4},         {{0x09, 0x03}, 2, -1},  {{0x09, 0x2C}, 2, 22},
        {{0x09, 0x00}, 2, 0},         {{0x09, 0x7E}, 2, 63},  {{0x09, 0x80, 0x01}, 3, 64},
        {{0x09, 0x81, 0x01}, 3, -64}, {{0x06, 0xff}, 2, 255}, {{0x07, 0, 0, 1, 2}, 5, 258},
        {{0x08, 0, 0, 0, 0, 0, 0, 0, 9}, 9, 9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sc2v_tree t;
        uint32_t root;
        size_t pos;
        assert_int_equal(decode(cases[i].bytes, cases[i].len, &t, &root, &pos), 0);
        assert_int_equal(pos, cases[i].len);
        assert_int_equal(sc2v_int(&t, sc2v_at(&t, root), 99), cases[i].value);
        sc2v_free(&t);
    }
}

/* struct {0: blob "ab", 3: array [int 1, optional(absent), optional(int -2)], 7: choice 5 -> u8 9,
 * 8: bitarray of 9 bits} */
static const uint8_t sample[] = {0x05, 0x08, 0x00, 0x02, 0x04, 'a', 'b', 0x06, 0x00, 0x06, 0x09,
                                 0x02, 0x04, 0x00, 0x04, 0x01, 0x09, 0x05, 0x0E, 0x03, 0x0A, 0x06,
                                 0x09, 0x10, 0x01, 0x12, 0xAA, 0x01};

static void test_tree(void **state)
{
    (void)state;
    sc2v_tree t;
    uint32_t root;
    size_t pos;
    assert_int_equal(decode(sample, sizeof sample, &t, &root, &pos), 0);
    assert_int_equal(pos, sizeof sample);
    const sc2v_node *s = sc2v_at(&t, root);
    assert_int_equal(s->kind, SC2V_STRUCT);
    const uint8_t *b;
    size_t blen;
    assert_true(sc2v_blob(&t, sc2v_field(&t, s, 0), &b, &blen));
    assert_int_equal(blen, 2);
    assert_memory_equal(b, "ab", 2);
    const sc2v_node *arr = sc2v_field(&t, s, 3);
    assert_int_equal(arr->kind, SC2V_ARRAY);
    const sc2v_node *a0 = sc2v_first(&t, arr), *a1 = sc2v_next(&t, a0), *a2 = sc2v_next(&t, a1);
    assert_int_equal(sc2v_int(&t, a0, 0), 1);
    assert_int_equal(sc2v_int(&t, a1, 42), 42); /* absent optional: the default */
    assert_int_equal(sc2v_int(&t, a2, 0), -2);
    assert_null(sc2v_next(&t, a2));
    const sc2v_node *ch = sc2v_field(&t, s, 7);
    assert_int_equal(ch->kind, SC2V_CHOICE);
    assert_int_equal(ch->i, 5);
    assert_int_equal(sc2v_int(&t, ch, 0), 9);
    const sc2v_node *bits = sc2v_field(&t, s, 8);
    assert_int_equal(bits->kind, SC2V_BITARRAY);
    assert_int_equal(bits->i, 9);
    assert_int_equal(bits->len, 2);
    assert_null(sc2v_field(&t, s, 4)); /* unknown tags are simply absent */
    sc2v_free(&t);
}

/* Every cut of the sample fails cleanly, at an offset inside the data. */
static void test_every_cut_fails_with_offset(void **state)
{
    (void)state;
    for (size_t cut = 0; cut < sizeof sample; cut++) {
        sc2v_tree t;
        uint32_t root;
        size_t pos;
        assert_int_equal(decode(sample, cut, &t, &root, &pos), -EBADMSG);
        assert_true(t.err[0] != 0);
        assert_true(t.err_off <= cut);
        sc2v_free(&t);
    }
}

static void test_hostile_lengths(void **state)
{
    (void)state;
    sc2v_tree t;
    uint32_t root;
    size_t pos;
    /* an array claiming 2^40 items in 8 bytes: refused before any allocation for it */
    const uint8_t huge[] = {0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x09, 0x00};
    assert_int_equal(decode(huge, sizeof huge, &t, &root, &pos), -EBADMSG);
    assert_int_equal(t.err_off, 1);
    sc2v_free(&t);
    /* an integer of more than 64 bits */
    const uint8_t wide[] = {0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    assert_int_equal(decode(wide, sizeof wide, &t, &root, &pos), -EBADMSG);
    sc2v_free(&t);
    /* unknown marker */
    const uint8_t bad[] = {0x05, 0x02, 0x00, 0x0A};
    assert_int_equal(decode(bad, sizeof bad, &t, &root, &pos), -EBADMSG);
    assert_int_equal(t.err_off, 3);
    sc2v_free(&t);
    /* nesting deeper than the cap: 100 one-item arrays */
    uint8_t deep[202];
    for (size_t i = 0; i < 100; i++) {
        deep[2 * i] = 0x00;
        deep[2 * i + 1] = 0x02;
    }
    deep[200] = 0x09;
    deep[201] = 0x00;
    assert_int_equal(decode(deep, sizeof deep, &t, &root, &pos), -EBADMSG);
    sc2v_free(&t);
    /* the node cap: an array of 64 integers against a cap of 10 nodes */
    uint8_t many[3 + 2 * 64] = {0x00, 0x80, 0x01};
    for (size_t i = 0; i < 64; i++) {
        many[3 + 2 * i] = 0x09;
        many[4 + 2 * i] = 0x00;
    }
    sc2v_init(&t, many, sizeof many);
    t.max_nodes = 10;
    pos = 0;
    assert_int_equal(sc2v_decode(&t, &pos, &root), -E2BIG);
    sc2v_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_every_cut_fails_with_offset),
        cmocka_unit_test(test_hostile_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
