/* SPDX-License-Identifier: MIT */
/* Axis arithmetic for plots: 1-2-5 tick steps, time steps and m:ss labels, and a speed scale
 * that a few spikes cannot stretch (a percentile of a histogram). */
#ifndef RECTOOL_PLOT_SCALE_H
#define RECTOOL_PLOT_SCALE_H

#include <stddef.h>
#include <stdint.h>

/* A 1-2-5 step near span / count (span > 0, count >= 1); _floor: the 1-2-5 value <= v. */
double rt_plot_nice_step(double span, double count);
double rt_plot_nice_floor(double v);
/* The step of a time axis in seconds (0.1 s .. hours, on minute and hour boundaries). */
double rt_plot_time_step(double span, double count);
/* t seconds as m:ss (h:mm:ss from an hour; with tenths when step < 1). */
void rt_plot_format_time(double t, double step, char *out, size_t outlen);

/* Speeds in km/h, in 1 km/h bins; the last bin takes everything faster. */
#define RT_PLOT_SPEED_BINS 1001
typedef struct rt_plot_speeds {
    uint64_t bin[RT_PLOT_SPEED_BINS];
    uint64_t n;
    double max_kmh;
} rt_plot_speeds;

void rt_plot_speeds_add(rt_plot_speeds *h, double kmh);
/* The top of a speed axis for h: the fastest sample, unless it lies far above the given
 * percentile (then a little above the percentile, and the faster samples are clipped). */
double rt_plot_speeds_top(const rt_plot_speeds *h, double percentile);

#endif
