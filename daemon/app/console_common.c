/* SPDX-License-Identifier: MIT */
/* What the console's files share: JSON answers with the console's headers, decoding of paths
 * and queries, and freeing the console once nothing refers to it. */
#include "console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void console_send_json(recd_http_reply *r, int code, const char *json)
{
    recd_http_reply_send(r, code, "application/json", CONSOLE_SECURITY_HEADERS "Cache-Control: no-store\r\n",
                         json, strlen(json));
}

void console_send_error(recd_http_reply *r, int code, const char *what)
{
    json_t *o = json_pack("{s:s}", "error", what);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    console_send_json(r, code, text ? text : "{\"error\":\"out of memory\"}");
    free(text);
    json_decref(o);
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

long console_url_decode(const char *src, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int ch = (unsigned char)src[i];
        if (ch == '%') {
            int hi = i + 2 < len + 0 ? hex_digit(src[i + 1]) : -1, lo = hi >= 0 ? hex_digit(src[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return -1;
            ch = hi * 16 + lo;
            i += 2;
        } else if (ch == '+') {
            ch = ' ';
        }
        if (ch == 0 || n + 1 >= cap)
            return -1;
        out[n++] = (char)ch;
    }
    out[n] = 0;
    return (long)n;
}

int console_query(const recd_http_request *req, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    const char *q = req->query;
    for (size_t i = 0; i < req->query_len;) {
        size_t end = i;
        while (end < req->query_len && q[end] != '&')
            end++;
        if (end - i > n && memcmp(q + i, name, n) == 0 && q[i + n] == '=')
            return console_url_decode(q + i + n + 1, end - i - n - 1, out, cap) < 0 ? -1 : 1;
        i = end + 1;
    }
    return 0;
}

void console_maybe_free(console *c)
{
    if (c->closing && c->timer_closed && !c->viewer_count && !c->jobs)
        free(c);
}
