/* SPDX-License-Identifier: MIT */
/* recd_client's JetStream publisher (client_nats.h): the nats:// URL's publishing options, then
 * libnats when the build has it (RECD_HAVE_NATS), else a clear -ENOTSUP. The connection (user
 * part, TLS and credentials options, the connect) is recd/nats_connect.h's, which recd's nats://
 * inputs use too; libnats is loaded with dlopen on the first connect. */
#include "wire/client_nats.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/fleet.h"
#include "recd/fleet_subject.h"
#include "recd/nats_connect.h"
#include "recd/units.h"
#include "recd/wire.h"
#include "wire/wire_internal.h"

#define DEFAULT_MAX_IN_FLIGHT 1024u
#define MAX_IN_FLIGHT_MAX 1000000u
#define DEFAULT_BUFFER (8ull << 20)
#define BUFFER_MIN (1ull << 10)
#define BUFFER_MAX (1ull << 30)
#define DEFAULT_ACK_TIMEOUT_MS 10000u
#define ACK_TIMEOUT_MAX_MS 3600000u
#define DEFAULT_PACK_BYTES (64u << 10)
#define PACK_BYTES_MIN 256u
#define PACK_BYTES_MAX (512u << 10) /* with a frame past it, under nats-server's 1 MiB payload */
#define DEFAULT_LINGER_MS 20u
#define LINGER_MAX_MS 10000u
#define URL_MAX 1024u
#define VALUE_MAX 47u

bool client_nats_url(const char *url) { return url && strncmp(url, "nats://", 7) == 0; }

/* The publisher's own query options; the connection's are recd/nats_connect.h's. */
enum {
    OPT_PARTITIONS,
    OPT_MAX_IN_FLIGHT,
    OPT_BUFFER,
    OPT_ACK_TIMEOUT,
    OPT_PACK_BYTES,
    OPT_LINGER,
    OPT_ENCODING,
    OPT_SUBJECTS,
    OPT_COUNT
};
static const char *const option_names[OPT_COUNT] = {
    "partitions", "max_in_flight", "buffer", "ack_timeout", "pack_bytes", "linger", "encoding",
    "subjects"};
#define OPTION_NAMES                                                                              \
    "partitions, max_in_flight, buffer, ack_timeout, pack_bytes, linger, encoding, subjects, "
static const char *const option_ranges[OPT_COUNT] = {
    "a number from 1 to 1024", "a number from 1 to 1000000",
    "a size from 1KiB to 1GiB (e.g. 8MiB)", "a duration from 1ms to 1h (e.g. 10s)",
    "0 (one frame per message) or a size from 256 to 512KiB (e.g. 64KiB)",
    "a duration from 1ms to 10s (e.g. 20ms)", "binary",
    "partition (PREFIX.<p>.~) or session (PREFIX.<p>.<key>)"};

/* Plain decimal digits, lo..hi. */
static int parse_count(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x = 0;
    if (!*v)
        return -EINVAL;
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9')
            return -EINVAL;
        x = x * 10 + (uint64_t)(*c - '0');
        if (x > hi)
            return -EINVAL;
    }
    if (x < lo)
        return -EINVAL;
    *out = x;
    return 0;
}

