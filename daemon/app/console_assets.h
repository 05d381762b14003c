/* SPDX-License-Identifier: MIT */
/* The console's pages, embedded in the binary: the files under daemon/app/console/, turned into
 * byte arrays at build time by cmake/embed_assets.cmake. */
#ifndef RECD_DAEMON_CONSOLE_ASSETS_H
#define RECD_DAEMON_CONSOLE_ASSETS_H

#include <stddef.h>

typedef struct console_asset {
    const char *path;         /* "/index.html" */
    const char *content_type;
    const unsigned char *data;
    size_t len;
} console_asset;

extern const console_asset console_assets[];
extern const size_t console_asset_count;

#endif
