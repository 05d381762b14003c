/* SPDX-License-Identifier: MIT */
/* `rectool index FILE...`: builds (or rebuilds) the sidecar seek index FILE.idx of recordings
 * whose format seeks by keyframe or frame (docs/formats/seek-index.md); --check only says
 * whether it is missing or stale. .rec files need none: their seek is arithmetic. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "recd/format.h"
#include "recd/seek_index.h"
#include "seek_util.h"

static const char usage[] =
    "usage: rectool index [--check] [-q] FILE...\n"
    "\n"
    "Writes FILE.idx, the seek index of FILE (where its keyframes or frames start, by time),\n"
    "which cut, export, plot and info use to read only the range they need. An index that no\n"
    "longer matches FILE is ignored by readers and replaced here. Formats of fixed-size blocks\n"
    "need no index: their seek is arithmetic.\n"
    "\n"
    "  -c, --check   write nothing; exit 1 when an index is missing, stale or damaged\n"
    "  -q, --quiet   print nothing on success\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit: 0 written (or up to date), 1 invalid input or stale index, 2 usage error, 3 I/O error.\n";

static int write_index(const char *path, const recd_buf *idx)
{
    char name[4096];
    if (!rt_seek_index_path(path, name, sizeof name)) {
        fprintf(stderr, "rectool index: %s: path too long\n", path);
        return RT_EXIT_USAGE;
    }
    rt_output out;
    int rc = rt_output_open(&out, name);
    if (rc == 0) {
        recd_sink sink = rt_output_sink(&out);
        rc = sink.write(sink.ctx, idx->data, idx->len);
        rc = rc < 0 ? (rt_output_abort(&out), rc) : rt_output_commit(&out);
    }
    if (rc < 0) {
        fprintf(stderr, "rectool index: %s: %s\n", name, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    return RT_EXIT_OK;
}

static int check_one(const char *path, const recd_format *f, const rt_input *in, bool quiet)
{
    rt_input idx;
    bool have = rt_seek_index_open(path, &idx);
    recd_seek_index_status st;
    recd_seek_index_check(f, in->data, in->len, idx.data, idx.len, &st);
    bool stale = recd_seek_index_stale(f, in->data, in->len, idx.data, idx.len);
    rt_seek_index_close(&idx);
    if (!have || stale) {
        printf("%s: index %s (%s; %zu of %zu entries valid)\n", path, have ? "stale" : "missing",
               st.why ? st.why : "points missing or entries damaged", st.valid, st.entries);
        return RT_EXIT_INVALID;
    }
    if (!quiet)
        printf("%s: index up to date (%zu entries)\n", path, st.valid);
    return RT_EXIT_OK;
}

static int index_one(const char *path, bool check, bool quiet)
{
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        fprintf(stderr, "rectool index: %s: %s\n", path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    const recd_format *f = recd_format_sniff(in.data, in.len, NULL);
    int exit_code = RT_EXIT_OK;
    recd_buf idx = {0};
    if (!f || !f->seek) {
        fprintf(stderr, "rectool index: %s: %s files have no seek index\n", path,
                f ? f->name : "unrecognised");
        exit_code = RT_EXIT_INVALID;
    } else if (!recd_seek_index_wanted(f)) {
        if (!quiet)
            printf("%s: %s seeks arithmetically (fixed-size blocks): no index needed\n", path, f->name);
    } else if (check) {
        exit_code = check_one(path, f, &in, quiet);
    } else if ((rc = recd_format_index_build(f, in.data, in.len, &idx)) < 0) {
        fprintf(stderr, "rectool index: %s: %s\n", path, recd_strerror(rc));
        exit_code = rc == -ENOMEM ? RT_EXIT_IO : RT_EXIT_INVALID;
    } else if ((exit_code = write_index(path, &idx)) == RT_EXIT_OK && !quiet) {
        printf("%s%s: %zu seek points\n", path, RECD_SEEK_INDEX_SUFFIX,
               (idx.len - RECD_SEEK_INDEX_HEADER_SIZE) / RECD_SEEK_INDEX_ENTRY_SIZE);
    }
    recd_buf_free(&idx);
    rt_input_close(&in);
    return exit_code;
}

int cmd_index(int argc, char **argv)
{
    static const struct option options[] = {{"check", no_argument, NULL, 'c'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    bool check = false, quiet = false;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":cqh", options, NULL)) != -1) {
        switch (c) {
        case 'c': check = true; break;
        case 'q': quiet = true; break;
        case 'h': rt_print_usage("index", usage); return RT_EXIT_OK;
        default: return rt_bad_option("index", usage, argv, c);
        }
    }
    if (optind >= argc)
        return rt_usage_error("index", usage, "no FILE given");
    int worst = RT_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        int rc = index_one(argv[i], check, quiet);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}
