/* SPDX-License-Identifier: MIT */
/* Recovery of samp-player manifests after a crash (recd/player_manifest.h). recd stores the
 * manifest at every part start and end, so after kill -9 it lists every part, the last ones as
 * not complete. Once the .part files are finalized, each such manifest is checked against the
 * parts on disk and stored again. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "formats/rec/rec_player_manifest_io.h"
#include "recd/part_file.h"
#include "recd/samp_rec.h"
#include "recd/player_manifest.h"

#define MANIFEST_SUFFIX ".json"

typedef struct recover_ctx {
    int root_fd;
    int rewritten;
    int error;
} recover_ctx;

/* The time of the last whole block of the .rec part at rel: its duration (parts start at 0).
 * 1 when found, 0 when the file is gone or holds no block, or a negative errno. */
static int part_duration(int root_fd, const recd_player_part *p, uint64_t *duration)
{
    const char *leaf;
    int dir = recd_confined_parent(root_fd, p->path, false, &leaf, NULL, 0);
    if (dir < 0)
        return dir == -ENOENT ? 0 : dir;
    int fd = openat(dir, leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    close(dir);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    struct stat st;
    int rc = 0;
    size_t block = p->type == RECD_REC_TYPE_VEHICLE ? RECD_REC_VEHICLE_BLOCK_SIZE
                                                    : RECD_REC_ONFOOT_BLOCK_SIZE;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
    } else if ((uint64_t)st.st_size >= RECD_REC_HEADER_SIZE + block) {
        uint64_t n = ((uint64_t)st.st_size - RECD_REC_HEADER_SIZE) / block;
        uint8_t t[4];
        off_t at = (off_t)(RECD_REC_HEADER_SIZE + (n - 1) * block);
        if (pread(fd, t, 4, at) == 4) {
            *duration = ld_le32(t);
            rc = 1;
        } else {
            rc = -EIO;
        }
    }
    close(fd);
    return rc;
}

static int fix_manifest(recover_ctx *c, const char *rel, recd_player_manifest *m)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->nparts; i++) {
        recd_player_part *p = &m->parts[i];
        if (!p->complete) {
            uint64_t d = 0;
            int rc = part_duration(c->root_fd, p, &d);
            if (rc < 0)
                return rc; /* left as it is: the next start tries again */
            if (rc == 0)
                continue; /* recovery removed it (no whole block): not a part any more */
            p->duration_ms = d;
            p->complete = true;
        }
        m->parts[kept++] = *p;
    }
    m->nparts = kept;
    m->complete = true;
    m->recovered = true;
    char *text = recd_player_manifest_to_json(m);
    if (!text)
        return -ENOMEM;
    int rc = recd_player_manifest_store(c->root_fd, rel, text);
    free(text);
    return rc;
}

static int visit(void *ctx, const recd_walk_entry *e)
{
    recover_ctx *c = ctx;
    size_t n = strlen(e->leaf), sl = strlen(MANIFEST_SUFFIX);
    if (e->type != RECD_WALK_FILE || n <= sl || strcmp(e->leaf + n - sl, MANIFEST_SUFFIX) != 0)
        return 0;
    int fd = openat(e->dir_fd, e->leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    recd_player_manifest m;
    char why[256];
    int lrc = player_manifest_load_fd(fd, &m, why, sizeof why);
    close(fd);
    if (lrc == 0) {
        if (!m.complete) {
            int rc = fix_manifest(c, e->rel, &m);
            if (rc < 0 && !c->error)
                c->error = rc;
            else if (rc == 0)
                c->rewritten++;
        }
        recd_player_manifest_free(&m);
    }
    return 0; /* other .json files are not ours: passed over */
}

int recd_player_manifest_recover_root(int root_fd)
{
    recover_ctx c = {.root_fd = root_fd};
    int rc = recd_confined_walk(root_fd, 0, visit, &c);
    if (rc < 0)
        return rc;
    return c.error ? c.error : c.rewritten;
}
