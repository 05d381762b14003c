/* SPDX-License-Identifier: MIT */
/* Copies of carla message parts that own their bytes, each in one allocation (storage = itself),
 * for the message model and the readers that fill a part in place and keep a copy. */
#include "formats/carla/carla_clone.h"

#include <stdlib.h>
#include <string.h>

recd_carla_open *recd__carla_open_clone(const recd_carla_open *o)
{
    recd_carla_open *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *o;
    c->map = strdup(o->map ? o->map : "");
    if (!c->map) {
        free(c);
        return NULL;
    }
    return c;
}

recd_carla_frame *recd__carla_frame_clone(const recd_carla_frame *f)
{
    size_t bytes = sizeof *f + f->count * sizeof *f->packets;
    for (size_t i = 0; i < f->count; i++)
        bytes += f->packets[i].len;
    recd_carla_frame *c = malloc(bytes);
    if (!c)
        return NULL;
    *c = *f;
    c->packets = (recd_carla_packet *)(c + 1);
    uint8_t *data = (uint8_t *)(c->packets + f->count);
    for (size_t i = 0; i < f->count; i++) {
        c->packets[i] = f->packets[i];
        if (f->packets[i].len)
            memcpy(data, f->packets[i].data, f->packets[i].len);
        c->packets[i].data = data;
        data += f->packets[i].len;
    }
    c->storage = c;
    return c;
}

recd_carla_event *recd__carla_event_clone(const recd_carla_event *e)
{
    recd_carla_event *c = malloc(sizeof *c + e->len);
    if (!c)
        return NULL;
    *c = *e;
    if (e->len)
        memcpy(c + 1, e->data, e->len);
    c->data = (const uint8_t *)(c + 1);
    c->storage = c;
    return c;
}
