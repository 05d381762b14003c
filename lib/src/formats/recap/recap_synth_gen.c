/* SPDX-License-Identifier: MIT */
/* Synthetic Recap generator: header data, the 20 Hz tick loop, and the player's movement with
 * Minecraft's numbers: walk 4.317, sprint 5.612, sneak 1.295 blocks/s, jumps of 0.42 blocks/tick
 * with 0.08 gravity and 0.98 drag, auto-jumping onto the next block of a stepped terrain, velocity
 * equal to the position change per tick. Activities and events live in recap_synth_play.c. */
#include "formats/recap/recap_synth_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define JUMP_VY 0.42
#define GRAVITY 0.08
#define DRAG 0.98

static void make_identity(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    static const char *const first[] = {"Block", "Creeper", "Diamond", "Ender", "Pixel",
                                        "Redstone", "Sky", "Stone", "Nether", "Oak"};
    static const char *const second[] = {"Miner", "Builder", "Walker", "Knight", "Fox",
                                         "Smith", "Ranger", "Crafter"};
    snprintf(g->player, sizeof g->player, "%s%s%u", first[recd_synth_rng_below(r, 10)],
             second[recd_synth_rng_below(r, 8)], (unsigned)recd_synth_rng_below(r, 100));
    /* A version-4 UUID, lower-case hex. */
    uint64_t hi = recd_synth_rng_next(r), lo = recd_synth_rng_next(r);
    hi = (hi & ~0xF000ull) | 0x4000ull;
    lo = (lo & ~(3ull << 62)) | (2ull << 62);
    snprintf(g->uuid, sizeof g->uuid, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(hi >> 32),
             (unsigned)((hi >> 16) & 0xFFFF), (unsigned)(hi & 0xFFFF), (unsigned)(lo >> 48),
             (unsigned long long)(lo & 0xFFFFFFFFFFFFull));
    snprintf(g->name, sizeof g->name, "synth-%s-%llu", recd_synth_scenario_name(g->p.scenario),
             (unsigned long long)g->p.seed);
    /* 2025-01-01T00:00:00Z plus up to a year. */
    g->start_ms = 1735689600000ll + (int64_t)recd_synth_rng_below(r, 365u * 86400u) * 1000;
    g->time_of_day = (int64_t)recd_synth_rng_below(r, 24000);
}

int recd_synth_recap_gen_new(const recd_synth_params *p, recd_synth_recap_gen **out)
{
    *out = NULL;
    if (recd_synth_params_check(p, NULL) < 0 || p->format->msg_format != RECD_MSG_FMT_RECAP)
        return -EINVAL;
    recd_synth_recap_gen *g = calloc(1, sizeof *g);
    if (!g)
        return -ENOMEM;
    g->p = *p;
    g->ticks = p->duration_ms / RECD_RECAP_TICK_MS;
    if (g->ticks == 0)
        g->ticks = 1;
    recd_synth_rng_seed(&g->rng, p->seed);
    make_identity(g);
    synth_terrain_init(&g->terrain, &g->rng, 64.0, 72.0);
    synth_mover *mv = &g->mover;
    mv->x = (double)(int64_t)recd_synth_rng_below(&g->rng, 4000) - 2000.0 + 0.5;
    mv->y = (double)(int64_t)recd_synth_rng_below(&g->rng, 4000) - 2000.0 + 0.5;
    mv->heading = recd_synth_rng_range(&g->rng, -SYNTH_PI, SYNTH_PI);
    mv->accel = 40.0; /* Minecraft reaches full speed within a few ticks */
    mv->brake = 40.0;
    mv->max_turn_rate = 4.0;
    mv->max_lat_accel = 30.0;
    mv->center_x = mv->x;
    mv->center_y = mv->y;
    mv->bound = 1500.0;
    g->y = synth_mc_ground(g, mv->x, mv->y);
    g->on_ground = true;
    g->pitch = recd_synth_rng_range(&g->rng, -5.0, 15.0);
    g->origin[0] = mv->x;
    g->origin[1] = g->y;
    g->origin[2] = mv->y;
    g->next_entity_id = (int32_t)(100 + recd_synth_rng_below(&g->rng, 5000));
    g->teleport_tick = UINT64_MAX;
    if (p->scenario == RECD_SYNTH_SCENARIO_MIXED && g->ticks >= 200) /* somewhere mid-way */
        g->teleport_tick =
            g->ticks * 3 / 10 + recd_synth_rng_below(&g->rng, (uint32_t)(g->ticks * 4 / 10));
    g->st.health = 20.0f;
    synth_mc_init_inventory(g);
    *out = g;
    return 0;
}

