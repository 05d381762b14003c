/* SPDX-License-Identifier: MIT */
/* Recap streaming encoder: full per-tick states in, canonical delta actions out, one complete gzip
 * member per flush (docs/formats/recap.md section 7). Keeps only the reader's view of the state
 * and the bytes of the open member, so an idle session stays small. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"
#include "recd/formats/recap/recap_slot_mask.h"

#define KEEP_BUFFER_BYTES 4096 /* buffers above this are released after a flush */

struct recd_recap_encoder {
    recd_sink sink;
    recd_gzip_deflater *deflater; /* borrowed; NULL = one-shot compressor per member */
    uint32_t keyframe_interval, member_limit;
    uint8_t gzip_level, version, compressor;
    int err; /* sticky: a failed sink write or allocation leaves the output unusable */
    bool started, finished;
    bool defer_compression;
    uint32_t nkeyframes;
    uint64_t first_tick;    /* caller's number of file tick 0 */
    uint64_t next;          /* file ticks accounted for */
    uint64_t idle;          /* trailing idle ticks of `next` not yet written */
    uint64_t last_keyframe; /* file tick */
    int64_t start_ms;
    uint64_t end_ms_off, frames_off, bytes_written, members;
    /* File ticks of the open member's FULL_STATEs (NULL when none: an idle session holds no
     * array; its capacity is keyframes_cap()), and the file ticks in the members before it.
     * 32 bits each, in the struct's holes, for the idle session's budget (ticks fit: tick()). */
    uint32_t *keyframes;
    uint32_t member_ticks_before;
    recd_buf pending; /* uncompressed actions of the open member */
    recd_buf out;     /* compressed member */
    recd_buf scratch; /* item encodings of the tick being fed */
    /* What a reader holds after the last written action. */
    double ch[RECAP_CHANNELS];
    uint16_t flags;
    uint8_t pose, game_mode, hand_state;
    float health, absorption;
    recap_slots slots; /* equipment 0..5, then inventory 0..40 */
};

void recd_recap_encoder_options_from_header(const recd_recap_header *h,
                                            recd_recap_encoder_options *opt)
{
    memset(opt, 0, sizeof(*opt));
    if (h && h->has_encoder_params) {
        opt->keyframe_interval = h->keyframe_interval;
        opt->gzip_level = h->gzip_level;
        opt->member_limit = h->member_limit;
        opt->compressor = h->compressor; /* the header carries it only with the others */
    }
}

static int sink_write(recd_recap_encoder *e, const void *data, size_t len)
{
    int rc = e->sink.write(e->sink.ctx, data, len);
    if (rc < 0)
        return e->err = rc;
    e->bytes_written += len;
    return 0;
}

/* The header as written: encoder parameters filled in from the options (defaults applied). */
static recd_recap_header effective_header(const recd_recap_header *h, const recd_recap_encoder_options *o)
{
    recd_recap_header hh = *h;
    hh.version = h->version ? h->version : RECD_RECAP_VERSION;
    hh.has_encoder_params = true;
    hh.keyframe_interval = o->keyframe_interval ? o->keyframe_interval : RECD_RECAP_DEFAULT_KEYFRAME_INTERVAL;
    hh.gzip_level = o->gzip_level ? o->gzip_level : RECD_RECAP_DEFAULT_GZIP_LEVEL;
    hh.member_limit = o->member_limit ? o->member_limit : RECD_RECAP_DEFAULT_MEMBER_LIMIT;
    hh.compressor = o->compressor;
    return hh;
}

int recd_recap_encoder_header(const recd_recap_header *h, const recd_recap_encoder_options *opt,
                              recd_buf *out)
{
    if (!h)
        return -EINVAL;
    recd_recap_encoder_options o = {0};
    if (opt)
        o = *opt;
    recd_recap_header hh = effective_header(h, &o);
    return recd_recap_header_encode(&hh, out);
}

