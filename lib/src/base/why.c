/* SPDX-License-Identifier: MIT */
/* recd_why (base/why.h): error text into a caller's buffer, which may be absent. */
#include "base/why.h"

#include <stdarg.h>
#include <stdio.h>

void recd_why(char *why, size_t whylen, const char *fmt, ...)
{
    if (!why || !whylen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}
