/* SPDX-License-Identifier: MIT */
/* The per-peer table behind the fair shares: who counts as one peer (an IPv4 address, an IPv6 /64,
 * an IPv4-mapped address as its IPv4 address, a Unix uid), and that an entry lives exactly as long
 * as something holds it, so the table never outgrows the connections and sessions it counts. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "support/peer_counts.h"

static peer_key key_of(const char *text)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (strchr(text, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, text, &a->sin6_addr), 1);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, text, &a->sin_addr), 1);
    }
    peer_key k;
    peer_key_from_sockaddr((struct sockaddr *)&ss, &k);
    return k;
}

static void who_is_one_peer(void **state)
{
    (void)state;
    peer_key a = key_of("127.0.0.1"), b = key_of("127.0.0.2");
    assert_false(peer_key_equal(&a, &b));
    peer_key mapped = key_of("::ffff:127.0.0.2");
    assert_true(peer_key_equal(&mapped, &b));
    peer_key v6a = key_of("2001:db8:1:2::1"), v6b = key_of("2001:db8:1:2:ffff::9");
    peer_key v6c = key_of("2001:db8:1:3::1");
    assert_true(peer_key_equal(&v6a, &v6b)); /* one /64 */
    assert_false(peer_key_equal(&v6a, &v6c));
    peer_key u1, u2;
    peer_key_from_uid(1000, &u1);
    peer_key_from_uid(1001, &u2);
    assert_false(peer_key_equal(&u1, &u2));
    char name[64];
    assert_string_equal(peer_key_name(&b, name, sizeof name), "127.0.0.2");
    assert_string_equal(peer_key_name(&v6b, name, sizeof name), "2001:db8:1:2::/64");
    assert_string_equal(peer_key_name(&u1, name, sizeof name), "uid 1000");
    peer_key none;
    peer_key_from_sockaddr(NULL, &none);
    assert_int_equal(none.family, 0);
}

static void entries_live_while_held(void **state)
{
    (void)state;
    peer_counts pc = {0};
    peer_key none = {0};
    assert_null(peer_counts_ref(&pc, &none)); /* an unknown peer is never counted */
    enum { PEERS = 3000, HOLDS = 3 };
    peer_entry *held[PEERS][HOLDS];
    for (unsigned i = 0; i < PEERS; i++) {
        peer_key k;
        peer_key_from_uid(i, &k);
        for (unsigned h = 0; h < HOLDS; h++) {
            held[i][h] = peer_counts_ref(&pc, &k);
            assert_non_null(held[i][h]);
            assert_ptr_equal(held[i][h], held[i][0]);
        }
        assert_int_equal(held[i][0]->refs, HOLDS);
    }
    assert_int_equal(pc.entries, PEERS);
    for (unsigned h = 0; h < HOLDS; h++)
        for (unsigned i = 0; i < PEERS; i += 2)
            peer_counts_unref(&pc, held[i][h]);
    assert_int_equal(pc.entries, PEERS / 2);
    for (unsigned i = 1; i < PEERS; i += 2) {
        peer_key k;
        peer_key_from_uid(i, &k);
        assert_ptr_equal(peer_counts_find(&pc, &k), held[i][0]);
        peer_key_from_uid(i - 1, &k);
        assert_null(peer_counts_find(&pc, &k));
    }
    /* The connection API over the same entries. */
    peer_key k = key_of("10.0.0.1");
    assert_int_equal(peer_counts_add(&pc, &k), 1);
    assert_int_equal(peer_counts_add(&pc, &k), 2);
    peer_counts_remove(&pc, &k);
    assert_int_equal(peer_counts_get(&pc, &k), 1);
    peer_counts_remove(&pc, &k);
    assert_int_equal(peer_counts_get(&pc, &k), 0);
    assert_int_equal(pc.entries, PEERS / 2);
    peer_counts_free(&pc);
    assert_int_equal(pc.entries, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(who_is_one_peer),
        cmocka_unit_test(entries_live_while_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
