/* SPDX-License-Identifier: MIT */
/* Metrics registry for the Prometheus /metrics endpoint: counters, gauges and fixed-bucket
 * histograms, each with up to two labels whose values are fixed at registration. Updates are
 * lock-free C11 atomics, so the event loop and writer threads may update concurrently; register
 * everything before other threads start. Also declares recd's own metric set. */
#ifndef RECD_DAEMON_METRICS_H
#define RECD_DAEMON_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/format_list.h"
#include "recd/message.h"

typedef enum recd_metric_type {
    RECD_METRIC_COUNTER,
    RECD_METRIC_GAUGE,
    RECD_METRIC_HISTOGRAM
} recd_metric_type;

typedef struct recd_metric_label {
    const char *name;          /* e.g. "transport" */
    const char *const *values; /* every value it can take, e.g. {"tcp", "udp", "unix"} */
    size_t count;
} recd_metric_label;

#define RECD_METRIC_MAX_LABELS 2
#define RECD_METRIC_MAX_BUCKETS 32
#define RECD_METRIC_NO_SERIES ((size_t)-1)

typedef struct recd_metric recd_metric;
typedef struct recd_metrics recd_metrics;

recd_metrics *recd_metrics_new(void);
void recd_metrics_free(recd_metrics *reg);

/* Registers a family. Names must be valid Prometheus names and unique; histogram buckets must be
 * finite and strictly increasing (+Inf is implicit). Returns NULL on invalid input or no memory.
 * The label arrays and strings must outlive the registry (use static tables). */
recd_metric *recd_metrics_add(recd_metrics *reg, recd_metric_type type, const char *name, const char *help,
                              const recd_metric_label *labels, size_t nlabels, const double *buckets,
                              size_t nbuckets);

/* Another name for the family of (a rename's old name, kept for a release): the same type,
 * labels and values, rendered under name with help; updates go to of. NULL as for _add. */
recd_metric *recd_metrics_add_alias(recd_metrics *reg, const recd_metric *of, const char *name,
                                    const char *help);

/* Series index for the given label value indexes (one per label, in registration order); 0 for a
 * family without labels; RECD_METRIC_NO_SERIES when out of range (updates then do nothing). */
size_t recd_metric_series(const recd_metric *m, const size_t *value_indexes);
size_t recd_metric_series2(const recd_metric *m, size_t first, size_t second);

void recd_metric_add(recd_metric *m, size_t series, uint64_t n);          /* counter or gauge */
void recd_metric_sub(recd_metric *m, size_t series, uint64_t n);          /* gauge */
void recd_metric_set(recd_metric *m, size_t series, int64_t value);       /* gauge */
void recd_metric_observe(recd_metric *m, size_t series, double value);    /* histogram */


/* Current value of a counter or gauge series (tests, status lines). */
int64_t recd_metric_value(const recd_metric *m, size_t series);
/* Number of observations of a histogram series. */
uint64_t recd_metric_count(const recd_metric *m, size_t series);

/* Appends the text exposition format (version 0.0.4) of every family to out. 0 or -ENOMEM. */
int recd_metrics_render(const recd_metrics *reg, recd_buf *out);

#define RECD_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ---- recd's metric set ---- */

/* A state bound a message can be refused at (recd_state_refusals_total, by "what"). The formats
 * supply them; the top layer installs them (recd_metrics_install_state_kinds) before
 * recd_daemon_metrics_init, in the formats' list order. */
typedef struct recd_m_state_kind {
    const char *what;  /* the label value */
    const char *bound; /* the settings that bound it, for the help text */
    const char *held;  /* the state, for recd_session_state_bytes' help; NULL: not counted there */
} recd_m_state_kind;
#define RECD_M_STATE_KINDS_MAX 8
void recd_metrics_install_state_kinds(const recd_m_state_kind *const *kinds, size_t n);

typedef enum recd_m_transport { RECD_M_TCP, RECD_M_UDP, RECD_M_UNIX, RECD_M_NATS, RECD_M_TRANSPORTS } recd_m_transport;
/* The "format" label indexes the message formats (recd/message.h) without NONE: series f is
 * format f + 1, its value recd_msg_format_name(f + 1). Arrays indexed by it have room for every
 * message format lib may have (recd/format_list.h); the label has as many series as lib has. */