int recd_recap_encoder_new(recd_recap_encoder **out, const recd_recap_header *h,
                           const recd_recap_encoder_options *opt, recd_sink sink)
{
    *out = NULL;
    if (!h || !sink.write)
        return -EINVAL;
    recd_recap_encoder_options o = {0};
    if (opt)
        o = *opt;
    if (o.gzip_level > 9 || o.compressor > RECD_GZIP_LIBDEFLATE)
        return -EINVAL;
    recd_recap_encoder *e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    recd_recap_header hh = effective_header(h, &o);
    e->sink = sink;
    e->deflater = o.deflater;
    e->defer_compression = o.defer_compression;
    e->keyframe_interval = hh.keyframe_interval;
    e->gzip_level = hh.gzip_level;
    e->compressor = hh.compressor;
    e->member_limit = hh.member_limit;
    e->version = hh.version;
    e->start_ms = hh.start_ms;
    recd_recap_header_patch_offsets(&hh, &e->end_ms_off, &e->frames_off);
    int rc = recd_recap_header_encode(&hh, &e->out);
    if (rc == 0)
        rc = sink_write(e, e->out.data, e->out.len);
    recd_buf_free(&e->out);
    if (rc) {
        recd_recap_encoder_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

static int append_u8s(recd_buf *b, uint8_t x, uint8_t y)
{
    uint8_t v[2] = {x, y};
    return recd_buf_append(b, v, 2);
}

static int write_skips(recd_buf *b, uint64_t n)
{
    while (n) {
        uint8_t k = n > 255 ? 255 : (uint8_t)n;
        int rc = append_u8s(b, RECD_RECAP_SKIP_TICKS, k);
        if (rc)
            return rc;
        n -= k;
    }
    return 0;
}

/* The encoder's own state as a recd_recap_state (items view the slots). */
static void current_state(const recd_recap_encoder *e, recd_recap_state *s)
{
    memset(s, 0, sizeof(*s));
    memcpy(s->pos, e->ch, 3 * sizeof(double));
    memcpy(s->rot, e->ch + 3, 3 * sizeof(double));
    memcpy(s->vel, e->ch + 6, 3 * sizeof(double));
    s->flags = e->flags;
    s->pose = e->pose;
    s->game_mode = e->game_mode;
    s->hand_state = e->hand_state;
    s->health = e->health;
    s->absorption = e->absorption;
    for (int i = 0; i < RECAP_SLOTS; i++)
        recap_slots_item(&e->slots, i, i < RECD_RECAP_EQUIPMENT_SLOTS
                                           ? &s->equipment[i]
                                           : &s->inventory[i - RECD_RECAP_EQUIPMENT_SLOTS]);
}

int recd_recap_encoder_state(const recd_recap_encoder *e, recd_recap_state *out)
{
    if (!e->started)
        return -EINVAL;
    current_state(e, out);
    return 0;
}

static void put_f32(uint8_t *p, float f) { st_be32(p, f32_to_bits(f)); }
static bool same_f32(float a, float b) { return f32_to_bits(a) == f32_to_bits(b); }

/* The tick's items that differ from their slot (nearly always none): their slots, ascending, and
 * their canonical encodings in the scratch buffer, found once per tick for the deltas, a keyframe
 * and the commit. Every other item is its slot's encoding. */
typedef struct tick_items {
    unsigned n, equipment_changed, inventory_changed;
    uint8_t slot[RECAP_SLOTS];
    const uint8_t *ip[RECAP_SLOTS];
    size_t il[RECAP_SLOTS];
} tick_items;

/* Slot i's encoding this tick: the changed item's (*k walks the changed ones in slot order), else
 * the slot's own, a 1-byte empty item when it holds none. */
static const uint8_t *item_enc(const recap_slots *slots, const tick_items *it, unsigned *k, int i,
                               size_t *len)
{
    static const uint8_t empty_item = 0;
    if (*k < it->n && it->slot[*k] == i) {
        *len = it->il[*k];
        return it->ip[(*k)++];
    }
    uint32_t held = slots->len[i];
    *len = held ? held : 1;
    return held ? recap_slots_enc(slots, i) : &empty_item;
}

static int write_full_state(recd_buf *b, const recd_recap_state *s, const recap_slots *slots,
                            const tick_items *it)
{
    uint8_t fx[1 + 72 + 2 + 3 + 8];
    uint8_t *p = fx;
    *p++ = RECD_RECAP_FULL_STATE;
    const double *chans[3] = {s->pos, s->rot, s->vel};
    for (int g = 0; g < 3; g++)
        for (int i = 0; i < 3; i++, p += 8)
            st_be64(p, f64_to_bits(chans[g][i]));
    st_be16(p, s->flags);
    p += 2;
    *p++ = s->pose;
    *p++ = s->game_mode;
    *p++ = s->hand_state;
    put_f32(p, s->health);
    put_f32(p + 4, s->absorption);
    int rc = recd_buf_append(b, fx, sizeof(fx));
    const uint8_t *ip[RECAP_SLOTS];
    size_t il[RECAP_SLOTS];
    unsigned k = 0, used = 0;
    for (int i = 0; i < RECAP_SLOTS; i++) {
        ip[i] = item_enc(slots, it, &k, i, &il[i]);
        used += i >= RECD_RECAP_EQUIPMENT_SLOTS && il[i] > 1;
    }
    for (int i = 0; rc == 0 && i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        rc = recd_buf_append(b, ip[i], il[i]);
    uint8_t cnt[2];
    st_be16(cnt, (uint16_t)used);
    if (rc == 0)
        rc = recd_buf_append(b, cnt, 2);
    for (int i = RECD_RECAP_EQUIPMENT_SLOTS; rc == 0 && i < RECAP_SLOTS; i++) {
        if (il[i] <= 1)
            continue;
        uint8_t slot = (uint8_t)(i - RECD_RECAP_EQUIPMENT_SLOTS);
        rc = recd_buf_append(b, &slot, 1);
        if (rc == 0)
            rc = recd_buf_append(b, ip[i], il[i]);
    }
    return rc;
}

/* State deltas in canonical order; ch is updated to the reader's channel values. */
static int write_deltas(recd_recap_encoder *e, recd_buf *b, const recd_recap_state *s,
                        double ch[RECAP_CHANNELS], const tick_items *it)
{
    double v[RECAP_CHANNELS];
    memcpy(v, s->pos, 3 * sizeof(double));
    memcpy(v + 3, s->rot, 3 * sizeof(double));
    memcpy(v + 6, s->vel, 3 * sizeof(double));
    int rc = recap_movement_write(b, ch, v);
    if (rc < 0)
        return rc;
    rc = 0;
    if (s->flags != e->flags) {
        uint8_t a[3] = {RECD_RECAP_STATE_FLAGS, 0, 0};
        st_be16(a + 1, s->flags);
        rc = recd_buf_append(b, a, 3);
    }
    if (rc == 0 && (!same_f32(s->health, e->health) || !same_f32(s->absorption, e->absorption))) {
        uint8_t a[9] = {RECD_RECAP_HEALTH};
        put_f32(a + 1, s->health);
        put_f32(a + 5, s->absorption);
        rc = recd_buf_append(b, a, 9);
    }
    if (rc == 0 && s->game_mode != e->game_mode)
        rc = append_u8s(b, RECD_RECAP_GAME_MODE, s->game_mode);
    if (rc == 0 && s->pose != e->pose)
        rc = append_u8s(b, RECD_RECAP_POSE, s->pose);
    if (rc == 0 && s->hand_state != e->hand_state)
        rc = append_u8s(b, RECD_RECAP_HAND_STATE, s->hand_state);
    unsigned k = 0; /* the changed slots are ascending: equipment first */
    for (; rc == 0 && k < it->equipment_changed; k++) {
        rc = append_u8s(b, RECD_RECAP_EQUIPMENT, it->slot[k]);
        if (rc == 0)
            rc = recd_buf_append(b, it->ip[k], it->il[k]);
    }
    unsigned changed = it->inventory_changed;
    if (rc == 0 && changed) {
        uint8_t a[3] = {RECD_RECAP_FULL_INVENTORY, 0, 0};
        st_be16(a + 1, (uint16_t)changed);
        rc = recd_buf_append(b, a, 3);
        for (; rc == 0 && k < it->n; k++) {
            uint8_t slot = (uint8_t)(it->slot[k] - RECD_RECAP_EQUIPMENT_SLOTS);
            rc = recd_buf_append(b, &slot, 1);
            if (rc == 0)
                rc = recd_buf_append(b, it->ip[k], it->il[k]);
        }
    }
    return rc;
}

static int write_events(const recd_recap_encoder *e, recd_buf *b, const recd_recap_event *ev,
                        size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const recd_recap_tag_info *ti = recd_recap_tag_info_get(ev[k].tag);
        if (!ti || ti->kind != RECD_RECAP_KIND_EVENT || ti->min_version > e->version ||
            ev[k].field_count != ti->field_count || (ti->field_count && !ev[k].fields))
            return -EINVAL;
        int rc = recd_buf_append(b, &ev[k].tag, 1);
        if (rc == 0)
            rc = recap_fields_write(b, ti->fields, ti->field_count, ev[k].fields);
        if (rc)
            return rc;
    }
    return 0;
}

static void shrink(recd_buf *b)
{
    if (b->cap > KEEP_BUFFER_BYTES && b->len == 0)
        recd_buf_free(b);
}

/* The open member was handed over: the next one starts after every tick accounted for. */
static void member_ended(recd_recap_encoder *e)
{
    e->member_ticks_before = (uint32_t)e->next;
    free(e->keyframes);
    e->keyframes = NULL;
    e->nkeyframes = 0;
}

/* Room in the keyframe array for n keyframes: 4, then doubled. */
static size_t keyframes_cap(uint32_t n)
{
    size_t cap = 4;
    while (cap < n)
        cap *= 2;
    return n ? cap : 0;
}

static int keyframe_add(recd_recap_encoder *e, uint32_t t)
{
    uint32_t n = e->nkeyframes;
    if (keyframes_cap(n + 1) != keyframes_cap(n)) {
        uint32_t *k = realloc(e->keyframes, keyframes_cap(n + 1) * sizeof *k);
        if (!k)
            return -ENOMEM;
        e->keyframes = k;
    }
    e->keyframes[e->nkeyframes++] = t;
    return 0;
}

static int flush_member(recd_recap_encoder *e)
{
    int rc = write_skips(&e->pending, e->idle);
    if (rc)
        return e->err = rc;
    e->idle = 0;
    if (e->pending.len == 0)
        return 0;
    e->out.len = 0;
    rc = recd_gzip_member_write_with(e->deflater, e->compressor, e->gzip_level, e->pending.data,
                                     e->pending.len, &e->out);
    if (rc)
        return e->err = rc;
    rc = sink_write(e, e->out.data, e->out.len);
    if (rc)
        return rc;
    e->members++;
    member_ended(e);
    e->pending.len = 0;
    e->out.len = 0;
    shrink(&e->pending);
    shrink(&e->out);
    return 0;
}

/* The changed items into their slots (their encodings are in the scratch buffer). */
static int commit_slots(recd_recap_encoder *e, const tick_items *it)
{
    for (unsigned k = 0; k < it->n; k++) {
        int rc = recap_slots_set(&e->slots, it->slot[k], it->ip[k], it->il[k]);
        if (rc)
            return rc;
    }
    return 0;
}

/* memcmp(a, b, n) == 0, with the usual key (8 to 32 bytes, "minecraft:...") compared here in a
 * few loads: as a call, each of a tick's dozen keys cost three times as much. */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n - 8 <= 8)
        return ((ld_host64(a) ^ ld_host64(b)) | (ld_host64(a + n - 8) ^ ld_host64(b + n - 8))) == 0;
    if (n - 17 <= 15)
        return ((ld_host64(a) ^ ld_host64(b)) | (ld_host64(a + 8) ^ ld_host64(b + 8)) |
                (ld_host64(a + n - 16) ^ ld_host64(b + n - 16)) |
                (ld_host64(a + n - 8) ^ ld_host64(b + n - 8))) == 0;
    return memcmp(a, b, n) == 0;
}