static int set_option(int which, const char *v, client_nats_options *o, char *err, size_t errlen)
{
    uint64_t x = 0;
    const char *why = NULL;
    int rc = -EINVAL;
    switch (which) {
    case OPT_PARTITIONS:
        if ((rc = parse_count(v, 1, RECD_FLEET_PARTITIONS_MAX, &x)) == 0)
            o->partitions = (uint32_t)x;
        break;
    case OPT_MAX_IN_FLIGHT:
        if ((rc = parse_count(v, 1, MAX_IN_FLIGHT_MAX, &x)) == 0)
            o->max_in_flight = (uint32_t)x;
        break;
    case OPT_BUFFER:
        rc = recd_parse_size(v, &x, &why);
        if (rc == 0 && (x < BUFFER_MIN || x > BUFFER_MAX))
            rc = -EINVAL;
        if (rc == 0)
            o->buffer_bytes = x;
        break;
    case OPT_ACK_TIMEOUT:
        rc = recd_parse_duration_ms(v, &x, &why);
        if (rc == 0 && (x < 1 || x > ACK_TIMEOUT_MAX_MS))
            rc = -EINVAL;
        if (rc == 0)
            o->ack_timeout_ms = x;
        break;
    case OPT_PACK_BYTES:
        rc = recd_parse_size(v, &x, &why);
        if (rc == 0 && x != 0 && (x < PACK_BYTES_MIN || x > PACK_BYTES_MAX))
            rc = -EINVAL;
        if (rc == 0)
            o->pack_bytes = (uint32_t)x;
        break;
    case OPT_LINGER:
        rc = recd_parse_duration_ms(v, &x, &why);
        if (rc == 0 && (x < 1 || x > LINGER_MAX_MS))
            rc = -EINVAL;
        if (rc == 0)
            o->linger_ms = (uint32_t)x;
        break;
    case OPT_SUBJECTS:
        if (strcmp(v, "partition") == 0 || strcmp(v, "session") == 0) {
            o->session_subjects = v[0] == 's';
            rc = 0;
        }
        break;
    default: { /* a stream message is one binary frame: NDJSON has no place here */
        recd_wire_encoding e;
        if (recd_wire_encoding_parse(v, &e) == 0 && e == RECD_WIRE_BINARY)
            rc = 0;
        break;
    }
    }
    if (rc < 0)
        recd_why(err, errlen, "%s=%s: expected %s%s%s", option_names[which], v,
                 option_ranges[which], why ? "; " : "", why ? why : "");
    return rc < 0 ? -EINVAL : 0;
}

/* recd_nats_option_fn: one of the publisher's options into ctx (client_nats_options). */
static int take_option(void *ctx, const char *key, size_t klen, const char *raw, size_t vlen,
                       char *err, size_t errlen)
{
    int which = -1;
    for (int i = 0; i < OPT_COUNT; i++)
        if (strlen(option_names[i]) == klen && memcmp(option_names[i], key, klen) == 0)
            which = i;
    if (which < 0)
        return 0;
    char v[VALUE_MAX + 1];
    if (vlen == 0 || vlen > VALUE_MAX || recd_nats_percent_decode(raw, vlen, v, sizeof v) < 0) {
        recd_why(err, errlen, "%s needs a value of 1..%u characters: %s=%s", option_names[which],
                 VALUE_MAX, option_names[which], option_ranges[which]);
        return -EINVAL;
    }
    return set_option(which, v, ctx, err, errlen) < 0 ? -EINVAL : 1;
}

int client_nats_parse(const char *url, char *base, size_t base_cap, client_nats_options *o,
                      char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->partitions = RECD_FLEET_DEFAULT_PARTITIONS;
    o->max_in_flight = DEFAULT_MAX_IN_FLIGHT;
    o->buffer_bytes = DEFAULT_BUFFER;
    o->ack_timeout_ms = DEFAULT_ACK_TIMEOUT_MS;
    o->pack_bytes = DEFAULT_PACK_BYTES;
    o->linger_ms = DEFAULT_LINGER_MS;
    return recd_nats_url_parse(url, base, base_cap, &o->auth, take_option, o, OPTION_NAMES, err,
                               errlen);
}

/* The URL's parts: options, then host, port and prefix. err names the URL. */
static int parse_url(const char *url, recd_fleet_url *fu, client_nats_options *o, char *err,
                     size_t errlen)
{
    char base[URL_MAX], why[300], shown[220];
    recd_nats_redacted(url, shown, sizeof shown);
    if (client_nats_parse(url, base, sizeof base, o, why, sizeof why) < 0) {
        recd_why(err, errlen, "bad URL '%s': %s", shown, why);
        return -EINVAL;
    }
    if (recd_fleet_url_parse(base, fu, why, sizeof why) < 0) {
        recd_why(err, errlen, "bad URL %s", why);
        return -EINVAL;
    }
    return 0;
}

#ifndef RECD_HAVE_NATS

struct client_nats {
    int unused;
};

