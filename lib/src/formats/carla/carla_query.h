/* SPDX-License-Identifier: MIT */
/* Internal: what CARLA's three queries share (carla_query_*.c): text output (recd_buf_printf),
 * the header lines, record sizes, and the table of actor names built from EventAdd records. */
#ifndef RECD_CARLA_QUERY_H
#define RECD_CARLA_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf_grow.h"
#include "base/bytes.h"
#include "formats/carla/carla_actor_index.h"
#include "formats/carla/carla_reader.h"
#include "recd/buf_printf.h"

/* Reads the header: 0; -EBADMSG with err when it is no CARLA log (the text form has printed
 * CARLA's line for it), or -ENOMEM. */
int carla_query_open(carla_reader *r, const uint8_t *buf, size_t len, bool json, recd_buf *out,
                     char *err, size_t errlen);
int carla_put_query_header(const carla_reader *r, recd_buf *out); /* Version, Map, Date, blank */
int carla_put_json_header(const carla_reader *r, recd_buf *out);  /* {"version":..,"width":..  */
int carla_put_vec(recd_buf *out, const uint8_t *p, unsigned w);   /* (x, y, z) in %g */
bool carla_is_event(const recd_carla_packet *p);

/* Blueprint ids by actor id, from EventAdd records. */
typedef struct actor_name {
    uint32_t id;
    uint8_t type;
    const uint8_t *name;
    uint16_t name_len;
} actor_name;

typedef struct actor_map {
    actor_name *a;
    size_t n, cap;
    carla_actor_index x; /* id -> slot in a; an erased id's entry is stale (checked on use) */
} actor_map;

actor_name *carla_actor_find(actor_map *m, uint32_t id);
int carla_actor_set(actor_map *m, const actor_name *a);
void carla_actor_erase(actor_map *m, uint32_t id); /* the last entry moves into its slot */
void carla_actor_map_free(actor_map *m);
actor_name carla_add_record(const uint8_t *q, unsigned w);
/* The actor's blueprint id padded to 35 columns (CARLA's setw(35) left), or as JSON (null). */
int carla_put_name_cell(recd_buf *out, actor_map *m, uint32_t id);
int carla_put_name_json(recd_buf *out, actor_map *m, uint32_t id);

#endif
