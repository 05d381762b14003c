/* SPDX-License-Identifier: MIT */
/* GET /api/recordings and GET /api/recordings/PATH/window: the recordings under the output root,
 * read through librecd's format table (as rectool reads them), on the thread pool so the loop and
 * /healthz never wait for a disk. Paths never leave the root: a PATH is refused when it is
 * absolute, has an empty, "." or ".." component, and every component is opened with O_NOFOLLOW
 * from the root's descriptor, so no symbolic link is ever followed. At most CONSOLE_MAX_JOBS reads
 * run at once (more are answered 503), a file is read up to CONSOLE_MAX_FILE_BYTES and a window
 * through its sidecar seek index when it has one (sampled at keyframes when long), a window keeps
 * at most WINDOW_KEEP points while it reads (halving its density when full) and answers at most
 * points= (<= CONSOLE_MAX_POINTS) per actor and WINDOW_MAX_TOTAL in all. */
#include "console.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "recd/edit.h"
#include "recd/format.h"
#include "recd/seek_index.h"
#include "recd/track_point.h"
#include "server.h"

#define PATH_CAP 1024
#define SNIFF_BYTES 65536
#define LIST_DEPTH 8
#define WINDOW_KEEP 200000u     /* points kept while reading a window */
#define WINDOW_MAX_TOTAL 200000u /* points answered in all */
#define WINDOW_MAX_EVENTS 1000u
#define WINDOW_END_PROBE_S 1e11 /* a time past any recording's end: the seek lands on the last point */

typedef struct file_job {
    uv_work_t req;
    console *c;
    recd_http_reply *reply;
    int root_fd;     /* a duplicate of the root's, closed by the job */
    bool window;
    char path[PATH_CAP];
    double from, to; /* seconds from the recording's start */
    unsigned points;
    int code;        /* the answer: status and JSON text (malloc'd) */
    char *json;
} file_job;

/* ---- confinement ------------------------------------------------------------------------------ */

/* Whether rel is a relative path of plain components ("a/b.rec"). */
static bool path_confined(const char *rel)
{
    if (!rel[0] || rel[0] == '/')
        return false;
    for (const char *p = rel; *p;) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += n + (end ? 1 : 0);
        if (end && !*p)
            return false; /* a trailing slash */
    }
    return true;
}

/* Opens rel under root_fd, component by component, never following a symbolic link: a regular
 * file's descriptor, or a negative errno (-ELOOP for a link). */
static int open_confined(int root_fd, const char *rel)
{
    char buf[PATH_CAP];
    snprintf(buf, sizeof buf, "%s", rel);
    int dir = dup(root_fd);
    if (dir < 0)
        return -errno;
    char *save = NULL;
    for (char *comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
        bool last = save == NULL || *save == '\0';
        int fd = openat(dir, comp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (last ? 0 : O_DIRECTORY));
        int err = errno;
        close(dir);
        if (fd < 0)
            return -err;
        dir = fd;
    }
    struct stat st;
    if (fstat(dir, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(dir);
        return -EISDIR;
    }
    return dir;
}

/* Reads up to cap bytes of fd into b. 0, -EFBIG when the file is longer, or -errno. */
static int read_file(int fd, size_t cap, bool whole, recd_buf *b)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (whole && (uint64_t)st.st_size > cap)
        return -EFBIG;
    size_t want = (uint64_t)st.st_size < cap ? (size_t)st.st_size : cap;
    if (recd_buf_reserve(b, want + 1) < 0)
        return -ENOMEM;
    while (b->len < want) {
        ssize_t n = read(fd, b->data + b->len, want - b->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        b->len += (size_t)n;
    }
    return 0;
}

static void job_answer(file_job *j, int code, json_t *o)
{
    j->code = code;
    j->json = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!j->json)
        j->code = 500;
}

static void job_error(file_job *j, int code, const char *fmt, const char *arg)
{
    char what[PATH_CAP + 128];
    snprintf(what, sizeof what, fmt, arg);
    job_answer(j, code, json_pack("{s:s}", "error", what));
}

/* ---- listing ---------------------------------------------------------------------------------- */

typedef struct lister {
    json_t *list;
    size_t count;
    bool truncated;
} lister;

/* Whether name looks like a recording: an extension of a format in the table, or .part. */
static bool recording_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return false;
    return strcmp(dot, ".part") == 0 || recd_format_by_extension(dot + 1, 0) != NULL;
}

