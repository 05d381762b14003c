/* SPDX-License-Identifier: MIT */
/* Metrics registry, Prometheus text rendering and recd's metric set (see metrics.h). */
#include "metrics.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "alloc_stats.h"
#include "config.h"
#include "recd/buf_printf.h"
#include "recd/version.h"

#ifndef RECD_BUILD_COMMIT
#define RECD_BUILD_COMMIT "unknown" /* set by daemon/CMakeLists.txt from git */
#endif
struct recd_metric {
    recd_metric_type type;
    const char *name;
    const char *help;
    recd_metric_label labels[RECD_METRIC_MAX_LABELS];
    size_t nlabels;
    double buckets[RECD_METRIC_MAX_BUCKETS];
    size_t nbuckets;
    size_t nseries;
    size_t stride; /* cells per series: 1, or buckets + the +Inf bucket + the sum for histograms */
    bool real;     /* the one cell holds a double's bits (recd_metrics_add_real) */
    bool alias;    /* cells are another family's (recd_metrics_add_alias): not owned */
    _Atomic uint64_t *cells;
};

struct recd_metrics {
    recd_metric **families;
    size_t count;
    size_t cap;
};

recd_metrics *recd_metrics_new(void) { return calloc(1, sizeof(recd_metrics)); }

void recd_metrics_free(recd_metrics *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->count; i++) {
        if (!reg->families[i]->alias)
            free(reg->families[i]->cells);
        free(reg->families[i]);
    }
    free(reg->families);
    free(reg);
}

