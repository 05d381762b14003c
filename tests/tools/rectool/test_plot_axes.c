/* SPDX-License-Identifier: MIT */
/* rectool plot's axes, legends and labels, run in-process and read back with cairo: 1-2-5 ticks
 * with units on every panel axis, time in m:ss, a scale bar on the map, a health panel captioned
 * by what is drawn (and none for CARLA), a speed axis that spikes cannot stretch (clipped samples
 * marked), a legend of the longest tracks in distinct colours, and no two labels overlapping in
 * any picture (.rec in a vehicle and on foot, .recap, several files, dense and real CARLA logs). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>

#include "plot_data.h"
#include "plot_render.h"
#include "plot_scale.h"
#include "recd/samp_rec.h"
#include "recd/synth.h"
#include "formats/carla/carla_synth.h"

static const char *tmp_png(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/axes.png", tu_tmpdir());
    return path;
}

static void pixel(cairo_surface_t *s, int x, int y, int rgb[3])
{
    const unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    uint32_t v = *(const uint32_t *)(data + y * stride + x * 4);
    rgb[0] = (int)((v >> 16) & 0xFF), rgb[1] = (int)((v >> 8) & 0xFF), rgb[2] = (int)(v & 0xFF);
}

static bool colour_near(const int got[3], const double want[3], int tolerance)
{
    for (int c = 0; c < 3; c++)
        if (abs(got[c] - (int)lround(want[c] * 255.0)) > tolerance)
            return false;
    return true;
}

static recd_buf synth(const recd_format *format, recd_synth_scenario scenario, uint64_t ms,
                      uint32_t actors)
{
    recd_synth_params p;
    memset(&p, 0, sizeof p);
    p.format = format;
    p.scenario = scenario;
    p.duration_ms = ms;
    p.seed = 7;
    recd_buf out = {0};
    uint64_t units;
    if (format == recd_synth_format_find("carla"))
        assert_int_equal(recd_synth_write_carla(&p, actors, recd_buf_sink(&out), &units), 0);
    else
        assert_int_equal(recd_synth_write(&p, recd_buf_sink(&out), &units), 0);
    return out;
}

/* Draws d at w x h into a PNG (returned, for pixels), its layout and its labels. */
static cairo_surface_t *render(const rt_plot_data *d, int w, int h, rt_plot_layout *l,
                               rt_plot_labels *labels)
{
    rt_plot_opts o = {w, h, labels};
    char err[256];
    const char *png = tmp_png();
    if (rt_plot_render(d, &o, png, NULL, err, sizeof err) != 0)
        fail_msg("render: %s", err);
    rt_plot_layout_compute(d, &o, l);
    cairo_surface_t *s = cairo_image_surface_create_from_png(png);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    cairo_surface_flush(s);
    return s;
}

