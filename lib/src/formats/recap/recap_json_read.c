/* SPDX-License-Identifier: MIT */
/* Reads the Recap parts of JSON messages (hostile input): open metadata, tick states and events.
 * Events are read generically from the tag table in recap.h; every key, type, range and length is
 * checked and errors name the field path ("inventory[2].count: 300 does not fit u8"). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/recap/recap_msg.h"
#include "base/json_text.h"
#include "base/text.h"
#include "base/why.h"

#define STR_MAX 255u
#define TEXT_MAX 65535u
#define BYTES_MAX (16u * 1024u * 1024u) /* far above any real payload; bounds hostile input */
#define LIST_MAX 65535u

/* Temporary allocations (decoded bytes, list rows) that live until the message is cloned. */
typedef struct scratch {
    void **ptrs;
    size_t n, cap;
} scratch;

static void *scratch_alloc(scratch *s, size_t n)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        void **p = realloc(s->ptrs, cap * sizeof *p);
        if (!p)
            return NULL;
        s->ptrs = p;
        s->cap = cap;
    }
    void *m = calloc(1, n ? n : 1);
    if (m)
        s->ptrs[s->n++] = m;
    return m;
}

static void scratch_free(scratch *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->ptrs[i]);
    free(s->ptrs);
}

/* Parsing context: the error text and whether the failure was memory. */
typedef struct rd {
    char *err;
    size_t errlen;
    int rc;
    scratch tmp;
} rd;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool fail(rd *r, const char *path, const char *fmt, ...)
{
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    recd_why(r->err, r->errlen, "%s: %s", path, why);
    if (r->rc == 0)
        r->rc = -EBADMSG;
    return false;
}

/* Field paths for the error text ("inventory[3].count"). Every item read builds its paths in
 * case it fails, so they are joined without printf; the text and its truncation (at most cap - 1
 * bytes, then NUL) are snprintf's. path_join(dst, cap, a, b) is "%s%s", path_index "%s[%zu]". */
static size_t path_put(char *dst, size_t cap, size_t n, const char *s)
{
    while (*s && n + 1 < cap)
        dst[n++] = *s++;
    return n;
}

static void path_join(char *dst, size_t cap, const char *a, const char *b)
{
    dst[path_put(dst, cap, path_put(dst, cap, 0, a), b)] = 0;
}

static void path_index(char *dst, size_t cap, const char *a, size_t i)
{
    char num[24], *d = num + sizeof num;
    *--d = 0;
    *--d = ']';
    do
        *--d = (char)('0' + i % 10);
    while ((i /= 10) != 0);
    *--d = '[';
    path_join(dst, cap, a, d);
}

static bool oom(rd *r)
{
    recd_why(r->err, r->errlen, "out of memory");
    r->rc = -ENOMEM;
    return false;
}

static bool check_keys(rd *r, const json_t *obj, const char *path, const char *const *a,
                       const char *const *b)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val)
    {
        (void)val;
        bool known = false;
        for (const char *const *l = a; l && *l && !known; l++)
            known = strcmp(*l, key) == 0;
        for (const char *const *l = b; l && *l && !known; l++)
            known = strcmp(*l, key) == 0;
        if (!known) {
            char safe[48];
            text_safe_excerpt(key, strlen(key), safe);
            return fail(r, path, "unknown key \"%s\"", safe);
        }
    }
    return true;
}

static const json_t *need(rd *r, const json_t *obj, const char *key, const char *path)
{
    json_t *j = json_object_get(obj, key);
    if (!j)
        fail(r, path, "missing key \"%s\"", key);
    return j;
}

static bool get_int(rd *r, const json_t *j, const char *path, int64_t min, int64_t max, int64_t *out)
{
    if (!json_is_integer(j))
        return fail(r, path, "expected an integer, got %s", json_text_type_name(j));
    json_int_t v = json_integer_value(j);
    if (v < min || v > max)
        return fail(r, path, "%lld is outside %lld..%lld", (long long)v, (long long)min,
                    (long long)max);
    *out = v;
    return true;
}

