/* SPDX-License-Identifier: MIT */
/* recd_nats_redacted, the one helper every URL recd logs or prints goes through: user parts,
 * tokens, passwords and nkey seeds are shown as ***, everything else as given. */
#include "testutil.h"

#include <string.h>

#include "recd/nats_connect.h"

static void shown(const char *url, const char *want)
{
    char out[220];
    recd_nats_redacted(url, out, sizeof out);
    assert_string_equal(out, want);
}

static void user_parts_hidden(void **state)
{
    (void)state;
    shown("nats://alice:s3cret@127.0.0.1:4222/rec", "nats://***@127.0.0.1:4222/rec");
    shown("nats://TOKEN123@[::1]:4222", "nats://***@[::1]:4222");
    shown("tcp://bob:pw@127.0.0.1:7070", "tcp://***@127.0.0.1:7070");
    shown("tcp://127.0.0.1:7070", "tcp://127.0.0.1:7070");
    shown("unix:///run/recd/a@b.sock", "unix:///run/recd/a@b.sock"); /* '@' in a path */
}

static void secret_options_hidden(void **state)
{
    (void)state;
    shown("nats://h:1/p?nkey=SUACSSL3UAHUDXKFSNVUZRF5UHPMWZ6BFDTJ7M6USDXIEDNPPQYYYCU3VY&tls_ca=/c",
          "nats://h:1/p?nkey=***&tls_ca=/c");
    shown("nats://h:1/p?nkey=/etc/recd/seed.nk", "nats://h:1/p?nkey=/etc/recd/seed.nk");
    shown("nats://u:p@h:1?token=abc&password=x&creds=/c.creds",
          "nats://***@h:1?token=***&password=***&creds=/c.creds");
}

static void bounded(void **state)
{
    (void)state;
    char out[12];
    recd_nats_redacted("nats://alice:s3cret@127.0.0.1:4222", out, sizeof out);
    assert_string_equal(out, "nats://***@");
    assert_null(strstr(out, "s3cret"));
    char big[400];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char wide[300];
    recd_nats_redacted(big, wide, sizeof wide);
    assert_int_equal(strlen(wide), 200); /* the first 200 bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(user_parts_hidden),
        cmocka_unit_test(secret_options_hidden),
        cmocka_unit_test(bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
