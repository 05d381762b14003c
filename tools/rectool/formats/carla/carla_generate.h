/* SPDX-License-Identifier: MIT */
/* CARLA's layout options of `rectool generate` (--actors, --width, --ids): the carla entry's
 * rt_generate_options (formats.h). */
#ifndef RECTOOL_CARLA_GENERATE_H
#define RECTOOL_CARLA_GENERATE_H

#include "formats.h"

extern const rt_generate_options rt_carla_generate;

#endif
