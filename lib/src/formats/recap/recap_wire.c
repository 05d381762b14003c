/* SPDX-License-Identifier: MIT */
/* Recap payloads on the wire, read and written by the Recap codec's own pieces: a lone FULL_STATE
 * payload and a lone event action through the table-driven field codec (recap_internal.h), the
 * open header through recd_recap_header_encode/decode. FULL_STATE, the one payload on the hot
 * path, is read by its own parser from the message's own copy of the payload straight into the
 * message's state (recap_wire_state_read). */
#include "formats/recap/recap_wire.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_format.h"
#include "formats/recap/recap_internal.h"
#include "formats/recap/recap_msg.h"
#include "recd/format_wire.h"
#include "recd/formats/recap/recap_slot_mask.h"

/* FULL_STATE fields in table order: 9 channels, flags, pose, game mode, hand state, health,
 * absorption, 6 equipment items, the inventory list of {slot, item}. */
enum { FS_FLAGS = 9, FS_POSE, FS_GAME_MODE, FS_HAND, FS_HEALTH, FS_ABSORPTION, FS_EQUIP,
       FS_INVENTORY = FS_EQUIP + RECD_RECAP_EQUIPMENT_SLOTS, FS_COUNT };

static const recd_recap_tag_info *full_state_row(void)
{
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(RECD_RECAP_FULL_STATE);
    return ti && ti->field_count == FS_COUNT ? ti : NULL;
}

static int perr_to_why(recap_perr pe, const char *what, char *why, size_t whylen)
{
    switch (pe) {
    case RECAP_E_NOMEM: recd_why(why, whylen, "out of memory"); return -ENOMEM;
    case RECAP_E_UTF8: /* counted apart from the other -EBADMSG (wire_binary_decode) */
        recd_why(why, whylen, "%s: invalid UTF-8 in a text field", what);
        return -EILSEQ;
    case RECAP_E_MOVEMENT: recd_why(why, whylen, "%s: invalid movement payload", what); break;
    default: recd_why(why, whylen, "%s: payload ends early", what); break;
    }
    return -EBADMSG;
}

/* Parses fields of a table row from p[0..len), which they must fill exactly. */
static int parse_exact(const recd_recap_tag_info *ti, const uint8_t *p, size_t len, recap_arena *a,
                       const char *what, char *why, size_t whylen)
{
    if (ti->field_count == 0) { /* e.g. TOTEM: no payload at all */
        if (len == 0)
            return 0;
        recd_why(why, whylen, "%s: %lu bytes after the payload", what, (unsigned long)len);
        return -EBADMSG;
    }
    size_t first = recap_arena_push(a, ti->field_count);
    if (first == (size_t)-1)
        return perr_to_why(RECAP_E_NOMEM, what, why, whylen);
    recap_cur c = {p, len, 0};
    recap_perr pe = recap_fields_parse(&c, ti->fields, ti->field_count, a, first);
    if (pe != RECAP_OK)
        return perr_to_why(pe, what, why, whylen);
    if (c.pos != len) {
        recd_why(why, whylen, "%s: %lu bytes after the payload", what, (unsigned long)(len - c.pos));
        return -EBADMSG;
    }
    recap_arena_fixup(a, 0);
    return 0;
}

int recap_wire_state_write(const recd_msg_recap_state *s, recd_buf *out)
{
    const recd_recap_tag_info *ti = full_state_row();
    if (!ti)
        return -EINVAL;
    const recd_recap_state *st = &s->state;
    recd_recap_value v[FS_COUNT], rows[2 * RECD_RECAP_INVENTORY_SLOTS];
    memset(v, 0, sizeof v);
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 3; i++) {
        v[i].f64 = st->pos[i];
        v[3 + i].f64 = st->rot[i];
        v[6 + i].f64 = st->vel[i];
    }
    v[FS_FLAGS].u = st->flags;
    v[FS_POSE].u = st->pose;
    v[FS_GAME_MODE].u = st->game_mode;
    v[FS_HAND].u = st->hand_state;
    v[FS_HEALTH].f32 = st->health;
    v[FS_ABSORPTION].f32 = st->absorption;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        v[FS_EQUIP + i].item = st->equipment[i];
    size_t n = 0; /* canonical: exactly the non-empty slots, ascending */
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++) {
        if (!st->inventory[i].key.len)
            continue;
        rows[2 * n].u = (uint32_t)i;
        rows[2 * n + 1].item = st->inventory[i];
        n++;
    }
    v[FS_INVENTORY].list.values = rows;
    v[FS_INVENTORY].list.count = n;
    size_t start = out->len;
    int rc = recap_fields_write(out, ti->fields, ti->field_count, v);
    if (rc < 0)
        out->len = start;
    return rc < 0 ? -EINVAL : 0;
}

