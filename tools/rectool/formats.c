/* SPDX-License-Identifier: MIT */
/* rectool's per-format entries (formats.h): the one list, each entry defined in its folder under
 * tools/rectool/formats/. A format with commands of its own or info details adds its line here. */
#include "formats.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "recd/format_list.h"

extern const rt_format_tool rt_format_tool__carla;
extern const rt_format_tool rt_format_tool__rec;
extern const rt_format_tool rt_format_tool__recap;
extern const rt_format_tool rt_format_tool__rf2;
extern const rt_format_tool rt_format_tool__sc2;

/* In the order `rectool --help` lists their commands. */
static const rt_format_tool *const format_tools[] = {
    &rt_format_tool__carla,
    &rt_format_tool__rec,
    &rt_format_tool__rf2,
    &rt_format_tool__sc2,
    &rt_format_tool__recap,
};

#define TOOL_COUNT (sizeof format_tools / sizeof format_tools[0])

const rt_format_tool *rt_format_tool_at(size_t i)
{
    return i < TOOL_COUNT ? format_tools[i] : NULL;
}

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
    for (size_t i = 0; f && i < TOOL_COUNT; i++)
        for (const char *const *name = format_tools[i]->names; *name; name++)
            if (strcmp(*name, f->name) == 0)
                return format_tools[i];
    return NULL;
}

const recd_format *rt_format_find_any(const char *name, const rt_format_tool **tool)
{
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (strcmp(f->name, name) == 0) {
            *tool = rt_format_tool_of(f);
            return f;
        }
    }
    *tool = NULL;
    return NULL;
}

void rt_print_usage(const char *cmd, const char *usage)
{
    fputs(usage, stdout);
    const char *heading = "\nPer format:\n";
    for (size_t i = 0; i < TOOL_COUNT; i++)
        for (const rt_help_note *n = format_tools[i]->help_notes; n && n->cmd; n++)
            if (strcmp(n->cmd, cmd) == 0) {
                fputs(heading, stdout);
                fputs(n->text, stdout);
                heading = "";
            }
}
