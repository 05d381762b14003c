/* SPDX-License-Identifier: MIT */
/* The Recap action table: one row per tag with its typed payload fields. Encoder, decoder,
 * validation and the JSON mapping all walk this table (docs/formats/recap.md section 6). */
#include <errno.h>
#include <string.h>

#include "formats/recap/recap_internal.h"

#define F(n, t) {n, RECD_RECAP_T_##t, NULL, 0}
#define L(n, e) {n, RECD_RECAP_T_LIST, e, sizeof(e) / sizeof(e[0])}
#define N(a) (sizeof(a) / sizeof(a[0]))

static const recd_recap_field slot_item[] = {F("slot", U8), F("item", ITEM)};

static const recd_recap_field f_full_state[] = {
    F("x", F64), F("y", F64), F("z", F64),
    F("yaw", F64), F("pitch", F64), F("head_yaw", F64),
    F("vx", F64), F("vy", F64), F("vz", F64),
    F("flags", U16), F("pose", U8), F("game_mode", U8), F("hand_state", U8),
    F("health", F32), F("absorption", F32),
    F("main_hand", ITEM), F("off_hand", ITEM), F("feet", ITEM), F("legs", ITEM), F("chest", ITEM),
    F("head", ITEM),
    L("inventory", slot_item)};
static const recd_recap_field f_movement[] = {F("movement", MOVEMENT)};
static const recd_recap_field f_flags[] = {F("flags", U16)};
static const recd_recap_field f_equipment[] = {F("slot", U8), F("item", ITEM)};
static const recd_recap_field f_hand[] = {F("hand", U8)};
static const recd_recap_field f_block[] = {F("x", I32), F("y", I32), F("z", I32), F("block", TEXT)};
static const recd_recap_field f_damage[] = {F("cause", U8), F("amount", F32), F("flags", U8),
                                            F("attacker_id", I32)};
static const recd_recap_field f_health[] = {F("health", F32), F("absorption", F32)};
static const recd_recap_field f_skip[] = {F("count", U8)};
static const recd_recap_field f_dig_start[] = {F("x", I32), F("y", I32), F("z", I32),
                                               F("stage", U8)};
static const recd_recap_field f_xyz[] = {F("x", I32), F("y", I32), F("z", I32)};
static const recd_recap_field f_sign[] = {F("x", I32), F("y", I32), F("z", I32), F("side", U8),
                                          F("line1", TEXT), F("line2", TEXT), F("line3", TEXT),
                                          F("line4", TEXT)};
static const recd_recap_field f_game_mode[] = {F("game_mode", U8)};
static const recd_recap_field f_container_open[] = {F("x", I32), F("y", I32), F("z", I32),
                                                    F("container_type", STR), F("open", U8)};
static const recd_recap_field f_container_update[] = {F("slot", U16), F("item", ITEM)};
static const recd_recap_field f_hand_state[] = {F("hand_state", U8)};
static const recd_recap_field f_projectile[] = {F("entity_type", STR), F("x", F64), F("y", F64),
                                                F("z", F64), F("vx", F64), F("vy", F64),
                                                F("vz", F64), F("projectile_id", I32)};
static const recd_recap_field f_message[] = {F("message", TEXT)};
static const recd_recap_field f_pose[] = {F("pose", U8)};
static const recd_recap_field f_riptide[] = {F("level", U8)};
static const recd_recap_field f_target[] = {F("target_id", I32)};
static const recd_recap_field f_entity_interaction[] = {F("entity_id", I32), F("entity_type", STR),
                                                        F("hand", U8), F("item", ITEM)};
static const recd_recap_field f_vehicle[] = {F("entity_id", I32), F("entity_type", STR)};
static const recd_recap_field mob_row[] = {
    F("entity_id", I32), F("entity_type", STR), F("x", F64), F("y", F64), F("z", F64),
    F("yaw", F32), F("pitch", F32), F("head_yaw", F32), F("health", F32), F("flags", U8),
    F("variant", I32), F("main_hand", ITEM), F("off_hand", ITEM), F("feet", ITEM), F("legs", ITEM),
    F("chest", ITEM), F("head", ITEM)};