/* The FULL_STATE fields before the items: 9 f64 channels, flags, pose, game mode, hand state,
 * health and absorption. */
#define FS_FIXED_BYTES (RECAP_CHANNELS * 8 + 2 + 3 + 2 * 4)

/* recap_utf8_valid for a key, with the usual one ("minecraft:...", 8 to 32 ASCII bytes) passed
 * here in a few loads: as a call, the registers saved around it cost as much as the check. */
static inline bool key_valid(const uint8_t *k, size_t n)
{
    const uint64_t high = 0x8080808080808080ull;
    if (n - 8 <= 8)
        return !((ld_host64(k) | ld_host64(k + n - 8)) & high) || recap_utf8_valid(k, n);
    if (n - 17 <= 15)
        return !((ld_host64(k) | ld_host64(k + 8) | ld_host64(k + n - 16) | ld_host64(k + n - 8)) & high) ||
               recap_utf8_valid(k, n);
    return recap_utf8_valid(k, n);
}

/* One item from [*q, end) into it, every field written (it may hold a lent block's old item): what
 * recap_item_parse_zeroed gives, its errors included, with the cursor kept in a register (13 items
 * a tick in S3). *q is only advanced on success. */
static inline recap_perr item_take(const uint8_t **q, const uint8_t *end, recd_recap_item *it,
                                   uint64_t *bytes)
{
    const uint8_t *p = *q;
    if (p == end)
        return RECAP_E_TRUNCATED;
    size_t klen = *p++;
    if ((size_t)(end - p) < klen)
        return RECAP_E_TRUNCATED;
    it->key.data = p;
    it->key.len = klen;
    p += klen;
    if (klen) {
        if (!key_valid(it->key.data, klen))
            return RECAP_E_UTF8;
        if (end - p < 4) /* count, flags and the data's BE16 length */
            return RECAP_E_TRUNCATED;
        it->count = p[0];
        it->flags = p[1];
        size_t dlen = ld_be16(p + 2);
        p += 4;
        if ((size_t)(end - p) < dlen)
            return RECAP_E_TRUNCATED;
        it->data.data = p;
        it->data.len = dlen;
        p += dlen;
        *bytes += klen + dlen;
    } else {
        it->count = 0;
        it->flags = 0;
        it->data = (recd_recap_blob){NULL, 0};
    }
    *q = p;
    return RECAP_OK;
}

/* Reads FULL_STATE straight into st, whose fixed fields start zeroed and whose items are written
 * whole where a row or equipment slot is read (the caller zeroes the rest, when they may not be
 * zero). Its blobs point into c's bytes. The
 * checks and their order are the table-driven parse's (parse_exact): fields first, then the bytes
 * left over, then the inventory's slots, so the hot path gives the same error for every payload
 * (tests/lib/wire/test_wire_recap_state.c holds the two side by side). */
