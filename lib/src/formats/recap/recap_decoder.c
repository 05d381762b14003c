/* SPDX-License-Identifier: MIT */
/* Recap decoder and validator: header, then each complete gzip member is checked in full before
 * any of its ticks is delivered, so a bad or cut member contributes nothing and the repair point
 * is the end of the last good member (docs/formats/recap.md sections 5 and 8). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"


/* Index of each FULL_STATE field in its table row. */
enum { FS_FLAGS = 9, FS_POSE, FS_GAME_MODE, FS_HAND, FS_HEALTH, FS_ABSORPTION, FS_EQUIP,
       FS_INVENTORY = FS_EQUIP + RECD_RECAP_EQUIPMENT_SLOTS };

typedef enum stop_reason { STOP_NONE = 0, STOP_CONTENT, STOP_CALLBACK, STOP_NOMEM } stop_reason;

typedef struct dec {
    const recd_recap_callbacks *cb;
    recd_report *rep;
    uint64_t input_len; /* for progress: the whole file's size */
    recd_recap_decode_result *res;
    uint8_t version;
    size_t errors;
    bool seen_action; /* the first action of the file must be FULL_STATE */
    uint64_t ticks;
    /* The reader's state. */
    double ch[RECAP_CHANNELS];
    uint16_t flags;
    uint8_t pose, game_mode, hand_state;
    float health, absorption;
    recap_slots slots;
    /* Events of the open tick: tags and first value index in the arena. */
    recap_arena arena;
    recd_recap_event *ev;
    size_t *ev_first;
    size_t nev, capev;
    recd_buf item_enc;
    stop_reason stop;
    int user_rc;
    uint64_t base; /* file offset of the frame data */
    const recap_resume *rs; /* NULL: from the start */
    bool synced;            /* state is known: ticks may be delivered (see delivering) */
    uint64_t member_off, member_tick; /* of the member being applied */
} dec;

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static void problem(dec *d, recd_severity sev, uint64_t off, const char *code, const char *fmt, ...)
{
    if (sev == RECD_SEV_ERROR)
        d->errors++;
    if (!d->rep)
        return;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    recd_report_add(d->rep, sev, off, code, "%s", msg);
}

/* A content error inside a member: where and why. */
typedef struct perr_info {
    const char *code;
    const char *what;
    size_t pos;
    uint8_t tag;
} perr_info;

static bool fail(perr_info *pe, const char *code, const char *what, size_t pos, uint8_t tag)
{
    pe->code = code;
    pe->what = what;
    pe->pos = pos;
    pe->tag = tag;
    return false;
}

static bool fail_perr(perr_info *pe, recap_perr e, size_t pos, uint8_t tag)
{
    switch (e) {
    case RECAP_E_UTF8: return fail(pe, "bad-utf8", "invalid UTF-8 in the payload", pos, tag);
    case RECAP_E_MOVEMENT: return fail(pe, "bad-movement", "invalid movement mode bytes", pos, tag);
    case RECAP_E_NOMEM: return fail(pe, "nomem", "out of memory", pos, tag);
    default: return fail(pe, "truncated-payload", "payload runs past the member's data", pos, tag);
    }
}

static int push_event(dec *d, uint8_t tag, size_t first, size_t nfields)
{
    if (d->nev == d->capev) {
        size_t cap = d->capev ? d->capev * 2 : 16;
        recd_recap_event *ev = realloc(d->ev, cap * sizeof(*ev));
        if (!ev)
            return -ENOMEM;
        d->ev = ev;
        size_t *f = realloc(d->ev_first, cap * sizeof(*f));
        if (!f)
            return -ENOMEM;
        d->ev_first = f;
        d->capev = cap;
    }
    d->ev[d->nev].tag = tag;
    d->ev[d->nev].field_count = nfields;
    d->ev[d->nev].fields = NULL;
    d->ev_first[d->nev++] = first;
    return 0;
}

