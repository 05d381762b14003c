/* Exact f64 text and base64, used where JSON carries Recap doubles and opaque bytes. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "message_fields.h"
#include "message_recap.h"

int msg_format_f64(double d, char buf[40])
{
    if (!isfinite(d))
        return -EINVAL;
    uint64_t want = f64_to_bits(d);
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 40, "%.*g", msg_g_precision(d, prec), d);
        if (f64_to_bits(strtod(buf, NULL)) == want)
            break;
    }
    /* JSON wants '.', whatever the locale prints. */
    const char *dp = localeconv()->decimal_point;
    if (dp && !(dp[0] == '.' && dp[1] == 0) && dp[0]) {
        char *p = strstr(buf, dp);
        if (p) {
            size_t dl = strlen(dp);
            *p = '.';
            memmove(p + 1, p + dl, strlen(p + dl) + 1);
        }
    }
    if (!strpbrk(buf, ".eE"))
        strcat(buf, ".0");
    return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int msg_base64_append(recd_buf *out, const uint8_t *data, size_t len)
{
    int rc = recd_buf_reserve(out, (len + 2) / 3 * 4);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < len)
            v |= data[i + 2];
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], i + 1 < len ? b64[(v >> 6) & 63] : '=',
                     i + 2 < len ? b64[v & 63] : '='};
        recd_buf_append(out, q, 4);
    }
    return 0;
}

static int b64_index(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

bool msg_base64_decode(const char *s, size_t len, recd_buf *out)
{
    if (len % 4)
        return false;
    if (recd_buf_reserve(out, len / 4 * 3) < 0)
        return false;
    for (size_t i = 0; i < len; i += 4) {
        int pad = (s[i + 3] == '=') + (s[i + 2] == '=' && s[i + 3] == '=');
        if (pad && i + 4 != len)
            return false;
        int a = b64_index(s[i]), b = b64_index(s[i + 1]);
        int c = pad >= 2 ? 0 : b64_index(s[i + 2]);
        int d = pad >= 1 ? 0 : b64_index(s[i + 3]);
        if (a < 0 || b < 0 || c < 0 || d < 0)
            return false;
        uint32_t v = ((uint32_t)a << 18) | ((uint32_t)b << 12) | ((uint32_t)c << 6) | (uint32_t)d;
        /* Canonical: the bits dropped by padding must be zero. */
        if ((pad == 1 && (v & 0xFF)) || (pad == 2 && (v & 0xFFFF)))
            return false;
        uint8_t bytes[3] = {(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
        recd_buf_append(out, bytes, (size_t)(3 - pad));
    }
    return true;
}
