/* The FUSE ceiling for listings (scripts/bench --library-scale N): a read-only tree held in memory.
 *
 *     bench-ceiling-tree MOUNTPOINT FOLDER [--plain-reads]
 *
 * FOLDER is walked once (lstat of every entry, names and attributes kept in one array, each
 * folder's children side by side); then one line, "loaded", goes to stdout (the bench starts its
 * clock there) and the tree appears under MOUNTPOINT. Every request is answered from that array:
 * an inode number is an index, a lookup scans its folder's few children, readdirplus copies
 * entries out, and entries and attributes are cached an hour. It asks the kernel for what inkyfs
 * asks (readdirplus for every chunk, no OPENDIR/RELEASEDIR, the same thread count), so it is what
 * a listing through FUSE costs on this machine when the filesystem itself costs nothing. Page
 * contents are not served: a listing never reads them.
 *
 * It reads the device as inkyfs does, with the same code (CInkyFuseDevice's device readers: one
 * pinned to each CPU, so a request is answered on its requester's CPU); --plain-reads leaves the
 * reading to libfuse, for the bench to show what those readers are worth on this machine.
 *
 * Built by scripts/bench: cc -O2 -I Sources/CInkyFuseDevice/include bench-ceiling-tree.c
 *   Sources/CInkyFuseDevice/fuse_device.c $(pkg-config --cflags --libs fuse3).
 */
#define FUSE_USE_VERSION 312
#include "inky_fuse_device.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct node {
    char *name;
    struct stat st;
    size_t parent;       /* index of the folder holding it (the root: itself) */
    size_t first_child;  /* children are nodes[first_child ..< first_child + children] */
    size_t children;
};

static struct node *nodes;
static size_t node_count, node_capacity;
static const double forever = 3600;

static size_t add_node(const char *name, const struct stat *st, size_t parent) {
    if (node_count == node_capacity) {
        node_capacity = node_capacity ? node_capacity * 2 : 1024;
        nodes = realloc(nodes, node_capacity * sizeof *nodes);
        if (nodes == NULL) { perror("realloc"); exit(1); }
    }
    struct node *n = &nodes[node_count];
    n->name = strdup(name);
    n->st = *st;
    n->parent = parent;
    n->first_child = n->children = 0;
    return node_count++;
}

/* Breadth first, the array its own queue: a folder's children are appended together when it is reached. */
static void load(const char *root) {
    struct stat st;
    if (lstat(root, &st) != 0 || !S_ISDIR(st.st_mode)) { perror(root); exit(1); }
    add_node("", &st, 0);
    char *path = NULL;
    size_t *paths_at = NULL;
    for (size_t i = 0; i < node_count; i++) {
        if (!S_ISDIR(nodes[i].st.st_mode)) continue;
        /* the folder's path: root + the names up the parents */
        size_t depth = 0;
        for (size_t at = i; at != 0; at = nodes[at].parent) depth++;
        paths_at = realloc(paths_at, (depth + 1) * sizeof *paths_at);
        size_t k = depth;
        for (size_t at = i; at != 0; at = nodes[at].parent) paths_at[--k] = at;
        size_t length = strlen(root) + 1;
        for (k = 0; k < depth; k++) length += strlen(nodes[paths_at[k]].name) + 1;
        path = realloc(path, length + 1);
        strcpy(path, root);
        for (k = 0; k < depth; k++) { strcat(path, "/"); strcat(path, nodes[paths_at[k]].name); }
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *dir = fd < 0 ? NULL : fdopendir(fd);
        if (dir == NULL) { perror(path); continue; }
        nodes[i].first_child = node_count;
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
            if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
            add_node(entry->d_name, &st, i);
            nodes[i].children++;
        }
        closedir(dir);
    }
    free(path);
    free(paths_at);
}

static struct node *node_of(fuse_ino_t ino) {
    return ino >= 1 && ino <= node_count ? &nodes[ino - 1] : NULL;
}

static void fill_entry(struct fuse_entry_param *e, size_t index) {
    memset(e, 0, sizeof *e);
    e->ino = index + 1;
    e->attr = nodes[index].st;
    e->attr.st_ino = e->ino;
    e->attr_timeout = e->entry_timeout = forever;
}

static void ceiling_init(void *userdata, struct fuse_conn_info *conn) {
    (void)userdata;
    conn->max_readahead = 1 << 20;
    if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
    conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
}

static void ceiling_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
    struct node *folder = node_of(parent);
    if (folder == NULL || !S_ISDIR(folder->st.st_mode)) { fuse_reply_err(req, ENOTDIR); return; }
    for (size_t i = folder->first_child; i < folder->first_child + folder->children; i++) {
        if (strcmp(nodes[i].name, name) == 0) {
            struct fuse_entry_param e;
            fill_entry(&e, i);
            fuse_reply_entry(req, &e);
            return;
        }
    }
    fuse_reply_err(req, ENOENT);
}

