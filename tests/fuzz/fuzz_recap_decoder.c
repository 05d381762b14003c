/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the Recap decoder: decode any input, touch every value handed out, and
 * when the input is valid, re-encode what was decoded: that must succeed and decode again to
 * the same number of ticks (docs/formats/recap.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recd/recap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz {
    uint64_t sink; /* reading every byte lets ASan catch dangling spans */
    recd_recap_encoder *e;
    recd_buf out;
    int enc_rc;
} fz;

static void touch(fz *z, recd_recap_blob b)
{
    for (size_t i = 0; i < b.len; i++)
        z->sink += b.data[i];
}

static void touch_item(fz *z, const recd_recap_item *it)
{
    touch(z, it->key);
    touch(z, it->data);
    z->sink += it->count + it->flags;
}

static void touch_values(fz *z, const recd_recap_field *f, size_t n, const recd_recap_value *v)
{
    for (size_t i = 0; i < n; i++) {
        switch (f[i].type) {
        case RECD_RECAP_T_STR:
        case RECD_RECAP_T_TEXT:
        case RECD_RECAP_T_BYTES: touch(z, v[i].blob); break;
        case RECD_RECAP_T_ITEM: touch_item(z, &v[i].item); break;
        case RECD_RECAP_T_LIST:
            for (size_t r = 0; r < v[i].list.count; r++)
                touch_values(z, f[i].elem, f[i].elem_count, v[i].list.values + r * f[i].elem_count);
            break;
        default: z->sink += v[i].u; break;
        }
    }
}

static int fz_header(void *ctx, const recd_recap_header *h)
{
    fz *z = ctx;
    recd_recap_encoder_options opt;
    recd_recap_encoder_options_from_header(h, &opt);
    z->enc_rc = recd_recap_encoder_new(&z->e, h, &opt, recd_buf_sink(&z->out));
    return 0;
}

static int fz_tick(void *ctx, uint64_t tick, const recd_recap_state *s, const recd_recap_event *ev,
                   size_t n)
{
    fz *z = ctx;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        touch_item(z, &s->equipment[i]);
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++)
        touch_item(z, &s->inventory[i]);
    for (size_t k = 0; k < n; k++) {
        const recd_recap_tag_info *ti = recd_recap_tag_info_get(ev[k].tag);
        if (!ti || ti->kind != RECD_RECAP_KIND_EVENT || ti->field_count != ev[k].field_count)
            abort();
        touch_values(z, ti->fields, ti->field_count, ev[k].fields);
    }
    if (z->e && z->enc_rc == 0)
        z->enc_rc = recd_recap_encoder_tick(z->e, tick, s, ev, n);
    return 0;
}

static int fz_member(void *ctx, uint64_t end_tick, uint64_t end_off)
{
    fz *z = ctx;
    (void)end_off;
    if (z->e && z->enc_rc == 0)
        z->enc_rc = recd_recap_encoder_flush_at(z->e, end_tick);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz z;
    memset(&z, 0, sizeof(z));
    recd_recap_callbacks cb = {fz_header, fz_tick, NULL, fz_member, &z};
    recd_recap_decode_options opt = {.max_member_size = 1u << 20};
    recd_recap_decode_result res;
    recd_report rep = {.limit = 16};
    int rc = recd_recap_decode(data, size, &opt, &cb, &res, &rep);
    if (res.valid_end > size || (rc == 0 && recd_report_errors(&rep) != 0))
        abort();
    if (z.e) {
        recd_recap_finish_info fi;
        if (z.enc_rc == 0)
            z.enc_rc = recd_recap_encoder_finish(z.e, &fi);
        recd_recap_encoder_free(z.e);
        /* Out-of-range tick counts and oversized headers are the only acceptable refusals. */
        if (rc == 0 && z.enc_rc != 0 && z.enc_rc != -ERANGE && z.enc_rc != -EMSGSIZE)
            abort();
        if (rc == 0 && z.enc_rc == 0) {
            recd_recap_decode_result again;
            if (recd_recap_decode(z.out.data, z.out.len, &opt, NULL, &again, NULL) < 0 &&
                again.ticks != res.ticks)
                abort();
            if (again.ticks != res.ticks)
                abort();
        }
    }
    recd_buf_free(&z.out);
    recd_report_free(&rep);
    return 0;
}
