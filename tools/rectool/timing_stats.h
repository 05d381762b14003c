/* SPDX-License-Identifier: MIT */
/* Sample-rate statistics and anomaly detection over a stream of timed positions, shared by the
 * formats' summaries in `rectool info`. One pass, O(1) work per sample; the median comes
 * from a histogram, so huge files need no sorting and little memory. */
#ifndef RECTOOL_TIMING_STATS_H
#define RECTOOL_TIMING_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define RT_TIMING_HIST_MS 10000          /* intervals up to 10 s are counted exactly */
#define RT_TIMING_GAP_MIN_MS 1000        /* a gap is longer than this ... */
#define RT_TIMING_GAP_MEDIAN_FACTOR 2.0  /* ... and longer than this many median intervals */
#define RT_TIMING_EXAMPLES 10            /* anomalies listed per kind */

typedef enum rt_anomaly_kind {
    RT_ANOMALY_EQUAL_TIME = 0,
    RT_ANOMALY_DECREASING_TIME,
    RT_ANOMALY_GAP,
    RT_ANOMALY_TELEPORT,
    RT_ANOMALY_KINDS
} rt_anomaly_kind;

typedef struct rt_anomaly {
    uint64_t index;  /* sample number */
    uint64_t offset; /* byte offset of the sample in the file (or of its gzip member) */
    int64_t t_ms;
    int64_t interval_ms;
    double distance; /* teleports: how far the position jumped */
} rt_anomaly;

typedef struct rt_timing_config {
    double max_speed;    /* plausible top speed, units per second */
    double min_jump;     /* shorter jumps are never teleports (jitter, packets drained together) */
    int64_t motion_ms;   /* > 0: movement happens within this window however long the interval
                            (a state that holds over skipped ticks, then changes in one tick) */
} rt_timing_config;

typedef struct rt_timing {
    rt_timing_config cfg;
    uint64_t samples;
    int64_t first_t, last_t, prev_t;
    double prev_pos[3];
    bool prev_pos_valid;
    double min_pos[3], max_pos[3];
    bool any_pos;
    uint64_t intervals; /* non-negative intervals counted in the histogram / overflow */
    double interval_sum;
    int64_t min_interval, max_interval;
    uint64_t *hist;        /* RT_TIMING_HIST_MS + 1 buckets */
    int64_t *overflow;     /* intervals above the histogram, kept for the median */
    size_t overflow_len, overflow_cap;
    rt_anomaly *gap_candidates; /* intervals > RT_TIMING_GAP_MIN_MS; judged against the median */
    size_t gap_len, gap_cap;
    uint64_t counts[RT_ANOMALY_KINDS];
    rt_anomaly examples[RT_ANOMALY_KINDS][RT_TIMING_EXAMPLES];
    size_t example_count[RT_ANOMALY_KINDS];
    /* filled by rt_timing_finish() */
    double median_interval_ms;
    double gap_threshold_ms;
    bool failed; /* out of memory: results are incomplete */
} rt_timing;

int rt_timing_init(rt_timing *s, rt_timing_config cfg); /* 0 or -ENOMEM */
/* pos may be NULL when the sample has no position; non-finite positions are ignored. */
void rt_timing_add(rt_timing *s, int64_t t_ms, const double pos[3], uint64_t offset);
void rt_timing_finish(rt_timing *s);
/* {"samples", "duration_ms", "interval_ms": {...}, "samples_per_second", "position_range"} */
json_t *rt_timing_rates_json(const rt_timing *s);
/* {"equal_timestamps", "decreasing_timestamps", "gaps", "gap_threshold_ms", "teleports",
 *  "examples": [...]} */
json_t *rt_timing_anomalies_json(const rt_timing *s);
void rt_timing_free(rt_timing *s);

#endif
