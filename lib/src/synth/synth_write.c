/* SPDX-License-Identifier: MIT */
/* Whole synthetic recordings through a recd_sink, dispatched through the format's synth hook (its
 * generator writes with librecd's own writer, so the output is what the daemon would write). */
#include "recd/synth.h"

#include <errno.h>

#include "formats/format_synth.h"

int recd_synth_write_progress(const recd_synth_params *p, recd_sink sink, uint64_t *units_out,
                              recd_synth_progress_fn progress, void *ctx)
{
    if (units_out)
        *units_out = 0;
    if (recd_synth_params_check(p, NULL) < 0)
        return -EINVAL;
    return p->format->synth->write(p, sink, units_out, progress, ctx);
}

int recd_synth_write(const recd_synth_params *p, recd_sink sink, uint64_t *units_out)
{
    return recd_synth_write_progress(p, sink, units_out, NULL, NULL);
}