static const recd_recap_field f_mobs[] = {L("mobs", mob_row)};
static const recd_recap_field effect_row[] = {F("effect", STR), F("amplifier", U8),
                                              F("duration", I32), F("flags", U8)};
static const recd_recap_field f_potions[] = {F("color", I32), L("effects", effect_row)};
static const recd_recap_field f_arrows[] = {F("count", U8)};
static const recd_recap_field f_explosion[] = {F("x", F64), F("y", F64), F("z", F64),
                                               F("power", F32), L("blocks", f_xyz)};
static const recd_recap_field particle_row[] = {F("particle", STR), F("x", F64), F("y", F64),
                                                F("z", F64), F("dx", F32), F("dy", F32),
                                                F("dz", F32), F("speed", F32), F("count", I32),
                                                F("data", BYTES)};
static const recd_recap_field f_particles[] = {L("particles", particle_row)};
static const recd_recap_field f_sign_extras[] = {F("x", I32), F("y", I32), F("z", I32),
                                                 F("side", U8), F("color", U8), F("glowing", U8)};
static const recd_recap_field f_item_drop[] = {F("item", ITEM), F("x", F64), F("y", F64),
                                               F("z", F64), F("vx", F64), F("vy", F64),
                                               F("vz", F64)};
static const recd_recap_field packet_row[] = {F("type", STR), F("data", BYTES)};
static const recd_recap_field f_packets[] = {L("packets", packet_row)};
static const recd_recap_field f_inventory[] = {L("slots", slot_item)};
static const recd_recap_field f_block_changes[] = {L("changes", f_block)};
static const recd_recap_field f_extension[] = {F("id", U8), F("data", BYTES)};

