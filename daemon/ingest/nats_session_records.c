/* SPDX-License-Identifier: MIT */
/* nats:// inputs, the sessions bucket: a record of each nats-fed session (its open message, next
 * part number and last stream sequence written) so that the partition's next owner can take it
 * over, or a mark of a session that ended for good (kept by key in nats_closed_marks.c). The
 * worker writes them in order and reads them at a claim; the loop thread keeps them up to date
 * and opens the sessions read. */

#ifdef RECD_HAVE_NATS

#include "nats_source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "support/log.h"

static void count_record_failure(nats_source *src)
{
    pthread_mutex_lock(&src->lock);
    src->record_failures++;
    pthread_mutex_unlock(&src->lock);
}

/* Sends one write of the sessions bucket as a plain publish to the bucket's subject (what
 * kvStore_Put and kvStore_Delete send), its reply (the stream's acknowledgement) to inbox.no:
 * the writes of a round go out together and their replies are collected after (one round trip
 * per round, not one per write). */
static natsStatus send_record(nats_source *src, const kv_request *r)
{
    char subject[8 + sizeof src->sbucket + NATS_RECORD_KEY_MAX], reply[NATS_INBOX_MAX + 24];
    snprintf(subject, sizeof subject, "$KV.%s.%s", src->sbucket, r->key);
    snprintf(reply, sizeof reply, "%s.%llu", src->rinbox, (unsigned long long)r->no);
    natsMsg *m = NULL;
    natsStatus s = natsMsg_Create(&m, subject, reply, (const char *)r->val, (int)r->len);
    if (s == NATS_OK && r->del)
        s = natsMsgHeader_Set(m, "KV-Operation", "DEL");
    if (s == NATS_OK)
        s = natsConnection_PublishMsg(src->nc, m);
    natsMsg_Destroy(m);
    return s;
}

/* The replies to a round's writes until every one came or the deadline: ok[i] for list[i]. A
 * reply with an error, a status (503: no stream) or none at all is a failure. */
static void collect_replies(nats_source *src, kv_request **list, size_t n, bool *ok)
{
    size_t left = n, len = strlen(src->rinbox);
    uint64_t deadline = nats_mono_ms() + NATS_API_WAIT_MS;
    while (left) {
        uint64_t now = nats_mono_ms();
        if (now >= deadline)
            break;
        natsMsg *m = NULL;
        if (natsSubscription_NextMsg(&m, src->rsub, (int64_t)(deadline - now)) != NATS_OK)
            break;
        const char *subject = natsMsg_GetSubject(m);
        const char *status = NULL;
        const char *data = natsMsg_GetData(m);
        bool good = natsMsgHeader_Get(m, "Status", &status) != NATS_OK && data &&
                    !strstr(data, "\"error\"");
        if (strncmp(subject, src->rinbox, len) == 0 && subject[len] == '.') {
            uint64_t no = strtoull(subject + len + 1, NULL, 10);
            /* numbered in order: list[i]->no == list[0]->no + i */
            if (no >= list[0]->no && no - list[0]->no < n && !ok[no - list[0]->no]) {
                ok[no - list[0]->no] = good;
                left -= good;
                if (!good) /* an answer, a failure: no wait for what will not change it */
                    left = 0;
            }
        }
        natsMsg_Destroy(m);
    }
}

/* Writes the queued session records in order, up to NATS_RECORDS_ROUND in one round trip. One
 * that fails stops the round and is tried again at the next one with the rest behind it (sent
 * again even when stored: the later value stays last), so a record never overtakes an older
 * one. */
