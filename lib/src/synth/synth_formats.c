/* SPDX-License-Identifier: MIT */
/* The formats that have a synthetic-data generator: the format table's entries with a synth hook.
 * Kept apart from the parameters (synth_params.c), which the generators call, so that looking a
 * format up in the table does not make a circle through them. */
#include "recd/synth.h"

#include "formats/format_synth.h"

bool recd_synth_has_format(const recd_format *f)
{
    return f && f->synth;
}

const recd_format *recd_synth_format_find(const char *name)
{
    const recd_format *f = recd_format_find(name);
    return recd_synth_has_format(f) ? f : NULL;
}