static bool get_uint(rd *r, const json_t *j, const char *path, const char *tname, int64_t max,
                     int64_t *out)
{
    if (!json_is_integer(j))
        return fail(r, path, "expected an integer, got %s", json_text_type_name(j));
    json_int_t v = json_integer_value(j);
    if (v < 0 || v > max)
        return fail(r, path, "%lld does not fit %s", (long long)v, tname);
    *out = v;
    return true;
}

static bool get_f64(rd *r, const json_t *j, const char *path, double *out)
{
    if (json_is_integer(j))
        *out = (double)json_integer_value(j);
    else if (json_is_real(j))
        *out = json_real_value(j);
    else
        return fail(r, path, "expected a number, got %s", json_text_type_name(j));
    return true;
}

static bool get_f32(rd *r, const json_t *j, const char *path, float *out)
{
    double d = 0;
    if (!get_f64(r, j, path, &d))
        return false;
    if (!text_double_to_f32(d, out))
        return fail(r, path, "%.9g does not fit f32", d);
    return true;
}

static bool get_string(rd *r, const json_t *j, const char *path, size_t max, recd_recap_blob *out)
{
    if (!json_is_string(j))
        return fail(r, path, "expected a string, got %s", json_text_type_name(j));
    size_t len = json_string_length(j);
    if (len > max)
        return fail(r, path, "%zu bytes, at most %zu fit", len, max);
    out->data = (const uint8_t *)json_string_value(j);
    out->len = len;
    return true;
}

static bool get_base64(rd *r, const json_t *j, const char *path, size_t max, recd_recap_blob *out)
{
    if (!json_is_string(j))
        return fail(r, path, "expected a base64 string, got %s", json_text_type_name(j));
    size_t len = json_string_length(j);
    if (len / 4 * 3 > max + 2)
        return fail(r, path, "more than %zu bytes", max);
    recd_buf b = {0};
    if (!text_base64_decode(json_string_value(j), len, &b)) {
        recd_buf_free(&b);
        return fail(r, path, "not valid base64 (standard alphabet, '=' padding)");
    }
    if (b.len > max) {
        recd_buf_free(&b);
        return fail(r, path, "%zu bytes, at most %zu fit", b.len, max);
    }
    uint8_t *copy = scratch_alloc(&r->tmp, b.len);
    if (!copy) {
        recd_buf_free(&b);
        return oom(r);
    }
    if (b.len)
        memcpy(copy, b.data, b.len);
    out->data = copy;
    out->len = b.len;
    recd_buf_free(&b);
    return true;
}

static bool get_vec3(rd *r, const json_t *obj, const char *key, double out[3])
{
    const json_t *j = need(r, obj, key, "");
    if (!j)
        return false;
    if (!json_is_array(j) || json_array_size(j) != 3)
        return fail(r, key, "expected an array of 3 numbers");
    for (size_t i = 0; i < 3; i++) {
        char path[32];
        path_index(path, sizeof path, key, i);
        if (!get_f64(r, json_array_get(j, i), path, &out[i]))
            return false;
    }
    return true;
}

/* An ItemStack object. slot_max >= 0: a state list entry that names its "slot" (< slot_max) and
 * may not be empty. */
