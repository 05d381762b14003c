/* SPDX-License-Identifier: MIT */
/* nats_subjects: the two halves of the subject layout measurement (bench/harness/nats_subjects.py).
 * `publish` creates a stream like recd's (PREFIX.>, file storage, limits retention, optionally
 * max_bytes) and publishes packed-size messages round-robin over N sessions, either on a subject
 * per session (PREFIX.<partition>.<key>) or per partition (PREFIX.<partition>, the key only in
 * the message; or PREFIX.<partition>.~, which today's recd consumers, filtering PREFIX.<p>.>,
 * take as they are), with a window of unacknowledged async publishes. `drain` creates a durable
 * pull consumer per partition and takes the backlog, acknowledging each message as recd does.
 * Each prints one JSON line with its wall and CPU time. Loopback servers only (the driver starts
 * one). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <nats/nats.h>

#define KEY_MAX 64
#define SUBJECT_MAX 256
#define PACK_HEAD 24u
#define PULL_BATCH 256
#define PULL_EXPIRES_NS 2000000000LL /* 2 s: a pull that outlives the backlog ends with a 408 */
#define PARTITIONS_MAX 1024

typedef struct options {
    const char *url, *stream, *prefix, *layout;
    unsigned sessions, partitions, window;
    unsigned long messages;
    size_t size;
    int64_t max_bytes;
} options;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* recd_fleet_partition (recd/fleet.h): FNV-1a, 32 bit, of the key modulo the partition count. */
static uint32_t partition_of(const char *key, size_t len, uint32_t partitions)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)key[i];
        h *= 16777619u;
    }
    return h % partitions;
}

static bool per_session(const options *o)
{
    return strcmp(o->layout, "session") == 0;
}

/* PREFIX.<p>.~: one subject per partition that still matches recd's filter PREFIX.<p>.> ('~'
 * never occurs in a session key, so no session's subject is ever this one). */
static bool partition_token(const options *o)
{
    return strcmp(o->layout, "partition-token") == 0;
}

static void fail(const char *what, natsStatus s)
{
    fprintf(stderr, "nats_subjects: %s: %s\n", what, natsStatus_GetText(s));
    nats_PrintLastErrorStack(stderr);
    exit(1);
}

static unsigned long long pub_errors;
static char first_error[200];

/* libnats thread: a publish JetStream refused or did not confirm. */
static void on_pub_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
    (void)js;
    (void)closure;
    if (!pub_errors++)
        snprintf(first_error, sizeof first_error, "%s",
                 pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
}

static void connect_js(const options *o, natsConnection **nc, jsCtx **js, int64_t window)
{
    natsOptions *no = NULL;
    natsStatus s = natsOptions_Create(&no);
    if (s == NATS_OK)
        s = natsOptions_SetURL(no, o->url);
    if (s == NATS_OK)
        s = natsOptions_SetMaxPendingMsgs(no, 1000000); /* a full pull batch never overflows */
    if (s == NATS_OK)
        s = natsConnection_Connect(nc, no);
    natsOptions_Destroy(no);
    if (s != NATS_OK)
        fail("connect", s);
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 60000; /* ms: consumer creation on a big store takes a while on 2.9 */
    jo.PublishAsync.MaxPending = window;
    jo.PublishAsync.ErrHandler = on_pub_error;
    jo.PublishAsync.StallWait = 60000;
    s = natsConnection_JetStream(js, *nc, &jo);
    if (s != NATS_OK)
        fail("JetStream context", s);
}

/* recd's stream (daemon/ingest/nats_worker.c, ensure_setup): PREFIX.>, file storage, the
 * defaults for everything else (limits retention, discard old, no per-subject limit). */
static void create_stream(const options *o, jsCtx *js)
{
    char subject[SUBJECT_MAX];
    snprintf(subject, sizeof subject, "%s.>", o->prefix);
    const char *subjects[] = {subject};
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = o->stream;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    if (o->max_bytes > 0)
        sc.MaxBytes = o->max_bytes; /* retention as a fleet would set it: issue 4043's case */
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_AddStream(&si, js, &sc, NULL, &jerr);
    if (s != NATS_OK)
        fail("create the stream", s);
    jsStreamInfo_Destroy(si);
}

