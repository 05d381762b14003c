/* SPDX-License-Identifier: MIT */
/* The output root, watched from the tick: an output root removed while recd runs (rm -rf, or
 * replaced by another directory) is noticed and opened again by path once it is back, and one
 * recd may not create files in (its permissions) makes it refuse new sessions until it may. */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/log.h"

#define ROOT_CHECK_MS 500u /* how often the output root is checked for removal and probed */

static void watch_removal(recd_server *s, uint64_t now);

/* The fd a removed root leaves behind is closed once no writer or retention job can use it. */
static void close_retired_root(recd_server *s)
{
    if (s->retired_root_fd < 0 || s->writer.jobs_running || s->retention_running)
        return;
    close(s->retired_root_fd);
    s->retired_root_fd = -1;
}

/* Whether recd may create files in the root: 0, or the negative errno the kernel's permission
 * check gives (its modes, ACLs and attributes, for recd's effective ids). A check, not a create:
 * it runs on the loop twice a second and must cost no disk write. */
static int may_create(int root_fd)
{
    return faccessat(root_fd, ".", W_OK | X_OK, AT_EACCESS) == 0 ? 0 : -errno;
}

/* Permissions are the operator's to fix and do not pass by themselves: sessions opened meanwhile
 * are refused. A full disk or a read-only remount may pass: those sessions are taken, their input
 * waits and the writes are retried (docs/reliability.md, "Write path"). */
static bool refuses_sessions(int rc) { return rc == -EACCES || rc == -EPERM; }

void server_probe_root(recd_server *s)
{
    char *refusal = s->sessions.root_refusal;
    int rc = s->root_lost ? 0 : may_create(s->root_fd);
    if (refuses_sessions(rc)) {
        if (!refusal[0])
            log_err("cannot create files under the output root %s (%s): new sessions are refused "
                    "until it can",
                    s->cfg.output.root, recd_strerror(rc));
        snprintf(refusal, sizeof s->sessions.root_refusal,
                 "recd cannot create files under its output root %s (%s)", s->cfg.output.root,
                 recd_strerror(rc));
    } else if (refusal[0]) {
        refusal[0] = '\0';
        log_notice("files can be created under the output root %s again: sessions are taken",
                   s->cfg.output.root);
    }
}

void server_watch_root(recd_server *s, uint64_t now)
{
    if (now - s->root_checked_ms < ROOT_CHECK_MS)
        return;
    s->root_checked_ms = now;
    close_retired_root(s);
    watch_removal(s, now);
    server_probe_root(s); /* a permission check: no file is made */
}

/* An output root removed while recd runs (rm -rf, or replaced by another directory) would take
 * every later write with it: notice it by the held directory's link count or the path's inode,
 * and open the root by path again once it is there. Until then new parts cannot be created and
 * their sessions wait as for a full disk. */
static void watch_removal(recd_server *s, uint64_t now)
{
    struct stat held, named;
    bool gone = fstat(s->root_fd, &held) < 0 || held.st_nlink == 0;
    bool named_ok = stat(s->cfg.output.root, &named) == 0 && S_ISDIR(named.st_mode);
    bool replaced = named_ok && !gone && (named.st_dev != held.st_dev || named.st_ino != held.st_ino);
    if (!gone && !replaced)
        return;
    s->sessions.last_write_error_ms = now; /* /healthz fails while the root is missing */
    if (!s->root_lost) {
        s->root_lost = true;
        log_err("the output root %s was %s: files cannot be written until it is there again",
                s->cfg.output.root, gone ? "removed" : "replaced");
    }
    if (!named_ok || s->retired_root_fd >= 0)
        return; /* not back yet, or the last swap's fd is still in use */
    int fd = recd_out_root_open(s->cfg.output.root, false);
    if (fd < 0)
        return;
    s->retired_root_fd = writer_stage_swap_root(&s->writer, fd);
    s->root_fd = fd;
    s->root_lost = false;
    close_retired_root(s);
    log_notice("the output root %s is there again: writing resumes", s->cfg.output.root);
}
