/* SPDX-License-Identifier: MIT */
/* The versioned-encoding decoder (docs/formats/sc2replay.md, "Versioned encoding"). */
#include "formats/sc2/sc2_versioned.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC2V_MAX_DEPTH 64
#define SC2V_DEFAULT_MAX_NODES (1u << 22)

void sc2v_init(sc2v_tree *t, const uint8_t *buf, size_t len)
{
    memset(t, 0, sizeof *t);
    t->buf = buf;
    t->len = len;
}

void sc2v_reset(sc2v_tree *t)
{
    t->n = 0;
    t->err[0] = 0;
    t->err_off = 0;
}

void sc2v_free(sc2v_tree *t)
{
    free(t->nodes);
    t->nodes = NULL;
    t->n = t->cap = 0;
}

static int fail(sc2v_tree *t, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, sizeof t->err, fmt, ap);
    va_end(ap);
    t->err_off = off;
    return -EBADMSG;
}

static int new_node(sc2v_tree *t, uint8_t kind, int64_t tag, uint32_t *out)
{
    size_t max = t->max_nodes ? t->max_nodes : SC2V_DEFAULT_MAX_NODES;
    if (t->n >= max)
        return -E2BIG;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        if (cap > max)
            cap = max;
        sc2v_node *nodes = realloc(t->nodes, cap * sizeof *nodes);
        if (!nodes)
            return -ENOMEM;
        t->nodes = nodes;
        t->cap = cap;
    }
    sc2v_node *n = &t->nodes[t->n];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->tag = tag;
    n->first = n->next = SC2V_NONE;
    *out = (uint32_t)t->n++;
    return 0;
}

/* Sign in bit 0 of the first byte, then 6 value bits; later bytes add 7 bits each, low first. */
static int read_vint(sc2v_tree *t, size_t *pos, int64_t *out)
{
    size_t start = *pos;
    if (*pos >= t->len)
        return fail(t, *pos, "integer cut by the end of the data");
    uint8_t b = t->buf[(*pos)++];
    bool negative = b & 1;
    uint64_t v = (b & 0x7f) >> 1;
    unsigned shift = 6;
    while (b & 0x80) {
        if (*pos >= t->len)
            return fail(t, start, "integer cut by the end of the data");
        if (shift > 62)
            return fail(t, start, "integer longer than 64 bits");
        b = t->buf[(*pos)++];
        uint64_t group = (uint64_t)(b & 0x7f);
        if (shift > 56 && (group >> (63 - shift)) != 0)
            return fail(t, start, "integer longer than 64 bits");
        v |= group << shift;
        shift += 7;
    }
    *out = negative ? -(int64_t)v : (int64_t)v;
    return 0;
}

static int read_count(sc2v_tree *t, size_t *pos, const char *what, int64_t *out)
{
    size_t at = *pos;
    int rc = read_vint(t, pos, out);
    if (rc < 0)
        return rc;
    if (*out < 0 || (uint64_t)*out > t->len - *pos)
        return fail(t, at, "%s count %lld exceeds the %zu bytes left", what, (long long)*out,
                    t->len - *pos);
    return 0;
}

static int decode_at(sc2v_tree *t, size_t *pos, int64_t tag, unsigned depth, uint32_t *out);

/* Decodes a child value and appends it to parent's list after *last. */
static int add_child(sc2v_tree *t, size_t *pos, uint32_t parent, int64_t tag, unsigned depth,
                     uint32_t *last)
{
    uint32_t c;
    int rc = decode_at(t, pos, tag, depth + 1, &c);
    if (rc < 0)
        return rc;
    if (*last == SC2V_NONE)
        t->nodes[parent].first = c;
    else
        t->nodes[*last].next = c;
    *last = c;
    return 0;
}

static int read_bytes(sc2v_tree *t, size_t *pos, size_t at, size_t nbytes, uint32_t node)
{
    if (nbytes > t->len - *pos)
        return fail(t, at, "%zu bytes declared, %zu left", nbytes, t->len - *pos);
    if (*pos > UINT32_MAX || nbytes > UINT32_MAX)
        return fail(t, at, "data beyond 4 GiB");
    t->nodes[node].off = (uint32_t)*pos;
    t->nodes[node].len = (uint32_t)nbytes;
    *pos += nbytes;
    return 0;
}

