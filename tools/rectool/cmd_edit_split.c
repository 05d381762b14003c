/* SPDX-License-Identifier: MIT */
/* `rectool split FILE --at T...`: a recording cut into consecutive pieces, written only when
 * every piece verifies (recd_edit_split; the rule is in docs/editing.md). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"

#define SPLIT_MAX_POINTS 1000

static const char usage[] =
    "usage: rectool split FILE --at T [--at T...] [--keep-time] [-o NAME]\n"
    "\n"
    "Cuts FILE at each time T (in the format's unit, as `rectool cut` takes it, or a duration\n"
    "like 60s) into pieces [0, T1), [T1, T2), ..., [Tn, end), each rebased to 0 like `rectool\n"
    "cut`. Pieces are\n"
    "written as NAME-1.EXT, NAME-2.EXT, ... (NAME defaults to FILE without its extension), and\n"
    "only when every piece verifies. A piece that would hold nothing is an error.\n"
    "\n"
    "  -a, --at T[,T...]  split points, increasing (the option may repeat)\n"
    "  -k, --keep-time    keep the original times (formats below)\n"
    "  -o, --output NAME  the pieces' name before -N.EXT\n"
    "  -q, --quiet        print nothing on success\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit: 0 written, 1 the input cannot be split, 2 usage error, 3 I/O error.\n";

typedef struct split_pieces {
    recd_buf bufs[SPLIT_MAX_POINTS + 1];
    recd_format_verdict verdicts[SPLIT_MAX_POINTS + 1];
} split_pieces;

static int piece_sink(void *data, size_t i, recd_sink *sink)
{
    split_pieces *p = data;
    *sink = recd_buf_sink(&p->bufs[i]);
    return 0;
}

/* NAME-i.EXT from the base name and the input's extension. */
static void piece_path(char *out, size_t n, const char *base, const char *ext, size_t i)
{
    snprintf(out, n, "%s-%zu%s%s", base, i + 1, ext[0] ? "." : "", ext);
}

static int write_pieces(const char *base, const char *ext, split_pieces *p, size_t count,
                        bool quiet, rt_edit_progress *bar)
{
    char path[4096];
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; i++)
        bytes += p->bufs[i].len;
    rt_edit_progress_second_part(bar, bytes);
    /* Every piece must verify before the first is written, so the writes that follow are quick:
     * an interrupted split is all but sure to stop before any piece exists. */
    for (size_t i = 0; i < count; i++) {
        piece_path(path, sizeof path, base, ext, i);
        if (rt_edit_check("split", path, &p->bufs[i], &p->verdicts[i], bar)) {
            rt_edit_progress_finish(bar);
            fprintf(stderr, "rectool split: piece %zu of %zu failed its check; no piece written\n",
                    i + 1, count);
            return RT_EXIT_INVALID;
        }
    }
    rt_edit_progress_finish(bar);
    for (size_t i = 0; i < count; i++) {
        piece_path(path, sizeof path, base, ext, i);
        int rc = rt_edit_put("split", path, &p->bufs[i], &p->verdicts[i], quiet);
        if (rc)
            return rc;
    }
    return RT_EXIT_OK;
}

int cmd_edit_split(int argc, char **argv)
{
    static const struct option options[] = {
        {"at", required_argument, NULL, 'a'},     {"keep-time", no_argument, NULL, 'k'},
        {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *at_text[SPLIT_MAX_POINTS];
    size_t nat = 0;
    const char *name = NULL;
    bool keep = false, quiet = false;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":a:ko:qh", options, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (nat == SPLIT_MAX_POINTS)
                return rt_usage_error("split", usage, "at most %d split points",
                                      SPLIT_MAX_POINTS);
            at_text[nat++] = optarg;
            break;
        case 'k': keep = true; break;
        case 'o': name = optarg; break;
        case 'q': quiet = true; break;
        case 'h': rt_print_usage("split", usage); return RT_EXIT_OK;
        default: return rt_bad_option("split", usage, argv, c);
        }
    }
    if (optind + 1 != argc)
        return rt_usage_error("split", usage, "give exactly one FILE");
    if (nat == 0)
        return rt_usage_error("split", usage, "give at least one --at T");
    const char *path = argv[optind];
    rt_input in;
    int rc = rt_edit_open("split", path, &in);
    if (rc)
        return rc;
    const recd_format *f = rt_edit_format("split", &in);
    int exit_code = f ? RT_EXIT_OK : RT_EXIT_INVALID;
    int64_t *at = malloc(SPLIT_MAX_POINTS * sizeof *at);
    split_pieces *pieces = calloc(1, sizeof *pieces);
    size_t n = 0;
    if (!at || !pieces)
        exit_code = RT_EXIT_IO;
    for (size_t i = 0; exit_code == RT_EXIT_OK && i < nat; i++) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", at_text[i]);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t && exit_code == RT_EXIT_OK;
             t = strtok_r(NULL, ",", &save)) {
            const char *why = "too many split points";
            char words[48];
            if (n == SPLIT_MAX_POINTS || rt_edit_parse_time(t, f, &at[n], &why) < 0)
                exit_code = rt_usage_error("split", usage,
                                           "--at: invalid time '%s': %s (a number alone counts %s)", t, why,
                                           rt_edit_unit_words(f, words, sizeof words));
            n++;
        }
    }
    if (exit_code == RT_EXIT_OK) {
        char err[256] = "";
        rt_edit_progress bar;
        rt_edit_progress_start(&bar, "splitting", in.len, RT_EDIT_SHARE);
        recd_progress watch = rt_edit_progress_watch(&bar);
        rc = recd_edit_split(rt_edit_input_of(&in), at, n, keep, piece_sink, pieces, &watch, err,
                             sizeof err);
        if (rc < 0) {
            rt_edit_progress_finish(&bar);
            exit_code = rt_edit_fail("split", rc, err);
        } else {
            char ext[16], base[4096];
            rt_path_ext(path, ext, sizeof ext);
            snprintf(base, sizeof base, "%s", name ? name : path);
            size_t bl = strlen(base), el = strlen(ext);
            if (!name && el && bl > el + 1 && base[bl - el - 1] == '.')
                base[bl - el - 1] = 0;
            exit_code = write_pieces(base, ext, pieces, n + 1, quiet, &bar);
            rt_edit_progress_finish(&bar);
        }
    }
    for (size_t i = 0; pieces && i <= SPLIT_MAX_POINTS; i++)
        recd_buf_free(&pieces->bufs[i]);
    free(pieces);
    free(at);
    rt_input_close(&in);
    return exit_code;
}
