/* faultfs: a read-only FUSE passthrough that fails chosen reads with EIO, for the fault tests
 * (the container has no device-mapper, so no dm-error/dm-flakey).
 *
 * Usage: faultfs SOURCE FAULTS MOUNTPOINT
 * FAULTS is re-read on every read: one fault per line, "NAME START END": a read of a file whose
 * name is NAME that overlaps bytes [START, END) fails with EIO. An empty file means a healthy
 * disk. Files are opened with direct_io, so every read reaches this program. */
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *source;
static const char *faults;

static void real_path(char *out, const char *path) { snprintf(out, PATH_MAX, "%s%s", source, path); }

static int faulty(const char *path, off_t offset, size_t size) {
    FILE *file = fopen(faults, "r");
    if (!file) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char line[1024];
    int hit = 0;
    while (!hit && fgets(line, sizeof line, file)) {
        char *end = strrchr(line, ' ');
        if (!end) continue;
        long long stop = atoll(end + 1);
        *end = 0;
        char *mid = strrchr(line, ' ');
        if (!mid) continue;
        long long start = atoll(mid + 1);
        *mid = 0;
        hit = strcmp(line, base) == 0 && offset < stop && (long long)(offset + size) > start;
    }
    fclose(file);
    return hit;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    char real[PATH_MAX];
    real_path(real, path);
    return lstat(real, st) == 0 ? 0 : -errno;
}

static int fs_readdir(const char *path, void *buffer, fuse_fill_dir_t fill, off_t offset,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)offset; (void)fi; (void)flags;
    char real[PATH_MAX];
    real_path(real, path);
    DIR *dir = opendir(real);
    if (!dir) return -errno;
    struct dirent *entry;
    while ((entry = readdir(dir))) fill(buffer, entry->d_name, NULL, 0, 0);
    closedir(dir);
    return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
    if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
    char real[PATH_MAX];
    real_path(real, path);
    int fd = open(real, O_RDONLY);
    if (fd < 0) return -errno;
    fi->fh = fd;
    fi->direct_io = 1;
    return 0;
}

static int fs_read(const char *path, char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    if (faulty(path, offset, size)) return -EIO;
    ssize_t got = pread(fi->fh, buffer, size, offset);
    return got < 0 ? -errno : (int)got;
}

static int fs_release(const char *path, struct fuse_file_info *fi) {
    (void)path;
    close(fi->fh);
    return 0;
}

static const struct fuse_operations operations = {
    .getattr = fs_getattr, .readdir = fs_readdir, .open = fs_open, .read = fs_read, .release = fs_release,
};

int main(int argc, char *argv[]) {
    if (argc != 4) {
        fprintf(stderr, "usage: faultfs SOURCE FAULTS MOUNTPOINT\n");
        return 2;
    }
    source = argv[1];
    faults = argv[2];
    char *args[] = {argv[0], "-f", "-o", "ro,default_permissions,fsname=faultfs", argv[3], NULL};
    return fuse_main(5, args, &operations, NULL);
}
