/* SPDX-License-Identifier: MIT */
/* recd's configuration: a typed struct loaded from YAML (libyaml) against a table-driven schema.
 * Every option has a built-in default, so recd runs without a file. Loading is strict: unknown
 * keys, wrong types and bad values are errors that name file:line:column and suggest a fix.
 * The schema and every option are documented in docs/configuration.md and config/recd.yaml. */
#ifndef RECD_DAEMON_CONFIG_H
#define RECD_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/path_template.h"
#include "recd/wire.h"

#define RECD_CONFIG_DEFAULT_PATH "/etc/recd/recd.yaml"
#define RECD_CONFIG_MAX_FILE_SIZE (1u << 20) /* larger files are refused */
#define RECD_CONFIG_MAX_LISTEN 64
#define RECD_CONFIG_HOST_MAX 64   /* an IPv6 literal fits */
#define RECD_CONFIG_UNIX_PATH_MAX 108 /* sun_path, NUL included */
#define RECD_CONFIG_URL_MAX 160
#define RECD_CONFIG_FORMAT_OPTIONS 64 /* bytes for the formats' own options */


/* An IP literal and port. */
typedef struct recd_hostport {
    char host[RECD_CONFIG_HOST_MAX]; /* no brackets, e.g. "127.0.0.1" or "::1" */
    uint16_t port;                   /* 0 = any free port (tests) */
    int family;                      /* AF_INET or AF_INET6 */
} recd_hostport;

typedef struct recd_listen_config {
    char url[RECD_CONFIG_URL_MAX];   /* as written, for log lines */
    recd_wire_transport transport;   /* lib's (recd/wire.h): TCP, UDP or UNIX */
    recd_wire_encoding encoding;     /* auto sniffs the first bytes of each connection (datagram) */
    recd_hostport addr;              /* tcp, udp */
    char path[RECD_CONFIG_UNIX_PATH_MAX]; /* unix */
    bool nats;                       /* nats://HOST:PORT/PREFIX: a fleet member (transport NONE) */
    bool tls;                        /* tls://HOST:PORT: TCP with TLS (the tls: section) */
} recd_listen_config;

#define RECD_CONFIG_MAX_IDENTITIES 32
#define RECD_IDENTITY_PATTERN_MAX 64
#define RECD_IDENTITY_MAX 64 /* a client certificate name kept as an identity */

/* One entry of identities: a client certificate name pattern and the session keys it may open
 * (fnmatch patterns; "*" also matches '/'). */
typedef struct recd_identity_rule {
    char pattern[RECD_IDENTITY_PATTERN_MAX + 1];
    char sessions[RECD_SESSION_KEY_MAX + 1];
} recd_identity_rule;

