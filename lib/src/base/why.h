/* SPDX-License-Identifier: MIT */
/* The error text of a refusal: every "why" buffer in librecd is written through recd_why, so a
 * caller may pass NULL (or no room) when it only wants the error code. */
#ifndef RECD_BASE_WHY_H
#define RECD_BASE_WHY_H

#include <stddef.h>

/* snprintf into why[0..whylen) when why is non-NULL and whylen is not 0. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void recd_why(char *why, size_t whylen, const char *fmt, ...);

#endif
