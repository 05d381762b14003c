/* SPDX-License-Identifier: MIT */
/* `rectool verify FILE...`: exit 0 only when every file is complete and valid for its format;
 * otherwise one "FILE: offset N: what is wrong" line per problem and exit 1. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "progress.h"
#include "recd/format.h"
#include "report_util.h"
#include "sniff.h"

static const char usage[] =
    "usage: rectool verify [-q] [-w] FILE...\n"
    "\n"
    "Checks that each file is complete and valid for its format, recognised by content among\n"
    "every format rectool reads (the format table): a SA-MP .rec that SA-MP 0.3.7, open.mp and\n"
    "FCNPC all load, or a file of another format of the table that its verify hook accepts\n"
    "(below). Legacy, VC:MP and text-damaged .rec files are\n"
    "named and rejected. Each problem prints as 'FILE: offset N: what is wrong'.\n"
    "\n"
    "  -q, --quiet      print nothing for valid files\n"
    "  -w, --warnings   also print warnings and notes (they never fail a file)\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit: 0 all valid, 1 some file is invalid, 2 usage error, 3 I/O error.\n";

typedef struct verify_opts {
    bool quiet;
    bool warnings;
} verify_opts;

/* A recording (or a variant of one) through its format's verify hook. */
static int verify_recording(const rt_input *in, const recd_format *f, const verify_opts *o)
{
    recd_format_verdict v;
    rt_progress progress;
    rt_progress_start(&progress, "verifying", in->len, in->len >= RT_PROGRESS_MIN_BYTES);
    rt_progress_set_unit(&progress, RT_UNIT_BYTES, NULL);
    recd_report report = {.limit = RT_REPORT_LIMIT, .progress = {rt_progress_lib_cb, &progress}};
    int rc = recd_format_verify(f, in->data, in->len, &v, &report);
    rt_progress_finish(&progress);
    if (rc == -ELIBACC) { /* the format's library is missing (StormLib): no verdict on the file */
        rt_error("%s: %s", in->path, v.fallback);
        recd_report_free(&report);
        return RT_EXIT_IO;
    }
    if (v.note[0])
        printf("%s: offset %llu: %s\n", in->path, (unsigned long long)v.note_offset, v.note);
    size_t printed = rt_report_print(stdout, in->path, &report,
                                     o->warnings ? RECD_SEV_INFO : RECD_SEV_ERROR);
    if (!v.valid && printed == 0 && v.fallback[0])
        printf("%s: offset %llu: %s\n", in->path, (unsigned long long)v.fallback_offset,
               v.fallback);
    if (v.valid && !o->quiet)
        printf("%s: ok (%s)\n", in->path, v.summary);
    recd_report_free(&report);
    return v.valid ? RT_EXIT_OK : RT_EXIT_INVALID;
}

/* Names the first bytes, so a wrong file can be recognised by eye. */
static void print_unknown(const rt_input *in, const rt_sniffed *what)
{
    printf("%s: offset 0: %s (%zu bytes, starting", in->path, what->description, in->len);
    for (size_t i = 0; i < in->len && i < 8; i++)
        printf(" %02X", in->data[i]);
    printf(")\n");
}

static int verify_file(const char *path, const verify_opts *o)
{
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        rt_error("%s: %s", path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    int result = RT_EXIT_INVALID;
    rt_sniffed what;
    rt_sniff(in.data, in.len, &what);
    if (what.format)
        result = verify_recording(&in, what.format, o);
    else if (what.text != RECD_TEXT_NONE)
        printf("%s: offset 0: %s, not a recording (rectool import converts it)\n", path,
               what.description);
    else if (what.empty)
        printf("%s: offset 0: %s\n", path, what.description);
    else
        print_unknown(&in, &what);
    rt_input_close(&in);
    return result;
}

static int verify_file_cb(const char *path, const void *opts)
{
    return verify_file(path, opts);
}

int cmd_verify(int argc, char **argv)
{
    static const struct option options[] = {{"quiet", no_argument, NULL, 'q'},
                                            {"warnings", no_argument, NULL, 'w'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    verify_opts o = {false, false};
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":qwh", options, NULL)) != -1) {
        switch (c) {
        case 'q': o.quiet = true; break;
        case 'w': o.warnings = true; break;
        case 'h': rt_print_usage("verify", usage); return RT_EXIT_OK;
        default: return rt_bad_option("verify", usage, argv, c);
        }
    }
    if (optind >= argc)
        return rt_usage_error("verify", usage, "no FILE given");

    return rt_for_each_file("verifying", argv + optind, argc - optind, verify_file_cb, &o);
}
