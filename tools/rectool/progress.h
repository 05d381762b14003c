/* SPDX-License-Identifier: MIT */
/* A one-line progress bar on stderr for long operations, with the rate and the time left. It only
 * draws when stderr is a terminal, the work is big enough to be worth watching, and it has run
 * for a moment already; on a pipe or in a log it stays silent. */
#ifndef RECTOOL_PROGRESS_H
#define RECTOOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define RT_PROGRESS_MIN_BYTES (4u << 20) /* smaller inputs finish before a bar is useful */
#define RT_PROGRESS_MIN_FILES 32u
#define RT_PROGRESS_DELAY_S 0.3          /* nothing is drawn for jobs done sooner */

/* What the counted units are, for the rate: "12.3 MiB/s", "1.2k blocks/s", or for recording time
 * (milliseconds) "86x real time". */
typedef enum rt_progress_unit {
    RT_UNIT_ITEMS,  /* names the unit: rt_progress.unit_name ("blocks", "ticks", "files") */
    RT_UNIT_BYTES,
    RT_UNIT_REC_MS, /* milliseconds of recording */
} rt_progress_unit;

typedef struct rt_progress {
    bool active;
    const char *label;
    uint64_t total;
    uint64_t done;
    rt_progress_unit unit;
    const char *unit_name;
    int drawn_permille; /* last value drawn, -1 before the first draw */
    double start_s;
    double delay_s; /* nothing is drawn before (RT_PROGRESS_DELAY_S or $RECTOOL_PROGRESS_DELAY) */
    double last_draw_s;
} rt_progress;

/* worth_showing: the caller's judgement that the job is long (see the thresholds above). */
void rt_progress_start(rt_progress *p, const char *label, uint64_t total, bool worth_showing);
/* Names the units after rt_progress_start (the default is RT_UNIT_ITEMS with no name). */
void rt_progress_set_unit(rt_progress *p, rt_progress_unit unit, const char *unit_name);
void rt_progress_update(rt_progress *p, uint64_t done);
/* Erases the bar before other output on the terminal; the next update draws it again. */
void rt_progress_clear(rt_progress *p);
/* Erases the bar for good so following output starts on a clean line. */
void rt_progress_finish(rt_progress *p);
/* A recd_progress_fn for librecd's long hooks (verify, repair, edit): data is an rt_progress. */
void rt_progress_lib_cb(void *data, uint64_t done, uint64_t total);
/* Async-signal-safe: erases whatever bar is on the screen (a signal handler, before exiting). */
void rt_progress_erase_on_signal(void);

#endif