static void list_file(lister *l, int dir, const char *name, const char *rel, const struct stat *st)
{
    json_t *o = json_pack("{s:s, s:I, s:I, s:b}", "path", rel, "size", (json_int_t)st->st_size,
                          "mtime_ms", (json_int_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000,
                          "partial", strstr(name, ".part") != NULL);
    int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    recd_buf head = {0};
    if (o && fd >= 0 && read_file(fd, SNIFF_BYTES, false, &head) == 0) {
        recd_sniff_result what = {0};
        const recd_format *f = recd_format_sniff(head.data, head.len, &what);
        json_object_set_new(o, "format", f ? json_string(f->name) : json_null());
        json_object_set_new(o, "kind", json_string(what.kind ? what.kind : ""));
        json_object_set_new(o, "standard", json_boolean(f && what.standard));
        if (f)
            json_object_set_new(o, "units", json_integer((json_int_t)recd_format_count_units(f, head.data, head.len)));
        if (f)
            json_object_set_new(o, "unit", json_string(f->unit ? f->unit : ""));
    }
    if (fd >= 0)
        close(fd);
    recd_buf_free(&head);
    if (o)
        json_array_append_new(l->list, o);
    l->count++;
}

static void list_dir(lister *l, int dir, const char *prefix, int depth)
{
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue; /* hidden, ".", "..": never listed */
        if (l->count >= CONSOLE_MAX_LISTED) {
            l->truncated = true;
            break;
        }
        char rel[PATH_CAP];
        if ((size_t)snprintf(rel, sizeof rel, "%s%s%s", prefix, *prefix ? "/" : "", e->d_name) >= sizeof rel)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < LIST_DEPTH) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY);
            if (sub >= 0)
                list_dir(l, sub, rel, depth + 1);
        } else if (S_ISREG(st.st_mode) && recording_name(e->d_name)) {
            list_file(l, dirfd(d), e->d_name, rel, &st);
        }
    }
    closedir(d);
}

static void work_list(file_job *j)
{
    lister l = {json_array(), 0, false};
    int dir = dup(j->root_fd);
    if (l.list && dir >= 0)
        list_dir(&l, dir, "", 0);
    job_answer(j, 200, json_pack("{s:o, s:b, s:I}", "recordings", l.list ? l.list : json_array(),
                                 "truncated", l.truncated, "count", (json_int_t)l.count));
}

/* ---- a window --------------------------------------------------------------------------------- */

typedef struct collect {
    double from, to;
    recd_track_point *pts;
    size_t n, stride, seen;
    double min_x, max_x, min_y, max_y, t_end;
    size_t total;
    bool sampled; /* read at keyframes spread over the window, not sample by sample */
} collect;

static int collect_point(void *data, const recd_track_point *p)
{
    collect *c = data;
    if (c->total++ == 0) {
        c->min_x = c->max_x = p->x;
        c->min_y = c->max_y = p->y;
    }
    c->min_x = fmin(c->min_x, p->x), c->max_x = fmax(c->max_x, p->x);
    c->min_y = fmin(c->min_y, p->y), c->max_y = fmax(c->max_y, p->y);
    c->t_end = fmax(c->t_end, p->t);
    if (p->t < c->from || p->t > c->to || c->seen++ % c->stride != 0)
        return 0;
    if (c->n == WINDOW_KEEP) { /* full: keep every other point, and take half as many from now */
        for (size_t i = 0; i < c->n / 2; i++)
            c->pts[i] = c->pts[2 * i];
        c->n /= 2;
        c->stride *= 2;
    }
    c->pts[c->n++] = *p;
    return 0;
}

