/* SPDX-License-Identifier: MIT */
/* Plot drawing with cairo (PNG and SVG surfaces): route map, speed panel, health panel, their
 * axes, legends and labels (placed where they overlap no other label, else dropped). */
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

#include "plot_scale.h"

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
    X(cairo_surface_write_to_png_stream) X(cairo_svg_surface_create_for_stream)                  \
    X(cairo_text_extents)
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

/* The map draws every point once, the panels once for speed and, with a health panel, once for
 * vehicle health or twice on foot (health, armour). */
static unsigned passes_of(const rt_plot_layout *l, const rt_plot_series *s)
{
    if (!l->has_health)
        return 2;
    return s->kind == RECD_TRACK_VEHICLE ? 3 : 4;
}

/* One drawing: the cairo context, the layout and the labels drawn so far. */
typedef struct plot_pen {
    cairo_t *cr;
    const rt_plot_layout *l;
    rt_plot_labels *labels;
    double width;
} plot_pen;

static void set_rgb(cairo_t *cr, const double rgb[3])
{
    cairo.cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
}

/* The box of s drawn at baseline (x, y) in size. */
static rt_plot_rect text_box(cairo_t *cr, double x, double y, double size, const char *s)
{
    cairo_text_extents_t e;
    cairo.cairo_set_font_size(cr, size);
    cairo.cairo_text_extents(cr, s, &e);
    return (rt_plot_rect){x, y - size * 0.95, e.x_advance, size * 1.2};
}

/* Draws s with its box at r (from text_box) when r overlaps no label drawn before. */
static bool label_in(plot_pen *p, rt_plot_rect r, double size, const char *s)
{
    if (!rt_plot_labels_claim(p->labels, r, s))
        return false;
    cairo.cairo_set_font_size(p->cr, size);
    cairo.cairo_move_to(p->cr, r.x, r.y + size * 0.95);
    cairo.cairo_show_text(p->cr, s);
    return true;
}

/* A label at baseline y, its left (align 0), centre (1) or right end (2) at x, kept inside the
 * picture; false when it would overlap another label (it is then not drawn). */
