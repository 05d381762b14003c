/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the SC2 versioned decoder: the first byte picks a single value (the replay
 * header, details) or a tracker-event stream exported as the common event stream; every node and
 * field text handed out is touched, and a decode must never claim bytes beyond the input. */
#include <stdlib.h>
#include <string.h>

#include "formats/sc2/sc2_events.h"
#include "formats/sc2/sc2_versioned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t sink;

static void touch_tree(const sc2v_tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const sc2v_node *n = &t->nodes[i];
        sink += (uint64_t)n->i + (uint64_t)n->tag;
        if (n->kind == SC2V_BLOB || n->kind == SC2V_BITARRAY) {
            if ((size_t)n->off + n->len > t->len)
                abort();
            for (uint32_t k = 0; k < n->len; k++)
                sink += t->buf[n->off + k];
        }
    }
}

static int on_event(void *data, const recd_replay_event *ev)
{
    (void)data;
    for (size_t i = 0; i < ev->fields_len; i++)
        sink += (uint8_t)ev->fields[i];
    sink += strlen(ev->kind) + (uint64_t)ev->t_raw;
    if (ev->fields_len < 2 || ev->fields[0] != '{' || ev->fields[ev->fields_len - 1] != '}')
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *buf = data + 1;
    size_t len = size - 1;
    if (data[0] & 1) {
        char err[256];
        sc2_tracker_export(buf, len, on_event, NULL, err, sizeof err);
        return 0;
    }
    sc2v_tree t;
    sc2v_init(&t, buf, len);
    size_t pos = 0;
    uint32_t root;
    int rc = sc2v_decode(&t, &pos, &root);
    if (pos > len || (rc < 0 && t.err_off > len))
        abort();
    touch_tree(&t);
    sc2v_free(&t);
    return 0;
}