void nats_store_records(nats_source *src)
{
    pthread_mutex_lock(&src->lock);
    kv_request *list = src->req_head;
    src->req_head = src->req_tail = NULL;
    size_t n = src->nreq;
    src->nreq = 0;
    pthread_mutex_unlock(&src->lock);
    if (!list)
        return;
    natsStatus s = NATS_OK;
    if (!src->rsub) {
        natsInbox_Destroy(src->rinbox);
        src->rinbox = NULL;
        char wildcard[NATS_INBOX_MAX];
        s = natsInbox_Create(&src->rinbox);
        if (s == NATS_OK && strlen(src->rinbox) + 2 >= sizeof wildcard)
            s = NATS_ERR;
        if (s == NATS_OK) {
            snprintf(wildcard, sizeof wildcard, "%s.*", src->rinbox);
            s = natsConnection_SubscribeSync(&src->rsub, src->nc, wildcard);
        }
        if (s == NATS_OK)
            s = natsSubscription_SetPendingLimits(src->rsub, -1, -1);
    }
    uint64_t done = 0, written = 0;
    kv_request *round[NATS_RECORDS_ROUND];
    bool ok[NATS_RECORDS_ROUND];
    while (list && s == NATS_OK) {
        size_t k = 0;
        for (kv_request *r = list; r && k < NATS_RECORDS_ROUND; r = r->next)
            round[k++] = r;
        memset(ok, 0, k * sizeof *ok);
        size_t sent = 0;
        while (sent < k && (s = src->skv ? send_record(src, round[sent]) : NATS_ERR) == NATS_OK)
            sent++;
        if (sent)
            collect_replies(src, round, sent, ok);
        size_t i = 0;
        for (; i < k; i++) {
            if (!ok[i]) {
                nats_set_error(src, "session record", i < sent ? NATS_TIMEOUT : s);
                count_record_failure(src);
                pthread_mutex_lock(&src->lock);
                bool up = src->connected;
                pthread_mutex_unlock(&src->lock);
                /* Acknowledgements wait for it: given up after a few tries, server there. */
                if (!up || ++round[i]->tries < NATS_RECORD_TRIES)
                    break;
                log_warn("%s: session record %s given up", src->shown, round[i]->key);
            } else {
                written++;
            }
            done = round[i]->no;
            list = round[i]->next;
            free(round[i]);
            n--;
        }
        if (i < k) {
            s = NATS_ERR; /* the rest waits for the next round */
            break;
        }
    }
    pthread_mutex_lock(&src->lock);
    src->record_writes += written;
    if (list) { /* back in front of what was queued meanwhile */
        kv_request *last = list;
        while (last->next)
            last = last->next;
        last->next = src->req_head;
        if (!src->req_head)
            src->req_tail = last;
        src->req_head = list;
        src->nreq += n;
    }
    if (done > src->req_done)
        src->req_done = done;
    if (done && !src->stop)
        uv_async_send(&src->l->h.async); /* acknowledgements waited for these */
    pthread_mutex_unlock(&src->lock);
}

/* "rsr2" with the part number, the stream sequence and the highest wire seq written plus one (0:
 * none), then the open frame; "rsr1" (recd before packed messages) the same without the wire
 * seq; "rsc1" with the sequence only for a closed session's mark. Keys are
 * s.<partition>.<session key with '=' for '.'>. */
static taken_record *parse_record(nats_source *src, const char *key, const uint8_t *v, size_t len)
{
    const char *dot = key ? strchr(key, '.') : NULL;
    dot = dot ? strchr(dot + 1, '.') : NULL;
    bool closed = len == NATS_RECORD_HEAD && memcmp(v, "rsc1", 4) == 0;
    bool v2 = len >= 4 && memcmp(v, "rsr2", 4) == 0;
    size_t head = v2 ? NATS_RECORD_HEAD2 : NATS_RECORD_HEAD;
    if (!dot || strlen(dot + 1) > RECD_SESSION_KEY_MAX || strlen(key) >= NATS_RECORD_KEY_MAX ||
        (!closed && (len <= head || (!v2 && memcmp(v, "rsr1", 4) != 0) ||
                     len - head > (size_t)src->g->cfg->limits.max_frame))) {
        log_warn("%s: session record %s ignored: not a record of this recd version (%zu bytes)",
                 src->shown, key ? key : "?", len);
        return NULL;
    }
    size_t open_len = closed ? 0 : len - head;
    taken_record *t = calloc(1, sizeof *t + open_len);
    if (!t)
        return NULL;
    t->closed = closed;
    for (int i = 3; i >= 0; i--)
        t->part_no = t->part_no << 8 | v[4 + i];
    for (int i = 7; i >= 0; i--)
        t->seq = t->seq << 8 | v[8 + i];
    uint64_t wire = 0;
    for (int i = 7; v2 && i >= 0; i--)
        wire = wire << 8 | v[16 + i];
    t->has_wire = wire != 0;
    t->wire_seq = wire ? wire - 1 : 0;
    snprintf(t->kvkey, sizeof t->kvkey, "%s", key);
    snprintf(t->key, sizeof t->key, "%s", dot + 1);
    for (char *c = t->key; *c; c++)
        if (*c == '=')
            *c = '.';
    t->len = open_len;
    memcpy(t->open, v + head, open_len);
    return t;
}

