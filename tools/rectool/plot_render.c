/* SPDX-License-Identifier: MIT */
/* Plot drawing with cairo (PNG and SVG surfaces): route map, speed panel, health panel. */
#include "plot_render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>

#include "base/dl_table.h"
#include "file_io.h"

/* cairo and fontconfig are opened by the first plot (base/dl_table.h): the other commands do not
 * map them, nor the X11, freetype, png and pixman libraries they pull in. */
#define CAIRO_FUNCTIONS(X)                                                                         \
    X(cairo_arc) X(cairo_clip) X(cairo_create) X(cairo_debug_reset_static_data) X(cairo_destroy)   \
    X(cairo_fill) X(cairo_fill_preserve) X(cairo_image_surface_create) X(cairo_line_to)            \
    X(cairo_move_to) X(cairo_new_path) X(cairo_paint) X(cairo_rectangle) X(cairo_rel_line_to)      \
    X(cairo_restore) X(cairo_save) X(cairo_select_font_face) X(cairo_set_dash)                     \
    X(cairo_set_font_size) X(cairo_set_line_cap) X(cairo_set_line_join) X(cairo_set_line_width)    \
    X(cairo_set_source_rgb) X(cairo_show_text) X(cairo_status) X(cairo_status_to_string)           \
    X(cairo_stroke) X(cairo_surface_destroy) X(cairo_surface_finish) X(cairo_surface_status)       \
    X(cairo_surface_write_to_png_stream) X(cairo_svg_surface_create_for_stream)
static struct {
    CAIRO_FUNCTIONS(DL_POINTER)
} cairo;
#define CAIRO_SYMBOL(fn) DL_SYMBOL(cairo, fn)
static const dl_symbol cairo_symbols[] = {CAIRO_FUNCTIONS(CAIRO_SYMBOL)};
static dl_library libcairo = DL_LIBRARY("cairo", RECD_CAIRO_SONAME, RECD_CAIRO_PACKAGE,
                                        "rectool plot", cairo_symbols);

#define FONTCONFIG_FUNCTIONS(X) X(FcFini)
static struct {
    FONTCONFIG_FUNCTIONS(DL_POINTER)
} fc;
#define FONTCONFIG_SYMBOL(fn) DL_SYMBOL(fc, fn)
static const dl_symbol fc_symbols[] = {FONTCONFIG_FUNCTIONS(FONTCONFIG_SYMBOL)};
static dl_library libfontconfig = DL_LIBRARY("fontconfig", RECD_FONTCONFIG_SONAME,
                                             RECD_FONTCONFIG_PACKAGE, "rectool plot", fc_symbols);

#define MPS_TO_KMH 3.6
#define ROUTE_WIDTH 3.0

/* Drawing progress: points drawn, told to the watcher every PLOT_TICK_STEP of them. */
#define PLOT_TICK_STEP 4096u
typedef struct plot_ticks {
    const recd_progress *watch; /* NULL: nobody watches */
    uint64_t done, total, next;
} plot_ticks;

static void tick(plot_ticks *t)
{
    if (t->watch && ++t->done >= t->next) {
        t->next = t->done + PLOT_TICK_STEP;
        t->watch->fn(t->watch->data, t->done, t->total);
    }
}

/* The map draws every point once, the panels two or three times (speed, then health, armour). */
static unsigned passes_of(const rt_plot_series *s) { return s->kind == RECD_TRACK_VEHICLE ? 3 : 4; }

static const double series_palette[][3] = {
    {0.12, 0.47, 0.71}, {0.89, 0.10, 0.11}, {0.20, 0.63, 0.17}, {0.42, 0.24, 0.60},
    {1.00, 0.50, 0.00}, {0.65, 0.34, 0.16}, {0.97, 0.51, 0.75}, {0.30, 0.30, 0.30},
};