#define ROW(tag, name, kind, ver, fields, summary) \
    {tag, name, RECD_RECAP_KIND_##kind, ver, N(fields), fields, summary}
#define ROW0(tag, name, kind, summary) {tag, name, RECD_RECAP_KIND_##kind, 1, 0, NULL, summary}

static const recd_recap_tag_info tag_table[] = {
    ROW(0x01, "FULL_STATE", STATE, 1, f_full_state, "Full snapshot of all player state"),
    ROW(0x02, "MOVEMENT", STATE, 1, f_movement, "Position, rotation and velocity deltas"),
    ROW(0x03, "STATE_FLAGS", STATE, 1, f_flags, "Packed entity flags"),
    ROW(0x04, "EQUIPMENT", STATE, 1, f_equipment, "One equipment slot changed"),
    ROW(0x05, "SWING_ARM", EVENT, 1, f_hand, "Arm swing"),
    ROW(0x06, "USE_ITEM", EVENT, 1, f_hand, "Item use starts"),
    ROW(0x07, "BLOCK_PLACE", EVENT, 1, f_block, "Block placed"),
    ROW(0x08, "BLOCK_BREAK", EVENT, 1, f_block, "Block broken (previous state)"),
    ROW(0x09, "DAMAGE", EVENT, 1, f_damage, "Took damage"),
    ROW(0x0A, "HEALTH", STATE, 1, f_health, "Health or absorption changed"),
    ROW0(0x0B, "NEXT_TICK", FRAMING, "End of the current tick"),
    ROW(0x0C, "SKIP_TICKS", FRAMING, 1, f_skip, "count idle ticks (1..255)"),
    ROW(0x0D, "BLOCK_DAMAGE_START", EVENT, 1, f_dig_start, "Mining starts or progresses"),
    ROW(0x0E, "BLOCK_DAMAGE_ABORT", EVENT, 1, f_xyz, "Mining aborted"),
    ROW(0x0F, "SIGN_CHANGE", EVENT, 1, f_sign, "Sign text changed"),
    ROW(0x10, "GAME_MODE", STATE, 1, f_game_mode, "Game mode changed"),
    ROW(0x11, "CONTAINER_OPEN", EVENT, 1, f_container_open, "Container opened or closed"),
    ROW(0x12, "CONTAINER_UPDATE", EVENT, 1, f_container_update, "Container slot changed"),
    ROW(0x13, "HAND_STATE", STATE, 1, f_hand_state, "Active hand state changed"),
    ROW(0x14, "PROJECTILE", EVENT, 1, f_projectile, "Projectile launched"),
    ROW(0x15, "DEATH", EVENT, 1, f_message, "Death"),
    ROW(0x16, "POSE", STATE, 1, f_pose, "Pose changed"),
    ROW(0x17, "RIPTIDE", EVENT, 1, f_riptide, "Riptide spin"),
    ROW(0x18, "BED_ENTER", EVENT, 1, f_xyz, "Entered a bed"),
    ROW(0x19, "BED_LEAVE", EVENT, 1, f_xyz, "Left a bed"),
    ROW(0x1A, "REDSTONE_INTERACTION", EVENT, 1, f_block, "Redstone component used"),
    ROW(0x1B, "CRITICAL_HIT", EVENT, 1, f_target, "Critical hit particles"),
    ROW(0x1C, "ENCHANT_CRIT", EVENT, 1, f_target, "Enchanted critical hit particles"),
    ROW(0x1D, "CHAT_MESSAGE", EVENT, 1, f_message, "Chat message"),
    ROW(0x1E, "ENTITY_INTERACTION", EVENT, 1, f_entity_interaction,
        "Item frame / armour stand interaction"),
    ROW(0x1F, "VEHICLE_ENTER", EVENT, 1, f_vehicle, "Entered a vehicle"),
    ROW(0x20, "VEHICLE_LEAVE", EVENT, 1, f_vehicle, "Left a vehicle"),
    ROW(0x21, "MOB_STATES", EVENT, 1, f_mobs, "Tracked mobs that changed"),
    ROW(0x22, "POTION_EFFECTS", EVENT, 1, f_potions, "Potion effect particles"),
    ROW0(0x23, "TOTEM", EVENT, "Totem of undying used"),
    ROW(0x24, "ARROWS_IN_BODY", EVENT, 1, f_arrows, "Arrows stuck in the player"),
    ROW(0x25, "EXPLOSION", EVENT, 1, f_explosion, "Explosion and the blocks it destroyed"),
    ROW(0x26, "PARTICLES", EVENT, 1, f_particles, "Server-emitted particles"),
    ROW(0x27, "SIGN_EXTRAS", EVENT, 1, f_sign_extras, "Sign dye and glowing text"),
    ROW(0x28, "ITEM_DROP", EVENT, 1, f_item_drop, "Player dropped an item"),
    ROW(0x29, "CAPTURED_PACKETS", EVENT, 1, f_packets, "Allowlisted server-to-client packets"),
    ROW(0x2A, "FULL_INVENTORY", STATE, 1, f_inventory, "Changed inventory slots"),
    ROW(0x2B, "BLOCK_CHANGES", EVENT, 4, f_block_changes, "World-driven block changes"),
};

static const recd_recap_tag_info extension_row =
    ROW(0xFF, "EXTENSION", EVENT, 1, f_extension, "Action defined outside the spec, skippable");

const recd_recap_tag_info *recd_recap_tag_info_get(uint8_t tag)
{
    if (tag >= RECD_RECAP_TAG_FIRST && tag <= RECD_RECAP_TAG_LAST)
        return &tag_table[tag - RECD_RECAP_TAG_FIRST];
    if (tag == RECD_RECAP_EXTENSION)
        return &extension_row;
    return NULL;
}

const recd_recap_tag_info *recd_recap_tag_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < N(tag_table); i++)
        if (strcmp(tag_table[i].name, name) == 0)
            return &tag_table[i];
    if (strcmp(extension_row.name, name) == 0)
        return &extension_row;
    return NULL;
}

