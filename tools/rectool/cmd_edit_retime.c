/* SPDX-License-Identifier: MIT */
/* `rectool retime FILE --speed F | --rate HZ -o OUT`: plays a recording faster or slower, or resamples
 * it at a fixed rate (recd_edit_retime; the rule is in docs/editing.md). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"

static const char usage[] =
    "usage: rectool retime FILE [--speed F] [--rate HZ] -o OUT\n"
    "\n"
    "--speed F divides every time by F and multiplies velocities by F (2 plays twice as fast).\n"
    "--rate HZ then resamples on a regular grid of 1000/HZ ms: positions and velocities are\n"
    "interpolated linearly, rotations by slerp; every block that changes keys, weapon, special\n"
    "action, animation, health or another control is kept at its own time, as are the first and\n"
    "the last block. .rec files only (other formats keep their own clocks: below).\n"
    "\n"
    "  -s, --speed F      speed factor, > 0 (default 1)\n"
    "  -r, --rate HZ      resampling rate, 0 < HZ <= 1000\n"
    "  -o, --output OUT   where to write the result (OUT.part, then renamed)\n"
    "  -q, --quiet        print nothing on success\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit: 0 written, 1 the input cannot be retimed, 2 usage error, 3 I/O error.\n";

int cmd_edit_retime(int argc, char **argv)
{
    static const struct option options[] = {
        {"speed", required_argument, NULL, 's'}, {"rate", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    recd_retime_opts o = {1.0, 0.0};
    const char *output = NULL;
    bool quiet = false, given = false;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":s:r:o:qh", options, NULL)) != -1) {
        switch (c) {
        case 's':
            if (rt_edit_parse_number(optarg, &o.speed) < 0 || !(o.speed > 0))
                return rt_usage_error("retime", usage, "--speed takes a number > 0");
            given = true;
            break;
        case 'r':
            if (rt_edit_parse_number(optarg, &o.rate_hz) < 0 || !(o.rate_hz > 0) ||
                o.rate_hz > 1000)
                return rt_usage_error("retime", usage, "--rate takes a number in (0, 1000]");
            given = true;
            break;
        case 'o': output = optarg; break;
        case 'q': quiet = true; break;
        case 'h': rt_print_usage("retime", usage); return RT_EXIT_OK;
        default: return rt_bad_option("retime", usage, argv, c);
        }
    }
    if (optind + 1 != argc)
        return rt_usage_error("retime", usage, "give exactly one FILE");
    if (!given)
        return rt_usage_error("retime", usage, "give --speed, --rate or both");
    if (!output)
        return rt_usage_error("retime", usage, "no output given (-o OUT)");
    rt_input in;
    int rc = rt_edit_open("retime", argv[optind], &in);
    if (rc)
        return rc;
    recd_buf out = {0};
    char err[256] = "";
    rt_edit_progress bar;
    rt_edit_progress_start(&bar, "retiming", in.len, RT_EDIT_SHARE);
    recd_progress watch = rt_edit_progress_watch(&bar);
    rc = recd_edit_retime(rt_edit_input_of(&in), &o, recd_buf_sink(&out), &watch, err, sizeof err);
    int exit_code = rt_edit_conclude("retime", rc, err, output, &out, quiet, &bar);
    recd_buf_free(&out);
    rt_input_close(&in);
    return exit_code;
}
