/* SPDX-License-Identifier: MIT */
/* Duration and size parsing/printing for the config file (see units.h). */
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct unit {
    const char *name;
    uint64_t factor;
} unit;

static const unit duration_units[] = {
    {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000},
};

static const unit size_units[] = {
    {"B", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40},
};

/* Reads leading decimal digits. Returns the number of characters consumed, 0 when there are none,
 * or -ERANGE when the number does not fit. */
static int parse_digits(const char *s, uint64_t *value)
{
    uint64_t v = 0;
    int n = 0;
    while (s[n] >= '0' && s[n] <= '9') {
        uint64_t d = (uint64_t)(s[n] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
        n++;
    }
    *value = v;
    return n;
}

static int parse_with_units(const char *text, const unit *units, size_t nunits, int unit_optional,
                            const char *unit_hint, uint64_t *out, const char **why)
{
    static const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    if (!text || !*text) {
        *why = "empty value";
        return -EINVAL;
    }
    uint64_t number;
    int n = parse_digits(text, &number);
    if (n == -ERANGE) {
        *why = "number too large";
        return -ERANGE;
    }
    if (n == 0) {
        *why = (text[0] == '-') ? "negative values are not allowed" : "expected a number followed by a unit";
        return -EINVAL;
    }
    const char *u = text + n;
    if (*u == '.' || *u == ',') {
        *why = "fractions are not allowed; use a smaller unit";
        return -EINVAL;
    }
    while (*u == ' ')
        u++;
    if (!*u) {
        if (unit_optional || number == 0) {
            *out = number;
            return 0;
        }
        *why = unit_hint;
        return -EINVAL;
    }
    for (size_t i = 0; i < nunits; i++) {
        if (strcmp(u, units[i].name) == 0) {
            if (number > UINT64_MAX / units[i].factor) {
                *why = "value too large";
                return -ERANGE;
            }
            *out = number * units[i].factor;
            return 0;
        }
    }
    *why = unit_hint;
    return -EINVAL;
}

int recd_parse_duration_ms(const char *text, uint64_t *ms, const char **why)
{
    return parse_with_units(text, duration_units, sizeof duration_units / sizeof duration_units[0], 0,
                            "expected a unit: ms, s, m, h or d (e.g. 250ms, 30s, 5m)", ms, why);
}

int recd_parse_size(const char *text, uint64_t *bytes, const char **why)
{
    return parse_with_units(text, size_units, sizeof size_units / sizeof size_units[0], 1,
                            "expected a unit: B, KiB, MiB, GiB or TiB (e.g. 64KiB), or plain bytes", bytes,
                            why);
}

static int format_with_units(uint64_t v, const unit *units, size_t nunits, char *buf, size_t cap)
{
    size_t best = 0;
    for (size_t i = 1; i < nunits; i++)
        if (v != 0 && v % units[i].factor == 0)
            best = i;
    return snprintf(buf, cap, "%" PRIu64 "%s", v / units[best].factor, units[best].name);
}

int recd_format_duration_ms(uint64_t ms, char *buf, size_t cap)
{
    if (ms == 0)
        return snprintf(buf, cap, "0");
    return format_with_units(ms, duration_units, sizeof duration_units / sizeof duration_units[0], buf, cap);
}

int recd_format_size(uint64_t bytes, char *buf, size_t cap)
{
    if (bytes < 1024 || bytes % 1024)
        return snprintf(buf, cap, "%" PRIu64, bytes);
    return format_with_units(bytes, size_units, sizeof size_units / sizeof size_units[0], buf, cap);
}
