/* The FUSE ceiling for scripts/bench: a read-only filesystem serving files it holds in memory.
 *
 *     bench-ceiling MOUNTPOINT FILE...
 *
 * Every FILE is read into memory first; then one line, "loaded", goes to stdout (the bench starts
 * its mount clock there), and the files appear flat under MOUNTPOINT by their base names. It runs
 * in the foreground, multithreaded, with the same kernel tuning inkyfs asks for (1 MiB readahead,
 * async reads, 1 MiB reads) and keep_cache, and it answers every lookup with hour-long timeouts:
 * nothing any archive filesystem does can be faster through FUSE on this machine.
 *
 * Built by scripts/bench: cc -O2 bench-ceiling.c $(pkg-config --cflags --libs fuse3).
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct held {
    const char *name;
    char *bytes;
    size_t size;
};

static struct held *files;
static int file_count;

static const struct held *find(const char *path) {
    if (path[0] != '/' || strchr(path + 1, '/') != NULL) return NULL;
    for (int i = 0; i < file_count; i++)
        if (strcmp(files[i].name, path + 1) == 0) return &files[i];
    return NULL;
}

static void *ceiling_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    conn->max_readahead = 1 << 20;
    if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
    cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 3600;
    cfg->kernel_cache = 1;
    return NULL;
}

static int ceiling_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    memset(st, 0, sizeof *st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
        return 0;
    }
    const struct held *file = find(path);
    if (file == NULL) return -ENOENT;
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = (off_t)file->size;
    return 0;
}

static int ceiling_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset,
                           struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)offset, (void)fi, (void)flags;
    if (strcmp(path, "/") != 0) return -ENOENT;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    for (int i = 0; i < file_count; i++) fill(buf, files[i].name, NULL, 0, 0);
    return 0;
}

static int ceiling_open(const char *path, struct fuse_file_info *fi) {
    if (find(path) == NULL) return -ENOENT;
    if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
    fi->keep_cache = 1;
    return 0;
}

static int ceiling_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    const struct held *file = find(path);
    if (file == NULL) return -ENOENT;
    if ((size_t)offset >= file->size) return 0;
    if (size > file->size - (size_t)offset) size = file->size - (size_t)offset;
    memcpy(buf, file->bytes + offset, size);
    return (int)size;
}

static const struct fuse_operations operations = {
    .init = ceiling_init,
    .getattr = ceiling_getattr,
    .readdir = ceiling_readdir,
    .open = ceiling_open,
    .read = ceiling_read,
};

static int load(struct held *file, const char *path) {
    FILE *in = fopen(path, "rb");
    if (in == NULL) return -1;
    struct stat st;
    if (fstat(fileno(in), &st) != 0 || (file->bytes = malloc((size_t)st.st_size + 1)) == NULL) {
        fclose(in);
        return -1;
    }
    file->size = fread(file->bytes, 1, (size_t)st.st_size, in);
    const char *slash = strrchr(path, '/');
    file->name = slash ? slash + 1 : path;
    fclose(in);
    return file->size == (size_t)st.st_size ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MOUNTPOINT FILE...\n", argv[0]);
        return 2;
    }
    file_count = argc - 2;
    files = calloc((size_t)file_count, sizeof *files);
    for (int i = 0; i < file_count; i++) {
        if (files == NULL || load(&files[i], argv[i + 2]) != 0) {
            fprintf(stderr, "bench-ceiling: cannot load %s\n", argv[i + 2]);
            return 1;
        }
    }
    printf("loaded\n");
    fflush(stdout);
    char *fuse_argv[] = {argv[0], "-f", "-o", "ro,fsname=bench-ceiling", argv[1], NULL};
    return fuse_main(5, fuse_argv, &operations, NULL);
}
