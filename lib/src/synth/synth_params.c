/* SPDX-License-Identifier: MIT */
/* Parameters of the synthetic generators: format and scenario names, duration text ("90s",
 * "1h30m"), the check of which format/scenario pairs make sense, and activity lengths. */
#include "synth/synth_internal.h"

#include <errno.h>
#include <string.h>

static const char *const format_names[] = {"samp-onfoot", "samp-vehicle", "recap", "carla"};
static const char *const scenario_names[] = {"idle", "walk", "drive", "mixed", "traffic"};

const char *recd_synth_format_name(recd_synth_format f)
{
    return (unsigned)f < 4 ? format_names[f] : "?";
}

const char *recd_synth_scenario_name(recd_synth_scenario s)
{
    return (unsigned)s < 5 ? scenario_names[s] : "?";
}

int recd_synth_format_parse(const char *name, recd_synth_format *out)
{
    for (unsigned i = 0; name && i < 4; i++) {
        if (strcmp(name, format_names[i]) == 0) {
            *out = (recd_synth_format)i;
            return 0;
        }
    }
    return -EINVAL;
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
    if ((unsigned)p->format > RECD_SYNTH_FORMAT_CARLA)
        reason = "unknown format";
    else if ((unsigned)p->scenario > RECD_SYNTH_SCENARIO_TRAFFIC)
        reason = "unknown scenario";
    else if (p->format == RECD_SYNTH_FORMAT_CARLA && p->scenario != RECD_SYNTH_SCENARIO_TRAFFIC &&
             p->scenario != RECD_SYNTH_SCENARIO_MIXED)
        reason = "a CARLA log holds the 'traffic' scenario (or 'mixed', the same)";
    else if (p->format != RECD_SYNTH_FORMAT_CARLA && p->scenario == RECD_SYNTH_SCENARIO_TRAFFIC)
        reason = "'traffic' is a CARLA scenario: use --format carla";
    else if (p->duration_ms == 0)
        reason = "the duration must be at least 1 ms";
    else if (p->duration_ms > RECD_SYNTH_MAX_DURATION_MS)
        reason = "the duration is longer than 7 days";
    else if (p->format == RECD_SYNTH_FORMAT_SAMP_ONFOOT && p->scenario == RECD_SYNTH_SCENARIO_DRIVE)
        reason = "an on-foot .rec cannot hold driving: use --format samp-vehicle for 'drive'";
    else if (p->format == RECD_SYNTH_FORMAT_SAMP_VEHICLE && p->scenario == RECD_SYNTH_SCENARIO_WALK)
        reason = "a vehicle .rec cannot hold walking: use --format samp-onfoot for 'walk'";
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
