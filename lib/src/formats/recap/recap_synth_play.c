/* SPDX-License-Identifier: MIT */
/* What the synthetic Minecraft player does: scenario-weighted activities (walking, sprinting,
 * sneaking, mining, building, fighting a zombie, riding a horse, standing AFK), the inventory and
 * equipment they change, and the events they cause at plausible rates. */
#include "formats/recap/recap_synth_internal.h"

#include <math.h>
#include <string.h>

#define DAMAGE_CAUSE_ENTITY_ATTACK 3 /* Bukkit DamageCause ordinals */
#define DAMAGE_FLAG_KNOCKBACK 4
#define HAND_ACTIVE 1
#define USE_EAT 1
#define USE_BOW 2
#define EYE_HEIGHT 1.62

typedef struct mc_mode_info {
    unsigned idle_w, walk_w, drive_w; /* scenario weights (mixed deals from a deck) */
    double min_s, max_s; /* duration */
    double speed;        /* blocks per second */
} mc_mode_info;

static const mc_mode_info modes[MC_MODES] = {
    [MC_STAND] = {100, 15, 10, 3, 20, 0},
    [MC_WALK] = {0, 40, 15, 5, 40, 4.317},
    [MC_SPRINT] = {0, 30, 0, 4, 25, 5.612},
    [MC_SNEAK] = {0, 15, 0, 3, 12, 1.295},
    [MC_MINE] = {0, 0, 0, 5, 25, 0},
    [MC_BUILD] = {0, 0, 0, 5, 25, 0},
    [MC_FIGHT] = {0, 0, 0, 5, 20, 0},
    [MC_RIDE] = {0, 0, 75, 20, 120, 0},
    [MC_AFK] = {0, 0, 0, 15, 60, 0},
};

/* The mixed scenario deals its activities from a shuffled deck, so every kind shows up within
 * a few minutes instead of whenever chance allows. */
static const uint8_t mixed_deck[] = {MC_STAND, MC_WALK, MC_WALK,  MC_SPRINT, MC_SNEAK,
                                     MC_MINE,  MC_MINE, MC_BUILD, MC_FIGHT,  MC_FIGHT,
                                     MC_RIDE,  MC_AFK};

/* A block the player can dig, the item it drops and the hotbar tool used. */
typedef struct mc_dig_block {
    const char *block, *drop;
    int tool_slot;
} mc_dig_block;

static const mc_dig_block dig_blocks[] = {
    {"minecraft:stone", "minecraft:cobblestone", 1},
    {"minecraft:dirt", "minecraft:dirt", 2},
    {"minecraft:grass_block[snowy=false]", "minecraft:dirt", 2},
    {"minecraft:gravel", "minecraft:gravel", 2},
    {"minecraft:coal_ore", "minecraft:coal", 1},
    {"minecraft:iron_ore", "minecraft:raw_iron", 1},
    {"minecraft:oak_log[axis=y]", "minecraft:oak_log", 3},
};
#define DIG_BLOCKS (sizeof dig_blocks / sizeof dig_blocks[0])

/* Items that place as blocks, and the block state they become. */
static const struct {
    const char *item, *block;
} placeables[] = {
    {"minecraft:cobblestone", "minecraft:cobblestone"},
    {"minecraft:oak_planks", "minecraft:oak_planks"},
    {"minecraft:dirt", "minecraft:dirt"},
    {"minecraft:torch", "minecraft:torch"},
};
#define PLACEABLES (sizeof placeables / sizeof placeables[0])

static const char *const chat_lines[] = {
    "hi all", "anyone got spare iron?", "brb", "back", "where is the nether portal?",
    "gg", "lol", "need food pls", "found diamonds!!", "this server is laggy today",
    "who wants to build a farm", "going to bed irl, cya", "watch out, creeper near spawn",
    "can someone tp me", "nice house", "ok", "thx", "afk 5 min",
};
#define CHAT_LINES (sizeof chat_lines / sizeof chat_lines[0])

static recd_recap_item item(const char *key, uint8_t count, uint8_t flags)
{
    recd_recap_item it = {0};
    it.key = recd_recap_str(key);
    it.count = count;
    it.flags = flags;
    return it;
}

static bool slot_empty(const recd_synth_recap_gen *g, int slot)
{
    return g->st.inventory[slot].key.len == 0;
}

