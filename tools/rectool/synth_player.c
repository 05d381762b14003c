/* SPDX-License-Identifier: MIT */
/* A synthetic samp-player session: a walk and a drive in turns on one clock (synth_player.h). */
#include "synth_player.h"

#include <string.h>

int rt_player_synth_init(rt_player_synth *p, uint64_t seed, uint64_t duration_ms)
{
    memset(p, 0, sizeof *p);
    recd_synth_params walk = {recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                              duration_ms, seed};
    recd_synth_params drive = {recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE,
                               duration_ms, seed};
    int rc = recd_synth_rec_gen_new(&walk, &p->walk);
    if (rc == 0)
        rc = recd_synth_rec_gen_new(&drive, &p->car);
    p->stretch_starts = true;
    return rc;
}

/* Each stretch goes on 100 ms after the last one's end, its first block at the stretch's start. */
int rt_player_synth_next(rt_player_synth *p, recd_msg *m)
{
    recd_synth_rec_block b;
    int rc = recd_synth_rec_gen_next(p->in_car ? p->car : p->walk, &b);
    if (rc <= 0)
        return rc < 0 ? rc : 1;
    uint32_t *t = p->in_car ? &b.vehicle.time_ms : &b.onfoot.time_ms;
    if (p->stretch_starts) {
        p->stretch_gen_ms = *t;
        p->stretch_at_ms = p->any ? p->last_ms + 100 : 0;
        p->stretch_starts = false;
    }
    *t = p->stretch_at_ms + (*t - p->stretch_gen_ms);
    p->last_ms = *t;
    p->any = true;
    m->player.rec_type = p->in_car ? RECD_REC_TYPE_VEHICLE : RECD_REC_TYPE_ONFOOT;
    if (p->in_car) {
        m->vehicle = b.vehicle;
        m->player.has_model = m->player.has_seat = true;
        m->player.vehicle_model = RT_PLAYER_VEHICLE_MODEL;
        m->player.seat = 0;
    } else {
        m->onfoot = b.onfoot;
    }
    if (*t - p->stretch_at_ms >= RT_PLAYER_STRETCH_MS) {
        p->in_car = !p->in_car;
        p->stretch_starts = true;
    }
    return 0;
}

void rt_player_synth_free(rt_player_synth *p)
{
    recd_synth_rec_gen_free(p->walk);
    recd_synth_rec_gen_free(p->car);
    p->walk = p->car = NULL;
}