void nats_free_taken(taken_record *t)
{
    while (t) {
        taken_record *next = t->next;
        free(t);
        t = next;
    }
}

/* Reads the session records of a partition just claimed and hands them to the loop thread, which
 * opens their sessions before it takes any message of the partition. */
natsStatus nats_load_records(nats_source *src, nats_partition *p)
{
    char filter[32];
    snprintf(filter, sizeof filter, "s.%u.>", p->no);
    kvWatchOptions o;
    kvWatchOptions_Init(&o);
    o.IgnoreDeletes = true;
    kvWatcher *w = NULL;
    natsStatus s = kvStore_Watch(&w, src->skv, filter, &o);
    taken_record *head = NULL, **tail = &head;
    size_t n = 0;
    while (s == NATS_OK) {
        kvEntry *e = NULL;
        s = kvWatcher_Next(&e, w, NATS_API_WAIT_MS);
        if (s != NATS_OK || !e)
            break; /* NULL: every record there was is read */
        taken_record *t = parse_record(src, kvEntry_Key(e), kvEntry_Value(e),
                                       (size_t)(kvEntry_ValueLen(e) > 0 ? kvEntry_ValueLen(e) : 0));
        kvEntry_Destroy(e);
        if (t) {
            *tail = t;
            tail = &t->next;
            n++;
        }
    }
    nats_retire_watcher(src, w);
    if (s != NATS_OK) {
        nats_free_taken(head);
        nats_set_error(src, "reading the session records", s);
        return s;
    }
    if (n)
        log_info("%s: partition %u: %zu sessions to take over", src->shown, p->no, n);
    pthread_mutex_lock(&src->lock);
    taken_record **end = &p->takeovers;
    while (*end)
        end = &(*end)->next;
    *end = head;
    if (head && !src->stop)
        uv_async_send(&src->l->h.async);
    pthread_mutex_unlock(&src->lock);
    return NATS_OK;
}

/* s.<partition>.<session key with '.' as '='>: a key's dots would split it into tokens, and '='
 * (valid in a bucket key) never occurs in a session key. */
static void record_key(uint32_t partition, const char *key, char *out, size_t cap)
{
    int n = snprintf(out, cap, "s.%u.", partition);
    size_t at = n > 0 && (size_t)n < cap ? (size_t)n : 0;
    for (const char *c = key; *c && at + 1 < cap; c++)
        out[at++] = *c == '.' ? '=' : *c;
    out[at] = '\0';
}

/* Queues a write of the sessions bucket for the worker, numbered; dropped (and counted) when too
 * many wait already (NATS_RECORDS_WAITING_SLACK), which only happens while the server is away for
 * long. limits.max_sessions is read as it is now: a reload may have changed it. Returns its number,
 * 0 when dropped. */
static uint64_t send_request(nats_source *src, kv_request *r)
{
    r->next = NULL;
    size_t most = 2 * (size_t)src->g->cfg->limits.max_sessions + NATS_RECORDS_WAITING_SLACK;
    pthread_mutex_lock(&src->lock);
    if (src->nreq >= most) {
        src->record_failures++;
        pthread_mutex_unlock(&src->lock);
        /* A warning (the log coalesces repeats): a session without a current record is taken
         * over from an older one, with more written twice (recd_nats_session_record_failures_total). */
        log_warn("%s: session record %s dropped: %zu writes wait already", src->shown, r->key,
                 most);
        free(r);
        return 0;
    }
    r->no = ++src->req_no;
    if (src->req_tail)
        src->req_tail->next = r;
    else
        src->req_head = r;
    src->req_tail = r;
    src->nreq++;
    uint64_t no = r->no;
    src->kicked = true;
    pthread_cond_broadcast(&src->wake);
    pthread_mutex_unlock(&src->lock);
    return no;
}

