/* SPDX-License-Identifier: MIT */
/* benchgen prepare: turns librecd's deterministic synthetic players into the byte streams every
 * system under test receives, written once to files so that generating samples never costs time
 * inside a measurement and every system gets exactly the same samples:
 *   wire    recd binary frames (docs/wire.md)
 *   ndjson  recd NDJSON lines
 *   syslog  one RFC 3164-style line per message for rsyslog: the session key as the host name and
 *           the message's CSV row (the same fields, every float exact) as the body;
 *   sysjson the same syslog header with the message's NDJSON line as the body, for comparing
 *           NDJSON input byte for byte.
 * Each encoding has per-connection files ENC-head.C (opens), ENC-body.C (states and events, the
 * sessions of a connection interleaved one sample each, like a server tick) and ENC-tail.C
 * (closes). Session s goes to connection s % conns. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchgen.h"
#include "textline.h"
#include "recd/message.h"
#include "recd/synth.h"
#include "recd/wire.h"

#define MAX_CONNS 64
#define MAX_SESSIONS 200000ul
#define START_EPOCH_MS 1763213398000LL /* fixed, so outputs are identical between runs */

enum { ENC_WIRE, ENC_NDJSON, ENC_SYSLOG, ENC_SYSJSON, ENC_COUNT };
static const char *const enc_names[ENC_COUNT] = {"wire", "ndjson", "syslog", "sysjson"};
enum { PART_HEAD, PART_BODY, PART_TAIL, PART_COUNT };
static const char *const part_names[PART_COUNT] = {"head", "body", "tail"};

typedef struct prep_args {
    recd_synth_params p;
    unsigned long sessions, conns;
    uint64_t samples;
    const char *out, *prefix;
    bool want[ENC_COUNT];
} prep_args;

typedef struct player {
    recd_synth_session *gen;
    char key[RECD_SESSION_KEY_MAX + 1];
    uint64_t seq;
} player;

typedef struct outputs {
    FILE *f[ENC_COUNT][PART_COUNT][MAX_CONNS];
    uint64_t bytes[ENC_COUNT][PART_COUNT];
    recd_csv_writer csv;
    recd_buf scratch, line, json;
    bool json_valid; /* json holds the current message's NDJSON line */
    uint64_t messages, states, events, flattened;
} outputs;

static const char usage[] =
    "usage: benchgen prepare --format samp-onfoot|samp-vehicle|recap --sessions N --samples TOTAL\n"
    "                        --out DIR [--scenario walk] [--seed S] [--prefix KEY] [--conns C]\n"
    "                        [--encodings wire,ndjson,syslog,sysjson]\n"
    "TOTAL is rounded down to a multiple of N (at least one sample per session).\n";

static int fail(const char *what, int rc)
{
    fprintf(stderr, "benchgen prepare: %s: %s\n", what, rc < 0 ? recd_strerror(rc) : "failed");
    return 1;
}

static int open_outputs(outputs *o, const prep_args *a)
{
    char path[4096];
    for (int e = 0; e < ENC_COUNT; e++) {
        if (!a->want[e])
            continue;
        for (int p = 0; p < PART_COUNT; p++)
            for (unsigned long c = 0; c < a->conns; c++) {
                snprintf(path, sizeof path, "%s/%s-%s.%lu", a->out, enc_names[e], part_names[p], c);
                FILE *f = fopen(path, "wb");
                if (!f) {
                    fprintf(stderr, "benchgen prepare: %s: %s\n", path, strerror(errno));
                    return -1;
                }
                setvbuf(f, NULL, _IOFBF, 1 << 20);
                o->f[e][p][c] = f;
            }
    }
    return 0;
}

static int close_outputs(outputs *o)
{
    int rc = 0;
    for (int e = 0; e < ENC_COUNT; e++)
        for (int p = 0; p < PART_COUNT; p++)
            for (int c = 0; c < MAX_CONNS; c++)
                if (o->f[e][p][c] && fclose(o->f[e][p][c]) != 0)
                    rc = -1;
    recd_buf_free(&o->scratch);
    recd_buf_free(&o->line);
    recd_buf_free(&o->json);
    return rc;
}