/* How many packed .rec state frames (about 80 bytes each, docs/fleet.md) a message of this size
 * holds with its header and a 20-byte key; nats_subjects.py reports samples/s with the same. */
static uint32_t frames_per_message(size_t size)
{
    size_t n = (size - PACK_HEAD - 20) / 80;
    return n ? (uint32_t)n : 1;
}

/* A packed message's header (docs/fleet.md, "Packed messages") with the key, then filler in
 * place of the frames: the server never looks inside, only the size matters to it. */
static size_t fill_message(uint8_t *buf, size_t size, const char *key, size_t klen, uint64_t seq)
{
    uint32_t count = frames_per_message(size);
    buf[0] = 0xD8;
    buf[1] = 1;
    buf[2] = 1;
    buf[3] = (uint8_t)klen;
    memcpy(buf + 4, &count, 4);
    uint64_t last = seq + count - 1;
    memcpy(buf + 8, &seq, 8);
    memcpy(buf + 16, &last, 8);
    memcpy(buf + PACK_HEAD, key, klen);
    return size;
}

static int cmd_publish(const options *o)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    connect_js(o, &nc, &js, o->window);
    create_stream(o, js);

    uint8_t *buf = malloc(o->size);
    if (!buf)
        return 1;
    uint32_t x = 2463534242u; /* xorshift filler: no run the disk or a future codec shrinks */
    for (size_t i = 0; i < o->size; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (uint8_t)x;
    }
    /* The sessions' subjects, made before the clock starts. */
    char(*subjects)[SUBJECT_MAX] = calloc(o->sessions, SUBJECT_MAX);
    char(*keys)[KEY_MAX] = calloc(o->sessions, KEY_MAX);
    if (!subjects || !keys)
        return 1;
    for (unsigned i = 0; i < o->sessions; i++) {
        snprintf(keys[i], KEY_MAX, "samp-player/p%07u", i);
        uint32_t p = partition_of(keys[i], strlen(keys[i]), o->partitions);
        /* The key token: '.' written as '~' (none here, the keys have no dots). */
        if (per_session(o))
            snprintf(subjects[i], SUBJECT_MAX, "%s.%u.%s", o->prefix, p, keys[i]);
        else if (partition_token(o))
            snprintf(subjects[i], SUBJECT_MAX, "%s.%u.~", o->prefix, p);
        else
            snprintf(subjects[i], SUBJECT_MAX, "%s.%u", o->prefix, p);
    }

    uint32_t frames = frames_per_message(o->size);
    double t0 = now_s(), c0 = cpu_s();
    for (unsigned long m = 0; m < o->messages; m++) {
        unsigned sid = (unsigned)(m % o->sessions);
        size_t len = fill_message(buf, o->size, keys[sid], strlen(keys[sid]),
                                  m / o->sessions * frames);
        natsStatus s = js_PublishAsync(js, subjects[sid], buf, (int)len, NULL);
        if (s != NATS_OK)
            fail("publish", s);
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 120000;
    natsStatus s = js_PublishAsyncComplete(js, &po);
    double t1 = now_s(), c1 = cpu_s();
    if (s != NATS_OK)
        fail("wait for the last acks", s);
    printf("{\"phase\":\"publish\",\"messages\":%lu,\"bytes\":%llu,\"seconds\":%.4f,"
           "\"cpu_seconds\":%.4f,\"errors\":%llu,\"first_error\":\"%s\"}\n",
           o->messages, (unsigned long long)o->messages * o->size, t1 - t0, c1 - c0, pub_errors,
           first_error);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    free(subjects);
    free(keys);
    free(buf);
    return pub_errors ? 2 : 0;
}

typedef struct pull_state {
    char next_subject[SUBJECT_MAX], reply[64];
    uint64_t pending; /* messages the consumer still has for us */
    int in_request;   /* asked for and not yet received in the current pull */
} pull_state;

