/* SPDX-License-Identifier: MIT */
/* `rectool diff A B`: where two recordings first differ, field by field (recd_edit_diff). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"

static const char usage[] =
    "usage: rectool diff [-q] A B\n"
    "\n"
    "Compares two recordings sample by sample and shows the first sample (block, tick: below)\n"
    "that differs, one 'field: A vs B' line per differing field; or where one file ends first.\n"
    "\n"
    "  -q, --quiet   print nothing; only the exit code tells\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit: 0 same, 1 different, 2 usage error, 3 I/O error or a file that cannot be read.\n";

int cmd_edit_diff(int argc, char **argv)
{
    static const struct option options[] = {{"quiet", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    bool quiet = false;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":qh", options, NULL)) != -1) {
        switch (c) {
        case 'q': quiet = true; break;
        case 'h': rt_print_usage("diff", usage); return RT_EXIT_OK;
        default: return rt_bad_option("diff", usage, argv, c);
        }
    }
    if (optind + 2 != argc)
        return rt_usage_error("diff", usage, "give two files");
    rt_input a, b;
    int rc = rt_edit_open("diff", argv[optind], &a);
    if (rc)
        return rc;
    rc = rt_edit_open("diff", argv[optind + 1], &b);
    if (rc) {
        rt_input_close(&a);
        return rc;
    }
    recd_buf out = {0};
    char err[256] = "";
    rt_edit_progress bar;
    rt_edit_progress_start(&bar, "comparing", (uint64_t)a.len + b.len, 100);
    recd_progress watch = rt_edit_progress_watch(&bar);
    rc = recd_edit_diff(rt_edit_input_of(&a), rt_edit_input_of(&b), &out, &watch, err, sizeof err);
    rt_edit_progress_finish(&bar);
    int exit_code;
    if (rc < 0) {
        fprintf(stderr, "rectool diff: %s\n", err[0] ? err : recd_strerror(rc));
        exit_code = RT_EXIT_IO;
    } else {
        if (!quiet && rc == 0)
            printf("same: %s and %s hold the same samples\n", argv[optind], argv[optind + 1]);
        if (!quiet && rc == 1)
            fwrite(out.data, 1, out.len, stdout);
        exit_code = rc == 0 ? RT_EXIT_OK : RT_EXIT_INVALID;
    }
    recd_buf_free(&out);
    rt_input_close(&a);
    rt_input_close(&b);
    return exit_code;
}
