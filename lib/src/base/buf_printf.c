/* SPDX-License-Identifier: MIT */
/* recd_buf_printf (recd/buf_printf.h): short text is formatted on the stack and appended; longer
 * text is formatted again straight into the grown buffer. */
#include "recd/buf_printf.h"

#include <errno.h>
#include <stdio.h>

int recd_buf_vprintf(recd_buf *out, const char *fmt, va_list ap)
{
    char small[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    int rc = 0;
    if (n < 0)
        rc = -EINVAL;
    else if ((size_t)n < sizeof small)
        rc = recd_buf_append(out, small, (size_t)n);
    else if ((rc = recd_buf_reserve(out, (size_t)n + 1)) == 0) {
        vsnprintf((char *)out->data + out->len, (size_t)n + 1, fmt, again);
        out->len += (size_t)n;
    }
    va_end(again);
    return rc;
}

int recd_buf_printf(recd_buf *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = recd_buf_vprintf(out, fmt, ap);
    va_end(ap);
    return rc;
}