static void send_pull(natsConnection *nc, pull_state *ps)
{
    char body[96];
    int len = snprintf(body, sizeof body, "{\"batch\":%d,\"expires\":%lld}", PULL_BATCH,
                       (long long)PULL_EXPIRES_NS);
    natsStatus s = natsConnection_PublishRequest(nc, ps->next_subject, ps->reply, body, len);
    if (s != NATS_OK)
        fail("pull request", s);
    ps->in_request = PULL_BATCH;
}

/* Durable pull consumers p0..pN-1 as recd makes them (explicit acks, deliver all), filtered on
 * the partition's subjects, drained at once through pull requests of PULL_BATCH sent by hand
 * (recd does so too: libnats 3.4's fetch has a fault with late messages). */
static int cmd_drain(const options *o)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    connect_js(o, &nc, &js, 1);
    static pull_state ps[PARTITIONS_MAX];
    char inbox_base[48];
    snprintf(inbox_base, sizeof inbox_base, "_INBOX.drain%ld", (long)time(NULL));
    char wildcard[64];
    snprintf(wildcard, sizeof wildcard, "%s.*", inbox_base);
    natsSubscription *sub = NULL;
    natsStatus s = natsConnection_SubscribeSync(&sub, nc, wildcard);
    if (s == NATS_OK)
        s = natsSubscription_SetPendingLimits(sub, -1, -1);
    if (s != NATS_OK)
        fail("subscribe", s);

    double t0 = now_s(), c0 = cpu_s(), slowest = 0;
    uint64_t total = 0;
    for (unsigned p = 0; p < o->partitions; p++) {
        char durable[16], filter[SUBJECT_MAX];
        snprintf(durable, sizeof durable, "p%u", p);
        if (per_session(o) || partition_token(o))
            snprintf(filter, sizeof filter, "%s.%u.>", o->prefix, p);
        else
            snprintf(filter, sizeof filter, "%s.%u", o->prefix, p);
        jsConsumerConfig cc;
        jsConsumerConfig_Init(&cc);
        cc.Durable = durable;
        cc.FilterSubject = filter;
        cc.AckPolicy = js_AckExplicit;
        cc.DeliverPolicy = js_DeliverAll;
        cc.AckWait = 30000000000LL;
        cc.MaxAckPending = 100000;
        jsConsumerInfo *ci = NULL;
        jsErrCode jerr = 0;
        double tc = now_s();
        s = js_AddConsumer(&ci, js, o->stream, &cc, NULL, &jerr);
        if (s != NATS_OK)
            fail("create a consumer", s);
        if (now_s() - tc > slowest)
            slowest = now_s() - tc;
        ps[p].pending = ci->NumPending;
        total += ci->NumPending;
        jsConsumerInfo_Destroy(ci);
        snprintf(ps[p].next_subject, sizeof ps[p].next_subject,
                 "$JS.API.CONSUMER.MSG.NEXT.%s.%s", o->stream, durable);
        snprintf(ps[p].reply, sizeof ps[p].reply, "%s.%u", inbox_base, p);
    }
    double t1 = now_s(), c1 = cpu_s();

    for (unsigned p = 0; p < o->partitions; p++)
        if (ps[p].pending)
            send_pull(nc, &ps[p]);
    uint64_t got = 0;
    size_t inbox_len = strlen(inbox_base);
    char ack_prefix[SUBJECT_MAX];
    snprintf(ack_prefix, sizeof ack_prefix, "$JS.ACK.%s.p", o->stream);
    size_t ack_prefix_len = strlen(ack_prefix);
    while (got < total) {
        natsMsg *msg = NULL;
        s = natsSubscription_NextMsg(&msg, sub, 30000);
        if (s != NATS_OK) {
            fprintf(stderr, "nats_subjects: %llu of %llu messages taken\n",
                    (unsigned long long)got, (unsigned long long)total);
            fail("wait for a message (30 s)", s);
        }
        /* A message keeps its stream subject; its ack subject names the consumer
         * ($JS.ACK.<stream>.p<N>...). A status (the pull expired) comes on our inbox. */
        const char *ack = natsMsg_GetReply(msg), *subj = natsMsg_GetSubject(msg);
        unsigned p = o->partitions;
        if (ack && strncmp(ack, ack_prefix, ack_prefix_len) == 0)
            p = (unsigned)strtoul(ack + ack_prefix_len, NULL, 10);
        else if (!ack && strncmp(subj, inbox_base, inbox_len) == 0)
            p = (unsigned)strtoul(subj + inbox_len + 1, NULL, 10);
        if (p >= o->partitions) {
            natsMsg_Destroy(msg);
            continue;
        }
        if (ack && natsMsg_GetDataLength(msg) > 0) {
            got++;
            ps[p].pending--;
            ps[p].in_request--;
            s = natsConnection_PublishString(nc, ack, "+ACK");
            if (s != NATS_OK)
                fail("ack", s);
        } else {
            ps[p].in_request = 0; /* a status: the pull expired or was cut short */
        }
        natsMsg_Destroy(msg);
        if (ps[p].in_request <= 0 && ps[p].pending)
            send_pull(nc, &ps[p]);
    }
    s = natsConnection_FlushTimeout(nc, 60000);
    double t2 = now_s(), c2 = cpu_s();
    if (s != NATS_OK)
        fail("flush the acks", s);
    printf("{\"phase\":\"drain\",\"messages\":%llu,\"consumers_seconds\":%.4f,"
           "\"slowest_consumer_seconds\":%.4f,\"consumers_cpu_seconds\":%.4f,\"seconds\":%.4f,"
           "\"cpu_seconds\":%.4f}\n",
           (unsigned long long)got, t1 - t0, slowest, c1 - c0, t2 - t1, c2 - c1);
    natsSubscription_Destroy(sub);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}