/* True when the slot already holds it. The item is compared with the slot's canonical encoding
 * (key length, key, count, flags, BE16 data length, data) in place, so unchanged items, nearly
 * all of them, are neither decoded nor encoded. Inlined into the slot scan: as a call its
 * register saves cost about as much as the comparison. */
static inline bool slot_holds(const recap_slots *t, int i, const recd_recap_item *it)
{
    size_t klen = it->key.len, dlen = it->data.len;
    if (klen == 0 || t->len[i] == 0)
        return klen == 0 && t->len[i] == 0;
    const uint8_t *p = recap_slots_enc(t, i);
    return t->len[i] == 5 + klen + dlen && p[0] == klen && p[1 + klen] == it->count &&
           p[2 + klen] == it->flags && ld_be16(p + 3 + klen) == dlen &&
           same_bytes(p + 1, it->key.data, klen) &&
           (dlen == 0 || memcmp(p + 5 + klen, it->data.data, dlen) == 0);
}

/* Slot i's item, which differs from the slot's fields: encoded at the end of the scratch buffer
 * and listed (its offset in off, pointed at once the buffer stops moving). */
static int item_list(recd_recap_encoder *e, int i, const recd_recap_item *item, tick_items *it,
                     size_t *off)
{
    size_t at = e->scratch.len;
    int rc = recap_item_write(&e->scratch, item);
    if (rc)
        return rc;
    size_t len = e->scratch.len - at;
    /* Fields that differ can still encode alike (a key cut to 255 bytes). */
    if (recap_slots_equals(&e->slots, i, e->scratch.data + at, len)) {
        e->scratch.len = at;
        return 0;
    }
    off[it->n] = at;
    it->il[it->n] = len;
    it->slot[it->n++] = (uint8_t)i;
    return 0;
}

