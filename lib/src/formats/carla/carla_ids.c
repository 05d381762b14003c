/* SPDX-License-Identifier: MIT */
/* CARLA's packet-id tables: which kinds the 0.9.13, 0.9.15 and 0.9.16 recorders write and under
 * which ids (docs/formats/carla.md section 2.4), and their names. */
#include <string.h>

#include "formats/carla/carla_schema.h"

/* File ids per table, indexed by kind: -1 = not in that release. */
static const int8_t ids_0913[RECD_CARLA_KIND_COUNT] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                       13, 14, 15, 16, 17, -1, -1, -1, -1, -1, -1, -1};
static const int8_t ids_0915[RECD_CARLA_KIND_COUNT] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                       13, 14, 15, 16, 17, 18, 19, 20, 21, 22, -1, -1};
static const int8_t ids_0916[RECD_CARLA_KIND_COUNT] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                       13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};

static const int8_t *table_of(recd_carla_ids ids)
{
    switch (ids) {
    case RECD_CARLA_IDS_0_9_13: return ids_0913;
    case RECD_CARLA_IDS_0_9_15: return ids_0915;
    default: return ids_0916;
    }
}

int carla_id_of_kind(recd_carla_ids ids, unsigned kind)
{
    return kind < RECD_CARLA_KIND_COUNT ? table_of(ids)[kind] : -1;
}

int carla_kind_of_id(recd_carla_ids ids, unsigned id)
{
    const int8_t *t = table_of(ids);
    for (unsigned k = 0; k < RECD_CARLA_KIND_COUNT; k++)
        if (t[k] == (int)id)
            return (int)k;
    return -1;
}

const char *recd_carla_ids_name(recd_carla_ids ids)
{
    switch (ids) {
    case RECD_CARLA_IDS_0_9_13: return "0.9.13";
    case RECD_CARLA_IDS_0_9_15: return "0.9.15";
    case RECD_CARLA_IDS_0_9_16: return "0.9.16";
    default: return "";
    }
}

bool recd_carla_ids_parse(const char *name, recd_carla_ids *out)
{
    static const recd_carla_ids all[] = {RECD_CARLA_IDS_0_9_13, RECD_CARLA_IDS_0_9_15,
                                         RECD_CARLA_IDS_0_9_16};
    for (size_t i = 0; name && i < 3; i++)
        if (strcmp(name, recd_carla_ids_name(all[i])) == 0) {
            *out = all[i];
            return true;
        }
    return false;
}
