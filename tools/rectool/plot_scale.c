/* SPDX-License-Identifier: MIT */
/* Tick steps, time labels and a spike-proof speed scale for rectool plot. */
#include "plot_scale.h"

#include <math.h>
#include <stdio.h>

double rt_plot_nice_step(double span, double count)
{
    double raw = span / (count < 1 ? 1 : count);
    if (!(raw > 0) || !isfinite(raw))
        return 1;
    double mag = pow(10, floor(log10(raw))), norm = raw / mag;
    return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

double rt_plot_nice_floor(double v)
{
    if (!(v > 0) || !isfinite(v))
        return 1;
    double mag = pow(10, floor(log10(v))), norm = v / mag;
    return (norm < 2 ? 1 : norm < 5 ? 2 : 5) * mag;
}

double rt_plot_time_step(double span, double count)
{
    static const double steps[] = {0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900,
                                   1800, 3600, 7200, 10800, 21600, 43200, 86400};
    double raw = span / (count < 1 ? 1 : count);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] >= raw)
            return steps[i];
    return rt_plot_nice_step(span, count);
}

void rt_plot_format_time(double t, double step, char *out, size_t outlen)
{
    const char *sign = t < 0 ? "-" : "";
    t = fabs(t);
    if (step < 1) {
        long tenths = lround(t * 10);
        snprintf(out, outlen, "%s%ld:%02ld.%ld", sign, tenths / 600, tenths / 10 % 60, tenths % 10);
        return;
    }
    long s = lround(t);
    if (s >= 3600)
        snprintf(out, outlen, "%s%ld:%02ld:%02ld", sign, s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, outlen, "%s%ld:%02ld", sign, s / 60, s % 60);
}

void rt_plot_speeds_add(rt_plot_speeds *h, double kmh)
{
    if (!isfinite(kmh) || kmh < 0)
        return;
    size_t b = kmh >= RT_PLOT_SPEED_BINS - 1 ? RT_PLOT_SPEED_BINS - 1 : (size_t)kmh;
    h->bin[b]++;
    h->n++;
    if (kmh > h->max_kmh)
        h->max_kmh = kmh;
}

double rt_plot_speeds_top(const rt_plot_speeds *h, double percentile)
{
    if (h->n == 0)
        return 0;
    uint64_t want = (uint64_t)ceil(percentile * (double)h->n), seen = 0;
    size_t b = 0;
    for (; b < RT_PLOT_SPEED_BINS - 1; b++)
        if ((seen += h->bin[b]) >= want)
            break;
    double robust = (double)(b + 1); /* the bin's upper edge */
    return h->max_kmh <= robust * 1.25 ? h->max_kmh : robust * 1.1;
}