static bool get_item(rd *r, const json_t *j, const char *path, int slot_max, recd_recap_item *it,
                     int *slot)
{
    static const char *const keys[] = {"key", "count", "flags", "data", NULL};
    static const char *const slot_key[] = {"slot", NULL};
    if (!json_is_object(j))
        return fail(r, path, "expected an item object, got %s", json_text_type_name(j));
    if (!check_keys(r, j, path, keys, slot_max >= 0 ? slot_key : NULL))
        return false;
    char sub[96];
    memset(it, 0, sizeof *it);
    if (slot_max >= 0) {
        path_join(sub, sizeof sub, path, ".slot");
        const json_t *s = json_object_get(j, "slot");
        int64_t v = 0;
        if (!s)
            return fail(r, path, "missing key \"slot\"");
        if (!get_int(r, s, sub, 0, slot_max - 1, &v))
            return false;
        *slot = (int)v;
    }
    const json_t *k = json_object_get(j, "key");
    if (!k)
        return fail(r, path, "missing key \"key\"");
    path_join(sub, sizeof sub, path, ".key");
    if (!get_string(r, k, sub, STR_MAX, &it->key))
        return false;
    const json_t *count = json_object_get(j, "count");
    const json_t *flags = json_object_get(j, "flags");
    const json_t *data = json_object_get(j, "data");
    if (it->key.len == 0) {
        if (slot_max >= 0)
            return fail(r, sub, "empty; leave an empty slot out of the list");
        if (count || flags || data)
            return fail(r, path, "an empty item (key \"\") has no count, flags or data");
        return true;
    }
    int64_t v = 0;
    if (!count)
        return fail(r, path, "missing key \"count\"");
    path_join(sub, sizeof sub, path, ".count");
    if (!get_uint(r, count, sub, "u8", 255, &v))
        return false;
    it->count = (uint8_t)v;
    if (flags) {
        path_join(sub, sizeof sub, path, ".flags");
        if (!get_uint(r, flags, sub, "u8", 255, &v))
            return false;
        it->flags = (uint8_t)v;
    }
    if (data) {
        path_join(sub, sizeof sub, path, ".data");
        if (!get_base64(r, data, sub, 65535, &it->data))
            return false;
    }
    return true;
}

static bool get_item_list(rd *r, const json_t *obj, const char *key, recd_recap_item *items, int n)
{
    const json_t *j = json_object_get(obj, key);
    if (!j)
        return true; /* all slots empty */
    if (!json_is_array(j))
        return fail(r, key, "expected an array of items, got %s", json_text_type_name(j));
    if (json_array_size(j) > (size_t)n)
        return fail(r, key, "more than %d items", n);
    bool used[RECD_RECAP_INVENTORY_SLOTS] = {false};
    for (size_t i = 0; i < json_array_size(j); i++) {
        char path[48];
        path_index(path, sizeof path, key, i);
        recd_recap_item it;
        int slot = 0;
        if (!get_item(r, json_array_get(j, i), path, n, &it, &slot))
            return false;
        if (used[slot])
            return fail(r, path, "slot %d appears twice", slot);
        used[slot] = true;
        items[slot] = it;
    }
    return true;
}

static bool get_value(rd *r, const recd_recap_field *f, const json_t *j, const char *path,
                      recd_recap_value *v);

static bool get_list(rd *r, const recd_recap_field *f, const json_t *j, const char *path,
                     recd_recap_list *l)
{
    if (!json_is_array(j))
        return fail(r, path, "expected an array, got %s", json_text_type_name(j));
    size_t rows = json_array_size(j);
    if (rows > LIST_MAX)
        return fail(r, path, "%zu rows, at most %u fit", rows, LIST_MAX);
    recd_recap_value *vals = NULL;
    if (rows && f->elem_count) {
        vals = scratch_alloc(&r->tmp, rows * f->elem_count * sizeof *vals);
        if (!vals)
            return oom(r);
    }
    const char *names[33];
    size_t nn = f->elem_count < 32 ? f->elem_count : 32;
    for (size_t i = 0; i < nn; i++)
        names[i] = f->elem[i].name;
    names[nn] = NULL;
    for (size_t row = 0; row < rows; row++) {
        char rpath[96];
        path_index(rpath, sizeof rpath, path, row);
        const json_t *o = json_array_get(j, row);
        if (!json_is_object(o))
            return fail(r, rpath, "expected an object, got %s", json_text_type_name(o));
        if (!check_keys(r, o, rpath, names, NULL))
            return false;
        for (size_t i = 0; i < f->elem_count; i++) {
            char fpath[128];
            size_t n = path_put(fpath, sizeof fpath, path_put(fpath, sizeof fpath, 0, rpath), ".");
            fpath[path_put(fpath, sizeof fpath, n, f->elem[i].name)] = 0;
            const json_t *m = json_object_get(o, f->elem[i].name);
            if (!m)
                return fail(r, rpath, "missing key \"%s\"", f->elem[i].name);
            if (!get_value(r, &f->elem[i], m, fpath, &vals[row * f->elem_count + i]))
                return false;
        }
    }
    l->values = vals;
    l->count = rows;
    return true;
}

