/* SPDX-License-Identifier: MIT */
/* The config schema: one table row per option (type, default, range, live reload, documentation),
 * the value parsers it uses, listen URL parsing, defaults and schema introspection. */
#include "config_schema.h"
#include "recd/fleet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "recd/message.h"
#include "recd/nats_connect.h"
#include "recd/units.h"

#define ROOT_PATH_MAX 4096
#define AUTH_TOKEN_MIN 16

_Static_assert(RECD_CFG_ROW_MAX + 1 <= RECD_CONFIG_MAX_CHANGES, "diff array too small");

static const enum_name log_levels[] = {
    {"emerg", RECD_LOG_EMERG},     {"alert", RECD_LOG_ALERT}, {"crit", RECD_LOG_CRIT},
    {"err", RECD_LOG_ERR},         {"error", RECD_LOG_ERR},   {"warning", RECD_LOG_WARNING},
    {"warn", RECD_LOG_WARNING},    {"notice", RECD_LOG_NOTICE}, {"info", RECD_LOG_INFO},
    {"debug", RECD_LOG_DEBUG},     {NULL, 0},
};

static const enum_name tls_versions[] = {
    {"1.2", 12},
    {"1.3", 13},
    {NULL, 0},
};

static const enum_name console_access[] = {
    {"off", RECD_CONSOLE_OFF},
    {"loopback", RECD_CONSOLE_LOOPBACK},
    {"token", RECD_CONSOLE_TOKEN},
    {"open", RECD_CONSOLE_OPEN},
    {NULL, 0},
};

static const enum_name second_opens[] = {
    {"refuse", RECD_SECOND_OPEN_REFUSE},
    {"new_file", RECD_SECOND_OPEN_NEW_FILE},
    {NULL, 0},
};

const enum_name recd_cfg_encodings[] = {
    {"auto", RECD_WIRE_AUTO},
    {"binary", RECD_WIRE_BINARY},
    {"ndjson", RECD_WIRE_NDJSON},
    {NULL, 0},
};

#define OFF(field) offsetof(recd_config, field)
#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)
#define SEC 1000ull
#define MINUTE (60 * SEC)
#define HOUR (60 * MINUTE)
#define DAY (24 * HOUR)

/* Where the formats' rows go (recd_config_install_format_rows). */
#define FORMAT_ROWS_HERE {NULL, T_BOOL, 0, 0, 0, 0, NULL, NULL, NULL}

