/* SPDX-License-Identifier: MIT */
/* `rectool info FILE --at T`: what a recording holds at one moment — the seek point a reader
 * starts at for T (from FILE.idx, or found by a scan; docs/formats/seek-index.md) and the last
 * state at or before T with the events of its time, as JSON lines. Reads from the seek point,
 * not the whole file (RECTOOL_FULL_SCAN=1 reads it whole: tests compare). */
#include "info_at.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "edit_util.h"
#include "file_io.h"
#include "recd/edit.h"
#include "recd/format.h"
#include "recd/message.h"
#include "recd/seek_index.h"
#include "report_util.h"
#include "seek_util.h"

typedef struct at_state {
    int64_t at;       /* in the format's unit */
    uint32_t unit_ms;
    recd_buf state;   /* the last state at or before `at`, as a JSON line */
    int64_t state_t;
    recd_buf events;  /* the events of state_t */
    bool past;        /* a state after `at` was seen: nothing more belongs to it */
} at_state;

static int on_msg(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    at_state *a = ctx;
    int64_t ms = recd_edit_msg_time_ms(m);
    if (a->past || (ms < 0 && !(m->type == RECD_MSG_EVENT && a->state.len)))
        return 0;
    int64_t t = ms < 0 ? a->state_t : ms / a->unit_ms; /* an event without a time: its frame's */
    if (t > a->at) {
        a->past = m->type == RECD_MSG_STATE;
        return 0;
    }
    if (m->type == RECD_MSG_STATE) {
        recd_buf_reset(&a->state);
        recd_buf_reset(&a->events);
        a->state_t = t;
        return recd_msg_to_json(m, &a->state);
    }
    if (m->type == RECD_MSG_EVENT && t == a->state_t)
        return recd_msg_to_json(m, &a->events);
    return 0;
}

static void print_point(const recd_format *f, const rt_input *in, const rt_input *idx, int64_t at)
{
    recd_seek_point p;
    if (!f->seek || recd_format_seek(f, in->data, in->len, idx->data, idx->len, at, &p) < 0) {
        printf("seek point: none (read from the start)\n");
        return;
    }
    recd_seek_index_status st;
    recd_seek_index_check(f, in->data, in->len, idx->data, idx->len, &st);
    const char *how = !recd_seek_index_wanted(f) ? "arithmetic (fixed-size blocks)"
                      : st.valid ? "from the index" : "found by a scan (no valid index)";
    printf("seek point: %s %lld at offset %llu, %s\n", recd_edit_time_unit(f), (long long)p.time,
           (unsigned long long)p.offset, how);
}

int rt_info_at(const char *path, const char *at_text)
{
    rt_input in;
    if (rt_edit_open("info", path, &in))
        return RT_EXIT_IO;
    const recd_format *f = rt_edit_format("info", &in);
    at_state a = {0};
    const char *why = NULL;
    int exit_code = RT_EXIT_OK;
    if (!f) {
        exit_code = RT_EXIT_INVALID;
    } else if (rt_edit_parse_time(at_text, f, &a.at, &why) < 0) {
        rt_error("--at: invalid time '%s': %s", at_text, why);
        exit_code = RT_EXIT_USAGE;
    }
    if (exit_code == RT_EXIT_OK) {
        a.unit_ms = recd_edit_unit_ms(f);
        rt_input idx;
        rt_seek_index_open(path, &idx);
        char err[256] = "";
        int rc = rt_seek_full_scan()
                     ? recd_export_msgs(in.data, in.len, on_msg, &a, err, sizeof err)
                     : recd_export_msgs_range(in.data, in.len, idx.data, idx.len, a.at, a.at + 1,
                                              on_msg, &a, err, sizeof err);
        printf("file: %s\nat: %s %lld\n", path, recd_edit_time_unit(f), (long long)a.at);
        if (!rt_seek_full_scan())
            print_point(f, &in, &idx, a.at);
        rt_seek_index_close(&idx);
        if (rc < 0) {
            rt_error("%s: %s", path, err[0] ? err : recd_strerror(rc));
            exit_code = RT_EXIT_INVALID;
        } else if (!a.state.len) {
            printf("state: none at or before it\n");
        } else {
            printf("state at %s %lld:\n", recd_edit_time_unit(f), (long long)a.state_t);
            fwrite(a.state.data, 1, a.state.len, stdout); /* JSON lines end with '\n' */
            fwrite(a.events.data, 1, a.events.len, stdout);
        }
    }
    recd_buf_free(&a.state);
    recd_buf_free(&a.events);
    rt_input_close(&in);
    return exit_code;
}
