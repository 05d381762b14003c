/* SPDX-License-Identifier: MIT */
/* Table-driven payload codec: typed field values <-> big-endian wire bytes, ItemStacks, and the
 * owned item slots that encoder and decoder keep for equipment and inventory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"

/* ---- value arena -------------------------------------------------------------------------------- */

void recap_arena_reset(recap_arena *a) { a->len = a->nfix = 0; }

void recap_arena_truncate(recap_arena *a, size_t len, size_t nfix)
{
    a->len = len;
    a->nfix = nfix;
}

void recap_arena_free(recap_arena *a)
{
    free(a->v);
    free(a->fix);
    memset(a, 0, sizeof(*a));
}

size_t recap_arena_push(recap_arena *a, size_t n)
{
    if (n > SIZE_MAX / sizeof(recd_recap_value) - a->len)
        return (size_t)-1;
    if (a->len + n > a->cap) {
        size_t cap = a->cap ? a->cap : 64;
        while (cap < a->len + n)
            cap *= 2;
        recd_recap_value *v = realloc(a->v, cap * sizeof(*v));
        if (!v)
            return (size_t)-1;
        a->v = v;
        a->cap = cap;
    }
    size_t first = a->len;
    if (n == 0)
        return first; /* a->v may still be NULL: no pointer arithmetic on it */
    memset(a->v + first, 0, n * sizeof(*a->v));
    a->len += n;
    return first;
}

static int arena_add_fix(recap_arena *a, size_t list_index, size_t rows_index)
{
    if (a->nfix + 2 > a->capfix) {
        size_t cap = a->capfix ? a->capfix * 2 : 16;
        size_t *f = realloc(a->fix, cap * sizeof(*f));
        if (!f)
            return -ENOMEM;
        a->fix = f;
        a->capfix = cap;
    }
    a->fix[a->nfix++] = list_index;
    a->fix[a->nfix++] = rows_index;
    return 0;
}

void recap_arena_fixup(recap_arena *a, size_t from)
{
    for (size_t i = from; i + 1 < a->nfix; i += 2)
        a->v[a->fix[i]].list.values = a->v + a->fix[i + 1];
}

/* ---- parsing -------------------------------------------------------------------------------------- */

static recap_perr parse_blob(recap_cur *c, size_t prefix, bool utf8, recd_recap_blob *out)
{
    if (!cur_has(c, prefix))
        return RECAP_E_TRUNCATED;
    const uint8_t *p = c->p + c->pos;
    size_t n = prefix == 1 ? p[0] : prefix == 2 ? ld_be16(p) : ld_be32(p);
    c->pos += prefix;
    if (!cur_has(c, n))
        return RECAP_E_TRUNCATED;
    out->data = c->p + c->pos;
    out->len = n;
    c->pos += n;
    if (utf8 && !recap_utf8_valid(out->data, n))
        return RECAP_E_UTF8;
    return RECAP_OK;
}

recap_perr recap_item_parse(recap_cur *c, recd_recap_item *it)
{
    memset(it, 0, sizeof(*it));
    return recap_item_parse_zeroed(c, it);
}

recap_perr recap_item_parse_zeroed(recap_cur *c, recd_recap_item *it)
{
    recap_perr e = parse_blob(c, 1, true, &it->key);
    if (e || it->key.len == 0)
        return e;
    if (!cur_has(c, 2))
        return RECAP_E_TRUNCATED;
    it->count = c->p[c->pos];
    it->flags = c->p[c->pos + 1];
    c->pos += 2;
    return parse_blob(c, 2, false, &it->data);
}

