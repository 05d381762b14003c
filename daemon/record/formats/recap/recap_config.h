/* SPDX-License-Identifier: MIT */
/* The Recap format's own config section (recap.*): its options, kept in recd_config's
 * format_options, and the schema rows the top layer installs (session_format.config_rows). */
#ifndef RECD_DAEMON_FORMATS_RECAP_CONFIG_H
#define RECD_DAEMON_FORMATS_RECAP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "support/config.h"
#include "support/config_schema.h"

typedef struct recap_config {
    uint32_t keyframe_interval; /* ticks between FULL_STATE keyframes */
    uint32_t gzip_level;        /* 1..9 */
    int compressor;             /* recd_gzip_compressor */
} recap_config;

/* Where recap_config sits in format_options (session_format.options_offset; the list checks at
 * start that no other format's options overlap it). */
#define RECAP_OPTIONS_OFFSET 0

/* Its schema rows (support/config_schema.h). */
#define RECAP_CONFIG_ROWS 3
extern const row recap_config_rows[RECAP_CONFIG_ROWS];

static inline const recap_config *recap_config_of(const recd_config *cfg)
{
    return (const recap_config *)(const void *)(cfg->format_options.bytes + RECAP_OPTIONS_OFFSET);
}

#endif