static bool get_value(rd *r, const recd_recap_field *f, const json_t *j, const char *path,
                      recd_recap_value *v)
{
    int64_t i = 0;
    memset(v, 0, sizeof *v);
    switch (f->type) {
    case RECD_RECAP_T_U8:
        if (!get_uint(r, j, path, "u8", UINT8_MAX, &i))
            return false;
        v->u = (uint32_t)i;
        return true;
    case RECD_RECAP_T_U16:
        if (!get_uint(r, j, path, "u16", UINT16_MAX, &i))
            return false;
        v->u = (uint32_t)i;
        return true;
    case RECD_RECAP_T_I32: return get_int(r, j, path, INT32_MIN, INT32_MAX, &v->i);
    case RECD_RECAP_T_I64: return get_int(r, j, path, INT64_MIN, INT64_MAX, &v->i);
    case RECD_RECAP_T_F32: return get_f32(r, j, path, &v->f32);
    case RECD_RECAP_T_F64: return get_f64(r, j, path, &v->f64);
    case RECD_RECAP_T_STR: return get_string(r, j, path, STR_MAX, &v->blob);
    case RECD_RECAP_T_TEXT: return get_string(r, j, path, TEXT_MAX, &v->blob);
    case RECD_RECAP_T_BYTES: return get_base64(r, j, path, BYTES_MAX, &v->blob);
    case RECD_RECAP_T_ITEM: return get_item(r, j, path, -1, &v->item, NULL);
    case RECD_RECAP_T_LIST:
        if (f->elem_count > 32)
            return fail(r, path, "list rows too wide");
        return get_list(r, f, j, path, &v->list);
    default: return fail(r, path, "%s fields cannot appear in events", recd_recap_ftype_name(f->type));
    }
}

static bool get_tick(rd *r, const json_t *msg, uint64_t *tick)
{
    const json_t *j = need(r, msg, "tick", "");
    int64_t v = 0;
    if (!j || !get_int(r, j, "tick", 0, INT64_MAX, &v))
        return false;
    *tick = (uint64_t)v;
    return true;
}

int msg_recap_state_from_json(const json_t *msg, const char *const *skip,
                              recd_msg_recap_state **out, char *err, size_t errlen)
{
    static const char *const keys[] = {"tick", "pos", "rot", "vel", "flags", "pose", "game_mode",
                                       "hand_state", "health", "absorption", "equipment",
                                       "inventory", NULL};
    rd r = {err, errlen, 0, {0}};
    recd_recap_state st;
    memset(&st, 0, sizeof st);
    uint64_t tick = 0;
    int64_t v = 0;
    const json_t *j;
    bool ok = check_keys(&r, msg, "", keys, skip) && get_tick(&r, msg, &tick) &&
              get_vec3(&r, msg, "pos", st.pos) && get_vec3(&r, msg, "rot", st.rot) &&
              get_vec3(&r, msg, "vel", st.vel);
    ok = ok && (j = need(&r, msg, "flags", "")) && get_uint(&r, j, "flags", "u16", UINT16_MAX, &v);
    if (ok)
        st.flags = (uint16_t)v;
    ok = ok && (j = need(&r, msg, "pose", "")) && get_uint(&r, j, "pose", "u8", UINT8_MAX, &v);
    if (ok)
        st.pose = (uint8_t)v;
    ok = ok && (j = need(&r, msg, "game_mode", "")) &&
         get_uint(&r, j, "game_mode", "u8", UINT8_MAX, &v);
    if (ok)
        st.game_mode = (uint8_t)v;
    ok = ok && (j = need(&r, msg, "hand_state", "")) &&
         get_uint(&r, j, "hand_state", "u8", UINT8_MAX, &v);
    if (ok)
        st.hand_state = (uint8_t)v;
    ok = ok && (j = need(&r, msg, "health", "")) && get_f32(&r, j, "health", &st.health);
    ok = ok && (j = need(&r, msg, "absorption", "")) && get_f32(&r, j, "absorption", &st.absorption);
    ok = ok && get_item_list(&r, msg, "equipment", st.equipment, RECD_RECAP_EQUIPMENT_SLOTS);
    ok = ok && get_item_list(&r, msg, "inventory", st.inventory, RECD_RECAP_INVENTORY_SLOTS);
    if (ok) {
        *out = msg_recap_state_clone(tick, &st);
        if (!*out)
            oom(&r);
    }
    scratch_free(&r.tmp);
    return r.rc;
}

