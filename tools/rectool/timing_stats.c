/* SPDX-License-Identifier: MIT */
/* Timing statistics: interval histogram for the median, streaming detection of equal and
 * decreasing timestamps and of teleports, and gap candidates judged once the median is known. */
#include "timing_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[RT_ANOMALY_KINDS] = {
    "equal-timestamp", "decreasing-timestamp", "gap", "teleport"};

int rt_timing_init(rt_timing *s, rt_timing_config cfg)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->hist = calloc(RT_TIMING_HIST_MS + 1, sizeof *s->hist);
    return s->hist ? 0 : -ENOMEM;
}

static bool grow(void **items, size_t *cap, size_t len, size_t size)
{
    if (len < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *p = realloc(*items, ncap * size);
    if (!p)
        return false;
    *items = p;
    *cap = ncap;
    return true;
}

static void note(rt_timing *s, rt_anomaly_kind kind, const rt_anomaly *a)
{
    s->counts[kind]++;
    if (s->example_count[kind] < RT_TIMING_EXAMPLES)
        s->examples[kind][s->example_count[kind]++] = *a;
}

static void count_interval(rt_timing *s, int64_t dt, const rt_anomaly *a)
{
    if (dt <= RT_TIMING_HIST_MS) {
        s->hist[dt]++;
    } else {
        void *items = s->overflow;
        if (grow(&items, &s->overflow_cap, s->overflow_len, sizeof *s->overflow)) {
            s->overflow = items;
            s->overflow[s->overflow_len++] = dt;
        } else {
            s->failed = true;
        }
    }
    if (dt > RT_TIMING_GAP_MIN_MS) {
        void *items = s->gap_candidates;
        if (grow(&items, &s->gap_cap, s->gap_len, sizeof *s->gap_candidates)) {
            s->gap_candidates = items;
            s->gap_candidates[s->gap_len++] = *a;
        } else {
            s->failed = true;
        }
    }
    if (s->intervals == 0 || dt < s->min_interval)
        s->min_interval = dt;
    if (s->intervals == 0 || dt > s->max_interval)
        s->max_interval = dt;
    s->intervals++;
    s->interval_sum += (double)dt;
}

static void check_teleport(rt_timing *s, const double pos[3], int64_t dt, rt_anomaly *a)
{
    double dx = pos[0] - s->prev_pos[0], dy = pos[1] - s->prev_pos[1], dz = pos[2] - s->prev_pos[2];
    double dist = sqrt(dx * dx + dy * dy + dz * dz);
    if (!(dist > s->cfg.min_jump))
        return;
    int64_t window = dt;
    if (s->cfg.motion_ms > 0 && (window > s->cfg.motion_ms || window < 0))
        window = s->cfg.motion_ms;
    /* A jump at zero (or negative) elapsed time has no plausible speed at all. */
    if (window <= 0 || dist / ((double)window / 1000.0) > s->cfg.max_speed) {
        a->distance = dist;
        note(s, RT_ANOMALY_TELEPORT, a);
    }
}

static void track_position(rt_timing *s, const double pos[3])
{
    for (int i = 0; i < 3; i++) {
        if (!s->any_pos || pos[i] < s->min_pos[i])
            s->min_pos[i] = pos[i];
        if (!s->any_pos || pos[i] > s->max_pos[i])
            s->max_pos[i] = pos[i];
        s->prev_pos[i] = pos[i];
    }
    s->any_pos = true;
}

void rt_timing_add(rt_timing *s, int64_t t_ms, const double pos[3], uint64_t offset)
{
    bool pos_ok = pos && isfinite(pos[0]) && isfinite(pos[1]) && isfinite(pos[2]);
    if (s->samples == 0) {
        s->first_t = t_ms;
    } else {
        int64_t dt = t_ms - s->prev_t;
        rt_anomaly a = {s->samples, offset, t_ms, dt, 0.0};
        if (dt == 0)
            note(s, RT_ANOMALY_EQUAL_TIME, &a);
        if (dt < 0)
            note(s, RT_ANOMALY_DECREASING_TIME, &a);
        else
            count_interval(s, dt, &a);
        if (pos_ok && s->prev_pos_valid)
            check_teleport(s, pos, dt, &a);
    }
    if (pos_ok)
        track_position(s, pos);
    s->prev_pos_valid = pos_ok;
    s->prev_t = t_ms;
    s->last_t = t_ms;
    s->samples++;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The k-th smallest interval (0-based) from the histogram, then the sorted overflow. */
static int64_t kth_interval(const rt_timing *s, uint64_t k)
{
    uint64_t seen = 0;
    for (int64_t v = 0; v <= RT_TIMING_HIST_MS; v++) {
        seen += s->hist[v];
        if (seen > k)
            return v;
    }
    uint64_t i = k - seen;
    return i < s->overflow_len ? s->overflow[i] : s->max_interval;
}

void rt_timing_finish(rt_timing *s)
{
    if (s->overflow_len > 1)
        qsort(s->overflow, s->overflow_len, sizeof *s->overflow, compare_i64);
    if (s->intervals > 0) {
        uint64_t n = s->intervals;
        int64_t lo = kth_interval(s, (n - 1) / 2), hi = kth_interval(s, n / 2);
        s->median_interval_ms = ((double)lo + (double)hi) / 2.0;
    }
    s->gap_threshold_ms = s->median_interval_ms * RT_TIMING_GAP_MEDIAN_FACTOR;
    if (s->gap_threshold_ms < RT_TIMING_GAP_MIN_MS)
        s->gap_threshold_ms = RT_TIMING_GAP_MIN_MS;
    for (size_t i = 0; i < s->gap_len; i++)
        if ((double)s->gap_candidates[i].interval_ms > s->gap_threshold_ms)
            note(s, RT_ANOMALY_GAP, &s->gap_candidates[i]);
}

static json_t *range_json(double lo, double hi)
{
    return json_pack("[f, f]", lo, hi);
}

json_t *rt_timing_rates_json(const rt_timing *s)
{
    json_t *o = json_object();
    int64_t duration = s->samples ? s->last_t - s->first_t : 0;
    json_object_set_new(o, "samples", json_integer((json_int_t)s->samples));
    json_object_set_new(o, "first_ms", json_integer(s->samples ? s->first_t : 0));
    json_object_set_new(o, "last_ms", json_integer(s->samples ? s->last_t : 0));
    json_object_set_new(o, "duration_ms", json_integer(duration));
    json_t *iv = json_object();
    json_object_set_new(iv, "count", json_integer((json_int_t)s->intervals));
    json_object_set_new(iv, "median", json_real(s->median_interval_ms));
    json_object_set_new(iv, "mean", json_real(s->intervals ? s->interval_sum / (double)s->intervals
                                                           : 0.0));
    json_object_set_new(iv, "min", json_integer(s->intervals ? s->min_interval : 0));
    json_object_set_new(iv, "max", json_integer(s->intervals ? s->max_interval : 0));
    json_object_set_new(o, "interval_ms", iv);
    double rate = duration > 0 ? (double)(s->samples - 1) * 1000.0 / (double)duration : 0.0;
    json_object_set_new(o, "samples_per_second", json_real(rate));
    if (s->any_pos) {
        json_t *r = json_object();
        json_object_set_new(r, "x", range_json(s->min_pos[0], s->max_pos[0]));
        json_object_set_new(r, "y", range_json(s->min_pos[1], s->max_pos[1]));
        json_object_set_new(r, "z", range_json(s->min_pos[2], s->max_pos[2]));
        json_object_set_new(o, "position_range", r);
    }
    return o;
}

json_t *rt_timing_anomalies_json(const rt_timing *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "equal_timestamps", json_integer((json_int_t)s->counts[RT_ANOMALY_EQUAL_TIME]));
    json_object_set_new(o, "decreasing_timestamps",
                        json_integer((json_int_t)s->counts[RT_ANOMALY_DECREASING_TIME]));
    json_object_set_new(o, "gaps", json_integer((json_int_t)s->counts[RT_ANOMALY_GAP]));
    json_object_set_new(o, "gap_threshold_ms", json_real(s->gap_threshold_ms));
    json_object_set_new(o, "teleports", json_integer((json_int_t)s->counts[RT_ANOMALY_TELEPORT]));
    json_object_set_new(o, "teleport_speed", json_real(s->cfg.max_speed));
    json_t *ex = json_array();
    for (int k = 0; k < RT_ANOMALY_KINDS; k++) {
        for (size_t i = 0; i < s->example_count[k]; i++) {
            const rt_anomaly *a = &s->examples[k][i];
            json_t *e = json_object();
            json_object_set_new(e, "kind", json_string(kind_names[k]));
            json_object_set_new(e, "sample", json_integer((json_int_t)a->index));
            json_object_set_new(e, "offset", json_integer((json_int_t)a->offset));
            json_object_set_new(e, "t_ms", json_integer(a->t_ms));
            json_object_set_new(e, "interval_ms", json_integer(a->interval_ms));
            if (k == RT_ANOMALY_TELEPORT)
                json_object_set_new(e, "distance", json_real(a->distance));
            json_array_append_new(ex, e);
        }
    }
    json_object_set_new(o, "examples", ex);
    if (s->failed)
        json_object_set_new(o, "incomplete", json_true());
    return o;
}

void rt_timing_free(rt_timing *s)
{
    free(s->hist);
    free(s->overflow);
    free(s->gap_candidates);
    memset(s, 0, sizeof *s);
}
