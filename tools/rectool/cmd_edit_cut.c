/* SPDX-License-Identifier: MIT */
/* `rectool cut FILE --from T --to T -o OUT`: one time range of a recording as a new file
 * (recd_edit_cut; the rule is in docs/editing.md). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"
#include "recd/seek_index.h"
#include "seek_util.h"

static const char usage[] =
    "usage: rectool cut FILE [--from T] [--to T] [--keep-time] -o OUT\n"
    "\n"
    "Keeps the samples of FILE whose time is in [from, to): in the format's unit (below), or a\n"
    "duration with units: 90s, 1m30s, 1500ms. The result starts again at time 0 unless\n"
    "--keep-time (formats that keep times, below). The output verifies or is not written.\n"
    "With FILE.idx beside FILE (rectool index), only the range is read (see there).\n"
    "\n"
    "  -f, --from T       first time kept (default 0)\n"
    "  -t, --to T         first time no longer kept (default: the end)\n"
    "  -k, --keep-time    keep the original times (formats below)\n"
    "  -o, --output OUT   where to write the result (OUT.part, then renamed)\n"
    "  -q, --quiet        print nothing on success\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit: 0 written, 1 the input cannot be cut, 2 usage error, 3 I/O error.\n";

int cmd_edit_cut(int argc, char **argv)
{
    static const struct option options[] = {
        {"from", required_argument, NULL, 'f'}, {"to", required_argument, NULL, 't'},
        {"keep-time", no_argument, NULL, 'k'},  {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},      {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *from = NULL, *to = NULL, *output = NULL;
    bool keep = false, quiet = false;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":f:t:ko:qh", options, NULL)) != -1) {
        switch (c) {
        case 'f': from = optarg; break;
        case 't': to = optarg; break;
        case 'k': keep = true; break;
        case 'o': output = optarg; break;
        case 'q': quiet = true; break;
        case 'h': rt_print_usage("cut", usage); return RT_EXIT_OK;
        default: return rt_bad_option("cut", usage, argv, c);
        }
    }
    if (optind + 1 != argc)
        return rt_usage_error("cut", usage, "give exactly one FILE");
    if (!output)
        return rt_usage_error("cut", usage, "no output given (-o OUT)");
    rt_input in;
    int rc = rt_edit_open("cut", argv[optind], &in);
    if (rc)
        return rc;
    const recd_format *f = rt_edit_format("cut", &in);
    recd_cut_opts o = {0, -1, keep};
    const char *why = NULL;
    char words[48];
    int exit_code = RT_EXIT_OK;
    if (!f)
        exit_code = RT_EXIT_INVALID;
    else if (from && rt_edit_parse_time(from, f, &o.from, &why) < 0)
        exit_code = rt_usage_error("cut", usage, "--from: invalid time '%s': %s (a number alone counts %s)",
                                   from, why, rt_edit_unit_words(f, words, sizeof words));
    else if (to && rt_edit_parse_time(to, f, &o.to, &why) < 0)
        exit_code = rt_usage_error("cut", usage, "--to: invalid time '%s': %s (a number alone counts %s)",
                                   to, why, rt_edit_unit_words(f, words, sizeof words));
    if (exit_code == RT_EXIT_OK) {
        recd_buf out = {0};
        char err[256] = "";
        rt_edit_progress bar;
        rt_edit_progress_start(&bar, "cutting", in.len, RT_EDIT_SHARE);
        recd_progress watch = rt_edit_progress_watch(&bar);
        rt_input idx;
        rt_seek_index_open(argv[optind], &idx); /* none: the seek scans the file */
        if (rt_seek_full_scan())
            rc = recd_edit_cut(rt_edit_input_of(&in), &o, recd_buf_sink(&out), &watch, err, sizeof err);
        else
            rc = recd_edit_cut_seek(rt_edit_input_of(&in), idx.data, idx.len, &o,
                                    recd_buf_sink(&out), &watch, err, sizeof err);
        rt_seek_index_close(&idx);
        exit_code = rt_edit_conclude("cut", rc, err, output, &out, quiet, &bar);
        recd_buf_free(&out);
    }
    rt_input_close(&in);
    return exit_code;
}
