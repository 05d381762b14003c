/* SPDX-License-Identifier: MIT */
/* Durations and byte sizes as people write them ("250ms", "1h30m", "64KiB"): the one parser behind
 * recd.yaml, recd's command line and rectool's options, so every place accepts the same text and
 * refuses it with the same message.
 *
 * Durations: one or more <digits><unit> with unit ms, s, m, h or d, largest first, each unit once
 * ("1h30m", "2m500ms"); spaces may separate a number from its unit and the parts from each other.
 * A number without a unit is refused, except "0": "10" could mean seconds or milliseconds.
 * Sizes: <digits>[unit] with unit B, KiB, MiB, GiB or TiB (powers of 1024); a bare number is bytes.
 * No fractions, signs or exponents, so that a typo never silently changes a value. */
#ifndef RECD_UNITS_H
#define RECD_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 0, -EINVAL (syntax) or -ERANGE (more than 64 bits of milliseconds or bytes). On error
 * *why (when why != NULL) points at a static sentence without the value, e.g. "expected a unit
 * after each number: ms, s, m, h or d (e.g. 250ms, 30s, 1h30m)"; callers print it after the text
 * they were given. */
int recd_parse_duration_ms(const char *text, uint64_t *ms, const char **why);
int recd_parse_size(const char *text, uint64_t *bytes, const char **why);

/* Writes the value with the largest unit that represents it exactly, in a form the parsers read
 * back ("90s", "64KiB", "1000"; a zero duration is "0").
 * Return what snprintf returns. */
int recd_format_duration_ms(uint64_t ms, char *buf, size_t cap);
int recd_format_size(uint64_t bytes, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
