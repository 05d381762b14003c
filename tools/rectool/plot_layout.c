/* SPDX-License-Identifier: MIT */
/* Where a plot's parts go and which colours they take: the map's scale, the panels (a health
 * panel only when the tracks carry health), the speed axis, the legend's tracks, the scale bar. */
#include "plot_render.h"
#include "plot_scale.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MPS_TO_KMH 3.6

/* Ten colours told apart at a glance (the legend's); tracks it leaves out are grey. */
static const double series_palette[RT_PLOT_LEGEND_MAX][3] = {
    {0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
    {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.74, 0.74, 0.13},
    {0.09, 0.75, 0.81}, {0.25, 0.25, 0.25},
};
static const double unlisted_grey[3] = {0.72, 0.72, 0.72};

void rt_plot_series_colour(size_t i, double rgb[3])
{
    memcpy(rgb, series_palette[i % RT_PLOT_LEGEND_MAX], 3 * sizeof *rgb);
}

void rt_plot_track_colour(const rt_plot_layout *l, size_t i, double rgb[3])
{
    for (size_t k = 0; k < l->legend_n; k++)
        if (l->legend[k] == i) {
            rt_plot_series_colour(k, rgb);
            return;
        }
    memcpy(rgb, unlisted_grey, 3 * sizeof *rgb);
}

/* Slow blue, through green and yellow, to fast red. */
void rt_plot_speed_colour(double speed, double max_speed, double rgb[3])
{
    static const double stops[4][3] = {
        {0.15, 0.30, 0.90}, {0.10, 0.70, 0.35}, {0.95, 0.80, 0.10}, {0.85, 0.10, 0.10}};
    double f = max_speed > 0 ? speed / max_speed : 0;
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    double pos = f * 3.0;
    int k = pos >= 3.0 ? 2 : (int)pos;
    double u = pos - k;
    for (int c = 0; c < 3; c++)
        rgb[c] = stops[k][c] + (stops[k + 1][c] - stops[k][c]) * u;
}

static double series_distance(const rt_plot_series *s)
{
    double sum = 0;
    for (size_t k = 1; k < s->n; k++) {
        double d = hypot(s->pts[k].x - s->pts[k - 1].x, s->pts[k].y - s->pts[k - 1].y);
        if (isfinite(d))
            sum += d;
    }
    return sum;
}

/* The legend: the longest tracks (ties: the first), at most as many as fit. */
static void pick_legend(const rt_plot_data *d, rt_plot_layout *l, size_t fit)
{
    double dist[RT_PLOT_LEGEND_MAX];
    size_t max = fit < RT_PLOT_LEGEND_MAX ? fit : RT_PLOT_LEGEND_MAX;
    l->legend_n = 0;
    for (size_t i = 0; i < d->n; i++) {
        double di = series_distance(&d->s[i]);
        size_t at = l->legend_n;
        while (at > 0 && dist[at - 1] < di)
            at--;
        if (at >= max)
            continue;
        size_t last = l->legend_n < max ? l->legend_n : max - 1;
        memmove(&l->legend[at + 1], &l->legend[at], (last - at) * sizeof l->legend[0]);
        memmove(&dist[at + 1], &dist[at], (last - at) * sizeof dist[0]);
        l->legend[at] = i;
        dist[at] = di;
        if (l->legend_n < max)
            l->legend_n++;
    }
    l->legend_more = d->n - l->legend_n;
}

/* What the health panel draws, named in its caption; false when there is nothing to draw. */
static bool health_caption(const rt_plot_data *d, char *out, size_t outlen)
{
    bool health = false, armour = false, vehicle = false;
    for (size_t i = 0; i < d->n; i++)
        for (size_t k = 0; k < d->s[i].n; k++) {
            const recd_track_point *p = &d->s[i].pts[k];
            if (p->kind == RECD_TRACK_VEHICLE) {
                vehicle |= isfinite(p->vehicle_health);
            } else {
                health |= isfinite(p->health);
                armour |= isfinite(p->armour);
            }
        }
    snprintf(out, outlen, "%s%s%s%s%s (%%)", health ? "health (solid)" : "",
             health && armour ? ", " : "", armour ? "armour (dashed)" : "",
             (health || armour) && vehicle ? ", " : "", vehicle ? "vehicle health / 10" : "");
    return health || armour || vehicle;
}

static void layout_panels(const rt_plot_data *d, const rt_plot_opts *o, rt_plot_layout *l)
{
    double w = o->width, h = o->height;
    double margin = 10, top = 34, caption = 14, time_axis = 32;
    l->map = (rt_plot_rect){margin, top, w - 2 * margin, h * 0.62 - top};
    l->has_health = health_caption(d, l->health_caption, sizeof l->health_caption);
    int panels = l->has_health ? 2 : 1;
    double y0 = l->map.y + l->map.h + 4;
    double panel_h = (h - y0 - time_axis - panels * caption) / panels;
    l->speed_panel = (rt_plot_rect){60, y0 + caption, w - 60 - margin - 4, panel_h};
    if (l->has_health)
        l->health_panel = (rt_plot_rect){60, l->speed_panel.y + panel_h + caption,
                                         l->speed_panel.w, panel_h};
}

static void layout_speed(const rt_plot_data *d, rt_plot_layout *l)
{
    rt_plot_speeds h;
    memset(&h, 0, sizeof h);
    for (size_t i = 0; i < d->n; i++)
        for (size_t k = 0; k < d->s[i].n; k++)
            rt_plot_speeds_add(&h, d->s[i].pts[k].speed * MPS_TO_KMH);
    double top = rt_plot_speeds_top(&h, RT_PLOT_SPEED_PERCENTILE);
    l->max_speed = fmax(top / MPS_TO_KMH, 1.0);
    double kmh = l->max_speed * MPS_TO_KMH;
    double step = rt_plot_nice_step(kmh, fmax(l->speed_panel.h / 25, 2));
    l->speed_axis_kmh = ceil(kmh / step - 1e-9) * step;
    l->clipped = 0;
    for (size_t i = 0; i < d->n; i++)
        for (size_t k = 0; k < d->s[i].n; k++)
            l->clipped += d->s[i].pts[k].speed * MPS_TO_KMH > l->speed_axis_kmh;
}

/* A bar of a 1-2-5 length near a fifth of the map's width, in its bottom right corner. */
static void layout_scale_bar(rt_plot_layout *l)
{
    l->scale_bar_m = rt_plot_nice_floor(l->map.w / 5 / l->scale);
    double px = l->scale_bar_m * l->scale;
    l->scale_bar = (rt_plot_rect){l->map.x + l->map.w - 10 - px, l->map.y + l->map.h - 26, px, 20};
}

void rt_plot_layout_compute(const rt_plot_data *d, const rt_plot_opts *o, rt_plot_layout *l)
{
    memset(l, 0, sizeof *l);
    layout_panels(d, o, l);
    double min_x = INFINITY, max_x = -INFINITY, min_y = INFINITY, max_y = -INFINITY;
    l->t0 = INFINITY;
    l->t1 = -INFINITY;
    for (size_t i = 0; i < d->n; i++) {
        for (size_t k = 0; k < d->s[i].n; k++) {
            const recd_track_point *p = &d->s[i].pts[k];
            min_x = fmin(min_x, p->x), max_x = fmax(max_x, p->x);
            min_y = fmin(min_y, p->y), max_y = fmax(max_y, p->y);
            l->t0 = fmin(l->t0, p->t), l->t1 = fmax(l->t1, p->t);
        }
    }
    if (!isfinite(min_x)) {
        min_x = min_y = 0, max_x = max_y = 1;
        l->t0 = 0, l->t1 = 1;
    }
    if (l->t1 <= l->t0)
        l->t1 = l->t0 + 1;
    double span_x = fmax(max_x - min_x, 1.0), span_y = fmax(max_y - min_y, 1.0);
    double inner = 24; /* room for the markers */
    double sx = (l->map.w - 2 * inner) / span_x, sy = (l->map.h - 2 * inner) / span_y;
    l->scale = fmin(sx, sy);
    l->min_x = min_x;
    l->min_y = min_y;
    l->max_y = max_y;
    l->pad_x = (l->map.w - span_x * l->scale) / 2 + (span_x - (max_x - min_x)) * l->scale / 2;
    l->pad_y = (l->map.h - span_y * l->scale) / 2 + (span_y - (max_y - min_y)) * l->scale / 2;
    l->by_speed = d->n == 1;
    layout_speed(d, l);
    pick_legend(d, l, (size_t)fmax((l->map.h - 40) / 14 - 1, 1));
    layout_scale_bar(l);
}

void rt_plot_map_point(const rt_plot_layout *l, double x, double y, double *px, double *py)
{
    *px = l->map.x + l->pad_x + (x - l->min_x) * l->scale;
    *py = l->map.y + l->pad_y + (l->max_y - y) * l->scale; /* north up */
}
