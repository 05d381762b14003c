/* SPDX-License-Identifier: MIT */
/* Internal: the record layout of every CARLA packet kind as data, and the walkers that size,
 * convert (f32 <-> f64 vectors) and print/parse records by it, so that no packet has its own
 * codec. */
#ifndef RECD_CARLA_SCHEMA_H
#define RECD_CARLA_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "recd/carla.h"

typedef enum carla_ftype {
    CF_U8,
    CF_U16,
    CF_U32,
    CF_I32,
    CF_U64,
    CF_F32,
    CF_F64,
    CF_VEC,    /* 3 numbers of the file's width */
    CF_STR,    /* u16 length + UTF-8 */
    CF_LIST16, /* u16 count + records of sub */
    CF_LIST32  /* u32 count + records of sub */
} carla_ftype;

typedef struct carla_field {
    const char *name; /* NULL ends a list */
    uint8_t name_len;
    uint8_t type;
    const struct carla_field *sub;
} carla_field;

typedef struct carla_kind_info {
    const char *key;           /* JSON key; "" for kinds a state never holds (frame start/end) */
    const char *title;         /* CARLA's name, for messages: "Position" */
    bool has_count;            /* u16 count before the records */
    const carla_field *fields; /* one record (countless kinds: the whole payload) */
} carla_kind_info;

/* The kind's layout, or NULL for kinds outside 0..RECD_CARLA_KIND_COUNT-1. Layouts differ by
 * width only in their vectors; UE5's PhysicsControl, whose wheels are a compiler-padded struct,
 * does not parse as the UE4 layout and is kept raw. */
const carla_kind_info *carla_kind(unsigned kind, unsigned width);
/* Size of one record at p[0..len), or 0 when it does not fit. */
size_t carla_record_size(const carla_field *f, unsigned width, const uint8_t *p, size_t len);
/* The same for a record of kind, which must have a layout (events, positions). */
size_t carla_rec_size(unsigned kind, unsigned width, const uint8_t *p, size_t len);
/* Size of every record of a layout without strings or lists, or 0 when it has one. */
size_t carla_fixed_size(const carla_field *f, unsigned width);
/* Bytes of count records at p, or 0 when they do not fill exactly len bytes. */
bool carla_records_fill(const carla_field *f, unsigned width, uint32_t count, const uint8_t *p,
                        size_t len);
/* Each kind's record size in width 4 or 8 (indexed by kind) when every record of it has that
 * size (a kind with a count whose layout has no strings or lists), else 0: a constant table,
 * free to use from any thread. */
const uint16_t *carla_kind_fixed_sizes(unsigned width);
/* The same as carla_records_fill for records of kind (which has a count) in width 4 or 8, with
 * its fixed record size from carla_kind_fixed_sizes. */
bool carla_kind_records_fill(unsigned kind, unsigned width, uint32_t count, const uint8_t *p,
                             size_t len);
/* Appends one record at p, re-encoded from width wi to wo; *used = its input size. */
int carla_record_convert(const carla_field *f, unsigned wi, unsigned wo, const uint8_t *p,
                         size_t len, recd_buf *out, size_t *used);
/* Appends the record as a JSON object; *used = its size. -EINVAL for invalid UTF-8. */
int carla_record_to_json(const carla_field *f, unsigned width, const uint8_t *p, size_t len,
                         recd_buf *out, size_t *used);
/* Appends the record read from JSON object j with width-8 vectors; why names the field. */
int carla_record_from_json(const carla_field *f, const json_t *j, recd_buf *out, char *why,
                           size_t whylen);
/* A number as JSON: shortest text that reads back exactly; non-finite values as strings
 * ("inf", "-inf", "nan", "-nan", or "nan:0x<bits>"). */
int carla_put_f64(recd_buf *out, double d);
bool carla_get_f64(const json_t *j, double *d);

/* Id tables: the kind of file id `id`, or -1 when the table has none (then raw). */
int carla_kind_of_id(recd_carla_ids ids, unsigned id);
/* The file id of kind under ids, or -1 when that release cannot store it. */
int carla_id_of_kind(recd_carla_ids ids, unsigned kind);

#endif
