/* SPDX-License-Identifier: MIT */
/* The format table: one entry per recording format, each defined in its folder under
 * lib/src/formats/, and the lookups and hook wrappers everything dispatches through. */
#include "recd/format.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "recd/format_list.h"

/* Entries, defined in their folders. A new format adds its line here and in the table. */
extern const recd_format recd_format__carla;
extern const recd_format recd_format__recap;
extern const recd_format recd_format__rf2_vcr;
extern const recd_format recd_format__samp_onfoot;
extern const recd_format recd_format__samp_player;
extern const recd_format recd_format__samp_vehicle;
extern const recd_format recd_format__sc2replay;

/* Sniffing order: signature checks first, so cheap certain answers stop the search early. */
static const recd_format *const format_table[] = {
    &recd_format__recap,
    &recd_format__carla,
    &recd_format__rf2_vcr,
    &recd_format__sc2replay,
    &recd_format__samp_onfoot, /* heuristics from here on */
    &recd_format__samp_vehicle,
};

#define FORMAT_COUNT (sizeof format_table / sizeof format_table[0])

/* Formats recorded only through sessions: their files are another entry's, so they are neither
 * sniffed nor listed by recd_format_at, but the message model and the wire know them. */
static const recd_format *const session_only[] = {
    &recd_format__samp_player,
};

#define SESSION_ONLY_COUNT (sizeof session_only / sizeof session_only[0])

size_t recd_format_count(void)
{
    return FORMAT_COUNT;
}

const recd_format *recd_format_at(size_t i)
{
    return i < FORMAT_COUNT ? format_table[i] : NULL;
}

size_t recd_format__all_count(void)
{
    return FORMAT_COUNT + SESSION_ONLY_COUNT;
}

const recd_format *recd_format__all_at(size_t i)
{
    if (i < FORMAT_COUNT)
        return format_table[i];
    return i - FORMAT_COUNT < SESSION_ONLY_COUNT ? session_only[i - FORMAT_COUNT] : NULL;
}

/* The index by message format. Threads that race to build it fill each slot once with the same
 * pointer (the first entry of the format); the descriptors are constant, so a relaxed load that
 * sees a slot sees its entry. */
_Atomic(const recd_format *) recd_format__msg_slots[RECD_MSG_FORMAT_SLOTS];
static atomic_bool by_msg_built;

static void build_by_msg(void)
{
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        const recd_format *empty = NULL;
        if (f->msg_format != RECD_MSG_FMT_NONE && (size_t)f->msg_format < RECD_MSG_FORMAT_SLOTS)
            atomic_compare_exchange_strong(&recd_format__msg_slots[f->msg_format], &empty, f);
    }
    atomic_store_explicit(&by_msg_built, true, memory_order_release);
}

const recd_format *recd_format__by_msg_built(recd_msg_format f)
{
    if (!atomic_load_explicit(&by_msg_built, memory_order_acquire))
        build_by_msg();
    if ((size_t)f >= RECD_MSG_FORMAT_SLOTS || f == RECD_MSG_FMT_NONE)
        return NULL;
    return atomic_load_explicit(&recd_format__msg_slots[f], memory_order_relaxed);
}

const recd_format *recd_format_find(const char *name)
{
    for (size_t i = 0; name && i < FORMAT_COUNT; i++)
        if (strcmp(format_table[i]->name, name) == 0)
            return format_table[i];
    return NULL;
}

const recd_format *recd_format_of_msg(recd_msg_format f)
{
    for (size_t i = 0; f != RECD_MSG_FMT_NONE && i < FORMAT_COUNT; i++)
        if (format_table[i]->msg_format == f)
            return format_table[i];
    return NULL;
}

const recd_format *recd_format_by_extension(const char *ext, size_t i)
{
    for (size_t k = 0; ext && k < FORMAT_COUNT; k++)
        if (strcmp(format_table[k]->extension, ext) == 0 && i-- == 0)
            return format_table[k];
    return NULL;
}

/* True when an earlier entry has the same sniff hook: it has already answered for this one. */
static bool sniffed_before(size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (format_table[k]->sniff == format_table[i]->sniff)
            return true;
    return false;
}

const recd_format *recd_format_sniff(const uint8_t *head, size_t len, recd_sniff_result *result)
{
    recd_sniff_result best = {NULL, RECD_SNIFF_NONE, false, "", ""};
    for (size_t i = 0; i < FORMAT_COUNT && best.level < RECD_SNIFF_SIGNATURE; i++) {
        if (sniffed_before(i))
            continue;
        recd_sniff_result r = {format_table[i], RECD_SNIFF_NONE, false, "", ""};
        int level = format_table[i]->sniff(head, len, &r);
        if (level > (int)best.level) {
            best = r;
            best.level = (recd_sniff_level)level;
        }
    }
    if (result)
        *result = best;
    return best.format;
}

int recd_format_verify(const recd_format *f, const uint8_t *buf, size_t len,
                       recd_format_verdict *out, recd_report *report)
{
    memset(out, 0, sizeof *out);
    if (!f->verify)
        return -ENOTSUP;
    int rc = f->verify(buf, len, out, report);
    recd_report_progress(report, len, len); /* whether or not the hook reported finer steps */
    return rc;
}

int recd_format_repair(const recd_format *f, const uint8_t *buf, size_t len,
                       recd_repair_result *out)
{
    recd_progress progress = out->progress; /* the one field the caller sets */
    memset(out, 0, sizeof *out);
    out->progress = progress;
    out->unit = f->unit;
    if (!f->repair)
        return -ENOTSUP;
    int rc = f->repair(buf, len, out); /* hooks fill the zeroed result; progress is set */
    if (progress.fn)
        progress.fn(progress.data, len, len);
    return rc;
}

int recd_format_end_part(const recd_format *f, uint8_t *head, size_t head_len, uint64_t units,
                         int64_t end_ms)
{
    return f->end_part ? f->end_part(head, head_len, units, end_ms) : 0;
}

uint64_t recd_format_count_units(const recd_format *f, const uint8_t *buf, size_t len)
{
    return f->count_units ? f->count_units(buf, len) : 0;
}

int recd_format_export(const recd_format *f, const uint8_t *buf, size_t len, recd_msg_fn on_msg,
                       void *data, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    return f->export_msgs ? f->export_msgs(buf, len, on_msg, data, err, errlen) : -ENOTSUP;
}

int recd_format_import(const recd_format *f, const uint8_t *text, size_t len,
                       recd_text_encoding enc, recd_sink out, recd_import_stats *stats, char *err,
                       size_t errlen)
{
    return f->import_text ? f->import_text(f, text, len, enc, out, stats, err, errlen) : -ENOTSUP;
}

bool recd_format_is_recorded(const recd_format *f)
{
    return f && f->msg_format != RECD_MSG_FMT_NONE;
}

int recd_format_export_events(const recd_format *f, const uint8_t *buf, size_t len,
                              recd_replay_event_fn on_event, void *data, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    return f->export_events ? f->export_events(buf, len, on_event, data, err, errlen) : -ENOTSUP;
}

int recd_format_describe(const recd_format *f, const uint8_t *buf, size_t len, recd_buf *out,
                         char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    return f->describe ? f->describe(buf, len, out, err, errlen) : -ENOTSUP;
}

int recd_format_recover(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        if (!format_table[i]->recover)
            continue;
        int rc = format_table[i]->recover(buf, len, plan);
        if (rc > 0)
            plan->unit = format_table[i]->unit;
        if (rc != 0)
            return rc;
    }
    return 0;
}
