/* SPDX-License-Identifier: MIT */
/* Blizzard's versioned encoding (replay header, details, tracker events, ...): every value carries a
 * one-byte type marker, so any member decodes into a tree without per-build tables; only the names
 * of struct tags need knowledge. Decoding is bounded: counts are checked against the bytes left,
 * depth and node totals are capped, and damage is reported with its byte offset. */
#ifndef RECD_SC2_VERSIONED_H
#define RECD_SC2_VERSIONED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sc2v_kind {
    SC2V_ARRAY = 0,
    SC2V_BITARRAY = 1,
    SC2V_BLOB = 2,
    SC2V_CHOICE = 3,
    SC2V_OPTIONAL = 4,
    SC2V_STRUCT = 5,
    SC2V_U8 = 6,  /* also bool */
    SC2V_U32 = 7, /* also fourcc and big-endian real32 */
    SC2V_U64 = 8, /* also real64 */
    SC2V_INT = 9  /* variable-length, sign in bit 0 */
} sc2v_kind;

#define SC2V_NONE UINT32_MAX /* no node */

/* One decoded value. Children (struct fields, array items, a choice's or optional's value) are a
 * sibling list, linked by index so the node array may grow while decoding. */
typedef struct sc2v_node {
    uint8_t kind;
    int64_t tag;    /* this node's struct field tag, array index or choice tag in its parent */
    int64_t i;      /* integers; choice: tag; optional: 1 present / 0 absent; array/struct:
                       count; bitarray: bit count */
    uint32_t off;   /* blob and bitarray bytes: offset in the input */
    uint32_t len;   /* blob and bitarray byte length */
    uint32_t first; /* first child, or SC2V_NONE */
    uint32_t next;  /* next sibling, or SC2V_NONE */
} sc2v_node;

typedef struct sc2v_tree {
    const uint8_t *buf;
    size_t len;
    sc2v_node *nodes;
    size_t n, cap;
    size_t max_nodes; /* 0: the default cap */
    size_t err_off;   /* where decoding failed */
    char err[128];
} sc2v_tree;

void sc2v_init(sc2v_tree *t, const uint8_t *buf, size_t len);
void sc2v_reset(sc2v_tree *t); /* forgets the nodes, keeps their memory */
void sc2v_free(sc2v_tree *t);

/* Decodes one value at *pos (advanced past it) into *root. 0, -EBADMSG (t->err and t->err_off say
 * what and where), -E2BIG (node cap) or -ENOMEM. */
int sc2v_decode(sc2v_tree *t, size_t *pos, uint32_t *root);

/* Lookups, all NULL-tolerant. */
const sc2v_node *sc2v_at(const sc2v_tree *t, uint32_t i);
const sc2v_node *sc2v_first(const sc2v_tree *t, const sc2v_node *n);
const sc2v_node *sc2v_next(const sc2v_tree *t, const sc2v_node *n);
/* A struct's field by tag, a choice's or present optional's value (tag ignored); NULL otherwise. */
const sc2v_node *sc2v_field(const sc2v_tree *t, const sc2v_node *n, int64_t tag);
/* Integer value of an INT/U8/U32/U64 node (through present optionals and choices); def when none. */
int64_t sc2v_int(const sc2v_tree *t, const sc2v_node *n, int64_t def);
/* Blob bytes; false when n is no blob. */
bool sc2v_blob(const sc2v_tree *t, const sc2v_node *n, const uint8_t **data, size_t *len);

#endif