static bool reserved_key(const char *name)
{
    static const char *const reserved[] = {"type", "session", "seq", "tick", "action", NULL};
    for (const char *const *l = reserved; *l; l++)
        if (strcmp(*l, name) == 0)
            return true;
    return false;
}

int msg_recap_event_from_json(const json_t *msg, const char *const *skip,
                              recd_msg_recap_event **out, char *err, size_t errlen)
{
    rd r = {err, errlen, 0, {0}};
    uint64_t tick = 0;
    const json_t *a = NULL;
    if (!get_tick(&r, msg, &tick) || !(a = need(&r, msg, "action", ""))) {
        scratch_free(&r.tmp);
        return r.rc;
    }
    const recd_recap_tag_info *ti = NULL;
    if (!json_is_string(a)) {
        fail(&r, "action", "expected a string, got %s", json_text_type_name(a));
    } else {
        ti = recd_recap_tag_by_name(json_string_value(a));
        if (!ti || ti->kind != RECD_RECAP_KIND_EVENT ||
            strlen(json_string_value(a)) != json_string_length(a)) {
            char safe[48];
            text_safe_excerpt(json_string_value(a), json_string_length(a), safe);
            fail(&r, "action", "\"%s\" is not a Recap event action", safe);
            ti = NULL;
        }
    }
    if (!ti || ti->field_count > 32) {
        if (ti)
            fail(&r, "action", "too many fields");
        scratch_free(&r.tmp);
        return r.rc;
    }
    const char *names[34];
    names[0] = "tick";
    names[1] = "action";
    for (size_t i = 0; i < ti->field_count; i++)
        names[i + 2] = ti->fields[i].name;
    names[ti->field_count + 2] = NULL;
    recd_recap_value vals[32];
    bool ok = check_keys(&r, msg, "", names, skip);
    for (size_t i = 0; i < ti->field_count && ok; i++) {
        const char *name = ti->fields[i].name;
        if (reserved_key(name)) {
            ok = fail(&r, name, "field name clashes with a message key");
            break;
        }
        const json_t *j = need(&r, msg, name, "");
        ok = j && get_value(&r, &ti->fields[i], j, name, &vals[i]);
    }
    if (ok) {
        recd_recap_event ev = {ti->tag, ti->field_count, ti->field_count ? vals : NULL};
        *out = msg_recap_event_clone(tick, &ev);
        if (!*out)
            oom(&r);
    }
    scratch_free(&r.tmp);
    return r.rc;
}

static bool get_header_string(rd *r, const json_t *o, const char *key, size_t max,
                              recd_recap_blob *out)
{
    const json_t *j = json_object_get(o, key);
    return !j || get_string(r, j, key, max, out);
}

static bool get_encoder(rd *r, const json_t *o, recd_recap_header *h)
{
    static const char *const keys[] = {"keyframe_interval", "gzip_level", "member_limit",
                                       "compressor", NULL};
    const json_t *e = json_object_get(o, "encoder");
    if (!e)
        return true;
    if (!json_is_object(e))
        return fail(r, "encoder", "expected an object, got %s", json_text_type_name(e));
    if (!check_keys(r, e, "encoder", keys, NULL))
        return false;
    int64_t k = 0, g = 0, m = 0;
    const json_t *j;
    if (!(j = need(r, e, "keyframe_interval", "encoder")) ||
        !get_int(r, j, "encoder.keyframe_interval", 1, UINT32_MAX, &k) ||
        !(j = need(r, e, "gzip_level", "encoder")) || !get_int(r, j, "encoder.gzip_level", 1, 9, &g) ||
        !(j = need(r, e, "member_limit", "encoder")) ||
        !get_int(r, j, "encoder.member_limit", 1, UINT32_MAX, &m))
        return false;
    const json_t *c = json_object_get(e, "compressor"); /* optional: zlib when absent */
    recd_gzip_compressor comp = RECD_GZIP_ZLIB;
    if (c && recd_gzip_compressor_from_name(json_string_value(c), &comp) < 0)
        return fail(r, "encoder.compressor", "expected \"zlib\" or \"libdeflate\"");
    h->compressor = (uint8_t)comp;
    h->has_encoder_params = true;
    h->keyframe_interval = (uint32_t)k;
    h->gzip_level = (uint8_t)g;
    h->member_limit = (uint32_t)m;
    return true;
}