/* Slot i against item x: listed when it differs. Most slots hold nothing on either side. */
static inline int slot_check(recd_recap_encoder *e, int i, const recd_recap_item *x, tick_items *it,
                             size_t *off)
{
    if ((x->key.len | e->slots.len[i]) && !slot_holds(&e->slots, i, x))
        return item_list(e, i, x, it, off);
    return 0;
}

/* Lists the items that differ from their slot, in slot order, encoded into scratch. */
static int tick_items_build(recd_recap_encoder *e, const recd_recap_state *s, tick_items *it)
{
    size_t off[RECAP_SLOTS];
    it->n = 0;
    e->scratch.len = 0;
    int rc;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        if ((rc = slot_check(e, i, &s->equipment[i], it, off)) != 0)
            return rc;
    it->equipment_changed = it->n;
    /* The inventory two slots at a time: one test passes over a pair empty on both sides (most
     * of the 27 storage slots), which costs about half as much as testing each. */
    const recd_recap_item *inv = s->inventory;
    const uint32_t *held = e->slots.len + RECD_RECAP_EQUIPMENT_SLOTS;
    int i = 0;
    for (; i + 2 <= RECD_RECAP_INVENTORY_SLOTS; i += 2) {
        if (!(inv[i].key.len | inv[i + 1].key.len | held[i] | held[i + 1]))
            continue;
        if ((rc = slot_check(e, RECD_RECAP_EQUIPMENT_SLOTS + i, &inv[i], it, off)) != 0 ||
            (rc = slot_check(e, RECD_RECAP_EQUIPMENT_SLOTS + i + 1, &inv[i + 1], it, off)) != 0)
            return rc;
    }
    if (i < RECD_RECAP_INVENTORY_SLOTS &&
        (rc = slot_check(e, RECD_RECAP_EQUIPMENT_SLOTS + i, &inv[i], it, off)) != 0)
        return rc;
    it->inventory_changed = it->n - it->equipment_changed;
    for (unsigned k = 0; k < it->n; k++)
        it->ip[k] = e->scratch.data + off[k];
    return 0;
}