int client_nats_open(client_nats **out, const char *url, size_t max_frame, char *err,
                     size_t errlen)
{
    (void)max_frame;
    *out = NULL;
    recd_fleet_url fu;
    client_nats_options o;
    int rc = parse_url(url, &fu, &o, err, errlen);
    if (rc < 0)
        return rc;
    char shown[220];
    recd_nats_redacted(url, shown, sizeof shown);
    recd_why(err, errlen, "%s: this librecd was built without NATS support (libnats-dev)", shown);
    return -ENOTSUP;
}
int client_nats_publish(client_nats *n, const recd_msg *m) { return (void)n, (void)m, -ENOTSUP; }
int client_nats_flush(client_nats *n) { return (void)n, -ENOTSUP; }
int client_nats_close(client_nats *n, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    free(n);
    return 0;
}
uint64_t client_nats_bytes(const client_nats *n) { return (void)n, 0; }
uint64_t client_nats_lost(client_nats *n) { return (void)n, 0; }

#else

#include <nats/nats.h>
#include <pthread.h>

#include <time.h>

#include "base/dl_table.h"
#include "wire/client_nats_packs.h"

/* The JetStream part of libnats; the connect is recd/nats_connect.h's. Both are loaded with dlopen
 * by the first client_nats_open (base/dl_table.h). */
#define NATS_FUNCTIONS(X)                                                                          \
    X(jsCtx_Destroy) X(jsOptions_Init) X(jsPubOptions_Init) X(js_PublishAsync)                     \
    X(js_PublishAsyncComplete) X(js_PublishAsyncGetPendingList) X(natsConnection_Destroy)          \
    X(natsConnection_JetStream) X(natsMsgList_Destroy) X(natsMsg_GetSubject) X(natsStatus_GetText) \
    X(nats_GetLastError)
static struct {
    NATS_FUNCTIONS(DL_POINTER)
} nats;
#define NATS_SYMBOL(fn) DL_SYMBOL(nats, fn)
static const dl_symbol nats_symbols[] = {NATS_FUNCTIONS(NATS_SYMBOL)};
static dl_library libnats = DL_LIBRARY("libnats", RECD_NATS_SONAME, RECD_NATS_PACKAGE,
                                       "nats:// URLs", nats_symbols);

struct client_nats {
    recd_fleet_url url;
    client_nats_options opt;
    size_t max_frame;
    natsConnection *nc;
    jsCtx *js;
    recd_buf frame;
    /* under pub: sends, and the linger thread publishing packs that waited long enough */
    pthread_mutex_t pub;
    pthread_cond_t pack_added;
    pthread_t linger;
    bool linger_started, stopping;
    nats_packs packs;
    uint64_t bytes;
    int broken;    /* sticky: a publish libnats refused, or a loss */
    char why[300]; /* what libnats said when it refused a publish */
    pthread_mutex_t lock; /* lost, first_lost: the ack error handler runs on a libnats thread */
    uint64_t lost;
    char first_lost[200];
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void count_lost(client_nats *n, uint64_t count, const char *reason, const char *detail)
{
    pthread_mutex_lock(&n->lock);
    if (!n->lost)
        recd_why(n->first_lost, sizeof n->first_lost, "%s%s", reason, detail);
    n->lost += count;
    pthread_mutex_unlock(&n->lock);
}

/* libnats thread: JetStream refused a publish (no stream for the subject, storage full...). */
static void on_pub_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
    (void)js;
    char on[RECD_FLEET_SUBJECT_MAX + 8];
    recd_why(on, sizeof on, " on %s", nats.natsMsg_GetSubject(pae->Msg));
    count_lost(closure, 1, pae->ErrText ? pae->ErrText : nats.natsStatus_GetText(pae->Err), on);
}

uint64_t client_nats_lost(client_nats *n)
{
    pthread_mutex_lock(&n->lock);
    uint64_t lost = n->lost;
    pthread_mutex_unlock(&n->lock);
    return lost;
}

uint64_t client_nats_bytes(const client_nats *n) { return n->bytes; }

