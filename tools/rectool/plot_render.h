/* SPDX-License-Identifier: MIT */
/* Drawing plot series with cairo: a top-down route map (north up, coloured by speed for one
 * series, by series otherwise; start and end marked; a scale bar) above a speed-over-time panel
 * and, when the tracks carry any, a health panel; ticks with units on every panel axis, time in
 * m:ss. The layout functions are public so tests can find a route's pixels. */
#ifndef RECTOOL_PLOT_RENDER_H
#define RECTOOL_PLOT_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "plot_data.h"
#include "plot_labels.h"

typedef struct rt_plot_opts {
    int width, height;      /* pixels (PNG) or points (SVG) */
    rt_plot_labels *labels; /* NULL, or told every label's box (for tests) */
} rt_plot_opts;

#define RT_PLOT_LEGEND_MAX 10 /* tracks named in the legend (the longest), each its own colour */
#define RT_PLOT_SPEED_PERCENTILE 0.99 /* the speed axis covers this share of the samples */

/* Where everything goes for a given data set and size. */
typedef struct rt_plot_layout {
    rt_plot_rect map, speed_panel, health_panel;
    double min_x, min_y, scale; /* world -> map pixels: px = map.x + pad + (x - min_x) * scale */
    double pad_x, pad_y;
    double max_y;
    double t0, t1;     /* time axis, seconds */
    double max_speed;  /* m/s, at least 1: the colour scale, robust to spikes */
    double speed_axis_kmh; /* top of the speed axis (a tick), >= max_speed in km/h */
    size_t clipped;    /* samples above the speed axis (marked at its top) */
    bool by_speed;     /* one series: colour by speed */
    bool has_health;   /* some sample carries health, armour or vehicle health */
    char health_caption[96]; /* names only what is drawn */
    size_t legend[RT_PLOT_LEGEND_MAX], legend_n, legend_more; /* series, longest first */
    double scale_bar_m;      /* the map's scale bar: this many metres ... */
    rt_plot_rect scale_bar;  /* ... drawn here (the bar and its label) */
} rt_plot_layout;

void rt_plot_layout_compute(const rt_plot_data *d, const rt_plot_opts *o, rt_plot_layout *l);
/* The pixel of world point (x, y) on the map. */
void rt_plot_map_point(const rt_plot_layout *l, double x, double y, double *px, double *py);
/* The colour of a speed (m/s) on the speed scale, and of series i. rgb in 0..1. */
void rt_plot_speed_colour(double speed, double max_speed, double rgb[3]);
void rt_plot_series_colour(size_t i, double rgb[3]);
/* Series i's colour in this layout: its legend rank's, or grey when the legend leaves it out. */
void rt_plot_track_colour(const rt_plot_layout *l, size_t i, double rgb[3]);


/* Draws d into path: SVG when it ends in .svg, PNG when it ends in .png (else -EINVAL).
 * progress (may be NULL) hears done of total points drawn (each point is drawn in the map and in
 * the panels), every few thousand. 0 or a negative errno with err set: -ELIBACC when cairo or
 * fontconfig cannot be loaded (they are opened with dlopen by the first plot). */
int rt_plot_render(const rt_plot_data *d, const rt_plot_opts *o, const char *path,
                   const recd_progress *progress, char *err, size_t errlen);

#endif
