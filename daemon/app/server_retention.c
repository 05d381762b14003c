/* SPDX-License-Identifier: MIT */
/* Retention on the thread pool: deletes old finalized recordings recd marked as its own by age,
 * per-session count and total size (lib retention.h never touches .part files nor anything
 * unmarked), one run at a time, every minute, at startup and after each reload. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "support/log.h"
#include "recd/own_mark.h"
#include "recd/retention.h"
#include "server.h"

typedef struct retention_job {
    uv_work_t req;
    recd_server *srv;
    int root_fd;
    recd_retention_policy policy;
    recd_retention_result result;
    int rc;
} retention_job;

static void retention_work(uv_work_t *req)
{
    retention_job *j = req->data;
    j->rc = recd_retention_run(j->root_fd, &j->policy, &j->result);
}

/* Files named like recordings but without recd's mark are kept; says so when their number
 * changes, so an operator knows why they stay (another program's, written before recd marked its
 * parts, or on a filesystem without user extended attributes). */
static void tell_unmarked(size_t unmarked)
{
    static size_t told;
    if (unmarked == told)
        return;
    told = unmarked;
    if (unmarked)
        log_notice("retention: keeping %zu files named like recordings that recd did not mark as "
                   "its own (xattr " RECD_OWN_MARK_XATTR "): retention never deletes them",
                   unmarked);
}

static void retention_after(uv_work_t *req, int status)
{
    retention_job *j = req->data;
    (void)status;
    j->srv->retention_running = false;
    if (j->rc < 0) {
        log_err("retention: scanning the output failed: %s", recd_strerror(j->rc));
    } else {
        for (size_t i = 0; i < j->result.count; i++) {
            const recd_retention_item *it = &j->result.items[i];
            if (it->error)
                log_warn("retention: cannot delete %s: %s", it->path, recd_strerror(it->error));
            else
                log_info("retention: deleted %s (%s, %llu bytes)", it->path,
                         recd_retention_reason_name(it->reason), (unsigned long long)it->size);
        }
        tell_unmarked(j->result.unmarked_skipped);
        if (j->result.deleted)
            log_notice("retention: deleted %zu files (%llu bytes); %llu bytes kept", j->result.deleted,
                       (unsigned long long)j->result.bytes_deleted,
                       (unsigned long long)j->result.bytes_kept);
    }
    recd_retention_result_free(&j->result);
    free(j);
}

void server_run_retention(recd_server *s)
{
    const recd_config *cfg = &s->cfg;
    if (s->retention_running || s->phase != SERVER_RUNNING || s->root_fd < 0)
        return;
    if (!cfg->retention.max_age_ms && !cfg->retention.max_total_size &&
        !cfg->retention.max_files_per_session)
        return;
    retention_job *j = calloc(1, sizeof *j);
    if (!j)
        return;
    j->srv = s;
    j->root_fd = s->root_fd;
    j->policy.max_age_s = (int64_t)(cfg->retention.max_age_ms / 1000);
    j->policy.max_total_bytes = cfg->retention.max_total_size;
    j->policy.max_files_per_session = cfg->retention.max_files_per_session;
    if (j->policy.max_files_per_session && !cfg->output.path_template.session_dir) {
        /* Files of a session are only known by their directory when the template says so. */
        log_warn("retention.max_files_per_session is ignored: output.path_template must put "
                 "{session} in the directory part (and no time or {part} there)");
        j->policy.max_files_per_session = 0;
        if (!j->policy.max_age_s && !j->policy.max_total_bytes) {
            free(j);
            return;
        }
    }
    j->req.data = j;
    if (uv_queue_work(s->loop, &j->req, retention_work, retention_after) < 0) {
        free(j);
        return;
    }
    s->retention_running = true;
}
