/* SPDX-License-Identifier: MIT */
/* RECD_API marks the functions librecd exports. The library is built with hidden visibility, so
 * anything without this mark stays internal to librecd.so. */
#ifndef RECD_API_H
#define RECD_API_H

#if defined(__GNUC__) || defined(__clang__)
#define RECD_API __attribute__((visibility("default")))
#else
#define RECD_API
#endif

#endif
