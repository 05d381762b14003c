/* SPDX-License-Identifier: MIT */
/* The recap.* config rows: keyframes and the gzip members of .recap files. */
#include "recap_config.h"

#include "recd/gzip_members.h"
#include "support/config_schema.h"

#define OFF(field)                                                                                 \
    (offsetof(recd_config, format_options) + RECAP_OPTIONS_OFFSET + offsetof(recap_config, field))

static const enum_name compressors[] = {
    {"libdeflate", RECD_GZIP_LIBDEFLATE},
    {"zlib", RECD_GZIP_ZLIB},
    {NULL, 0},
};

const row recap_config_rows[] = {
    {"recap.keyframe_interval", T_U32, OFF(keyframe_interval), 1, 72000, F_LIVE, "200", NULL,
     "Ticks between FULL_STATE keyframes in .recap files (20 ticks = 1 s), so players can seek."},
    {"recap.gzip_level", T_U32, OFF(gzip_level), 1, 9, F_LIVE, "6", NULL,
     "Level of .recap gzip members: 1 = fastest, 9 = smallest."},
    {"recap.compressor", T_ENUM, OFF(compressor), 0, 0, F_LIVE, "libdeflate", compressors,
     "Compressor of .recap gzip members: libdeflate (about half of zlib's CPU at level 1, and smaller "
     "output) or zlib. Both write standard gzip; the file's header records which one."},
};