static bool key_is(const recd_recap_item *it, const char *key)
{
    recd_recap_blob k = recd_recap_str(key);
    return it->key.len == k.len && memcmp(it->key.data, k.data, k.len) == 0;
}

void synth_mc_init_inventory(recd_synth_recap_gen *g)
{
    recd_recap_item *inv = g->st.inventory;
    if (g->p.scenario == RECD_SYNTH_SCENARIO_MIXED) {
        inv[0] = item("minecraft:diamond_sword", 1, 1); /* enchanted: glint */
        inv[1] = item("minecraft:iron_pickaxe", 1, 0);
        inv[2] = item("minecraft:iron_shovel", 1, 0);
        inv[3] = item("minecraft:iron_axe", 1, 0);
        inv[4] = item("minecraft:bow", 1, 0);
        inv[5] = item("minecraft:cooked_beef", 16, 0);
        inv[6] = item("minecraft:cobblestone", 64, 0);
        inv[7] = item("minecraft:oak_planks", 48, 0);
        inv[8] = item("minecraft:torch", 32, 0);
        inv[9] = item("minecraft:arrow", 48, 0);
        inv[10] = item("minecraft:bread", 8, 0);
        inv[11] = item("minecraft:dirt", 20, 0);
        inv[12] = item("minecraft:oak_log", 12, 0);
        inv[13] = item("minecraft:coal", 9, 0);
        inv[SLOT_FEET] = item("minecraft:iron_boots", 1, 0);
        inv[SLOT_LEGS] = item("minecraft:iron_leggings", 1, 0);
        inv[SLOT_CHEST] = item("minecraft:iron_chestplate", 1, 0);
        inv[SLOT_HEAD] = item("minecraft:iron_helmet", 1, 0);
        inv[SLOT_OFF_HAND] = item("minecraft:shield", 1, 0);
    } else {
        inv[0] = item("minecraft:stone_sword", 1, 0);
        inv[1] = item("minecraft:stone_pickaxe", 1, 0);
        inv[2] = item("minecraft:bread", 12, 0);
        inv[3] = item("minecraft:torch", 16, 0);
        inv[4] = item("minecraft:oak_planks", 20, 0);
        inv[SLOT_FEET] = item("minecraft:leather_boots", 1, 0);
        inv[SLOT_CHEST] = item("minecraft:leather_chestplate", 1, 0);
    }
}

void synth_mc_sync_equipment(recd_synth_recap_gen *g)
{
    recd_recap_state *st = &g->st;
    st->equipment[0] = st->inventory[g->selected];
    st->equipment[1] = st->inventory[SLOT_OFF_HAND];
    st->equipment[2] = st->inventory[SLOT_FEET];
    st->equipment[3] = st->inventory[SLOT_LEGS];
    st->equipment[4] = st->inventory[SLOT_CHEST];
    st->equipment[5] = st->inventory[SLOT_HEAD];
}

static void forward(const recd_synth_recap_gen *g, double *fx, double *fz)
{
    *fx = -synth_sin(g->mover.heading);
    *fz = synth_cos(g->mover.heading);
}

/* The block `dist` blocks in front of the feet, dy blocks up. */
static void block_ahead(const recd_synth_recap_gen *g, double dist, int dy, int32_t out[3])
{
    double fx, fz;
    forward(g, &fx, &fz);
    out[0] = (int32_t)floor(g->mover.x + fx * dist);
    out[1] = (int32_t)floor(g->y) + dy;
    out[2] = (int32_t)floor(g->mover.y + fz * dist);
}

static void eye_pos(const recd_synth_recap_gen *g, double out[3])
{
    out[0] = g->mover.x;
    out[1] = g->y + EYE_HEIGHT;
    out[2] = g->mover.y;
}

/* Adds n of key to a matching stack or the first empty storage/hotbar slot; false if full. */
static bool inventory_add(recd_synth_recap_gen *g, const char *key, unsigned n)
{
    recd_recap_item *inv = g->st.inventory;
    for (int s = 0; s < 36; s++) {
        if (!slot_empty(g, s) && key_is(&inv[s], key) && inv[s].count + n <= 64) {
            inv[s].count = (uint8_t)(inv[s].count + n);
            return true;
        }
    }
    for (int s = 9; s < 45; s++) { /* storage first, then the hotbar */
        int slot = s < 36 ? s : s - 36;
        if (slot_empty(g, slot)) {
            inv[slot] = item(key, (uint8_t)n, 0);
            return true;
        }
    }
    return false;
}