int msg_recap_open_from_json(const json_t *o, recd_msg_recap_open **out, char *err, size_t errlen)
{
    static const char *const keys[] = {"version", "name", "player", "uuid", "world", "origin",
                                       "start_time", "end_time", "frame_count", "weather",
                                       "time_of_day", "skin_texture", "skin_signature", "encoder",
                                       "extensions", NULL};
    rd r = {err, errlen, 0, {0}};
    if (!json_is_object(o)) {
        recd_why(err, errlen, ": expected an object, got %s", json_text_type_name(o));
        return -EBADMSG;
    }
    recd_recap_header h;
    recd_recap_header_init(&h);
    bool has_start = false, has_end = false, has_count = false;
    int64_t v = 0;
    const json_t *j;
    bool ok = check_keys(&r, o, "", keys, NULL);
    if (ok && (j = json_object_get(o, "version")) && (ok = get_int(&r, j, "version", 1, RECD_RECAP_VERSION, &v)))
        h.version = (uint8_t)v;
    ok = ok && get_header_string(&r, o, "name", STR_MAX, &h.name) &&
         get_header_string(&r, o, "player", STR_MAX, &h.player_name) &&
         get_header_string(&r, o, "uuid", STR_MAX, &h.player_uuid) &&
         get_header_string(&r, o, "world", STR_MAX, &h.world_name) &&
         get_header_string(&r, o, "skin_texture", TEXT_MAX, &h.skin_texture) &&
         get_header_string(&r, o, "skin_signature", TEXT_MAX, &h.skin_signature);
    if (ok && json_object_get(o, "origin"))
        ok = get_vec3(&r, o, "origin", h.origin);
    if (ok && (j = json_object_get(o, "start_time")))
        ok = has_start = get_int(&r, j, "start_time", INT64_MIN, INT64_MAX, &h.start_ms);
    if (ok && (j = json_object_get(o, "end_time")))
        ok = has_end = get_int(&r, j, "end_time", INT64_MIN, INT64_MAX, &h.end_ms);
    if (ok && (j = json_object_get(o, "frame_count")) &&
        (ok = has_count = get_int(&r, j, "frame_count", 0, UINT32_MAX, &v)))
        h.frame_count = (uint32_t)v;
    if (ok && (j = json_object_get(o, "weather")) &&
        (ok = get_int(&r, j, "weather", INT32_MIN, INT32_MAX, &v)))
        h.weather = (int32_t)v;
    if (ok && (j = json_object_get(o, "time_of_day")))
        ok = get_int(&r, j, "time_of_day", INT64_MIN, INT64_MAX, &h.time_of_day);
    /* A version-1 header has no place for these: writing it would drop them without a word. */
    if (ok && h.version < 2 && h.weather != 0)
        ok = fail(&r, "weather", "%" PRId32 ", but a version %u header has no weather (use 0 or "
                  "version 2+)", h.weather, (unsigned)h.version);
    if (ok && h.version < 2 && h.time_of_day != 0)
        ok = fail(&r, "time_of_day", "%" PRId64 ", but a version %u header has no time of day "
                  "(use 0 or version 2+)", h.time_of_day, (unsigned)h.version);
    ok = ok && get_encoder(&r, o, &h);
    if (ok && (j = json_object_get(o, "extensions")))
        ok = get_base64(&r, j, "extensions", TEXT_MAX, &h.ext_unknown);
    if (ok) {
        *out = msg_recap_open_clone(&h);
        if (!*out) {
            oom(&r);
        } else {
            (*out)->has_start_time = has_start;
            (*out)->has_end_time = has_end;
            (*out)->has_frame_count = has_count;
        }
    }
    scratch_free(&r.tmp);
    return r.rc;
}
