/* SPDX-License-Identifier: MIT */
/* The tree-free reader for .rec state lines, the message NDJSON senders send most: one pass over
 * the bytes, keys mapped to table fields by the canonical order (else by first byte), numbers
 * converted in place. It only ever accepts what the jansson reader accepts, with the same values;
 * whatever it is unsure of it declines, and the jansson reader gives the error message. */
#include "formats/rec/rec_json_fast.h"

#include <float.h>
#include <pthread.h>
#include <string.h>

#include "base/bytes.h"
#include "base/text.h"
#include "formats/rec/rec_fields.h"
#include "message/json/json_scan.h"

bool rec_json_fast_number(const char *s, size_t len, bool *is_int, int64_t *i, double *d)
{
    /* text_parse_number takes no number over 400 bytes; shorter ones get the terminator the
     * scan needs. */
    char text[402];
    if (len > 400)
        return false;
    memcpy(text, s, len);
    text[len] = 0;
    return scan_number(text, is_int, i, d) == text + len;
}

/* ---- fields ---------------------------------------------------------------------------------- */

/* The range checks of rec_value_from_int for the integer types, inline; other types are its. */
static inline bool put_int(const rec_field *f, int64_t i, rec_value *v)
{
    uint64_t max;
    switch (f->type) {
    case MF_U8: max = UINT8_MAX; break;
    case MF_U16: max = UINT16_MAX; break;
    case MF_U32: max = UINT32_MAX; break;
    case MF_BITS:
        if (f->bits >= 63)
            return rec_value_from_int(f, i, v, NULL, 0);
        max = ((uint64_t)1 << f->bits) - 1;
        break;
    case MF_S16:
        if (i < INT16_MIN || i > INT16_MAX)
            return false;
        goto store;
    default: return rec_value_from_int(f, i, v, NULL, 0);
    }
    if ((uint64_t)i > max) /* a negative i is a huge unsigned one */
        return false;
store:
    v->i = i;
    v->set = true;
    return true;
}

static inline __attribute__((always_inline)) bool read_field(reader *r, const rec_field *f,
                                                             rec_value *v)
{
    skip_ws(r);
    if (f->type == MF_BOOL) {
        size_t left = (size_t)(r->end - r->p);
        if (left >= 4 && memcmp(r->p, "true", 4) == 0) {
            r->p += 4;
            v->i = 1;
        } else if (left >= 5 && memcmp(r->p, "false", 5) == 0) {
            r->p += 5;
            v->i = 0;
        } else {
            return false;
        }
        v->set = true;
        return true;
    }
    bool is_int;
    int64_t i;
    double d;
    const char *e = scan_number(r->p, &is_int, &i, &d);
    if (!e)
        return false;
    r->p = e; /* a number must be followed by ',', ']' or '}': the caller checks */
    if (is_int)
        return put_int(f, i, v);
    if (f->type != MF_F32)
        return false; /* a real number for an integer field */
    if (d >= -FLT_MAX && d <= FLT_MAX) { /* text_double_to_f32's common case, inline */
        v->f = (float)d;
        v->set = true;
        return true;
    }
    return rec_value_from_double(f, d, v, NULL, 0);
}

static size_t group_end(const rec_field *fields, size_t n, size_t g)
{
    if (fields[g].index >= 0) /* an array group has one field per element */
        return g + (size_t)fields[g].count <= n ? g + (size_t)fields[g].count : n;
    if (!fields[g].sub) /* a scalar */
        return g + 1;
    size_t e = g + 1;
    while (e < n && (fields[e].key == fields[g].key || strcmp(fields[e].key, fields[g].key) == 0))
        e++;
    return e;
}

/* ---- the table plan -------------------------------------------------------------------------- */

/* `"key":` as it stands in a line without white space, as two 8-byte words under masks: the
 * first at the key's start, the second ending with its ':' (the same word again when the text is
 * shorter than eight bytes). A load and compare of each matches a key of up to 13 bytes without
 * branching on its length. Longer keys, and fields that start no group (or are no member), get
 * words that match no JSON text: eight NUL bytes. */
typedef struct key_words {
    uint64_t a, a_mask, b, b_mask;
    size_t b_at, len;
} key_words;

/* What the reader needs of a .rec table, built once per table: the key words and end of each
 * group (at its first field), the group starts, and whether any field is an alternative. */
typedef struct state_plan {
    key_words key[REC_MAX_FIELDS], sub[REC_MAX_FIELDS]; /* sub: of object members */
    uint8_t end[REC_MAX_FIELDS];
    uint64_t starts;
    bool has_alt;
} state_plan;

static key_words make_key_words(const char *key, size_t kl)
{
    key_words w = {0, ~0ull, 0, ~0ull, 0, 0}; /* matches no JSON text (which holds no NUL byte) */
    char text[24] = {0}, ones[24] = {0};
    size_t len = kl + 3;
    if (!key || len > 16)
        return w; /* (were such a match made, the value read at the NUL bytes would fail) */
    text[0] = '"';
    memcpy(text + 1, key, kl);
    text[kl + 1] = '"';
    text[kl + 2] = ':';
    memset(ones, 0xFF, len);
    w.b_at = len > 8 ? len - 8 : 0;
    w.a = ld_host64(text);
    w.a_mask = ld_host64(ones);
    w.b = ld_host64(text + w.b_at);
    w.b_mask = ld_host64(ones + w.b_at);
    w.len = len;
    return w;
}

