/* SPDX-License-Identifier: MIT */
/* The public nkey of a NATS user's seed file, which libnats needs beside the file to answer a
 * server's nonce (natsOptions_SetNKeyFromSeed) but cannot compute itself. */
#ifndef RECD_WIRE_NATS_NKEY_H
#define RECD_WIRE_NATS_NKEY_H

#include <stddef.h>

#define NATS_NKEY_PUBLIC_LEN 56 /* base32 of 1 prefix byte, 32 key bytes, 2 CRC bytes */

/* Reads path (a seed SU..., alone or in a "-----BEGIN USER NKEY SEED-----" block) and writes the
 * user's public nkey (U..., NUL-terminated) into pub (at least NATS_NKEY_PUBLIC_LEN + 1 bytes).
 * 0, -EINVAL with err naming the file and what is wrong with it, -ELIBACC when libcrypto cannot
 * be loaded (it is opened with dlopen on first use), or -ENOTSUP when librecd was built without
 * libcrypto. */
int nats_nkey_public_of_seed_file(const char *path, char *pub, size_t cap, char *err,
                                  size_t errlen);

#endif
