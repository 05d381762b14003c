/* SPDX-License-Identifier: MIT */
/* nats_nkey.h: an nkey is base32 (RFC 4648, no padding) of a type prefix, the key bytes and a
 * CRC-16/XMODEM of them, little-endian. A user seed holds the 32-byte Ed25519 private key; its
 * public key comes from libcrypto (OpenSSL), which libnats already loads for TLS. */
#include "wire/nats_nkey.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/wire_internal.h"

#ifdef RECD_HAVE_LIBCRYPTO
#include <openssl/evp.h>

#include "base/dl_table.h"

/* libcrypto is opened on the first seed (base/dl_table.h); libnats has usually loaded it then. */
#define CRYPTO_FUNCTIONS(X)                                                                        \
    X(EVP_PKEY_new_raw_private_key) X(EVP_PKEY_get_raw_public_key) X(EVP_PKEY_free)
static struct {
    CRYPTO_FUNCTIONS(DL_POINTER)
} crypto;
#define CRYPTO_SYMBOL(fn) DL_SYMBOL(crypto, fn)
static const dl_symbol crypto_symbols[] = {CRYPTO_FUNCTIONS(CRYPTO_SYMBOL)};
static dl_library libcrypto = DL_LIBRARY("libcrypto", RECD_CRYPTO_SONAME, RECD_CRYPTO_PACKAGE,
                                         "nkey= seeds", crypto_symbols);
#endif

#define PREFIX_SEED (18u << 3) /* 'S' */
#define PREFIX_USER (20u << 3) /* 'U' */
#define SEED_RAW 36u           /* 2 prefix bytes, 32 key bytes, 2 CRC bytes */
#define SEED_TEXT 58u          /* its base32 */
#define FILE_MAX 65536u        /* a .creds file is about 1 KiB, a seed file under 100 bytes */

static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

static uint16_t crc16_xmodem(const uint8_t *p, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

/* n base32 characters into out; -1 for a character outside A-Z2-7. Returns the bytes written. */
static int base32_decode(const char *s, size_t n, uint8_t *out, size_t cap)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = memchr(b32, s[i], 32);
        if (!c || !s[i])
            return -1;
        acc = (acc << 5) | (uint32_t)(c - b32);
        bits += 5;
        if (bits >= 8) {
            if (len == cap)
                return -1;
            bits -= 8;
            out[len++] = (uint8_t)(acc >> bits);
        }
    }
    return (int)len;
}

static void base32_encode(const uint8_t *p, size_t n, char *out)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 8) | p[i];
        bits += 8;
        while (bits >= 5) {
            bits -= 5;
            out[len++] = b32[(acc >> bits) & 31];
        }
    }
    if (bits)
        out[len++] = b32[(acc << (5 - bits)) & 31];
    out[len] = '\0';
}

/* The seed text in buf: the first token starting "SU" (a seed file, or the seed block of a
 * .creds-like file). NULL when there is none. */
static const char *find_seed(const char *buf, size_t *len)
{
    for (const char *p = buf; (p = strstr(p, "SU")) != NULL; p++) {
        if (p != buf && !strchr(" \t\r\n", p[-1]))
            continue;
        size_t n = strspn(p, b32);
        *len = n;
        return p;
    }
    return NULL;
}

int nats_nkey_public_of_seed_file(const char *path, char *pub, size_t cap, char *err,
                                  size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        recd_why(err, errlen, "nkey %.200s: %s", path, strerror(errno));
        return -EINVAL;
    }
    char *text = malloc(FILE_MAX + 1);
    if (!text) {
        fclose(f);
        return -ENOMEM;
    }
    size_t n = fread(text, 1, FILE_MAX + 1, f);
    fclose(f);
    if (n > FILE_MAX) {
        free(text);
        recd_why(err, errlen, "nkey %.200s: longer than %u bytes, not a seed file", path, FILE_MAX);
        return -EINVAL;
    }
    text[n] = '\0';
    size_t len = 0;
    const char *seed = find_seed(text, &len);
    uint8_t raw[SEED_RAW];
    const char *bad = NULL;
    if (!seed)
        bad = "no user seed (SU...) in it";
    else if (len != SEED_TEXT || base32_decode(seed, len, raw, sizeof raw) != (int)SEED_RAW)
        bad = "the seed is not 58 base32 characters";
    else if (crc16_xmodem(raw, SEED_RAW - 2) != (uint16_t)(raw[34] | raw[35] << 8))
        bad = "the seed's checksum does not match (a mistyped or truncated seed)";
    else if ((raw[0] & 0xF8) != PREFIX_SEED ||
             (((raw[0] & 7u) << 5) | (raw[1] >> 3)) != PREFIX_USER)
        bad = "not a user's seed";
    memset(text, 0, FILE_MAX + 1); /* the private key leaves memory with us */
    free(text);
    if (bad) {
        memset(raw, 0, sizeof raw);
        recd_why(err, errlen, "nkey %.200s: %s", path, bad);
        return -EINVAL;
    }
    int rc = -ENOTSUP;
#ifdef RECD_HAVE_LIBCRYPTO
    uint8_t key[35];
    size_t key_len = 32;
    char why[400];
    if (recd__dl_load(&libcrypto, why, sizeof why) < 0) {
        memset(raw, 0, sizeof raw);
        recd_why(err, errlen, "nkey %.200s: %s", path, why);
        return -ELIBACC;
    }
    EVP_PKEY *k = crypto.EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw + 2, 32);
    key[0] = (uint8_t)PREFIX_USER;
    if (k && crypto.EVP_PKEY_get_raw_public_key(k, key + 1, &key_len) == 1 && key_len == 32 &&
        cap > NATS_NKEY_PUBLIC_LEN) {
        uint16_t crc = crc16_xmodem(key, 33);
        key[33] = (uint8_t)crc;
        key[34] = (uint8_t)(crc >> 8);
        base32_encode(key, sizeof key, pub);
        rc = 0;
    } else {
        recd_why(err, errlen, "nkey %.200s: libcrypto cannot derive its Ed25519 public key", path);
        rc = -EINVAL;
    }
    crypto.EVP_PKEY_free(k);
#else
    (void)pub, (void)cap, (void)base32_encode;
    recd_why(err, errlen, "nkey %.200s: this librecd was built without libcrypto (libssl-dev)",
             path);
#endif
    memset(raw, 0, sizeof raw);
    return rc;
}
