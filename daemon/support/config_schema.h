/* SPDX-License-Identifier: MIT */
/* Internal to the config module (config.c, config_schema.c, config_compare.c): the schema table
 * that drives defaults, validation, comparison, dumping and documentation, and its value parsers. */
#ifndef RECD_DAEMON_CONFIG_SCHEMA_H
#define RECD_DAEMON_CONFIG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define RECD_CFG_WHY_MAX 400 /* room for a value error message */

typedef enum value_type {
    T_BOOL,
    T_U32,
    T_SIZE,
    T_DURATION,
    T_PATH,
    T_NAME, /* a name (nats.stream): stored like a path, shown as "name" */
    T_ENUM,
    T_MODE,
    T_HOSTPORT,
    T_TEMPLATE,
    T_TOKEN
} value_type;

enum {
    F_LIVE = 1,     /* can change on reload */
    F_ZERO_OFF = 2, /* 0 is allowed outside min..max and means "off" */
    F_NULLABLE = 4, /* null / empty means "not set" */
    F_ZERO_AUTO = 8 /* 0 is allowed outside min..max and means "derived from another key" */
};

typedef struct enum_name {
    const char *name;
    int value;
} enum_name;

typedef struct row {
    const char *key; /* "section.name" */
    value_type type;
    size_t offset;
    uint64_t min, max; /* numbers: bounds (ms, bytes); T_MODE: min = bits that must be set */
    unsigned flags;
    const char *def; /* default, in config-file syntax */
    const enum_name *names;
    const char *doc;
} row;

/* Keeps the closest candidate that is plausibly a typo of word. */
typedef struct recd_cfg_suggestion {
    const char *best;
    size_t distance;
} recd_cfg_suggestion;

#define RECD_CFG_ROW_MAX 80     /* the core rows and the formats' rows together */
#define RECD_CFG_SECTION_MAX 24

/* The schema: the core rows with the formats' installed rows in their place, and the sections
 * ("listen" first, then those of the rows in order). Built on first use after an install. */
extern row recd_cfg_rows[];
extern const char *recd_cfg_sections[];
size_t recd_cfg_row_count(void);
size_t recd_cfg_section_count(void);
/* Adds a format's rows (static data, kept) where the core table has its place for them, in the
 * order of the calls. A row with a core key (only key and doc set) documents that core row,
 * which the core table leaves without a doc (and an enum's names) because it exists for that
 * format; the top layer installs every format's before any config is loaded (again:
 * no change). 0 or -ENOSPC. */
int recd_config_install_format_rows(const row *rows, size_t n);
extern const enum_name recd_cfg_encodings[];

const char *recd_cfg_row_name(const row *r);                    /* "interval" of "flush.interval" */
int recd_cfg_row_in_section(const row *r, const char *section); /* 1 when r belongs to section */
const void *recd_cfg_cfield(const recd_config *cfg, const row *r);

/* Text safe to quote in a message: at most 60 bytes, control characters as '?'. */
const char *recd_cfg_shown(const char *text, char *buf, size_t cap);
void recd_cfg_consider(recd_cfg_suggestion *s, const char *word, const char *candidate);

/* Parses text as the value of r into cfg: 0, or a negative errno with the reason in why. */
int recd_cfg_parse_value(recd_config *cfg, const row *r, const char *text, char *why, size_t cap);
int recd_cfg_parse_enum(const enum_name *names, const char *text, int *out, char *why, size_t cap);
const char *recd_cfg_enum_name(const enum_name *names, int value);
void recd_cfg_format_number(const row *r, uint64_t v, char *buf, size_t cap);

int recd_cfg_parse_listen_url(const char *url, recd_listen_config *out, char *why, size_t cap);
int recd_cfg_same_listener(const recd_listen_config *a, const recd_listen_config *b);

#endif
