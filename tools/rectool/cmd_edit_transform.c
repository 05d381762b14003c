/* SPDX-License-Identifier: MIT */
/* `rectool transform FILE --translate X,Y,Z --rotate-z DEG [--pivot X,Y,Z] -o OUT`: moves and
 * turns a recording whose format has transform hooks (recd_edit_transform; docs/editing.md). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"

static const char usage[] =
    "usage: rectool transform FILE [--translate X,Y,Z] [--rotate-z DEG] [--pivot X,Y,Z] -o OUT\n"
    "\n"
    "Turns every position by DEG about the vertical axis through the pivot, then moves it by the\n"
    "translation: p' = pivot + Rz(DEG)(p - pivot) + translate. A positive angle turns\n"
    "counter-clockwise seen from above (+90 maps (x, y) to (-y, x)), like GTA's heading.\n"
    "Velocities and rotation quaternions (a vehicle's orientation, the on-foot facing angle) turn\n"
    "with the positions, unlike FCNPC's playback offset, which only translates (FCNPC #299).\n"
    "The pivot defaults to the first block's position. .rec files only.\n"
    "\n"
    "  -T, --translate X,Y,Z   translation (default 0,0,0)\n"
    "  -z, --rotate-z DEG      rotation about the vertical axis in degrees (default 0)\n"
    "  -p, --pivot X,Y,Z       the point the rotation turns about\n"
    "  -o, --output OUT        where to write the result (OUT.part, then renamed)\n"
    "  -q, --quiet             print nothing on success\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit: 0 written, 1 the input cannot be transformed, 2 usage error, 3 I/O error.\n";

int cmd_edit_transform(int argc, char **argv)
{
    static const struct option options[] = {
        {"translate", required_argument, NULL, 'T'}, {"rotate-z", required_argument, NULL, 'z'},
        {"pivot", required_argument, NULL, 'p'},     {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    recd_transform_opts o = {{0, 0, 0}, 0, false, {0, 0, 0}};
    const char *output = NULL;
    bool quiet = false;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":T:z:p:o:qh", options, NULL)) != -1) {
        switch (c) {
        case 'T':
            if (rt_edit_parse_vec3(optarg, o.translate) < 0)
                return rt_usage_error("transform", usage, "--translate takes X,Y,Z");
            break;
        case 'z':
            if (rt_edit_parse_number(optarg, &o.rotate_z_deg) < 0)
                return rt_usage_error("transform", usage, "--rotate-z takes degrees");
            break;
        case 'p':
            if (rt_edit_parse_vec3(optarg, o.pivot) < 0)
                return rt_usage_error("transform", usage, "--pivot takes X,Y,Z");
            o.has_pivot = true;
            break;
        case 'o': output = optarg; break;
        case 'q': quiet = true; break;
        case 'h': fputs(usage, stdout); return RT_EXIT_OK;
        default: return rt_bad_option("transform", usage, argv, c);
        }
    }
    if (optind + 1 != argc)
        return rt_usage_error("transform", usage, "give exactly one FILE");
    if (!output)
        return rt_usage_error("transform", usage, "no output given (-o OUT)");
    rt_input in;
    int rc = rt_edit_open("transform", argv[optind], &in);
    if (rc)
        return rc;
    recd_buf out = {0};
    char err[256] = "";
    rt_edit_progress bar;
    rt_edit_progress_start(&bar, "transforming", in.len, RT_EDIT_SHARE);
    recd_progress watch = rt_edit_progress_watch(&bar);
    rc = recd_edit_transform(rt_edit_input_of(&in), &o, recd_buf_sink(&out), &watch, err,
                             sizeof err);
    int exit_code = rt_edit_conclude("transform", rc, err, output, &out, quiet, &bar);
    recd_buf_free(&out);
    rt_input_close(&in);
    return exit_code;
}
