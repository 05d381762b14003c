/* SPDX-License-Identifier: MIT */
/* Strict UTF-8 validation and code-point-safe truncation for Recap strings. */
#include <string.h>

#include "formats/recap/recap_internal.h"

static uint64_t word_at(const uint8_t *s)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return w;
}

/* True when s[0..n) is ASCII. Item keys are short ASCII names checked in every full state, so
 * words are read whole, overlapping at the end instead of a byte loop; keys of up to 32 bytes
 * (nearly all) take a fixed two or four words, without a loop. */
static bool all_ascii(const uint8_t *s, size_t n)
{
    const uint64_t high = 0x8080808080808080ull;
    uint64_t acc = 0;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            acc |= s[i];
        return !(acc & 0x80);
    }
    if (n <= 16)
        return !((word_at(s) | word_at(s + n - 8)) & high);
    if (n <= 32)
        return !((word_at(s) | word_at(s + 8) | word_at(s + n - 16) | word_at(s + n - 8)) & high);
    for (size_t i = 0; i + 8 <= n; i += 8)
        acc |= word_at(s + i);
    return !((acc | word_at(s + n - 8)) & high);
}

bool recap_utf8_valid(const uint8_t *s, size_t n)
{
    if (all_ascii(s, n))
        return true;
    size_t i = 0;
    while (i < n) {
        /* Item texts are mostly ASCII, and every full state carries them all again. */
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull)
                break;
            i += 8;
        }
        if (i == n)
            break;
        uint8_t b = s[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint32_t cp, min;
        if (b >= 0xC2 && b <= 0xDF) {
            need = 1, cp = b & 0x1Fu, min = 0x80;
        } else if (b >= 0xE0 && b <= 0xEF) {
            need = 2, cp = b & 0x0Fu, min = 0x800;
        } else if (b >= 0xF0 && b <= 0xF4) {
            need = 3, cp = b & 0x07u, min = 0x10000;
        } else {
            return false; /* continuation byte, overlong 0xC0/0xC1 lead, or > 0xF4 */
        }
        if (n - i - 1 < need)
            return false;
        for (size_t k = 1; k <= need; k++) {
            uint8_t c = s[i + k];
            if ((c & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (c & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += need + 1;
    }
    return true;
}

size_t recap_utf8_fit(const uint8_t *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t k = max;
    /* s[k] is the first byte cut off; back up while it continues the previous code point. */
    while (k > 0 && (s[k] & 0xC0) == 0x80)
        k--;
    return k;
}
