/* SPDX-License-Identifier: MIT */
/* Progress bar: redraws at most every 100 ms and only on visible change, so it costs nothing in
 * tight loops; never drawn unless stderr is a TTY. The rate is the average since the start, which
 * is steady enough for work that goes at one pace (decoding, encoding, generating). */
#include "progress.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 24
#define ERASE "\r\033[K" /* back to column 0, clear to the end of the line */

static volatile sig_atomic_t bar_on_screen;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* RECTOOL_PROGRESS_DELAY (seconds) replaces the default delay: 0 shows every bar at once, which
 * tests use so that they do not depend on how fast this machine is. */
static double progress_delay_s(void)
{
    const char *env = getenv("RECTOOL_PROGRESS_DELAY");
    char *end = NULL;
    double d = env && *env ? strtod(env, &end) : -1;
    return end && *end == '\0' && d >= 0 && d <= 3600 ? d : RT_PROGRESS_DELAY_S;
}

void rt_progress_start(rt_progress *p, const char *label, uint64_t total, bool worth_showing)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->total = total;
    p->drawn_permille = -1;
    p->start_s = now_seconds();
    p->delay_s = progress_delay_s();
    p->active = worth_showing && total > 0 && isatty(STDERR_FILENO);
}

void rt_progress_set_unit(rt_progress *p, rt_progress_unit unit, const char *unit_name)
{
    p->unit = unit;
    p->unit_name = unit_name;
}

/* "12.3 MiB/s", "4.5k ticks/s", "86x real time". */
static void format_rate(const rt_progress *p, double per_s, char *out, size_t cap)
{
    if (p->unit == RT_UNIT_REC_MS) {
        snprintf(out, cap, "%.0fx real time", per_s / 1000.0);
        return;
    }
    static const char *const bytes[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    static const char *const counts[] = {"", "k", "M", "G", "T"};
    double base = p->unit == RT_UNIT_BYTES ? 1024.0 : 1000.0;
    int i = 0;
    while (per_s >= base && i < 4) {
        per_s /= base;
        i++;
    }
    if (p->unit == RT_UNIT_BYTES)
        snprintf(out, cap, "%.1f %s/s", per_s, bytes[i]);
    else
        snprintf(out, cap, "%.*f%s %s/s", i ? 1 : 0, per_s, counts[i], p->unit_name ? p->unit_name : "");
}

/* "ETA 1:05", "ETA 2:03:10". */
static void format_eta(double seconds, char *out, size_t cap)
{
    if (!(seconds >= 0) || seconds > 359999) {
        snprintf(out, cap, "ETA --:--");
        return;
    }
    unsigned s = (unsigned)(seconds + 0.5);
    if (s >= 3600)
        snprintf(out, cap, "ETA %u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, cap, "ETA %u:%02u", s / 60, s % 60);
}

static void draw(rt_progress *p, int permille, double now)
{
    char bar[BAR_WIDTH + 1];
    int filled = permille * BAR_WIDTH / 1000;
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    double elapsed = now - p->start_s;
    double per_s = elapsed > 0 ? (double)p->done / elapsed : 0;
    char rate[48], eta[32];
    format_rate(p, per_s, rate, sizeof rate);
    format_eta(per_s > 0 ? (double)(p->total - p->done) / per_s : -1, eta, sizeof eta);
    fprintf(stderr, ERASE "%s [%s] %3d.%d%%  %s  %s", p->label, bar, permille / 10, permille % 10, rate, eta);
    fflush(stderr);
    bar_on_screen = 1;
}

void rt_progress_update(rt_progress *p, uint64_t done)
{
    if (!p->active)
        return;
    p->done = done > p->total ? p->total : done;
    int permille = (int)((double)p->done * 1000.0 / (double)p->total);
    double now = now_seconds();
    if (now - p->start_s < p->delay_s)
        return;
    if (p->last_draw_s > 0 && now - p->last_draw_s < 0.1)
        return; /* the rate and ETA change too: redraw at most 10 times a second */
    if (permille == p->drawn_permille && now - p->last_draw_s < 0.5)
        return;
    p->drawn_permille = permille;
    p->last_draw_s = now;
    draw(p, permille, now);
}

void rt_progress_clear(rt_progress *p)
{
    if (!p->active || p->drawn_permille < 0)
        return;
    fputs(ERASE, stderr);
    fflush(stderr);
    bar_on_screen = 0;
    p->drawn_permille = -1;
}

void rt_progress_finish(rt_progress *p)
{
    rt_progress_clear(p);
    p->active = false;
}

void rt_progress_erase_on_signal(void)
{
    if (bar_on_screen) {
        ssize_t w = write(STDERR_FILENO, ERASE, sizeof ERASE - 1);
        (void)w;
    }
}

void rt_progress_lib_cb(void *data, uint64_t done, uint64_t total)
{
    rt_progress *p = data;
    if (total && p->total != total)
        p->total = total;
    rt_progress_update(p, done);
}
