/* SPDX-License-Identifier: MIT */
/* printf appended to a recd_buf, growing it as needed: the one formatted writer of librecd's
 * text output (queries, info, replay events) and the daemon's metrics page. */
#ifndef RECD_BUF_PRINTF_H
#define RECD_BUF_PRINTF_H

#include <stdarg.h>

#include "recd/common.h"

/* Appends the text; out is unchanged on error. 0, -ENOMEM, or -EINVAL (a bad format). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int recd_buf_printf(recd_buf *out, const char *fmt, ...);
/* The same with a va_list (for a writer that keeps its own error state). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 0)))
#endif
int recd_buf_vprintf(recd_buf *out, const char *fmt, va_list ap);

#endif