/* The syslog rendering: "<134>Jan  1 00:00:00 KEY rec: CSV-ROW\n" (.rec rows from textline.c,
 * Recap rows from librecd's CSV writer). A CSV cell may hold a line break (chat text); it is
 * flattened to a space so one message stays one line. */
static int syslog_line(outputs *o, const recd_msg *m)
{
    recd_buf_reset(&o->scratch);
    recd_buf_reset(&o->line);
    int rc;
    if (m->type == RECD_MSG_STATE && m->format != RECD_MSG_FMT_RECAP) {
        rc = recd_buf_reserve(&o->scratch, BG_TEXT_MAX);
        if (rc < 0)
            return rc;
        char *row = (char *)o->scratch.data;
        o->scratch.len = m->format == RECD_MSG_FMT_SAMP_VEHICLE ? bg_text_vehicle(&m->vehicle, row)
                                                                : bg_text_onfoot(&m->onfoot, row);
    } else {
        rc = recd_csv_write(&o->csv, m, &o->scratch);
    }
    if (rc < 0 || o->scratch.len == 0)
        return rc;
    size_t n = o->scratch.len;
    while (n > 0 && (o->scratch.data[n - 1] == '\n' || o->scratch.data[n - 1] == '\r'))
        n--;
    for (size_t i = 0; i < n; i++)
        if (o->scratch.data[i] == '\n' || o->scratch.data[i] == '\r') {
            o->scratch.data[i] = ' ';
            o->flattened++;
        }
    char head[128];
    int hl = snprintf(head, sizeof head, "<134>Jan  1 00:00:00 %s rec: ", m->session);
    if ((rc = recd_buf_append(&o->line, head, (size_t)hl)) == 0 &&
        (rc = recd_buf_append(&o->line, o->scratch.data, n)) == 0)
        rc = recd_buf_append(&o->line, "\n", 1);
    return rc;
}

/* The NDJSON line of m in o->json, encoded once for both encodings that use it. */
static int json_line(outputs *o, const recd_msg *m)
{
    if (o->json_valid)
        return 0;
    recd_buf_reset(&o->json);
    int rc = recd_wire_encode(m, RECD_WIRE_NDJSON, 0, &o->json);
    o->json_valid = rc == 0;
    return rc;
}

static int sysjson_line(outputs *o, const recd_msg *m)
{
    recd_buf_reset(&o->line);
    int rc = json_line(o, m);
    if (rc < 0)
        return rc;
    char head[128];
    int hl = snprintf(head, sizeof head, "<134>Jan  1 00:00:00 %s rec: ", m->session);
    if ((rc = recd_buf_append(&o->line, head, (size_t)hl)) == 0)
        rc = recd_buf_append(&o->line, o->json.data, o->json.len); /* ends with its newline */
    return rc;
}

static int emit(outputs *o, const prep_args *a, const recd_msg *m, int part, unsigned long conn)
{
    o->json_valid = false;
    for (int e = 0; e < ENC_COUNT; e++) {
        if (!a->want[e])
            continue;
        int rc;
        const recd_buf *b;
        if (e == ENC_SYSLOG || e == ENC_SYSJSON) {
            if (part != PART_BODY)
                continue; /* rsyslog has no notion of opening or closing a session */
            rc = e == ENC_SYSLOG ? syslog_line(o, m) : sysjson_line(o, m);
            b = &o->line;
        } else if (e == ENC_NDJSON) {
            rc = json_line(o, m);
            b = &o->json;
        } else {
            recd_buf_reset(&o->scratch);
            rc = recd_wire_encode(m, RECD_WIRE_BINARY, 0, &o->scratch);
            b = &o->scratch;
        }
        if (rc < 0)
            return rc;
        if (b->len && fwrite(b->data, 1, b->len, o->f[e][part][conn]) != b->len)
            return -EIO;
        o->bytes[e][part] += b->len;
    }
    o->messages++;
    return 0;
}

