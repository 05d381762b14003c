/* SPDX-License-Identifier: MIT */
/* Instant replay for .rec sessions, their part of the ring (record/session_ring.c): each sample
 * is one ring entry, its block with its session time; a save writes the blocks of the asked last
 * milliseconds as one finalized .rec named by its label, rebased to 0, through the writer like
 * any part. */
#include "rec_session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record/session_ring.h"
#include "record/sessions.h"
#include "support/log.h"

int rec_ring_put(recd_session *s, uint32_t t, const uint8_t *fields, size_t block_len)
{
    int rc;
    uint8_t *b = session_ring_add(s, t, block_len, 1, &rc);
    if (!b)
        return rc;
    recd_rec_block_set_time(b, t);
    memcpy(b + 4, fields, block_len - 4);
    return 0;
}

/* The blocks from first on, rebased to base, after the file header. */
static int write_blocks(recd_session *s, const session_ring_entry *first, size_t n,
                        size_t block_len, uint8_t rec_type, uint32_t base)
{
    uint8_t *out = session_reserve(s, RECD_REC_HEADER_SIZE + n * block_len);
    if (!out)
        return -ENOMEM;
    recd_rec_header_encode((recd_rec_type)rec_type, out);
    out += RECD_REC_HEADER_SIZE;
    for (const session_ring_entry *e = first; e; e = e->next, out += block_len) {
        memcpy(out, e->data, block_len);
        recd_rec_block_set_time(out, (uint32_t)e->time_ms - base);
    }
    return 0;
}

int rec_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why, size_t whylen)
{
    uint64_t newest;
    const session_ring_entry *first = session_ring_from(s, last_ms, &newest);
    if (!first) {
        snprintf(why, whylen, "save of session '%s': its ring holds no sample yet", s->key);
        return -EBADMSG;
    }
    size_t n = 0, block_len = first->len;
    for (const session_ring_entry *e = first; e; e = e->next)
        n++;
    uint32_t base = (uint32_t)first->time_ms;
    /* The writer works on the session's own queue: the part starts and ends here. */
    int rc = session_start_part(s, s->start_epoch_ms + base, 0);
    if (rc < 0) {
        snprintf(why, whylen, "save of session '%s': cannot name the file: %s", s->key, recd_strerror(rc));
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    if ((rc = session_ring_name_part(s, label)) < 0) {
        session_end_part(s, NULL, 0);
        if (rc == -ENOMEM)
            return rc;
        snprintf(why, whylen, "save of session '%s': the label makes the path too long", s->key);
        return -EBADMSG;
    }
    if (write_blocks(s, first, n, block_len, rec_state_of(s)->type, base) < 0) {
        session_end_part(s, NULL, 0);
        return -ENOMEM;
    }
    session_tally_add(s, 1, false, 0, 0, true, base);
    session_tally_add(s, n - 1, false, 0, 0, true, newest);
    log_info("session '%s': instant replay '%s' saved: %zu samples, %u ms (%u ms asked)", s->key,
             label, n, (uint32_t)newest - base, last_ms);
    session_end_part(s, NULL, 0);
    session_flush(s);
    return 0;
}
