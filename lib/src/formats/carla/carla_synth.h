/* SPDX-License-Identifier: MIT */
/* The typed synthetic CARLA writer (recd/synth.h's generic entry points call it through the
 * descriptor's synth hook): a traffic log with a chosen number of actors and layout, for tests
 * and rectool generate's CARLA options. Private to recd, like recd/synth.h. */
#ifndef RECD_FORMATS_CARLA_SYNTH_H
#define RECD_FORMATS_CARLA_SYNTH_H

#include <stdint.h>

#include "recd/carla.h"
#include "recd/synth.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CARLA log of the traffic scenario (0.9.16 ids, f32, additional data) with `actors`
 * vehicles and walkers (1..65000; 0 = 50; recd_synth_write uses 50) through sink. frames_out
 * (may be NULL) receives the frame count. */
#define RECD_SYNTH_CARLA_MAX_ACTORS 65000u
int recd_synth_write_carla(const recd_synth_params *p, uint32_t actors, recd_sink sink,
                           uint64_t *frames_out);
/* The same log with a chosen layout: vector width 4 (f32, UE4 builds) or 8 (f64, UE5), and the
 * id table of 0.9.13 (then without VisualTime, which 0.9.13 lacks), 0.9.15 or 0.9.16.
 * -EINVAL for any other width or table. */
typedef struct recd_synth_carla_layout {
    uint32_t actors; /* as above */
    uint8_t width;   /* 4 or 8 */
    recd_carla_ids ids;
} recd_synth_carla_layout;
int recd_synth_write_carla_layout(const recd_synth_params *p,
                                  const recd_synth_carla_layout *layout, recd_sink sink,
                                  uint64_t *frames_out);

#ifdef __cplusplus
}
#endif
#endif
