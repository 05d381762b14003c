/* SPDX-License-Identifier: MIT */
/* The tree-free reader for CARLA state lines (a frame's packets), most of a CARLA session's JSON
 * bytes: one pass over the line, each packet's records encoded by the kind's layout
 * (carla_schema.h) as they are read, numbers converted in place (message/json/json_scan.h). It
 * only ever accepts what the jansson reader accepts, with the same values; whatever it is unsure
 * of (fields out of table order, "raw", text forms of non-finite numbers, escapes) it declines,
 * and the jansson reader reads the line and gives any error message. */
#include "formats/carla/carla_json_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_clone.h"
#include "formats/carla/carla_schema.h"
#include "message/json/json_scan.h"

static bool read_uint(reader *r, uint64_t max, uint64_t *v)
{
    bool is_int;
    int64_t i;
    double d;
    if (!read_number(r, &is_int, &i, &d) || !is_int || i < 0 || (uint64_t)i > max)
        return false;
    *v = (uint64_t)i;
    return true;
}

static bool put(recd_buf *out, const uint8_t *b, size_t n)
{
    return recd_buf_append(out, b, n) == 0;
}

static bool read_record(reader *r, const carla_field *f, recd_buf *out);

/* One field's value, appended as carla_record_from_json appends it (vectors 8 bytes a number). */
static bool read_value(reader *r, const carla_field *f, recd_buf *out)
{
    uint8_t b[8];
    uint64_t u;
    double d;
    switch (f->type) {
    case CF_U8: return read_uint(r, 0xFF, &u) && (b[0] = (uint8_t)u, put(out, b, 1));
    case CF_U16: return read_uint(r, 0xFFFF, &u) && (st_le16(b, (uint16_t)u), put(out, b, 2));
    case CF_U32: return read_uint(r, 0xFFFFFFFFu, &u) && (st_le32(b, (uint32_t)u), put(out, b, 4));
    case CF_U64: return read_uint(r, INT64_MAX, &u) && (st_le64(b, u), put(out, b, 8));
    case CF_I32: {
        bool is_int;
        int64_t i;
        if (!read_number(r, &is_int, &i, &d) || !is_int || i < INT32_MIN || i > INT32_MAX)
            return false;
        st_le32(b, (uint32_t)(int32_t)i);
        return put(out, b, 4);
    }
    case CF_F32:
        /* carla_get_f32 on a finite number: refused past the f32 range, else rounded. */
        if (!read_finite(r, &d) || fabs(d) > 3.4028234663852886e38)
            return false;
        st_le32(b, f32_to_bits((float)d));
        return put(out, b, 4);
    case CF_F64: return read_finite(r, &d) && (st_le64(b, f64_to_bits(d)), put(out, b, 8));
    case CF_VEC:
        if (!eat(r, '['))
            return false;
        for (int k = 0; k < 3; k++) {
            if ((k && !eat(r, ',')) || !read_finite(r, &d))
                return false;
            st_le64(b, f64_to_bits(d));
            if (!put(out, b, 8))
                return false;
        }
        return eat(r, ']');
    case CF_STR: {
        const char *s;
        size_t n;
        if (!read_plain_string(r, &s, &n) || n > 0xFFFF)
            return false;
        st_le16(b, (uint16_t)n);
        return put(out, b, 2) && put(out, (const uint8_t *)s, n);
    }
    case CF_LIST16:
    case CF_LIST32: {
        /* The count goes before the records: its place is kept and filled at the end. */
        size_t at = out->len, width = f->type == CF_LIST16 ? 2 : 4;
        memset(b, 0, sizeof b);
        if (!eat(r, '[') || !put(out, b, width))
            return false;
        uint64_t n = 0;
        if (!eat(r, ']')) {
            do {
                if (!read_record(r, f->sub, out))
                    return false;
                n++;
            } while (eat(r, ','));
            if (!eat(r, ']'))
                return false;
        }
        if (n > (f->type == CF_LIST16 ? 0xFFFFu : 0xFFFFFFFFu))
            return false;
        if (f->type == CF_LIST16)
            st_le16(out->data + at, (uint16_t)n);
        else
            st_le32(out->data + at, (uint32_t)n);
        return true;
    }
    default: return false;
    }
}

/* A record object with its fields in table order (the order they are written), each once. */
static bool read_record(reader *r, const carla_field *f, recd_buf *out)
{
    if (!eat(r, '{'))
        return false;
    for (const carla_field *g = f; g->name; g++) {
        if (g != f && !eat(r, ','))
            return false;
        skip_ws(r);
        if (!eat_expected_key(r, g->name, g->name_len) || !eat(r, ':') || !read_value(r, g, out))
            return false;
    }
    /* Its '}' is not the line's last byte (which closes the line). */
    return eat(r, '}') && r->p != r->end;
}

/* The kind a state key names (the jansson reader's search), or RECD_CARLA_KIND_COUNT. */
static unsigned kind_of_key(const char *k, size_t kn)
{
    unsigned kind = RECD_CARLA_EVENT_ADD;
    while (kind < RECD_CARLA_KIND_COUNT && !key_is(recd_carla_kind_name(kind), k, kn))
        kind++;
    return kind;
}

