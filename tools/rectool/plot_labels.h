/* SPDX-License-Identifier: MIT */
/* Where a plot's texts went: every label's box, so a new label is placed only where it overlaps
 * none (or dropped), and tests can check that no two labels of a picture intersect. */
#ifndef RECTOOL_PLOT_LABELS_H
#define RECTOOL_PLOT_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#define RT_PLOT_MAX_LABELS 1024

typedef struct rt_plot_rect {
    double x, y, w, h;
} rt_plot_rect;

typedef struct rt_plot_labels {
    rt_plot_rect box[RT_PLOT_MAX_LABELS];
    char text[RT_PLOT_MAX_LABELS][64]; /* what each says ("" for a legend's swatch or bar) */
    size_t n;
    size_t dropped; /* labels not drawn because every place for them was taken */
} rt_plot_labels;

bool rt_plot_rects_intersect(rt_plot_rect a, rt_plot_rect b);
/* True when r overlaps no recorded box and there is room to record it. */
bool rt_plot_labels_free_at(const rt_plot_labels *l, rt_plot_rect r);
/* Records r and its text when r is free (true); otherwise counts it dropped (false). */
bool rt_plot_labels_claim(rt_plot_labels *l, rt_plot_rect r, const char *text);

#endif
