/* SPDX-License-Identifier: MIT */
/* f32 number text for the JSON and CSV writers (text_format_f32, text_put_f32), through a
 * per-thread memo. Telemetry repeats its floats: a simulator log's 333,500 floats hold 4,532 distinct
 * values, because every frame records every actor, standing or not. Once a thread has formatted
 * MEMO_AFTER floats, it remembers the last text of 4,096 bit patterns (direct-mapped, 128 KiB,
 * freed when the thread ends) and answers most of them with a copy instead of the shortest-digit
 * computation; a thread that formats a few (recd's) never pays for one. The text is the one
 * float_text.c (or the search) gives, so a hit writes exactly what a miss would. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/text.h"
#include "base/float_text.h"

#define CACHE_BITS 12
#define MEMO_AFTER 8192u /* floats a thread formats before it gets a memo */
#define TEXT_MAX 27 /* the longest f32 text is 18 characters ("-999999986991104.0") */

typedef struct {
    uint32_t bits;
    uint8_t len; /* 0: empty */
    char text[TEXT_MAX];
} cached_text;

typedef struct {
    cached_text slot[1u << CACHE_BITS];
} text_cache;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static bool key_made;
static _Thread_local text_cache *this_thread;
static _Thread_local uint32_t formatted; /* up to MEMO_AFTER */
static _Thread_local bool unavailable;   /* no memory or no key: this thread computes every text */

static void make_key(void) { key_made = pthread_key_create(&key, free) == 0; }

/* This thread's memo, made once it has formatted MEMO_AFTER floats. Out of line like text_miss:
 * it runs once per thread, and the common path should not pay for its calls. */
static __attribute__((noinline)) text_cache *make_thread_cache(void)
{
    if (unavailable)
        return NULL;
    if (formatted < MEMO_AFTER) {
        formatted++;
        return NULL;
    }
    pthread_once(&key_once, make_key);
    text_cache *c = key_made ? calloc(1, sizeof *c) : NULL;
    if (c && pthread_setspecific(key, c) != 0) {
        free(c);
        c = NULL;
    }
    this_thread = c;
    unavailable = c == NULL;
    return c;
}

static inline text_cache *thread_cache(void)
{
    return this_thread ? this_thread : make_thread_cache();
}

/* The computed text, remembered in e when there is one. Out of line, so that a hit (most calls)
 * does not save and restore the registers the computation needs. */
static __attribute__((noinline)) int text_miss(float f, uint32_t bits, cached_text *e,
                                               char buf[32])
{
    int n = float_text_f32(f, buf);
    if (n == -ERANGE && (n = text_format_f32_search(f, buf)) == 0)
        n = (int)strlen(buf);
    if (n > 0 && n <= TEXT_MAX && e) {
        e->bits = bits;
        e->len = (uint8_t)n;
        memcpy(e->text, buf, (size_t)n);
    }
    return n;
}

int text_f32_cached(float f, char buf[32])
{
    uint32_t bits = f32_to_bits(f);
    text_cache *c = thread_cache();
    cached_text *e = c ? &c->slot[(bits * UINT32_C(0x9E3779B1)) >> (32 - CACHE_BITS)] : NULL;
    if (e && e->len && e->bits == bits) {
        memcpy(buf, e->text, TEXT_MAX); /* whole slot: a fixed-size copy, buf holds 32 */
        return e->len;
    }
    return text_miss(f, bits, e, buf);
}

int text_format_f32(float f, char buf[32])
{
    int n = text_f32_cached(f, buf);
    if (n < 0)
        return n;
    buf[n] = '\0';
    return 0;
}

int text_put_f32(recd_buf *out, float f)
{
    int rc = text_room(out, 32);
    if (rc < 0)
        return rc;
    int n = text_f32_cached(f, (char *)out->data + out->len);
    if (n < 0)
        return n;
    out->len += (size_t)n;
    return 0;
}