static int by_actor_then_time(const void *a, const void *b)
{
    const recd_track_point *p = a, *q = b;
    if (p->actor != q->actor)
        return p->actor < q->actor ? -1 : 1;
    return p->t < q->t ? -1 : p->t > q->t;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_row(const recd_track_point *p)
{
    json_t *row = json_array();
    const double v[] = {p->t, p->x, p->y, p->z, p->speed, p->health, p->armour, p->vehicle_health};
    for (size_t i = 0; row && i < sizeof v / sizeof v[0]; i++)
        json_array_append_new(row, num(v[i]));
    return row;
}

/* The points of one actor, pts[0..n), evenly thinned to at most per. */
static json_t *actor_json(const recd_track_point *pts, size_t n, size_t per)
{
    json_t *rows = json_array();
    size_t keep = n < per ? n : per;
    for (size_t i = 0; rows && i < keep; i++)
        json_array_append_new(rows, point_row(&pts[keep > 1 ? i * (n - 1) / (keep - 1) : 0]));
    return json_pack("{s:I, s:i, s:I, s:o}", "id", (json_int_t)pts[0].actor, "kind", (int)pts[0].kind,
                     "samples", (json_int_t)n, "points", rows ? rows : json_array());
}

static json_t *actors_json(collect *c, unsigned points)
{
    qsort(c->pts, c->n, sizeof *c->pts, by_actor_then_time);
    size_t actors = 0;
    for (size_t i = 0; i < c->n; i++)
        actors += i == 0 || c->pts[i].actor != c->pts[i - 1].actor;
    size_t per = points;
    if (actors && per * actors > WINDOW_MAX_TOTAL)
        per = WINDOW_MAX_TOTAL / actors ? WINDOW_MAX_TOTAL / actors : 1;
    json_t *a = json_array();
    for (size_t i = 0, start = 0; a && i <= c->n; i++)
        if (i == c->n || (i > start && c->pts[i].actor != c->pts[start].actor)) {
            if (i > start)
                json_array_append_new(a, actor_json(&c->pts[start], i - start, per));
            start = i;
        }
    return a;
}

/* The time of the last sample (the tail read for a window's duration). */
static int note_end(void *data, const recd_track_point *p)
{
    double *end = data;
    *end = fmax(*end, p->t);
    return 0;
}

typedef struct event_collect {
    json_t *list;
    json_t *open;    /* the open message (the recording's header) as its JSON line */
    double from, to;
    double state_t;  /* the last state's time: an event without a time of its own has it */
    size_t seen;
} event_collect;

static json_t *msg_json(const recd_msg *m)
{
    recd_buf text = {0};
    json_t *o = recd_msg_to_json(m, &text) == 0 ? json_loadb((const char *)text.data, text.len, 0, NULL) : NULL;
    recd_buf_free(&text);
    return o;
}

static int collect_event(void *data, const recd_msg *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    event_collect *e = data;
    int64_t ms = recd_edit_msg_time_ms(m);
    if (m->type == RECD_MSG_OPEN && !e->open)
        e->open = msg_json(m);
    if (m->type == RECD_MSG_STATE && ms >= 0)
        e->state_t = (double)ms / 1000.0;
    if (m->type != RECD_MSG_EVENT)
        return 0;
    double t = ms >= 0 ? (double)ms / 1000.0 : e->state_t;
    if (t < e->from || t > e->to || e->seen++ >= WINDOW_MAX_EVENTS)
        return 0;
    json_t *o = msg_json(m);
    json_array_append_new(e->list, json_pack("{s:o, s:o}", "t", num(t), "event", o ? o : json_null()));
    return 0;
}

/* FILE.idx beside the recording, when there is one the console may read (confined as the file
 * is, at most a 64th of the file cap); empty otherwise. A stale or foreign index is harmless: the
 * seek checks it and scans beyond its longest valid prefix. */
static void read_sidecar(int root_fd, const char *path, recd_buf *idx)
{
    char rel[PATH_CAP + sizeof RECD_SEEK_INDEX_SUFFIX];
    snprintf(rel, sizeof rel, "%s%s", path, RECD_SEEK_INDEX_SUFFIX);
    int fd = open_confined(root_fd, rel);
    if (fd < 0)
        return;
    if (read_file(fd, CONSOLE_MAX_FILE_BYTES / 64, true, idx) < 0)
        recd_buf_free(idx);
    close(fd);
}

/* The samples behind a window. With a sidecar and more indexed keyframes in the window than
 * points= asks for, the window is sampled at points= keyframes spread over it, each read alone
 * (sampled: a 24-hour file answers within the connection's deadline); otherwise the whole file
 * is read for a window of all of it, and a narrower one from its seek point to its end. A read
 * that stopped before the file's end finds the end (the duration) from the last seek point.
 * Formats that cannot be entered at a seek point read everything, with the same answer. */
static int window_read(const recd_buf *file, const recd_buf *idx, unsigned points, collect *c,
                       char *err, size_t errlen)
{
    double to = isinf(c->to) ? -1.0 : c->to;
    int rc = recd_track_read_sparse(file->data, file->len, idx->data, idx->len, c->from, to, points,
                                    collect_point, c, err, errlen);
    if (rc < 0)
        return rc;
    c->sampled = rc > 0;
    bool whole = !c->sampled && (!(c->from > 0) && to < 0);
    if (whole)
        return recd_track_read(file->data, file->len, collect_point, c, NULL, err, errlen);
    if (!c->sampled && (rc = recd_track_read_range(file->data, file->len, idx->data, idx->len, c->from,
                                                   to, collect_point, c, NULL, err, errlen)) < 0)
        return rc;
    if (!c->sampled && (to < 0 || !recd_track_can_seek(file->data, file->len)))
        return 0; /* read to the end: its last point is the end */
    double end = c->t_end;
    rc = recd_track_read_range(file->data, file->len, idx->data, idx->len, WINDOW_END_PROBE_S, -1.0,
                               note_end, &end, NULL, err, errlen);
    c->t_end = end;
    return rc;
}

/* The events of the window, read from its seek point to its end as the samples are. A sampled
 * window reads only the start (its header): its events would need the whole file, so a viewer
 * asks a narrower window for them. */
static void window_events(const recd_format *f, const recd_buf *file, const recd_buf *idx,
                          const file_job *j, bool sampled, event_collect *ev)
{
    char err[256];
    uint32_t unit_ms = recd_edit_unit_ms(f);
    if (!unit_ms || j->from * 1000.0 / unit_ms > 1e15) {
        recd_format_export(f, file->data, file->len, collect_event, ev, err, sizeof err);
        return;
    }
    int64_t from = (int64_t)floor(j->from * 1000.0 / unit_ms);
    int64_t to = isinf(j->to) || j->to * 1000.0 / unit_ms > 1e15 ? -1 : (int64_t)ceil(j->to * 1000.0 / unit_ms) + 1;
    if (sampled)
        from = to = 0;
    recd_export_msgs_range(file->data, file->len, idx->data, idx->len, from, to, collect_event, ev, err,
                           sizeof err);
}

static void work_window(file_job *j)
{
    char err[256] = "";
    recd_buf file = {0};
    int fd = open_confined(j->root_fd, j->path);
    if (fd < 0) {
        job_error(j, 404, "no such recording under the root: %s", j->path);
        return;
    }
    int rc = read_file(fd, CONSOLE_MAX_FILE_BYTES, true, &file);
    close(fd);
    if (rc < 0) {
        recd_buf_free(&file);
        job_error(j, rc == -EFBIG ? 413 : 500, "cannot read it: %s", rc == -EFBIG ? "larger than the console reads" : strerror(-rc));
        return;
    }
    recd_buf idx = {0};
    read_sidecar(j->root_fd, j->path, &idx);
    collect c = {.from = j->from, .to = j->to, .stride = 1};
    c.pts = malloc(WINDOW_KEEP * sizeof *c.pts);
    rc = c.pts ? window_read(&file, &idx, j->points, &c, err, sizeof err) : -ENOMEM;
    if (rc < 0) {
        free(c.pts);
        recd_buf_free(&idx);
        recd_buf_free(&file);
        job_error(j, rc == -ENOMEM ? 500 : 422, "%s", err[0] ? err : "not a recording with samples to show");
        return;
    }
    recd_sniff_result what = {0};
    const recd_format *f = recd_format_sniff(file.data, file.len, &what);
    event_collect ev = {json_array(), NULL, j->from, j->to, 0, 0};
    if (f && recd_format_is_recorded(f) && ev.list)
        window_events(f, &file, &idx, j, c.sampled, &ev);
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:I, s:b, s:o, s:o}", "path", j->path, "format",
                          f ? f->name : "", "from", num(j->from), "to", num(isinf(j->to) ? c.t_end : j->to),
                          "duration", num(c.t_end), "samples_total", (json_int_t)c.total, "thinned",
                          c.stride > 1 || c.sampled, "actors", actors_json(&c, j->points), "events",
                          ev.list ? ev.list : json_array());
    if (o)
        json_object_set_new(o, "extent", json_pack("{s:o, s:o, s:o, s:o}", "min_x", num(c.min_x), "max_x",
                                                   num(c.max_x), "min_y", num(c.min_y), "max_y", num(c.max_y)));
    if (o)
        json_object_set_new(o, "events_total", json_integer((json_int_t)ev.seen));
    if (o)
        json_object_set_new(o, "indexed", json_boolean(idx.len > 0));
    if (o)
        json_object_set_new(o, "sampled", json_boolean(c.sampled));
    if (o)
        json_object_set_new(o, "header", ev.open ? ev.open : json_null());
    else
        json_decref(ev.open);
    free(c.pts);
    recd_buf_free(&idx);
    recd_buf_free(&file);
    job_answer(j, 200, o);
}

