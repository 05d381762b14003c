/* SPDX-License-Identifier: MIT */
/* Packed JetStream messages (recd/fleet_pack.h): the layout docs/fleet.md gives byte for byte,
 * seqs in the header only when every frame has one and they increase, and fleet_pack_parse
 * refusing what a hostile publisher could put on a stream. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "recd/fleet_pack.h"
#include "test_wire_samples.h"

/* The states of the sample set's first onfoot session, numbered from first. */
static size_t session_msgs(const ws_set *set, const char *key, recd_msg *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n && n < cap; i++)
        if (strcmp(set->m[i].session, key) == 0)
            out[n++] = set->m[i];
    return n;
}

static void pack_of(const recd_msg *m, size_t n, fleet_packer *pk)
{
    assert_int_equal(fleet_packer_start(pk, m[0].session, strlen(m[0].session)), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fleet_packer_add(pk, &m[i], 0), 0);
    fleet_packer_seal(pk);
}

static void test_layout(void **state)
{
    (void)state;
    ws_set set;
    ws_build(&set);
    recd_msg m[WS_MAX];
    size_t n = session_msgs(&set, set.m[0].session, m, WS_MAX);
    assert_true(n >= 2);
    for (size_t i = 0; i < n; i++) {
        m[i].has_seq = true;
        m[i].seq = 100 + i;
    }
    fleet_packer pk = {0};
    pack_of(m, n, &pk);
    const uint8_t *b = pk.buf.data;
    size_t klen = strlen(m[0].session);
    assert_int_equal(b[0], 0xD8);
    assert_int_equal(b[1], 1);
    assert_int_equal(b[2], FLEET_PACK_FLAG_SEQS);
    assert_int_equal(b[3], klen);
    assert_int_equal(b[4] | b[5] << 8, n);
    assert_int_equal(b[8], 100);
    assert_int_equal(b[16], 100 + n - 1);
    assert_memory_equal(b + 24, m[0].session, klen);
    /* The frames: the first as a stream's first frame, the others with key_len 0. */
    recd_buf want = {0};
    assert_int_equal(recd_wire_encode(&m[0], RECD_WIRE_BINARY, 0, &want), 0);
    assert_memory_equal(b + 24 + klen, want.data, want.len);
    assert_int_equal(b[24 + klen + want.len + 8], 0);
    fleet_pack got;
    char why[200];
    assert_int_equal(fleet_pack_parse(b, pk.buf.len, 0, &got, why, sizeof why), 0);
    assert_int_equal(got.count, n);
    assert_true(got.has_seqs && got.first_seq == 100 && got.last_seq == 100 + n - 1);
    /* A frame without a seq, or seqs out of order: no seqs in the header. */
    m[1].seq = 50;
    pack_of(m, n, &pk);
    assert_int_equal(pk.buf.data[2], 0);
    assert_int_equal(pk.buf.data[8], 0);
    assert_int_equal(fleet_pack_parse(pk.buf.data, pk.buf.len, 0, &got, why, sizeof why), 0);
    assert_false(got.has_seqs);
    recd_buf_free(&want);
    fleet_packer_free(&pk);
    ws_free(&set);
}

static void expect_bad(const uint8_t *b, size_t len, const char *what)
{
    fleet_pack got;
    char why[200] = "";
    assert_int_equal(fleet_pack_parse(b, len, 0, &got, why, sizeof why), -EBADMSG);
    if (!strstr(why, what))
        fail_msg("expected '%s', got '%s'", what, why);
}

static void test_hostile(void **state)
{
    (void)state;
    ws_set set;
    ws_build(&set);
    recd_msg m[WS_MAX];
    size_t n = session_msgs(&set, set.m[0].session, m, WS_MAX);
    for (size_t i = 0; i < n; i++) {
        m[i].has_seq = true;
        m[i].seq = i;
    }
    fleet_packer pk = {0};
    pack_of(m, n, &pk);
    size_t len = pk.buf.len, klen = strlen(m[0].session);
    uint8_t *c = malloc(len + 16);
    assert_non_null(c);
#define MUTATE(stmt, size, what)                                                                 \
    do {                                                                                           \
        memcpy(c, pk.buf.data, len);                                                               \
        stmt;                                                                                      \
        expect_bad(c, size, what);                                                                 \
    } while (0)
    MUTATE((void)0, 10, "shorter than its header");
    MUTATE(c[1] = 2, len, "unknown version");
    MUTATE(c[2] = 0x80, len, "unknown flags");
    MUTATE(c[3] = 0, len, "not a valid session key");
    MUTATE(c[24] = '/', len, "not a valid session key");
    MUTATE(c[4] = 0, len, "no frames");
    MUTATE(c[4] = (uint8_t)(n + 1), len, "a frame does not start here");
    MUTATE(c[4] = (uint8_t)(n - 1); c[16] = (uint8_t)(n - 2), len, "bytes after the last frame");
    MUTATE(c[8] = 1, len, "seqs do not match");
    MUTATE(c[16] = 60, len, "last frame's seq");
    MUTATE(c[24 + klen] = 0xD7 + 1, len, "a frame does not start here");
    MUTATE(c[24 + klen + 4] = 0xFF; c[24 + klen + 5] = 0xFF, len, "longer than the message");
    MUTATE(c[24 + klen + 9] ^= 1, len, "does not name the header's session");
    MUTATE((void)0, len - 1, "longer than the message");
    MUTATE(c[len] = 0, len + 1, "bytes after the last frame");
    MUTATE(c[2] = 0, len, "seqs without the seqs flag");
    MUTATE(c[8] = 0xFF, len, "first seq above last seq");
#undef MUTATE
    /* A later frame that names a session (even its own) is refused: one session per pack. */
    fleet_packer two = {0};
    assert_int_equal(fleet_packer_start(&two, m[0].session, klen), 0);
    assert_int_equal(fleet_packer_add(&two, &m[0], 0), 0);
    two.count = 0; /* the next frame is encoded with its key */
    assert_int_equal(fleet_packer_add(&two, &m[1], 0), 0);
    two.count = 2;
    two.first_seq = 0;
    fleet_packer_seal(&two);
    expect_bad(two.buf.data, two.buf.len, "key_len must be 0");
    fleet_packer_free(&two);
    free(c);
    fleet_packer_free(&pk);
    ws_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