static void usage(void)
{
    fputs("usage: nats_subjects publish|drain --url nats://127.0.0.1:PORT --stream NAME "
          "--prefix PREFIX --layout session|partition|partition-token [--partitions 8] "
          "[--sessions N] [--messages N] [--size BYTES] [--window N] [--max-bytes BYTES]\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    options o = {.stream = "SUBJ", .prefix = "subj", .layout = "session", .sessions = 1000,
                 .partitions = 8, .window = 1024, .messages = 100000, .size = 2048};
    static const struct option longs[] = {
        {"url", 1, 0, 'u'},      {"stream", 1, 0, 's'},   {"prefix", 1, 0, 'p'},
        {"layout", 1, 0, 'l'},   {"sessions", 1, 0, 'n'}, {"partitions", 1, 0, 'P'},
        {"messages", 1, 0, 'm'}, {"size", 1, 0, 'z'},     {"window", 1, 0, 'w'},
        {"max-bytes", 1, 0, 'b'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc - 1, argv + 1, "", longs, NULL)) != -1) {
        switch (c) {
        case 'u': o.url = optarg; break;
        case 's': o.stream = optarg; break;
        case 'p': o.prefix = optarg; break;
        case 'l': o.layout = optarg; break;
        case 'n': o.sessions = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'P': o.partitions = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'm': o.messages = strtoul(optarg, NULL, 10); break;
        case 'z': o.size = strtoul(optarg, NULL, 10); break;
        case 'w': o.window = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'b': o.max_bytes = strtoll(optarg, NULL, 10); break;
        default: usage();
        }
    }
    if (!o.url || strncmp(o.url, "nats://127.", 11) != 0 || !o.sessions || !o.partitions ||
        o.partitions > PARTITIONS_MAX || o.size < PACK_HEAD + KEY_MAX ||
        (strcmp(o.layout, "session") && strcmp(o.layout, "partition") &&
         strcmp(o.layout, "partition-token")))
        usage();
    if (strcmp(argv[1], "publish") == 0)
        return cmd_publish(&o);
    if (strcmp(argv[1], "drain") == 0)
        return cmd_drain(&o);
    usage();
}