static void take_one(recd_synth_recap_gen *g, int slot)
{
    recd_recap_item *it = &g->st.inventory[slot];
    if (it->count > 1)
        it->count--;
    else
        *it = (recd_recap_item){0};
}

/* First hotbar slot holding a placeable block, or -1. */
static int placeable_slot(const recd_synth_recap_gen *g, const char **block)
{
    for (int s = 0; s < 9; s++)
        for (size_t i = 0; i < PLACEABLES; i++)
            if (!slot_empty(g, s) && key_is(&g->st.inventory[s], placeables[i].item)) {
                *block = placeables[i].block;
                return s;
            }
    return -1;
}

/* A random non-empty storage slot (9-35) other than the arrows, or -1. */
static int random_storage_slot(recd_synth_recap_gen *g)
{
    int candidates[27], n = 0;
    for (int s = 9; s < 36; s++)
        if (!slot_empty(g, s) && !key_is(&g->st.inventory[s], "minecraft:arrow"))
            candidates[n++] = s;
    return n ? candidates[recd_synth_rng_below(&g->rng, (uint32_t)n)] : -1;
}

static int find_item(const recd_synth_recap_gen *g, const char *key)
{
    for (int s = 0; s < 36; s++)
        if (!slot_empty(g, s) && key_is(&g->st.inventory[s], key))
            return s;
    return -1;
}

/* A hotbar slot with food, or -1. */
static int food_slot(const recd_synth_recap_gen *g)
{
    static const char *const foods[] = {"minecraft:cooked_beef", "minecraft:bread"};
    for (size_t i = 0; i < 2; i++) {
        int s = find_item(g, foods[i]);
        if (s >= 0 && s < 9)
            return s;
    }
    return -1;
}

static void stop_using(recd_synth_recap_gen *g)
{
    g->use_ticks = 0;
    g->use_kind = 0;
    g->st.hand_state = 0;
    g->st.flags &= (uint16_t)~RECD_RECAP_FLAG_USING_ITEM;
}

static void start_using(recd_synth_recap_gen *g, int slot, int kind, int ticks)
{
    g->selected = slot;
    g->use_kind = kind;
    g->use_ticks = ticks;
    g->st.hand_state = HAND_ACTIVE;
    g->st.flags |= RECD_RECAP_FLAG_USING_ITEM;
    synth_mc_ev_hand(g, RECD_RECAP_USE_ITEM, 0);
}

static void leave_mode(recd_synth_recap_gen *g)
{
    if (g->riding) {
        synth_mc_ev_vehicle(g, RECD_RECAP_VEHICLE_LEAVE, g->mount_id, "minecraft:horse");
        g->riding = false;
        g->y = synth_mc_ground(g, g->mover.x, g->mover.y);
        g->on_ground = true;
        g->vy = 0;
    }
    if (g->digging) {
        synth_mc_ev_dig_abort(g, g->dig);
        g->digging = false;
    }
    if (g->container_open) {
        synth_mc_ev_container_open(g, g->chest, "minecraft:chest", 0);
        g->container_open = false;
    }
    if (g->use_kind)
        stop_using(g);
}

static unsigned scenario_weight(const recd_synth_recap_gen *g, int mode)
{
    switch (g->p.scenario) {
    case RECD_SYNTH_SCENARIO_IDLE: return modes[mode].idle_w;
    case RECD_SYNTH_SCENARIO_WALK: return modes[mode].walk_w;
    case RECD_SYNTH_SCENARIO_DRIVE: return modes[mode].drive_w;
    default: return 1;
    }
}