static void ceiling_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi;
    struct node *n = node_of(ino);
    if (n == NULL) { fuse_reply_err(req, ENOENT); return; }
    struct stat st = n->st;
    st.st_ino = ino;
    fuse_reply_attr(req, &st, forever);
}

/* ENOSYS: this kernel stops sending OPENDIR and RELEASEDIR, as it does for inkyfs. */
static void ceiling_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)ino, (void)fi;
    fuse_reply_err(req, ENOSYS);
}

/* Entries from `offset` (0 and 1 are "." and ".."), as many as fit in `size`. */
static void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, int plus) {
    struct node *folder = node_of(ino);
    if (folder == NULL || !S_ISDIR(folder->st.st_mode)) { fuse_reply_err(req, ENOTDIR); return; }
    char *buffer = malloc(size);
    if (buffer == NULL) { fuse_reply_err(req, ENOMEM); return; }
    size_t used = 0;
    for (size_t k = (size_t)offset; k < folder->children + 2; k++) {
        const char *name;
        struct fuse_entry_param e;
        if (k < 2) {
            size_t index = k == 0 ? (size_t)(folder - nodes) : folder->parent;
            memset(&e, 0, sizeof e);   /* "." and "..": no lookup counted */
            e.attr.st_ino = index + 1;
            e.attr.st_mode = S_IFDIR;
            name = k == 0 ? "." : "..";
        } else {
            size_t index = folder->first_child + k - 2;
            fill_entry(&e, index);
            name = nodes[index].name;
        }
        size_t needed = plus ? fuse_add_direntry_plus(req, buffer + used, size - used, name, &e, (off_t)k + 1)
                             : fuse_add_direntry(req, buffer + used, size - used, name, &e.attr, (off_t)k + 1);
        if (used + needed > size) break;
        used += needed;
    }
    fuse_reply_buf(req, buffer, used);
    free(buffer);
}

static void ceiling_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    list(req, ino, size, offset, 0);
}

static void ceiling_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    list(req, ino, size, offset, 1);
}

static void ceiling_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size) {
    (void)ino, (void)name, (void)size;
    fuse_reply_err(req, EOPNOTSUPP);
}

static void ceiling_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
    (void)ino, (void)nlookup;
    fuse_reply_none(req);
}

static void ceiling_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
    (void)count, (void)forgets;
    fuse_reply_none(req);
}

static const struct fuse_lowlevel_ops ops = {
    .init = ceiling_init,
    .lookup = ceiling_lookup,
    .getattr = ceiling_getattr,
    .opendir = ceiling_opendir,
    .readdir = ceiling_readdir,
    .readdirplus = ceiling_readdirplus,
    .getxattr = ceiling_getxattr,
    .forget = ceiling_forget,
    .forget_multi = ceiling_forget_multi,
};

static struct inky_device_readers readers;

static ssize_t device_read(int fd, void *buf, size_t len, void *userdata) {
    (void)userdata;
    return inky_device_read(fd, buf, len, &readers);
}

static ssize_t device_writev(int fd, struct iovec *iov, int count, void *userdata) {
    (void)userdata;
    return writev(fd, iov, count);
}

static ssize_t device_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len, unsigned int flags, void *userdata) {
    (void)userdata;
    return inky_splice(fdin, offin, fdout, offout, len, flags);
}

int main(int argc, char **argv) {
    int plain = argc == 4 && strcmp(argv[3], "--plain-reads") == 0;
    if (argc != 3 && !plain) {
        fprintf(stderr, "usage: %s MOUNTPOINT FOLDER [--plain-reads]\n", argv[0]);
        return 2;
    }
    load(argv[2]);
    printf("loaded\n");
    fflush(stdout);
    char *args_v[] = {argv[0], "-o", "ro,default_permissions,fsname=bench-ceiling-tree", NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, args_v);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
    if (se == NULL) return 1;
    if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, argv[1]) != 0) return 1;
    if (!plain) {
        static const struct fuse_custom_io io = {
            .read = device_read, .writev = device_writev, .splice_send = device_splice, .splice_receive = device_splice };
        if (fuse_session_custom_io(se, &io, fuse_session_fd(se)) != 0) return 1;
        inky_device_readers_begin(&readers, fuse_session_fd(se));
    }
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    fuse_loop_cfg_set_max_threads(config, 16);
    fuse_loop_cfg_set_clone_fd(config, 0);
    int result = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    return result ? 1 : 0;
}