typedef struct recd_config {
    recd_listen_config *listen;   /* malloc'd; may be empty (socket activation only) */
    size_t listen_count;
    struct {
        char *root;                        /* directory under which recordings are written */
        recd_path_template path_template;  /* validated by recd_path_template_parse */
        bool rebase_parts;                 /* rotated .rec parts start again at time 0 */
        bool part_manifest;                /* NAME.json beside each finalized part */
        uint32_t file_mode, dir_mode;      /* permission bits, before the umask */
    } output;
    struct {
        uint64_t interval_ms;              /* a session's buffered samples are written at least this often */
        uint64_t buffer_size;              /* ... or as soon as this many bytes are buffered */
        bool fsync;                        /* fdatasync each part after each write job */
    } flush;
    struct {
        uint64_t max_frame;                /* largest input message, bytes */
        uint64_t session_buffer;           /* per session, before backpressure */
        uint64_t process_buffer;           /* all sessions, before backpressure */
        uint64_t session_state;            /* state kept for one session's peer (CARLA actors) */
        uint32_t part_rate;                /* samp-player parts started per second; 0 = off */
        uint64_t udp_receive_buffer;       /* SO_RCVBUF of each UDP listener */
        bool batch_huge_pages;             /* MADV_HUGEPAGE on the batch pool's slabs */
        uint32_t max_sessions, max_connections;
        uint32_t max_dormant_sessions;     /* idle sessions whose key is kept (rotation.forget_after) */
        uint32_t max_connections_per_peer; /* stream connections from one address */
        uint32_t max_sessions_per_peer;    /* sessions one peer opened; 0 = max_sessions / 2 */
        uint64_t peer_buffer;              /* unwritten bytes of one peer's sessions; 0 = half */
        uint64_t idle_timeout_ms;          /* a connection holding no session; 0 = off */
        uint64_t frame_timeout_ms;         /* a started frame or line must end within it */
    } limits;
    struct {
        uint64_t max_size;                 /* 0 = off */
        uint64_t max_duration_ms;          /* 0 = off */
        uint64_t idle_timeout_ms;          /* 0 = never close an idle session */
        uint64_t forget_after_ms;          /* an idle session's key is kept this long; 0 = no limit */
    } rotation;
    struct {
        bool all;                          /* every .rec session keeps a ring, not only ring: true */
        uint64_t window_ms;                /* how much of the latest samples a ring keeps */
        uint64_t session_bytes;            /* memory bound of one session's ring */
        uint64_t process_bytes;            /* memory bound of all rings together */
    } ring;
    struct {
        uint64_t max_age_ms;               /* 0 = keep forever */
        uint64_t max_total_size;           /* 0 = unlimited */
        uint32_t max_files_per_session;    /* 0 = unlimited */
    } retention;
    /* The options of the formats' own sections, at the offsets their rows give (each format's
     * config rows, daemon/record/formats/NAME/, keep to a range of their own). */
    union {
        uint64_t align;
        unsigned char bytes[RECD_CONFIG_FORMAT_OPTIONS];
    } format_options;
    struct {
        int time_policy;                   /* recd_rec_time_policy */
    } rec;
    struct {
        int second_open;                   /* recd_second_open */
    } sessions;
    struct {
        bool enabled;
        recd_hostport listen;
        bool allow_remote;                 /* permit a non-loopback metrics address */
        bool remote_save;                  /* instant-replay saves from non-loopback clients */
        bool tls;                          /* HTTPS with the tls: section's certificate */
        int console;                       /* recd_console_access: who reads the web console */
    } metrics;
    struct {
        int level;                         /* recd_log_level */
    } log;
    struct {
        uint64_t drain_timeout_ms;         /* time to flush and finalize on SIGTERM */
    } shutdown;
    struct {
        char *token;                       /* NULL = open messages need no token */
        bool off;                          /* `token: none`: no token, said on purpose */
        char *token_file;                  /* token read from this file (at start, on reload) */
    } auth;
    struct {                               /* tls:// listeners and metrics.tls; NULL = unset */
        char *cert, *key, *client_ca;
        int min_version;                   /* 12 or 13 (TLS 1.2, 1.3) */
        uint64_t handshake_timeout_ms;     /* 0 = limits.frame_timeout */
    } tls;
    recd_identity_rule *identities;        /* malloc'd; client certificate names -> session keys */
    size_t identity_count;
    struct {                               /* nats:// listeners (docs/fleet.md); NULL = unset */
        char *stream, *instance, *creds, *tls_ca, *tls_cert, *tls_key;
        uint32_t partitions, max_in_flight;
        uint64_t lease_ttl_ms;
    } nats;
    struct {                               /* what the file itself said (reload safety) */
        bool anything;                     /* it set at least one section or the listen list */
        bool listen;                       /* it has a listen list (`listen: []` too), or --listen */
    } written;
} recd_config;

/* Who may read the web console's pages and API (metrics.console); saving always needs the
 * token or a verified client certificate (docs/http-api.md). */
typedef enum recd_console_access {
    RECD_CONSOLE_OFF = 0,      /* no console: its paths answer 404 */
    RECD_CONSOLE_LOOPBACK = 1, /* loopback clients; others with the token or a client certificate */
    RECD_CONSOLE_TOKEN = 2,    /* every client with the token or a client certificate */
    RECD_CONSOLE_OPEN = 3      /* every client that reaches the listener */
} recd_console_access;

/* An open of a session key that is open already (sessions.second_open). */
typedef enum recd_second_open {
    RECD_SECOND_OPEN_REFUSE = 0,  /* refused: the live session keeps its file */
    RECD_SECOND_OPEN_NEW_FILE = 1 /* the live session is closed and the open starts a new one */
} recd_second_open;

typedef struct recd_config_error {
    char file[256];     /* the file name as given, or "<string>" */
    unsigned line;      /* 1-based; 0 when the error has no position (e.g. file not found) */
    unsigned column;    /* 1-based */
    char message[512];  /* what is wrong and how to fix it */
    char text[1024];    /* "file:line:column: message", ready to print */
} recd_config_error;

/* Fills cfg with the built-in defaults. 0 or -ENOMEM. Free with recd_config_free. */
int recd_config_defaults(recd_config *cfg);

/* Loads a YAML file: defaults, overridden by the file. On success fills *cfg (which must not hold a
 * config: free it first) and returns 0; on failure returns a negative errno (-EINVAL for anything
 * wrong with the content, -ENOENT etc. for the file) and describes it in *err (may be NULL). */