static void enter_mode(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    synth_mover *mv = &g->mover;
    mv->target_speed = modes[g->mode].speed;
    switch (g->mode) {
    case MC_RIDE:
        g->riding = true;
        g->mount_id = g->next_entity_id++;
        mv->target_speed = recd_synth_rng_range(r, 7.0, 9.5); /* a decent horse */
        synth_mc_ev_vehicle(g, RECD_RECAP_VEHICLE_ENTER, g->mount_id, "minecraft:horse");
        break;
    case MC_MINE:
        g->dig_next = g->tick + 5;
        g->dig_block = (int)recd_synth_rng_below(r, DIG_BLOCKS);
        break;
    case MC_BUILD: {
        const char *block;
        int s = placeable_slot(g, &block);
        if (s < 0)
            g->mode_until = g->tick + 1; /* nothing left to place */
        else
            g->selected = s;
        g->next_place = g->tick + 10;
        break;
    }
    case MC_FIGHT: {
        double fx, fz;
        forward(g, &fx, &fz);
        g->foe_id = g->next_entity_id++;
        g->foe[0] = g->mover.x + fx * 4.0;
        g->foe[1] = g->y;
        g->foe[2] = g->mover.y + fz * 4.0;
        g->selected = 0; /* the sword */
        g->next_swing = g->tick + 8;
        g->next_hurt = g->tick + 20 + recd_synth_rng_below(r, 30);
        break;
    }
    default: break;
    }
}

void synth_mc_choose_mode(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    leave_mode(g);
    unsigned w[MC_MODES];
    for (int i = 0; i < MC_MODES; i++)
        w[i] = scenario_weight(g, i);
    int prev = g->mode;
    if (g->p.scenario == RECD_SYNTH_SCENARIO_MIXED) {
        if (g->deck_pos >= g->deck_len) {
            g->deck_len = sizeof mixed_deck;
            memcpy(g->deck, mixed_deck, sizeof mixed_deck);
            for (unsigned i = g->deck_len - 1; i > 0; i--) { /* Fisher-Yates */
                unsigned j = recd_synth_rng_below(r, i + 1);
                uint8_t tmp = g->deck[i];
                g->deck[i] = g->deck[j];
                g->deck[j] = tmp;
            }
            g->deck_pos = 0;
            /* Open a recording with something happening, not with standing around. */
            for (unsigned i = 1; g->tick == 0 && i < g->deck_len; i++) {
                if (g->deck[0] != MC_AFK && g->deck[0] != MC_STAND)
                    break;
                uint8_t tmp = g->deck[0];
                g->deck[0] = g->deck[i];
                g->deck[i] = tmp;
            }
        }
        g->mode = g->deck[g->deck_pos++];
    } else {
        g->mode = synth_pick_weighted(r, w, MC_MODES);
    }
    if (g->tick == 0 && g->p.scenario == RECD_SYNTH_SCENARIO_DRIVE)
        g->mode = MC_RIDE; /* the drive scenario starts in the saddle */
    if (g->tick > 0 && g->mode == prev && g->mode == MC_RIDE)
        g->mode = MC_WALK; /* get off for a moment between rides */
    double len = recd_synth_rng_range(r, modes[g->mode].min_s, modes[g->mode].max_s);
    if (g->p.scenario == RECD_SYNTH_SCENARIO_IDLE)
        len *= 4; /* an idle player stays put for minutes */
    len = synth_activity_seconds(&g->p, len);
    g->mode_until = g->tick + 1 + (uint64_t)(len * SYNTH_MC_TICKS_PER_S);
    enter_mode(g);
}

static void mine(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    const mc_dig_block *b = &dig_blocks[g->dig_block];
    if (!g->digging) {
        if (g->tick < g->dig_next)
            return;
        g->selected = b->tool_slot;
        block_ahead(g, 1.6, b->tool_slot == 3 ? 0 : -1, g->dig);
        g->digging = true;
        g->dig_stage = 0;
        g->dig_next = g->tick + 2 + recd_synth_rng_below(r, 4);
        synth_mc_ev_dig_start(g, g->dig, 0);
        synth_mc_ev_hand(g, RECD_RECAP_SWING_ARM, 0);
        return;
    }
    if ((g->tick - g->dig_next) % 4 == 0)
        synth_mc_ev_hand(g, RECD_RECAP_SWING_ARM, 0); /* the arm swings while digging */
    if (g->tick < g->dig_next)
        return;
    if (g->dig_stage >= 2 && recd_synth_rng_chance(r, 0.04)) { /* gave up on this one */
        synth_mc_ev_dig_abort(g, g->dig);
        g->digging = false;
        g->dig_next = g->tick + 10 + recd_synth_rng_below(r, 20);
        return;
    }
    if (++g->dig_stage <= 9) {
        synth_mc_ev_dig_start(g, g->dig, (uint8_t)g->dig_stage);
        g->dig_next = g->tick + 2 + recd_synth_rng_below(r, 4);
        return;
    }
    synth_mc_ev_block(g, RECD_RECAP_BLOCK_BREAK, g->dig, b->block);
    inventory_add(g, b->drop, 1);
    g->digging = false;
    g->dig_next = g->tick + 6 + recd_synth_rng_below(r, 20);
    g->dig_block = (int)recd_synth_rng_below(r, DIG_BLOCKS);
}

