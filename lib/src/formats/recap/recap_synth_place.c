/* SPDX-License-Identifier: MIT */
/* Where the synthetic Recap player stands: the block ground under a point and the facing in
 * degrees, shared by movement (recap_synth_gen.c) and the activities (recap_synth_play.c), kept
 * apart so that neither of those files depends on the other for them. */
#include "formats/recap/recap_synth_internal.h"

#include <math.h>

double synth_mc_ground(const recd_synth_recap_gen *g, double x, double z)
{
    return floor(synth_terrain_height(&g->terrain, x, z));
}

double synth_mc_yaw_deg(const recd_synth_recap_gen *g)
{
    return g->mover.heading * (180.0 / SYNTH_PI);
}