static state_plan plans[2];
static pthread_once_t plan_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void build_plan(state_plan *pl, recd_msg_format fmt)
{
    size_t n;
    const rec_field *fields = rec_fields(fmt, &n);
    for (size_t i = 0; i < REC_MAX_FIELDS; i++)
        pl->key[i] = pl->sub[i] = make_key_words(NULL, 0);
    for (size_t g = 0; g < n; g = pl->end[g]) {
        pl->end[g] = (uint8_t)group_end(fields, n, g);
        pl->key[g] = make_key_words(fields[g].key, fields[g].key_len);
        pl->starts |= 1ull << g;
    }
    for (size_t i = 0; i < n; i++) {
        pl->has_alt |= fields[i].alt != 0;
        pl->sub[i] = make_key_words(fields[i].sub, fields[i].sub_len);
    }
}

static void build_onfoot_plan(void) { build_plan(&plans[0], RECD_MSG_FMT_SAMP_ONFOOT); }
static void build_vehicle_plan(void) { build_plan(&plans[1], RECD_MSG_FMT_SAMP_VEHICLE); }

static const state_plan *plan_for(recd_msg_format fmt)
{
    if (fmt == RECD_MSG_FMT_SAMP_ONFOOT) {
        pthread_once(&plan_once[0], build_onfoot_plan);
        return &plans[0];
    }
    pthread_once(&plan_once[1], build_vehicle_plan);
    return &plans[1];
}

/* Eats `"key":` when it is next with no white space inside, by the plan's two words. */
static inline bool eat_key_words(reader *r, const key_words *w)
{
    if (r->end - r->p < 16 ||
        (((ld_host64(r->p) ^ w->a) & w->a_mask) | ((ld_host64(r->p + w->b_at) ^ w->b) & w->b_mask)))
        return false;
    r->p += w->len;
    return true;
}

/* Group [g, end): an array of numbers, an object of named members, or one scalar. */
static bool read_group(reader *r, const rec_field *fields, const state_plan *pl, size_t g,
                       size_t end, rec_value *vals)
{
    const rec_field *f = &fields[g];
    if (f->index >= 0) {
        if (!eat(r, '[') || end - g != (size_t)f->count)
            return false;
        for (size_t k = 0; k < end - g; k++) {
            if ((k && !eat(r, ',')) || fields[g + k].index != (int)k ||
                !read_field(r, &fields[g + k], &vals[g + k]))
                return false;
        }
        return eat(r, ']');
    }
    if (f->sub) {
        if (!eat(r, '{'))
            return false;
        uint64_t seen = 0;
        size_t expect = g;
        do {
            const char *k;
            size_t kn;
            size_t i = g;
            skip_ws(r);
            if (expect < end && eat_key_words(r, &pl->sub[expect])) {
                i = expect; /* with its ':' */
            } else {
                if (expect < end &&
                    eat_expected_key(r, fields[expect].sub, fields[expect].sub_len)) {
                    i = expect;
                } else {
                    if (!read_plain_string(r, &k, &kn))
                        return false;
                    while (i < end && !key_is(fields[i].sub, k, kn))
                        i++;
                }
                if (!eat(r, ':'))
                    return false;
            }
            expect = i + 1;
            if (i == end || (seen >> (i - g) & 1u))
                return false; /* unknown or repeated member */
            seen |= 1ull << (i - g);
            if (!read_field(r, &fields[i], &vals[i]))
                return false;
        } while (eat(r, ','));
        /* Every member present, and the line goes on (its own '}' is still to come). */
        return eat(r, '}') && r->p != r->end && seen == (1ull << (end - g)) - 1;
    }
    return read_field(r, f, &vals[g]);
}


/* The first field of key k's group, or n; `from` is where the canonical order expects it. */
static size_t find_group(const rec_field *fields, size_t n, const char *k, size_t kn, size_t from)
{
    if (from < n && key_is(fields[from].key, k, kn))
        return from;
    for (size_t i = 0; i < n; i++)
        if (fields[i].key[0] == k[0] && key_is(fields[i].key, k, kn))
            return i;
    return n;
}

enum { DECLINE = 0, ACCEPT = 1, AS_VEHICLE = 2 };

typedef struct common_keys {
    bool type, session, seq;
    const char *key;
    size_t key_len;
    int64_t seq_value;
} common_keys;

enum { NOT_COMMON, KEY_SEQ, KEY_TYPE, KEY_SESSION };

/* Eats one of the keys every message may carry when it is next, as a plain string. A key not
 * eaten here is none of them: these names have no other plain spelling. */
static int eat_common_key(reader *r)
{
    if (eat_expected_key(r, "type", 4))
        return KEY_TYPE;
    if (eat_expected_key(r, "session", 7))
        return KEY_SESSION;
    if (eat_expected_key(r, "seq", 3))
        return KEY_SEQ;
    return NOT_COMMON;
}

