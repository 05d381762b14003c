/* SPDX-License-Identifier: MIT */
/* Duration and size parsing and printing (see recd/units.h). */
#include "recd/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct unit {
    const char *name;
    uint64_t factor;
} unit;

/* Largest first: compound durations must follow this order. */
static const unit duration_units[] = {
    {"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1},
};
#define DURATION_UNITS (sizeof duration_units / sizeof duration_units[0])

static const unit size_units[] = {
    {"B", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40},
};
#define SIZE_UNITS (sizeof size_units / sizeof size_units[0])

#define WHY_EMPTY "empty value"
#define WHY_NEGATIVE "negative values are not allowed"
#define WHY_NUMBER "expected a number"
#define WHY_FRACTION "fractions are not allowed; use a smaller unit (e.g. 1500ms, 90m)"
#define WHY_NUMBER_RANGE "number too large"
#define WHY_VALUE_RANGE "value too large"
#define WHY_DURATION_UNIT "expected a unit after each number: ms, s, m, h or d (e.g. 250ms, 30s, 1h30m)"
#define WHY_BARE_DURATION                                                                          \
    "a number alone is not a duration: add a unit, ms, s, m, h or d (e.g. 30s)"
#define WHY_ORDER "units must go from the largest to the smallest, each once (e.g. 1h30m)"
#define WHY_SIZE_UNIT "expected a unit: B, KiB, MiB, GiB or TiB (e.g. 64KiB), or plain bytes"

static const char *ignored_why;

/* Reads decimal digits at *p. Returns the count read (0: none) or -ERANGE. */
static int read_number(const char **p, uint64_t *value)
{
    uint64_t v = 0;
    int n = 0;
    while (**p >= '0' && **p <= '9') {
        uint64_t d = (uint64_t)(**p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
        (*p)++;
        n++;
    }
    *value = v;
    return n;
}

static void skip_spaces(const char **p)
{
    while (**p == ' ')
        (*p)++;
}

/* What is wrong with text that does not start with a digit where a number belongs. */
static const char *not_a_number(const char *p)
{
    return *p == '-' ? WHY_NEGATIVE : (*p == '.' ? WHY_FRACTION : WHY_NUMBER);
}

static int fail(const char **why, const char *reason, int rc)
{
    *why = reason;
    return rc;
}

int recd_parse_duration_ms(const char *text, uint64_t *ms, const char **why)
{
    if (!why)
        why = &ignored_why;
    *why = NULL;
    if (!text || !*text)
        return fail(why, WHY_EMPTY, -EINVAL);
    const char *p = text;
    uint64_t total = 0;
    size_t next_unit = 0; /* the largest unit still allowed */
    bool first = true;
    do {
        uint64_t n;
        int digits = read_number(&p, &n);
        if (digits < 0)
            return fail(why, WHY_NUMBER_RANGE, -ERANGE);
        if (digits == 0)
            return fail(why, not_a_number(p), -EINVAL);
        if (*p == '.' || *p == ',')
            return fail(why, WHY_FRACTION, -EINVAL);
        skip_spaces(&p);
        const char *u = p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
            p++;
        size_t len = (size_t)(p - u);
        if (len == 0) {
            if (first && !*p && n == 0) { /* "0" is zero in every unit */
                *ms = 0;
                return 0;
            }
            return fail(why, first && !*p ? WHY_BARE_DURATION : WHY_DURATION_UNIT, -EINVAL);
        }
        size_t i = 0;
        while (i < DURATION_UNITS &&
               !(strlen(duration_units[i].name) == len && memcmp(duration_units[i].name, u, len) == 0))
            i++;
        if (i == DURATION_UNITS)
            return fail(why, WHY_DURATION_UNIT, -EINVAL);
        if (i < next_unit)
            return fail(why, WHY_ORDER, -EINVAL);
        next_unit = i + 1;
        uint64_t f = duration_units[i].factor;
        if (n > UINT64_MAX / f || n * f > UINT64_MAX - total)
            return fail(why, WHY_VALUE_RANGE, -ERANGE);
        total += n * f;
        first = false;
        if (*p == ' ') { /* "1h 30m": another part must follow */
            skip_spaces(&p);
            if (!*p)
                return fail(why, WHY_NUMBER, -EINVAL);
        }
    } while (*p);
    *ms = total;
    return 0;
}

int recd_parse_size(const char *text, uint64_t *bytes, const char **why)
{
    if (!why)
        why = &ignored_why;
    *why = NULL;
    if (!text || !*text)
        return fail(why, WHY_EMPTY, -EINVAL);
    const char *p = text;
    uint64_t n;
    int digits = read_number(&p, &n);
    if (digits < 0)
        return fail(why, WHY_NUMBER_RANGE, -ERANGE);
    if (digits == 0)
        return fail(why, not_a_number(p), -EINVAL);
    if (*p == '.' || *p == ',')
        return fail(why, WHY_FRACTION, -EINVAL);
    skip_spaces(&p);
    if (!*p) {
        *bytes = n;
        return 0;
    }
    size_t len = strlen(p);
    for (size_t i = 0; i < SIZE_UNITS; i++) {
        if (strlen(size_units[i].name) == len && memcmp(size_units[i].name, p, len) == 0) {
            if (n > UINT64_MAX / size_units[i].factor)
                return fail(why, WHY_VALUE_RANGE, -ERANGE);
            *bytes = n * size_units[i].factor;
            return 0;
        }
    }
    return fail(why, WHY_SIZE_UNIT, -EINVAL);
}

int recd_format_duration_ms(uint64_t ms, char *buf, size_t cap)
{
    if (ms == 0)
        return snprintf(buf, cap, "0");
    size_t best = DURATION_UNITS - 1; /* ms */
    for (size_t i = DURATION_UNITS; i-- > 0;)
        if (ms % duration_units[i].factor == 0)
            best = i;
    return snprintf(buf, cap, "%" PRIu64 "%s", ms / duration_units[best].factor, duration_units[best].name);
}

int recd_format_size(uint64_t bytes, char *buf, size_t cap)
{
    if (bytes < 1024 || bytes % 1024)
        return snprintf(buf, cap, "%" PRIu64, bytes);
    size_t best = 0;
    for (size_t i = 1; i < SIZE_UNITS; i++)
        if (bytes % size_units[i].factor == 0)
            best = i;
    return snprintf(buf, cap, "%" PRIu64 "%s", bytes / size_units[best].factor, size_units[best].name);
}