static int valid_name(const char *s, int allow_colon)
{
    if (!s || !*s)
        return 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':') ||
                 (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

recd_metric *recd_metrics_add(recd_metrics *reg, recd_metric_type type, const char *name, const char *help,
                              const recd_metric_label *labels, size_t nlabels, const double *buckets,
                              size_t nbuckets)
{
    if (!reg || !valid_name(name, 1) || !help || nlabels > RECD_METRIC_MAX_LABELS ||
        (nlabels && !labels))
        return NULL;
    if (type == RECD_METRIC_HISTOGRAM) {
        if (nbuckets == 0 || nbuckets > RECD_METRIC_MAX_BUCKETS || !buckets)
            return NULL;
        for (size_t i = 0; i < nbuckets; i++)
            if (!isfinite(buckets[i]) || (i > 0 && buckets[i] <= buckets[i - 1]))
                return NULL;
    } else if (nbuckets != 0) {
        return NULL;
    }
    for (size_t i = 0; i < reg->count; i++)
        if (strcmp(reg->families[i]->name, name) == 0)
            return NULL;
    size_t nseries = 1;
    for (size_t i = 0; i < nlabels; i++) {
        if (!valid_name(labels[i].name, 0) || strcmp(labels[i].name, "le") == 0 || labels[i].count == 0 ||
            labels[i].count > 1024 || !labels[i].values)
            return NULL;
        nseries *= labels[i].count;
    }

    recd_metric *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->type = type;
    m->name = name;
    m->help = help;
    m->nlabels = nlabels;
    for (size_t i = 0; i < nlabels; i++)
        m->labels[i] = labels[i];
    m->nbuckets = nbuckets;
    for (size_t i = 0; i < nbuckets; i++)
        m->buckets[i] = buckets[i];
    m->nseries = nseries;
    m->stride = (type == RECD_METRIC_HISTOGRAM) ? nbuckets + 2 : 1;
    m->cells = calloc(nseries * m->stride, sizeof *m->cells);
    if (!m->cells) {
        free(m);
        return NULL;
    }
    for (size_t i = 0; i < nseries * m->stride; i++)
        atomic_init(&m->cells[i], 0);
    if (reg->count == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        recd_metric **f = realloc(reg->families, cap * sizeof *f);
        if (!f) {
            free(m->cells);
            free(m);
            return NULL;
        }
        reg->families = f;
        reg->cap = cap;
    }
    reg->families[reg->count++] = m;
    return m;
}

/* A family without labels whose value is a real number sampled from elsewhere (the process_*
 * metrics: CPU seconds, start time), set whole with recd_metric_set_real. NULL as for _add. */
static recd_metric *recd_metrics_add_real(recd_metrics *reg, recd_metric_type type,
                                          const char *name, const char *help)
{
    if (type == RECD_METRIC_HISTOGRAM)
        return NULL;
    recd_metric *m = recd_metrics_add(reg, type, name, help, NULL, 0, NULL, 0);
    if (m)
        m->real = true;
    return m;
}

recd_metric *recd_metrics_add_alias(recd_metrics *reg, const recd_metric *of, const char *name,
                                    const char *help)
{
    if (!of || of->alias)
        return NULL;
    recd_metric *m = recd_metrics_add(reg, of->type, name, help, of->labels, of->nlabels,
                                      of->buckets, of->nbuckets);
    if (!m)
        return NULL;
    free(m->cells);
    m->cells = of->cells;
    m->real = of->real;
    m->alias = true;
    return m;
}

size_t recd_metric_series(const recd_metric *m, const size_t *value_indexes)
{
    if (!m)
        return RECD_METRIC_NO_SERIES;
    size_t series = 0;
    for (size_t i = 0; i < m->nlabels; i++) {
        if (!value_indexes || value_indexes[i] >= m->labels[i].count)
            return RECD_METRIC_NO_SERIES;
        series = series * m->labels[i].count + value_indexes[i];
    }
    return series;
}

size_t recd_metric_series2(const recd_metric *m, size_t first, size_t second)
{
    size_t idx[2] = {first, second};
    return recd_metric_series(m, idx);
}

static _Atomic uint64_t *cell(const recd_metric *m, size_t series)
{
    if (!m || series >= m->nseries)
        return NULL;
    return &m->cells[series * m->stride];
}

void recd_metric_add(recd_metric *m, size_t series, uint64_t n)
{
    _Atomic uint64_t *c = cell(m, series);
    if (c && m->type != RECD_METRIC_HISTOGRAM && !m->real)
        atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

void recd_metric_sub(recd_metric *m, size_t series, uint64_t n)
{
    _Atomic uint64_t *c = cell(m, series);
    if (c && m->type == RECD_METRIC_GAUGE && !m->real)
        atomic_fetch_sub_explicit(c, n, memory_order_relaxed);
}

void recd_metric_set(recd_metric *m, size_t series, int64_t value)
{
    _Atomic uint64_t *c = cell(m, series);
    if (c && m->type == RECD_METRIC_GAUGE && !m->real)
        atomic_store_explicit(c, (uint64_t)value, memory_order_relaxed);
}

static double bits_to_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t double_to_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static void recd_metric_set_real(recd_metric *m, double value)
{
    _Atomic uint64_t *c = cell(m, 0);
    if (c && m->real)
        atomic_store_explicit(c, double_to_bits(value), memory_order_relaxed);
}

void recd_metric_observe(recd_metric *m, size_t series, double value)
{
    _Atomic uint64_t *c = cell(m, series);
    if (!c || m->type != RECD_METRIC_HISTOGRAM || isnan(value))
        return;
    size_t b = 0;
    while (b < m->nbuckets && value > m->buckets[b])
        b++;
    atomic_fetch_add_explicit(&c[b], 1, memory_order_relaxed);
    _Atomic uint64_t *sum = &c[m->nbuckets + 1];
    uint64_t old = atomic_load_explicit(sum, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(sum, &old, double_to_bits(bits_to_double(old) + value),
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

/* Two's-complement reinterpretation without implementation-defined conversion. */
static int64_t as_signed(uint64_t u)
{
    if (u <= (uint64_t)INT64_MAX)
        return (int64_t)u;
    return -(int64_t)(~u) - 1;
}

int64_t recd_metric_value(const recd_metric *m, size_t series)
{
    _Atomic uint64_t *c = cell(m, series);
    if (!c || m->type == RECD_METRIC_HISTOGRAM)
        return 0;
    return as_signed(atomic_load_explicit(c, memory_order_relaxed));
}

uint64_t recd_metric_count(const recd_metric *m, size_t series)
{
    _Atomic uint64_t *c = cell(m, series);
    if (!c || m->type != RECD_METRIC_HISTOGRAM)
        return 0;
    uint64_t total = 0;
    for (size_t b = 0; b <= m->nbuckets; b++)
        total += atomic_load_explicit(&c[b], memory_order_relaxed);
    return total;
}

/* ---- rendering ---- */

typedef struct out {
    recd_buf *buf;
    int err;
} out;

static void put(out *o, const char *s, size_t len)
{
    if (!o->err && recd_buf_append(o->buf, s, len) < 0)
        o->err = -ENOMEM;
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(out *o, const char *fmt, ...)
{
    if (o->err)
        return;
    va_list ap;
    va_start(ap, fmt);
    o->err = recd_buf_vprintf(o->buf, fmt, ap);
    va_end(ap);
}

/* HELP text escapes backslash and newline; label values also escape the double quote. */
static void put_escaped(out *o, const char *s, int quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            puts_(o, "\\\\");
        else if (*s == '\n')
            puts_(o, "\\n");
        else if (quote && *s == '"')
            puts_(o, "\\\"");
        else
            put(o, s, 1);
    }
}

/* Shortest text that reads back as the same double, in the forms Prometheus parses. */
static const char *format_double(double v, char *tmp, size_t cap)
{
    if (isnan(v))
        return "NaN";
    if (isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(tmp, cap, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    return tmp;
}

/* Writes name{l1="v1",l2="v2"[,le="x"]} for a series. */
static void put_series_name(out *o, const recd_metric *m, const char *suffix, size_t series, const char *le)
{
    puts_(o, m->name);
    puts_(o, suffix);
    if (m->nlabels == 0 && !le)
        return;
    size_t idx[RECD_METRIC_MAX_LABELS];
    size_t rest = series;
    for (size_t i = m->nlabels; i-- > 0;) {
        idx[i] = rest % m->labels[i].count;
        rest /= m->labels[i].count;
    }
    puts_(o, "{");
    for (size_t i = 0; i < m->nlabels; i++) {
        if (i)
            puts_(o, ",");
        puts_(o, m->labels[i].name);
        puts_(o, "=\"");
        put_escaped(o, m->labels[i].values[idx[i]], 1);
        puts_(o, "\"");
    }
    if (le) {
        if (m->nlabels)
            puts_(o, ",");
        puts_(o, "le=\"");
        puts_(o, le);
        puts_(o, "\"");
    }
    puts_(o, "}");
}

static void render_histogram_series(out *o, const recd_metric *m, size_t series)
{
    _Atomic uint64_t *c = &m->cells[series * m->stride];
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= m->nbuckets; b++) {
        cumulative += atomic_load_explicit(&c[b], memory_order_relaxed);
        char tmp[40];
        const char *le = (b == m->nbuckets) ? "+Inf" : format_double(m->buckets[b], tmp, sizeof tmp);
        put_series_name(o, m, "_bucket", series, le);
        putf(o, " %llu\n", (unsigned long long)cumulative);
    }
    put_series_name(o, m, "_sum", series, NULL);
    char tmp[40];
    double sum = bits_to_double(atomic_load_explicit(&c[m->nbuckets + 1], memory_order_relaxed));
    putf(o, " %s\n", format_double(sum, tmp, sizeof tmp));
    put_series_name(o, m, "_count", series, NULL);
    putf(o, " %llu\n", (unsigned long long)cumulative);
}

int recd_metrics_render(const recd_metrics *reg, recd_buf *buf)
{
    static const char *const type_names[] = {"counter", "gauge", "histogram"};
    out o = {buf, 0};
    for (size_t f = 0; reg && f < reg->count; f++) {
        const recd_metric *m = reg->families[f];
        putf(&o, "# HELP %s ", m->name);
        put_escaped(&o, m->help, 0);
        putf(&o, "\n# TYPE %s %s\n", m->name, type_names[m->type]);
        for (size_t s = 0; s < m->nseries; s++) {
            if (m->type == RECD_METRIC_HISTOGRAM) {
                render_histogram_series(&o, m, s);
                continue;
            }
            put_series_name(&o, m, "", s, NULL);
            uint64_t v = atomic_load_explicit(&m->cells[s], memory_order_relaxed);
            char tmp[40];
            if (m->real)
                putf(&o, " %s\n", format_double(bits_to_double(v), tmp, sizeof tmp));
            else if (m->type == RECD_METRIC_GAUGE)
                putf(&o, " %lld\n", (long long)as_signed(v));
            else
                putf(&o, " %llu\n", (unsigned long long)v);
        }
    }
    return o.err;
}

/* ---- recd's metric set ---- */

static const char *const transport_values[] = {"tcp", "udp", "unix", "nats"};
/* Filled from recd_msg_format_name() by recd_daemon_metrics_init(). */
static const char *format_values[RECD_M_FORMATS];
static const char *const reason_values[] = {"framing", "too_large", "syntax", "schema",
                                            "unknown_session", "time_order", "auth", "already_open",
                                            "not_owner", "max_sessions", "max_sessions_per_peer",
                                            "other", "tick_range", "no_state", "unwritable"};
static const char *const result_values[] = {"ok", "failed", "refused"};
static const char *const write_error_values[] = {"no_space", "read_only", "permission", "missing", "io"};
static const char *const version_values[] = {RECD_VERSION_STRING};
static const char *const commit_values[] = {RECD_BUILD_COMMIT};

_Static_assert(sizeof transport_values / sizeof *transport_values == RECD_M_TRANSPORTS, "transport labels");
_Static_assert(sizeof reason_values / sizeof *reason_values == RECD_M_REASONS, "reason labels");
_Static_assert(sizeof write_error_values / sizeof *write_error_values == RECD_M_WRITE_ERRORS, "write labels");

/* Their format counts are set by recd_daemon_metrics_init(), to the message formats lib has. */
static recd_metric_label transport_format[] = {
    {"transport", transport_values, RECD_M_TRANSPORTS},
    {"format", format_values, 0},
};
static recd_metric_label format_label[] = {{"format", format_values, 0}};
static const recd_metric_label reason_label[] = {{"reason", reason_values, RECD_M_REASONS}};
static const char *const drop_values[] = {"buffer_full", "ring_session_memory",
                                          "ring_process_memory", "peer_buffer", "unwritable"};
_Static_assert(sizeof drop_values / sizeof *drop_values == RECD_M_DROPS, "drop labels");
const char *recd_metrics_drop_name(recd_m_drop d)
{
    return (size_t)d < RECD_M_DROPS ? drop_values[d] : "";
}

const char *recd_metrics_reason_name(recd_m_reason r)
{
    return (size_t)r < RECD_M_REASONS ? reason_values[r] : "";
}

static const char *const conn_drop_values[] = {"idle", "frame_timeout", "shed", "refused",
                                               "tls_handshake", "tls_handshake_timeout",
                                               "tls_identity"};
_Static_assert(sizeof conn_drop_values / sizeof *conn_drop_values == RECD_M_CONN_DROPS, "conn_drop_values");
static const char *const seq_epoch_values[] = {"window", "resume"};
_Static_assert(sizeof seq_epoch_values / sizeof *seq_epoch_values == RECD_M_SEQ_EPOCHS, "seq_epoch_values");
static const char *const forget_values[] = {"timeout", "limit", "room"};
_Static_assert(sizeof forget_values / sizeof *forget_values == RECD_M_FORGETS, "forget_values");
static const recd_metric_label seq_epoch_label[] = {{"reason", seq_epoch_values, RECD_M_SEQ_EPOCHS}};
static const recd_metric_label forget_label[] = {{"reason", forget_values, RECD_M_FORGETS}};
static const recd_metric_label drop_label[] = {{"reason", drop_values, RECD_M_DROPS}};
static const recd_metric_label conn_drop_label[] = {{"reason", conn_drop_values, RECD_M_CONN_DROPS}};
static const recd_metric_label result_label[] = {{"result", result_values, 3}};
/* recd_reload_refusal (config.h) without RECD_RELOAD_ACCEPTED, in its order. */
static const char *const reload_refusal_values[] = {"empty_file", "auth_off", "default_listeners",
                                                    "listen_failed"};
_Static_assert(sizeof reload_refusal_values / sizeof *reload_refusal_values == RECD_RELOAD_REFUSALS - 1,
               "reload refusal labels");
static const recd_metric_label reload_refusal_label[] = {{"reason", reload_refusal_values, RECD_RELOAD_REFUSALS - 1}};
/* Filled by recd_metrics_install_state_kinds(), as are the two help texts that name them. */
static const char *state_what_values[RECD_M_STATE_KINDS_MAX];
static recd_metric_label state_what_label[] = {{"what", state_what_values, 0}};
#define HELP_TEXT_MAX 1024
static char session_state_help[HELP_TEXT_MAX] = "State sessions keep because of what their peers sent, over "
                                                "all sessions: bounded by limits.session_state each, a "
                                                "quarter of limits.process_buffer per peer and half in all.";
static char state_refusals_help[HELP_TEXT_MAX];
static const recd_metric_label write_error_label[] = {{"reason", write_error_values, RECD_M_WRITE_ERRORS}};
static const recd_metric_label build_labels[] = {{"version", version_values, 1}, {"commit", commit_values, 1}};

/* Flushes are buffered writes of up to a few MiB: sub-millisecond normally, seconds when the disk
 * stalls. */
static const double flush_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                       0.1,    0.25,  0.5,    1,     2.5,  5,     10};

/* One event-loop iteration: tens of microseconds normally; at 200k datagrams/s a 4 MiB socket
 * buffer fills in about 20 ms, so the buckets are fine around there. */
static const double loop_lag_buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005,
                                          0.01,   0.02,    0.05,   0.1,   0.25,  1};

#define DEPRECATED(new_name) "Deprecated: use " new_name " (this name goes in the next release)."

/* How a row of the families table is registered. */
typedef enum family_kind {
    FAMILY_PLAIN,   /* recd_metrics_add: a recd_ family, with labels or buckets if it has them */
    FAMILY_ALIAS,   /* recd_metrics_add_alias: a renamed family's old name, kept for one release */
    FAMILY_PROCESS, /* recd_metrics_add_real: a process_ family, set from a double */
} family_kind;

/* One family of the daemon's metrics, in the order /metrics lists them. */
typedef struct family_row {
    family_kind kind;
    recd_metric_type type;
    size_t slot;  /* offsetof(recd_daemon_metrics, its pointer) */
    size_t alias; /* FAMILY_ALIAS: the slot of the family it renames */
    const char *name, *help;
    const recd_metric_label *labels;
    size_t nlabels;
    const double *buckets; /* histograms */
    size_t nbuckets;
} family_row;

#define SLOT(field) offsetof(recd_daemon_metrics, field)
#define COUNT(array) (sizeof(array) / sizeof *(array))
#define ROW(kind, type, field, name, help, labels, nlabels, buckets, nbuckets)                      \
    {kind, type, SLOT(field), 0, name, help, labels, nlabels, buckets, nbuckets}
#define COUNTER(f, name, help) ROW(FAMILY_PLAIN, RECD_METRIC_COUNTER, f, name, help, NULL, 0, NULL, 0)
#define GAUGE(f, name, help) ROW(FAMILY_PLAIN, RECD_METRIC_GAUGE, f, name, help, NULL, 0, NULL, 0)
#define COUNTER_BY(f, name, help, l)                                                                \
    ROW(FAMILY_PLAIN, RECD_METRIC_COUNTER, f, name, help, l, COUNT(l), NULL, 0)
#define GAUGE_BY(f, name, help, l)                                                                  \
    ROW(FAMILY_PLAIN, RECD_METRIC_GAUGE, f, name, help, l, COUNT(l), NULL, 0)
#define HISTOGRAM(f, name, help, b)                                                                 \
    ROW(FAMILY_PLAIN, RECD_METRIC_HISTOGRAM, f, name, help, NULL, 0, b, COUNT(b))
#define ALIAS(f, of, name, help)                                                                    \
    {FAMILY_ALIAS, RECD_METRIC_COUNTER, SLOT(f), SLOT(of), name, help, NULL, 0, NULL, 0}
#define PROCESS_COUNTER(f, name, help)                                                              \
    ROW(FAMILY_PROCESS, RECD_METRIC_COUNTER, f, name, help, NULL, 0, NULL, 0)
#define PROCESS_GAUGE(f, name, help)                                                                \
    ROW(FAMILY_PROCESS, RECD_METRIC_GAUGE, f, name, help, NULL, 0, NULL, 0)

static const family_row families[] = {
    GAUGE_BY(build_info, "recd_build_info",
             "recd's version and the git commit it was built from (always 1).", build_labels),
    GAUGE(sessions_open, "recd_sessions_open", "Recording sessions currently open."),
    GAUGE_BY(sessions_open_by_format, "recd_sessions_open_by_format",
             "Recording sessions currently open, by format.", format_label),
    GAUGE(connections_open, "recd_connections_open",
          "Stream connections (TCP and Unix) currently open."),
    COUNTER_BY(samples_total, "recd_samples_total",
               "Samples (state and event messages) accepted.", transport_format),
    COUNTER_BY(in_bytes_total, "recd_in_bytes_total",
               "Bytes of accepted input messages.", transport_format),
    ALIAS(bytes_in_total, in_bytes_total, "recd_bytes_in_total", DEPRECATED("recd_in_bytes_total")),
    COUNTER_BY(decode_errors_total, "recd_decode_errors_total",
               "Input messages rejected, by reason.", reason_label),
    COUNTER(udp_gaps_total, "recd_udp_gaps_total", "UDP datagrams missing by sequence number."),
    COUNTER(udp_duplicates_total, "recd_udp_duplicates_total",
            "UDP datagrams dropped as duplicates."),
    COUNTER_BY(udp_seq_epochs_total, "recd_udp_seq_epochs_total",
               "UDP sessions whose sequence numbers started a new epoch: a seq far outside the window of "
               "the last accepted ones, or a restart after an open with resume.", seq_epoch_label),
    GAUGE(sessions_dormant, "recd_sessions_dormant",
          "Sessions idle past rotation.idle_timeout (file finalized) whose key is still known: their "
          "next sample starts a new part."),
    COUNTER_BY(sessions_forgotten_total, "recd_sessions_forgotten_total",
               "Dormant sessions forgotten: after rotation.forget_after, over limits.max_dormant_sessions, "
               "or to make room for a new open at limits.max_sessions.", forget_label),
    COUNTER(written_bytes_total, "recd_written_bytes_total", "Bytes written to recording files."),
    ALIAS(bytes_written_total, written_bytes_total, "recd_bytes_written_total",
          DEPRECATED("recd_written_bytes_total")),
    COUNTER(files_finalized_total, "recd_files_finalized_total",
            "Recording files finalized (renamed from .part)."),
    COUNTER(part_manifests_total, "recd_part_manifests_total",
            "Part manifests (output.part_manifest) stored beside finalized parts."),
    COUNTER(part_manifest_failures_total, "recd_part_manifest_failures_total",
            "Part manifests (output.part_manifest), finalized or in progress, that could not be "
            "stored (logged)."),
    HISTOGRAM(flush_latency_seconds, "recd_flush_latency_seconds",
              "Time to write one session flush to its file.", flush_buckets),
    HISTOGRAM(loop_lag_seconds, "recd_loop_lag_seconds",
              "Time each event-loop iteration spent busy (from its start to the next one's, less the wait "
              "for input): while it is busy no socket is read.", loop_lag_buckets),
    COUNTER(udp_kernel_drops_total, "recd_udp_kernel_drops_total",
            "UDP datagrams the kernel dropped because a listener's receive buffer was full "
            "(SO_RXQ_OVFL)."),
    COUNTER(udp_joined_datagrams_total, "recd_udp_joined_datagrams_total",
            "UDP datagrams the kernel handed over joined with others in one receive (UDP GRO), each "
            "then decoded on its own."),
    GAUGE(buffered_bytes, "recd_buffered_bytes",
          "Bytes accepted but not yet written, over all sessions."),
    GAUGE(session_state_bytes, "recd_session_state_bytes",
          session_state_help),
    COUNTER_BY(state_refusals_total, "recd_state_refusals_total",
               state_refusals_help, state_what_label),
    COUNTER(backpressure_events_total, "recd_backpressure_events_total",
            "Times reading was paused because a buffer limit was hit."),
    COUNTER_BY(config_reloads_total, "recd_config_reloads_total",
               "Configuration reloads (SIGHUP), by result: ok, failed (the file is invalid) or refused "
               "(valid, but it would weaken recd: see recd_config_reloads_refused_total).",
               result_label),
    COUNTER_BY(config_reloads_refused_total, "recd_config_reloads_refused_total",
               "Reloads refused although the file is valid, by reason: it is empty, it drops auth.token "
               "without `token: none`, it has no listen list, or a new listener cannot be opened.",
               reload_refusal_label),
    GAUGE(heap_bytes, "recd_heap_bytes",
          "Heap bytes in use, from the C library's allocator statistics (0 where they are unavailable)."),
    COUNTER_BY(connections_dropped_total, "recd_connections_dropped_total",
               "Stream connections closed by recd before their client ended them, by reason.",
               conn_drop_label),
    GAUGE(partial_frame_bytes, "recd_partial_frame_bytes",
          "Bytes of unfinished frames and lines held for stream connections (count toward "
          "limits.process_buffer)."),
    GAUGE(ring_bytes, "recd_ring_bytes",
          "Memory of the instant-replay rings of all sessions (bounded by ring.process_memory)."),
    GAUGE(ring_sessions, "recd_ring_sessions", "Sessions keeping an instant-replay ring."),
    COUNTER(ring_saves, "recd_ring_saves_total",
            "Instant-replay saves written (each a finalized recording)."),
    COUNTER(time_clamped_total, "recd_time_clamped_total",
            ".rec samples whose time was raised to the previous sample's (rec.time_policy: clamp)."),
    COUNTER_BY(samples_dropped_total, "recd_samples_dropped_total",
               "Samples that arrived and were not kept, by reason.", drop_label),
    COUNTER_BY(write_errors_total, "recd_write_errors_total",
               "Writes to recording files that failed (each is retried with backoff), by reason.",
               write_error_label),
    COUNTER(lost_bytes_total, "recd_lost_bytes_total",
            "Bytes accepted that never reached a file (a part replaced behind recd's back, or writes still "
            "failing at shutdown)."),
    ALIAS(bytes_lost_total, lost_bytes_total, "recd_bytes_lost_total",
          DEPRECATED("recd_lost_bytes_total")),
    GAUGE(nats_connected, "recd_nats_connected",
          "nats:// inputs whose JetStream server is reachable now."),
    GAUGE(nats_partitions_owned, "recd_nats_partitions_owned",
          "Fleet partitions this instance holds the lease of, over every nats:// input."),
    COUNTER(nats_lease_renew_failures_total, "recd_nats_lease_renew_failures_total",
            "Partition lease claims or renewals that failed (a lost lease stops that partition here)."),
    GAUGE(nats_consumer_lag_messages, "recd_nats_consumer_lag_messages",
          "Messages waiting in the owned partitions' consumers (sum of num_pending), sampled at each pull."),
    COUNTER(nats_redeliveries_total, "recd_nats_redeliveries_total",
            "Stream messages delivered more than once (JetStream's delivery count above 1)."),
    COUNTER(nats_duplicates_dropped_total, "recd_nats_duplicates_dropped_total",
            "Stream messages dropped because their stream sequence was already taken or "
            "acknowledged, and frames of a session taken over whose seq its record says were "
            "written (one each)."),
    COUNTER(nats_closed_marks_dropped_total, "recd_nats_closed_marks_dropped_total",
            "Marks of sessions ended for good that a partition forgot before it was acknowledged "
            "past them, over limits.max_sessions (a redelivery after a takeover would open "
            "those sessions again)."),
    COUNTER(nats_acked_total, "recd_nats_acked_total",
            "Stream messages acknowledged once their bytes were in a file."),
    COUNTER(nats_ack_frames_total, "recd_nats_ack_frames_total",
            "Acknowledgements sent to JetStream (one covers several messages on an AckAll "
            "consumer)."),
    COUNTER(nats_pull_requests_total, "recd_nats_pull_requests_total",
            "Pull requests sent to the partitions' consumers."),
    COUNTER(nats_session_record_writes_total, "recd_nats_session_record_writes_total",
            "Session record writes and deletes stored in the sessions bucket."),
    COUNTER(nats_sessions_taken_over_total, "recd_nats_sessions_taken_over_total",
            "Sessions opened here from another instance's session record when a partition was claimed."),
    COUNTER(nats_session_record_failures_total, "recd_nats_session_record_failures_total",
            "Session record writes or deletes in the sessions bucket that failed (retried, or dropped "
            "when too many wait)."),
    PROCESS_COUNTER(process_cpu_seconds_total, "process_cpu_seconds_total",
                    "Total user and system CPU time spent in seconds."),
    PROCESS_GAUGE(process_resident_memory_bytes, "process_resident_memory_bytes",
                  "Resident memory size in bytes."),
    PROCESS_GAUGE(process_virtual_memory_bytes, "process_virtual_memory_bytes",
                  "Virtual memory size in bytes."),
    PROCESS_GAUGE(process_open_fds, "process_open_fds", "Number of open file descriptors."),
    PROCESS_GAUGE(process_max_fds, "process_max_fds", "Maximum number of open file descriptors."),
    PROCESS_GAUGE(process_start_time_seconds, "process_start_time_seconds",
                  "Start time of the process since the Unix epoch in seconds."),
};

static recd_metric **slot_of(recd_daemon_metrics *m, size_t slot)
{
    return (recd_metric **)(void *)((char *)m + slot);
}

/* Registers one row's family into its slot: the family, or NULL when out of memory. */
static recd_metric *register_family(recd_metrics *r, recd_daemon_metrics *m, const family_row *f)
{
    switch (f->kind) {
    case FAMILY_ALIAS: return recd_metrics_add_alias(r, *slot_of(m, f->alias), f->name, f->help);
    case FAMILY_PROCESS: return recd_metrics_add_real(r, f->type, f->name, f->help);
    default:
        return recd_metrics_add(r, f->type, f->name, f->help, f->labels, f->nlabels, f->buckets,
                                f->nbuckets);
    }
}

static double process_start_time(void);

/* Appends to a help text held in a fixed buffer (cut short if it would not fit). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void help_append(char *help, const char *fmt, ...)
{
    size_t n = strlen(help);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(help + n, HELP_TEXT_MAX - n, fmt, ap);
    va_end(ap);
}

void recd_metrics_install_state_kinds(const recd_m_state_kind *const *kinds, size_t n)
{
    char held[HELP_TEXT_MAX / 2] = "";
    n = n < RECD_M_STATE_KINDS_MAX ? n : RECD_M_STATE_KINDS_MAX;
    state_refusals_help[0] = session_state_help[0] = '\0';
    help_append(state_refusals_help,
                "Messages refused because they would take a session's state past its bound, by what: ");
    for (size_t i = 0; i < n; i++) {
        state_what_values[i] = kinds[i]->what;
        help_append(state_refusals_help, "%s%s (%s)", i ? ", " : "", kinds[i]->what, kinds[i]->bound);
        if (kinds[i]->held)
            snprintf(held + strlen(held), sizeof held - strlen(held), "%s%s", held[0] ? ", " : "",
                     kinds[i]->held);
    }
    help_append(state_refusals_help, ".");
    help_append(session_state_help, "State sessions keep because of what their peers sent%s%s%s, over all "
                "sessions: bounded by limits.session_state each, a quarter of limits.process_buffer "
                "per peer and half in all.", held[0] ? " (" : "", held, held[0] ? ")" : "");
    state_what_label[0].count = n;
}

/* The message formats lib has: the largest value with a descriptor. */
static size_t message_format_count(void)
{
    size_t n = 0;
    for (size_t f = 1; f < RECD_MSG_FORMAT_SLOTS; f++)
        if (recd_format__by_msg((recd_msg_format)f))
            n = f;
    return n;
}

int recd_daemon_metrics_init(recd_daemon_metrics *m)
{
    memset(m, 0, sizeof *m);
    size_t nformats = message_format_count();
    for (size_t f = 0; f < nformats; f++)
        format_values[f] = recd_msg_format_name((recd_msg_format)(f + 1));
    transport_format[1].count = format_label[0].count = nformats;
    recd_metrics *r = recd_metrics_new();
    if (!r)
        return -ENOMEM;
    m->registry = r;
    for (size_t i = 0; i < COUNT(families); i++) {
        if (families[i].nlabels && families[i].labels[0].count == 0)
            continue; /* by state kind, and none is installed: no such family, its slot NULL */
        recd_metric *family = register_family(r, m, &families[i]);
        if (!family) {
            recd_daemon_metrics_free(m);
            return -ENOMEM;
        }
        *slot_of(m, families[i].slot) = family;
    }
    recd_metric_set(m->build_info, 0, 1);
    recd_metric_set_real(m->process_start_time_seconds, process_start_time());
    return 0;
}

void recd_daemon_metrics_free(recd_daemon_metrics *m)
{
    recd_metrics_free(m->registry);
    for (size_t i = 0; i < m->tls_identity_count; i++)
        free((char *)m->tls_identity_values[i]);
    free(m->tls_identity_values);
    memset(m, 0, sizeof *m);
}

recd_m_format recd_metrics_format_of(recd_msg_format f)
{
    assert(f != RECD_MSG_FMT_NONE && (size_t)f <= RECD_M_FORMATS);
    return (size_t)f - 1;
}

void recd_metrics_state_refused(recd_daemon_metrics *m, const char *what)
{
    for (size_t i = 0; i < state_what_label[0].count; i++)
        if (strcmp(state_what_values[i], what) == 0)
            recd_metric_add(m->state_refusals_total, i, 1);
}

void recd_metrics_input(recd_daemon_metrics *m, recd_m_transport t, recd_m_format f, uint64_t samples,
                        uint64_t bytes)
{
    size_t s = recd_metric_series2(m->samples_total, (size_t)t, (size_t)f);
    recd_metric_add(m->samples_total, s, samples);
    recd_metric_add(m->in_bytes_total, s, bytes);
}

void recd_metrics_decode_error(recd_daemon_metrics *m, recd_m_reason reason)
{
    size_t idx = (size_t)reason;
    recd_metric_add(m->decode_errors_total, recd_metric_series(m->decode_errors_total, &idx), 1);
}

void recd_metrics_flush_done(recd_daemon_metrics *m, uint64_t bytes_written, double seconds)
{
    recd_metric_add(m->written_bytes_total, 0, bytes_written);
    recd_metric_observe(m->flush_latency_seconds, 0, seconds);
}

void recd_metrics_write_errors(recd_daemon_metrics *m, int err, uint64_t n)
{
    recd_m_write_error why;
    switch (err < 0 ? -err : err) {
    case ENOSPC:
    case EDQUOT: why = RECD_M_WRITE_NO_SPACE; break;
    case EROFS: why = RECD_M_WRITE_READ_ONLY; break;
    case EACCES:
    case EPERM: why = RECD_M_WRITE_DENIED; break;
    case ENOENT:
    case ENOTDIR: why = RECD_M_WRITE_MISSING; break;
    default: why = RECD_M_WRITE_IO; break;
    }
    size_t idx = (size_t)why;
    recd_metric_add(m->write_errors_total, recd_metric_series(m->write_errors_total, &idx), n);
}

void recd_metrics_bytes_lost(recd_daemon_metrics *m, uint64_t n)
{
    recd_metric_add(m->lost_bytes_total, 0, n);
}

/* Seconds since boot at which this process started (/proc/self/stat field 22, in clock ticks) plus
 * the boot time (/proc/stat btime); the current time where /proc is not there. */
static double process_start_time(void)
{
    double now = (double)time(NULL);
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return now;
    char line[256];
    long long btime = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &btime) == 1)
            break;
    fclose(f);
    f = fopen("/proc/self/stat", "r");
    if (!f || btime < 0) {
        if (f)
            fclose(f);
        return now;
    }
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    unsigned long long start = 0;
    long ticks = sysconf(_SC_CLK_TCK);
    /* after ") ": state is field 3, starttime field 22 */
    if (!p || ticks <= 0 ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
               &start) != 1)
        return now;
    return (double)btime + (double)start / (double)ticks;
}

static void refresh_fds(recd_daemon_metrics *m)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        recd_metric_set_real(m->process_max_fds, rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    double open = -1; /* the directory's own fd is counted below */
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            open++;
    closedir(d);
    recd_metric_set_real(m->process_open_fds, open < 0 ? 0 : open);
}

void recd_metrics_refresh_process(recd_daemon_metrics *m)
{
    recd_metric_set(m->heap_bytes, 0, (int64_t)alloc_stats_read().in_use);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        recd_metric_set_real(m->process_cpu_seconds_total,
                             (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        unsigned long long pages_virt = 0, pages_res = 0;
        long page = sysconf(_SC_PAGESIZE);
        if (fscanf(f, "%llu %llu", &pages_virt, &pages_res) == 2 && page > 0) {
            recd_metric_set_real(m->process_virtual_memory_bytes, (double)pages_virt * (double)page);
            recd_metric_set_real(m->process_resident_memory_bytes, (double)pages_res * (double)page);
        }
        fclose(f);
    }
    refresh_fds(m);
}

void recd_metrics_conn_dropped(recd_daemon_metrics *m, recd_m_conn_drop reason)
{
    size_t idx = (size_t)reason;
    recd_metric_add(m->connections_dropped_total,
                    recd_metric_series(m->connections_dropped_total, &idx), 1);
}

void recd_metrics_config_reload(recd_daemon_metrics *m, int ok)
{
    size_t idx = ok ? 0 : 1;
    recd_metric_add(m->config_reloads_total, recd_metric_series(m->config_reloads_total, &idx), 1);
}

void recd_metrics_config_reload_refused(recd_daemon_metrics *m, int reason)
{
    size_t idx = 2;
    recd_metric_add(m->config_reloads_total, recd_metric_series(m->config_reloads_total, &idx), 1);
    if (reason <= RECD_RELOAD_ACCEPTED || reason >= RECD_RELOAD_REFUSALS)
        return;
    idx = (size_t)reason - 1;
    recd_metric_add(m->config_reloads_refused_total, recd_metric_series(m->config_reloads_refused_total, &idx), 1);
}

int recd_metrics_add_tls_identities(recd_daemon_metrics *m, const char *const *patterns, size_t n)
{
    const char **values = calloc(n + 2, sizeof *values);
    if (!values)
        return -ENOMEM;
    m->tls_identity_values = values;
    for (size_t i = 0; i < n + 2; i++) {
        values[i] = strdup(i < n ? patterns[i] : i == n ? "unmapped" : "none");
        if (!values[i])
            return -ENOMEM;
        m->tls_identity_count = i + 1;
    }
    m->tls_identity_label = (recd_metric_label){"identity", values, n + 2};
    m->tls_connections_total = recd_metrics_add(
        m->registry, RECD_METRIC_COUNTER, "recd_tls_connections_total",
        "TLS handshakes completed on tls:// listeners, by the identities pattern their client "
        "certificate matched (\"unmapped\": none known at start; \"none\": no certificate asked for).",
        &m->tls_identity_label, 1, NULL, 0);
    return m->tls_connections_total ? 0 : -ENOMEM;
}

void recd_metrics_tls_connection(recd_daemon_metrics *m, const char *pattern, bool client_cert)
{
    size_t n = m->tls_identity_count, idx = n - 1; /* "none" */
    if (client_cert) {
        idx = n - 2;
        for (size_t i = 0; pattern && i + 2 < n; i++)
            if (strcmp(m->tls_identity_values[i], pattern) == 0)
                idx = i;
    }
    if (m->tls_connections_total)
        recd_metric_add(m->tls_connections_total, recd_metric_series(m->tls_connections_total, &idx), 1);
}
