/* SPDX-License-Identifier: MIT */
/* benchgen send-nats: publishes the binary frames of prepared files to JetStream, one message per
 * frame on PREFIX.<partition>.~ (docs/fleet.md; PREFIX.<partition>.<key token> with
 * ?subjects=session on the URL), or with --pack-bytes packed per session
 * (docs/fleet.md, "Packed messages": until a pack holds that many bytes or its first frame is
 * --linger-ms old), the way librecd's nats:// client does (js_PublishAsync with a window of
 * unacknowledged publishes) but without encoding: the frames are already encoded, as send-tcp's
 * are; a packed frame after a session's first only loses its key. Waits for every ack and prints one JSON line with
 * monotonic timestamps and its own CPU time for the harness. Loopback servers only. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchgen.h"

#ifndef BG_HAVE_NATS

int bg_cmd_send_nats(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("benchgen send-nats: built without libnats (install libnats-dev and run "
          "bench/build.sh again)\n",
          stderr);
    return 77;
}

#else

#include <getopt.h>
#include <pthread.h>
#include <nats/nats.h>

#include "recd/fleet.h"
#include "recd/fleet_subject.h"

#define MAX_FILES 16
#define FRAME_HEADER 8u
#define PACK_BUCKETS 4096u
#define PACK_HEAD 24u

/* A session's frames waiting to be published as one packed message. */
typedef struct raw_pack {
    struct raw_pack *chain, *newer, *older;
    double opened;
    size_t klen;
    char key[72];
    char subject[RECD_FLEET_SUBJECT_MAX];
    uint8_t *buf;
    size_t len, cap;
    uint32_t count;
    bool seqs;
    uint64_t last_seq;
} raw_pack;

typedef struct packer {
    size_t pack_bytes;
    double linger_s;
    raw_pack *buckets[PACK_BUCKETS];
    raw_pack *oldest, *newest;
} packer;

static packer pk_state;

static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long lost_count;
static char first_lost[256];

/* libnats thread: JetStream refused a publish (no stream takes the subject, storage full...). */
static void on_pub_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
    (void)js;
    (void)closure;
    pthread_mutex_lock(&lost_lock);
    if (!lost_count)
        snprintf(first_lost, sizeof first_lost, "%s on %s",
                 pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err),
                 natsMsg_GetSubject(pae->Msg));
    lost_count++;
    pthread_mutex_unlock(&lost_lock);
}

static const char usage[] =
    "usage: benchgen send-nats --to nats://127.0.0.1:PORT/PREFIX[?subjects=partition|session]\n"
    "                          --file FILE [--file ...]\n"
    "                          [--partitions N] [--max-in-flight N] [--pack-bytes N --linger-ms MS]\n"
    "Publishes every binary frame of the files, in order, as one JetStream message on its\n"
    "partition's subject PREFIX.<p>.~ (subjects=session: PREFIX.<p>.<key>; partitions: default 8,\n"
    "as recd's nats.partitions), at most --max-in-flight (default 1024, librecd's client default)\n"
    "waiting for their acks, then waits for the rest.\n";

static bool loopback_host(const char *h)
{
    return strcmp(h, "localhost") == 0 || strncmp(h, "127.", 4) == 0;
}

static int publish(jsCtx *js, const char *subject, const uint8_t *p, size_t len, size_t pos,
                   unsigned long long *messages)
{
    natsStatus s = js_PublishAsync(js, subject, p, (int)len, NULL);
    if (s != NATS_OK) {
        fprintf(stderr, "benchgen send-nats: publishing at byte %zu: %s (%s)\n", pos,
                natsStatus_GetText(s), nats_GetLastError(NULL));
        return -1;
    }
    (*messages)++;
    return 0;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int append(raw_pack *k, const void *p, size_t n)
{
    if (k->len + n > k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 4096;
        while (cap < k->len + n)
            cap *= 2;
        uint8_t *b = realloc(k->buf, cap);
        if (!b)
            return -1;
        k->buf = b;
        k->cap = cap;
    }
    memcpy(k->buf + k->len, p, n);
    k->len += n;
    return 0;
}

/* Publishes pack k and forgets it. */
static int publish_pack(jsCtx *js, raw_pack *k, unsigned long long *messages)
{
    if (k->older)
        k->older->newer = k->newer;
    else
        pk_state.oldest = k->newer;
    if (k->newer)
        k->newer->older = k->older;
    else
        pk_state.newest = k->older;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < k->klen; i++)
        h = (h ^ (uint8_t)k->key[i]) * 16777619u;
    raw_pack **link = &pk_state.buckets[h % PACK_BUCKETS];
    while (*link != k)
        link = &(*link)->chain;
    *link = k->chain;
    k->buf[2] = k->seqs ? 1 : 0;
    put_le(k->buf + 4, k->count, 4);
    if (!k->seqs) {
        put_le(k->buf + 8, 0, 8);
        put_le(k->buf + 16, 0, 8);
    } else {
        put_le(k->buf + 16, k->last_seq, 8);
    }
    int rc = publish(js, k->subject, k->buf, k->len, 0, messages);
    free(k->buf);
    free(k);
    return rc;
}

