/* SPDX-License-Identifier: MIT */
/* jansson as the oracle for the tree-free JSON readers (json_oracle.h). */
#include "json_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message/json/msg_json_formats.h"
#include "testutil.h"

void json_oracle_compare(const char *text, size_t len, recd_msg_format sf)
{
    char *line = malloc(len ? len : 1);
    assert_non_null(line);
    memcpy(line, text, len);
    char e1[256] = "", e2[256] = "";
    recd_msg a, b;
    int ra = recd_msg_from_json(line, len, sf, &a, e1, sizeof e1);
    int rb = msg_from_json_jansson(line, len, sf, &b, e2, sizeof e2);
    if (ra != rb || (ra < 0 && strcmp(e1, e2) != 0))
        fail_msg("%.*s: %d \"%s\" vs jansson %d \"%s\"", (int)len, line, ra, e1, rb, e2);
    if (ra < 0) {
        free(line);
        return;
    }
    recd_buf ja = {0}, jb = {0};
    int wa = recd_msg_to_json(&a, &ja), wb = recd_msg_to_json(&b, &jb);
    if (wa != wb || ja.len != jb.len || (ja.len && memcmp(ja.data, jb.data, ja.len) != 0) ||
        a.format != b.format || a.type != b.type || a.has_seq != b.has_seq || a.seq != b.seq ||
        a.save_now != b.save_now || strcmp(a.session, b.session) != 0)
        fail_msg("%.*s: values differ:\n%.*s\n%.*s", (int)len, line, (int)ja.len,
                 (const char *)ja.data, (int)jb.len, (const char *)jb.data);
    recd_buf_free(&ja);
    recd_buf_free(&jb);
    recd_msg_free(&a);
    recd_msg_free(&b);
    free(line);
}

void json_oracle_replace(char *out, size_t cap, const char *line, const char *from,
                         const char *to)
{
    const char *at = strstr(line, from);
    if (!at)
        fail_msg("'%s' is not in %s", from, line);
    snprintf(out, cap, "%.*s%s%s", (int)(at - line), line, to, at + strlen(from));
}

static bool is_digit_ascii(char c) { return c >= '0' && c <= '9'; }

void json_oracle_mutate(const char *line, size_t len, const json_oracle_mutations *m)
{
    size_t longest = 0;
    for (size_t i = 0; i < m->ninserts; i++)
        if (strlen(m->inserts[i]) > longest)
            longest = strlen(m->inserts[i]);
    size_t cap = len + 3 * longest + 1;
    char *buf = malloc(cap);
    assert_non_null(buf);
    tu_rng r = {m->seed};
    for (unsigned iter = 0; iter < m->iterations; iter++) {
        size_t n = len;
        memcpy(buf, line, n);
        for (unsigned edits = 1 + tu_rand_below(&r, 3); edits && n; edits--) {
            size_t at = tu_rand_below(&r, (uint32_t)n);
            switch (tu_rand_below(&r, 3)) {
            case 0: { /* delete a run */
                size_t k = 1 + tu_rand_below(&r, 6);
                if (at + k > n)
                    k = n - at;
                memmove(buf + at, buf + at + k, n - at - k);
                n -= k;
                break;
            }
            case 1: { /* insert a token */
                const char *ins = m->inserts[tu_rand_below(&r, (uint32_t)m->ninserts)];
                size_t k = strlen(ins);
                memmove(buf + at + k, buf + at, n - at);
                memcpy(buf + at, ins, k);
                n += k;
                break;
            }
            default: /* change a digit or a byte */
                buf[at] = (char)(is_digit_ascii(buf[at]) ? '0' + tu_rand_below(&r, 10)
                                                         : tu_rand_below(&r, 256));
            }
        }
        json_oracle_compare(buf, n, m->formats[tu_rand_below(&r, (uint32_t)m->nformats)]);
    }
    free(buf);
}

void json_oracle_truncate(const char *line, const char *const *tails, size_t ntails,
                          const recd_msg_format *formats, size_t nformats)
{
    size_t n = strlen(line), longest = 0;
    for (size_t t = 0; t < ntails; t++)
        if (strlen(tails[t]) > longest)
            longest = strlen(tails[t]);
    char *buf = malloc(n + longest + 1);
    assert_non_null(buf);
    for (size_t k = 0; k <= n; k++) {
        for (size_t t = 0; t < ntails; t++) {
            size_t k2 = strlen(tails[t]);
            memcpy(buf, line, k);
            memcpy(buf + k, tails[t], k2);
            json_oracle_compare(buf, k + k2, formats[(k + t) % nformats]);
        }
    }
    free(buf);
}
