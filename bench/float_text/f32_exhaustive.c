/* SPDX-License-Identifier: MIT */
/* Exhaustive check of the f32 number text: for every finite f32 bit pattern in [FIRST, LAST]
 * (hex arguments, default all), the text text_f32_cached writes through the f32 fast path
 * (float_text_f32) must equal the 19-digit algorithm's, the one used before that path
 * (float_text_f32_wide). Where either returns -ERANGE, the final text is the printf/strtod
 * search's, so the other's text is compared with the search. Not part of `make test` (it takes
 * minutes); docs/performance.md has the result. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/float_text.h"

/* The final text for a fast-path answer n in buf: buf itself, or the search's. */
static const char *final_text(float f, int n, char *buf, char *search, bool *searched)
{
    if (n >= 0)
        return buf;
    if (!*searched) {
        if (text_format_f32_search(f, search) != 0)
            return NULL;
        *searched = true;
    }
    return search;
}

int main(int argc, char **argv)
{
    uint64_t first = argc > 1 ? strtoull(argv[1], NULL, 16) : 0;
    uint64_t last = argc > 2 ? strtoull(argv[2], NULL, 16) : UINT32_MAX;
    uint64_t checked = 0, new_fallback = 0, old_fallback = 0, searched_n = 0, differ = 0;
    for (uint64_t b = first; b <= last; b++) {
        if (((b >> 23) & 0xff) == 0xff) { /* NaN and infinity: skip the whole exponent */
            b |= 0x7fffff;
            continue;
        }
        float f = f32_from_bits((uint32_t)b);
        char now[32], before[32], search[32];
        int n = float_text_f32(f, now), o = float_text_f32_wide(f, before);
        checked++;
        new_fallback += n == -ERANGE;
        old_fallback += o == -ERANGE;
        bool same;
        if (n >= 0 && o >= 0) {
            same = n == o && strcmp(now, before) == 0 && (size_t)n == strlen(now);
        } else if ((n < 0 && n != -ERANGE) || (o < 0 && o != -ERANGE)) {
            same = false;
        } else if (n < 0 && o < 0) {
            same = true; /* both the search */
        } else {
            bool did = false;
            const char *a = final_text(f, n, now, search, &did);
            const char *c = final_text(f, o, before, search, &did);
            searched_n++;
            same = a && c && strcmp(a, c) == 0 && (n < 0 || (size_t)n == strlen(now));
        }
        if (!same) {
            if (differ < 20)
                printf("DIFF bits %08" PRIx64 " (%a): now %d \"%s\", before %d \"%s\"\n", b,
                       (double)f, n, n >= 0 ? now : "-", o, o >= 0 ? before : "-");
            differ++;
        }
        if ((b & 0xfffffff) == 0xfffffff) {
            fprintf(stderr, "at %08" PRIx64 ": %" PRIu64 " checked, %" PRIu64 " differ\n", b,
                    checked, differ);
        }
    }
    printf("range %08" PRIx64 "..%08" PRIx64 ": %" PRIu64 " finite values, %" PRIu64
           " differ; -ERANGE now %" PRIu64 ", before %" PRIu64 "; %" PRIu64
           " compared with the search\n",
           first, last, checked, differ, new_fallback, old_fallback, searched_n);
    return differ ? 1 : 0;
}