static int decode_at(sc2v_tree *t, size_t *pos, int64_t tag, unsigned depth, uint32_t *out)
{
    size_t at = *pos;
    if (depth > SC2V_MAX_DEPTH)
        return fail(t, at, "values nested deeper than %d", SC2V_MAX_DEPTH);
    if (*pos >= t->len)
        return fail(t, at, "value cut by the end of the data");
    uint8_t marker = t->buf[(*pos)++];
    if (marker > SC2V_INT)
        return fail(t, at, "unknown type marker 0x%02x", marker);
    uint32_t self;
    int rc = new_node(t, marker, tag, &self);
    if (rc < 0)
        return rc;
    *out = self;
    int64_t v = 0;
    uint32_t last = SC2V_NONE;
    switch ((sc2v_kind)marker) {
    case SC2V_ARRAY:
        if ((rc = read_count(t, pos, "array", &v)) < 0)
            return rc;
        t->nodes[self].i = v;
        for (int64_t k = 0; k < v; k++)
            if ((rc = add_child(t, pos, self, k, depth, &last)) < 0)
                return rc;
        return 0;
    case SC2V_BITARRAY:
        if ((rc = read_vint(t, pos, &v)) < 0)
            return rc;
        if (v < 0 || (uint64_t)v > (uint64_t)(t->len - *pos) * 8)
            return fail(t, at, "bit array of %lld bits exceeds the data", (long long)v);
        t->nodes[self].i = v;
        return read_bytes(t, pos, at, (size_t)((v + 7) / 8), self);
    case SC2V_BLOB:
        if ((rc = read_count(t, pos, "blob", &v)) < 0)
            return rc;
        t->nodes[self].i = v;
        return read_bytes(t, pos, at, (size_t)v, self);
    case SC2V_CHOICE:
        if ((rc = read_vint(t, pos, &v)) < 0)
            return rc;
        t->nodes[self].i = v;
        return add_child(t, pos, self, v, depth, &last);
    case SC2V_OPTIONAL:
        if (*pos >= t->len)
            return fail(t, at, "optional cut by the end of the data");
        t->nodes[self].i = t->buf[(*pos)++] != 0;
        return t->nodes[self].i ? add_child(t, pos, self, 0, depth, &last) : 0;
    case SC2V_STRUCT:
        if ((rc = read_count(t, pos, "struct field", &v)) < 0)
            return rc;
        t->nodes[self].i = v;
        for (int64_t k = 0; k < v; k++) {
            int64_t field_tag;
            if ((rc = read_vint(t, pos, &field_tag)) < 0)
                return rc;
            if ((rc = add_child(t, pos, self, field_tag, depth, &last)) < 0)
                return rc;
        }
        return 0;
    case SC2V_U8:
    case SC2V_U32:
    case SC2V_U64: {
        size_t width = marker == SC2V_U8 ? 1 : marker == SC2V_U32 ? 4 : 8;
        if (width > t->len - *pos)
            return fail(t, at, "%zu-byte integer cut by the end of the data", width);
        uint64_t u = 0;
        for (size_t k = 0; k < width; k++) /* big-endian, as s2protocol reads them */
            u = u << 8 | t->buf[*pos + k];
        *pos += width;
        t->nodes[self].i = (int64_t)u;
        return 0;
    }
    case SC2V_INT:
        if ((rc = read_vint(t, pos, &v)) < 0)
            return rc;
        t->nodes[self].i = v;
        return 0;
    }
    return fail(t, at, "unknown type marker 0x%02x", marker);
}

int sc2v_decode(sc2v_tree *t, size_t *pos, uint32_t *root)
{
    t->err[0] = 0;
    t->err_off = 0;
    return decode_at(t, pos, 0, 0, root);
}

const sc2v_node *sc2v_at(const sc2v_tree *t, uint32_t i)
{
    return i < t->n ? &t->nodes[i] : NULL;
}

const sc2v_node *sc2v_first(const sc2v_tree *t, const sc2v_node *n)
{
    return n ? sc2v_at(t, n->first) : NULL;
}

const sc2v_node *sc2v_next(const sc2v_tree *t, const sc2v_node *n)
{
    return n ? sc2v_at(t, n->next) : NULL;
}

const sc2v_node *sc2v_field(const sc2v_tree *t, const sc2v_node *n, int64_t tag)
{
    if (!n)
        return NULL;
    if (n->kind == SC2V_CHOICE || n->kind == SC2V_OPTIONAL)
        return sc2v_first(t, n);
    if (n->kind != SC2V_STRUCT)
        return NULL;
    for (const sc2v_node *c = sc2v_first(t, n); c; c = sc2v_next(t, c))
        if (c->tag == tag)
            return c;
    return NULL;
}

int64_t sc2v_int(const sc2v_tree *t, const sc2v_node *n, int64_t def)
{
    while (n && (n->kind == SC2V_OPTIONAL || n->kind == SC2V_CHOICE))
        n = sc2v_first(t, n);
    if (!n)
        return def;
    switch (n->kind) {
    case SC2V_INT:
    case SC2V_U8:
    case SC2V_U32:
    case SC2V_U64: return n->i;
    default: return def;
    }
}

bool sc2v_blob(const sc2v_tree *t, const sc2v_node *n, const uint8_t **data, size_t *len)
{
    if (!n || n->kind != SC2V_BLOB)
        return false;
    *data = t->buf + n->off;
    *len = n->len;
    return true;
}
