/* SPDX-License-Identifier: MIT */
/* Human units of recd.yaml: durations ("250ms", "5m", "30d") and byte sizes ("64KiB", "1000").
 * Parsing is strict (one integer, one unit, no fractions) so a typo never silently changes a value. */
#ifndef RECD_DAEMON_UNITS_H
#define RECD_DAEMON_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parses "<digits><unit>" with unit ms, s, m, h or d; a bare "0" is allowed. Returns 0, -EINVAL
 * (syntax; *why says what is wrong) or -ERANGE (does not fit in 64 bits of milliseconds). */
int recd_parse_duration_ms(const char *text, uint64_t *ms, const char **why);

/* Parses "<digits>[unit]" with unit B, KiB, MiB, GiB or TiB (none = bytes). Same returns. */
int recd_parse_size(const char *text, uint64_t *bytes, const char **why);

/* Writes the value with the largest unit that represents it exactly ("90s", "64KiB").
 * Returns the length snprintf would have written. */
int recd_format_duration_ms(uint64_t ms, char *buf, size_t cap);
int recd_format_size(uint64_t bytes, char *buf, size_t cap);

#endif