static void build(recd_synth_recap_gen *g)
{
    if (g->tick < g->next_place)
        return;
    const char *block;
    int s = placeable_slot(g, &block);
    if (s < 0) {
        g->mode_until = g->tick + 1;
        return;
    }
    g->selected = s;
    int32_t at[3];
    block_ahead(g, 2.0, (int)recd_synth_rng_below(&g->rng, 3), at);
    synth_mc_ev_block(g, RECD_RECAP_BLOCK_PLACE, at, block);
    synth_mc_ev_hand(g, RECD_RECAP_SWING_ARM, 0);
    take_one(g, s);
    g->next_place = g->tick + 6 + recd_synth_rng_below(&g->rng, 10);
}

static void shoot_arrow(recd_synth_recap_gen *g)
{
    double pos[3], vel[3], fx, fz;
    eye_pos(g, pos);
    forward(g, &fx, &fz);
    double up = -g->pitch / 60.0; /* looking up (negative pitch) aims higher */
    vel[0] = fx * 2.8;
    vel[1] = up * 2.8 + 0.1;
    vel[2] = fz * 2.8;
    synth_mc_ev_projectile(g, "minecraft:arrow", pos, vel, g->next_entity_id++);
    int arrows = find_item(g, "minecraft:arrow");
    if (arrows >= 0)
        take_one(g, arrows);
}

static void fight(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    /* The zombie shuffles towards the player, reported every other tick. */
    double dx = g->mover.x - g->foe[0], dz = g->mover.y - g->foe[2];
    double dist = sqrt(dx * dx + dz * dz);
    if (dist > 1.2) {
        g->foe[0] += dx / dist * 0.11;
        g->foe[2] += dz / dist * 0.11;
    }
    g->foe[1] = synth_mc_ground(g, g->foe[0], g->foe[2]);
    if (g->tick % 2 == 0)
        synth_mc_ev_mob(g, g->foe_id, "minecraft:zombie", g->foe,
                        (float)(synth_mc_yaw_deg(g) + 180.0), 20.0f);
    if (g->use_kind == 0 && g->tick >= g->next_swing) {
        if (find_item(g, "minecraft:arrow") >= 0 && key_is(&g->st.inventory[4], "minecraft:bow") &&
            recd_synth_rng_chance(r, 0.15)) {
            start_using(g, 4, USE_BOW, 15 + (int)recd_synth_rng_below(r, 10));
        } else {
            g->selected = 0;
            synth_mc_ev_hand(g, RECD_RECAP_SWING_ARM, 0);
            if (recd_synth_rng_chance(r, 0.25))
                synth_mc_ev_target(g, RECD_RECAP_CRITICAL_HIT, g->foe_id);
            if (g->st.inventory[0].flags & 1 && recd_synth_rng_chance(r, 0.3))
                synth_mc_ev_target(g, RECD_RECAP_ENCHANT_CRIT, g->foe_id);
        }
        g->next_swing = g->tick + 12 + recd_synth_rng_below(r, 6);
    }
    if (g->tick >= g->next_hurt && dist < 2.5) {
        /* A zombie hit after iron armour: one to three points, in quarters. */
        float amount = (float)synth_round(recd_synth_rng_range(r, 1.0, 3.0) * 4) / 4.0f;
        if (g->st.health - amount < 2.0f)
            amount = g->st.health - 2.0f;
        if (amount > 0) {
            synth_mc_ev_damage(g, DAMAGE_CAUSE_ENTITY_ATTACK, amount, DAMAGE_FLAG_KNOCKBACK,
                               g->foe_id);
            g->st.health -= amount;
        }
        g->next_hurt = g->tick + 30 + recd_synth_rng_below(r, 40);
    }
}

/* Eating or drawing the bow in progress. */
static void using_item(recd_synth_recap_gen *g)
{
    if (g->use_kind == 0 || --g->use_ticks > 0)
        return;
    if (g->use_kind == USE_BOW)
        shoot_arrow(g);
    else
        take_one(g, g->selected);
    stop_using(g);
}

