/* SPDX-License-Identifier: MIT */
/* recd's own-file mark (user.recd): set on a part at creation, checked by retention. */
#include "recd/own_mark.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "recd/path_template.h"

int recd_own_mark_set(int fd, const char *rel)
{
    if (fd < 0 || !rel || !rel[0])
        return -EINVAL;
    return fsetxattr(fd, RECD_OWN_MARK_XATTR, rel, strlen(rel), 0) < 0 ? -errno : 0;
}

/* Length of the folder part of path, including its last '/' (0 at the root). */
static size_t folder_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) + 1 : 0;
}

/* leaf is marked_leaf itself, or starts with its stem (the leaf before its extension) followed
 * by '.' or '-': NAME.EXT, NAME-N.EXT, NAME.EXT.part.bad, NAME.EXT.part-N.bad. */
static bool renamed_from(const char *leaf, const char *marked_leaf)
{
    if (strcmp(leaf, marked_leaf) == 0)
        return true;
    const char *dot = strrchr(marked_leaf, '.');
    size_t stem = dot && dot > marked_leaf ? (size_t)(dot - marked_leaf) : strlen(marked_leaf);
    return strncmp(leaf, marked_leaf, stem) == 0 && (leaf[stem] == '.' || leaf[stem] == '-');
}

bool recd_own_mark_matches(int dir_fd, const char *leaf, const char *rel)
{
    int fd = openat(dir_fd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return false;
    char marked[RECD_PATH_MAX];
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                    ? fgetxattr(fd, RECD_OWN_MARK_XATTR, marked, sizeof marked - 1)
                    : -1;
    close(fd);
    if (n <= 0)
        return false;
    marked[n] = '\0';
    size_t dir = folder_len(rel);
    return folder_len(marked) == dir && memcmp(marked, rel, dir) == 0 &&
           renamed_from(rel + dir, marked + dir);
}
