/* SPDX-License-Identifier: MIT */
/* The label boxes of one plot: a label is drawn only where it overlaps no other. */
#include "plot_labels.h"

#include <stdio.h>

bool rt_plot_rects_intersect(rt_plot_rect a, rt_plot_rect b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

bool rt_plot_labels_free_at(const rt_plot_labels *l, rt_plot_rect r)
{
    if (l->n >= RT_PLOT_MAX_LABELS)
        return false;
    for (size_t i = 0; i < l->n; i++)
        if (rt_plot_rects_intersect(l->box[i], r))
            return false;
    return true;
}

bool rt_plot_labels_claim(rt_plot_labels *l, rt_plot_rect r, const char *text)
{
    if (!rt_plot_labels_free_at(l, r)) {
        l->dropped++;
        return false;
    }
    snprintf(l->text[l->n], sizeof l->text[l->n], "%s", text);
    l->box[l->n++] = r;
    return true;
}
