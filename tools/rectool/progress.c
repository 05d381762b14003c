/* SPDX-License-Identifier: MIT */
/* Progress bar: redraws at most every 100 ms and only on visible change, so it costs nothing in
 * tight loops; never drawn unless stderr is a TTY. */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 30

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rt_progress_start(rt_progress *p, const char *label, uint64_t total, bool worth_showing)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->total = total;
    p->drawn_permille = -1;
    p->active = worth_showing && total > 0 && isatty(STDERR_FILENO);
    if (p->active)
        rt_progress_update(p, 0);
}

static void draw(rt_progress *p, int permille)
{
    char bar[BAR_WIDTH + 1];
    int filled = permille * BAR_WIDTH / 1000;
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    fprintf(stderr, "\r%s [%s] %3d.%d%%", p->label, bar, permille / 10, permille % 10);
    fflush(stderr);
}

void rt_progress_update(rt_progress *p, uint64_t done)
{
    if (!p->active)
        return;
    p->done = done > p->total ? p->total : done;
    int permille = (int)((double)p->done * 1000.0 / (double)p->total);
    if (permille == p->drawn_permille)
        return;
    double now = now_seconds();
    if (p->last_draw_s > 0 && permille < 1000 && now - p->last_draw_s < 0.1)
        return;
    p->drawn_permille = permille;
    p->last_draw_s = now;
    draw(p, permille);
}

void rt_progress_clear(rt_progress *p)
{
    if (!p->active || p->drawn_permille < 0)
        return;
    /* Spaces over the bar, then back to column 0. */
    fprintf(stderr, "\r%*s\r", (int)strlen(p->label) + BAR_WIDTH + 10, "");
    fflush(stderr);
    p->drawn_permille = -1;
}

void rt_progress_finish(rt_progress *p)
{
    rt_progress_clear(p);
    p->active = false;
}
