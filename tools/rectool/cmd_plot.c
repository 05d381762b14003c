/* SPDX-License-Identifier: MIT */
/* `rectool plot FILE... -o OUT.svg|.png`: route maps and speed/health panels drawn with cairo
 * (plot_data.c reads the tracks through librecd's format table, plot_render.c draws them). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"
#include "file_io.h"
#include "plot_data.h"
#include "plot_render.h"
#include "seek_util.h"

static const char usage[] =
    "usage: rectool plot FILE... [--from S] [--to S] [--size WxH] -o OUT.svg|OUT.png\n"
    "\n"
    "Draws a top-down route map of each recording (north up, with a scale bar; one file is coloured\n"
    "by speed, several get their own colours: the legend names the 10 longest tracks, the others are\n"
    "grey; start is a green disc, end a black square), a speed-over-time panel (its axis covers 99%\n"
    "of the samples; faster ones are marked red at its top), and a health panel when the tracks\n"
    "carry health (health and armour on foot, vehicle health for vehicles). Time reads m:ss.\n"
    "Works for every format whose librecd entry has a track (.rec, and others: below).\n"
    "\n"
    "  -f, --from S       first second drawn (default 0; also 1m30s, 1500ms)\n"
    "  -t, --to S         last second drawn (default: the end)\n"
    "  -s, --size WxH     image size (default 1000x1000; 200..8000 each)\n"
    "  -o, --output OUT   .svg or .png file (written as OUT.part, then renamed)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit: 0 drawn, 1 a file cannot be read or holds nothing to draw, 2 usage error, 3 I/O error.\n";

/* The files' total size for the bar (what cannot be measured, like a pipe, counts 0). */
static uint64_t files_size(char **paths, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    return total;
}

/* Reading one file fills its slice of the reading part of the bar. */
typedef struct plot_reading {
    rt_edit_progress *bar;
    uint64_t before, size, all; /* bytes of the files read before, of this one, of all */
} plot_reading;

static void reading_progress(void *data, uint64_t done, uint64_t total)
{
    plot_reading *r = data;
    if (total && r->all)
        rt_progress_update(&r->bar->bar, (uint64_t)((double)r->bar->first_part *
                                                    ((double)r->before + (double)r->size * (double)done / (double)total) /
                                                    (double)r->all));
}

int cmd_plot(int argc, char **argv)
{
    static const struct option options[] = {
        {"from", required_argument, NULL, 'f'},   {"to", required_argument, NULL, 't'},
        {"size", required_argument, NULL, 's'},   {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    double from = 0, to = -1;
    rt_plot_opts po = {1000, 1000, NULL};
    const char *output = NULL, *why = NULL;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":f:t:s:o:h", options, NULL)) != -1) {
        switch (c) {
        case 'f':
        case 't':
            if (rt_edit_parse_seconds(optarg, c == 'f' ? &from : &to, &why) < 0)
                return rt_usage_error("plot", usage, "%s: invalid time '%s': %s (a number alone counts seconds)",
                                      c == 'f' ? "--from" : "--to", optarg, why);
            break;
        case 's':
            if (sscanf(optarg, "%dx%d", &po.width, &po.height) != 2 || po.width < 200 ||
                po.height < 200 || po.width > 8000 || po.height > 8000)
                return rt_usage_error("plot", usage, "--size takes WxH, each 200..8000");
            break;
        case 'o': output = optarg; break;
        case 'h': rt_print_usage("plot", usage); return RT_EXIT_OK;
        default: return rt_bad_option("plot", usage, argv, c);
        }
    }
    if (optind >= argc)
        return rt_usage_error("plot", usage, "no FILE given");
    if (!output)
        return rt_usage_error("plot", usage, "no output given (-o OUT.svg or OUT.png)");
    if (to >= 0 && to < from)
        return rt_usage_error("plot", usage, "--to is before --from");
    rt_plot_data d = {0};
    int exit_code = RT_EXIT_OK;
    rt_edit_progress bar; /* reading the tracks, then drawing them */
    uint64_t all = files_size(argv + optind, argc - optind);
    rt_edit_progress_start(&bar, "plotting", all, 50);
    plot_reading reading = {&bar, 0, 0, all};
    recd_progress watch = {reading_progress, &reading};
    for (int i = optind; i < argc && exit_code == RT_EXIT_OK; i++) {
        rt_input in;
        rt_progress_clear(&bar.bar); /* an error may follow */
        exit_code = rt_edit_open("plot", argv[i], &in);
        if (exit_code)
            break;
        char err[256] = "";
        size_t before = d.points;
        const char *slash = strrchr(argv[i], '/');
        reading.size = in.len;
        rt_input idx;
        rt_seek_index_open(argv[i], &idx);
        int rc = rt_seek_full_scan()
                     ? rt_plot_add_file(&d, slash ? slash + 1 : argv[i], in.data, in.len, from, to,
                                        &watch, err, sizeof err)
                     : rt_plot_add_file_indexed(&d, slash ? slash + 1 : argv[i], in.data, in.len,
                                                idx.data, idx.len, from, to, &watch, err, sizeof err);
        rt_seek_index_close(&idx);
        reading.before += in.len;
        if (rc < 0) {
            rt_edit_progress_finish(&bar);
            fprintf(stderr, "rectool plot: %s: %s\n", argv[i], err[0] ? err : recd_strerror(rc));
            exit_code = RT_EXIT_INVALID;
        } else if (d.points == before) {
            rt_edit_progress_finish(&bar);
            fprintf(stderr, "rectool plot: %s: no sample in the time range\n", argv[i]);
            exit_code = RT_EXIT_INVALID;
        }
        rt_input_close(&in);
    }
    if (exit_code == RT_EXIT_OK) {
        char err[300] = "";
        rt_edit_progress_second_part(&bar, 1);
        recd_progress drawing = {rt_edit_progress_second_fraction, &bar};
        int rc = rt_plot_render(&d, &po, output, &drawing, err, sizeof err);
        rt_edit_progress_finish(&bar);
        if (rc < 0) {
            fprintf(stderr, "rectool plot: %s\n", err);
            exit_code = rc == -EINVAL ? RT_EXIT_USAGE : RT_EXIT_IO;
        }
    }
    rt_plot_data_free(&d);
    return exit_code;
}
