/* SPDX-License-Identifier: MIT */
/* Internal: the .rec field tables that drive both text encodings of SA-MP states (JSON keys and
 * CSV columns, one entry per field), flattening a block to field values and back, and the
 * range-checked reading of a field's value. */
#ifndef RECD_REC_FIELDS_H
#define RECD_REC_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "recd/message.h"

typedef enum rec_ftype {
    MF_U8,
    MF_U16,
    MF_S16,
    MF_U32,
    MF_F32,
    MF_BITS, /* unsigned integer of `bits` width */
    MF_BOOL  /* one bit: JSON true/false, CSV 0/1 */
} rec_ftype;

/* Fields with alt != 0 are optional alternatives: exactly one alt group must be present. */
typedef struct rec_field {
    const char *csv; /* column name */
    const char *key; /* JSON key of the scalar or of its group */
    const char *sub; /* member name when the group is a JSON object, else NULL */
    int index;       /* position when the group is a JSON array, else -1 */
    int count;       /* array length when index >= 0 */
    rec_ftype type;
    unsigned bits;
    int alt;
    uint8_t key_len, sub_len; /* strlen of key and sub (0 without one): the JSON reader's keys */
} rec_field;

typedef struct rec_value {
    bool set;
    int64_t i; /* integer types */
    float f;   /* MF_F32 */
} rec_value;

#define REC_MAX_FIELDS 40

/* The table for a .rec format (NULL for other formats); *count receives its length. */
const rec_field *rec_fields(recd_msg_format f, size_t *count);
/* Field values of a .rec STATE message in table order; unused alternatives are left unset. */
void rec_flatten(const recd_msg *m, rec_value *vals);
/* Builds the block from values (all required ones set, one alt group; checked by the caller). */
void rec_unflatten(const rec_value *vals, recd_msg *m);

/* "t", "vehicle_id", "position[1]", "anim_flags.loop": the field's name in error messages. */
void rec_field_path(const rec_field *f, char *buf, size_t n);
/* Largest value the integer field holds. */
int64_t rec_field_max(const rec_field *f);
int64_t rec_field_min(const rec_field *f);

/* Reads a parsed JSON number/boolean into a field value with range checks. bool_as_int: booleans
 * are written 0/1 (CSV). On failure why gets e.g. "300 does not fit u8". */
bool rec_read_value(const rec_field *f, const json_t *j, bool bool_as_int, rec_value *v, char *why,
                    size_t whylen);
/* The same checks for numbers read as text (CSV): integer or real syntax already decided. */
bool rec_value_from_int(const rec_field *f, int64_t i, rec_value *v, char *why, size_t whylen);
bool rec_value_from_double(const rec_field *f, double d, rec_value *v, char *why, size_t whylen);

#endif
