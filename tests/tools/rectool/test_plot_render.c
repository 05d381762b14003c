/* SPDX-License-Identifier: MIT */
/* rectool plot's drawing (plot_data.c, plot_render.c), run in-process and read back with cairo:
 * image size, strokes on the map and the panels, the colour of known route pixels (by speed for
 * one file, by file for several), the time range, SVG output, every corpus .rec drawn, and every
 * vehicle and walker of a generated CARLA log and of the corpus CARLA log. */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>

#include "plot_data.h"
#include "plot_render.h"
#include "recd/format.h"
#include "recd/samp_rec.h"
#include "recd/synth.h"
#include "formats/carla/carla_synth.h"

/* A car driving east along y = y0 from x = 0 to 200 in 2 s: 5 m/s for the first half, then
 * 20 m/s (SA-MP velocity = m per 1/50 s). */
static recd_buf straight_drive(float y0)
{
    recd_buf out = {0};
    recd_rec_writer w;
    assert_int_equal(recd_rec_writer_init(&w, RECD_REC_TYPE_VEHICLE, RECD_REC_TIME_REJECT,
                                          recd_buf_sink(&out)), 0);
    for (int i = 0; i <= 20; i++) {
        recd_rec_vehicle b;
        memset(&b, 0, sizeof b);
        b.time_ms = (uint32_t)(100 * i);
        b.position = (recd_vec3f){10.0f * (float)i, y0, 5};
        b.velocity = (recd_vec3f){i <= 10 ? 0.1f : 0.4f, 0, 0};
        b.rotation = (recd_quat){1, 0, 0, 0};
        b.vehicle_health = 1000.0f - 20.0f * (float)i;
        b.driver_health = 100;
        assert_int_equal(recd_rec_writer_vehicle(&w, &b), 0);
    }
    return out;
}

static const char *tmp_path(const char *name)
{
    static char path[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", tu_tmpdir(), name);
    return path[k];
}

/* The colour of pixel (x, y) of an RGB24 image, in 0..255. */
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

/* Pixels in r that are neither the background (white / panel grey) nor the frame. */
static size_t ink_in(cairo_surface_t *s, rt_plot_rect r)
{
    size_t n = 0;
    for (int y = (int)r.y + 2; y < (int)(r.y + r.h) - 2; y++) {
        for (int x = (int)r.x + 2; x < (int)(r.x + r.w) - 2; x++) {
            int c[3];
            pixel(s, x, y, c);
            bool grey = abs(c[0] - c[1]) < 12 && abs(c[1] - c[2]) < 12 && c[0] > 200;
            if (!grey)
                n++;
        }
    }
    return n;
}

static cairo_surface_t *read_png(const char *path, int w, int h)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    assert_int_equal(cairo_image_surface_get_width(s), w);
    assert_int_equal(cairo_image_surface_get_height(s), h);
    cairo_surface_flush(s);
    return s;
}

static void test_one_file_by_speed(void **state)
{
    (void)state;
    recd_buf f = straight_drive(0);
    rt_plot_data d = {0};
    char err[256];
    assert_int_equal(rt_plot_add_file(&d, "drive.rec", f.data, f.len, 0, -1, NULL, err, sizeof err), 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.s[0].n, 21);
    rt_plot_opts o = {480, 400, NULL};
    const char *png = tmp_path("one.png");
    assert_int_equal(rt_plot_render(&d, &o, png, NULL, err, sizeof err), 0);
    cairo_surface_t *s = read_png(png, 480, 400);
    rt_plot_layout l;
    rt_plot_layout_compute(&d, &o, &l);
    assert_true(l.by_speed);
    assert_true(ink_in(s, l.map) > 300);
    assert_true(ink_in(s, l.speed_panel) > 100);
    assert_true(ink_in(s, l.health_panel) > 100);
    /* x = 50 is on the slow half (5 of 20 m/s), x = 150 on the fast one (the top of the scale). */
    double px, py, want[3];
    int got[3];
    rt_plot_map_point(&l, 50, 0, &px, &py);
    pixel(s, (int)px, (int)py, got);
    rt_plot_speed_colour(5, 20, want);
    assert_true(colour_near(got, want, 10));
    rt_plot_map_point(&l, 150, 0, &px, &py);
    pixel(s, (int)px, (int)py, got);
    rt_plot_speed_colour(20, 20, want);
    assert_true(colour_near(got, want, 10));
    /* Off the route, the map is background. */
    pixel(s, (int)px, (int)py - 40, got);
    assert_true(got[0] > 240 && got[1] > 240 && got[2] > 240);
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
    recd_buf_free(&f);
}

