/* SPDX-License-Identifier: MIT */
/* Progress of an edit for its optional watcher: messages read, then messages written or compared.
 * Until the inputs are loaded the total is a guess from their headers (units, which are close to
 * the number of states); done stays below it until the end so a bar never claims to be finished. */
#include "edit/edit_internal.h"

#include "recd/format.h"

/* A guess of the messages in one input: its header's units (blocks, ticks, frames), plus open and
 * close; without a header count, one message per 64 bytes. */
static uint64_t guess_messages(recd_edit_input in)
{
    const recd_format *f = recd_format_sniff(in.data, in.len, NULL);
    uint64_t units = f ? recd_format_count_units(f, in.data, in.len) : 0;
    return (units ? units : in.len / 64) + 2;
}

static void report(edit_progress *p)
{
    p->next = p->done + EDIT_PROGRESS_STEP;
    p->watch->fn(p->watch->data, p->done, p->total);
}

void edit_progress_begin(edit_progress *p, const recd_progress *watch, const recd_edit_input *in,
                         size_t n, unsigned passes)
{
    p->watch = watch && watch->fn ? watch : NULL;
    p->done = p->total = 0;
    if (!p->watch)
        return;
    for (size_t i = 0; i < n; i++)
        p->total += passes * guess_messages(in[i]);
    report(p);
}

void edit_progress_loaded(edit_progress *p, uint64_t still_to_do)
{
    if (!p->watch)
        return;
    p->total = p->done + still_to_do + 1; /* + 1: only edit_progress_end reaches the total */
    report(p);
}

void edit_progress_step(edit_progress *p)
{
    if (!p || !p->watch)
        return;
    if (p->done + 1 < p->total)
        p->done++; /* a guess that was too small, or a retime writing more than it read: hold */
    if (p->done >= p->next)
        report(p);
}

void edit_progress_end(edit_progress *p, int rc)
{
    if (!p->watch || rc < 0)
        return;
    p->done = p->total;
    report(p);
}
