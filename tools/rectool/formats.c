/* SPDX-License-Identifier: MIT */
/* rectool's per-format presentation table, keyed by the librecd format entry's name. */
#include "formats.h"

#include <stdio.h>
#include <string.h>

#include "info.h"

static const rt_format_tool format_tools[] = {
    {"samp-onfoot", rt_info_rec, NULL, NULL},
    {"samp-vehicle", rt_info_rec, NULL, NULL},
    {"recap", rt_info_recap, NULL, NULL},
    {"carla", NULL, rt_carla_info_json, rt_carla_info},
};

void rt_format_names(char *buf, size_t len, bool (*pick)(const recd_format *f), const char *last,
                     bool with_ext)
{
    size_t n = 0, total = 0, used = 0;
    for (size_t i = 0; i < recd_format_count(); i++)
        total += pick(recd_format_at(i));
    buf[0] = '\0';
    for (size_t i = 0; i < recd_format_count() && used < len; i++) {
        const recd_format *f = recd_format_at(i);
        if (!pick(f))
            continue;
        const char *sep = n == 0 ? "" : n + 1 == total ? last : ", ";
        int w = with_ext ? snprintf(buf + used, len - used, "%s%s (.%s)", sep, f->name, f->extension)
                         : snprintf(buf + used, len - used, "%s%s", sep, f->name);
        if (w < 0)
            break;
        used += (size_t)w;
        n++;
    }
}

const rt_format_tool *rt_format_tool_of(const recd_format *f)
{
    for (size_t i = 0; f && i < sizeof format_tools / sizeof format_tools[0]; i++)
        if (strcmp(format_tools[i].name, f->name) == 0)
            return &format_tools[i];
    return NULL;
}
