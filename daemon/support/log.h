/* SPDX-License-Identifier: MIT */
/* recd's logger: one stderr line per event, a level filter, and rate limiting so a repeated error
 * cannot flood the journal. Lines carry a "<N>" syslog priority prefix for journald and pipes, or,
 * on a terminal, a local timestamp and the level in words. Safe to call from any thread. */
#ifndef RECD_DAEMON_LOG_H
#define RECD_DAEMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* syslog(3) priorities: the number is the "<N>" prefix. */
typedef enum recd_log_level {
    RECD_LOG_EMERG = 0,
    RECD_LOG_ALERT = 1,
    RECD_LOG_CRIT = 2,
    RECD_LOG_ERR = 3,
    RECD_LOG_WARNING = 4,
    RECD_LOG_NOTICE = 5,
    RECD_LOG_INFO = 6,
    RECD_LOG_DEBUG = 7
} recd_log_level;

#define RECD_LOG_LINE_MAX 1024 /* bytes per line, newline included; longer messages end in "..." */

/* "emerg".."debug"; also accepts "error" and "warn". Returns the level or -EINVAL. */
int recd_log_level_parse(const char *name);
const char *recd_log_level_name(int level);

void recd_log_set_level(int level); /* messages above it are dropped; default RECD_LOG_INFO */
bool recd_log_enabled(int level);

/* Warnings and worse with the same key are printed at most burst times per interval; the rest are
 * counted and reported as one "suppressed" line once the interval is over. burst 0 = no limit.
 * Default: 10 per 5 s. */
void recd_log_set_rate_limit(unsigned burst, uint64_t interval_ms);

/* How a line looks: "<6>message" (journald turns <N> into the entry's priority; also what a pipe
 * or file gets, so tools can filter by it), or "2026-11-25 20:51:14.123 warning: message" for a
 * person at a terminal (the level word only for warnings and worse). */
typedef enum recd_log_style { RECD_LOG_STYLE_PRIORITY, RECD_LOG_STYLE_TERMINAL } recd_log_style;
void recd_log_set_style(recd_log_style style); /* default RECD_LOG_STYLE_PRIORITY */
recd_log_style recd_log_get_style(void);
/* The style for stderr: terminal when it is a TTY, otherwise priority prefixes. */
recd_log_style recd_log_style_for_stderr(void);

/* Where finished lines go (each ends in '\n'); NULL restores stderr. For tests and embedding. */
typedef void (*recd_log_writer_fn)(void *ctx, const char *line, size_t len);
void recd_log_set_writer(recd_log_writer_fn writer, void *ctx);

/* Monotonic milliseconds used for rate limiting; NULL restores CLOCK_MONOTONIC. For tests. */
typedef uint64_t (*recd_log_clock_fn)(void);
void recd_log_set_clock(recd_log_clock_fn clock);

#if defined(__GNUC__)
#define RECD_LOG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RECD_LOG_PRINTF(a, b)
#endif

/* Logs one event. The format string is the rate-limit key, so every call site is limited on its own
 * whatever its arguments are. */
void recd_log(int level, const char *fmt, ...) RECD_LOG_PRINTF(2, 3);

/* Same with an explicit key, e.g. to limit per peer: recd_log_keyed(RECD_LOG_ERR, peer, ...). */
void recd_log_keyed(int level, const char *key, const char *fmt, ...) RECD_LOG_PRINTF(3, 4);

/* Prints the "suppressed" lines of rate-limit windows that have ended (all = also of windows still
 * open). Call it from a periodic timer (about once a second) and with all = true before exit, so
 * suppression is reported even when the flood stops. */
void recd_log_flush_suppressed(bool all);

/* The latest warnings and worse (up to 16, oldest first) as a JSON array's text in out (cap
 * bytes, at least 3; entries that do not fit are left out): [{"epoch_ms":N,"level":"warning",
 * "message":"..."}, ...]. Returns its length. */
size_t recd_log_recent(char *out, size_t cap);

#define log_emerg(...) recd_log(RECD_LOG_EMERG, __VA_ARGS__)
#define log_crit(...) recd_log(RECD_LOG_CRIT, __VA_ARGS__)
#define log_err(...) recd_log(RECD_LOG_ERR, __VA_ARGS__)
#define log_warn(...) recd_log(RECD_LOG_WARNING, __VA_ARGS__)
#define log_notice(...) recd_log(RECD_LOG_NOTICE, __VA_ARGS__)
#define log_info(...) recd_log(RECD_LOG_INFO, __VA_ARGS__)
#define log_debug(...) recd_log(RECD_LOG_DEBUG, __VA_ARGS__)

/* "s" after a count other than 1, for log lines ("3 connections"). */
static inline const char *log_plural(size_t n) { return n == 1 ? "" : "s"; }

#endif