static void load(rt_plot_data *d, const char *name, recd_buf f)
{
    char err[256];
    if (rt_plot_add_file(d, name, f.data, f.len, 0, -1, NULL, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
}

static const rt_plot_rect *find_label(const rt_plot_labels *labels, const char *text)
{
    for (size_t i = 0; i < labels->n; i++)
        if (strcmp(labels->text[i], text) == 0)
            return &labels->box[i];
    return NULL;
}

static bool any_label_contains(const rt_plot_labels *labels, const char *part)
{
    for (size_t i = 0; i < labels->n; i++)
        if (strstr(labels->text[i], part))
            return true;
    return false;
}

/* The test that fails on overlapping labels: every pair of label boxes is disjoint, and every
 * label lies inside the picture. */
static void assert_no_overlap(const char *what, const rt_plot_labels *labels, int w, int h)
{
    for (size_t i = 0; i < labels->n; i++) {
        const rt_plot_rect *a = &labels->box[i];
        if (a->x < 0 || a->y < 0 || a->x + a->w > w + 0.5 || a->y + a->h > h + 0.5)
            fail_msg("%s: label '%s' leaves the picture", what, labels->text[i]);
        for (size_t k = i + 1; k < labels->n; k++)
            if (rt_plot_rects_intersect(*a, labels->box[k]))
                fail_msg("%s: label '%s' overlaps '%s'", what, labels->text[i], labels->text[k]);
    }
}

static void test_steps_and_times(void **state)
{
    (void)state;
    assert_true(rt_plot_nice_step(100, 4) == 50);
    assert_true(rt_plot_nice_step(213, 10) == 50);
    assert_true(rt_plot_nice_step(7, 5) == 2);
    assert_true(fabs(rt_plot_nice_step(0.9, 3) - 0.5) < 1e-12);
    assert_true(rt_plot_nice_floor(430) == 200 && rt_plot_nice_floor(99) == 50);
    assert_true(rt_plot_time_step(240, 8) == 30);
    assert_true(rt_plot_time_step(3600, 6) == 600);
    assert_true(rt_plot_time_step(2, 8) == 0.5);
    char s[32];
    rt_plot_format_time(75, 15, s, sizeof s);
    assert_string_equal(s, "1:15");
    rt_plot_format_time(3725, 600, s, sizeof s);
    assert_string_equal(s, "1:02:05");
    rt_plot_format_time(1.5, 0.5, s, sizeof s);
    assert_string_equal(s, "0:01.5");
}

/* Every panel axis has 1-2-5 ticks with units, time reads m:ss, the map has a scale bar. */
static void test_axes_and_scale_bar(void **state)
{
    (void)state;
    recd_buf f = synth(recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE, 240000, 0);
    rt_plot_data d = {0};
    load(&d, "drive.rec", f);
    rt_plot_layout l;
    static rt_plot_labels labels;
    cairo_surface_t *s = render(&d, 640, 600, &l, &labels);
    assert_non_null(find_label(&labels, "speed (km/h)"));
    assert_non_null(find_label(&labels, "vehicle health / 10 (%)"));
    assert_non_null(find_label(&labels, "time (m:ss)"));
    const char *times[] = {"1:00", "2:00", "3:00"};
    for (size_t i = 0; i < 3; i++) {
        const rt_plot_rect *r = find_label(&labels, times[i]);
        if (!r)
            fail_msg("no time tick %s", times[i]);
        assert_true(r->y > l.health_panel.y + l.health_panel.h); /* under the bottom panel */
    }
    /* Value ticks left of each panel: 0, then equal 1-2-5 steps up to the axis top. */
    rt_plot_rect panels[2] = {l.speed_panel, l.health_panel};
    for (int p = 0; p < 2; p++) {
        int ticks = 0;
        double top = -1;
        for (size_t i = 0; i < labels.n; i++) {
            const rt_plot_rect *r = &labels.box[i];
            if (r->x + r->w <= panels[p].x && r->y + r->h > panels[p].y - 6 &&
                r->y < panels[p].y + panels[p].h + 6) {
                ticks++;
                top = fmax(top, atof(labels.text[i]));
            }
        }
        if (ticks < 3)
            fail_msg("panel %d: %d value ticks", p, ticks);
        double step = top / (ticks - 1);
        assert_true(fabs(rt_plot_nice_step(step, 1) - step) < 1e-9);
        assert_true(top == (p == 0 ? l.speed_axis_kmh : 100));
    }
    /* The scale bar: a 1-2-5 length in metres, drawn dark at its pixels, and labelled. */
    assert_true(fabs(rt_plot_nice_floor(l.scale_bar_m) - l.scale_bar_m) < 1e-9);
    assert_true(fabs(l.scale_bar.w - l.scale_bar_m * l.scale) < 1e-6);
    char bar[32];
    if (l.scale_bar_m >= 1000)
        snprintf(bar, sizeof bar, "%g km", l.scale_bar_m / 1000);
    else
        snprintf(bar, sizeof bar, "%g m", l.scale_bar_m);
    assert_non_null(find_label(&labels, bar));
    int got[3];
    double black[3] = {0, 0, 0};
    for (double x = l.scale_bar.x + 2; x < l.scale_bar.x + l.scale_bar.w - 2; x += 5) {
        pixel(s, (int)x, (int)(l.scale_bar.y + l.scale_bar.h - 4), got);
        assert_true(colour_near(got, black, 40));
    }
    assert_no_overlap("drive.rec", &labels, 640, 600);
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    recd_buf_free(&f);
}

/* The health panel names only what it draws: no armour in a vehicle; health and a dashed armour
 * line on foot (both drawn); no health panel at all for CARLA, whose tracks carry none. */
static void test_health_panel(void **state)
{
    (void)state;
    static rt_plot_labels labels;
    rt_plot_layout l;
    recd_buf car = synth(recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE, 30000, 0);
    rt_plot_data d = {0};
    load(&d, "car.rec", car);
    cairo_surface_t *s = render(&d, 500, 500, &l, &labels);
    assert_true(l.has_health);
    assert_string_equal(l.health_caption, "vehicle health / 10 (%)");
    assert_false(any_label_contains(&labels, "armour"));
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    recd_buf_free(&car);

    /* On foot: health 100 (solid) and armour 50 (dashed): both lines have ink. */
    recd_buf foot = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_ONFOOT, RECD_REC_TIME_REJECT,
                                          recd_buf_sink(&foot)), 0);
    for (int i = 0; i <= 50; i++) {
        recd_rec_onfoot b;
        memset(&b, 0, sizeof b);
        b.time_ms = (uint32_t)(200 * i);
        b.position = (recd_vec3f){2.0f * (float)i, 0, 5};
        b.velocity = (recd_vec3f){0.02f, 0, 0};
        b.health = 100;
        b.armour = 50;
        assert_int_equal(recd_rec_writer_onfoot(&w, &b), 0);
    }
    d = (rt_plot_data){0};
    load(&d, "walk.rec", foot);
    s = render(&d, 500, 500, &l, &labels);
    assert_string_equal(l.health_caption, "health (solid), armour (dashed) (%)");
    assert_non_null(find_label(&labels, l.health_caption));
    rt_plot_rect r = l.health_panel;
    int dashes = 0, gaps = 0;
    double blue[3] = {0.12, 0.30, 0.65};
    for (int x = (int)r.x + 5; x < (int)(r.x + r.w) - 5; x++) {
        bool ink = false;
        for (int dy = -1; dy <= 1; dy++) {
            int got[3];
            pixel(s, x, (int)floor(r.y + r.h / 2) + dy, got);
            ink |= colour_near(got, blue, 40);
        }
        if (ink)
            dashes++;
        else
            gaps++;
    }
    if (dashes < 20 || gaps < 20)
        fail_msg("armour line: %d dashed pixels, %d gaps", dashes, gaps);
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    recd_buf_free(&foot);

    recd_buf log = synth(recd_synth_format_find("carla"), RECD_SYNTH_SCENARIO_TRAFFIC, 5000, 8);
    d = (rt_plot_data){0};
    load(&d, "town.log", log);
    s = render(&d, 500, 500, &l, &labels);
    assert_false(l.has_health);
    assert_true(l.health_panel.w == 0 && l.health_panel.h == 0);
    assert_false(any_label_contains(&labels, "health"));
    assert_false(any_label_contains(&labels, "armour"));
    assert_non_null(find_label(&labels, "time (m:ss)")); /* under the speed panel now */
    assert_true(l.speed_panel.y + l.speed_panel.h > 500 * 0.85);
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    recd_buf_free(&log);
}

