/* SPDX-License-Identifier: MIT */
/* Parameters of the synthetic generators: scenario names, the check of the parameters (the
 * format's hook says which scenarios it holds), and activity lengths. The generators in the format
 * folders call it, so it never looks formats up in the table. */
#include "synth/synth_internal.h"

#include "formats/format_synth.h"

#include <errno.h>
#include <string.h>

static const char *const scenario_names[] = {"idle", "walk", "drive", "mixed", "traffic"};

const char *recd_synth_scenario_name(recd_synth_scenario s)
{
    return (unsigned)s < 5 ? scenario_names[s] : "?";
}

int recd_synth_scenario_parse(const char *name, recd_synth_scenario *out)
{
    for (unsigned i = 0; name && i < 5; i++) {
        if (strcmp(name, scenario_names[i]) == 0) {
            *out = (recd_synth_scenario)i;
            return 0;
        }
    }
    return -EINVAL;
}

int recd_synth_params_check(const recd_synth_params *p, const char **why)
{
    const char *reason = NULL;
    if (!p->format)
        reason = "unknown format";
    else if (!p->format->synth)
        reason = "the format has no synthetic data";
    else if ((unsigned)p->scenario > RECD_SYNTH_SCENARIO_TRAFFIC)
        reason = "unknown scenario";
    else if ((reason = p->format->synth->refuse(p)) != NULL)
        ;
    else if (p->duration_ms == 0)
        reason = "the duration must be at least 1 ms";
    else if (p->duration_ms > RECD_SYNTH_MAX_DURATION_MS)
        reason = "the duration is longer than 7 days";
    if (why)
        *why = reason;
    return reason ? -EINVAL : 0;
}

double synth_activity_seconds(const recd_synth_params *p, double seconds)
{
    if (p->scenario == RECD_SYNTH_SCENARIO_IDLE)
        return seconds;
    double cap = (double)p->duration_ms / 6000.0;
    if (cap < 3.0)
        cap = 3.0;
    return seconds < cap ? seconds : cap;
}
