/* SPDX-License-Identifier: MIT */
/* The daemon logger (see log.h): formatting, level filter, per-key rate limiting, output. */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LIMIT_SLOTS 64
#define KEY_MAX 96
#define SAMPLE_MAX 160

/* One rate-limit window per key. */
typedef struct limit_slot {
    char key[KEY_MAX]; /* empty = free */
    int level;
    uint64_t window_start;
    unsigned printed;
    uint64_t suppressed;
    char sample[SAMPLE_MAX]; /* the last message printed for this key, quoted in the summary */
} limit_slot;

static atomic_int current_level = RECD_LOG_INFO;
static atomic_int current_style = RECD_LOG_STYLE_PRIORITY;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned limit_burst = 10;
static uint64_t limit_interval_ms = 5000;
static limit_slot slots[LIMIT_SLOTS];
static recd_log_writer_fn writer;
static void *writer_ctx;
static recd_log_clock_fn clock_fn;

static const char *const level_names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};

int recd_log_level_parse(const char *name)
{
    if (!name)
        return -EINVAL;
    for (int i = 0; i < 8; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    if (strcmp(name, "error") == 0)
        return RECD_LOG_ERR;
    if (strcmp(name, "warn") == 0)
        return RECD_LOG_WARNING;
    return -EINVAL;
}

const char *recd_log_level_name(int level)
{
    return (level >= 0 && level < 8) ? level_names[level] : "unknown";
}

void recd_log_set_level(int level)
{
    if (level < RECD_LOG_EMERG)
        level = RECD_LOG_EMERG;
    if (level > RECD_LOG_DEBUG)
        level = RECD_LOG_DEBUG;
    atomic_store(&current_level, level);
}

bool recd_log_enabled(int level) { return level <= atomic_load_explicit(&current_level, memory_order_relaxed); }

void recd_log_set_style(recd_log_style style) { atomic_store(&current_style, (int)style); }

recd_log_style recd_log_get_style(void) { return (recd_log_style)atomic_load(&current_style); }

recd_log_style recd_log_style_for_stderr(void)
{
    return isatty(STDERR_FILENO) ? RECD_LOG_STYLE_TERMINAL : RECD_LOG_STYLE_PRIORITY;
}

void recd_log_set_rate_limit(unsigned burst, uint64_t interval_ms)
{
    pthread_mutex_lock(&lock);
    limit_burst = burst;
    limit_interval_ms = interval_ms;
    memset(slots, 0, sizeof slots);
    pthread_mutex_unlock(&lock);
}

void recd_log_set_writer(recd_log_writer_fn fn, void *ctx)
{
    pthread_mutex_lock(&lock);
    writer = fn;
    writer_ctx = ctx;
    pthread_mutex_unlock(&lock);
}

void recd_log_set_clock(recd_log_clock_fn fn)
{
    pthread_mutex_lock(&lock);
    clock_fn = fn;
    pthread_mutex_unlock(&lock);
}

/* Copies at most cap - 1 bytes and terminates: truncation is intended here. */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static uint64_t now_ms(void)
{
    if (clock_fn)
        return clock_fn();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Called with the lock held. One write() per line so lines from several processes never mix. */
static void emit(const char *line, size_t len)
{
    if (writer) {
        writer(writer_ctx, line, len);
        return;
    }
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, line, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        line += w;
        len -= (size_t)w;
    }
}

/* "2026-11-25 20:51:14.123 " in local time, and the level in words for warnings and worse. */
static int terminal_prefix(char *out, size_t cap, int level)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    time_t secs = ts.tv_sec;
    char when[32] = "";
    if (localtime_r(&secs, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    static const char *const words[] = {"emergency: ", "alert: ", "critical: ", "error: ", "warning: "};
    return snprintf(out, cap, "%s.%03ld %s", when, ts.tv_nsec / 1000000L,
                    level <= RECD_LOG_WARNING ? words[level] : "");
}

/* Builds "<N>message\n" (or the terminal form) into out; control characters become spaces or '?'
 * so one event is one line even when the message quotes hostile input. */
static size_t format_line(char *out, size_t cap, int level, const char *msg)
{
    if (level < RECD_LOG_EMERG || level > RECD_LOG_DEBUG)
        level = RECD_LOG_ERR;
    int n = recd_log_get_style() == RECD_LOG_STYLE_TERMINAL ? terminal_prefix(out, cap, level)
                                                            : snprintf(out, cap, "<%d>", level);
    size_t len = (size_t)n;
    size_t room = cap - 2; /* keep space for '\n' and NUL */
    int cut = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (len >= room) {
            cut = 1;
            break;
        }
        unsigned char c = *p;
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
        else if (c < 0x20 || c == 0x7f)
            c = '?';
        out[len++] = (char)c;
    }
    if (cut) {
        memcpy(out + room - 3, "...", 3);
        len = room;
    }
    out[len++] = '\n';
    out[len] = '\0';
    return len;
}

/* The latest warnings and worse, for the console (recd_log_recent). Lock held. */
#define RECENT_MAX 16
#define RECENT_TEXT 240
static struct recent_line {
    int64_t epoch_ms;
    int level;
    char text[RECENT_TEXT];
} recent[RECENT_MAX];
static size_t recent_next, recent_count;

static void remember(int level, const char *msg)
{
    if (level > RECD_LOG_WARNING)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct recent_line *r = &recent[recent_next];
    r->epoch_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    r->level = level;
    copy_text(r->text, sizeof r->text, msg);
    recent_next = (recent_next + 1) % RECENT_MAX;
    if (recent_count < RECENT_MAX)
        recent_count++;
}

/* Appends s as a JSON string's content: quotes and backslashes escaped, controls as spaces. */
static size_t json_text(char *out, size_t cap, size_t n, const char *s)
{
    for (; *s && n + 3 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            out[n++] = '\\';
        out[n++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    return n;
}

size_t recd_log_recent(char *out, size_t cap)
{
    size_t n = 0;
    if (cap < 3)
        return 0;
    out[n++] = '[';
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < recent_count; i++) {
        const struct recent_line *r = &recent[(recent_next + RECENT_MAX - recent_count + i) % RECENT_MAX];
        char head[96];
        int h = snprintf(head, sizeof head, "%s{\"epoch_ms\":%lld,\"level\":\"%s\",\"message\":\"",
                         i ? "," : "", (long long)r->epoch_ms, recd_log_level_name(r->level));
        if (h < 0 || n + (size_t)h + sizeof r->text * 2 + 4 >= cap)
            break;
        memcpy(out + n, head, (size_t)h);
        n = json_text(out, cap, n + (size_t)h, r->text);
        out[n++] = '"';
        out[n++] = '}';
    }
    pthread_mutex_unlock(&lock);
    out[n++] = ']';
    out[n] = 0;
    return n;
}

static void emit_message(int level, const char *msg)
{
    remember(level, msg);
    char line[RECD_LOG_LINE_MAX + 1]; /* the line with its newline is at most RECD_LOG_LINE_MAX bytes */
    size_t len = format_line(line, sizeof line, level, msg);
    emit(line, len);
}

static void emit_summary(limit_slot *s, uint64_t now)
{
    if (s->suppressed == 0)
        return;
    char msg[SAMPLE_MAX + 128];
    snprintf(msg, sizeof msg, "suppressed %llu messages in the last %llu ms like: %s",
             (unsigned long long)s->suppressed, (unsigned long long)(now - s->window_start), s->sample);
    emit_message(s->level, msg);
    s->suppressed = 0;
}


static uint64_t hash_key(const char *key)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* Finds or claims the slot for key; when the table is full, the oldest window is reported and reused. */
static limit_slot *slot_for(const char *key, uint64_t now)
{
    char k[KEY_MAX];
    copy_text(k, sizeof k, key);
    size_t start = (size_t)(hash_key(k) % LIMIT_SLOTS);
    limit_slot *oldest = &slots[start];
    for (size_t i = 0; i < LIMIT_SLOTS; i++) {
        limit_slot *s = &slots[(start + i) % LIMIT_SLOTS];
        if (s->key[0] == '\0' || strcmp(s->key, k) == 0) {
            if (s->key[0] == '\0') {
                memcpy(s->key, k, sizeof k);
                s->window_start = now;
            }
            return s;
        }
        if (s->window_start < oldest->window_start)
            oldest = s;
    }
    emit_summary(oldest, now);
    memset(oldest, 0, sizeof *oldest);
    memcpy(oldest->key, k, sizeof k);
    oldest->window_start = now;
    return oldest;
}

/* Decides, with the lock held, whether this message may be printed now. */
static int admit(int level, const char *key, const char *msg)
{
    if (level > RECD_LOG_WARNING || limit_burst == 0 || !key)
        return 1;
    uint64_t now = now_ms();
    limit_slot *s = slot_for(key, now);
    if (now - s->window_start >= limit_interval_ms) {
        emit_summary(s, now);
        s->window_start = now;
        s->printed = 0;
    }
    if (s->printed >= limit_burst) {
        s->suppressed++;
        return 0;
    }
    s->printed++;
    s->level = level;
    copy_text(s->sample, sizeof s->sample, msg);
    return 1;
}

static void log_va(int level, const char *key, const char *fmt, va_list ap)
{
    if (!recd_log_enabled(level))
        return;
    char msg[RECD_LOG_LINE_MAX + 1];
    vsnprintf(msg, sizeof msg, fmt, ap);
    pthread_mutex_lock(&lock);
    if (admit(level, key, msg))
        emit_message(level, msg);
    pthread_mutex_unlock(&lock);
}

void recd_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_va(level, fmt, fmt, ap);
    va_end(ap);
}

void recd_log_keyed(int level, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_va(level, key ? key : fmt, fmt, ap);
    va_end(ap);
}

void recd_log_flush_suppressed(bool all)
{
    pthread_mutex_lock(&lock);
    uint64_t now = now_ms();
    for (size_t i = 0; i < LIMIT_SLOTS; i++) {
        limit_slot *s = &slots[i];
        if (s->key[0] == '\0' || s->suppressed == 0)
            continue;
        if (all || now - s->window_start >= limit_interval_ms) {
            emit_summary(s, now);
            s->window_start = now;
            s->printed = 0;
        }
    }
    pthread_mutex_unlock(&lock);
}
