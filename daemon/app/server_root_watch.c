/* SPDX-License-Identifier: MIT */
/* The output root, watched from the tick: an output root removed while recd runs (rm -rf, or
 * replaced by another directory) is noticed and opened again by path once it is back. */
#include "server.h"

#include <sys/stat.h>
#include <unistd.h>

#include "support/log.h"

#define ROOT_CHECK_MS 500u /* how often the output root is checked for removal */

/* The fd a removed root leaves behind is closed once no writer or retention job can use it. */
static void close_retired_root(recd_server *s)
{
    if (s->retired_root_fd < 0 || s->writer.jobs_running || s->retention_running)
        return;
    close(s->retired_root_fd);
    s->retired_root_fd = -1;
}

/* An output root removed while recd runs (rm -rf, or replaced by another directory) would take
 * every later write with it: notice it by the held directory's link count or the path's inode,
 * and open the root by path again once it is there. Until then new parts cannot be created and
 * their sessions wait as for a full disk. */
void server_watch_root(recd_server *s, uint64_t now)
{
    if (now - s->root_checked_ms < ROOT_CHECK_MS)
        return;
    s->root_checked_ms = now;
    close_retired_root(s);
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