/* The value of type, session or seq; false when repeated or not plainly valid. */
static bool read_common_value(reader *r, int which, common_keys *c)
{
    const char *s;
    size_t n;
    bool is_int;
    double d;
    switch (which) {
    case KEY_SEQ:
        if (c->seq || !read_number(r, &is_int, &c->seq_value, &d) || !is_int || c->seq_value < 0)
            return false;
        return c->seq = true;
    case KEY_TYPE:
        if (c->type)
            return false;
        skip_ws(r);
        return c->type = eat_expected_key(r, "state", 5); /* the plain string "state" */
    default:
        if (c->session || !read_plain_string(r, &s, &n) || !recd_session_key_valid(s, n))
            return false;
        c->key = s;
        c->key_len = n;
        return c->session = true;
    }
}

static int read_state(const char *line, size_t len, recd_msg_format fmt, bool inferring,
                      recd_msg *out)
{
    while (len && is_space(line[len - 1]))
        len--;
    if (!len || line[len - 1] != '}') /* the final byte that bounds the scans (see reader) */
        return DECLINE;
    size_t n;
    const rec_field *fields = rec_fields(fmt, &n);
    const state_plan *pl = plan_for(fmt);
    rec_value vals[REC_MAX_FIELDS]; /* set by the groups read; the rest marked at the end */
    reader r = {line, line + len};
    common_keys c = {0};
    uint64_t seen = 0; /* group starts already read: a repeated key is declined */
    size_t next = 0;
    if (!eat(&r, '{'))
        return DECLINE;
    do {
        const char *k;
        size_t kn, g;
        skip_ws(&r);
        if (eat_key_words(&r, &pl->key[next])) { /* the predicted key and its ':' */
            g = next;
        } else if (eat_expected_key(&r, fields[next].key, fields[next].key_len)) {
            g = next;
            if (!eat(&r, ':'))
                return DECLINE;
        } else {
            int which = eat_common_key(&r); /* no table field has these names */
            if (which != NOT_COMMON) {
                if (!eat(&r, ':') || !read_common_value(&r, which, &c))
                    return DECLINE;
                continue;
            }
            if (!read_plain_string(&r, &k, &kn) || kn == 0 || !eat(&r, ':'))
                return DECLINE;
            g = find_group(fields, n, k, kn, next);
            /* A key on-foot states lack: when the format is inferred, try the vehicle table. It
             * needs "vehicle_id" and refuses "tick", as the jansson reader's inference does. */
            if (g == n)
                return inferring ? AS_VEHICLE : DECLINE;
        }
        if (seen >> g & 1u)
            return DECLINE;
        seen |= 1ull << g;
        size_t end = pl->end[g];
        if (!read_group(&r, fields, pl, g, end, vals))
            return DECLINE;
        next = end < n ? end : 0;
    } while (eat(&r, ','));
    if (!eat(&r, '}') || r.p != r.end || !c.type) /* white space after it was cut off above */
        return DECLINE;
    /* Each group read was read whole, so with every group read every field is set: complete when
     * the table has no alternatives (else both were given, which the loop refuses). Only
     * otherwise are the fields of the groups not read marked unset and each field looked at. */
    int alt_seen[3] = {0, 0, 0};
    bool has_alt = false;
    size_t from = n;
    if (seen != pl->starts || pl->has_alt) {
        for (size_t g = 0, end; g < n; g = end) {
            end = pl->end[g];
            for (size_t i = g; i < end; i++)
                if (!(seen >> g & 1u))
                    vals[i] = (rec_value){0};
        }
        from = 0;
    }
    for (size_t i = from; i < n; i++) {
        if (fields[i].alt) {
            alt_seen[fields[i].alt] |= vals[i].set;
            has_alt |= fields[i].alt == 1;
        } else if (!vals[i].set) {
            return DECLINE;
        }
    }
    if (has_alt && alt_seen[1] + alt_seen[2] != 1)
        return DECLINE;
    recd_msg_init(out, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    out->type = RECD_MSG_STATE;
    out->format = fmt;
    if (c.session) {
        memcpy(out->session, c.key, c.key_len);
        out->session[c.key_len] = 0;
    }
    out->has_seq = c.seq;
    out->seq = (uint64_t)c.seq_value;
    rec_unflatten(vals, out);
    return ACCEPT;
}

int rec_json_fast_state(const char *line, size_t len, recd_msg_format session_format,
                        recd_msg *out)
{
    switch (session_format) {
    case RECD_MSG_FMT_NONE: {
        int rc = read_state(line, len, RECD_MSG_FMT_SAMP_ONFOOT, true, out);
        if (rc == AS_VEHICLE)
            rc = read_state(line, len, RECD_MSG_FMT_SAMP_VEHICLE, false, out);
        return rc == ACCEPT;
    }
    case RECD_MSG_FMT_SAMP_ONFOOT:
    case RECD_MSG_FMT_SAMP_VEHICLE: return read_state(line, len, session_format, false, out) == ACCEPT;
    default: return 0;
    }
}
