/* SPDX-License-Identifier: MIT */
/* Builders for the Recap events the synthetic player produces. Field order follows the tag table
 * (docs/formats/recap.md section 6.4); values live in the generator's per-tick pool. */
#include "formats/recap/recap_synth_internal.h"

void synth_mc_events_reset(recd_synth_recap_gen *g)
{
    g->n_events = 0;
    g->n_values = 0;
}

static recd_recap_value *take_values(recd_synth_recap_gen *g, size_t n)
{
    if (n > SYNTH_MC_MAX_VALUES - g->n_values)
        return NULL;
    recd_recap_value *v = &g->values[g->n_values];
    g->n_values += n;
    for (size_t i = 0; i < n; i++)
        v[i] = (recd_recap_value){0};
    return v;
}

/* Reserves an event with n >= 1 fields (every event generated has some); NULL when the tick's
 * pools are full. */
static recd_recap_value *add_event(recd_synth_recap_gen *g, uint8_t tag, size_t n)
{
    if (g->n_events >= SYNTH_MC_MAX_EVENTS)
        return NULL;
    recd_recap_value *v = take_values(g, n);
    if (!v)
        return NULL;
    recd_recap_event *ev = &g->events[g->n_events++];
    ev->tag = tag;
    ev->field_count = n;
    ev->fields = v;
    return v;
}

static void put_xyz(recd_recap_value *v, const int32_t xyz[3])
{
    for (int i = 0; i < 3; i++)
        v[i].i = xyz[i];
}

void synth_mc_ev_hand(recd_synth_recap_gen *g, uint8_t tag, uint8_t hand)
{
    recd_recap_value *v = add_event(g, tag, 1);
    if (v)
        v[0].u = hand;
}

void synth_mc_ev_block(recd_synth_recap_gen *g, uint8_t tag, const int32_t xyz[3], const char *b)
{
    recd_recap_value *v = add_event(g, tag, 4);
    if (!v)
        return;
    put_xyz(v, xyz);
    v[3].blob = recd_recap_str(b);
}

void synth_mc_ev_dig_start(recd_synth_recap_gen *g, const int32_t xyz[3], uint8_t stage)
{
    recd_recap_value *v = add_event(g, RECD_RECAP_BLOCK_DAMAGE_START, 4);
    if (!v)
        return;
    put_xyz(v, xyz);
    v[3].u = stage;
}

void synth_mc_ev_dig_abort(recd_synth_recap_gen *g, const int32_t xyz[3])
{
    recd_recap_value *v = add_event(g, RECD_RECAP_BLOCK_DAMAGE_ABORT, 3);
    if (v)
        put_xyz(v, xyz);
}

void synth_mc_ev_damage(recd_synth_recap_gen *g, uint8_t cause, float amount, uint8_t flags,
                        int32_t attacker)
{
    recd_recap_value *v = add_event(g, RECD_RECAP_DAMAGE, 4);
    if (!v)
        return;
    v[0].u = cause;
    v[1].f32 = amount;
    v[2].u = flags;
    v[3].i = attacker;
}

void synth_mc_ev_container_open(recd_synth_recap_gen *g, const int32_t xyz[3], const char *type,
                                uint8_t open)
{
    recd_recap_value *v = add_event(g, RECD_RECAP_CONTAINER_OPEN, 5);
    if (!v)
        return;
    put_xyz(v, xyz);
    v[3].blob = recd_recap_str(type);
    v[4].u = open;
}

void synth_mc_ev_container_update(recd_synth_recap_gen *g, uint16_t slot, recd_recap_item item)
{
    recd_recap_value *v = add_event(g, RECD_RECAP_CONTAINER_UPDATE, 2);
    if (!v)
        return;
    v[0].u = slot;
    v[1].item = item;
}

void synth_mc_ev_projectile(recd_synth_recap_gen *g, const char *type, const double pos[3],
                            const double vel[3], int32_t id)
{
    recd_recap_value *v = add_event(g, RECD_RECAP_PROJECTILE, 8);
    if (!v)
        return;
    v[0].blob = recd_recap_str(type);
    for (int i = 0; i < 3; i++) {
        v[1 + i].f64 = pos[i];
        v[4 + i].f64 = vel[i];
    }
    v[7].i = id;
}

void synth_mc_ev_target(recd_synth_recap_gen *g, uint8_t tag, int32_t target)
{
    recd_recap_value *v = add_event(g, tag, 1);
    if (v)
        v[0].i = target;
}

void synth_mc_ev_text(recd_synth_recap_gen *g, uint8_t tag, const char *text)
{
    recd_recap_value *v = add_event(g, tag, 1);
    if (v)
        v[0].blob = recd_recap_str(text);
}

void synth_mc_ev_vehicle(recd_synth_recap_gen *g, uint8_t tag, int32_t id, const char *type)
{
    recd_recap_value *v = add_event(g, tag, 2);
    if (!v)
        return;
    v[0].i = id;
    v[1].blob = recd_recap_str(type);
}

void synth_mc_ev_item_drop(recd_synth_recap_gen *g, recd_recap_item item, const double pos[3],
                           const double vel[3])
{
    recd_recap_value *v = add_event(g, RECD_RECAP_ITEM_DROP, 7);
    if (!v)
        return;
    v[0].item = item;
    for (int i = 0; i < 3; i++) {
        v[1 + i].f64 = pos[i];
        v[4 + i].f64 = vel[i];
    }
}

/* One MOB_STATES row: 17 fields, see the mob row of the tag table. */
#define MOB_ROW_FIELDS 17

void synth_mc_ev_mob(recd_synth_recap_gen *g, int32_t id, const char *type, const double pos[3],
                     float yaw, float health)
{
    if (g->n_events >= SYNTH_MC_MAX_EVENTS)
        return;
    recd_recap_value *row = take_values(g, MOB_ROW_FIELDS);
    if (!row)
        return;
    recd_recap_value *v = add_event(g, RECD_RECAP_MOB_STATES, 1);
    if (!v)
        return;
    row[0].i = id;
    row[1].blob = recd_recap_str(type);
    row[2].f64 = pos[0];
    row[3].f64 = pos[1];
    row[4].f64 = pos[2];
    row[5].f32 = yaw;
    row[6].f32 = 0.0f; /* pitch */
    row[7].f32 = yaw;  /* head yaw */
    row[8].f32 = health;
    row[9].u = 0;  /* flags: adult, present */
    row[10].i = 0; /* variant */
    /* rows 11-16: six empty equipment items (zeroed) */
    v[0].list.values = row;
    v[0].list.count = 1;
}
