/* SPDX-License-Identifier: MIT */
/* What `rectool plot` draws: one series of track points per actor of each file, read through
 * librecd's format table (recd_track_read), limited to a time range. */
#ifndef RECTOOL_PLOT_DATA_H
#define RECTOOL_PLOT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "recd/edit.h"

#define RT_PLOT_MAX_POINTS (16u * 1024u * 1024u) /* over all series: hostile inputs stay bounded */

typedef struct rt_plot_series {
    char label[256]; /* file name, plus the actor when a file has several */
    size_t file;     /* index of the file it came from */
    int64_t actor;
    recd_track_kind kind;
    recd_track_point *pts;
    size_t n, cap;
} rt_plot_series;

typedef struct rt_plot_data {
    rt_plot_series *s;
    size_t n, cap;
    size_t files;
    size_t points; /* over all series */
} rt_plot_data;

/* Adds the samples of one recording with from <= t <= to (seconds; to < 0: no end) as series
 * labelled by name, reading every point (recd_track_read: no seek, what RECTOOL_FULL_SCAN=1
 * compares with). progress (may be NULL) watches the reading. 0, or a
 * negative errno with err set. */
int rt_plot_add_file(rt_plot_data *d, const char *name, const uint8_t *buf, size_t len,
                     double from, double to, const recd_progress *progress, char *err,
                     size_t errlen);
/* The same, reading only from the seek point of `from` when index (FILE.idx, may be NULL) or a
 * scan finds one (docs/formats/seek-index.md): the same points. */
int rt_plot_add_file_indexed(rt_plot_data *d, const char *name, const uint8_t *buf, size_t len,
                             const uint8_t *index, size_t ilen, double from, double to,
                             const recd_progress *progress, char *err, size_t errlen);
void rt_plot_data_free(rt_plot_data *d);

#endif