static void record_put(nats_source *src, nats_record *rec)
{
    kv_request *r = malloc(sizeof *r + NATS_RECORD_HEAD2 + rec->open_len);
    if (!r) {
        count_record_failure(src);
        return;
    }
    memset(r, 0, sizeof *r);
    memcpy(r->key, rec->key, sizeof r->key);
    uint32_t part = rec->s->part_no;
    uint8_t *v = r->val;
    memcpy(v, "rsr2", 4);
    uint64_t wire = rec->has_wire ? rec->wire_written + 1 : 0;
    for (int i = 0; i < 4; i++)
        v[4 + i] = (uint8_t)(part >> (8 * i));
    for (int i = 0; i < 8; i++) {
        v[8 + i] = (uint8_t)(rec->seq_written >> (8 * i));
        v[16 + i] = (uint8_t)(wire >> (8 * i));
    }
    memcpy(v + NATS_RECORD_HEAD2, rec->open, rec->open_len);
    r->len = NATS_RECORD_HEAD2 + rec->open_len;
    rec->part_stored = part;
    rec->seq_stored = rec->seq_written;
    rec->put_no = send_request(src, r);
}

static void record_delete(nats_source *src, const char *kvkey)
{
    kv_request *r = calloc(1, sizeof *r);
    if (!r) {
        count_record_failure(src);
        return;
    }
    snprintf(r->key, sizeof r->key, "%s", kvkey);
    r->del = true;
    send_request(src, r);
}

/* The session of a record ended for good: its record becomes a mark, "closed at seq". */
static void record_close(nats_source *src, nats_partition *p, const nats_record *rec)
{
    uint64_t seq = rec->seq_taken > rec->seq_written ? rec->seq_taken : rec->seq_written;
    kv_request *r = calloc(1, sizeof *r + NATS_RECORD_HEAD);
    if (!r) {
        count_record_failure(src);
        return;
    }
    memcpy(r->key, rec->key, sizeof r->key);
    memcpy(r->val, "rsc1", 4);
    for (int i = 0; i < 8; i++)
        r->val[8 + i] = (uint8_t)(seq >> (8 * i));
    r->len = NATS_RECORD_HEAD;
    send_request(src, r);
    nats_add_mark(p, rec->s->key, rec->key, seq);
}

static size_t drop_marks(nats_source *src, closed_mark *c)
{
    size_t n = 0;
    for (closed_mark *next; c; c = next, n++) {
        next = c->next;
        record_delete(src, c->kvkey);
        free(c);
    }
    return n;
}

/* Marks whose sequence the partition is acknowledged up to go, their records with them: no
 * message they stand for can come again. Without a message taken past a mark it stays, so a
 * publisher that closes sessions faster than the partition is acknowledged would grow them
 * without end: past limits.max_sessions a partition forgets its oldest, counted and logged, as a
 * redelivery of those sessions after a takeover would open them again. */
void nats_expire_marks(nats_source *src, nats_partition *p)
{
    if (!p->closed)
        return;
    uint64_t floor = p->highest_taken;
    for (size_t i = 0; i < p->npending; i++)
        if (p->pending[i].seq && p->pending[i].seq - 1 < floor)
            floor = p->pending[i].seq - 1;
    drop_marks(src, nats_take_expired_marks(p, floor));
    size_t cap = src->g->cfg->limits.max_sessions;
    if (p->nmarks <= cap)
        return;
    size_t n = drop_marks(src, nats_take_oldest_marks(p, cap));
    recd_metric_add(src->g->metrics->nats_closed_marks_dropped_total, 0, n);
    log_warn("%s: %zu sessions ended for good before the partition was acknowledged past them "
             "(limits.max_sessions %zu); forgot the %zu oldest, which a redelivery after a "
             "takeover would open again",
             p->peer, cap + n, cap, n);
}

void nats_record_mark(nats_record *rec)
{
    if (rec->dirty || !rec->src)
        return;
    if (rec->s->part_no == rec->part_stored && rec->seq_written == rec->seq_stored)
        return;
    rec->dirty = true;
    LIST_INSERT_HEAD(&rec->src->dirty, rec, dirty_link);
}

void nats_record_taken(nats_record *rec)
{
    if (!rec->src || rec->s->part_no == rec->part_stored) {
        nats_record_mark(rec);
        return;
    }
    if (rec->dirty) {
        LIST_REMOVE(rec, dirty_link);
        rec->dirty = false;
    }
    record_put(rec->src, rec);
}

