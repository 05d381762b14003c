/* SPDX-License-Identifier: MIT */
/* Strict UTF-8 validation of Recap strings. The ASCII fast path (8 bytes at a time) must not change
 * any answer: ASCII bytes are code points of their own, so a string padded with ASCII on either
 * side is valid exactly when the unpadded string is, and a string under 8 bytes never takes the
 * fast path. That gives the oracle for every padding length. */
#include <stdbool.h>
#include <string.h>

#include "formats/recap/recap_internal.h"
#include "testutil.h"

static void known_strings(void **state)
{
    (void)state;
    const char *good[] = {"", "a", "diamond_sword", "Sharpness V on a long ASCII item name",
                          "caf\xC3\xA9", "\xE2\x82\xAC 12345678 \xF0\x9F\x98\x80 tail"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_true(recap_utf8_valid((const uint8_t *)good[i], strlen(good[i])));
    const char *bad[] = {"abcdefgh\x80", "abcdefghijklmno\xC0\xAF", "0123456789\xED\xA0\x80",
                         "01234567\xF4\x90\x80\x80", "0123456\xE2\x82", "\xFF", "abcdefgh\xC3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(recap_utf8_valid((const uint8_t *)bad[i], strlen(bad[i])));
}

/* Is core (under 8 bytes) valid, and does every ASCII padding around it agree? */
static void check_padded(const uint8_t *core, size_t n)
{
    bool want = recap_utf8_valid(core, n);
    uint8_t buf[64];
    for (size_t lead = 0; lead <= 17; lead++) {
        for (size_t tail = 0; tail <= 17; tail += 1 + tail / 4) {
            size_t len = 0;
            for (size_t k = 0; k < lead; k++)
                buf[len++] = (uint8_t)('a' + k % 26);
            memcpy(buf + len, core, n);
            len += n;
            for (size_t k = 0; k < tail; k++)
                buf[len++] = (uint8_t)('0' + k % 10);
            assert_int_equal(recap_utf8_valid(buf, len), want);
        }
    }
}

static void every_lead_byte_with_any_padding(void **state)
{
    (void)state;
    for (int b = 0; b < 256; b++) {
        const uint8_t one[1] = {(uint8_t)b};
        check_padded(one, 1);
        const uint8_t two[2] = {(uint8_t)b, 0xA9};
        check_padded(two, 2);
        const uint8_t three[3] = {(uint8_t)b, 0x82, 0xAC};
        check_padded(three, 3);
        const uint8_t four[4] = {(uint8_t)b, 0x9F, 0x98, 0x80};
        check_padded(four, 4);
    }
}

static void random_cores_with_any_padding(void **state)
{
    (void)state;
    tu_rng rng = {0x5EED};
    uint8_t core[7];
    for (int round = 0; round < 3000; round++) {
        size_t n = 1 + tu_rand_below(&rng, 7);
        for (size_t i = 0; i < n; i++)
            core[i] = (uint8_t)(0x80 | tu_rand_below(&rng, 0x80)); /* lead and continuation bytes */
        check_padded(core, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_strings),
        cmocka_unit_test(every_lead_byte_with_any_padding),
        cmocka_unit_test(random_cores_with_any_padding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
