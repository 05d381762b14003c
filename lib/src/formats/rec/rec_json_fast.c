/* SPDX-License-Identifier: MIT */
/* The tree-free reader for .rec state lines, the message NDJSON senders send most: one pass over
 * the bytes, keys mapped to table fields by the canonical order (else by first byte), numbers
 * converted in place. It only ever accepts what the jansson reader accepts, with the same values;
 * whatever it is unsure of it declines, and the jansson reader gives the error message. */
#include "formats/rec/rec_json_fast.h"

#include <float.h>
#include <pthread.h>
#include <string.h>

#include "formats/rec/rec_fields.h"
#include "base/text.h"

/* ---- numbers --------------------------------------------------------------------------------- */

/* Powers of ten that are exact doubles (10^22 < 2^53 * 2^22 is the last one). */
static const double exact_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Adds the digits at p to *mant (decimal) and returns where they end; unsigned bytes, so the
 * loop needs no sign extension. */
static inline const char *add_digits(const char *p, uint64_t *mant)
{
    uint64_t m = *mant;
    for (unsigned dg; (dg = (unsigned)(unsigned char)*p - '0') <= 9; p++)
        m = m * 10 + dg;
    *mant = m;
    return p;
}

/* text_parse_number's answer as a value: the caller's results are then never addressed by a call,
 * so they stay in registers on the common path. */
typedef struct parsed_number {
    bool ok, is_int;
    int64_t i;
    double d;
} parsed_number;

static __attribute__((noinline)) parsed_number parse_number_slowly(const char *s, size_t len)
{
    parsed_number n = {false, false, 0, 0};
    n.ok = text_parse_number(s, len, &n.is_int, &n.i, &n.d);
    return n;
}

static inline const char *number_end(const char *s, const char *p, bool *is_int, int64_t *i,
                                     double *d)
{
    parsed_number n = parse_number_slowly(s, (size_t)(p - s));
    *is_int = n.is_int;
    *i = n.i;
    *d = n.d;
    return n.ok ? p : NULL;
}

/* Reads the longest JSON number at p and returns where it ends, or NULL when the text there is no
 * number or not one this reader takes. No bound is checked: the text must end in a byte that no
 * number holds (the line's closing '}', or a NUL). What follows is the caller's to check. */
static inline __attribute__((always_inline)) const char *scan_number(const char *p, bool *is_int,
                                                                     int64_t *i, double *d)
{
    const char *s = p;
    bool neg = *p == '-';
    p += neg;
    /* mant takes every digit of the integer and fraction parts; it wraps past 19 digits, but it
     * is only used with at most 18 (the digit count, nd, decides). A leading 0 stands alone, and
     * a lone 0 needs no loop. */
    const char *start = p;
    unsigned first = (unsigned)(unsigned char)*p - '0';
    if (first > 9)
        return NULL;
    uint64_t mant = first;
    p++;
    if (first != 0)
        p = add_digits(p, &mant);
    else if (is_digit(*p)) /* a leading zero */
        return NULL;
    ptrdiff_t nd = p - start;
    if (*p != '.' && (*p | 0x20) != 'e') { /* an integer ('E' | 0x20 is 'e') */
        if (nd > 18) /* near or past the int64 range */
            return number_end(s, p, is_int, i, d);
        *is_int = true;
        *i = neg ? -(int64_t)mant : (int64_t)mant;
        return p;
    }
    int frac = 0;
    if (*p == '.') {
        const char *fs = ++p;
        unsigned f1 = (unsigned)(unsigned char)*p - '0';
        if (f1 > 9) /* a fraction has a digit */
            return NULL;
        mant = mant * 10 + f1;
        p = add_digits(p + 1, &mant);
        frac = (int)(p - fs);
        nd += frac;
    }
    int exp = 0;
    if ((*p | 0x20) == 'e') {
        p++;
        bool eneg = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        const char *es = p;
        for (; is_digit(*p); p++)
            if (exp < 100000)
                exp = exp * 10 + (*p - '0');
        if (p == es || p - s > 400) /* text_parse_number's length cap, and its answer */
            return NULL;
        if (eneg)
            exp = -exp;
    }
    /* Clinger's fast path: an integer below 2^53 times or over an exact power of ten is one
     * correctly rounded IEEE operation, so it equals strtod's result. Only an exponent with
     * leading zeros can make such a text long, and that was checked against the cap above. */
    int e10 = exp - frac;
    if (nd <= 15 && e10 >= -22 && e10 <= 22) {
        double v = (double)mant;
        v = e10 < 0 ? v / exact_pow10[-e10] : v * exact_pow10[e10];
        *is_int = false;
        *d = neg ? -v : v;
        return p;
    }
    return number_end(s, p, is_int, i, d);
}

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