/* The records changed since they were last stored, once per pass over the queues. A record whose
 * last write is still queued waits for it (and stays dirty): one write per record in flight keeps
 * the queue, which every acknowledgement waits for, as short as the number of sessions. With all
 * (a shutdown: the worker's last round), every one is queued. */
void nats_store_dirty(nats_source *src, bool all)
{
    pthread_mutex_lock(&src->lock);
    uint64_t stored = src->req_done;
    pthread_mutex_unlock(&src->lock);
    nats_record *next;
    for (nats_record *rec = LIST_FIRST(&src->dirty); rec; rec = next) {
        next = LIST_NEXT(rec, dirty_link);
        if (!all && rec->put_no > stored)
            continue;
        LIST_REMOVE(rec, dirty_link);
        rec->dirty = false;
        record_put(src, rec);
    }
}

nats_record *nats_record_of(nats_source *src, const recd_session *s)
{
    nats_record *rec = s ? s->input_record : NULL;
    return rec && rec->src == src ? rec : NULL;
}

/* An open was accepted from p: the session gets its record (unless it had one: a resume). A
 * session opened from another instance's record goes on with its part numbers, and what that
 * instance wrote of it is dropped when it comes again. */
void nats_record_open(nats_source *src, nats_partition *p, const recd_msg *m)
{
    recd_session *s = session_table_get(&src->g->sessions->table, m->session);
    if (!s || s->input_record)
        return;
    /* A packed message holds more than the open, which may lack its key (key_len 0): its record
     * holds the open encoded again, on its own. */
    recd_buf again = {0};
    const uint8_t *open = p->cur_data;
    size_t open_len = p->cur_len;
    if (p->cur_packed && recd_wire_encode(m, RECD_WIRE_BINARY,
                                            (size_t)src->g->cfg->limits.max_frame, &again) == 0) {
        open = again.data;
        open_len = again.len;
    }
    nats_record *rec = calloc(1, sizeof *rec + open_len);
    if (!rec || (p->cur_packed && open == p->cur_data)) {
        log_warn("session '%s': out of memory: no other instance can take it over", s->key);
        free(rec);
        recd_buf_free(&again);
        return;
    }
    rec->src = src;
    rec->s = s;
    rec->partition = p->no;
    memcpy(rec->open, open, open_len);
    rec->open_len = open_len;
    recd_buf_free(&again);
    record_key(p->no, s->key, rec->key, sizeof rec->key);
    /* A message that is only the open is taken once its record is stored. A packed one holds
     * the session's first samples too, written only when it is acknowledged: a next owner
     * reads it again (nats_replayed_open drops its open then). */
    rec->seq_written = p->cur_packed ? p->cur_seq - 1 : p->cur_seq;
    const taken_record *t = p->replaying;
    if (t) {
        rec->taken_over = true;
        s->part_no = t->part_no;
        rec->dup_upto = t->seq;
        rec->has_wire = rec->dup_wire = t->has_wire;
        rec->wire_written = rec->dup_wire_upto = t->wire_seq;
        p->dup_check = true;
        recd_metric_add(src->g->metrics->nats_sessions_taken_over_total, 0, 1);
        log_info("session '%s' taken over from its record: its next part is %u, stream messages "
                 "up to %llu were written by another instance",
                 s->key, t->part_no, (unsigned long long)t->seq);
    }
    s->input_record = rec;
    LIST_INSERT_HEAD(&src->records, rec, link);
    nats_forget_mark(p, s->key); /* its key holds this record now */
    record_put(src, rec);
}

/* A stream message of a session taken over here that the previous instance had written already. */
bool nats_redelivered(nats_source *src, nats_partition *p, const recd_session *s, bool has_seq,
                      uint64_t seq)
{
    nats_record *rec = nats_record_of(src, s);
    if (!rec)
        return false;
    bool dup = rec->dup_upto && p->cur_seq <= rec->dup_upto;
    /* A frame the record says was written, in a message above the stream sequence: published
     * twice, or a pack that overlaps what was written. The window closes at the first frame
     * beyond it, so that seqs a publisher starts again later are never taken for repeats. */
    if (!dup && rec->dup_wire && has_seq) {
        if (seq <= rec->dup_wire_upto)
            dup = true;
        else
            rec->dup_wire = false;
    }
    if (dup)
        recd_metric_add(src->g->metrics->nats_duplicates_dropped_total, 0, 1);
    return dup;
}