static const row core_rows[] = {
    {"output.root", T_PATH, OFF(output.root), 0, 0, 0, "./recordings", NULL,
     "Directory under which recordings are written (created if missing). Relative paths are relative "
     "to the working directory; under systemd use /var/lib/recd (StateDirectory=recd)."},
    {"output.path_template", T_TEMPLATE, OFF(output.path_template), 0, 0, F_LIVE, RECD_PATH_TEMPLATE_DEFAULT,
     NULL,
     "File name of each recording part below output.root. Placeholders: {format}, {session}, {ext}, "
     "{part}, {instance} (nats.instance, else the host name), {start}, {start:STRFTIME} (UTC), "
     "{date}, {time}. Must contain {session} and {ext}."},
    {"output.rebase_parts", T_BOOL, OFF(output.rebase_parts), 0, 0, F_LIVE, "true", NULL,
     "When a .rec session is rotated, later parts start again at time 0 (so each part plays on its own)."},
    {"output.part_manifest", T_BOOL, OFF(output.part_manifest), 0, 0, F_LIVE, "false", NULL,
     "Beside every part it finalizes, recd writes NAME.json (atomically): session, instance, part "
     "number, first and last sequence number and sample time, sample count, start and end. A "
     "session's parts, across instances, sort back into order by them. Parts ended by crash "
     "recovery get none."},
    {"output.file_mode", T_MODE, OFF(output.file_mode), 0600, 0, F_LIVE, "0640", NULL,
     "Permission bits of new recording files (octal; the umask still applies). Must include 0600."},
    {"output.dir_mode", T_MODE, OFF(output.dir_mode), 0700, 0, F_LIVE, "0750", NULL,
     "Permission bits of new directories (octal; the umask still applies). Must include 0700."},

    {"flush.interval", T_DURATION, OFF(flush.interval_ms), 10, HOUR, F_LIVE, "1s", NULL,
     "A session's buffered samples are written (as complete records / gzip members) at least this often: "
     "the most data a crash can lose."},
    {"flush.buffer_size", T_SIZE, OFF(flush.buffer_size), 4 * KIB, 64 * MIB, F_LIVE, "64KiB", NULL,
     "A session is also flushed as soon as this many bytes are buffered. At most limits.session_buffer."},
    {"flush.fsync", T_BOOL, OFF(flush.fsync), 0, 0, F_LIVE, "false", NULL,
     "After each write, fdatasync the file, and fsync the directory when a part is renamed: a power "
     "loss then loses at most flush.interval, at the cost of a disk flush per session per interval."},

    {"limits.max_frame", T_SIZE, OFF(limits.max_frame), 256, 16 * MIB, F_LIVE, "64KiB", NULL,
     "Largest input message (one binary frame, NDJSON line or datagram). Larger ones are rejected."},
    {"limits.session_buffer", T_SIZE, OFF(limits.session_buffer), 64 * KIB, GIB, F_LIVE, "1MiB", NULL,
     "Bytes buffered per session before recd stops reading that session's connection (backpressure)."},
    {"limits.process_buffer", T_SIZE, OFF(limits.process_buffer), MIB, TIB, F_LIVE, "256MiB", NULL,
     "Bytes buffered over all sessions before recd stops reading every connection; also the most "
     "freed memory kept mapped for reuse while a load lasts."},
    {"limits.session_state", T_SIZE, OFF(limits.session_state), 64 * KIB, TIB, F_LIVE, "16MiB", NULL, NULL},
    {"limits.part_rate", T_U32, OFF(limits.part_rate), 1, 1000000, F_LIVE | F_ZERO_OFF, "10", NULL, NULL},
    {"limits.udp_receive_buffer", T_SIZE, OFF(limits.udp_receive_buffer), 64 * KIB, GIB, 0, "8MiB", NULL,
     "Kernel receive buffer (SO_RCVBUF) of each UDP listener: the datagrams that can queue while the "
     "loop is busy. Datagrams beyond it are dropped by the kernel (recd_udp_kernel_drops_total)."},
    {"limits.batch_huge_pages", T_BOOL, OFF(limits.batch_huge_pages), 0, 0, 0, "false", NULL,
     "Map the writer's batch memory with transparent huge pages (MADV_HUGEPAGE): one page fault per "
     "2 MiB instead of per 4 KiB, each zeroing 2 MiB at once. Worth it where page faults are dear "
     "(some hypervisors); elsewhere it costs loop CPU (docs/performance.md)."},
    {"limits.max_sessions", T_U32, OFF(limits.max_sessions), 1, 1000000, F_LIVE, "10000", NULL,
     "Recording sessions open at once; further open messages are refused."},
    {"limits.max_dormant_sessions", T_U32, OFF(limits.max_dormant_sessions), 1, 1000000, F_LIVE | F_ZERO_OFF,
     "1000", NULL,
     "Idle sessions (rotation.idle_timeout) whose key is kept so that their next sample goes on in "
     "a new part: past this many the one idle longest is forgotten. 0 = forget at once."},
    {"limits.max_sessions_per_peer", T_U32, OFF(limits.max_sessions_per_peer), 1, 1000000,
     F_LIVE | F_ZERO_AUTO, "0", NULL,
     "Sessions one peer (an IP address, an IPv6 /64, or a Unix socket client's uid) may hold open "
     "at once; further opens from it are refused. 0 = half of limits.max_sessions."},
    {"limits.peer_buffer", T_SIZE, OFF(limits.peer_buffer), 64 * KIB, TIB, F_LIVE | F_ZERO_AUTO, "0",
     NULL,
     "Bytes the sessions one peer opened may hold unwritten before recd stops reading that peer's "
     "connections (its datagrams are dropped). 0 = half of limits.process_buffer."},
    {"limits.max_connections", T_U32, OFF(limits.max_connections), 1, 1000000, F_LIVE, "1024", NULL,
     "Stream connections (TCP and Unix) at once. At the limit a new one takes the place of the "
     "connection idle longest that holds no session; without one, the new one is closed."},
    {"limits.max_connections_per_peer", T_U32, OFF(limits.max_connections_per_peer), 1, 1000000, F_LIVE,
     "256", NULL,
     "Stream connections from one peer at once (an IP address, an IPv6 /64, or a Unix socket "
     "client's uid). At the limit a new one takes the place of that peer's connection idle longest "
     "that holds no session."},
    {"limits.idle_timeout", T_DURATION, OFF(limits.idle_timeout_ms), SEC, 30 * DAY, F_LIVE | F_ZERO_OFF,
     "60s", NULL,
     "Close a stream connection that holds no open session after this long without input. 0 = never."},
    {"limits.frame_timeout", T_DURATION, OFF(limits.frame_timeout_ms), SEC, HOUR, F_LIVE, "10s", NULL,
     "A frame or line that has started must end within this time; otherwise the connection gets an "
     "error reply and is closed."},

    {"rotation.max_size", T_SIZE, OFF(rotation.max_size), 64 * KIB, TIB, F_LIVE | F_ZERO_OFF, "1GiB", NULL,
     "Start a new part when a file reaches this size. 0 = no size limit."},
    {"rotation.max_duration", T_DURATION, OFF(rotation.max_duration_ms), MINUTE, 366 * DAY, F_LIVE | F_ZERO_OFF,
     "0", NULL, "Start a new part when a file covers this much time. 0 = no time limit."},
    {"rotation.idle_timeout", T_DURATION, OFF(rotation.idle_timeout_ms), SEC, 30 * DAY, F_LIVE | F_ZERO_OFF,
     "60s", NULL,
     "Finalize a session's file after this long without samples. 0 = wait for the close message."},
    {"rotation.forget_after", T_DURATION, OFF(rotation.forget_after_ms), SEC, 366 * DAY, F_LIVE | F_ZERO_OFF,
     "1h", NULL,
     "How long a session idle past rotation.idle_timeout (its file finalized) stays known, so that "
     "its next sample, over UDP too, goes on in a new part; then it is forgotten. 0 = until "
     "limits.max_dormant_sessions or limits.max_sessions needs its place."},

    {"ring.all", T_BOOL, OFF(ring.all), 0, 0, F_LIVE, "false", NULL,
     "Every session whose format keeps an instant-replay ring keeps one, as if opened with ring: "
     "true: nothing goes to disk until a save asks."},
    {"ring.window", T_DURATION, OFF(ring.window_ms), SEC, DAY, F_LIVE, "60s", NULL,
     "How much of its latest samples a ring session keeps in memory."},
    {"ring.session_memory", T_SIZE, OFF(ring.session_bytes), 64 * KIB, GIB, F_LIVE, "4MiB", NULL,
     "Memory bound of one session's ring: past it the oldest samples go first."},
    {"ring.process_memory", T_SIZE, OFF(ring.process_bytes), MIB, TIB, F_LIVE, "256MiB", NULL,
     "Memory bound of all rings together: a ring that cannot grow keeps fewer samples."},

    {"retention.max_age", T_DURATION, OFF(retention.max_age_ms), MINUTE, 36600 * DAY, F_LIVE | F_ZERO_OFF, "0",
     NULL, "Delete finalized recordings older than this (only files recd marked as its own, xattr user.recd). 0 = keep forever."},
    {"retention.max_total_size", T_SIZE, OFF(retention.max_total_size), MIB, UINT64_MAX, F_LIVE | F_ZERO_OFF,
     "0", NULL, "Delete the oldest finalized recordings while all of them together exceed this. 0 = no limit."},
    {"retention.max_files_per_session", T_U32, OFF(retention.max_files_per_session), 1, 1000000,
     F_LIVE | F_ZERO_OFF, "0", NULL, "Keep only the newest N finalized files of each session. 0 = no limit."},

    FORMAT_ROWS_HERE,

    {"rec.time_policy", T_ENUM, OFF(rec.time_policy), 0, 0, F_LIVE, "clamp", NULL, NULL},

    {"sessions.second_open", T_ENUM, OFF(sessions.second_open), 0, 0, F_LIVE, "refuse", second_opens,
     "An open of a session key that is open already (a resend after a restarted sender): refuse it "
     "(an already_open error; the live session keeps its file) or new_file (close the live session "
     "and record the new one into a file of its own)."},

    {"metrics.enabled", T_BOOL, OFF(metrics.enabled), 0, 0, 0, "true", NULL,
     "Serve GET /metrics (Prometheus) and GET /healthz over HTTP."},
    {"metrics.listen", T_HOSTPORT, OFF(metrics.listen), 0, 0, 0, "127.0.0.1:9464", NULL,
     "Address of the metrics endpoint: IPv4:PORT or [IPv6]:PORT. Must be loopback unless "
     "metrics.allow_remote is true."},
    {"metrics.allow_remote", T_BOOL, OFF(metrics.allow_remote), 0, 0, 0, "false", NULL,
     "Allow a non-loopback metrics.listen address (the endpoint has no authentication)."},
    {"metrics.tls", T_BOOL, OFF(metrics.tls), 0, 0, 0, "false", NULL,
     "Serve the metrics endpoint over HTTPS with tls.cert and tls.key (and tls.client_ca: a client "
     "certificate is then asked for, and one that verifies may save sessions like the token)."},
    {"metrics.remote_save", T_BOOL, OFF(metrics.remote_save), 0, 0, F_LIVE, "false", NULL,
     "Accept POST /sessions/KEY/save from clients that are not on loopback (auth.token must be set)."},
    {"metrics.console", T_ENUM, OFF(metrics.console), 0, 0, F_LIVE, "loopback", console_access,
     "Who may read the web console (its pages and /api/): off (no console), loopback (loopback "
     "clients, others with auth.token or a verified client certificate), token (every client with "
     "the token or a verified client certificate) or open (every client that reaches the "
     "listener, for one behind an authenticating proxy). Saving needs the token or a certificate "
     "whatever this says."},

    {"log.level", T_ENUM, OFF(log.level), 0, 0, F_LIVE, "info", log_levels,
     "Least important messages logged: emerg, alert, crit, err, warning, notice, info or debug."},

    {"shutdown.drain_timeout", T_DURATION, OFF(shutdown.drain_timeout_ms), 0, HOUR, F_LIVE, "10s", NULL,
     "On SIGTERM, time allowed to read what clients already sent and to flush and finalize every file. "
     "Keep it below systemd's TimeoutStopSec."},

    {"auth.token", T_TOKEN, OFF(auth.token), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "If set, every open message must carry this token (16-256 printable ASCII characters, no spaces). "
     "`none` means no token on purpose: a reload that would drop a running token is refused unless the "
     "file says `token: none`."},
    {"auth.token_file", T_PATH, OFF(auth.token_file), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "File holding the token (the same rules; one trailing newline is ignored), read at start and "
     "on every reload: a token kept outside the config and rotated by a reload. Not with auth.token."},

    {"tls.cert", T_PATH, OFF(tls.cert), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "Certificate chain (PEM, leaf first) of tls:// listeners and of metrics.tls. A reload reads it "
     "again: new connections get the renewed certificate, live ones keep theirs."},
    {"tls.key", T_PATH, OFF(tls.key), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "Private key (PEM) of tls.cert."},
    {"tls.client_ca", T_PATH, OFF(tls.client_ca), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "CA certificates (PEM) of client certificates. Set, every TLS client must present a "
     "certificate that chains to one; its subject CN or a DNS name is its identity (identities)."},
    {"tls.min_version", T_ENUM, OFF(tls.min_version), 0, 0, F_LIVE, "1.2", tls_versions,
     "Oldest TLS version accepted: 1.2 or 1.3 (older ones are never accepted)."},
    {"tls.handshake_timeout", T_DURATION, OFF(tls.handshake_timeout_ms), SEC, HOUR,
     F_LIVE | F_ZERO_AUTO, "0", NULL,
     "A TLS handshake must end within this time, or the connection is closed "
     "(recd_connections_dropped_total{reason=\"tls_handshake_timeout\"}). 0 = limits.frame_timeout."},

    {"nats.stream", T_NAME, OFF(nats.stream), 0, 0, F_NULLABLE, "", NULL,
     "JetStream stream a nats:// listener consumes (created when missing). Empty = RECD_ and the "
     "subject prefix with '.' as '_' (nats://h/game.eu reads RECD_game_eu)."},
    {"nats.partitions", T_U32, OFF(nats.partitions), 1, 1024, 0, "8", NULL,
     "Partitions the sessions of a nats:// prefix are hashed into; publishers must use the same count "
     "(rectool send --partitions)."},
    {"nats.lease_ttl", T_DURATION, OFF(nats.lease_ttl_ms), 3 * SEC, HOUR, F_LIVE, "15s", NULL,
     "A partition's lease lasts this long unless renewed (every third of it): the longest a dead "
     "instance's partitions wait for another owner."},
    {"nats.max_in_flight", T_U32, OFF(nats.max_in_flight), 1, 100000, F_LIVE, "1024", NULL,
     "Messages of one partition taken and not yet acknowledged (not yet in a file) at most: beyond it "
     "recd pulls nothing more from that partition."},
    {"nats.instance", T_NAME, OFF(nats.instance), 0, 0, F_NULLABLE, "", NULL,
     "This instance's name in the lease bucket. Empty = the host name and the process id."},
    {"nats.creds", T_PATH, OFF(nats.creds), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "NATS credentials file (JWT and NKey seed) for the connection. Empty = none."},
    {"nats.tls_ca", T_PATH, OFF(nats.tls_ca), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "CA certificates (PEM) that the NATS server's certificate must chain to; setting it turns TLS on."},
    {"nats.tls_cert", T_PATH, OFF(nats.tls_cert), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "Client certificate (PEM) for NATS servers that verify clients; needs nats.tls_key."},
    {"nats.tls_key", T_PATH, OFF(nats.tls_key), 0, 0, F_LIVE | F_NULLABLE, "", NULL,
     "Private key (PEM) of nats.tls_cert."},
};