static recap_perr full_state_parse(recap_cur *c, recd_recap_state *st, bool *slots_ok,
                                   recd_recap_state_extent *ext)
{
    if (!cur_has(c, FS_FIXED_BYTES))
        return RECAP_E_TRUNCATED;
    const uint8_t *p = c->p + c->pos;
    for (int i = 0; i < 3; i++) {
        st->pos[i] = f64_from_bits(ld_be64(p + 8 * i));
        st->rot[i] = f64_from_bits(ld_be64(p + 24 + 8 * i));
        st->vel[i] = f64_from_bits(ld_be64(p + 48 + 8 * i));
    }
    p += RECAP_CHANNELS * 8;
    st->flags = ld_be16(p);
    st->pose = p[2];
    st->game_mode = p[3];
    st->hand_state = p[4];
    st->health = f32_from_bits(ld_be32(p + 5));
    st->absorption = f32_from_bits(ld_be32(p + 9));
    const uint8_t *q = c->p + c->pos + FS_FIXED_BYTES, *end = c->p + c->len;
    /* The extent (recap_slot_mask.h): every equipment slot and each inventory row's slot,
     * filled or not (a superset is enough), and the items' key and data bytes. */
    uint64_t rows_mask = 0, bytes = 0;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++) {
        recap_perr e = item_take(&q, end, &st->equipment[i], &bytes);
        if (e)
            return e;
    }
    if (end - q < 2)
        return RECAP_E_TRUNCATED;
    size_t rows = ld_be16(q);
    q += 2;
    int last = -1;
    *slots_ok = true;
    for (size_t r = 0; r < rows; r++) {
        if (q == end)
            return RECAP_E_TRUNCATED;
        unsigned slot = *q++;
        if (slot >= RECD_RECAP_INVENTORY_SLOTS || (int)slot <= last) {
            recd_recap_item skipped; /* reported once the payload has parsed, as the table codec does */
            c->pos = (size_t)(q - c->p);
            recap_perr e = recap_item_parse(c, &skipped);
            if (e)
                return e;
            q = c->p + c->pos;
            *slots_ok = false;
            continue;
        }
        recap_perr e = item_take(&q, end, &st->inventory[slot], &bytes); /* once: ascending */
        if (e)
            return e;
        rows_mask |= UINT64_C(1) << slot;
        last = (int)slot;
    }
    c->pos = (size_t)(q - c->p);
    ext->slots = rows_mask << RECD_RECAP_EQUIPMENT_SLOTS |
                 ((UINT64_C(1) << RECD_RECAP_EQUIPMENT_SLOTS) - 1);
    ext->item_bytes = bytes;
    return RECAP_OK;
}

/* The hottest Recap path: the message is made first, holding its own copy of the payload, and the
 * copy is read straight into its state, so the items' blobs need no copying of their own: one
 * allocation and one copy a tick, no value arena, no counting pass. */
static int state_read_into(const uint8_t *p, size_t len, uint64_t tick, void *lent, recd_msg *m,
                           char *why, size_t whylen)
{
    static const char what[] = "state (FULL_STATE)";
    const uint8_t *own;
    recd_recap_state_extent *ext;
    uint64_t stale;
    recd_msg_recap_state *s = msg_recap_state_over_payload(tick, p, len, lent, &own, &ext, &stale);
    if (!s)
        return perr_to_why(RECAP_E_NOMEM, what, why, whylen);
    recap_cur c = {own, len, 0};
    bool slots_ok = false;
    int rc = 0;
    recap_perr pe = full_state_parse(&c, &s->state, &slots_ok, ext);
    if (pe != RECAP_OK) {
        rc = perr_to_why(pe, what, why, whylen);
    } else if (c.pos != len) {
        recd_why(why, whylen, "%s: %lu bytes after the payload", what, (unsigned long)(len - c.pos));
        rc = -EBADMSG;
    } else if (!slots_ok) {
        recd_why(why, whylen, "%s: inventory slots must be below %d and strictly ascending", what,
                 RECD_RECAP_INVENTORY_SLOTS);
        rc = -EBADMSG;
    }
    if (rc < 0) {
        msg_recap_state_free(s);
        return rc;
    }
    if (stale & ~ext->slots) /* a lent block's items this state did not write over */
        msg_recap_state_zero_slots(s, stale & ~ext->slots);
    m->recap_state = s;
    m->type = RECD_MSG_STATE;
    m->format = RECD_MSG_FMT_RECAP;
    return 0;
}

int recap_wire_state_read(const uint8_t *p, size_t len, uint64_t tick, recd_msg *m, char *why,
                          size_t whylen)
{
    return state_read_into(p, len, tick, NULL, m, why, whylen);
}

static int recap_wire_event_write(const recd_msg_recap_event *e, recd_buf *out)
{
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(e->event.tag);
    if (!ti || ti->kind != RECD_RECAP_KIND_EVENT || recd_recap_event_check(&e->event) < 0)
        return -EINVAL;
    size_t start = out->len;
    int rc = recd_buf_append(out, &e->event.tag, 1);
    if (rc == 0)
        rc = recap_fields_write(out, ti->fields, ti->field_count, e->event.fields);
    if (rc < 0)
        out->len = start;
    return rc == -ENOMEM ? rc : rc < 0 ? -EINVAL : 0;
}