bool nats_replayed_open(nats_source *src, nats_partition *p, const recd_session *s)
{
    nats_record *rec = nats_record_of(src, s);
    if (!rec || !rec->taken_over || !p->cur_packed || p->cur_seq != rec->dup_upto + 1)
        return false;
    recd_metric_add(src->g->metrics->nats_duplicates_dropped_total, 0, 1);
    return true;
}

/* A session still open here whose nats:// input was started again by a reload (its record left
 * without a source): the new input goes on with it in the same part, and what the old one wrote
 * of it is dropped when it comes again. */
static void adopt_record(nats_source *src, nats_partition *p, nats_record *rec, const taken_record *t)
{
    rec->src = src;
    rec->partition = p->no;
    if (rec->seq_written > rec->dup_upto)
        rec->dup_upto = rec->seq_written;
    if (t->seq > rec->dup_upto)
        rec->dup_upto = t->seq;
    if (t->has_wire && (!rec->has_wire || t->wire_seq > rec->wire_written)) {
        rec->wire_written = t->wire_seq;
        rec->has_wire = true;
    }
    rec->dup_wire = rec->has_wire;
    rec->dup_wire_upto = rec->wire_written;
    p->dup_check = true;
    LIST_INSERT_HEAD(&src->records, rec, link);
    session_hand_to(&p->in, rec->s);
    log_info("session '%s' goes on through the restarted input; stream messages up to %llu were "
             "written already",
             rec->s->key, (unsigned long long)rec->dup_upto);
}

/* The open of a record being taken over: a session still open here from an earlier ownership of
 * the partition is closed first (its record stays), since the record may say another instance
 * went on with it meanwhile; one whose input was restarted by a reload goes on instead. Returns
 * true when the open is to be dispatched. */
bool nats_replay_open(nats_source *src, nats_partition *p, const recd_msg *m)
{
    if (m->type != RECD_MSG_OPEN)
        return false;
    recd_session *s = session_table_get(&src->g->sessions->table, m->session);
    if (!s)
        return true;
    nats_record *rec = s->input_record;
    if (rec && !rec->src && rec->partition == p->no) {
        adopt_record(src, p, rec, p->replaying);
        return false;
    }
    rec = nats_record_of(src, s);
    if (!rec) {
        log_info("session '%s' is not taken over from its record: it is open here already",
                 s->key);
        return false;
    }
    rec->keep = true;
    session_close(s, "taken over again from its record");
    return true;
}

/* A session with a record is freed: the record goes with a close message, or when the session
 * ended here for good (forgotten when idle, opened again); at a shutdown, a reload or after its
 * partition went to another instance it stays, with the last sequence written, for the next
 * owner to take the session over. */
void nats_record_session_freed(nats_record *rec)
{
    nats_source *src = rec->src;
    const recd_session *s = rec->s;
    if (src) {
        nats_partition *p = &src->parts[rec->partition];
        for (size_t k = 0; s->input_pending && k < p->npending; k++) /* written now */
            if (p->pending[k].s == s && p->pending[k].seq > rec->seq_written)
                rec->seq_written = p->pending[k].seq;
        LIST_REMOVE(rec, link);
        if (rec->dirty)
            LIST_REMOVE(rec, dirty_link);
        pthread_mutex_lock(&src->lock);
        bool owned = p->owned_shared;
        pthread_mutex_unlock(&src->lock);
        const recd_session *now = session_table_get(&src->g->sessions->table, s->key);
        bool replaced = now && now != s && now->input_record;
        /* keep or replaced: another session, here or elsewhere, has this key's record now. */
        if (!rec->keep && !replaced) {
            if (rec->closed_by_message || (owned && !src->retiring))
                record_close(src, p, rec);
            else if (s->part_no != rec->part_stored || rec->seq_written != rec->seq_stored)
                record_put(src, rec);
        }
    }
    ((recd_session *)(uintptr_t)s)->input_record = NULL;
    free(rec);
}

#endif
