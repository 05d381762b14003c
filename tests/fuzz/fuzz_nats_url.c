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
        terminated(o.tls_ca, sizeof o.tls_ca);
        terminated(o.tls_cert, sizeof o.tls_cert);
        terminated(o.tls_key, sizeof o.tls_key);
        terminated(o.creds, sizeof o.creds);
        terminated(o.nkey, sizeof o.nkey);
        terminated(o.user, sizeof o.user);
        terminated(o.password, sizeof o.password);
        terminated(o.token, sizeof o.token);
        if (o.partitions < 1 || o.partitions > 1024 || !o.max_in_flight || !o.ack_timeout_ms)
            abort();
    }
    free(url);
    return 0;
}