void rt_plot_series_colour(size_t i, double rgb[3])
{
    const double *c = series_palette[i % (sizeof series_palette / sizeof series_palette[0])];
    memcpy(rgb, c, 3 * sizeof *rgb);
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

void rt_plot_layout_compute(const rt_plot_data *d, const rt_plot_opts *o, rt_plot_layout *l)
{
    memset(l, 0, sizeof *l);
    double w = o->width, h = o->height;
    double margin = 10, top = 34;
    l->map = (rt_plot_rect){margin, top, w - 2 * margin, h * 0.62 - top};
    double panel_h = (h - (l->map.y + l->map.h) - 3 * margin) / 2;
    l->speed_panel = (rt_plot_rect){60, l->map.y + l->map.h + margin + 4, w - 60 - margin - 4,
                                    panel_h - 8};
    l->health_panel = (rt_plot_rect){60, l->speed_panel.y + panel_h + margin, l->speed_panel.w,
                                     panel_h - 8};
    double min_x = INFINITY, max_x = -INFINITY, min_y = INFINITY, max_y = -INFINITY;
    l->t0 = INFINITY;
    l->t1 = -INFINITY;
    l->max_speed = 1.0;
    for (size_t i = 0; i < d->n; i++) {
        for (size_t k = 0; k < d->s[i].n; k++) {
            const recd_track_point *p = &d->s[i].pts[k];
            min_x = fmin(min_x, p->x), max_x = fmax(max_x, p->x);
            min_y = fmin(min_y, p->y), max_y = fmax(max_y, p->y);
            l->t0 = fmin(l->t0, p->t), l->t1 = fmax(l->t1, p->t);
            if (isfinite(p->speed))
                l->max_speed = fmax(l->max_speed, p->speed);
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
}

void rt_plot_map_point(const rt_plot_layout *l, double x, double y, double *px, double *py)
{
    *px = l->map.x + l->pad_x + (x - l->min_x) * l->scale;
    *py = l->map.y + l->pad_y + (l->max_y - y) * l->scale; /* north up */
}

static void set_rgb(cairo_t *cr, const double rgb[3])
{
    cairo.cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
}

static void text_at(cairo_t *cr, double x, double y, double size, const char *s)
{
    cairo.cairo_set_font_size(cr, size);
    cairo.cairo_move_to(cr, x, y);
    cairo.cairo_show_text(cr, s);
}

static void draw_frame(cairo_t *cr, rt_plot_rect r)
{
    cairo.cairo_set_source_rgb(cr, 0.97, 0.97, 0.97);
    cairo.cairo_rectangle(cr, r.x, r.y, r.w, r.h);
    cairo.cairo_fill_preserve(cr);
    cairo.cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cairo.cairo_set_line_width(cr, 1);
    cairo.cairo_stroke(cr);
}

static void draw_route(cairo_t *cr, const rt_plot_layout *l, const rt_plot_series *s, size_t i,
                       plot_ticks *t)
{
    double rgb[3];
    rt_plot_series_colour(i, rgb);
    cairo.cairo_set_line_width(cr, ROUTE_WIDTH);
    cairo.cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo.cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    if (!l->by_speed) {
        set_rgb(cr, rgb);
        for (size_t k = 0; k < s->n; k++) {
            double px, py;
            rt_plot_map_point(l, s->pts[k].x, s->pts[k].y, &px, &py);
            tick(t);
            if (k == 0)
                cairo.cairo_move_to(cr, px, py);
            else
                cairo.cairo_line_to(cr, px, py);
        }
        if (s->n == 1)
            cairo.cairo_rel_line_to(cr, 0, 0);
        cairo.cairo_stroke(cr);
        return;
    }
    /* One segment per step, coloured by the step's mean speed. */
    for (size_t k = 0; k + 1 < s->n || (s->n == 1 && k == 0); k++) {
        const recd_track_point *a = &s->pts[k], *b = &s->pts[s->n == 1 ? 0 : k + 1];
        tick(t);
        double ax, ay, bx, by;
        rt_plot_map_point(l, a->x, a->y, &ax, &ay);
        rt_plot_map_point(l, b->x, b->y, &bx, &by);
        rt_plot_speed_colour((a->speed + b->speed) / 2, l->max_speed, rgb);
        set_rgb(cr, rgb);
        cairo.cairo_move_to(cr, ax, ay);
        cairo.cairo_line_to(cr, bx, by);
        cairo.cairo_stroke(cr);
    }
}

/* A marker's label, to the left of it near the map's right edge. */
static void marker_label(cairo_t *cr, const rt_plot_layout *l, double x, double y, const char *s)
{
    bool left = x + 50 > l->map.x + l->map.w;
    text_at(cr, left ? x - 40 : x + 9, y, 11, s);
}

static void draw_markers(cairo_t *cr, const rt_plot_layout *l, const rt_plot_series *s)
{
    if (s->n == 0)
        return;
    double x, y;
    rt_plot_map_point(l, s->pts[0].x, s->pts[0].y, &x, &y);
    cairo.cairo_new_path(cr); /* the last label left a current point: no line from it to this arc */
    cairo.cairo_arc(cr, x, y, 7, 0, 2 * 3.14159265358979323846);
    cairo.cairo_set_source_rgb(cr, 0.1, 0.65, 0.2);
    cairo.cairo_fill_preserve(cr);
    cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    cairo.cairo_set_line_width(cr, 1.5);
    cairo.cairo_stroke(cr);
    marker_label(cr, l, x, y - 6, "start");
    rt_plot_map_point(l, s->pts[s->n - 1].x, s->pts[s->n - 1].y, &x, &y);
    cairo.cairo_rectangle(cr, x - 6, y - 6, 12, 12);
    cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    cairo.cairo_fill(cr);
    cairo.cairo_rectangle(cr, x - 2.5, y - 2.5, 5, 5);
    cairo.cairo_set_source_rgb(cr, 1, 1, 1);
    cairo.cairo_fill(cr);
    cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    marker_label(cr, l, x, y + 14, "end");
}

static void draw_speed_legend(cairo_t *cr, const rt_plot_layout *l)
{
    double x = l->map.x + 10, y = l->map.y + l->map.h - 22, w = 160;
    for (int k = 0; k < 64; k++) {
        double rgb[3];
        rt_plot_speed_colour(l->max_speed * k / 63.0, l->max_speed, rgb);
        set_rgb(cr, rgb);
        cairo.cairo_rectangle(cr, x + w * k / 64.0, y, w / 64.0 + 0.5, 8);
        cairo.cairo_fill(cr);
    }
    char s[64];
    cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    snprintf(s, sizeof s, "speed 0 - %.0f km/h", l->max_speed * MPS_TO_KMH);
    text_at(cr, x, y + 19, 10, s);
}

static void draw_series_legend(cairo_t *cr, const rt_plot_layout *l, const rt_plot_data *d)
{
    for (size_t i = 0; i < d->n && i < 12; i++) {
        double rgb[3];
        rt_plot_series_colour(i, rgb);
        double y = l->map.y + 14 + 14.0 * (double)i;
        set_rgb(cr, rgb);
        cairo.cairo_rectangle(cr, l->map.x + 8, y - 7, 16, 6);
        cairo.cairo_fill(cr);
        cairo.cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, l->map.x + 30, y, 10, d->s[i].label);
    }
}

static double panel_x(const rt_plot_layout *l, rt_plot_rect r, double t)
{
    return r.x + (t - l->t0) / (l->t1 - l->t0) * r.w;
}

/* One value of a point on a panel, or NaN. which: 0 speed km/h, 1 health, 2 armour,
 * 3 vehicle health in percent. */
static double panel_value(const recd_track_point *p, int which)
{
    switch (which) {
    case 0: return p->speed * MPS_TO_KMH;
    case 1: return p->health;
    case 2: return p->armour;
    default: return p->vehicle_health / 10.0;
    }
}

static void draw_panel_line(cairo_t *cr, const rt_plot_layout *l, rt_plot_rect r,
                            const rt_plot_series *s, int which, double max, const double rgb[3],
                            bool dashed, plot_ticks *t)
{
    bool pen = false;
    for (size_t k = 0; k < s->n; k++) {
        tick(t);
        double v = panel_value(&s->pts[k], which);
        if (!isfinite(v)) {
            pen = false;
            continue;
        }
        double x = panel_x(l, r, s->pts[k].t);
        double y = r.y + r.h - fmin(fmax(v / max, 0), 1) * r.h;
        if (pen)
            cairo.cairo_line_to(cr, x, y);
        else
            cairo.cairo_move_to(cr, x, y);
        pen = true;
    }
    set_rgb(cr, rgb);
    cairo.cairo_set_line_width(cr, 1.5);
    double dash[] = {5, 3};
    cairo.cairo_set_dash(cr, dash, dashed ? 2 : 0, 0);
    cairo.cairo_stroke(cr);
    cairo.cairo_set_dash(cr, NULL, 0, 0);
}

static void draw_axes(cairo_t *cr, const rt_plot_layout *l, rt_plot_rect r, const char *label,
                      double max, bool time_labels)
{
    draw_frame(cr, r);
    char s[64];
    cairo.cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    snprintf(s, sizeof s, "%.0f", max);
    text_at(cr, r.x - 32, r.y + 9, 9, s);
    text_at(cr, r.x - 12, r.y + r.h, 9, "0");
    text_at(cr, r.x + 2, r.y - 3, 10, label); /* above the frame: lines may run along the top */
    if (time_labels) {
        snprintf(s, sizeof s, "%.1f s", l->t0);
        text_at(cr, r.x, r.y + r.h + 11, 9, s);
        snprintf(s, sizeof s, "%.1f s", l->t1);
        text_at(cr, r.x + r.w - 40, r.y + r.h + 11, 9, s);
    }
}

static void draw(cairo_t *cr, const rt_plot_data *d, const rt_plot_layout *l, plot_ticks *t)
{
    cairo.cairo_set_source_rgb(cr, 1, 1, 1);
    cairo.cairo_paint(cr);
    cairo.cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                                 CAIRO_FONT_WEIGHT_NORMAL);
    char title[300];
    if (d->n == 1)
        snprintf(title, sizeof title, "%s (%zu samples)", d->s[0].label, d->s[0].n);
    else
        snprintf(title, sizeof title, "%zu tracks from %zu files", d->n, d->files);
    cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, 10, 22, 14, title);
    draw_frame(cr, l->map);
    cairo.cairo_save(cr);
    cairo.cairo_rectangle(cr, l->map.x, l->map.y, l->map.w, l->map.h);
    cairo.cairo_clip(cr);
    for (size_t i = 0; i < d->n; i++)
        draw_route(cr, l, &d->s[i], i, t);
    for (size_t i = 0; i < d->n; i++)
        draw_markers(cr, l, &d->s[i]);
    cairo.cairo_restore(cr);
    if (l->by_speed)
        draw_speed_legend(cr, l);
    else
        draw_series_legend(cr, l, d);

    double max_kmh = l->max_speed * MPS_TO_KMH;
    draw_axes(cr, l, l->speed_panel, "speed (km/h)", max_kmh, false);
    draw_axes(cr, l, l->health_panel, "health % (solid), armour % (dashed), vehicle health / 10",
              100, true);
    for (size_t i = 0; i < d->n; i++) {
        double rgb[3];
        if (l->by_speed)
            rgb[0] = 0.12, rgb[1] = 0.30, rgb[2] = 0.65;
        else
            rt_plot_series_colour(i, rgb);
        const rt_plot_series *s = &d->s[i];
        draw_panel_line(cr, l, l->speed_panel, s, 0, max_kmh, rgb, false, t);
        if (s->kind == RECD_TRACK_VEHICLE) {
            draw_panel_line(cr, l, l->health_panel, s, 3, 100, rgb, false, t);
        } else {
            draw_panel_line(cr, l, l->health_panel, s, 1, 100, rgb, false, t);
            draw_panel_line(cr, l, l->health_panel, s, 2, 100, rgb, true, t);
        }
    }
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* cairo's stream writer: the whole buffer into the part file, or an error. */
static cairo_status_t write_part(void *closure, const unsigned char *data, unsigned int len)
{
    rt_output *out = closure;
    recd_sink sink = rt_output_sink(out);
    return sink.write(sink.ctx, data, len) < 0 ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

int rt_plot_render(const rt_plot_data *d, const rt_plot_opts *o, const char *path,
                   const recd_progress *progress, char *err, size_t errlen)
{
    bool svg = ends_with(path, ".svg");
    if (!svg && !ends_with(path, ".png")) {
        snprintf(err, errlen, "%s: the output must end in .svg or .png", path);
        return -EINVAL;
    }
    int rc = recd__dl_load(&libcairo, err, errlen);
    if (rc == 0)
        rc = recd__dl_load(&libfontconfig, err, errlen);
    if (rc < 0)
        return rc;
    rt_plot_layout l;
    rt_plot_layout_compute(d, o, &l);
    /* Drawn into a new PATH.part (rt_output: never through a link) and renamed, so a failed plot
     * never leaves a half image; a signal removes the part while the SVG surface writes it. */
    rt_output out;
    if ((rc = rt_output_open(&out, path)) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    plot_ticks t = {progress && progress->fn ? progress : NULL, 0, 0, 0};
    for (size_t i = 0; i < d->n; i++)
        t.total += (uint64_t)d->s[i].n * passes_of(&d->s[i]);
    cairo_surface_t *surface =
        svg ? cairo.cairo_svg_surface_create_for_stream(write_part, &out, o->width, o->height)
            : cairo.cairo_image_surface_create(CAIRO_FORMAT_RGB24, o->width, o->height);
    cairo_t *cr = cairo.cairo_create(surface);
    draw(cr, d, &l, &t);
    cairo_status_t st = cairo.cairo_status(cr);
    cairo.cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS && !svg)
        st = cairo.cairo_surface_write_to_png_stream(surface, write_part, &out);
    cairo.cairo_surface_finish(surface);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo.cairo_surface_status(surface);
    cairo.cairo_surface_destroy(surface);
    /* Font caches live until exit; free them so leak checkers see a clean process. */
    cairo.cairo_debug_reset_static_data();
    fc.FcFini();
    if (st != CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "%s: %s", path, cairo.cairo_status_to_string(st));
        rc = st == CAIRO_STATUS_NO_MEMORY ? -ENOMEM : -EIO;
    }
    if (rc < 0) {
        rt_output_abort(&out);
    } else if ((rc = rt_output_commit(&out)) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
    }
    return rc;
}