static bool label(plot_pen *p, double x, double y, double size, int align, const char *s)
{
    rt_plot_rect r = text_box(p->cr, x, y, size, s);
    if (r.w > p->width) {
        p->labels->dropped++;
        return false;
    }
    r.x -= align * r.w / 2;
    r.x = fmax(0, fmin(r.x, p->width - r.w));
    return label_in(p, r, size, s);
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
    rt_plot_track_colour(l, i, rgb);
    cairo.cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo.cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    if (!l->by_speed) {
        cairo.cairo_set_line_width(cr, rgb[0] == rgb[1] && rgb[1] == rgb[2] ? 1.5 : ROUTE_WIDTH);
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
    cairo.cairo_set_line_width(cr, ROUTE_WIDTH);
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

static void draw_marker_shapes(cairo_t *cr, const rt_plot_layout *l, const rt_plot_series *s)
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
    rt_plot_map_point(l, s->pts[s->n - 1].x, s->pts[s->n - 1].y, &x, &y);
    cairo.cairo_rectangle(cr, x - 6, y - 6, 12, 12);
    cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    cairo.cairo_fill(cr);
    cairo.cairo_rectangle(cr, x - 2.5, y - 2.5, 5, 5);
    cairo.cairo_set_source_rgb(cr, 1, 1, 1);
    cairo.cairo_fill(cr);
}

static bool inside(rt_plot_rect outer, rt_plot_rect r)
{
    return r.x >= outer.x && r.y >= outer.y && r.x + r.w <= outer.x + outer.w &&
           r.y + r.h <= outer.y + outer.h;
}

/* A marker's label at the first free place around it inside the map, or none. */
static void marker_label(plot_pen *p, double x, double y, const char *s)
{
    static const double at[4][2] = {{9, -6}, {-9, -6}, {9, 14}, {-9, 14}};
    rt_plot_rect r = text_box(p->cr, 0, 0, 11, s);
    for (int k = 0; k < 4; k++) {
        rt_plot_rect c = r;
        c.x = x + at[k][0] - (at[k][0] < 0 ? r.w : 0);
        c.y = y + at[k][1] - 11 * 0.95;
        if (inside(p->l->map, c) && rt_plot_labels_free_at(p->labels, c)) {
            cairo.cairo_set_source_rgb(p->cr, 0, 0, 0);
            label_in(p, c, 11, s);
            return;
        }
    }
    p->labels->dropped++;
}

/* Start and end labels of the tracks the legend names (the others are grey and unlabelled). */
static void draw_marker_labels(plot_pen *p, const rt_plot_data *d)
{
    for (size_t k = 0; k < p->l->legend_n; k++) {
        const rt_plot_series *s = &d->s[p->l->legend[k]];
        double x, y;
        rt_plot_map_point(p->l, s->pts[0].x, s->pts[0].y, &x, &y);
        marker_label(p, x, y, "start");
        rt_plot_map_point(p->l, s->pts[s->n - 1].x, s->pts[s->n - 1].y, &x, &y);
        marker_label(p, x, y, "end");
    }
}

static void draw_speed_legend(plot_pen *p)
{
    const rt_plot_layout *l = p->l;
    /* Right of the title, off the map; else in the map's bottom left corner. */
    double w = fmin(160, l->map.w * 0.45), x = l->map.x + l->map.w - w, y = 4;
    if (!rt_plot_labels_free_at(p->labels, (rt_plot_rect){x - 40, y, w + 40, 28}))
        x = l->map.x + 10, y = l->map.y + l->map.h - 22;
    if (!rt_plot_labels_claim(p->labels, (rt_plot_rect){x, y, w, 8}, ""))
        return;
    for (int k = 0; k < 64; k++) {
        double rgb[3];
        rt_plot_speed_colour(l->max_speed * k / 63.0, l->max_speed, rgb);
        set_rgb(p->cr, rgb);
        cairo.cairo_rectangle(p->cr, x + w * k / 64.0, y, w / 64.0 + 0.5, 8);
        cairo.cairo_fill(p->cr);
    }
    char s[64];
    cairo.cairo_set_source_rgb(p->cr, 0, 0, 0);
    snprintf(s, sizeof s, "speed 0 - %.0f km/h%s", l->max_speed * MPS_TO_KMH,
             l->clipped ? " (and faster)" : "");
    label(p, x + w, y + 19, 10, 2, s);
}

static void draw_series_legend(plot_pen *p, const rt_plot_data *d)
{
    const rt_plot_layout *l = p->l;
    double y = l->map.y + 14;
    for (size_t k = 0; k < l->legend_n; k++, y += 14) {
        double rgb[3];
        rt_plot_series_colour(k, rgb);
        set_rgb(p->cr, rgb);
        cairo.cairo_rectangle(p->cr, l->map.x + 8, y - 7, 16, 6);
        cairo.cairo_fill(p->cr);
        rt_plot_labels_claim(p->labels, (rt_plot_rect){l->map.x + 8, y - 7, 16, 6}, "");
        cairo.cairo_set_source_rgb(p->cr, 0, 0, 0);
        label(p, l->map.x + 30, y, 10, 0, d->s[l->legend[k]].label);
    }
    if (l->legend_more) {
        char s[64];
        snprintf(s, sizeof s, "and %zu more (grey)", l->legend_more);
        cairo.cairo_set_source_rgb(p->cr, 0, 0, 0);
        label(p, l->map.x + 30, y, 10, 0, s);
    }
}

/* The bar (with end ticks) and its length above it. */
static void draw_scale_bar(plot_pen *p)
{
    rt_plot_rect b = p->l->scale_bar;
    double y = b.y + b.h - 4;
    if (!rt_plot_labels_claim(p->labels, (rt_plot_rect){b.x - 1, y - 5, b.w + 2, 6}, ""))
        return; /* no room left on a small map */
    cairo.cairo_set_source_rgb(p->cr, 0, 0, 0);
    cairo.cairo_set_line_width(p->cr, 2);
    cairo.cairo_move_to(p->cr, b.x, y - 5);
    cairo.cairo_line_to(p->cr, b.x, y);
    cairo.cairo_line_to(p->cr, b.x + b.w, y);
    cairo.cairo_line_to(p->cr, b.x + b.w, y - 5);
    cairo.cairo_stroke(p->cr);
    char s[32];
    double m = p->l->scale_bar_m;
    if (m >= 1000)
        snprintf(s, sizeof s, "%g km", m / 1000);
    else
        snprintf(s, sizeof s, "%g m", m);
    label(p, b.x + b.w / 2, y - 8, 10, 1, s);
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
    cairo.cairo_set_line_width(cr, rgb[0] == rgb[1] && rgb[1] == rgb[2] ? 0.6 : 1.5);
    double dash[] = {5, 3};
    cairo.cairo_set_dash(cr, dash, dashed ? 2 : 0, 0);
    cairo.cairo_stroke(cr);
    cairo.cairo_set_dash(cr, NULL, 0, 0);
}

/* A red wedge at the top of the speed panel over each sample above the axis (one per pixel). */
static void draw_clip_marks(cairo_t *cr, const rt_plot_layout *l, const rt_plot_data *d)
{
    rt_plot_rect r = l->speed_panel;
    cairo.cairo_set_source_rgb(cr, 0.85, 0.1, 0.1);
    for (size_t i = 0; i < d->n; i++) {
        double last = -1e9;
        for (size_t k = 0; k < d->s[i].n; k++) {
            const recd_track_point *p = &d->s[i].pts[k];
            double x = panel_x(l, r, p->t);
            if (!(p->speed * MPS_TO_KMH > l->speed_axis_kmh) || x - last < 3)
                continue;
            last = x;
            cairo.cairo_move_to(cr, x - 3.5, r.y + 6);
            cairo.cairo_line_to(cr, x + 3.5, r.y + 6);
            cairo.cairo_line_to(cr, x, r.y);
            cairo.cairo_fill(cr);
        }
    }
}

/* Value ticks (grid lines and numbers) from 0 to max on the left of r, the caption above it. */
static void draw_value_axis(plot_pen *p, rt_plot_rect r, const char *caption,
                            const char *short_caption, double max)
{
    draw_frame(p->cr, r);
    double step = rt_plot_nice_step(max, fmax(r.h / 25, 2));
    char s[64];
    for (double v = 0; v <= max + step * 1e-6; v += step) {
        double y = r.y + r.h - v / max * r.h;
        cairo.cairo_set_source_rgb(p->cr, 0.85, 0.85, 0.85);
        cairo.cairo_set_line_width(p->cr, 1);
        cairo.cairo_move_to(p->cr, r.x, y);
        cairo.cairo_line_to(p->cr, r.x + r.w, y);
        cairo.cairo_stroke(p->cr);
        cairo.cairo_set_source_rgb(p->cr, 0.2, 0.2, 0.2);
        cairo.cairo_move_to(p->cr, r.x - 4, y);
        cairo.cairo_line_to(p->cr, r.x, y);
        cairo.cairo_stroke(p->cr);
        snprintf(s, sizeof s, "%g", v);
        label(p, r.x - 6, y + 3, 9, 2, s);
    }
    cairo.cairo_set_source_rgb(p->cr, 0.2, 0.2, 0.2);
    /* Above the frame (lines may run along its top); the short one when the long does not fit. */
    if (!label(p, r.x + 2, r.y - 3, 10, 0, caption) && short_caption)
        label(p, r.x + 2, r.y - 3, 10, 0, short_caption);
}

/* Time ticks on r's bottom edge; numbers (m:ss) and the axis name only under the last panel. */
static void draw_time_axis(plot_pen *p, rt_plot_rect r, bool numbers)
{
    const rt_plot_layout *l = p->l;
    double step = rt_plot_time_step(l->t1 - l->t0, fmax(r.w / 80, 1));
    char s[32];
    cairo.cairo_set_source_rgb(p->cr, 0.2, 0.2, 0.2);
    cairo.cairo_set_line_width(p->cr, 1);
    for (double t = ceil(l->t0 / step - 1e-9) * step; t <= l->t1 + step * 1e-6; t += step) {
        double x = panel_x(l, r, t);
        cairo.cairo_move_to(p->cr, x, r.y + r.h);
        cairo.cairo_line_to(p->cr, x, r.y + r.h + 4);
        cairo.cairo_stroke(p->cr);
        if (!numbers)
            continue;
        rt_plot_format_time(t, step, s, sizeof s);
        label(p, x, r.y + r.h + 15, 9, 1, s);
    }
    if (numbers)
        label(p, r.x + r.w, r.y + r.h + 29, 10, 2, "time (m:ss)");
}

static bool listed(const rt_plot_layout *l, size_t i)
{
    for (size_t k = 0; k < l->legend_n; k++)
        if (l->legend[k] == i)
            return true;
    return false;
}

static void draw_panels(plot_pen *p, const rt_plot_data *d, plot_ticks *t)
{
    const rt_plot_layout *l = p->l;
    char caption[96];
    if (l->clipped)
        snprintf(caption, sizeof caption, "speed (km/h); %zu faster samples marked red at the top",
                 l->clipped);
    else
        snprintf(caption, sizeof caption, "speed (km/h)");
    draw_value_axis(p, l->speed_panel, caption, "speed (km/h)", l->speed_axis_kmh);
    draw_time_axis(p, l->speed_panel, !l->has_health);
    if (l->has_health) {
        draw_value_axis(p, l->health_panel, l->health_caption, NULL, 100);
        draw_time_axis(p, l->health_panel, true);
    }
    for (size_t n = 0; n < 2 * d->n; n++) {
        size_t i = n % d->n; /* the grey tracks first, under the named ones */
        if (listed(l, i) != (n >= d->n))
            continue;
        double rgb[3];
        if (l->by_speed)
            rgb[0] = 0.12, rgb[1] = 0.30, rgb[2] = 0.65;
        else
            rt_plot_track_colour(l, i, rgb);
        const rt_plot_series *s = &d->s[i];
        draw_panel_line(p->cr, l, l->speed_panel, s, 0, l->speed_axis_kmh, rgb, false, t);
        if (!l->has_health)
            continue;
        if (s->kind == RECD_TRACK_VEHICLE) {
            draw_panel_line(p->cr, l, l->health_panel, s, 3, 100, rgb, false, t);
        } else {
            draw_panel_line(p->cr, l, l->health_panel, s, 1, 100, rgb, false, t);
            draw_panel_line(p->cr, l, l->health_panel, s, 2, 100, rgb, true, t);
        }
    }
    draw_clip_marks(p->cr, l, d);
}

static void draw_map(plot_pen *p, const rt_plot_data *d, plot_ticks *t)
{
    const rt_plot_layout *l = p->l;
    draw_frame(p->cr, l->map);
    cairo.cairo_save(p->cr);
    cairo.cairo_rectangle(p->cr, l->map.x, l->map.y, l->map.w, l->map.h);
    cairo.cairo_clip(p->cr);
    for (size_t n = 0; n < 2 * d->n; n++) {
        size_t i = n % d->n; /* the grey tracks first, under the named ones */
        if (listed(l, i) == (n >= d->n))
            draw_route(p->cr, l, &d->s[i], i, t);
    }
    for (size_t k = 0; k < l->legend_n; k++) /* the grey tracks go unmarked */
        draw_marker_shapes(p->cr, l, &d->s[l->legend[k]]);
    cairo.cairo_restore(p->cr);
    /* Legends and the scale bar first: the marker labels then take the places left. */
    if (l->by_speed)
        draw_speed_legend(p);
    else
        draw_series_legend(p, d);
    draw_scale_bar(p);
    draw_marker_labels(p, d);
}

static void draw(cairo_t *cr, const rt_plot_data *d, const rt_plot_layout *l, double width,
                 rt_plot_labels *labels, plot_ticks *t)
{
    plot_pen p = {cr, l, labels, width};
    cairo.cairo_set_source_rgb(cr, 1, 1, 1);
    cairo.cairo_paint(cr);
    cairo.cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                                 CAIRO_FONT_WEIGHT_NORMAL);
    char title[300];
    if (d->n == 1)
        snprintf(title, sizeof title, "%s (%zu samples)", d->s[0].label, d->s[0].n);
    else
        snprintf(title, sizeof title, "%zu tracks from %zu file%s", d->n, d->files,
                 d->files == 1 ? "" : "s");
    cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    label(&p, 10, 22, 14, 0, title);
    draw_map(&p, d, t);
    draw_panels(&p, d, t);
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
        t.total += (uint64_t)d->s[i].n * passes_of(&l, &d->s[i]);
    cairo_surface_t *surface =
        svg ? cairo.cairo_svg_surface_create_for_stream(write_part, &out, o->width, o->height)
            : cairo.cairo_image_surface_create(CAIRO_FORMAT_RGB24, o->width, o->height);
    rt_plot_labels *labels = o->labels ? o->labels : malloc(sizeof *labels);
    cairo_t *cr = cairo.cairo_create(surface);
    bool drawn = labels != NULL;
    if (drawn) {
        labels->n = labels->dropped = 0;
        draw(cr, d, &l, o->width, labels, &t);
    }
    if (labels != o->labels)
        free(labels);
    cairo_status_t st = drawn ? cairo.cairo_status(cr) : CAIRO_STATUS_NO_MEMORY;
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