/* A packet of kind: an array of records, or for a kind without a count its one value. */
static bool read_packet(reader *r, unsigned kind, recd_buf *data, recd_carla_packet *p, size_t *at)
{
    const carla_kind_info *ki = carla_kind(kind, 8);
    if (!ki || !ki->fields || !ki->fields[0].name)
        return false;
    memset(p, 0, sizeof *p);
    p->kind = (uint8_t)kind;
    *at = data->len;
    if (!ki->has_count) {
        /* Read as the object {"value": v}: a layout of that one field. */
        if (ki->fields[1].name || !key_is(ki->fields[0].name, "value", 5) ||
            !read_value(r, &ki->fields[0], data))
            return false;
    } else {
        if (!eat(r, '['))
            return false;
        if (!eat(r, ']')) {
            do {
                if (!read_record(r, ki->fields, data) || data->len - *at > UINT32_MAX)
                    return false;
                p->count++;
            } while (eat(r, ','));
            if (!eat(r, ']'))
                return false;
        }
    }
    p->len = (uint32_t)(data->len - *at);
    return true;
}

enum { K_TYPE, K_SESSION, K_SEQ, K_FRAME, K_ELAPSED, K_DURATION, K_COMMON };

typedef struct state_line {
    recd_carla_frame f;
    const char *session;
    size_t session_len;
    bool has_seq;
    int64_t seq;
} state_line;

static int common_key(const char *k, size_t kn)
{
    static const char *const names[K_COMMON] = {"type", "session", "seq",
                                                "frame", "elapsed", "duration"};
    for (int i = 0; i < K_COMMON; i++)
        if (key_is(names[i], k, kn))
            return i;
    return K_COMMON;
}

static bool read_common(reader *r, int k, state_line *s)
{
    bool is_int;
    double d;
    int64_t v;
    switch (k) {
    case K_TYPE: skip_ws(r); return eat_expected_key(r, "state", 5); /* the plain "state" */
    case K_SESSION:
        return read_plain_string(r, &s->session, &s->session_len) &&
               recd_session_key_valid(s->session, s->session_len);
    case K_SEQ:
        s->has_seq = true;
        return read_number(r, &is_int, &s->seq, &d) && is_int && s->seq >= 0;
    case K_FRAME:
        if (!read_number(r, &is_int, &v, &d) || !is_int || v < 0)
            return false;
        s->f.id = (uint64_t)v;
        return true;
    case K_ELAPSED: return read_finite(r, &s->f.elapsed);
    default: s->f.has_duration = true; return read_finite(r, &s->f.duration);
    }
}

/* The line into s; packets and their bytes into pk and data (offsets at[]). */
static bool read_state(const char *line, size_t len, state_line *s, recd_carla_packet *pk,
                       size_t *at, recd_buf *data)
{
    while (len && is_space(line[len - 1]))
        len--;
    if (!len || line[len - 1] != '}') /* the final byte that bounds the scans (json_scan.h) */
        return false;
    reader r = {line, line + len};
    unsigned seen_common = 0;
    uint32_t seen_kinds = 0;
    if (!eat(&r, '{'))
        return false;
    do {
        const char *k;
        size_t kn;
        if (!read_plain_string(&r, &k, &kn) || kn == 0 || !eat(&r, ':'))
            return false;
        int c = common_key(k, kn);
        if (c < K_COMMON) {
            if ((seen_common >> c & 1u) || !read_common(&r, c, s))
                return false; /* repeated, or a value not plainly valid */
            seen_common |= 1u << c;
            continue;
        }
        unsigned kind = kind_of_key(k, kn); /* "raw", "save" and unknown keys: declined */
        if (kind >= RECD_CARLA_KIND_COUNT || (seen_kinds >> kind & 1u) ||
            !read_packet(&r, kind, data, &pk[s->f.count], &at[s->f.count]))
            return false; /* (a repeated key is refused by jansson: at most one packet a kind) */
        seen_kinds |= 1u << kind;
        s->f.count++;
    } while (eat(&r, ','));
    const unsigned needed = 1u << K_TYPE | 1u << K_FRAME | 1u << K_ELAPSED;
    return eat(&r, '}') && r.p == r.end && (seen_common & needed) == needed;
}

int carla_json_fast_state(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out)
{
    if (session_format != RECD_MSG_FMT_CARLA)
        return 0; /* without a session format the jansson reader tells the format by the keys */
    recd_carla_packet pk[RECD_CARLA_KIND_COUNT]; /* a kind at most once */
    size_t at[RECD_CARLA_KIND_COUNT];
    state_line s;
    memset(&s, 0, sizeof s);
    s.f.width = 8;
    recd_buf data = {0};
    recd_carla_frame *frame = NULL;
    if (read_state(line, len, &s, pk, at, &data)) {
        for (size_t i = 0; i < s.f.count; i++)
            pk[i].data = data.data ? data.data + at[i] : NULL; /* only empty packets */
        s.f.packets = pk;
        frame = recd__carla_frame_clone(&s.f);
    }
    recd_buf_free(&data);
    if (!frame)
        return 0; /* (out of memory too: the jansson reader then says so) */
    recd_msg_init(out, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    out->type = RECD_MSG_STATE;
    out->format = RECD_MSG_FMT_CARLA;
    if (s.session) {
        memcpy(out->session, s.session, s.session_len);
        out->session[s.session_len] = 0;
    }
    out->has_seq = s.has_seq;
    out->seq = s.has_seq ? (uint64_t)s.seq : 0;
    out->carla_state = frame;
    return 1;
}