static void reader_state(const dec *d, recd_recap_state *s)
{
    memset(s, 0, sizeof(*s));
    memcpy(s->pos, d->ch, 3 * sizeof(double));
    memcpy(s->rot, d->ch + 3, 3 * sizeof(double));
    memcpy(s->vel, d->ch + 6, 3 * sizeof(double));
    s->flags = d->flags;
    s->pose = d->pose;
    s->game_mode = d->game_mode;
    s->hand_state = d->hand_state;
    s->health = d->health;
    s->absorption = d->absorption;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        recap_slots_item(&d->slots, i, &s->equipment[i]);
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++)
        recap_slots_item(&d->slots, RECD_RECAP_EQUIPMENT_SLOTS + i, &s->inventory[i]);
}

static int set_slot(dec *d, int slot, const recd_recap_item *it)
{
    d->item_enc.len = 0;
    int rc = recap_item_write(&d->item_enc, it);
    return rc ? rc : recap_slots_set(&d->slots, slot, d->item_enc.data, d->item_enc.len);
}

/* Slots in a {slot, item} list must be < 41 and strictly ascending. */
static bool slot_list_ok(const recd_recap_list *l)
{
    int last = -1;
    for (size_t r = 0; r < l->count; r++) {
        int s = (int)l->values[2 * r].u;
        if (s >= RECD_RECAP_INVENTORY_SLOTS || s <= last)
            return false;
        last = s;
    }
    return true;
}

static int apply_slot_list(dec *d, const recd_recap_list *l)
{
    for (size_t r = 0; r < l->count; r++) {
        int rc = set_slot(d, RECD_RECAP_EQUIPMENT_SLOTS + (int)l->values[2 * r].u,
                          &l->values[2 * r + 1].item);
        if (rc)
            return rc;
    }
    return 0;
}

static int apply_state(dec *d, uint8_t tag, const recd_recap_value *v)
{
    switch (tag) {
    case RECD_RECAP_FULL_STATE:
        for (int i = 0; i < RECAP_CHANNELS; i++)
            d->ch[i] = v[i].f64;
        d->flags = (uint16_t)v[FS_FLAGS].u;
        d->pose = (uint8_t)v[FS_POSE].u;
        d->game_mode = (uint8_t)v[FS_GAME_MODE].u;
        d->hand_state = (uint8_t)v[FS_HAND].u;
        d->health = v[FS_HEALTH].f32;
        d->absorption = v[FS_ABSORPTION].f32;
        for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++) {
            int rc = set_slot(d, i, &v[FS_EQUIP + i].item);
            if (rc)
                return rc;
        }
        for (int i = RECD_RECAP_EQUIPMENT_SLOTS; i < RECAP_SLOTS; i++)
            recap_slots_set(&d->slots, i, NULL, 0);
        return apply_slot_list(d, &v[FS_INVENTORY].list);
    case RECD_RECAP_STATE_FLAGS: d->flags = (uint16_t)v[0].u; return 0;
    case RECD_RECAP_EQUIPMENT: return set_slot(d, (int)v[0].u, &v[1].item);
    case RECD_RECAP_HEALTH:
        d->health = v[0].f32;
        d->absorption = v[1].f32;
        return 0;
    case RECD_RECAP_GAME_MODE: d->game_mode = (uint8_t)v[0].u; return 0;
    case RECD_RECAP_HAND_STATE: d->hand_state = (uint8_t)v[0].u; return 0;
    case RECD_RECAP_POSE: d->pose = (uint8_t)v[0].u; return 0;
    case RECD_RECAP_FULL_INVENTORY: return apply_slot_list(d, &v[0].list);
    default: return 0;
    }
}