/* 30 s at 36 km/h with two 213 km/h spikes: the axis stays near 36, the spikes are marked red
 * at the top of the speed panel, and the cruise line sits well up the panel. */
static void test_speed_spikes(void **state)
{
    (void)state;
    recd_buf f = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT,
                                          recd_buf_sink(&f)), 0);
    for (int i = 0; i <= 300; i++) {
        recd_rec_vehicle b;
        memset(&b, 0, sizeof b);
        b.time_ms = (uint32_t)(100 * i);
        b.position = (recd_vec3f){(float)i, 0, 5};
        b.velocity = (recd_vec3f){i == 100 || i == 200 ? 1.1833f : 0.2f, 0, 0};
        b.rotation = (recd_quat){1, 0, 0, 0};
        b.vehicle_health = 1000;
        assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
    }
    rt_plot_data d = {0};
    load(&d, "spiky.rec", f);
    rt_plot_layout l;
    static rt_plot_labels labels;
    cairo_surface_t *s = render(&d, 600, 600, &l, &labels);
    if (!(l.speed_axis_kmh <= 60))
        fail_msg("a 213 km/h spike stretched the speed axis to %g km/h", l.speed_axis_kmh);
    assert_int_equal(l.clipped, 2);
    assert_true(any_label_contains(&labels, "2 faster samples marked red"));
    rt_plot_rect r = l.speed_panel;
    double red[3] = {0.85, 0.1, 0.1}, blue[3] = {0.12, 0.30, 0.65};
    int got[3];
    for (int k = 1; k <= 2; k++) {
        double x = r.x + (10.0 * k - l.t0) / (l.t1 - l.t0) * r.w;
        pixel(s, (int)lround(x), (int)(r.y + 4), got);
        if (!colour_near(got, red, 20))
            fail_msg("no clip mark over the spike at %d s: (%d,%d,%d)", 10 * k, got[0], got[1],
                     got[2]);
    }
    /* The cruise at 36 km/h is drawn above a third of the panel's height. */
    double x = r.x + 0.25 * r.w, y = r.y + r.h - 36.0 / l.speed_axis_kmh * r.h;
    assert_true(36.0 / l.speed_axis_kmh > 0.5);
    bool seen = false;
    for (int dy = -2; dy <= 2; dy++) {
        pixel(s, (int)x, (int)lround(y) + dy, got);
        seen |= colour_near(got, blue, 40);
    }
    assert_true(seen);
    assert_no_overlap("spiky.rec", &labels, 600, 600);
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    recd_buf_free(&f);
}