typedef size_t recd_m_format;
#define RECD_M_FORMATS ((size_t)RECD_MSG_FORMAT_SLOTS - 1)

/* Why an input message was rejected (label "reason" of recd_decode_errors_total). */
typedef enum recd_m_reason {
    RECD_M_FRAMING,         /* "framing": broken length prefix / line structure */
    RECD_M_TOO_LARGE,       /* "too_large": frame above limits.max_frame */
    RECD_M_SYNTAX,          /* "syntax": not valid JSON / binary encoding */
    RECD_M_SCHEMA,          /* "schema": well-formed but a field is missing or out of range */
    RECD_M_UNKNOWN_SESSION, /* "unknown_session": state/event/close for a session never opened */
    RECD_M_TIME_ORDER,      /* "time_order": time went backwards under rec.time_policy reject */
    RECD_M_AUTH,            /* "auth": missing or wrong auth token */
    RECD_M_ALREADY_OPEN,    /* "already_open": open of a live session (sessions.second_open) */
    RECD_M_NOT_OWNER,       /* "not_owner": a message for a session another connection owns */
    RECD_M_MAX_SESSIONS,    /* "max_sessions": an open at limits.max_sessions */
    RECD_M_PEER_SESSIONS,   /* "max_sessions_per_peer": an open at its peer's share of sessions */
    RECD_M_OTHER,           /* "other" */
    RECD_M_TICK_RANGE,      /* "tick_range": a Recap tick further from the first than a file spans */
    RECD_M_NO_STATE,        /* "no_state": a Recap event before the session's first state */
    RECD_M_UNWRITABLE,      /* "unwritable": an open while recd cannot create files under its root */
    RECD_M_REASONS
} recd_m_reason;

/* Why a stream connection was closed by recd before its client ended it (label "reason" of
 * recd_connections_dropped_total); protocol errors are counted by recd_decode_errors_total. */
typedef enum recd_m_conn_drop {
    RECD_M_CONN_DROP_IDLE,          /* "idle": no session and no input for limits.idle_timeout */
    RECD_M_CONN_DROP_FRAME_TIMEOUT, /* "frame_timeout": a frame unfinished for limits.frame_timeout */
    RECD_M_CONN_DROP_SHED,          /* "shed": gave its place to a new connection at a limit */
    RECD_M_CONN_DROP_REFUSED,       /* "refused": a new connection over a limit, none to shed */
    RECD_M_CONN_DROP_TLS_HANDSHAKE, /* "tls_handshake": a TLS handshake failed (garbage, an old
                                     * version, a certificate refused by either side) */
    RECD_M_CONN_DROP_TLS_TIMEOUT,   /* "tls_handshake_timeout": not done in tls.handshake_timeout */
    RECD_M_CONN_DROP_TLS_IDENTITY,  /* "tls_identity": a client certificate no identities pattern
                                     * matches */
    RECD_M_CONN_DROPS
} recd_m_conn_drop;

/* Why a write to a recording file failed (label "reason" of recd_write_errors_total). */
typedef enum recd_m_write_error {
    RECD_M_WRITE_NO_SPACE,  /* "no_space": ENOSPC, EDQUOT */
    RECD_M_WRITE_READ_ONLY, /* "read_only": EROFS */
    RECD_M_WRITE_DENIED,    /* "permission": EACCES, EPERM */
    RECD_M_WRITE_MISSING,   /* "missing": ENOENT, ENOTDIR (the output root or a folder is gone) */
    RECD_M_WRITE_IO,        /* "io": EIO and any other error */
    RECD_M_WRITE_ERRORS
} recd_m_write_error;

