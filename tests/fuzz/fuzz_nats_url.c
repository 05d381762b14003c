/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the nats:// URL of the JetStream publisher (rectool send --to, and every
 * program linking recd_client): user part, percent-decoding and query options come from the
 * command line or a config file. A URL is parsed or refused with a reason, and a parsed one
 * leaves every field terminated within its buffer and every number within its range (that a
 * refusal never shows a password is test_client_nats's). */
#include <stdlib.h>
#include <string.h>

#include "wire/client_nats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void terminated(const char *s, size_t cap)
{
    if (!memchr(s, '\0', cap))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *url = malloc(size + 1);
    if (!url)
        return 0;
    memcpy(url, data, size);
    url[size] = '\0';
    char base[2048], err[512] = "";
    client_nats_options o;
    int rc = client_nats_parse(url, base, sizeof base, &o, err, sizeof err);
    terminated(err, sizeof err);
    if (rc == 0) {
        terminated(base, sizeof base);
        terminated(o.auth.tls_ca, sizeof o.auth.tls_ca);
        terminated(o.auth.tls_cert, sizeof o.auth.tls_cert);
        terminated(o.auth.tls_key, sizeof o.auth.tls_key);
        terminated(o.auth.creds, sizeof o.auth.creds);
        terminated(o.auth.nkey, sizeof o.auth.nkey);
        terminated(o.auth.user, sizeof o.auth.user);
        terminated(o.auth.password, sizeof o.auth.password);
        terminated(o.auth.token, sizeof o.auth.token);
        terminated(o.auth.tls_name, sizeof o.auth.tls_name);
        if (o.partitions < 1 || o.partitions > 1024 || !o.max_in_flight || !o.ack_timeout_ms)
            abort();
    }
    free(url);
    return 0;
}