/* 300 CARLA actors: the legend names the 10 longest in 10 distinct colours, then "and K more". */
static void test_dense_legend(void **state)
{
    (void)state;
    recd_buf log = synth(recd_synth_format_find("carla"), RECD_SYNTH_SCENARIO_TRAFFIC, 20000, 300);
    rt_plot_data d = {0};
    load(&d, "town.log", log);
    assert_true(d.n >= 300);
    rt_plot_layout l;
    static rt_plot_labels labels;
    cairo_surface_t *s = render(&d, 1000, 1000, &l, &labels);
    assert_int_equal(l.legend_n, RT_PLOT_LEGEND_MAX);
    assert_int_equal(l.legend_more, d.n - RT_PLOT_LEGEND_MAX);
    char more[64];
    snprintf(more, sizeof more, "and %zu more (grey)", l.legend_more);
    assert_non_null(find_label(&labels, more));
    double shortest = INFINITY;
    for (size_t k = 0; k < l.legend_n; k++) {
        const rt_plot_series *sr = &d.s[l.legend[k]];
        assert_non_null(find_label(&labels, sr->label));
        double dist = 0;
        for (size_t i = 1; i < sr->n; i++)
            dist += hypot(sr->pts[i].x - sr->pts[i - 1].x, sr->pts[i].y - sr->pts[i - 1].y);
        shortest = fmin(shortest, dist);
        double a[3];
        rt_plot_track_colour(&l, l.legend[k], a);
        for (size_t j = 0; j < k; j++) {
            double b[3];
            rt_plot_track_colour(&l, l.legend[j], b);
            double diff = fmax(fabs(a[0] - b[0]), fmax(fabs(a[1] - b[1]), fabs(a[2] - b[2])));
            if (diff < 0.15)
                fail_msg("legend colours %zu and %zu look alike", j, k);
        }
    }
    for (size_t i = 0; i < d.n; i++) { /* no unnamed track is longer than a named one */
        bool named = false;
        for (size_t k = 0; k < l.legend_n; k++)
            named |= l.legend[k] == i;
        if (named)
            continue;
        double dist = 0;
        for (size_t k = 1; k < d.s[i].n; k++)
            dist += hypot(d.s[i].pts[k].x - d.s[i].pts[k - 1].x,
                          d.s[i].pts[k].y - d.s[i].pts[k - 1].y);
        assert_true(dist <= shortest + 1e-6);
    }
    assert_no_overlap("dense CARLA", &labels, 1000, 1000);
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    recd_buf_free(&log);
}

/* No two labels overlap, whatever is drawn and at any size. */
static void test_labels_never_overlap(void **state)
{
    (void)state;
    recd_buf car = synth(recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE, 120000, 0);
    recd_buf foot = synth(recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 120000, 0);
    recd_buf player = synth(recd_synth_format_find("recap"), RECD_SYNTH_SCENARIO_MIXED, 60000, 0);
    recd_buf town = synth(recd_synth_format_find("carla"), RECD_SYNTH_SCENARIO_TRAFFIC, 20000, 400);
    struct {
        const char *what;
        recd_buf *files[3];
    } cases[] = {
        {"vehicle .rec", {&car}},        {"on-foot .rec", {&foot}},
        {"player .recap", {&player}},    {"three files", {&car, &foot, &player}},
        {"dense CARLA", {&town}},
    };
    static const int sizes[][2] = {{1000, 1000}, {640, 480}, {300, 300}, {200, 200}};
    static rt_plot_labels labels;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rt_plot_data d = {0};
        for (size_t k = 0; k < 3 && cases[c].files[k]; k++)
            load(&d, cases[c].what, *cases[c].files[k]);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            rt_plot_layout l;
            cairo_surface_t *s = render(&d, sizes[z][0], sizes[z][1], &l, &labels);
            assert_true(labels.n >= 5);
            char what[96];
            snprintf(what, sizeof what, "%s at %dx%d", cases[c].what, sizes[z][0], sizes[z][1]);
            assert_no_overlap(what, &labels, sizes[z][0], sizes[z][1]);
            cairo_surface_destroy(s);
        }
        rt_plot_data_free(&d);
    }
    recd_buf_free(&car);
    recd_buf_free(&foot);
    recd_buf_free(&player);
    recd_buf_free(&town);
}

static void test_real_carla_labels(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = tu_corpus_file("carla", "DistanceToLaneCenter.log", &len);
    rt_plot_data d = {0};
    load(&d, "DistanceToLaneCenter.log", (recd_buf){.data = buf, .len = len});
    rt_plot_layout l;
    static rt_plot_labels labels;
    cairo_surface_t *s = render(&d, 1000, 1000, &l, &labels);
    assert_false(l.has_health);
    assert_no_overlap("DistanceToLaneCenter.log", &labels, 1000, 1000);
    assert_non_null(find_label(&labels, "start"));
    assert_non_null(find_label(&labels, "end"));
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_and_times),   cmocka_unit_test(test_axes_and_scale_bar),
        cmocka_unit_test(test_health_panel),      cmocka_unit_test(test_speed_spikes),
        cmocka_unit_test(test_dense_legend),      cmocka_unit_test(test_labels_never_overlap),
        cmocka_unit_test(test_real_carla_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