int recd_config_load_file(const char *path, recd_config *cfg, recd_config_error *err);
/* Same from memory; name is used in messages ("<string>" when NULL). */
int recd_config_load_string(const char *text, size_t len, const char *name, recd_config *cfg,
                            recd_config_error *err);

void recd_config_free(recd_config *cfg);

/* For command-line overrides applied after loading: sets one schema key ("flush.interval") from
 * config-file syntax ("2s") with the same validation as the file. 0, -ENOENT for an unknown key, or
 * a negative errno with the reason in why ("flush.interval: ..."). Run recd_config_check after. */
int recd_config_set(recd_config *cfg, const char *key, const char *value, char *why, size_t cap);
/* Parses one listen URL (tcp://, udp://, unix://) with encoding auto. 0 or -EINVAL with why. */
int recd_config_parse_listen(const char *url, recd_listen_config *out, char *why, size_t cap);
/* The rules spanning several options (buffer sizes, loopback metrics, duplicate or clashing
 * sockets), which loading already applies. 0 or -EINVAL with the first violation in why. */
int recd_config_check(const recd_config *cfg, char *why, size_t cap);

/* Writes cfg as YAML that loads back to an equal config (for --print-config). The output includes
 * auth.token in clear text. 0 or -ENOMEM. */
int recd_config_dump(const recd_config *cfg, recd_buf *out);

/* ---- fair shares: what one peer may take of a shared limit ---- */

static inline uint32_t recd_config_peer_sessions(const recd_config *cfg)
{
    uint32_t n = cfg->limits.max_sessions_per_peer;
    if (!n)
        n = cfg->limits.max_sessions / 2 ? cfg->limits.max_sessions / 2 : 1;
    return n;
}

static inline uint64_t recd_config_peer_buffer(const recd_config *cfg)
{
    return cfg->limits.peer_buffer ? cfg->limits.peer_buffer : cfg->limits.process_buffer / 2;
}

/* ---- reload (SIGHUP) ---- */

typedef struct recd_config_change {
    const char *key;   /* "flush.interval", "listen", ... (static storage) */
    bool live;         /* can change without a restart */
} recd_config_change;

#define RECD_CONFIG_MAX_CHANGES 96

typedef struct recd_config_diff {
    size_t count;                 /* keys that differ */
    size_t restart_needed;        /* of those, how many cannot change live */
    recd_config_change changes[RECD_CONFIG_MAX_CHANGES];
} recd_config_diff;

/* Lists the keys whose values differ between old and new. Listeners, limits, flush, rotation,
 * retention, log level and most others change live; output.root and the metrics endpoint need a
 * restart (a reload keeps the old values of those and says so). */
void recd_config_compare(const recd_config *old_cfg, const recd_config *new_cfg, recd_config_diff *diff);

/* Why a valid file is still refused on reload (docs/configuration.md, "Reload"): it must not
 * weaken security in silence, which a half-written file otherwise does. */
typedef enum recd_reload_refusal {
    RECD_RELOAD_ACCEPTED = 0,
    RECD_RELOAD_EMPTY_FILE,       /* the file sets nothing: every option would be a default */
    RECD_RELOAD_AUTH_OFF,         /* auth.token would go, and the file does not say `token: none` */
    RECD_RELOAD_DEFAULT_LISTENERS,/* no listen list: the built-in listeners would replace others */
    RECD_RELOAD_LISTEN_FAILED,    /* a new listener cannot be opened (the daemon finds out) */
    RECD_RELOAD_REFUSALS
} recd_reload_refusal;

/* The metric label of a refusal ("empty_file", "auth_off", ...). */
const char *recd_reload_refusal_name(recd_reload_refusal r);
/* Whether replacing old_cfg by new_cfg is a reload to refuse; the reason is in why. */
recd_reload_refusal recd_config_reload_check(const recd_config *old_cfg, const recd_config *new_cfg, char *why,
                                             size_t cap);

/* ---- schema introspection (docs and tests) ---- */

typedef struct recd_config_key_info {
    const char *key;        /* "section.name" */
    const char *type;       /* "duration", "size", "integer", "bool", "string", ... */
    const char *default_value; /* in config-file syntax; "" for none */
    bool live;
    const char *doc;
} recd_config_key_info;

size_t recd_config_key_count(void);
/* Information about schema key i (< recd_config_key_count()); "listen" is included. */
void recd_config_key_at(size_t i, recd_config_key_info *info);

#endif
