/* SPDX-License-Identifier: MIT */
/* rectool's per-format presentation table, keyed by the librecd format entry's name. */
#include "formats.h"

#include <string.h>

#include "info.h"

static const rt_format_tool format_tools[] = {
    {"samp-onfoot", rt_info_rec, NULL, NULL},
    {"samp-vehicle", rt_info_rec, NULL, NULL},
    {"recap", rt_info_recap, NULL, NULL},
    {"carla", NULL, rt_carla_info_json, rt_carla_info},
};

const rt_format_tool *rt_format_tool_of(const recd_format *f)
{
    for (size_t i = 0; f && i < sizeof format_tools / sizeof format_tools[0]; i++)
        if (strcmp(format_tools[i].name, f->name) == 0)
            return &format_tools[i];
    return NULL;
}