#define CORE_ROW_COUNT (sizeof core_rows / sizeof core_rows[0])
#define FORMAT_ROW_SETS_MAX 8

row recd_cfg_rows[RECD_CFG_ROW_MAX];
const char *recd_cfg_sections[RECD_CFG_SECTION_MAX];
static char section_names[RECD_CFG_SECTION_MAX][32];
static size_t row_count, section_count;
static bool built;
static struct {
    const row *rows;
    size_t n;
} format_rows[FORMAT_ROW_SETS_MAX];
static size_t format_row_sets;

int recd_config_install_format_rows(const row *rows, size_t n)
{
    size_t total = CORE_ROW_COUNT - 1;
    for (size_t i = 0; i < format_row_sets; i++) {
        if (format_rows[i].rows == rows)
            return 0; /* installed already */
        total += format_rows[i].n;
    }
    if (format_row_sets == FORMAT_ROW_SETS_MAX || total + n > RECD_CFG_ROW_MAX)
        return -ENOSPC;
    format_rows[format_row_sets].rows = rows;
    format_rows[format_row_sets++].n = n;
    built = false;
    return 0;
}

static void add_section_of(const row *r)
{
    size_t len = (size_t)(strchr(r->key, '.') - r->key);
    for (size_t i = 0; i < section_count; i++)
        if (strncmp(recd_cfg_sections[i], r->key, len) == 0 && recd_cfg_sections[i][len] == '\0')
            return;
    if (section_count == RECD_CFG_SECTION_MAX || len >= sizeof section_names[0])
        return;
    snprintf(section_names[section_count], sizeof section_names[0], "%.*s", (int)len, r->key);
    recd_cfg_sections[section_count] = section_names[section_count];
    section_count++;
}

