/* SPDX-License-Identifier: MIT */
/* The Recap format's own config section (recap.*): its options, kept in recd_config's
 * format_options, and the schema rows the top layer installs (session_format.config_rows). */
#ifndef RECD_DAEMON_FORMATS_RECAP_CONFIG_H
#define RECD_DAEMON_FORMATS_RECAP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "support/config.h"

typedef struct recap_config {
    uint32_t keyframe_interval; /* ticks between FULL_STATE keyframes */
    uint32_t gzip_level;        /* 1..9 */
    int compressor;             /* recd_gzip_compressor */
} recap_config;

struct row;

/* Its schema rows (support/config_schema.h): how many, and where. */
size_t recap_config_rows(const struct row **rows);

static inline const recap_config *recap_config_of(const recd_config *cfg)
{
    return (const recap_config *)(const void *)cfg->format_options.bytes;
}

#endif