static int recap_wire_event_read(const uint8_t *p, size_t len, uint64_t tick, recd_msg *m,
                                 char *why, size_t whylen)
{
    if (len == 0) {
        recd_why(why, whylen, "event: empty payload (an action tag is expected)");
        return -EBADMSG;
    }
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(p[0]);
    if (!ti || ti->kind != RECD_RECAP_KIND_EVENT) {
        recd_why(why, whylen, "event: tag 0x%02X is not a Recap event action", p[0]);
        return -EBADMSG;
    }
    recap_arena a = {0};
    char what[64];
    snprintf(what, sizeof what, "event (%s)", ti->name);
    int rc = parse_exact(ti, p + 1, len - 1, &a, what, why, whylen);
    if (rc == 0) {
        recd_recap_event ev = {p[0], ti->field_count, ti->field_count ? a.v : NULL};
        rc = recd_msg_set_recap_event(m, tick, &ev);
        if (rc == -ENOMEM)
            recd_why(why, whylen, "out of memory");
        else if (rc < 0) {
            recd_why(why, whylen, "%s: invalid values", what);
            rc = -EBADMSG;
        }
    }
    recap_arena_free(&a);
    return rc;
}

static int recap_wire_open_write(const recd_msg_recap_open *o, recd_buf *out)
{
    size_t start = out->len;
    int rc = recd_recap_header_encode(&o->header, out);
    if (rc < 0)
        out->len = start;
    return rc;
}

static int recap_wire_open_read(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen)
{
    recd_recap_header h;
    recd_report rep = {0};
    rep.limit = 1;
    int rc = recd_recap_header_decode(p, len, &h, &rep);
    if (rc == -EAGAIN || (rc < 0 && rc != -ENOMEM)) {
        recd_why(why, whylen, "open: %s recap header%s%s", rc == -EAGAIN ? "truncated" : "invalid",
                 rep.count ? ": " : "", rep.count ? rep.items[0].message : "");
        recd_report_free(&rep);
        return -EBADMSG;
    }
    recd_report_free(&rep);
    if (rc < 0) {
        recd_why(why, whylen, "out of memory");
        return rc;
    }
    if ((size_t)rc != len) {
        recd_why(why, whylen, "open: %lu bytes after the recap header", (unsigned long)(len - (size_t)rc));
        return -EBADMSG;
    }
    rc = recd_msg_set_recap_open(m, &h);
    if (rc < 0)
        recd_why(why, whylen, "out of memory");
    return rc;
}

/* ---- the wire hooks (recd/format_wire.h) ---------------------------------------------------- */

static int recap_open_msg_write(const recd_msg *m, recd_buf *out)
{
    return m->open.recap ? recap_wire_open_write(m->open.recap, out) : -EINVAL;
}

static int recap_state_msg_write(const recd_msg *m, recd_buf *out)
{
    return m->recap_state ? recap_wire_state_write(m->recap_state, out) : -EINVAL;
}

static int recap_event_msg_write(const recd_msg *m, recd_buf *out)
{
    return m->recap_event ? recap_wire_event_write(m->recap_event, out) : -EINVAL;
}

/* A state or event frame carries its tick. */
static int recap_msg_time(const recd_msg *m, uint64_t *t)
{
    if (m->type == RECD_MSG_EVENT) {
        if (!m->recap_event)
            return -EINVAL;
        *t = m->recap_event->tick;
        return 0;
    }
    if (!m->recap_state)
        return -EINVAL;
    *t = m->recap_state->tick;
    return 0;
}

const struct recd_format_wire recd_recap__wire = {
    .format = RECD_MSG_FMT_RECAP,
    .code = 3,
    /* Events came from Recap sessions only before CARLA's, and a builder may leave the format
     * unset: such an event is sent as a Recap event. */
    .open_read = recap_wire_open_read,
    .state_read = recap_wire_state_read,
    .state_read_lent = state_read_into, /* lent: a block kept by recd_recap__state_keep */
    .event_read = recap_wire_event_read,
    .open_write = recap_open_msg_write,
    .state_write = recap_state_msg_write,
    .event_write = recap_event_msg_write,
    .msg_time = recap_msg_time,
};