/* The installed row of that key, or NULL. */
static const row *format_row(const char *key)
{
    for (size_t f = 0; f < format_row_sets; f++)
        for (size_t j = 0; j < format_rows[f].n; j++)
            if (strcmp(format_rows[f].rows[j].key, key) == 0)
                return &format_rows[f].rows[j];
    return NULL;
}

static int is_core_key(const char *key)
{
    for (size_t i = 0; i < CORE_ROW_COUNT; i++)
        if (core_rows[i].key && strcmp(core_rows[i].key, key) == 0)
            return 1;
    return 0;
}

/* A core row with no doc is one a format documents: its installed row of the same key (only
 * key, doc and for an enum its names set) gives the text and the names. */
static row documented(const row *core)
{
    row r = *core;
    if (!r.doc) {
        const row *by_format = format_row(r.key);
        r.doc = by_format && by_format->doc ? by_format->doc : "";
        if (!r.names && by_format)
            r.names = by_format->names;
    }
    return r;
}

static void build_schema(void)
{
    row_count = 0;
    for (size_t i = 0; i < CORE_ROW_COUNT; i++) {
        if (core_rows[i].key) {
            recd_cfg_rows[row_count++] = documented(&core_rows[i]);
            continue;
        }
        for (size_t f = 0; f < format_row_sets; f++)
            for (size_t j = 0; j < format_rows[f].n; j++)
                if (!is_core_key(format_rows[f].rows[j].key))
                    recd_cfg_rows[row_count++] = format_rows[f].rows[j];
    }
    section_count = 0;
    recd_cfg_sections[section_count++] = "listen";
    for (size_t i = 0; i < row_count; i++)
        add_section_of(&recd_cfg_rows[i]);
    built = true;
}