void recd_synth_recap_gen_free(recd_synth_recap_gen *g) { free(g); }

uint64_t recd_synth_recap_gen_ticks(const recd_synth_recap_gen *g) { return g->ticks; }

void recd_synth_recap_gen_header(const recd_synth_recap_gen *g, recd_recap_header *h)
{
    recd_recap_header_init(h);
    /* Bounded by the arrays: gcc's LTO cannot prove the terminators and warns on strlen. */
    h->name = (recd_recap_blob){(const uint8_t *)g->name, strnlen(g->name, sizeof g->name)};
    h->player_name = (recd_recap_blob){(const uint8_t *)g->player, strnlen(g->player, sizeof g->player)};
    h->player_uuid = (recd_recap_blob){(const uint8_t *)g->uuid, strnlen(g->uuid, sizeof g->uuid)};
    h->world_name = recd_recap_str("world");
    for (int i = 0; i < 3; i++)
        h->origin[i] = g->origin[i];
    h->start_ms = g->start_ms;
    h->end_ms = g->start_ms + (int64_t)g->ticks * RECD_RECAP_TICK_MS;
    h->frame_count = (uint32_t)g->ticks;
    h->weather = 0;
    h->time_of_day = g->time_of_day;
}

/* Standing still: now and then turn the body and tilt the head over a few ticks. */
static void look_around(recd_synth_recap_gen *g)
{
    synth_mover *mv = &g->mover;
    if (g->look_ticks > 0) {
        g->pitch = synth_clamp(g->pitch + g->look_pitch_step, -60.0, 60.0);
        if (--g->look_ticks == 0)
            mv->turn_rate = 0;
        return;
    }
    double rate = g->mode == MC_AFK ? 0 : 1.0 / (8.0 * SYNTH_MC_TICKS_PER_S);
    if (rate > 0 && recd_synth_rng_chance(&g->rng, rate)) {
        g->look_ticks = 4 + (int)recd_synth_rng_below(&g->rng, 12);
        mv->turn_rate = recd_synth_rng_range(&g->rng, -4.0, 4.0);
        double target = recd_synth_rng_range(&g->rng, -30.0, 45.0);
        g->look_pitch_step = (target - g->pitch) / g->look_ticks;
    }
}

static void set_gait(recd_synth_recap_gen *g)
{
    synth_mover *mv = &g->mover;
    bool moving = mv->target_speed > 0;
    if (!moving) {
        mv->steer_gain = 0;
        mv->turn_noise = 0;
        mv->turn_decay = 0;
        if (g->look_ticks == 0)
            mv->turn_rate = 0;
    } else {
        if (g->look_ticks > 0 || mv->steer_gain == 0) {
            mv->desired_heading = mv->heading;
            mv->retarget_in = recd_synth_rng_range(&g->rng, 1.0, 6.0);
        }
        g->look_ticks = 0;
        /* Players head somewhere and turn with the mouse; horses turn more slowly. */
        mv->steer_gain = g->riding ? 1.0 : 2.0;
        mv->turn_accel = g->riding ? 3.0 : 8.0;
        mv->turn_noise = g->riding ? 0.1 : 0.3;
        mv->retarget_min_s = g->riding ? 5.0 : 3.0;
        mv->retarget_max_s = g->riding ? 25.0 : 15.0;
        mv->retarget_angle = g->riding ? 1.2 : 1.8;
    }
}

static void vertical(recd_synth_recap_gen *g, double dist_per_tick)
{
    synth_mover *mv = &g->mover;
    double ground = synth_mc_ground(g, mv->x, mv->y);
    if (g->riding) { /* a horse steps up and down a block without jumping */
        g->y = ground + SYNTH_MC_RIDE_OFFSET;
        g->on_ground = false;
        return;
    }
    if (g->on_ground) {
        double look = dist_per_tick * 4 + 0.3;
        double ahead = synth_mc_ground(g, mv->x - synth_sin(mv->heading) * look,
                                       mv->y + synth_cos(mv->heading) * look);
        bool hop = g->mode != MC_SNEAK && mv->speed > 0.5 &&
                   recd_synth_rng_chance(&g->rng, g->p.scenario == RECD_SYNTH_SCENARIO_MIXED
                                                      ? 0.006 : 0.002);
        if ((ahead > g->y + 0.5 && dist_per_tick > 0.01) || hop) {
            g->on_ground = false;
            g->vy = JUMP_VY;
        } else if (ground < g->y) {
            g->on_ground = false; /* walked off a ledge */
            g->vy = 0;
        } else {
            g->y = ground;
            return;
        }
    }
    g->y += g->vy;
    g->vy = (g->vy - GRAVITY) * DRAG;
    if (g->y <= ground) {
        g->y = ground;
        g->vy = 0;
        g->on_ground = true;
    }
}