static int player_open(outputs *o, const prep_args *a, player *pl, unsigned long i, uint64_t per)
{
    recd_synth_params p = a->p;
    p.seed = a->p.seed + i;
    /* Generators with a sample clock (Recap: one tick per 50 ms) get per samples' worth; the
     * others stop by duration: give them the longest and pull samples as needed. */
    uint32_t sample_ms = recd_synth_sample_ms(a->p.format);
    p.duration_ms = sample_ms ? per * sample_ms : RECD_SYNTH_MAX_DURATION_MS;
    if (p.duration_ms > RECD_SYNTH_MAX_DURATION_MS)
        return -ERANGE;
    snprintf(pl->key, sizeof pl->key, "%s%06lu", a->prefix, i + 1);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, a->p.format->msg_format);
    int rc = recd_synth_session_new(&p, &pl->gen);
    if (rc == 0) /* formats whose generator has no clock start at START_EPOCH_MS */
        rc = recd_synth_session_open(pl->gen, &m, START_EPOCH_MS);
    memcpy(m.session, pl->key, sizeof m.session);
    m.has_seq = true;
    m.seq = pl->seq++;
    if (rc == 0)
        rc = emit(o, a, &m, PART_HEAD, i % a->conns);
    recd_msg_free(&m);
    return rc;
}

typedef struct body_ctx {
    outputs *o;
    const prep_args *a;
    player *pl;
    unsigned long conn;
} body_ctx;

/* A generated state or event: the player's key and sequence number added, counted, written. */
static int emit_body(void *ctx, recd_msg *m)
{
    body_ctx *b = ctx;
    memcpy(m->session, b->pl->key, sizeof m->session);
    m->has_seq = true;
    m->seq = b->pl->seq++;
    if (m->type == RECD_MSG_STATE)
        b->o->states++;
    else
        b->o->events++;
    return emit(b->o, b->a, m, PART_BODY, b->conn);
}

/* One sample: the format's state (a .rec block, a Recap tick), then that sample's events. */
static int player_sample(outputs *o, const prep_args *a, player *pl, unsigned long conn)
{
    body_ctx b = {o, a, pl, conn};
    int rc = recd_synth_session_next(pl->gen, emit_body, &b);
    return rc == 1 ? -ERANGE : rc;
}

static int player_close(outputs *o, const prep_args *a, player *pl, unsigned long i)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, a->p.format->msg_format);
    memcpy(m.session, pl->key, sizeof m.session);
    m.has_seq = true;
    m.seq = pl->seq++;
    return emit(o, a, &m, PART_TAIL, i % a->conns);
}

static int write_meta(const prep_args *a, const outputs *o, uint64_t per)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.json", a->out);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"format\":\"%s\",\"scenario\":\"%s\",\"seed\":%llu,\"sessions\":%lu,\"conns\":%lu,"
               "\"per_session\":%llu,\"states\":%llu,\"events\":%llu,\"messages\":%llu,"
               "\"flattened_line_breaks\":%llu,\"prefix\":\"%s\",\"bytes\":{",
            a->p.format->name, recd_synth_scenario_name(a->p.scenario),
            (unsigned long long)a->p.seed, a->sessions, a->conns, (unsigned long long)per,
            (unsigned long long)o->states, (unsigned long long)o->events,
            (unsigned long long)o->messages, (unsigned long long)o->flattened, a->prefix);
    bool first = true;
    for (int e = 0; e < ENC_COUNT; e++) {
        if (!a->want[e])
            continue;
        fprintf(f, "%s\"%s\":{\"head\":%llu,\"body\":%llu,\"tail\":%llu}", first ? "" : ",",
                enc_names[e], (unsigned long long)o->bytes[e][PART_HEAD],
                (unsigned long long)o->bytes[e][PART_BODY],
                (unsigned long long)o->bytes[e][PART_TAIL]);
        first = false;
    }
    fprintf(f, "}}\n");
    return fclose(f) == 0 ? 0 : -1;
}

static int parse_encodings(const char *list, bool want[ENC_COUNT])
{
    memset(want, 0, sizeof(bool) * ENC_COUNT);
    char buf[128];
    if (strlen(list) >= sizeof buf)
        return -1;
    strcpy(buf, list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int e = 0;
        while (e < ENC_COUNT && strcmp(tok, enc_names[e]) != 0)
            e++;
        if (e == ENC_COUNT)
            return -1;
        want[e] = true;
    }
    return 0;
}