size_t recd_cfg_row_count(void)
{
    if (!built)
        build_schema();
    return row_count;
}

size_t recd_cfg_section_count(void)
{
    if (!built)
        build_schema();
    return section_count;
}

static const char *const default_listen[] = {"tcp://127.0.0.1:7070", "udp://127.0.0.1:7070"};

const char *recd_cfg_row_name(const row *r) { return strchr(r->key, '.') + 1; }

int recd_cfg_row_in_section(const row *r, const char *section)
{
    size_t n = strlen(section);
    return strncmp(r->key, section, n) == 0 && r->key[n] == '.';
}

static void *recd_cfg_field(recd_config *cfg, const row *r) { return (char *)cfg + r->offset; }
const void *recd_cfg_cfield(const recd_config *cfg, const row *r) { return (const char *)cfg + r->offset; }

/* ---- small text helpers ---- */

/* Copies text for an error message: at most 60 bytes, non-printables as '?'. */
const char *recd_cfg_shown(const char *text, char *buf, size_t cap)
{
    size_t n = 0;
    for (; text[n] && n + 4 < cap && n < 60; n++) {
        unsigned char c = (unsigned char)text[n];
        buf[n] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (text[n]) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t prev[65], cur[65];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}


void recd_cfg_consider(recd_cfg_suggestion *s, const char *word, const char *candidate)
{
    size_t d = edit_distance(word, candidate);
    size_t len = strlen(candidate);
    size_t limit = len <= 3 ? 1 : (len <= 6 ? 2 : 3);
    if (d <= limit && (!s->best || d < s->distance)) {
        s->best = candidate;
        s->distance = d;
    }
}

/* ---- value parsers: each returns 0 or -EINVAL/-ERANGE with why filled ---- */

static int parse_bool(const char *text, bool *out, char *why, size_t cap)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    for (size_t i = 0; i < 3; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    char b[80];
    snprintf(why, cap, "expected true or false, got '%s'", recd_cfg_shown(text, b, sizeof b));
    return -EINVAL;
}

static int parse_whole(const char *text, uint64_t *out, char *why, size_t cap)
{
    char b[80];
    uint64_t v = 0;
    if (!*text) {
        snprintf(why, cap, "expected a whole number");
        return -EINVAL;
    }
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') {
            snprintf(why, cap, "expected a whole number, got '%s'", recd_cfg_shown(text, b, sizeof b));
            return -EINVAL;
        }
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            snprintf(why, cap, "number '%s' is too large", recd_cfg_shown(text, b, sizeof b));
            return -ERANGE;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

void recd_cfg_format_number(const row *r, uint64_t v, char *buf, size_t cap)
{
    if (r->type == T_DURATION)
        recd_format_duration_ms(v, buf, cap);
    else if (r->type == T_SIZE)
        recd_format_size(v, buf, cap);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)v);
}

static int check_range(const row *r, uint64_t v, char *why, size_t cap)
{
    if (v == 0 && (r->flags & (F_ZERO_OFF | F_ZERO_AUTO)))
        return 0;
    if (v >= r->min && v <= r->max)
        return 0;
    char val[32], lim[32];
    recd_cfg_format_number(r, v, val, sizeof val);
    recd_cfg_format_number(r, v < r->min ? r->min : r->max, lim, sizeof lim);
    snprintf(why, cap, "%s is %s the %s of %s%s", val, v < r->min ? "below" : "above",
             v < r->min ? "minimum" : "maximum", lim, (r->flags & F_ZERO_OFF)    ? " (or 0 to turn it off)"
             : (r->flags & F_ZERO_AUTO) ? " (or 0 for the default share)"
                                        : "");
    return -ERANGE;
}

