/* SPDX-License-Identifier: MIT */
/* rectool entry point: global options and dispatch to the sub-commands declared in commands.h. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "file_io.h"
#include "formats.h"
#include "recd/common.h"
#include "recd/version.h"

/* The general commands; formats bring their own (formats.h), listed after these. */
static const rt_command commands[] = {
    {"info", cmd_info, "show format, header, counts, timing and anomalies of a recording"},
    {"verify", cmd_verify, "check that recordings are complete and valid (exit 1 if not)"},
    {"repair", cmd_repair, "cut a damaged recording back to its last complete block or member"},
    {"export", cmd_export, "convert a recording to JSON lines or CSV"},
    {"import", cmd_import, "build a recording from JSON lines or CSV"},
    {"generate", cmd_generate, "write a deterministic synthetic recording"},
    {"send", cmd_send, "stream recordings or synthetic load to a recd daemon"},
    {"cut", cmd_edit_cut, "keep one time range of a recording"},
    {"retime", cmd_edit_retime, "play a .rec faster or slower, or resample it at a fixed rate"},
    {"transform", cmd_edit_transform, "move and turn a .rec (positions, velocities, rotations)"},
    {"concat", cmd_edit_concat, "join recordings of one format, times continuing"},
    {"split", cmd_edit_split, "cut a recording into consecutive pieces"},
    {"diff", cmd_edit_diff, "show where two recordings first differ, field by field"},
    {"index", cmd_index, "build the seek index FILE.idx that cut, export and plot jump with"},
    {"plot", cmd_plot, "draw route maps and speed/health panels (SVG or PNG)"},
};

static void print_usage(FILE *out)
{
    fprintf(out, "usage: rectool [--help] [--version] COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    const rt_format_tool *tool;
    for (size_t i = 0; (tool = rt_format_tool_at(i)) != NULL; i++)
        for (const rt_command *c = tool->commands; c && c->name; c++)
            fprintf(out, "  %-9s %s\n", c->name, c->summary);
    fprintf(out, "\nRun 'rectool COMMAND --help' for the options of a command.\n"
                 "Exit codes: 0 ok, 1 invalid input or problems found, 2 usage error, 3 I/O error.\n");
}

static const rt_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    const rt_format_tool *tool;
    for (size_t i = 0; (tool = rt_format_tool_at(i)) != NULL; i++)
        for (const rt_command *c = tool->commands; c && c->name; c++)
            if (strcmp(c->name, name) == 0)
                return c;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return RT_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        print_usage(stdout);
        return RT_EXIT_OK;
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        printf("rectool %s (librecd %s)\n", RECD_VERSION_STRING, recd_version());
        return RT_EXIT_OK;
    }
    if (strcmp(first, "help") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return RT_EXIT_OK;
        }
        const rt_command *c = find_command(argv[2]);
        if (!c) {
            fprintf(stderr, "rectool: unknown command '%s'; see 'rectool --help'\n", argv[2]);
            return RT_EXIT_USAGE;
        }
        char *help_argv[] = {argv[2], "--help", NULL};
        return c->run(2, help_argv);
    }
    if (first[0] == '-') {
        fprintf(stderr, "rectool: unknown option '%s'; see 'rectool --help'\n", first);
        return RT_EXIT_USAGE;
    }
    const rt_command *c = find_command(first);
    if (!c) {
        fprintf(stderr, "rectool: unknown command '%s'; see 'rectool --help'\n", first);
        return RT_EXIT_USAGE;
    }
    rt_cleanup_on_signals(); /* a command stopped by Ctrl-C leaves no OUT.part behind */
    return c->run(argc - 1, argv + 1);
}