/* Slot i of s, known empty when outside slots. */
static inline const recd_recap_item *slot_item(const recd_recap_state *s, uint64_t slots, int i)
{
    static const recd_recap_item empty;
    if (!(slots >> i & 1))
        return &empty;
    return i < RECD_RECAP_EQUIPMENT_SLOTS ? &s->equipment[i]
                                          : &s->inventory[i - RECD_RECAP_EQUIPMENT_SLOTS];
}

/* tick_items_build for a state whose items outside slots are empty: only the slots that it or
 * the reader may hold an item in are looked at (a player fills a few of the 47), ascending. */
static int tick_items_build_masked(recd_recap_encoder *e, const recd_recap_state *s,
                                   uint64_t slots, tick_items *it)
{
    size_t off[RECAP_SLOTS];
    it->n = 0;
    e->scratch.len = 0;
    const uint64_t equipment = (UINT64_C(1) << RECD_RECAP_EQUIPMENT_SLOTS) - 1;
    uint64_t look = slots | e->slots.held;
    int rc;
    for (uint64_t left = look & equipment; left; left &= left - 1) {
        int i = __builtin_ctzll(left);
        if ((rc = slot_check(e, i, slot_item(s, slots, i), it, off)) != 0)
            return rc;
    }
    it->equipment_changed = it->n;
    for (uint64_t left = look & ~equipment; left; left &= left - 1) {
        int i = __builtin_ctzll(left);
        if ((rc = slot_check(e, i, slot_item(s, slots, i), it, off)) != 0)
            return rc;
    }
    it->inventory_changed = it->n - it->equipment_changed;
    for (unsigned k = 0; k < it->n; k++)
        it->ip[k] = e->scratch.data + off[k];
    return 0;
}