static bool state_values_ok(uint8_t tag, const recd_recap_value *v)
{
    if (tag == RECD_RECAP_FULL_STATE)
        return slot_list_ok(&v[FS_INVENTORY].list);
    if (tag == RECD_RECAP_EQUIPMENT)
        return v[0].u < RECD_RECAP_EQUIPMENT_SLOTS;
    if (tag == RECD_RECAP_FULL_INVENTORY)
        return slot_list_ok(&v[0].list);
    return true;
}

/* Whether the open tick goes to the callbacks: the state is known, and a resume wants it. */
static bool delivering(const dec *d)
{
    return d->synced && (!d->rs || d->ticks >= d->rs->deliver_from);
}

/* Ends the open tick: hands it out (apply mode) and clears the per-tick storage. */
static int end_tick(dec *d, bool apply, bool had_actions)
{
    int rc = 0;
    if (apply && d->cb && delivering(d)) {
        if (had_actions && d->cb->on_tick) {
            recap_arena_fixup(&d->arena, 0);
            for (size_t k = 0; k < d->nev; k++)
                d->ev[k].fields = d->ev[k].field_count ? d->arena.v + d->ev_first[k] : NULL;
            recd_recap_state s;
            reader_state(d, &s);
            rc = d->cb->on_tick(d->cb->ctx, d->ticks, &s, d->ev, d->nev);
        } else if (!had_actions && d->cb->on_skip) {
            rc = d->cb->on_skip(d->cb->ctx, d->ticks, 1);
        }
    }
    d->ticks++;
    d->nev = 0;
    recap_arena_reset(&d->arena);
    return rc;
}

/* A FULL_STATE was applied: the state is known from here on. */
static int keyframe(dec *d)
{
    d->synced = true;
    if (!d->rs || !d->rs->on_keyframe)
        return 0;
    d->user_rc = d->rs->on_keyframe(d->cb ? d->cb->ctx : NULL, d->ticks, d->member_off,
                                    d->member_tick);
    return d->user_rc;
}

/* One pass over a member's actions. Check mode (apply = false) validates everything and touches
 * no state; apply mode, run only on a member that passed, updates state and calls back. */
static bool run_member(dec *d, const uint8_t *data, size_t len, bool apply, perr_info *pe)
{
    recap_cur c = {data, len, 0};
    bool seen = d->seen_action, tick_open = false;
    bool keep_events = apply && d->cb && d->cb->on_tick; /* else nothing outlives its action */
    d->nev = 0;
    recap_arena_reset(&d->arena);
    while (c.pos < len) {
        size_t at = c.pos;
        uint8_t tag = data[c.pos++];
        if (!seen && tag != RECD_RECAP_FULL_STATE)
            return fail(pe, "no-keyframe", "the first action of the file is not FULL_STATE", at, tag);
        seen = true;
        const recd_recap_tag_info *ti = recd_recap_tag_info_get(tag);
        if (!ti)
            return fail(pe, "unknown-tag", "unknown action tag", at, tag);
        if (ti->min_version > d->version)
            return fail(pe, "tag-version", "action tag not defined in this format version", at, tag);
        if (apply)
            d->res->actions++;
        if (tag == RECD_RECAP_NEXT_TICK) {
            int rc = end_tick(d, apply, tick_open);
            if (rc) {
                d->user_rc = rc;
                d->stop = STOP_CALLBACK;
                return false;
            }
            tick_open = false;
            continue;
        }
        if (tag == RECD_RECAP_SKIP_TICKS) {
            if (tick_open)
                return fail(pe, "skip-inside-tick", "SKIP_TICKS inside an unfinished tick", at, tag);
            if (!cur_has(&c, 1))
                return fail_perr(pe, RECAP_E_TRUNCATED, at, tag);
            uint8_t n = data[c.pos++];
            if (n == 0)
                return fail(pe, "bad-skip", "SKIP_TICKS with a count of 0", at, tag);
            if (apply && d->cb && delivering(d) && d->cb->on_skip) {
                int rc = d->cb->on_skip(d->cb->ctx, d->ticks, n);
                if (rc) {
                    d->user_rc = rc;
                    d->stop = STOP_CALLBACK;
                    return false;
                }
            }
            d->ticks += n;
            continue;
        }
        tick_open = true;
        if (tag == RECD_RECAP_MOVEMENT) {
            recap_perr e = recap_movement_parse(&c, apply ? d->ch : NULL);
            if (e)
                return fail_perr(pe, e, at, tag);
            continue;
        }
        size_t fix_from = d->arena.nfix;
        size_t first = recap_arena_push(&d->arena, ti->field_count);
        if (first == (size_t)-1)
            return fail_perr(pe, RECAP_E_NOMEM, at, tag);
        recap_perr e = recap_fields_parse(&c, ti->fields, ti->field_count, &d->arena, first);
        if (e)
            return fail_perr(pe, e, at, tag);
        recap_arena_fixup(&d->arena, fix_from);
        const recd_recap_value *v = d->arena.v + first;
        if (ti->kind == RECD_RECAP_KIND_STATE) {
            if (!state_values_ok(tag, v))
                return fail(pe, "bad-slot", "slot out of range or not ascending", at, tag);
            if (apply && apply_state(d, tag, v))
                return fail_perr(pe, RECAP_E_NOMEM, at, tag);
            if (apply && tag == RECD_RECAP_FULL_STATE && keyframe(d)) {
                d->stop = STOP_CALLBACK;
                return false;
            }
        } else if (keep_events && push_event(d, tag, first, ti->field_count)) {
            return fail_perr(pe, RECAP_E_NOMEM, at, tag);
        }
        if (!keep_events || ti->kind == RECD_RECAP_KIND_STATE)
            recap_arena_truncate(&d->arena, first, fix_from); /* values no longer needed */
    }
    if (tick_open)
        return fail(pe, "unterminated-tick", "member ends inside a tick (no NEXT_TICK)", len, 0);
    if (apply)
        d->seen_action = seen;
    return true;
}

