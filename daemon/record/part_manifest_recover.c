/* SPDX-License-Identifier: MIT */
/* Crash recovery of part manifests (output.part_manifest). A part being written has its manifest
 * marked in progress beside its .part (NAME.part.json), stored after each flush. Once recovery
 * has dealt with the .part files, each such file left behind becomes the manifest of the part
 * recovery finalized (FINAL.json, marked recovered), or is removed when there is no part for it
 * any more. */
#include "part_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "support/log.h"

#define PROGRESS_SUFFIX RECD_PART_SUFFIX ".json"
#define PROGRESS_MAX_BYTES (64u * 1024u) /* ours are under 1 KiB: anything larger is not ours */

typedef struct recover_walk {
    int root_fd;
    const recd_recover_summary *sum;
    int completed, removed, failed;
} recover_walk;

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    return n > m && memcmp(s + n - m, suffix, m) == 0;
}

static bool exists_at(int dir_fd, const char *leaf)
{
    struct stat st;
    return fstatat(dir_fd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool exists_rel(int root_fd, const char *rel)
{
    const char *leaf;
    int dir = recd_confined_parent(root_fd, rel, false, &leaf, NULL, 0);
    if (dir < 0)
        return false;
    bool yes = exists_at(dir, leaf);
    close(dir);
    return yes;
}

/* The in-progress manifest at dir_fd/leaf, checked to be ours; NULL (why set) when it is not. */
static json_t *load_progress(int dir_fd, const char *leaf, const char **why)
{
    int fd = openat(dir_fd, leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        *why = "cannot be opened";
        return NULL;
    }
    char *text = malloc(PROGRESS_MAX_BYTES + 1);
    ssize_t n = text ? read(fd, text, PROGRESS_MAX_BYTES + 1) : -1;
    close(fd);
    json_t *o = NULL;
    *why = "cannot be read";
    if (n > (ssize_t)PROGRESS_MAX_BYTES)
        *why = "is too large";
    else if (n >= 0 && !(o = json_loadb(text, (size_t)n, JSON_REJECT_DUPLICATES, NULL)))
        *why = "is not JSON";
    free(text);
    if (!o)
        return NULL;
    const char *kind = json_string_value(json_object_get(o, "manifest"));
    if (!json_is_object(o) || !kind || strcmp(kind, "recd-part") != 0 ||
        !json_is_true(json_object_get(o, "in_progress"))) {
        *why = "is not an in-progress part manifest";
        json_decref(o);
        return NULL;
    }
    return o;
}

/* progress (an in-progress manifest) as the manifest of the finalized part final_rel. */
static int complete(recover_walk *w, json_t *progress, const char *final_rel)
{
    char rel[RECD_PATH_MAX + 8];
    if ((size_t)snprintf(rel, sizeof rel, "%s.json", final_rel) >= sizeof rel)
        return -ENAMETOOLONG;
    if (json_object_set_new(progress, "file", json_string(final_rel)) < 0 ||
        json_object_del(progress, "in_progress") < 0 ||
        json_object_set_new(progress, "recovered", json_true()) < 0)
        return -ENOMEM;
    char *text = part_manifest_dump(progress);
    if (!text)
        return -ENOMEM;
    int rc = recd_confined_store_text(w->root_fd, rel, text, true);
    free(text);
    return rc;
}

/* What recovery did with rel_part ("NAME.part"), or NULL when it was not there. */
static const recd_recover_file *recovered_as(const recd_recover_summary *sum, const char *rel_part)
{
    for (size_t i = 0; sum && i < sum->count; i++)
        if (strcmp(sum->files[i].part, rel_part) == 0)
            return &sum->files[i];
    return NULL;
}

static void drop(recover_walk *w, const recd_walk_entry *e, const char *why)
{
    if (unlinkat(e->dir_fd, e->leaf, 0) < 0 && errno != ENOENT) {
        log_warn("recovery: cannot remove %s: %s", e->rel, strerror(errno));
        w->failed++;
        return;
    }
    log_info("recovery: removed %s (%s)", e->rel, why);
    w->removed++;
}

static int visit(void *ctx, const recd_walk_entry *e)
{
    recover_walk *w = ctx;
    size_t n = strlen(e->rel), leaf_n = strlen(e->leaf);
    if (e->type != RECD_WALK_FILE || !ends_with(e->leaf, leaf_n, PROGRESS_SUFFIX) ||
        e->leaf[0] == '.' || n >= RECD_PATH_MAX)
        return 0;
    char part[RECD_PATH_MAX], stem[RECD_PATH_MAX];
    size_t part_n = n - strlen(".json"), stem_n = part_n - strlen(RECD_PART_SUFFIX);
    memcpy(part, e->rel, part_n);
    part[part_n] = '\0';
    memcpy(stem, e->rel, stem_n);
    stem[stem_n] = '\0';
    if (exists_rel(w->root_fd, part))
        return 0; /* recovery left the .part as it is: its manifest waits with it */
    const recd_recover_file *f = recovered_as(w->sum, part);
    const char *final_rel = NULL;
    char manifest[RECD_PATH_MAX + 8];
    if (f && f->action == RECD_RECOVER_FINALIZED) {
        final_rel = f->final;
    } else if (f) {
        drop(w, e, f->action == RECD_RECOVER_REMOVED ? "its part held nothing whole"
                                                     : "its part was not a recording");
        return 0;
    } else if ((size_t)snprintf(manifest, sizeof manifest, "%s.json", stem) < sizeof manifest &&
               exists_rel(w->root_fd, stem) && !exists_rel(w->root_fd, manifest)) {
        final_rel = stem; /* the part was renamed, then the process died before its manifest */
    } else {
        drop(w, e, "its part was finalized with its manifest, or is gone");
        return 0;
    }
    const char *why = NULL;
    json_t *progress = load_progress(e->dir_fd, e->leaf, &why);
    if (!progress) {
        log_warn("recovery: %s %s: left as it is", e->rel, why);
        w->failed++;
        return 0;
    }
    int rc = complete(w, progress, final_rel);
    json_decref(progress);
    if (rc < 0) {
        log_err("recovery: cannot store the manifest of %s: %s", final_rel, recd_strerror(rc));
        w->failed++;
        return 0;
    }
    w->completed++;
    unlinkat(e->dir_fd, e->leaf, 0); /* a failure leaves it: the next start removes it */
    return 0;
}

int part_manifests_recover(int root_fd, const recd_recover_summary *sum)
{
    recover_walk w = {.root_fd = root_fd, .sum = sum};
    int rc = recd_confined_walk(root_fd, 0, visit, &w);
    if (rc < 0)
        return rc;
    if (w.completed || w.removed || w.failed)
        log_notice("recovery: part manifests: %d completed, %d removed, %d left", w.completed,
                   w.removed, w.failed);
    return w.completed;
}