static void test_overlay_and_range(void **state)
{
    (void)state;
    recd_buf a = straight_drive(0), b = straight_drive(100);
    rt_plot_data d = {0};
    char err[256];
    assert_int_equal(rt_plot_add_file(&d, "a.rec", a.data, a.len, 0.5, 1.5, NULL, err, sizeof err), 0);
    assert_int_equal(rt_plot_add_file(&d, "b.rec", b.data, b.len, 0.5, 1.5, NULL, err, sizeof err), 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.s[0].n, 11); /* t = 0.5 .. 1.5 s */
    assert_true(d.s[0].pts[0].t == 0.5 && d.s[1].pts[10].t == 1.5);
    rt_plot_opts o = {400, 400, NULL};
    const char *png = tmp_path("two.png");
    assert_int_equal(rt_plot_render(&d, &o, png, NULL, err, sizeof err), 0);
    cairo_surface_t *s = read_png(png, 400, 400);
    rt_plot_layout l;
    rt_plot_layout_compute(&d, &o, &l);
    assert_false(l.by_speed);
    double px, py, want[3];
    int got[3];
    rt_plot_map_point(&l, 100, 100, &px, &py); /* on b's route */
    pixel(s, (int)px, (int)py, got);
    rt_plot_series_colour(1, want);
    assert_true(colour_near(got, want, 10));
    rt_plot_map_point(&l, 100, 0, &px, &py); /* on a's route */
    pixel(s, (int)px, (int)py, got);
    rt_plot_series_colour(0, want);
    assert_true(colour_near(got, want, 10));
    cairo_surface_destroy(s);

    /* SVG through cairo's SVG surface. */
    const char *svg = tmp_path("two.svg");
    assert_int_equal(rt_plot_render(&d, &o, svg, NULL, err, sizeof err), 0);
    size_t len;
    uint8_t *text = tu_read_file(svg, &len);
    assert_non_null(text);
    assert_true(len > 1000);
    assert_non_null(memmem(text, len, "<svg", 4));
    assert_non_null(memmem(text, len, "<path", 5));
    free(text);
    /* Anything else is refused, and nothing is left behind. */
    assert_true(rt_plot_render(&d, &o, tmp_path("x.gif"), NULL, err, sizeof err) < 0);
    rt_plot_data_free(&d);
    recd_buf_free(&a);
    recd_buf_free(&b);
}

static void test_corpus(void **state)
{
    (void)state;
    const char *dir = tu_corpus_dir_or_skip("samp-rec");
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    struct dirent *e;
    int drawn = 0;
    while ((e = readdir(dp))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".rec") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        uint8_t *buf = tu_read_file(path, &len);
        assert_non_null(buf);
        recd_sniff_result what;
        const recd_format *f = recd_format_sniff(buf, len, &what);
        rt_plot_data d = {0};
        char err[256] = "";
        int rc = rt_plot_add_file(&d, e->d_name, buf, len, 0, -1, NULL, err, sizeof err);
        if (!f || !what.standard || rc < 0) {
            /* Legacy and damaged files are refused with a reason, never drawn. */
            assert_true(rc < 0 && err[0]);
        } else if (d.points > 1) {
            rt_plot_opts o = {300, 300, NULL};
            const char *png = tmp_path("corpus.png");
            assert_int_equal(rt_plot_render(&d, &o, png, NULL, err, sizeof err), 0);
            cairo_surface_t *s = read_png(png, 300, 300);
            rt_plot_layout l;
            rt_plot_layout_compute(&d, &o, &l);
            if (ink_in(s, l.map) < 50)
                fail_msg("%s: the route map is empty", e->d_name);
            /* A known pixel: the first sample is under the green start disc (unless the route
             * ends where it began and the end square covers it). */
            const rt_plot_series *sr = &d.s[0];
            double sx, sy, ex, ey, green[3] = {0.1, 0.65, 0.2};
            rt_plot_map_point(&l, sr->pts[0].x, sr->pts[0].y, &sx, &sy);
            rt_plot_map_point(&l, sr->pts[sr->n - 1].x, sr->pts[sr->n - 1].y, &ex, &ey);
            int got[3];
            pixel(s, (int)sx, (int)sy, got);
            if (hypot(sx - ex, sy - ey) > 16 && !colour_near(got, green, 10))
                fail_msg("%s: start pixel (%d,%d,%d) is not the start marker", e->d_name, got[0],
                         got[1], got[2]);
            cairo_surface_destroy(s);
            drawn++;
        }
        rt_plot_data_free(&d);
        free(buf);
    }
    closedir(dp);
    assert_true(drawn >= 5);
}