static int connect_js(client_nats *n, char *err, size_t errlen)
{
    char server[RECD_NATS_SERVER_MAX], why[400];
    recd_nats_server_url(&n->url, server, sizeof server);
    recd_nats_tuning t = {.max_reconnect = 60, .reconnect_buf = n->opt.buffer_bytes};
    natsStatus s;
    int rc = recd_nats_connect(&n->nc, server, &n->opt.auth, &t, &s, why, sizeof why);
    if (rc == -EINVAL) {
        recd_why(err, errlen, "%s", why);
        return rc;
    }
    jsOptions jo;
    if (s == NATS_OK)
        s = nats.jsOptions_Init(&jo);
    if (s == NATS_OK) {
        jo.PublishAsync.MaxPending = n->opt.max_in_flight;
        jo.PublishAsync.ErrHandler = on_pub_error;
        jo.PublishAsync.ErrHandlerClosure = n;
        jo.PublishAsync.StallWait = (int64_t)n->opt.ack_timeout_ms;
        s = nats.natsConnection_JetStream(&n->js, n->nc, &jo);
        if (s != NATS_OK) {
            const char *last = nats.nats_GetLastError(NULL);
            recd_why(why, sizeof why, "%s%s%s%s", nats.natsStatus_GetText(s),
                     last && *last ? " (" : "", last && *last ? last : "",
                     last && *last ? ")" : "");
        }
    }
    if (s != NATS_OK) {
        recd_why(err, errlen, "cannot connect to %s: %s", server, why);
        return -ECONNREFUSED;
    }
    return 0;
}

static void stop_linger(client_nats *n)
{
    if (!n->linger_started)
        return;
    pthread_mutex_lock(&n->pub);
    n->stopping = true;
    pthread_cond_signal(&n->pack_added);
    pthread_mutex_unlock(&n->pub);
    pthread_join(n->linger, NULL);
    n->linger_started = false;
}

