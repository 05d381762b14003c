/* SPDX-License-Identifier: MIT */
/* A one-line progress bar on stderr for long operations. It only draws when stderr is a
 * terminal and the work is big enough to be worth watching; on a pipe or in a log it stays silent. */
#ifndef RECTOOL_PROGRESS_H
#define RECTOOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define RT_PROGRESS_MIN_BYTES (4u << 20) /* smaller inputs finish before a bar is useful */
#define RT_PROGRESS_MIN_FILES 32u

typedef struct rt_progress {
    bool active;
    const char *label;
    uint64_t total;
    uint64_t done;
    int drawn_permille; /* last value drawn, -1 before the first draw */
    double last_draw_s;
} rt_progress;

/* worth_showing: the caller's judgement that the job is long (see the thresholds above). */
void rt_progress_start(rt_progress *p, const char *label, uint64_t total, bool worth_showing);
void rt_progress_update(rt_progress *p, uint64_t done);
/* Erases the bar before other output on the terminal; the next update draws it again. */
void rt_progress_clear(rt_progress *p);
/* Erases the bar for good so following output starts on a clean line. */
void rt_progress_finish(rt_progress *p);

#endif