/* A CARLA log: one series per vehicle and walker, each drawn, with the start disc on the first
 * sample of a series. */
static void check_carla_plot(const char *name, const uint8_t *buf, size_t len, size_t min_series)
{
    rt_plot_data d = {0};
    char err[256] = "";
    if (rt_plot_add_file(&d, name, buf, len, 0, -1, NULL, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    if (d.n < min_series)
        fail_msg("%s: %zu series, expected at least %zu", name, d.n, min_series);
    for (size_t i = 0; i < d.n; i++)
        assert_true(d.s[i].actor > 0 && d.s[i].n > 0);
    rt_plot_opts o = {400, 400, NULL};
    const char *png = tmp_path("carla.png");
    assert_int_equal(rt_plot_render(&d, &o, png, NULL, err, sizeof err), 0);
    cairo_surface_t *s = read_png(png, 400, 400);
    rt_plot_layout l;
    rt_plot_layout_compute(&d, &o, &l);
    if (ink_in(s, l.map) < 50)
        fail_msg("%s: the route map is empty", name);
    assert_true(ink_in(s, l.speed_panel) > 50);
    /* The longest series' start disc covers its first sample (unless its end square does). */
    const rt_plot_series *sr = &d.s[0];
    for (size_t i = 1; i < d.n; i++)
        if (d.s[i].n > sr->n)
            sr = &d.s[i];
    double sx, sy, ex, ey, green[3] = {0.1, 0.65, 0.2};
    rt_plot_map_point(&l, sr->pts[0].x, sr->pts[0].y, &sx, &sy);
    rt_plot_map_point(&l, sr->pts[sr->n - 1].x, sr->pts[sr->n - 1].y, &ex, &ey);
    int got[3];
    pixel(s, (int)sx, (int)sy, got);
    if (hypot(sx - ex, sy - ey) > 16 && !colour_near(got, green, 10))
        fail_msg("%s: start pixel (%d,%d,%d) is not the start marker", name, got[0], got[1], got[2]);
    cairo_surface_destroy(s);
    rt_plot_data_free(&d);
}

static void test_carla(void **state)
{
    (void)state;
    recd_synth_params p;
    memset(&p, 0, sizeof p);
    p.format = recd_synth_format_find("carla");
    p.scenario = RECD_SYNTH_SCENARIO_MIXED; /* carla: traffic */
    p.duration_ms = 5000;
    p.seed = 3;
    recd_buf log = {0};
    uint64_t frames;
    assert_int_equal(recd_synth_write_carla(&p, 6, recd_buf_sink(&log), &frames), 0);
    check_carla_plot("traffic.log", log.data, log.len, 6);
    recd_buf_free(&log);
}

static void test_carla_corpus(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = tu_corpus_file("carla", "DistanceToLaneCenter.log", &len);
    check_carla_plot("DistanceToLaneCenter.log", buf, len, 1); /* one hero vehicle */
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_file_by_speed),
        cmocka_unit_test(test_overlay_and_range),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_carla),
        cmocka_unit_test(test_carla_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