int recd_recap_encoder_tick(recd_recap_encoder *e, uint64_t tick, const recd_recap_state *state,
                            const recd_recap_event *events, size_t n)
{
    return recd_recap__encoder_tick_slots(e, tick, state, RECD_RECAP_ALL_SLOTS, events, n);
}

int recd_recap__encoder_tick_slots(recd_recap_encoder *e, uint64_t tick,
                                   const recd_recap_state *state, uint64_t slots,
                                   const recd_recap_event *events, size_t n)
{
    if (e->err)
        return e->err;
    if (e->finished || (!e->started && !state) || (n && !events))
        return -EINVAL;
    if (e->started && (tick < e->first_tick || tick - e->first_tick < e->next))
        return -ERANGE;
    uint64_t t = e->started ? tick - e->first_tick : 0;
    if (t >= UINT32_MAX)
        return -ERANGE; /* the header's frame count is a u32 */

    recd_recap_state cur;
    const recd_recap_state *s = state;
    if (!s) {
        current_state(e, &cur);
        s = &cur;
        slots = RECD_RECAP_ALL_SLOTS;
    }
    /* Items first: an invalid item fails before anything is written. */
    tick_items items;
    int rc = (slots & RECD_RECAP_ALL_SLOTS) == RECD_RECAP_ALL_SLOTS
                 ? tick_items_build(e, s, &items)
                 : tick_items_build_masked(e, s, slots & RECD_RECAP_ALL_SLOTS, &items);
    if (rc)
        return rc;

    bool keyframe = !e->started || t - e->last_keyframe >= e->keyframe_interval;
    uint64_t idle = e->idle + (t - e->next);
    size_t mark = e->pending.len;
    double ch[RECAP_CHANNELS];
    memcpy(ch, e->ch, sizeof(ch));
    rc = write_skips(&e->pending, idle);
    size_t actions = e->pending.len;
    if (rc == 0 && keyframe) {
        rc = write_full_state(&e->pending, s, &e->slots, &items);
        memcpy(ch, s->pos, 3 * sizeof(double));
        memcpy(ch + 3, s->rot, 3 * sizeof(double));
        memcpy(ch + 6, s->vel, 3 * sizeof(double));
    } else if (rc == 0) {
        rc = write_deltas(e, &e->pending, s, ch, &items);
    }
    if (rc == 0)
        rc = write_events(e, &e->pending, events, n);
    if (rc) {
        e->pending.len = mark;
        return rc;
    }
    if (e->pending.len == actions) { /* nothing to say: an idle tick */
        e->pending.len = mark;
        e->idle = idle + 1;
        e->next = t + 1;
        return 0;
    }
    uint8_t nt = RECD_RECAP_NEXT_TICK;
    rc = recd_buf_append(&e->pending, &nt, 1);
    if (rc == 0)
        rc = commit_slots(e, &items);
    if (rc) {
        e->pending.len = mark;
        return e->err = rc;
    }
    memcpy(e->ch, ch, sizeof(ch));
    e->flags = s->flags;
    e->pose = s->pose;
    e->game_mode = s->game_mode;
    e->hand_state = s->hand_state;
    e->health = s->health;
    e->absorption = s->absorption;
    if (!e->started) {
        e->started = true;
        e->first_tick = tick;
    }
    if (keyframe) {
        e->last_keyframe = t;
        if (keyframe_add(e, (uint32_t)t) < 0)
            return e->err = -ENOMEM;
    }
    e->idle = 0;
    e->next = t + 1;
    if (!e->defer_compression && e->pending.len >= e->member_limit)
        return flush_member(e);
    return 0;
}

int recd_recap_encoder_flush(recd_recap_encoder *e)
{
    if (e->err)
        return e->err;
    if (e->finished)
        return -EINVAL;
    return flush_member(e);
}