const char *recd_recap_ftype_name(recd_recap_ftype t)
{
    switch (t) {
    case RECD_RECAP_T_U8: return "u8";
    case RECD_RECAP_T_U16: return "u16";
    case RECD_RECAP_T_I32: return "i32";
    case RECD_RECAP_T_I64: return "i64";
    case RECD_RECAP_T_F32: return "f32";
    case RECD_RECAP_T_F64: return "f64";
    case RECD_RECAP_T_STR: return "str";
    case RECD_RECAP_T_TEXT: return "text";
    case RECD_RECAP_T_BYTES: return "bytes";
    case RECD_RECAP_T_ITEM: return "item";
    case RECD_RECAP_T_LIST: return "list";
    case RECD_RECAP_T_MOVEMENT: return "movement";
    }
    return "?";
}

int recd_recap_event_check(const recd_recap_event *ev)
{
    if (!ev)
        return -EINVAL;
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(ev->tag);
    if (!ti || ti->kind != RECD_RECAP_KIND_EVENT || ev->field_count != ti->field_count)
        return -EINVAL;
    if (ti->field_count && !ev->fields)
        return -EINVAL;
    return recap_fields_check(ti->fields, ti->field_count, ev->fields);
}

static bool blob_equal(recd_recap_blob a, recd_recap_blob b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

bool recd_recap_item_equal(const recd_recap_item *a, const recd_recap_item *b)
{
    if (a->key.len == 0 || b->key.len == 0)
        return a->key.len == b->key.len;
    return blob_equal(a->key, b->key) && a->count == b->count && a->flags == b->flags &&
           blob_equal(a->data, b->data);
}

static bool values_equal(const recd_recap_field *fields, size_t n, const recd_recap_value *a,
                         const recd_recap_value *b)
{
    for (size_t i = 0; i < n; i++) {
        const recd_recap_value *x = &a[i], *y = &b[i];
        switch (fields[i].type) {
        case RECD_RECAP_T_U8:
        case RECD_RECAP_T_U16:
            if (x->u != y->u)
                return false;
            break;
        case RECD_RECAP_T_I32:
        case RECD_RECAP_T_I64:
            if (x->i != y->i)
                return false;
            break;
        case RECD_RECAP_T_F32:
            if (memcmp(&x->f32, &y->f32, sizeof(float)) != 0)
                return false;
            break;
        case RECD_RECAP_T_F64:
            if (memcmp(&x->f64, &y->f64, sizeof(double)) != 0)
                return false;
            break;
        case RECD_RECAP_T_STR:
        case RECD_RECAP_T_TEXT:
        case RECD_RECAP_T_BYTES:
            if (!blob_equal(x->blob, y->blob))
                return false;
            break;
        case RECD_RECAP_T_ITEM:
            if (!recd_recap_item_equal(&x->item, &y->item))
                return false;
            break;
        case RECD_RECAP_T_LIST:
            if (x->list.count != y->list.count)
                return false;
            for (size_t r = 0; r < x->list.count; r++) {
                size_t k = r * fields[i].elem_count;
                if (!values_equal(fields[i].elem, fields[i].elem_count, x->list.values + k,
                                  y->list.values + k))
                    return false;
            }
            break;
        case RECD_RECAP_T_MOVEMENT:
            return false;
        }
    }
    return true;
}

bool recd_recap_event_equal(const recd_recap_event *a, const recd_recap_event *b)
{
    if (a->tag != b->tag || a->field_count != b->field_count)
        return false;
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(a->tag);
    if (!ti || ti->field_count != a->field_count)
        return false;
    return values_equal(ti->fields, ti->field_count, a->fields, b->fields);
}