static int on_member(void *ctx, uint64_t off, uint64_t end, const uint8_t *data, size_t len)
{
    dec *d = ctx;
    perr_info pe = {0};
    uint64_t ticks_before = d->ticks;
    if (!run_member(d, data, len, false, &pe)) {
        d->ticks = ticks_before;
        if (strcmp(pe.code, "nomem") == 0) {
            d->stop = STOP_NOMEM;
            return 1;
        }
        problem(d, RECD_SEV_ERROR, d->base + off, pe.code,
                "%s (tag 0x%02X at byte %zu of member %llu's %zu inflated bytes)", pe.what, pe.tag,
                pe.pos, (unsigned long long)d->res->members, len);
        d->stop = STOP_CONTENT;
        return 1;
    }
    d->ticks = ticks_before;
    d->member_off = d->base + off;
    d->member_tick = ticks_before;
    if (!run_member(d, data, len, true, &pe)) {
        if (d->stop != STOP_CALLBACK)
            d->stop = STOP_NOMEM;
        return 1;
    }
    d->res->members++;
    d->res->ticks = d->ticks;
    d->res->valid_end = d->base + end;
    recd_report_progress(d->rep, d->base + end, d->input_len);
    if (d->cb && delivering(d) && d->cb->on_member_end) {
        int rc = d->cb->on_member_end(d->cb->ctx, d->ticks, d->base + end);
        if (rc) {
            d->user_rc = rc;
            d->stop = STOP_CALLBACK;
            return 1;
        }
    }
    return 0;
}

static void dec_free(dec *d)
{
    recap_slots_free(&d->slots);
    recap_arena_free(&d->arena);
    free(d->ev);
    free(d->ev_first);
    recd_buf_free(&d->item_enc);
}