/* The pack of key (klen bytes), made when the session has none waiting; NULL when out of memory. */
static raw_pack *pack_of(const char *key, size_t klen, const char *subject, bool *fresh)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < klen; i++)
        h = (h ^ (uint8_t)key[i]) * 16777619u;
    for (raw_pack *k = pk_state.buckets[h % PACK_BUCKETS]; k; k = k->chain)
        if (k->klen == klen && memcmp(k->key, key, klen) == 0) {
            *fresh = false;
            return k;
        }
    raw_pack *k = calloc(1, sizeof *k);
    uint8_t head[PACK_HEAD] = {0xD8, 1, 0, (uint8_t)klen};
    if (!k || append(k, head, sizeof head) < 0 || append(k, key, klen) < 0) {
        free(k);
        return NULL;
    }
    memcpy(k->key, key, klen);
    k->klen = klen;
    snprintf(k->subject, sizeof k->subject, "%s", subject);
    k->opened = bg_now();
    k->seqs = true;
    k->chain = pk_state.buckets[h % PACK_BUCKETS];
    pk_state.buckets[h % PACK_BUCKETS] = k;
    k->older = pk_state.newest;
    if (pk_state.newest)
        pk_state.newest->newer = k;
    else
        pk_state.oldest = k;
    pk_state.newest = k;
    *fresh = true;
    return k;
}

/* One frame (p, total bytes, key klen bytes at p + 9) into its session's pack: the first as it is,
 * later ones without their key. */
static int pack_frame(jsCtx *js, const uint8_t *p, size_t total, size_t klen, const char *subject,
                      unsigned long long *messages)
{
    bool fresh;
    raw_pack *k = pack_of((const char *)p + 9, klen, subject, &fresh);
    if (!k) {
        fputs("benchgen send-nats: out of memory\n", stderr);
        return -1;
    }
    bool has_seq = p[3] & 1;
    uint64_t seq = 0;
    for (int i = 7; has_seq && i >= 0; i--)
        seq = seq << 8 | p[9 + klen + i];
    if (!has_seq || (!fresh && seq <= k->last_seq))
        k->seqs = false;
    if (fresh)
        put_le(k->buf + 8, seq, 8);
    k->last_seq = seq;
    k->count++;
    int rc = 0;
    if (fresh) {
        rc = append(k, p, total);
    } else {
        uint8_t h[FRAME_HEADER + 1];
        memcpy(h, p, FRAME_HEADER);
        put_le(h + 4, total - FRAME_HEADER - klen, 4);
        h[FRAME_HEADER] = 0;
        rc = append(k, h, sizeof h);
        if (rc == 0)
            rc = append(k, p + FRAME_HEADER + 1 + klen, total - FRAME_HEADER - 1 - klen);
    }
    if (rc < 0) {
        fputs("benchgen send-nats: out of memory\n", stderr);
        return -1;
    }
    if (k->len >= pk_state.pack_bytes)
        rc = publish_pack(js, k, messages);
    while (rc == 0 && pk_state.oldest && bg_now() - pk_state.oldest->opened >= pk_state.linger_s)
        rc = publish_pack(js, pk_state.oldest, messages);
    return rc;
}

/* Publishes every frame of f; 0, or -1 with a message. */
static int publish_file(jsCtx *js, const bg_file *f, const char *prefix, unsigned partitions,
                        bool session_subjects, unsigned long long *messages)
{
    size_t pos = 0;
    char subject[RECD_FLEET_SUBJECT_MAX];
    while (pos < f->len) {
        const uint8_t *p = f->data + pos;
        if (f->len - pos < FRAME_HEADER + 1 || p[0] != 0xD7) {
            fprintf(stderr, "benchgen send-nats: no frame at byte %zu\n", pos);
            return -1;
        }
        size_t body = (size_t)p[4] | (size_t)p[5] << 8 | (size_t)p[6] << 16 | (size_t)p[7] << 24;
        size_t klen = p[8];
        if (body > f->len - pos - FRAME_HEADER || klen == 0 || klen + 1 > body) {
            fprintf(stderr, "benchgen send-nats: frame at byte %zu is cut short or has no key\n",
                    pos);
            return -1;
        }
        const char *key = (const char *)p + 9;
        int n = session_subjects
                    ? fleet_session_subject(prefix, key, klen, partitions, subject, sizeof subject)
                    : recd_fleet_subject(prefix, key, klen, partitions, subject, sizeof subject);
        if (n < 0) {
            fprintf(stderr, "benchgen send-nats: frame at byte %zu: no subject for its key\n", pos);
            return -1;
        }
        size_t total = FRAME_HEADER + body;
        int rc = pk_state.pack_bytes ? pack_frame(js, p, total, klen, subject, messages)
                                     : publish(js, subject, p, total, pos, messages);
        if (rc < 0)
            return -1;
        pos += total;
    }
    return 0;
}