static void container(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    if (!g->container_open) {
        if ((g->mode == MC_STAND || g->mode == MC_BUILD) &&
            recd_synth_rng_chance(r, 1.0 / (30 * SYNTH_MC_TICKS_PER_S))) {
            block_ahead(g, 1.5, 0, g->chest);
            synth_mc_ev_container_open(g, g->chest, "minecraft:chest", 1);
            g->container_open = true;
            g->container_close = g->tick + 40 + recd_synth_rng_below(r, 120);
        }
        return;
    }
    if (g->tick >= g->container_close) {
        synth_mc_ev_container_open(g, g->chest, "minecraft:chest", 0);
        g->container_open = false;
        return;
    }
    if (recd_synth_rng_chance(r, 0.05)) { /* shift-click a storage stack into the chest */
        int from = random_storage_slot(g);
        if (from >= 0) {
            synth_mc_ev_container_update(g, (uint16_t)recd_synth_rng_below(r, 27),
                                         g->st.inventory[from]);
            g->st.inventory[from] = (recd_recap_item){0};
        }
    }
}

static void drop_item(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    int slot = random_storage_slot(g); /* from storage: tools stay in the hotbar */
    if (slot < 0)
        return;
    recd_recap_item dropped = g->st.inventory[slot];
    bool whole = dropped.count <= 3 || recd_synth_rng_chance(r, 0.3); /* Q vs Ctrl+Q */
    if (!whole)
        dropped.count = 1;
    double pos[3], vel[3], fx, fz;
    eye_pos(g, pos);
    pos[1] -= 0.3;
    forward(g, &fx, &fz);
    vel[0] = fx * 0.3;
    vel[1] = 0.1;
    vel[2] = fz * 0.3;
    synth_mc_ev_item_drop(g, dropped, pos, vel);
    if (whole)
        g->st.inventory[slot] = (recd_recap_item){0};
    else
        take_one(g, slot);
}

static double per_tick(double seconds) { return 1.0 / (seconds * SYNTH_MC_TICKS_PER_S); }

static void background(recd_synth_recap_gen *g)
{
    recd_synth_rng *r = &g->rng;
    bool mixed = g->p.scenario == RECD_SYNTH_SCENARIO_MIXED;
    bool idle = g->p.scenario == RECD_SYNTH_SCENARIO_IDLE;

    if (g->st.health < 20.0f && g->mode != MC_FIGHT && g->tick >= g->next_regen) {
        g->st.health = g->st.health > 19.0f ? 20.0f : g->st.health + 1.0f; /* half a heart */
        g->next_regen = g->tick + 80;
    }
    if (g->mode == MC_AFK)
        return;
    if (recd_synth_rng_chance(r, per_tick(mixed ? 90 : (idle ? 600 : 240))))
        synth_mc_ev_text(g, RECD_RECAP_CHAT_MESSAGE,
                         chat_lines[recd_synth_rng_below(r, CHAT_LINES)]);
    if (idle || g->riding)
        return;
    if (g->use_kind == 0 && (g->mode == MC_WALK || g->mode == MC_STAND || g->mode == MC_SPRINT) &&
        recd_synth_rng_chance(r, per_tick(25))) {
        int s = (int)recd_synth_rng_below(r, 9);
        if (!slot_empty(g, s))
            g->selected = s; /* scroll the hotbar */
    }
    if (!mixed)
        return;
    int food = food_slot(g);
    if (g->use_kind == 0 && food >= 0 && g->mode != MC_FIGHT &&
        (g->st.health <= 14.0f || recd_synth_rng_chance(r, per_tick(180))))
        start_using(g, food, USE_EAT, 32);
    if (recd_synth_rng_chance(r, per_tick(150)))
        drop_item(g);
    if (recd_synth_rng_chance(r, per_tick(400))) { /* helmet off or back on */
        recd_recap_item *head = &g->st.inventory[SLOT_HEAD];
        *head = head->key.len ? (recd_recap_item){0} : item("minecraft:iron_helmet", 1, 0);
    }
    container(g);
}

void synth_mc_activities(recd_synth_recap_gen *g)
{
    switch (g->mode) {
    case MC_MINE: mine(g); break;
    case MC_BUILD: build(g); break;
    case MC_FIGHT: fight(g); break;
    default: break;
    }
    using_item(g);
    background(g);
}