static void check_frame_count(dec *d)
{
    const recd_recap_decode_result *res = d->res;
    uint32_t fc = res->header.frame_count;
    uint64_t off = 0;
    recd_recap_header_patch_offsets(&res->header, NULL, &off);
    if (fc == 0) {
        if (res->ticks > 0)
            problem(d, RECD_SEV_INFO, off, "not-finalized",
                    "header frame count is 0 (not finalized); counted %llu ticks",
                    (unsigned long long)res->ticks);
    } else if (fc != res->ticks) {
        problem(d, res->truncated ? RECD_SEV_WARNING : RECD_SEV_ERROR, off, "frame-count-mismatch",
                "header says %u frames, the data holds %llu ticks%s", fc,
                (unsigned long long)res->ticks, res->truncated ? " (tail cut)" : "");
    }
}

static int decode(const uint8_t *buf, size_t len, const recd_recap_decode_options *opt,
                  const recd_recap_callbacks *cb, recd_recap_decode_result *result,
                  recd_report *report, const recap_resume *rs)
{
    recd_recap_decode_result local;
    recd_recap_decode_result *res = result ? result : &local;
    memset(res, 0, sizeof(*res));
    dec d = {.cb = cb, .rep = report, .res = res, .input_len = len, .rs = rs, .synced = true};
    int hsize = recd_recap_header_decode(buf, len, &res->header, report);
    if (hsize < 0)
        return -EBADMSG;
    d.base = (uint64_t)hsize;
    if (rs) {
        if (rs->offset < (uint64_t)hsize || rs->offset > len)
            return -EINVAL;
        d.base = rs->offset;
        d.ticks = rs->tick;
        d.seen_action = rs->offset > (uint64_t)hsize; /* mid-file: no first-action rule */
        d.synced = !rs->wait_keyframe;
    }
    res->header_valid = true;
    res->data_offset = (uint64_t)hsize;
    res->valid_end = d.base;
    d.version = res->header.version;
    if (cb && cb->on_header) {
        int rc = cb->on_header(cb->ctx, &res->header);
        if (rc)
            return rc;
    }
    recd_gzip_scan scan;
    size_t max_out = opt && opt->max_member_size ? opt->max_member_size
                                                  : RECD_RECAP_DEFAULT_MAX_MEMBER_SIZE;
    int rc = recd_gzip_members_read(buf + d.base, len - (size_t)d.base, max_out, on_member, &d,
                                    &scan);
    res->truncated = res->valid_end < len;
    int ret = 0;
    if (d.stop == STOP_CALLBACK) {
        ret = d.user_rc;
    } else if (d.stop == STOP_NOMEM || rc == -ENOMEM || rc == -EIO) {
        ret = rc == -EIO ? -EIO : -ENOMEM;
    } else if (d.stop == STOP_NONE && rc < 0) {
        uint64_t at = d.base + scan.valid_end;
        const char *code = rc == -EMSGSIZE ? "member-too-large"
                           : scan.truncated ? "truncated-member"
                                            : "corrupt-member";
        problem(&d, RECD_SEV_ERROR, at, code, "gzip member at offset %llu: %s; %llu bytes ignored",
                (unsigned long long)at, scan.tail_reason, (unsigned long long)(len - at));
    }
    if (ret == 0 && !rs)
        check_frame_count(&d);
    dec_free(&d);
    if (ret)
        return ret;
    return d.errors ? -EBADMSG : 0;
}

int recd_recap_decode(const uint8_t *buf, size_t len, const recd_recap_decode_options *opt,
                      const recd_recap_callbacks *cb, recd_recap_decode_result *result,
                      recd_report *report)
{
    return decode(buf, len, opt, cb, result, report, NULL);
}

int recap_decode_resume(const uint8_t *buf, size_t len, const recap_resume *rs,
                        const recd_recap_callbacks *cb, recd_recap_decode_result *result)
{
    return decode(buf, len, NULL, cb, result, NULL, rs);
}

int recd_recap_verify(const uint8_t *buf, size_t len, recd_recap_decode_result *result,
                      recd_report *report)
{
    return recd_recap_decode(buf, len, NULL, NULL, result, report);
}