typedef struct recd_daemon_metrics {
    recd_metrics *registry;
    recd_metric *build_info;                /* gauge {version, commit}, always 1 */
    recd_metric *sessions_open;             /* gauge */
    recd_metric *sessions_open_by_format;   /* gauge {format}, kept by the session registry */
    recd_metric *connections_open;          /* gauge, published at each scrape */
    recd_metric *samples_total;             /* counter {transport, format} */
    recd_metric *in_bytes_total;            /* counter {transport, format} */
    recd_metric *bytes_in_total;            /* deprecated name of in_bytes_total (one release) */
    recd_metric *decode_errors_total;       /* counter {reason} */
    recd_metric *udp_gaps_total;            /* counter */
    recd_metric *udp_duplicates_total;      /* counter */
    recd_metric *udp_seq_epochs_total;      /* counter {reason}: sequence numbering started again */
    recd_metric *sessions_dormant;          /* gauge: sessions idle past rotation.idle_timeout, kept */
    recd_metric *sessions_forgotten_total;  /* counter {reason}: dormant sessions forgotten */
    recd_metric *written_bytes_total;       /* counter */
    recd_metric *bytes_written_total;       /* deprecated name of written_bytes_total */
    recd_metric *files_finalized_total;     /* counter */
    recd_metric *part_manifests_total;      /* counter: output.part_manifest files stored */
    recd_metric *part_manifest_failures_total; /* counter: ... that could not be stored */
    recd_metric *flush_latency_seconds;     /* histogram */
    recd_metric *loop_lag_seconds;          /* histogram: busy time of each loop iteration */
    recd_metric *udp_kernel_drops_total;    /* counter: datagrams the kernel dropped, socket full */
    recd_metric *udp_joined_datagrams_total; /* counter: datagrams received joined (UDP GRO) */
    recd_metric *buffered_bytes;            /* gauge */
    recd_metric *session_state_bytes;       /* gauge: state kept for peers (session_hold) */
    recd_metric *state_refusals_total;      /* counter {what}: messages refused at a state bound */
    recd_metric *backpressure_events_total; /* counter */
    recd_metric *config_reloads_total;      /* counter {result: ok, failed, refused} */
    recd_metric *config_reloads_refused_total; /* counter {reason: recd_reload_refusal} */
    recd_metric *heap_bytes;                /* gauge, sampled at each scrape */
    recd_metric *time_clamped_total;        /* counter: .rec times raised under clamp */
    recd_metric *samples_dropped_total;     /* counter {reason}: accepted input not kept */
    recd_metric *write_errors_total;        /* counter {reason}: writes that failed (and are retried) */
    recd_metric *lost_bytes_total;          /* counter: queued bytes that never reached a file */
    recd_metric *bytes_lost_total;          /* deprecated name of lost_bytes_total */
    recd_metric *connections_dropped_total; /* counter {reason} */
    recd_metric *partial_frame_bytes;       /* gauge, published at each scrape */
    recd_metric *nats_connected;            /* gauge: nats:// inputs connected */
    recd_metric *nats_partitions_owned;     /* gauge */
    recd_metric *nats_lease_renew_failures_total; /* counter */
    recd_metric *nats_consumer_lag_messages; /* gauge */
    recd_metric *nats_redeliveries_total;   /* counter */
    recd_metric *nats_duplicates_dropped_total; /* counter */
    recd_metric *nats_closed_marks_dropped_total; /* counter */
    recd_metric *nats_acked_total;          /* counter */
    recd_metric *nats_ack_frames_total;     /* counter */
    recd_metric *nats_pull_requests_total;  /* counter */
    recd_metric *nats_session_record_writes_total; /* counter */
    recd_metric *nats_sessions_taken_over_total; /* counter */
    recd_metric *nats_session_record_failures_total; /* counter */
    recd_metric *ring_bytes;                /* gauge: instant-replay rings, all sessions */
    recd_metric *ring_sessions;             /* gauge: sessions keeping a ring */
    recd_metric *ring_saves;                /* counter: saves written */
    recd_metric *tls_connections_total;     /* counter {identity}: TLS handshakes completed */
    const char **tls_identity_values;       /* its label values (malloc'd), see below */
    size_t tls_identity_count;
    recd_metric_label tls_identity_label;
    /* The standard process metrics (Prometheus client conventions), sampled at each scrape. */
    recd_metric *process_cpu_seconds_total;
    recd_metric *process_resident_memory_bytes;
    recd_metric *process_virtual_memory_bytes;
    recd_metric *process_open_fds;
    recd_metric *process_max_fds;
    recd_metric *process_start_time_seconds;
} recd_daemon_metrics;