int bg_cmd_send_nats(int argc, char **argv)
{
    static const struct option opts[] = {{"to", required_argument, NULL, 't'},
                                         {"file", required_argument, NULL, 'f'},
                                         {"partitions", required_argument, NULL, 'p'},
                                         {"max-in-flight", required_argument, NULL, 'm'},
                                         {"pack-bytes", required_argument, NULL, 'b'},
                                         {"linger-ms", required_argument, NULL, 'l'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    static bg_file files[MAX_FILES];
    size_t nfiles = 0;
    const char *to = NULL;
    long partitions = RECD_FLEET_DEFAULT_PARTITIONS, window = 1024;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't': to = optarg; break;
        case 'f':
            if (nfiles == MAX_FILES) {
                fprintf(stderr, "benchgen send-nats: at most %d files\n", MAX_FILES);
                return 2;
            }
            if (bg_file_map(&files[nfiles++], optarg) < 0)
                return 1;
            break;
        case 'p': partitions = atol(optarg); break;
        case 'm': window = atol(optarg); break;
        case 'b': pk_state.pack_bytes = (size_t)atol(optarg); break;
        case 'l': pk_state.linger_s = atof(optarg) / 1000.0; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    recd_fleet_url url;
    char err[256];
    if (!to || nfiles == 0 || partitions < 1 || partitions > (long)RECD_FLEET_PARTITIONS_MAX ||
        window < 1 || window > 1000000) {
        fputs(usage, stderr);
        return 2;
    }
    /* The URL's one option, as librecd's client takes it: the subject layout. */
    char base[512];
    const char *query = strchr(to, '?');
    bool session_subjects = false;
    snprintf(base, sizeof base, "%.*s", query ? (int)(query - to) : (int)strlen(to), to);
    if (query && strcmp(query, "?subjects=session") == 0) {
        session_subjects = true;
    } else if (query && strcmp(query, "?subjects=partition") != 0) {
        fprintf(stderr, "benchgen send-nats: %s: the only URL option is subjects=partition "
                        "(PREFIX.<p>.~, the default) or subjects=session (PREFIX.<p>.<key>)\n", to);
        return 2;
    }
    if (recd_fleet_url_parse(base, &url, err, sizeof err) < 0 || !loopback_host(url.host)) {
        fprintf(stderr, "benchgen send-nats: %s: %s\n", to,
                loopback_host(url.host) ? err : "only 127.0.0.0/8 servers are allowed");
        return 2;
    }
    char server[300];
    snprintf(server, sizeof server, "nats://%s:%u", url.host, url.port);
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsOptions jo;
    natsStatus s = natsConnection_ConnectTo(&nc, server);
    if (s == NATS_OK)
        s = jsOptions_Init(&jo);
    if (s == NATS_OK) {
        jo.PublishAsync.MaxPending = window;
        jo.PublishAsync.ErrHandler = on_pub_error;
        jo.PublishAsync.StallWait = 60000; /* ms: a stalled server ends the run with an error */
        s = natsConnection_JetStream(&js, nc, &jo);
    }
    if (s != NATS_OK) {
        fprintf(stderr, "benchgen send-nats: cannot connect to %s: %s\n", server,
                natsStatus_GetText(s));
        natsConnection_Destroy(nc);
        return 3;
    }

    unsigned long long messages = 0, bytes = 0;
    double t_first = bg_now();
    double cpu_first = bg_cpu_seconds(); /* mapping the files and connecting is not sending */
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nfiles; i++) {
        rc = publish_file(js, &files[i], url.prefix, (unsigned)partitions, session_subjects,
                          &messages);
        bytes += files[i].len;
    }
    while (rc == 0 && pk_state.oldest)
        rc = publish_pack(js, pk_state.oldest, &messages);
    double t_published = bg_now();
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 120000;
    natsStatus done = rc == 0 ? js_PublishAsyncComplete(js, &po) : NATS_ERR;
    double t_acked = bg_now();
    int unacked = 0;
    if (done != NATS_OK) {
        natsMsgList pending = {0};
        if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK) {
            unacked = pending.Count;
            natsMsgList_Destroy(&pending);
        }
    }
    pthread_mutex_lock(&lost_lock);
    unsigned long long lost = lost_count + (unsigned long long)unacked;
    pthread_mutex_unlock(&lost_lock);
    printf("{\"t_first\":%.6f,\"t_sent\":%.6f,\"t_acked\":%.6f,\"messages\":%llu,\"bytes\":%llu,"
           "\"lost\":%llu,\"cpu_s\":%.3f}\n",
           t_first, t_published, t_acked, messages, bytes, lost, bg_cpu_seconds() - cpu_first);
    if (lost)
        fprintf(stderr, "benchgen send-nats: %llu messages not confirmed by JetStream (first: %s)\n",
                lost, lost_count ? first_lost : "no ack in time");
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    for (size_t i = 0; i < nfiles; i++)
        bg_file_unmap(&files[i]);
    return rc < 0 ? 3 : lost ? 1 : 0;
}

#endif