int recd_recap_encoder_flush_at(recd_recap_encoder *e, uint64_t end_tick)
{
    if (e->err)
        return e->err;
    if (e->finished)
        return -EINVAL;
    if (!e->started) /* an empty member before the first tick: nothing to record or flush */
        return end_tick == 0 ? 0 : -ERANGE;
    if (end_tick < e->first_tick || end_tick - e->first_tick < e->next)
        return -ERANGE;
    uint64_t end = end_tick - e->first_tick;
    if (end > UINT32_MAX)
        return -ERANGE;
    e->idle += end - e->next;
    e->next = end;
    return flush_member(e);
}

int recd_recap_encoder_take_member(recd_recap_encoder *e, recd_buf *raw)
{
    return recd_recap_encoder_take_member_keyframes(e, raw, NULL);
}

int recd_recap_encoder_take_member_keyframes(recd_recap_encoder *e, recd_buf *raw,
                                             recd_buf *keyframes)
{
    if (e->err)
        return e->err;
    if (e->finished)
        return -EINVAL;
    int rc = write_skips(&e->pending, e->idle);
    if (rc)
        return e->err = rc;
    e->idle = 0;
    size_t n = e->pending.len;
    if (n == 0)
        return 0;
    if (n > INT_MAX)
        return e->err = -EMSGSIZE;
    size_t raw_len = raw->len, kf_len = keyframes ? keyframes->len : 0;
    rc = recd_buf_append(raw, e->pending.data, n);
    for (uint32_t i = 0; rc == 0 && keyframes && i < e->nkeyframes; i++) {
        recd_recap_keyframe k = {e->keyframes[i], e->member_ticks_before};
        rc = recd_buf_append(keyframes, &k, sizeof k);
    }
    if (rc) { /* pending is kept: the caller may retry */
        raw->len = raw_len;
        if (keyframes)
            keyframes->len = kf_len;
        return rc;
    }
    e->members++;
    member_ended(e);
    e->pending.len = 0;
    shrink(&e->pending);
    return (int)n;
}

size_t recd_recap_encoder_pending(const recd_recap_encoder *e) { return e->pending.len; }

uint8_t recd_recap_encoder_gzip_level(const recd_recap_encoder *e) { return e->gzip_level; }

recd_gzip_compressor recd_recap_encoder_compressor(const recd_recap_encoder *e)
{
    return (recd_gzip_compressor)e->compressor;
}

int recd_recap_encoder_finish(recd_recap_encoder *e, recd_recap_finish_info *info)
{
    int rc = recd_recap_encoder_flush(e);
    if (rc)
        return rc;
    e->finished = true;
    if (info) {
        info->frame_count = e->next;
        info->end_ms = recd_recap_time_after(e->start_ms, (int64_t)e->next);
        info->end_ms_offset = e->end_ms_off;
        info->frame_count_offset = e->frames_off;
        info->bytes_written = e->bytes_written;
        info->members = e->members;
    }
    recd_buf_free(&e->pending);
    recd_buf_free(&e->out);
    recd_buf_free(&e->scratch);
    member_ended(e);
    return 0;
}

void recd_recap_encoder_free(recd_recap_encoder *e)
{
    if (!e)
        return;
    recd_buf_free(&e->pending);
    recd_buf_free(&e->out);
    recd_buf_free(&e->scratch);
    free(e->keyframes);
    recap_slots_free(&e->slots);
    free(e);
}

size_t recd_recap_encoder_memory(const recd_recap_encoder *e)
{
    return sizeof(*e) + e->pending.cap + e->out.cap + e->scratch.cap +
           keyframes_cap(e->nkeyframes) * sizeof(uint32_t) + e->slots.cap;
}

size_t recd_recap_encoder_buffer_memory(const recd_recap_encoder *e)
{
    return e->pending.cap + e->out.cap + e->scratch.cap +
           keyframes_cap(e->nkeyframes) * sizeof(uint32_t);
}

void recd_recap_encoder_trim(recd_recap_encoder *e)
{
    if (e->pending.len == 0)
        recd_buf_free(&e->pending);
    recd_buf_free(&e->out);
    recd_buf_free(&e->scratch);
    recap_slots_compact(&e->slots);
}