static recap_perr parse_scalar(recap_cur *c, recd_recap_ftype t, recd_recap_value *v)
{
    static const uint8_t width[] = {[RECD_RECAP_T_U8] = 1, [RECD_RECAP_T_U16] = 2,
                                    [RECD_RECAP_T_I32] = 4, [RECD_RECAP_T_I64] = 8,
                                    [RECD_RECAP_T_F32] = 4, [RECD_RECAP_T_F64] = 8};
    if (!cur_has(c, width[t]))
        return RECAP_E_TRUNCATED;
    const uint8_t *p = c->p + c->pos;
    c->pos += width[t];
    switch (t) {
    case RECD_RECAP_T_U8: v->u = p[0]; break;
    case RECD_RECAP_T_U16: v->u = ld_be16(p); break;
    case RECD_RECAP_T_I32: v->i = (int32_t)ld_be32(p); break;
    case RECD_RECAP_T_I64: v->i = (int64_t)ld_be64(p); break;
    case RECD_RECAP_T_F32: v->f32 = f32_from_bits(ld_be32(p)); break;
    default: v->f64 = f64_from_bits(ld_be64(p)); break;
    }
    return RECAP_OK;
}

static recap_perr parse_one(recap_cur *c, const recd_recap_field *f, recap_arena *a, size_t idx)
{
    switch (f->type) {
    case RECD_RECAP_T_U8:
    case RECD_RECAP_T_U16:
    case RECD_RECAP_T_I32:
    case RECD_RECAP_T_I64:
    case RECD_RECAP_T_F32:
    case RECD_RECAP_T_F64:
        return parse_scalar(c, f->type, &a->v[idx]);
    case RECD_RECAP_T_STR: return parse_blob(c, 1, true, &a->v[idx].blob);
    case RECD_RECAP_T_TEXT: return parse_blob(c, 2, true, &a->v[idx].blob);
    case RECD_RECAP_T_BYTES: return parse_blob(c, 4, false, &a->v[idx].blob);
    case RECD_RECAP_T_ITEM: return recap_item_parse(c, &a->v[idx].item);
    case RECD_RECAP_T_LIST: {
        if (!cur_has(c, 2))
            return RECAP_E_TRUNCATED;
        size_t rows = ld_be16(c->p + c->pos);
        c->pos += 2;
        a->v[idx].list.count = rows;
        if (rows == 0)
            return RECAP_OK;
        size_t first = a->len;
        for (size_t r = 0; r < rows; r++) {
            /* Rows hold no lists, so row slots stay contiguous. */
            size_t base = recap_arena_push(a, f->elem_count);
            if (base == (size_t)-1)
                return RECAP_E_NOMEM;
            for (size_t k = 0; k < f->elem_count; k++) {
                recap_perr e = parse_one(c, &f->elem[k], a, base + k);
                if (e)
                    return e;
            }
        }
        return arena_add_fix(a, idx, first) ? RECAP_E_NOMEM : RECAP_OK;
    }
    case RECD_RECAP_T_MOVEMENT:
        return recap_movement_parse(c, NULL);
    }
    return RECAP_E_TRUNCATED;
}

recap_perr recap_fields_parse(recap_cur *c, const recd_recap_field *fields, size_t n,
                              recap_arena *a, size_t first)
{
    for (size_t i = 0; i < n; i++) {
        recap_perr e = parse_one(c, &fields[i], a, first + i);
        if (e)
            return e;
    }
    return RECAP_OK;
}

/* ---- writing ---------------------------------------------------------------------------------- */

static int write_blob(recd_buf *out, size_t prefix, bool utf8, recd_recap_blob b)
{
    if (b.len && !b.data)
        return -EINVAL;
    size_t n = b.len;
    if (utf8) {
        if (!recap_utf8_valid(b.data, b.len))
            return -EINVAL;
        n = recap_utf8_fit(b.data, b.len, prefix == 1 ? RECAP_STR_MAX : RECAP_TEXT_MAX);
    } else if ((prefix == 2 && n > 0xFFFFu) || (uint64_t)n > 0xFFFFFFFFu) {
        return -EMSGSIZE;
    }
    uint8_t len[4];
    if (prefix == 1)
        len[0] = (uint8_t)n;
    else if (prefix == 2)
        st_be16(len, (uint16_t)n);
    else
        st_be32(len, (uint32_t)n);
    int rc = recd_buf_append(out, len, prefix);
    return rc ? rc : recd_buf_append(out, b.data, n);
}