/* ---- the jobs --------------------------------------------------------------------------------- */

static void job_work(uv_work_t *req)
{
    file_job *j = req->data;
    if (j->window)
        work_window(j);
    else
        work_list(j);
    close(j->root_fd);
}

static void job_after(uv_work_t *req, int status)
{
    file_job *j = req->data;
    console *c = j->c;
    if (status < 0 || !j->json)
        console_send_error(j->reply, 500, "the read failed");
    else
        console_send_json(j->reply, j->code, j->json);
    free(j->json);
    free(j);
    c->jobs--;
    console_maybe_free(c);
}

static void start_job(console *c, file_job *j)
{
    j->c = c;
    j->req.data = j;
    j->root_fd = c->server->root_fd >= 0 ? dup(c->server->root_fd) : -1;
    if (j->root_fd < 0) {
        console_send_error(j->reply, 503, "the output root is not open");
        free(j);
        return;
    }
    if (uv_queue_work(c->server->loop, &j->req, job_work, job_after) < 0) {
        close(j->root_fd);
        console_send_error(j->reply, 503, "cannot start the read");
        free(j);
        return;
    }
    c->jobs++;
}

/* from=, to= (seconds, finite) and points= (1..CONSOLE_MAX_POINTS); false with *why. */
static bool window_args(const recd_http_request *req, file_job *j, const char **why)
{
    char v[32];
    char *end;
    j->from = 0;
    j->to = INFINITY;
    j->points = 1000;
    if (console_query(req, "from", v, sizeof v) != 0 &&
        (console_query(req, "from", v, sizeof v) < 0 || (j->from = strtod(v, &end), *end || !isfinite(j->from))))
        return *why = "from= is seconds from the start", false;
    if (console_query(req, "to", v, sizeof v) != 0 &&
        (console_query(req, "to", v, sizeof v) < 0 || (j->to = strtod(v, &end), *end || !isfinite(j->to))))
        return *why = "to= is seconds from the start", false;
    if (console_query(req, "points", v, sizeof v) != 0) {
        long n = console_query(req, "points", v, sizeof v) < 0 ? -1 : strtol(v, &end, 10);
        if (n < 1 || *end || n > (long)CONSOLE_MAX_POINTS)
            return *why = "points= is 1 to 5000", false;
        j->points = (unsigned)n;
    }
    if (j->to < j->from)
        return *why = "to= is before from=", false;
    return true;
}