/* Why a sample that arrived was not kept (label "reason" of recd_samples_dropped_total). */
typedef enum recd_m_drop {
    RECD_M_DROP_BUFFER_FULL, /* "buffer_full": a datagram over the session or process buffer limit */
    /* An instant-replay ring's sample let go before ring.window because of a memory bound: */
    RECD_M_DROP_RING_SESSION_MEMORY, /* "ring_session_memory": its oldest, at ring.session_memory */
    RECD_M_DROP_RING_PROCESS_MEMORY, /* "ring_process_memory": its oldest, or a new one when the
                                      * ring holds none, at ring.process_memory */
    RECD_M_DROP_PEER_BUFFER, /* "peer_buffer": a datagram whose peer is over limits.peer_buffer */
    RECD_M_DROP_UNWRITABLE, /* "unwritable": taken, then no file could hold it (a Recap tick whose
                             * part could not start or that its encoder refused: out of memory) */
    RECD_M_DROPS
} recd_m_drop;

/* Why a UDP session's sequence numbering started a new epoch (label "reason" of
 * recd_udp_seq_epochs_total; daemon/record/session_seq.h). */
typedef enum recd_m_seq_epoch {
    RECD_M_SEQ_EPOCH_WINDOW, /* "window": a seq far outside the window of the last accepted ones */
    RECD_M_SEQ_EPOCH_RESUME, /* "resume": numbering restarted after an open with resume */
    RECD_M_SEQ_EPOCHS
} recd_m_seq_epoch;

/* Why a dormant session was forgotten (label "reason" of recd_sessions_forgotten_total). */
typedef enum recd_m_forget {
    RECD_M_FORGET_TIMEOUT, /* "timeout": dormant for rotation.forget_after */
    RECD_M_FORGET_LIMIT,   /* "limit": more than limits.max_dormant_sessions were dormant */
    RECD_M_FORGET_ROOM,    /* "room": a new open at limits.max_sessions took its place */
    RECD_M_FORGETS
} recd_m_forget;

/* Registers every recd metric (all series start at 0, so dashboards see them at once). 0 or -ENOMEM. */
int recd_daemon_metrics_init(recd_daemon_metrics *m);
void recd_daemon_metrics_free(recd_daemon_metrics *m);

/* Adds input of one transport and format: samples (states and events) and bytes (every message). */
void recd_metrics_input(recd_daemon_metrics *m, recd_m_transport t, recd_m_format f, uint64_t samples,
                        uint64_t bytes);
void recd_metrics_decode_error(recd_daemon_metrics *m, recd_m_reason reason);
void recd_metrics_flush_done(recd_daemon_metrics *m, uint64_t bytes_written, double seconds);
/* Counts n failed writes under the reason that errno err (negative or positive) names. */
void recd_metrics_write_errors(recd_daemon_metrics *m, int err, uint64_t n);
/* Counts accepted bytes that never reached a file. */
void recd_metrics_bytes_lost(recd_daemon_metrics *m, uint64_t n);
/* The metrics label of a message format; f must be a format, not RECD_MSG_FMT_NONE (an accepted
 * message always belongs to a session opened with one). */
recd_m_format recd_metrics_format_of(recd_msg_format f);
void recd_metrics_config_reload(recd_daemon_metrics *m, int ok);
/* A message refused at the state bound whose label value is what (an installed state kind). */
void recd_metrics_state_refused(recd_daemon_metrics *m, const char *what);
/* A valid file refused (config.h, recd_config_reload_check): result "refused", and its reason. */
void recd_metrics_config_reload_refused(recd_daemon_metrics *m, int reason);
void recd_metrics_conn_dropped(recd_daemon_metrics *m, recd_m_conn_drop reason);
/* Registers recd_tls_connections_total, labelled by identity: each identities pattern of the
 * configuration at start (copied), "unmapped" (a client certificate that no pattern known at
 * start matches: no identities section, or a pattern a reload added) and "none" (no client
 * certificate asked for). Bounded by the configuration, never by what peers send. 0 or -ENOMEM. */
int recd_metrics_add_tls_identities(recd_daemon_metrics *m, const char *const *patterns, size_t n);
/* Counts a completed handshake under pattern (NULL: none asked for; unknown: "unmapped"). */
void recd_metrics_tls_connection(recd_daemon_metrics *m, const char *pattern, bool client_cert);
/* The label values of recd_samples_dropped_total and recd_decode_errors_total ("" out of range). */
const char *recd_metrics_drop_name(recd_m_drop d);
const char *recd_metrics_reason_name(recd_m_reason r);
/* Samples process-wide gauges (heap in use, process_*); called before each /metrics render. */
void recd_metrics_refresh_process(recd_daemon_metrics *m);

#endif