int recap_item_write(recd_buf *out, const recd_recap_item *it)
{
    if (it->key.len == 0) {
        uint8_t zero = 0;
        return recd_buf_append(out, &zero, 1);
    }
    if (!recap_utf8_valid(it->key.data, it->key.len))
        return -EINVAL;
    if (recap_utf8_fit(it->key.data, it->key.len, RECAP_STR_MAX) == 0)
        return -EINVAL; /* truncation would turn it into the empty slot */
    int rc = write_blob(out, 1, true, it->key);
    if (rc)
        return rc;
    uint8_t cf[2] = {it->count, it->flags};
    rc = recd_buf_append(out, cf, 2);
    return rc ? rc : write_blob(out, 2, false, it->data);
}

static int write_one(recd_buf *out, const recd_recap_field *f, const recd_recap_value *v)
{
    uint8_t b[8];
    switch (f->type) {
    case RECD_RECAP_T_U8:
        if (v->u > 0xFFu)
            return -ERANGE;
        b[0] = (uint8_t)v->u;
        return recd_buf_append(out, b, 1);
    case RECD_RECAP_T_U16:
        if (v->u > 0xFFFFu)
            return -ERANGE;
        st_be16(b, (uint16_t)v->u);
        return recd_buf_append(out, b, 2);
    case RECD_RECAP_T_I32:
        if (v->i < INT32_MIN || v->i > INT32_MAX)
            return -ERANGE;
        st_be32(b, (uint32_t)(int32_t)v->i);
        return recd_buf_append(out, b, 4);
    case RECD_RECAP_T_I64:
        st_be64(b, (uint64_t)v->i);
        return recd_buf_append(out, b, 8);
    case RECD_RECAP_T_F32:
        st_be32(b, f32_to_bits(v->f32));
        return recd_buf_append(out, b, 4);
    case RECD_RECAP_T_F64:
        st_be64(b, f64_to_bits(v->f64));
        return recd_buf_append(out, b, 8);
    case RECD_RECAP_T_STR: return write_blob(out, 1, true, v->blob);
    case RECD_RECAP_T_TEXT: return write_blob(out, 2, true, v->blob);
    case RECD_RECAP_T_BYTES: return write_blob(out, 4, false, v->blob);
    case RECD_RECAP_T_ITEM: return recap_item_write(out, &v->item);
    case RECD_RECAP_T_LIST: {
        if (v->list.count > RECAP_LIST_MAX)
            return -EMSGSIZE;
        if (v->list.count && !v->list.values)
            return -EINVAL;
        st_be16(b, (uint16_t)v->list.count);
        int rc = recd_buf_append(out, b, 2);
        for (size_t r = 0; rc == 0 && r < v->list.count; r++)
            rc = recap_fields_write(out, f->elem, f->elem_count, v->list.values + r * f->elem_count);
        return rc;
    }
    case RECD_RECAP_T_MOVEMENT:
        return -EINVAL; /* only the encoder writes movement */
    }
    return -EINVAL;
}

int recap_fields_write(recd_buf *out, const recd_recap_field *fields, size_t n,
                       const recd_recap_value *vals)
{
    for (size_t i = 0; i < n; i++) {
        int rc = write_one(out, &fields[i], &vals[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int recap_fields_check(const recd_recap_field *fields, size_t n, const recd_recap_value *vals)
{
    /* Writing into a scratch buffer is the one definition of "valid"; events are small. */
    recd_buf scratch = {0};
    int rc = recap_fields_write(&scratch, fields, n, vals);
    recd_buf_free(&scratch);
    return rc;
}

