/* SPDX-License-Identifier: MIT */
/* `rectool generate --format carla`'s own options: how many actors, the vector width and the
 * packet-id table of the synthetic log (librecd's recd_synth_write_carla_layout). */
#include "carla_generate.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "formats/carla/carla_synth.h"
#include "recd/carla.h"

static const struct option carla_options[] = {
    {"actors", required_argument, NULL, 'A'},
    {"width", required_argument, NULL, 'W'},
    {"ids", required_argument, NULL, 'I'},
    {NULL, 0, NULL, 0},
};

static void carla_defaults(void *state)
{
    *(recd_synth_carla_layout *)state =
        (recd_synth_carla_layout){.width = 4, .ids = RECD_CARLA_IDS_0_9_16};
}

static int take_actors(recd_synth_carla_layout *l, const char *arg, const char *cmd,
                       const char *usage)
{
    char *end;
    unsigned long n = strtoul(arg, &end, 10);
    if (!*arg || *end || n == 0 || n > 65000)
        return rt_usage_error(cmd, usage, "bad --actors '%s' (1..65000)", arg);
    l->actors = (uint32_t)n;
    return 0;
}

static int carla_take(void *state, int c, const char *arg, const char *cmd, const char *usage)
{
    recd_synth_carla_layout *l = state;
    switch (c) {
    case 'A': return take_actors(l, arg, cmd, usage);
    case 'W':
        if (strcmp(arg, "f32") != 0 && strcmp(arg, "f64") != 0)
            return rt_usage_error(cmd, usage, "bad --width '%s' (f32 or f64)", arg);
        l->width = arg[1] == '6' ? 8 : 4;
        return 0;
    default:
        if (!recd_carla_ids_parse(arg, &l->ids))
            return rt_usage_error(cmd, usage, "bad --ids '%s' (0.9.13, 0.9.15 or 0.9.16)", arg);
        return 0;
    }
}

static int carla_write(const recd_synth_params *p, const void *state, recd_sink sink,
                       uint64_t *units)
{
    return recd_synth_write_carla_layout(p, state, sink, units);
}

const rt_generate_options rt_carla_generate = {
    .synopsis = "[--actors N] [--width f32|f64] [--ids TABLE]",
    .help = "  --actors N           carla: vehicles and walkers, 1..65000 (default 50)\n"
            "  --width W            carla: vector width, f32 (UE4 builds, default) or f64 (UE5)\n"
            "  --ids TABLE          carla: packet-id table, 0.9.13 | 0.9.15 | 0.9.16 (default)\n",
    .options = carla_options,
    .state_size = sizeof(recd_synth_carla_layout),
    .defaults = carla_defaults,
    .take = carla_take,
    .write = carla_write,
};