static void destroy(client_nats *n)
{
    stop_linger(n);
    if (n->js) /* set only after libnats loaded */
        nats.jsCtx_Destroy(n->js);
    if (n->nc)
        nats.natsConnection_Destroy(n->nc);
    nats_packs_free(&n->packs);
    recd_buf_free(&n->frame);
    pthread_cond_destroy(&n->pack_added);
    pthread_mutex_destroy(&n->pub);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

static int refused(client_nats *n, natsStatus s, const char *subject)
{
    char dur[32];
    recd_format_duration_ms(n->opt.ack_timeout_ms, dur, sizeof dur);
    switch (s) {
    case NATS_TIMEOUT:
        recd_why(n->why, sizeof n->why,
                 "publishing to %s: %u publishes waited more than %s for their acks (is the "
                 "server reachable?)",
                 subject, n->opt.max_in_flight, dur);
        return n->broken = -ETIMEDOUT;
    case NATS_INSUFFICIENT_BUFFER:
        recd_why(n->why, sizeof n->why,
                 "publishing to %s: the server is unreachable and the %llu bytes kept meanwhile "
                 "are used up",
                 subject, (unsigned long long)n->opt.buffer_bytes);
        return n->broken = -ENOBUFS;
    case NATS_MAX_PAYLOAD:
        recd_why(n->why, sizeof n->why,
                 "publishing to %s: a packed message is larger than the server takes (lower "
                 "pack_bytes)",
                 subject);
        return n->broken = -EMSGSIZE;
    default:
        recd_why(n->why, sizeof n->why, "publishing to %s: %s (%s)", subject,
                 nats.natsStatus_GetText(s), nats.nats_GetLastError(NULL));
        return n->broken = s == NATS_CONNECTION_CLOSED ? -ENOTCONN : -EIO;
    }
}

/* Under pub: publishes p's frames as one packed message and forgets p. A failure is sticky. */
static int publish_pack(client_nats *n, nats_pack *p)
{
    fleet_packer_seal(&p->pk);
    int rc = 0;
    if (!n->broken) {
        natsStatus s = nats.js_PublishAsync(n->js, p->subject, p->pk.buf.data,
                                            (int)p->pk.buf.len, NULL);
        if (s == NATS_OK)
            n->bytes += p->pk.buf.len;
        else
            rc = refused(n, s, p->subject);
    }
    /* Its frames were accepted by earlier sends: a pack never published is counted lost. */
    if (rc < 0)
        count_lost(n, 1, n->why, "");
    else if (n->broken)
        count_lost(n, 1, "not published: an earlier publish failed", "");
    nats_packs_remove(&n->packs, p);
    return rc < 0 ? rc : n->broken;
}

/* Under pub: publishes every pack (flush, close). */
static int publish_all(client_nats *n)
{
    int rc = 0;
    while (n->packs.oldest) {
        int r = publish_pack(n, n->packs.oldest);
        if (r < 0 && rc == 0)
            rc = r;
    }
    return rc;
}

/* The linger thread: publishes each pack once its first frame is linger_ms old. */
static void *linger_main(void *arg)
{
    client_nats *n = arg;
    pthread_mutex_lock(&n->pub);
    while (!n->stopping) {
        nats_pack *p = n->packs.oldest;
        uint64_t now = now_ms();
        if (p && now - p->opened_ms >= n->opt.linger_ms) {
            publish_pack(n, p);
            continue;
        }
        if (!p) {
            pthread_cond_wait(&n->pack_added, &n->pub);
            continue;
        }
        uint64_t due = p->opened_ms + n->opt.linger_ms;
        struct timespec ts = {.tv_sec = (time_t)(due / 1000u),
                              .tv_nsec = (long)(due % 1000u) * 1000000L};
        pthread_cond_timedwait(&n->pack_added, &n->pub, &ts);
    }
    pthread_mutex_unlock(&n->pub);
    return NULL;
}

static int start_linger(client_nats *n, char *err, size_t errlen)
{
    if (!n->opt.pack_bytes)
        return 0;
    int rc = pthread_create(&n->linger, NULL, linger_main, n);
    if (rc != 0) {
        recd_why(err, errlen, "cannot start the publisher's linger thread: %s", strerror(rc));
        return -rc;
    }
    n->linger_started = true;
    return 0;
}

int client_nats_open(client_nats **out, const char *url, size_t max_frame, char *err,
                     size_t errlen)
{
    *out = NULL;
    client_nats *n = calloc(1, sizeof *n);
    if (!n)
        return -ENOMEM;
    pthread_mutex_init(&n->lock, NULL);
    pthread_mutex_init(&n->pub, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->pack_added, &ca);
    pthread_condattr_destroy(&ca);
    n->max_frame = wire_max_frame(max_frame);
    int rc = parse_url(url, &n->url, &n->opt, err, errlen);
    if (rc == 0)
        rc = start_linger(n, err, errlen); /* it sleeps until a pack is added */
    if (rc == 0)
        rc = recd_nats_load(err, errlen);
    if (rc == 0)
        rc = recd__dl_load(&libnats, err, errlen);
    if (rc == 0)
        rc = connect_js(n, err, errlen);
    if (rc < 0) {
        destroy(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* The session's subject in the layout the URL asked for (subjects=). */
static int subject_of(const client_nats *n, const char *key, size_t klen, char *out, size_t cap)
{
    return n->opt.session_subjects
               ? fleet_session_subject(n->url.prefix, key, klen, n->opt.partitions, out, cap)
               : recd_fleet_subject(n->url.prefix, key, klen, n->opt.partitions, out, cap);
}

/* Under pub: m as a one-frame message (pack_bytes=0). */
static int publish_one(client_nats *n, const recd_msg *m, const char *subject)
{
    recd_buf_reset(&n->frame);
    int rc = wire_binary_encode(m, n->max_frame, false, true, &n->frame);
    if (rc < 0)
        return rc;
    if (n->frame.len > INT_MAX)
        return -EMSGSIZE;
    natsStatus s = nats.js_PublishAsync(n->js, subject, n->frame.data, (int)n->frame.len, NULL);
    if (s == NATS_MAX_PAYLOAD)
        return -EMSGSIZE; /* this message only: larger than the server takes */
    if (s != NATS_OK)
        return refused(n, s, subject);
    n->bytes += n->frame.len;
    return 0;
}

/* Under pub: m into its session's pack, published once it holds pack_bytes; the oldest packs go
 * too while all of them hold more than buffer bytes. */
static int publish_packed(client_nats *n, const recd_msg *m, size_t klen)
{
    nats_pack *p = nats_packs_find(&n->packs, m->session, klen);
    if (!p) {
        char subject[RECD_FLEET_SUBJECT_MAX];
        int rc = subject_of(n, m->session, klen, subject, sizeof subject);
        if (rc < 0)
            return rc;
        if (!(p = nats_packs_add(&n->packs, m->session, klen, now_ms())))
            return -ENOMEM;
        memcpy(p->subject, subject, (size_t)rc + 1);
        pthread_cond_signal(&n->pack_added);
    }
    size_t before = p->pk.buf.len;
    int rc = fleet_packer_add(&p->pk, m, n->max_frame);
    if (rc < 0) {
        if (!p->pk.count)
            nats_packs_remove(&n->packs, p);
        return rc;
    }
    n->packs.bytes += p->pk.buf.len - before;
    if (p->pk.buf.len >= n->opt.pack_bytes)
        rc = publish_pack(n, p);
    while (rc == 0 && n->packs.bytes > n->opt.buffer_bytes && n->packs.oldest)
        rc = publish_pack(n, n->packs.oldest);
    return rc;
}

int client_nats_publish(client_nats *n, const recd_msg *m)
{
    pthread_mutex_lock(&n->pub);
    int rc = n->broken;
    if (!rc && client_nats_lost(n)) /* JetStream refused an earlier message: a gap */
        rc = n->broken = -EIO;
    size_t klen = strnlen(m->session, sizeof m->session);
    if (!rc && n->opt.pack_bytes) {
        rc = publish_packed(n, m, klen);
    } else if (!rc) {
        char subject[RECD_FLEET_SUBJECT_MAX];
        rc = subject_of(n, m->session, klen, subject, sizeof subject);
        if (rc >= 0)
            rc = publish_one(n, m, subject);
    }
    pthread_mutex_unlock(&n->pub);
    return rc;
}

int client_nats_flush(client_nats *n)
{
    pthread_mutex_lock(&n->pub);
    publish_all(n);
    pthread_mutex_unlock(&n->pub);
    jsPubOptions po;
    nats.jsPubOptions_Init(&po);
    po.MaxWait = (int64_t)n->opt.ack_timeout_ms;
    natsStatus s = nats.js_PublishAsyncComplete(n->js, &po);
    if (s != NATS_OK) { /* still unconfirmed after the wait: each one counts as lost */
        natsMsgList pending = {0};
        if (nats.js_PublishAsyncGetPendingList(&pending, n->js) == NATS_OK) {
            char dur[32], reason[96];
            recd_format_duration_ms(n->opt.ack_timeout_ms, dur, sizeof dur);
            recd_why(reason, sizeof reason, "no ack within %s (%s)", dur,
                     nats.natsStatus_GetText(s));
            count_lost(n, (uint64_t)pending.Count, reason, "");
            nats.natsMsgList_Destroy(&pending);
        }
    }
    pthread_mutex_lock(&n->pub);
    int rc = n->broken;
    if (!rc && client_nats_lost(n))
        rc = n->broken = -EIO;
    pthread_mutex_unlock(&n->pub);
    return rc;
}

int client_nats_close(client_nats *n, char *err, size_t errlen)
{
    if (!n)
        return 0;
    stop_linger(n);
    int rc = client_nats_flush(n);
    uint64_t lost = client_nats_lost(n);
    if (lost)
        recd_why(err, errlen, "%s%s%llu messages were not confirmed by JetStream (first: %s)",
                 n->why, n->why[0] ? "; " : "", (unsigned long long)lost, n->first_lost);
    else if (rc < 0)
        recd_why(err, errlen, "%s", n->why[0] ? n->why : recd_strerror(rc));
    destroy(n);
    return rc;
}

#endif
