/* SPDX-License-Identifier: MIT */
/* `rectool concat A B ... -o OUT`: recordings of one format joined, times continuing
 * (recd_edit_concat; the rule is in docs/editing.md). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"

static const char usage[] =
    "usage: rectool concat A B [C...] [--gap T] -o OUT\n"
    "\n"
    "Joins recordings of one format, each after the previous one, where its format says (below).\n"
    "The header is the first file's. The output verifies or is not written.\n"
    "\n"
    "  -g, --gap T        time between one file's end and the next one's start (ms / ticks)\n"
    "  -o, --output OUT   where to write the result (OUT.part, then renamed)\n"
    "  -q, --quiet        print nothing on success\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit: 0 written, 1 an input cannot be joined, 2 usage error, 3 I/O error.\n";

int cmd_edit_concat(int argc, char **argv)
{
    static const struct option options[] = {
        {"gap", required_argument, NULL, 'g'}, {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},     {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *output = NULL, *gap_text = NULL;
    bool quiet = false;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":g:o:qh", options, NULL)) != -1) {
        switch (c) {
        case 'g': gap_text = optarg; break;
        case 'o': output = optarg; break;
        case 'q': quiet = true; break;
        case 'h': rt_print_usage("concat", usage); return RT_EXIT_OK;
        default: return rt_bad_option("concat", usage, argv, c);
        }
    }
    int n = argc - optind;
    if (n < 2)
        return rt_usage_error("concat", usage, "give at least two files");
    if (!output)
        return rt_usage_error("concat", usage, "no output given (-o OUT)");
    rt_input *in = calloc((size_t)n, sizeof *in);
    recd_edit_input *ein = calloc((size_t)n, sizeof *ein);
    int exit_code = in && ein ? RT_EXIT_OK : RT_EXIT_IO;
    int opened = 0;
    for (; exit_code == RT_EXIT_OK && opened < n; opened++) {
        exit_code = rt_edit_open("concat", argv[optind + opened], &in[opened]);
        if (exit_code)
            break;
        ein[opened] = rt_edit_input_of(&in[opened]);
    }
    int64_t gap = -1;
    if (exit_code == RT_EXIT_OK && gap_text) {
        const recd_format *f = rt_edit_format("concat", &in[0]);
        const char *why = NULL;
        char words[48];
        if (!f)
            exit_code = RT_EXIT_INVALID;
        else if (rt_edit_parse_time(gap_text, f, &gap, &why) < 0)
            exit_code = rt_usage_error("concat", usage,
                                       "--gap: invalid time '%s': %s (a number alone counts %s)", gap_text,
                                       why, rt_edit_unit_words(f, words, sizeof words));
    }
    if (exit_code == RT_EXIT_OK) {
        recd_buf out = {0};
        char err[256] = "";
        uint64_t bytes = 0;
        for (int i = 0; i < n; i++)
            bytes += in[i].len;
        rt_edit_progress bar;
        rt_edit_progress_start(&bar, "joining", bytes, RT_EDIT_SHARE);
        recd_progress watch = rt_edit_progress_watch(&bar);
        int rc = recd_edit_concat(ein, (size_t)n, gap, recd_buf_sink(&out), &watch, err, sizeof err);
        exit_code = rt_edit_conclude("concat", rc, err, output, &out, quiet, &bar);
        recd_buf_free(&out);
    }
    for (int i = 0; i < opened; i++)
        rt_input_close(&in[i]);
    free(in);
    free(ein);
    return exit_code;
}