static void pitch_drift(recd_synth_recap_gen *g)
{
    if (g->mover.target_speed <= 0 && g->mover.speed <= 0)
        return;
    double d = recd_synth_rng_range(&g->rng, -0.8, 0.8) + (8.0 - g->pitch) * 0.02;
    g->pitch = synth_clamp(g->pitch + d, -30.0, 35.0);
}

static void teleport(recd_synth_recap_gen *g)
{
    synth_mover *mv = &g->mover;
    double dx = recd_synth_rng_range(&g->rng, 300.0, 1200.0);
    double dz = recd_synth_rng_range(&g->rng, 300.0, 1200.0);
    mv->x = floor(mv->x + (recd_synth_rng_chance(&g->rng, 0.5) ? dx : -dx)) + 0.5;
    mv->y = floor(mv->y + (recd_synth_rng_chance(&g->rng, 0.5) ? dz : -dz)) + 0.5;
    mv->center_x = mv->x;
    mv->center_y = mv->y;
    mv->speed = 0;
    g->y = synth_mc_ground(g, mv->x, mv->y);
    g->vy = 0;
    g->on_ground = true;
}

static void move_one_tick(recd_synth_recap_gen *g)
{
    synth_mover *mv = &g->mover;
    if (g->tick == g->teleport_tick) {
        teleport(g);
        return;
    }
    set_gait(g);
    if (mv->target_speed <= 0 && mv->speed <= 0)
        look_around(g);
    double px = mv->x, pz = mv->y;
    synth_mover_step(mv, &g->rng, 1.0 / SYNTH_MC_TICKS_PER_S);
    double dx = mv->x - px, dz = mv->y - pz;
    vertical(g, sqrt(dx * dx + dz * dz));
    pitch_drift(g);
}

static void build_state(recd_synth_recap_gen *g, const double prev[3], bool teleported)
{
    recd_recap_state *st = &g->st;
    const synth_mover *mv = &g->mover;
    st->pos[0] = mv->x;
    st->pos[1] = g->y;
    st->pos[2] = mv->y;
    st->rot[0] = synth_mc_yaw_deg(g);
    st->rot[1] = g->pitch;
    st->rot[2] = st->rot[0];
    if (teleported || g->tick == 0) {
        st->vel[0] = st->vel[2] = 0;
    } else {
        st->vel[0] = st->pos[0] - prev[0];
        st->vel[2] = st->pos[2] - prev[2];
    }
    st->vel[1] = g->on_ground ? SYNTH_MC_ON_GROUND_VY : (teleported ? 0 : st->pos[1] - prev[1]);
    uint16_t flags = st->flags & (RECD_RECAP_FLAG_USING_ITEM);
    if (g->on_ground)
        flags |= RECD_RECAP_FLAG_ON_GROUND;
    if (g->mode == MC_SNEAK && !g->riding)
        flags |= RECD_RECAP_FLAG_SNEAKING;
    if (g->mode == MC_SPRINT && !g->riding && mv->speed > 0.5)
        flags |= RECD_RECAP_FLAG_SPRINTING;
    st->flags = flags;
    st->pose = (flags & RECD_RECAP_FLAG_SNEAKING) ? 5 : 0;
    synth_mc_sync_equipment(g);
}

int recd_synth_recap_gen_next(recd_synth_recap_gen *g, recd_synth_recap_tick *out)
{
    if (g->tick >= g->ticks)
        return 0;
    synth_mc_events_reset(g);
    double prev[3] = {g->mover.x, g->y, g->mover.y};
    bool teleported = g->tick == g->teleport_tick;
    if (g->tick == 0 || g->tick >= g->mode_until)
        synth_mc_choose_mode(g);
    if (g->tick > 0)
        move_one_tick(g);
    synth_mc_activities(g);
    build_state(g, prev, teleported);
    out->tick = g->tick;
    out->state = &g->st;
    out->events = g->events;
    out->n_events = g->n_events;
    g->tick++;
    return 1;
}

int recd_synth_recap_run(const recd_synth_params *p, recd_synth_recap_fn fn, void *ctx)
{
    recd_synth_recap_gen *g;
    int rc = recd_synth_recap_gen_new(p, &g);
    if (rc < 0)
        return rc;
    recd_synth_recap_tick t;
    while ((rc = recd_synth_recap_gen_next(g, &t)) > 0) {
        rc = fn(ctx, &t);
        if (rc < 0)
            break;
    }
    recd_synth_recap_gen_free(g);
    return rc < 0 ? rc : 0;
}