bool console_route_files(console *c, const recd_http_request *req, const char *rest, size_t len,
                         recd_http_reply *reply)
{
    static const char tail[] = "/window";
    size_t tl = sizeof tail - 1;
    bool listing = len == 0 || (len == 1 && rest[0] == '/');
    if (!listing && (len <= tl + 1 || memcmp(rest + len - tl, tail, tl) != 0)) {
        console_send_error(reply, 404, "not found: /api/recordings or /api/recordings/PATH/window");
        return true;
    }
    if (c->jobs >= CONSOLE_MAX_JOBS) {
        c->refused++;
        console_send_error(reply, 503, "the console is busy reading recordings: try again");
        return true;
    }
    file_job *j = calloc(1, sizeof *j);
    if (!j) {
        console_send_error(reply, 503, "out of memory");
        return true;
    }
    j->reply = reply;
    j->window = !listing;
    const char *why = NULL;
    if (j->window && (console_url_decode(rest + 1, len - 1 - tl, j->path, sizeof j->path) <= 0 ||
                      !path_confined(j->path)))
        why = "PATH must be a relative path under the output root, without '.' or '..'";
    if (!why && j->window)
        window_args(req, j, &why);
    if (why) {
        console_send_error(reply, 400, why);
        free(j);
        return true;
    }
    start_job(c, j);
    return true;
}