/* ---- tokens ---------------------------------------------------------------------------------- */

/* The text read is a line whose last byte is its closing '}' (read_state checks that first). That
 * byte stops every scan for white space, digits or a number's signs and marks, so those scans need
 * no bound check as long as they start before it: they do, because each starts just after a byte
 * that was read as something else than that final '}' (an object member's '}' that is the final
 * byte is refused on the spot). Only the scans that can pass a '}' (strings, fixed words) check
 * the bound. */
typedef struct reader {
    const char *p, *end;
} reader;

/* JSON white space but '\n': a line with a line break inside goes to the jansson reader, which
 * refuses it ("a message must fit on one line"). */
static inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static inline void skip_ws(reader *r)
{
    /* Most tokens follow the last directly: one compare says so (all JSON space is <= ' '). */
    while ((unsigned char)*r->p <= ' ' && is_space(*r->p))
        r->p++;
}

static inline bool eat(reader *r, char c)
{
    if (*r->p == c) { /* the usual case: no white space before it */
        r->p++;
        return true;
    }
    skip_ws(r);
    if (*r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

/* Bytes that may stand in a plain string: printable ASCII but '"' and '\\'. */
#define PLAIN16(c) ((c) >= 0x20 && (c) < 0x7F && (c) != '"' && (c) != '\\')
#define PLAIN4(c) PLAIN16(c), PLAIN16((c) + 1), PLAIN16((c) + 2), PLAIN16((c) + 3)
#define PLAIN16X(c) PLAIN4(c), PLAIN4((c) + 4), PLAIN4((c) + 8), PLAIN4((c) + 12)
static const bool plain_byte[256] = {
    PLAIN16X(0x00), PLAIN16X(0x10), PLAIN16X(0x20), PLAIN16X(0x30),
    PLAIN16X(0x40), PLAIN16X(0x50), PLAIN16X(0x60), PLAIN16X(0x70),
};

/* Where the plain string body at p ends (its closing '"'), or NULL: an escape, a control or
 * non-ASCII byte, or no closing quote. Given the pointers, not the reader, so that no reader
 * needs an address and its position can stay in a register. */
static const char *plain_string_end(const char *p, const char *end)
{
    while (p < end && plain_byte[(unsigned char)*p])
        p++;
    return p < end && *p == '"' ? p : NULL;
}

/* A string of printable ASCII without escapes (every key and value the fast path accepts). */
static inline bool read_plain_string(reader *r, const char **s, size_t *n)
{
    skip_ws(r);
    if (*r->p != '"')
        return false;
    const char *e = plain_string_end(r->p + 1, r->end);
    if (!e)
        return false;
    *s = r->p + 1;
    *n = (size_t)(e - *s);
    r->p = e + 1;
    return true;
}

static bool read_number(reader *r, bool *is_int, int64_t *i, double *d)
{
    skip_ws(r);
    const char *e = scan_number(r->p, is_int, i, d);
    if (!e)
        return false;
    r->p = e; /* a number must be followed by ',', ']' or '}': the caller checks */
    return true;
}

/* a[0..n) equals b[0..n): words of eight or four bytes, the last one overlapping the one before,
 * so a key of a few bytes costs a few compares and no call. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        uint64_t x, y;
        for (size_t k = 0; k + 8 < n; k += 8) {
            memcpy(&x, a + k, 8);
            memcpy(&y, b + k, 8);
            if (x != y)
                return false;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + n - 4, 4);
        memcpy(&y1, b + n - 4, 4);
        return x0 == y0 && x1 == y1;
    }
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/* The quoted key `key` (plain ASCII, from the table) next in the text: the canonical order
 * predicts most keys, and matching the prediction needs no scan of the string. */
static inline bool eat_expected_key(reader *r, const char *key, size_t kl)
{
    if ((size_t)(r->end - r->p) < kl + 2 || r->p[0] != '"' || r->p[kl + 1] != '"' ||
        !same_bytes(r->p + 1, key, kl))
        return false;
    r->p += kl + 2;
    return true;
}

static inline bool key_is(const char *key, const char *k, size_t kn)
{
    return strncmp(key, k, kn) == 0 && key[kn] == 0; /* k holds no NUL (plain string) */
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

static inline uint64_t load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

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
    w.a = load64(text);
    w.a_mask = load64(ones);
    w.b = load64(text + w.b_at);
    w.b_mask = load64(ones + w.b_at);
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
        (((load64(r->p) ^ w->a) & w->a_mask) | ((load64(r->p + w->b_at) ^ w->b) & w->b_mask)))
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