static int parse_args(int argc, char **argv, prep_args *a)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},  {"scenario", required_argument, NULL, 'c'},
        {"sessions", required_argument, NULL, 'n'}, {"samples", required_argument, NULL, 's'},
        {"seed", required_argument, NULL, 'S'},    {"prefix", required_argument, NULL, 'p'},
        {"conns", required_argument, NULL, 'C'},   {"out", required_argument, NULL, 'o'},
        {"encodings", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->p.scenario = RECD_SYNTH_SCENARIO_WALK;
    a->p.seed = 1;
    a->conns = 1;
    a->prefix = "p";
    bool have_format = false;
    parse_encodings("wire,ndjson,syslog", a->want);
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'f':
            if (!(a->p.format = recd_synth_format_find(optarg)))
                return fputs(usage, stderr), 2;
            have_format = true;
            break;
        case 'c':
            if (recd_synth_scenario_parse(optarg, &a->p.scenario) < 0)
                return fputs(usage, stderr), 2;
            break;
        case 'n': a->sessions = strtoul(optarg, &end, 10); break;
        case 's': a->samples = strtoull(optarg, &end, 10); break;
        case 'S': a->p.seed = strtoull(optarg, &end, 10); break;
        case 'C': a->conns = strtoul(optarg, &end, 10); break;
        case 'p': a->prefix = optarg; break;
        case 'o': a->out = optarg; break;
        case 'e':
            if (parse_encodings(optarg, a->want) < 0)
                return fputs(usage, stderr), 2;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
        if (end && *end) {
            fprintf(stderr, "benchgen prepare: bad number '%s'\n", optarg);
            return 2;
        }
    }
    size_t plen = strlen(a->prefix);
    if (!have_format || !a->out || a->sessions == 0 || a->sessions > MAX_SESSIONS ||
        a->samples < a->sessions || a->conns == 0 || a->conns > MAX_CONNS ||
        a->conns > a->sessions || plen == 0 || plen > 32 ||
        !recd_session_key_valid(a->prefix, plen)) {
        fputs(usage, stderr);
        return 2;
    }
    a->p.duration_ms = 1000; /* checked here; the real one is set per player */
    const char *why = NULL;
    if (recd_synth_params_check(&a->p, &why) < 0) {
        fprintf(stderr, "benchgen prepare: %s\n", why ? why : "bad parameters");
        return 2;
    }
    if (!recd_synth_has_sessions(a->p.format)) {
        fprintf(stderr, "benchgen prepare: %s has no synthetic sessions\n", a->p.format->name);
        return 2;
    }
    return -1;
}

int bg_cmd_prepare(int argc, char **argv)
{
    prep_args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0)
        return code;
    uint64_t per = a.samples / a.sessions;
    player *pl = calloc(a.sessions, sizeof *pl);
    outputs *o = calloc(1, sizeof *o);
    if (!pl || !o)
        return fail("allocating", -ENOMEM);
    recd_csv_writer_init(&o->csv, a.p.format->msg_format);
    o->csv.header_written = true; /* rows only: rsyslog lines carry no CSV header */
    int rc = open_outputs(o, &a) < 0 ? -EIO : 0;
    for (unsigned long i = 0; rc == 0 && i < a.sessions; i++)
        rc = player_open(o, &a, &pl[i], i, per);
    for (uint64_t k = 0; rc == 0 && k < per; k++)
        for (unsigned long i = 0; rc == 0 && i < a.sessions; i++)
            rc = player_sample(o, &a, &pl[i], i % a.conns);
    for (unsigned long i = 0; rc == 0 && i < a.sessions; i++)
        rc = player_close(o, &a, &pl[i], i);
    if (close_outputs(o) < 0 && rc == 0)
        rc = -EIO;
    if (rc == 0 && write_meta(&a, o, per) < 0)
        rc = -EIO;
    for (unsigned long i = 0; i < a.sessions; i++) {
        recd_synth_session_free(pl[i].gen);
    }
    free(pl);
    if (rc < 0) {
        free(o);
        return fail("writing the streams", rc);
    }
    printf("prepared %llu states and %llu events for %lu sessions on %lu connection(s) in %s\n",
           (unsigned long long)o->states, (unsigned long long)o->events, a.sessions, a.conns, a.out);
    free(o);
    return 0;
}