int recd_cfg_parse_enum(const enum_name *names, const char *text, int *out, char *why, size_t cap)
{
    for (const enum_name *n = names; n->name; n++) {
        if (strcmp(text, n->name) == 0) {
            *out = n->value;
            return 0;
        }
    }
    recd_cfg_suggestion s = {0};
    char list[200] = "";
    size_t used = 0;
    for (const enum_name *n = names; n->name; n++) {
        recd_cfg_consider(&s, text, n->name);
        int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", n->name);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    char b[80];
    if (s.best)
        snprintf(why, cap, "unknown value '%s' (did you mean '%s'?); expected one of: %s", recd_cfg_shown(text, b, sizeof b),
                 s.best, list);
    else
        snprintf(why, cap, "unknown value '%s'; expected one of: %s", recd_cfg_shown(text, b, sizeof b), list);
    return -EINVAL;
}

const char *recd_cfg_enum_name(const enum_name *names, int value)
{
    for (const enum_name *n = names; n->name; n++)
        if (n->value == value)
            return n->name;
    return "?";
}

static int parse_mode(const char *text, uint32_t required, uint32_t *out, char *why, size_t cap)
{
    char b[80];
    const char *p = text;
    if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
        p += 2;
    size_t n = strlen(p);
    uint32_t v = 0;
    int ok = n >= 1 && n <= 4;
    for (size_t i = 0; ok && i < n; i++) {
        if (p[i] < '0' || p[i] > '7')
            ok = 0;
        else
            v = v * 8 + (uint32_t)(p[i] - '0');
    }
    if (!ok || v > 0777) {
        snprintf(why, cap, "expected octal permission bits such as 0640, got '%s'", recd_cfg_shown(text, b, sizeof b));
        return -EINVAL;
    }
    if ((v & required) != required) {
        snprintf(why, cap, "mode %04o lacks the owner bits %04o recd needs", (unsigned)v, (unsigned)required);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

/* The address of a parsed URL as an IP literal (host names are not resolved): IPv4 unless it was
 * written in brackets. The host is stored in canonical form. shown is the text for messages. */
static int ip_literal(const recd_wire_url *u, bool bracketed, const char *shown, recd_hostport *out,
                      char *why, size_t cap)
{
    char b[80];
    int family = bracketed ? AF_INET6 : AF_INET;
    unsigned char bin[16];
    if (strlen(u->host) >= RECD_CONFIG_HOST_MAX) {
        snprintf(why, cap, "'%s': host is not an IP address", recd_cfg_shown(shown, b, sizeof b));
        return -EINVAL;
    }
    if (inet_pton(family, u->host, bin) != 1) {
        snprintf(why, cap, "'%s' is not an IP%s address (host names are not resolved; use e.g. %s)",
                 recd_cfg_shown(u->host, b, sizeof b), family == AF_INET ? "v4" : "v6",
                 family == AF_INET ? "127.0.0.1 or 0.0.0.0" : "[::1] or [::]");
        return -EINVAL;
    }
    memset(out, 0, sizeof *out);
    inet_ntop(family, bin, out->host, sizeof out->host);
    out->port = u->port;
    out->family = family;
    return 0;
}

/* lib's URL parser (recd/wire.h) on url; its complaint is shown after the text it is about. */
static int parse_url(const char *url, const char *shown, recd_wire_url *u, char *why, size_t cap)
{
    char b[80], err[160] = "";
    if (recd_wire_url_parse(url, u, err, sizeof err) == 0)
        return 0;
    snprintf(why, cap, "'%s': %s", recd_cfg_shown(shown, b, sizeof b), err);
    return -EINVAL;
}

/* "IPv4:PORT" or "[IPv6]:PORT" with an IP literal, read by lib's URL grammar. */
static int parse_hostport(const char *text, recd_hostport *out, char *why, size_t cap)
{
    char b[80], url[RECD_CONFIG_URL_MAX + 8];
    if (strchr(text, '?')) { /* a URL query: not part of an address */
        snprintf(why, cap, "'%s': port must be a number from 0 to 65535", recd_cfg_shown(text, b, sizeof b));
        return -EINVAL;
    }
    if ((size_t)snprintf(url, sizeof url, "tcp://%s", text) >= sizeof url) {
        snprintf(why, cap, "'%s': host is not an IP address", recd_cfg_shown(text, b, sizeof b));
        return -EINVAL;
    }
    recd_wire_url u;
    if (parse_url(url, text, &u, why, cap) < 0)
        return -EINVAL;
    return ip_literal(&u, text[0] == '[', text, out, why, cap);
}

static int parse_token(const char *text, char **out, char *why, size_t cap)
{
    size_t n = strlen(text);
    if (n == 0) {
        free(*out);
        *out = NULL;
        return 0;
    }
    if (n < AUTH_TOKEN_MIN || n > RECD_AUTH_TOKEN_MAX) {
        snprintf(why, cap, "the token has %zu characters; use %d to %d (e.g. `openssl rand -hex 24`)", n,
                 AUTH_TOKEN_MIN, RECD_AUTH_TOKEN_MAX);
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (text[i] <= 0x20 || text[i] >= 0x7f) {
            snprintf(why, cap, "the token may contain only printable ASCII without spaces (character %zu is not)",
                     i + 1);
            return -EINVAL;
        }
    }
    char *copy = strdup(text);
    if (!copy) {
        snprintf(why, cap, "out of memory");
        return -ENOMEM;
    }
    free(*out);
    *out = copy;
    return 0;
}

/* A path or a name (what says which, for the error). */
static int parse_path(const char *text, const char *what, char **out, char *why, size_t cap)
{
    size_t n = strlen(text);
    if (n == 0 || n >= ROOT_PATH_MAX) {
        snprintf(why, cap, n ? "%s is too long" : "%s must not be empty", what);
        return -EINVAL;
    }
    char *copy = strdup(text);
    if (!copy) {
        snprintf(why, cap, "out of memory");
        return -ENOMEM;
    }
    free(*out);
    *out = copy;
    return 0;
}

/* Parses text as the value of row r into cfg. */
int recd_cfg_parse_value(recd_config *cfg, const row *r, const char *text, char *why, size_t cap)
{
    void *field = recd_cfg_field(cfg, r);
    char b[80];
    const char *reason = NULL;
    uint64_t v = 0;
    int rc;
    switch (r->type) {
    case T_BOOL:
        return parse_bool(text, field, why, cap);
    case T_U32:
        rc = parse_whole(text, &v, why, cap);
        if (rc == 0)
            rc = check_range(r, v, why, cap);
        if (rc == 0)
            *(uint32_t *)field = (uint32_t)v;
        return rc;
    case T_SIZE:
    case T_DURATION:
        rc = (r->type == T_SIZE) ? recd_parse_size(text, &v, &reason) : recd_parse_duration_ms(text, &v, &reason);
        if (rc < 0) {
            snprintf(why, cap, "invalid %s '%s': %s", r->type == T_SIZE ? "size" : "duration",
                     recd_cfg_shown(text, b, sizeof b), reason);
            return rc;
        }
        rc = check_range(r, v, why, cap);
        if (rc == 0)
            *(uint64_t *)field = v;
        return rc;
    case T_PATH:
    case T_NAME:
        if (!*text && (r->flags & F_NULLABLE)) {
            free(*(char **)field);
            *(char **)field = NULL;
            return 0;
        }
        return parse_path(text, r->type == T_NAME ? "name" : "path", field, why, cap);
    case T_ENUM:
        if (!r->names) { /* a format's enum whose names were never installed */
            snprintf(why, cap, "%s has no values (its format is not installed)", r->key);
            return -EINVAL;
        }
        return recd_cfg_parse_enum(r->names, text, field, why, cap);
    case T_MODE:
        return parse_mode(text, (uint32_t)r->min, field, why, cap);
    case T_HOSTPORT:
        return parse_hostport(text, field, why, cap);
    case T_TEMPLATE: {
        char reason_buf[256] = "";
        rc = recd_path_template_parse(field, text, reason_buf, sizeof reason_buf);
        if (rc < 0)
            snprintf(why, cap, "invalid path template '%s': %s", recd_cfg_shown(text, b, sizeof b), reason_buf);
        return rc;
    }
    case T_TOKEN: /* auth.token: `none` is no token, said on purpose (a reload may then drop it) */
        cfg->auth.off = strcmp(text, "none") == 0;
        return parse_token(cfg->auth.off ? "" : text, field, why, cap);
    }
    return -EINVAL;
}

/* ---- listen URLs ---- */

/* The scheme before "://" as lib names its transports, or RECD_WIRE_TRANSPORT_NONE. */
static recd_wire_transport scheme_of(const char *url, size_t len)
{
    for (recd_wire_transport tr = RECD_WIRE_TCP; tr <= RECD_WIRE_UNIX; tr++) {
        const char *name = recd_wire_transport_name(tr);
        if (strlen(name) == len && strncmp(url, name, len) == 0)
            return tr;
    }
    return RECD_WIRE_TRANSPORT_NONE;
}

/* A listen URL, by lib's grammar (recd_wire_url_parse), with the config's own rules on top:
 * IP literals only, absolute Unix paths, and the encoding as its own key rather than a query. */
int recd_cfg_parse_listen_url(const char *url, recd_listen_config *out, char *why, size_t cap)
{
    char b[80];
    memset(out, 0, sizeof *out);
    if (strlen(url) >= sizeof out->url) {
        snprintf(why, cap, "URL is too long");
        return -EINVAL;
    }
    snprintf(out->url, sizeof out->url, "%s", url);
    if (strncmp(url, "tls://", 6) == 0) { /* TCP with TLS: the same address rules as tcp:// */
        char tcp[RECD_CONFIG_URL_MAX + 8];
        snprintf(tcp, sizeof tcp, "tcp://%s", url + 6);
        if (recd_cfg_parse_listen_url(tcp, out, why, cap) < 0)
            return -EINVAL;
        snprintf(out->url, sizeof out->url, "%s", url);
        out->tls = true;
        return 0;
    }
    char shown[220]; /* for errors: a password, token or nkey seed as *** */
    recd_nats_redacted(url, shown, sizeof shown);
    if (strncmp(url, "nats://", 7) == 0) { /* a fleet member: the stream is named by the URL */
        recd_fleet_url fu;
        recd_nats_auth auth; /* its user part and TLS and credentials options: checked here */
        if (recd_nats_url_split(url, &fu, &auth, why, cap) < 0)
            return -EINVAL;
        out->nats = true;
        return 0;
    }
    const char *sep = strstr(url, "://");
    if (!sep) {
        snprintf(why, cap, "'%s' is not a listen URL; expected tcp://HOST:PORT, tls://HOST:PORT, udp://HOST:PORT or unix:///PATH",
                 recd_cfg_shown(shown, b, sizeof b));
        return -EINVAL;
    }
    out->transport = scheme_of(url, (size_t)(sep - url));
    if (out->transport == RECD_WIRE_TRANSPORT_NONE) {
        snprintf(why, cap, "unknown scheme '%.*s'; use tcp://, tls://, udp:// or unix://",
                 (int)(sep - url < 20 ? sep - url : 20), url);
        return -EINVAL;
    }
    const char *rest = sep + 3;
    if (strchr(rest, '?')) {
        snprintf(why, cap, "'%s': give the encoding as the entry's own key (url: ..., encoding: ...), "
                 "not as a ?query", recd_cfg_shown(shown, b, sizeof b));
        return -EINVAL;
    }
    if (out->transport == RECD_WIRE_UNIX) {
        if (rest[0] != '/') {
            snprintf(why, cap, "'%s': a Unix socket needs an absolute path, e.g. unix:///run/recd/ingest.sock",
                     recd_cfg_shown(shown, b, sizeof b));
            return -EINVAL;
        }
        if (strlen(rest) >= sizeof out->path) {
            snprintf(why, cap, "Unix socket path is longer than %zu bytes", sizeof out->path - 1);
            return -EINVAL;
        }
    } else if (strchr(rest, '/')) {
        snprintf(why, cap, "'%s': a %s URL has no path", recd_cfg_shown(shown, b, sizeof b),
                 recd_wire_transport_name(out->transport));
        return -EINVAL;
    }
    recd_wire_url u;
    if (parse_url(url, strstr(shown, "://") ? strstr(shown, "://") + 3 : shown, &u, why, cap) < 0)
        return -EINVAL;
    if (out->transport == RECD_WIRE_UNIX) {
        snprintf(out->path, sizeof out->path, "%s", u.path);
        return 0;
    }
    return ip_literal(&u, rest[0] == '[', rest, &out->addr, why, cap);
}

int recd_cfg_same_listener(const recd_listen_config *a, const recd_listen_config *b)
{
    if (a->transport != b->transport || a->nats != b->nats)
        return 0; /* tcp:// and tls:// on one port are the same socket */
    if (a->nats)
        return strcmp(a->url, b->url) == 0;
    if (a->transport == RECD_WIRE_UNIX)
        return strcmp(a->path, b->path) == 0;
    return a->addr.port != 0 && a->addr.port == b->addr.port && strcmp(a->addr.host, b->addr.host) == 0;
}

/* ---- defaults and freeing ---- */

void recd_config_free(recd_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->listen);
    free(cfg->output.root);
    free(cfg->auth.token);
    free(cfg->auth.token_file);
    free(cfg->tls.cert);
    free(cfg->tls.key);
    free(cfg->tls.client_ca);
    free(cfg->identities);
    free(cfg->nats.stream);
    free(cfg->nats.instance);
    free(cfg->nats.creds);
    free(cfg->nats.tls_ca);
    free(cfg->nats.tls_cert);
    free(cfg->nats.tls_key);
    memset(cfg, 0, sizeof *cfg);
}

int recd_config_defaults(recd_config *cfg)
{
    char why[RECD_CFG_WHY_MAX];
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < recd_cfg_row_count(); i++) {
        int rc = recd_cfg_parse_value(cfg, &recd_cfg_rows[i], recd_cfg_rows[i].def, why, sizeof why);
        if (rc < 0) {
            recd_config_free(cfg);
            return rc;
        }
    }
    size_t n = sizeof default_listen / sizeof default_listen[0];
    cfg->listen = calloc(n, sizeof *cfg->listen);
    if (!cfg->listen) {
        recd_config_free(cfg);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (recd_cfg_parse_listen_url(default_listen[i], &cfg->listen[i], why, sizeof why) < 0) {
            recd_config_free(cfg);
            return -EINVAL;
        }
    cfg->listen_count = n;
    return 0;
}


/* ---- public single-value setters (command-line overrides) ---- */

int recd_config_set(recd_config *cfg, const char *key, const char *value, char *why, size_t cap)
{
    char inner[RECD_CFG_WHY_MAX] = "";
    for (size_t i = 0; i < recd_cfg_row_count(); i++) {
        const row *r = &recd_cfg_rows[i];
        if (strcmp(r->key, key) != 0)
            continue;
        int rc = recd_cfg_parse_value(cfg, r, value ? value : "", inner, sizeof inner);
        if (rc < 0 && why && cap)
            snprintf(why, cap, "%s: %s", key, inner);
        return rc;
    }
    if (why && cap)
        snprintf(why, cap, "unknown key '%s'", key);
    return -ENOENT;
}

int recd_config_parse_listen(const char *url, recd_listen_config *out, char *why, size_t cap)
{
    char inner[RECD_CFG_WHY_MAX] = "";
    int rc = recd_cfg_parse_listen_url(url, out, inner, sizeof inner);
    if (rc < 0 && why && cap)
        snprintf(why, cap, "%s", inner);
    return rc;
}

/* ---- introspection ---- */

static const char *type_name(value_type t)
{
    switch (t) {
    case T_BOOL: return "bool";
    case T_U32: return "integer";
    case T_SIZE: return "size";
    case T_DURATION: return "duration";
    case T_PATH: return "path";
    case T_NAME: return "name";
    case T_ENUM: return "enum";
    case T_MODE: return "mode";
    case T_HOSTPORT: return "address";
    case T_TEMPLATE: return "template";
    case T_TOKEN: return "string";
    }
    return "?";
}

size_t recd_config_key_count(void) { return recd_cfg_row_count() + 1; }

void recd_config_key_at(size_t i, recd_config_key_info *info)
{
    memset(info, 0, sizeof *info);
    if (i == 0) {
        info->key = "listen";
        info->type = "list";
        info->default_value = "[tcp://127.0.0.1:7070, udp://127.0.0.1:7070]";
        info->live = true;
        info->doc = "Sockets to receive samples on: tcp://HOST:PORT, udp://HOST:PORT, unix:///PATH, each "
                    "optionally as {url: URL, encoding: auto|binary|ndjson}.";
        return;
    }
    if (i > recd_cfg_row_count())
        return;
    const row *r = &recd_cfg_rows[i - 1];
    info->key = r->key;
    info->type = type_name(r->type);
    info->default_value = r->def;
    info->live = (r->flags & F_LIVE) != 0;
    info->doc = r->doc;
}
