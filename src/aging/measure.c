/* SPDX-License-Identifier: MIT */
/*
 * Aging metrics of a directory tree (TBBT paper 3.3.1; see measure.h and
 * docs/tbbt-init.md "Measuring aging" for the exact definitions).
 *
 * The walk uses openat()/fstatat(AT_SYMLINK_NOFOLLOW) relative to the parent's
 * descriptor, so it never follows a symbolic link and never leaves the file
 * system of DIR (entries on another st_dev are not entered).  Each regular file
 * is mapped with FS_IOC_FIEMAP (FIEMAP_FLAG_SYNC, in batches of FIEMAP_BATCH
 * extents) and fed to the accumulator; only running sums are kept, plus the
 * inode numbers of multiply-linked files so a hard link is measured once.
 *
 * Locations (all in file system blocks, as FIEMAP's physical byte addresses
 * divided by the block size):
 *  - a directory's first block: FIEMAP on the directory; where the file system
 *    does not map directories (XFS, btrfs) or keeps the data inline, the
 *    directory's inode location instead, if known;
 *  - an inode's block: ext4 (and ext2/3) from the superblock and the group
 *    descriptor's inode table, read from the block device (needs read access to
 *    it, i.e. root); XFS from the inode number, decoded with the geometry of
 *    XFS_IOC_FSGEOMETRY_V1; unknown elsewhere (btrfs keeps inodes in a B-tree).
 * Free space comes from FS_IOC_GETFSMAP (ext4, XFS; needs CAP_SYS_ADMIN).
 *
 * It does not measure directories, symbolic links or special files as objects,
 * and it does not read file data.  The whole-file-system free-space metric does
 * not depend on DIR.  The JSON output's keys are the table measure-keys.def.
 */
#include "aging/measure.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/fsmap.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/json.h"
#include "util/util.h"

#define FIEMAP_BATCH 128
#define FSMAP_BATCH 256

/* ---- accumulator ---------------------------------------------------------------------- */

static uint64_t absdiff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

void tbbt_measure_acc_init(struct tbbt_measure_acc *a)
{
    *a = (struct tbbt_measure_acc){ 0 };
}

void tbbt_measure_file_begin(struct tbbt_measure_acc *a)
{
    a->files++;
    a->f_blocks = 0;
    a->f_first = a->f_last = 0;
}

void tbbt_measure_file_extent(struct tbbt_measure_acc *a, uint64_t logical, uint64_t physical,
                              uint64_t n)
{
    (void)logical; /* holes are ignored: only the logical order of the runs matters */
    if (n == 0)
        return;
    if (a->f_blocks == 0) {
        a->f_first = physical;
        a->fragments++;
    } else {
        uint64_t d = absdiff(physical, a->f_last);

        a->block_pairs++;
        a->block_dist_sum += d;
        if (physical != a->f_last + 1) {
            a->fragments++;
            a->fragment_pairs++;
            a->fragment_dist_sum += d;
        }
    }
    /* Inside the run every logical neighbour is the physical neighbour: distance 1. */
    a->block_pairs += n - 1;
    a->block_dist_sum += n - 1;
    a->f_blocks += n;
    a->blocks += n;
    a->f_last = physical + n - 1;
}

void tbbt_measure_file_unlocated(struct tbbt_measure_acc *a, uint64_t n)
{
    a->unlocated_blocks += n;
}

void tbbt_measure_file_end(struct tbbt_measure_acc *a, bool have_parent, uint64_t parent,
                           bool have_inode, uint64_t inode)
{
    if (a->f_blocks == 0)
        return;
    if (have_parent) {
        a->parent_files++;
        a->parent_blocks += a->f_blocks;
        a->parent_sum += (long double)a->f_blocks * absdiff(a->f_first, parent);
    }
    if (have_inode) {
        a->inode_files++;
        a->inode_blocks += a->f_blocks;
        a->inode_sum += (long double)a->f_blocks * absdiff(a->f_first, inode);
    }
}

void tbbt_measure_free_extent(struct tbbt_measure_acc *a, uint32_t dev, uint64_t physical,
                              uint64_t n)
{
    if (n == 0)
        return;
    a->free_blocks += n;
    if (!(a->free_open && dev == a->free_dev && physical == a->free_end))
        a->free_fragments++;
    a->free_open = true;
    a->free_dev = dev;
    a->free_end = physical + n;
}

static double ratio(long double num, uint64_t den)
{
    return den ? (double)(num / den) : 0.0;
}

void tbbt_measure_acc_finish(const struct tbbt_measure_acc *a, bool have_free,
                             struct tbbt_measure *m)
{
    m->files = a->files;
    m->blocks = a->blocks;
    m->fragments = a->fragments;
    m->block_pairs = a->block_pairs;
    m->fragment_pairs = a->fragment_pairs;
    m->unlocated_blocks = a->unlocated_blocks;
    m->avg_block_distance = ratio(a->block_dist_sum, a->block_pairs);
    m->avg_fragment_size = ratio(a->blocks, a->fragments);
    m->avg_fragment_distance = ratio(a->fragment_dist_sum, a->fragment_pairs);
    m->parent_files = a->parent_files;
    m->have_parent_distance = a->parent_blocks > 0 || a->blocks == 0;
    m->avg_parent_distance = ratio(a->parent_sum, a->parent_blocks);
    m->inode_files = a->inode_files;
    m->have_inode_distance = a->inode_blocks > 0;
    m->avg_inode_distance = ratio(a->inode_sum, a->inode_blocks);
    m->have_free = have_free;
    m->free_blocks = have_free ? a->free_blocks : 0;
    m->free_fragments = have_free ? a->free_fragments : 0;
    m->free_avg_fragment_size = have_free ? ratio(a->free_blocks, a->free_fragments) : 0.0;
}

/* ---- inode location ------------------------------------------------------------------- */

enum fs_kind { FS_OTHER, FS_EXT4, FS_XFS, FS_BTRFS };

/* What we know to turn an inode number into the block holding the inode. */
struct inode_loc {
    enum fs_kind kind;
    bool ok;
    /* ext4 */
    int dev_fd;
    uint32_t first_data_block, inodes_per_group, inode_size, desc_size, groups;
    uint64_t cached_group, cached_table; /* one-entry cache: group -> inode table */
    bool have_cache;
    /* XFS */
    uint32_t agblocks, agblklog, inopblog;
};

/* The XFS_IOC_FSGEOMETRY_V1 argument (xfs_fs.h, stable ABI; xfslibs-dev is not required). */
struct tbbt_xfs_geom_v1 {
    uint32_t blocksize, rtextsize, agblocks, agcount, logblocks, sectsize, inodesize, imaxpct;
    uint64_t datablocks, rtblocks, rtextents, logstart;
    unsigned char uuid[16];
    uint32_t sunit, swidth;
    int32_t version;
    uint32_t flags, logsectsize, rtsectsize, dirblocksize;
};
#define TBBT_XFS_IOC_FSGEOMETRY_V1 _IOR('X', 100, struct tbbt_xfs_geom_v1)

static unsigned log2_roundup(uint64_t v)
{
    unsigned r = 0;

    while (r < 63 && (UINT64_C(1) << r) < v)
        r++;
    return r;
}

static void xfs_loc_init(struct inode_loc *il, int fd, uint32_t bs)
{
    struct tbbt_xfs_geom_v1 g;

    memset(&g, 0, sizeof(g));
    if (ioctl(fd, TBBT_XFS_IOC_FSGEOMETRY_V1, &g) < 0)
        return;
    if (g.blocksize != bs || g.inodesize == 0 || g.inodesize > g.blocksize || g.agblocks == 0)
        return;
    il->agblocks = g.agblocks;
    il->agblklog = log2_roundup(g.agblocks);
    il->inopblog = log2_roundup(g.blocksize / g.inodesize);
    il->ok = true;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Opens the block device of st_dev read-only: /sys/dev/block/M:m/uevent DEVNAME. */
static int open_block_device(dev_t dev)
{
    char path[128], line[256], devpath[300] = "";
    FILE *f;
    int fd;
    struct stat st;

    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
    f = fopen(path, "re");
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            if (strncmp(line, "DEVNAME=", 8) == 0) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(devpath, sizeof(devpath), "/dev/%s", line + 8);
                break;
            }
        }
        fclose(f);
    }
    if (!devpath[0])
        snprintf(devpath, sizeof(devpath), "/dev/block/%u:%u", major(dev), minor(dev));
    fd = open(devpath, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev) {
        close(fd);
        return -1;
    }
    return fd;
}

#define EXT4_INCOMPAT_META_BG 0x10
#define EXT4_INCOMPAT_64BIT 0x80

/* Reads the ext2/3/4 superblock (byte layout: ext4 disk layout, "The Super Block"). */
static void ext4_loc_init(struct inode_loc *il, dev_t dev, uint32_t bs)
{
    unsigned char sb[1024];
    uint32_t log_bs, blocks_per_group, incompat, rev;
    uint64_t blocks;

    il->dev_fd = open_block_device(dev);
    if (il->dev_fd < 0)
        return;
    if (pread(il->dev_fd, sb, sizeof(sb), 1024) != (ssize_t)sizeof(sb))
        return;
    log_bs = le32(sb + 0x18);
    if (le16(sb + 0x38) != 0xEF53 || log_bs > 6 || (1024u << log_bs) != bs)
        return;
    incompat = le32(sb + 0x60);
    if (incompat & EXT4_INCOMPAT_META_BG)
        return; /* descriptors scattered over meta groups: not decoded, distance unknown */
    rev = le32(sb + 0x4C);
    il->first_data_block = le32(sb + 0x14);
    blocks_per_group = le32(sb + 0x20);
    il->inodes_per_group = le32(sb + 0x28);
    il->inode_size = rev >= 1 ? le16(sb + 0x58) : 128;
    il->desc_size = (incompat & EXT4_INCOMPAT_64BIT) ? le16(sb + 0xFE) : 32;
    blocks = le32(sb + 0x04) |
             ((incompat & EXT4_INCOMPAT_64BIT) ? (uint64_t)le32(sb + 0x150) << 32 : 0);
    if (blocks_per_group == 0 || il->inodes_per_group == 0 || il->inode_size < 128 ||
        il->inode_size > bs || il->desc_size < 32 || il->desc_size > bs ||
        blocks <= il->first_data_block)
        return;
    il->groups = (uint32_t)((blocks - il->first_data_block + blocks_per_group - 1) /
                            blocks_per_group);
    il->ok = true;
}

static bool ext4_inode_block(struct inode_loc *il, uint64_t ino, uint32_t bs, uint64_t *blk)
{
    unsigned char d[64];
    uint64_t group, index, off, table;
    size_t want;

    if (ino == 0)
        return false;
    group = (ino - 1) / il->inodes_per_group;
    index = (ino - 1) % il->inodes_per_group;
    if (group >= il->groups)
        return false;
    if (!il->have_cache || il->cached_group != group) {
        want = il->desc_size >= 64 ? 64 : 32;
        off = ((uint64_t)il->first_data_block + 1) * bs + group * il->desc_size;
        if (pread(il->dev_fd, d, want, (off_t)off) != (ssize_t)want)
            return false;
        table = le32(d + 8);
        if (want == 64)
            table |= (uint64_t)le32(d + 0x28) << 32;
        il->cached_group = group;
        il->cached_table = table;
        il->have_cache = true;
    }
    *blk = il->cached_table + index * il->inode_size / bs;
    return true;
}

static bool inode_block(struct inode_loc *il, uint64_t ino, uint32_t bs, uint64_t *blk)
{
    uint64_t agno, agbno;

    if (!il->ok)
        return false;
    switch (il->kind) {
    case FS_EXT4:
        return ext4_inode_block(il, ino, bs, blk);
    case FS_XFS:
        agno = ino >> (il->agblklog + il->inopblog);
        agbno = (ino >> il->inopblog) & ((UINT64_C(1) << il->agblklog) - 1);
        *blk = agno * il->agblocks + agbno;
        return true;
    default:
        return false;
    }
}

/* ---- FIEMAP --------------------------------------------------------------------------- */

#define UNLOCATED_FLAGS                                                                           \
    (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_NOT_ALIGNED |                 \
     FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL)

/* The walk's state: owned by tbbt_measure_tree(), one per call. */
struct walk {
    struct tbbt_measure_acc acc;
    struct tbbt_measure *m;
    struct inode_loc il;
    uint32_t bs;
    dev_t dev;
    struct fiemap *fm;         /* owned, FIEMAP_BATCH extents */
    GHashTable *linked;        /* owned: inode numbers of files with st_nlink > 1 */
    char *errbuf;              /* borrowed */
    size_t errlen;
    const char *root;          /* borrowed */
};

static bool fiemap_unsupported(int err)
{
    return err == EOPNOTSUPP || err == ENOTTY || err == ENOSYS;
}

/* One FIEMAP call from byte start, up to end; 0 or -errno.  Retries without
 * FIEMAP_FLAG_SYNC if the file system refuses the flag (EBADR). */
static int fiemap_call(struct walk *w, int fd, uint64_t start, uint64_t end, uint32_t count)
{
    uint32_t flags = FIEMAP_FLAG_SYNC;

    for (;;) {
        memset(w->fm, 0, sizeof(*w->fm));
        w->fm->fm_start = start;
        w->fm->fm_length = end - start;
        w->fm->fm_flags = flags;
        w->fm->fm_extent_count = count;
        if (ioctl(fd, FS_IOC_FIEMAP, w->fm) == 0)
            return 0;
        if (errno == EBADR && flags) {
            flags = 0;
            continue;
        }
        return -errno;
    }
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* Feeds one extent, clipped to end (bytes), to the accumulator. */
static void feed_extent(struct walk *w, const struct fiemap_extent *e, uint64_t end)
{
    uint64_t len = e->fe_length;

    if (e->fe_logical >= end || len == 0)
        return;
    if (len > end - e->fe_logical)
        len = end - e->fe_logical;
    if (e->fe_flags & UNLOCATED_FLAGS) {
        tbbt_measure_file_unlocated(&w->acc, div_up(len, w->bs));
        return;
    }
    tbbt_measure_file_extent(&w->acc, e->fe_logical / w->bs, e->fe_physical / w->bs,
                             div_up(len, w->bs));
}

/* Maps the blocks of [0, end) of fd into the accumulator.  0 or -errno. */
static int map_file(struct walk *w, int fd, uint64_t end)
{
    uint64_t start = 0;

    while (start < end) {
        int rc = fiemap_call(w, fd, start, end, FIEMAP_BATCH);
        uint32_t n, i;
        const struct fiemap_extent *last;

        if (rc < 0)
            return rc;
        n = w->fm->fm_mapped_extents;
        if (n == 0 || n > FIEMAP_BATCH)
            break;
        for (i = 0; i < n; i++)
            feed_extent(w, &w->fm->fm_extents[i], end);
        last = &w->fm->fm_extents[n - 1];
        if ((last->fe_flags & FIEMAP_EXTENT_LAST) || last->fe_length == 0 ||
            last->fe_logical + last->fe_length <= start)
            break;
        start = last->fe_logical + last->fe_length;
    }
    return 0;
}

/* Where a directory starts: its first mapped block, else its inode's block. */
static bool locate_dir(struct walk *w, int fd, const struct stat *st, uint64_t *blk)
{
    if (fiemap_call(w, fd, 0, FIEMAP_MAX_OFFSET, 1) == 0 && w->fm->fm_mapped_extents >= 1 &&
        !(w->fm->fm_extents[0].fe_flags & UNLOCATED_FLAGS)) {
        *blk = w->fm->fm_extents[0].fe_physical / w->bs;
        return true;
    }
    return inode_block(&w->il, st->st_ino, w->bs, blk);
}

/* ---- walk ----------------------------------------------------------------------------- */

/* Returns true if a multiply-linked file was measured already (then skip it). */
static bool seen_link(struct walk *w, const struct stat *st)
{
    uint64_t *key;

    if (st->st_nlink <= 1)
        return false;
    if (!w->linked)
        w->linked = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    if (g_hash_table_contains(w->linked, &(uint64_t){ st->st_ino }))
        return true;
    key = g_new(uint64_t, 1);
    *key = st->st_ino;
    g_hash_table_add(w->linked, key);
    return false;
}

/* Counts an entry that could not be measured. */
static void count_failure(struct walk *w, int err)
{
    if (err == ENOENT || err == ELOOP || err == ENOTDIR || err == ESTALE)
        w->m->vanished++;
    else
        w->m->skipped++;
}

/* Opens name in dfd with flags and checks it is still the object fstatat saw. */
static int open_same(struct walk *w, int dfd, const char *name, int flags, const struct stat *st)
{
    struct stat st2;
    int fd = openat(dfd, name, flags | O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

    if (fd < 0) {
        count_failure(w, errno);
        return -1;
    }
    if (fstat(fd, &st2) < 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino ||
        (st2.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
        close(fd);
        w->m->vanished++;
        return -1;
    }
    return fd;
}

static int measure_file(struct walk *w, int dfd, const char *name, const struct stat *st,
                        bool have_parent, uint64_t parent)
{
    uint64_t ino_blk = 0;
    bool have_ino;
    int fd, rc;

    fd = open_same(w, dfd, name, 0, st);
    if (fd < 0)
        return 0;
    if (seen_link(w, st)) {
        close(fd);
        return 0;
    }
    tbbt_measure_file_begin(&w->acc);
    rc = st->st_size > 0 ? map_file(w, fd, div_up((uint64_t)st->st_size, w->bs) * w->bs) : 0;
    close(fd);
    if (rc < 0 && fiemap_unsupported(-rc)) {
        snprintf(w->errbuf, w->errlen, "cannot measure '%s': the file system does not support FIEMAP",
                 w->root);
        return rc;
    }
    if (rc < 0) {
        /* The file was counted by _file_begin(): its blocks so far stay measured. */
        count_failure(w, -rc);
    }
    have_ino = inode_block(&w->il, st->st_ino, w->bs, &ino_blk);
    tbbt_measure_file_end(&w->acc, have_parent, parent, have_ino, ino_blk);
    return 0;
}

static int walk_dir(struct walk *w, int dfd, bool have_loc, uint64_t loc);

static int enter_dir(struct walk *w, int dfd, const char *name, const struct stat *st)
{
    uint64_t loc = 0;
    bool have;
    int fd = open_same(w, dfd, name, O_DIRECTORY, st);

    if (fd < 0)
        return 0;
    have = locate_dir(w, fd, st, &loc);
    return walk_dir(w, fd, have, loc);
}

/* Walks the directory open on dfd (taken: closed here) whose start is loc. */
static int walk_dir(struct walk *w, int dfd, bool have_loc, uint64_t loc)
{
    DIR *d = fdopendir(dfd);
    struct dirent *de;
    struct stat st;
    int rc = 0;

    if (!d) {
        count_failure(w, errno);
        close(dfd);
        return 0;
    }
    w->m->dirs++;
    for (;;) {
        errno = 0;
        de = readdir(d);
        if (!de) {
            if (errno)
                count_failure(w, errno);
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            count_failure(w, errno);
            continue;
        }
        if (st.st_dev != w->dev)
            continue; /* a mount point: another file system */
        if (S_ISREG(st.st_mode))
            rc = measure_file(w, dirfd(d), de->d_name, &st, have_loc, loc);
        else if (S_ISDIR(st.st_mode))
            rc = enter_dir(w, dirfd(d), de->d_name, &st);
        if (rc < 0)
            break;
    }
    closedir(d);
    return rc;
}

/* ---- free space ----------------------------------------------------------------------- */

/* Collects FMR_OWN_FREE extents of the whole file system; false if unsupported. */
static bool collect_free(struct walk *w, int fd)
{
    struct fsmap_head *h = g_malloc0(fsmap_sizeof(FSMAP_BATCH));
    bool ok = false;

    h->fmh_count = FSMAP_BATCH;
    h->fmh_keys[1].fmr_device = UINT32_MAX;
    h->fmh_keys[1].fmr_flags = UINT32_MAX;
    h->fmh_keys[1].fmr_physical = UINT64_MAX;
    h->fmh_keys[1].fmr_owner = UINT64_MAX;
    h->fmh_keys[1].fmr_offset = UINT64_MAX;
    for (;;) {
        const struct fsmap *r;
        uint32_t i;

        if (ioctl(fd, FS_IOC_GETFSMAP, h) < 0) {
            tbbt_log(TBBT_LOG_DEBUG, "FS_IOC_GETFSMAP: %s", strerror(errno));
            break;
        }
        if (h->fmh_entries == 0 || h->fmh_entries > FSMAP_BATCH) {
            ok = true;
            break;
        }
        for (i = 0; i < h->fmh_entries; i++) {
            r = &h->fmh_recs[i];
            if ((r->fmr_flags & FMR_OF_SPECIAL_OWNER) && r->fmr_owner == FMR_OWN_FREE)
                tbbt_measure_free_extent(&w->acc, r->fmr_device, r->fmr_physical / w->bs,
                                         div_up(r->fmr_length, w->bs));
        }
        if (h->fmh_recs[h->fmh_entries - 1].fmr_flags & FMR_OF_LAST) {
            ok = true;
            break;
        }
        fsmap_advance(h);
    }
    g_free(h);
    return ok;
}

/* ---- entry point ---------------------------------------------------------------------- */

static void set_fs_type(struct walk *w, const struct statfs *sf)
{
    const char *name = NULL;

    switch ((unsigned long)sf->f_type) {
    case EXT4_SUPER_MAGIC:
        w->il.kind = FS_EXT4;
        name = "ext4";
        break;
    case XFS_SUPER_MAGIC:
        w->il.kind = FS_XFS;
        name = "xfs";
        break;
    case BTRFS_SUPER_MAGIC:
        w->il.kind = FS_BTRFS;
        name = "btrfs";
        break;
    default:
        w->il.kind = FS_OTHER;
        break;
    }
    if (name)
        snprintf(w->m->fs_type, sizeof(w->m->fs_type), "%s", name);
    else
        snprintf(w->m->fs_type, sizeof(w->m->fs_type), "0x%lx", (unsigned long)sf->f_type);
}

/* Opens and checks the root; fills w->bs, w->dev and the fs kind.  fd or -errno. */
static int open_root(struct walk *w, const char *dir, struct stat *st)
{
    struct statfs sf;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err;

    if (fd < 0) {
        err = errno;
        if (err == ENOTDIR)
            snprintf(w->errbuf, w->errlen, "cannot measure '%s': not a directory", dir);
        else
            snprintf(w->errbuf, w->errlen, "cannot measure '%s': %s", dir, strerror(err));
        return -err;
    }
    if (fstat(fd, st) < 0 || fstatfs(fd, &sf) < 0) {
        err = errno;
        snprintf(w->errbuf, w->errlen, "cannot measure '%s': %s", dir, strerror(err));
        close(fd);
        return -err;
    }
    if (sf.f_bsize <= 0 || sf.f_bsize > (1 << 24)) {
        snprintf(w->errbuf, w->errlen, "cannot measure '%s': odd block size %ld", dir,
                 (long)sf.f_bsize);
        close(fd);
        return -EINVAL;
    }
    w->bs = (uint32_t)sf.f_bsize;
    w->dev = st->st_dev;
    set_fs_type(w, &sf);
    return fd;
}

int tbbt_measure_tree(const char *dir, struct tbbt_measure *m, char *errbuf, size_t errlen)
{
    struct walk w = { .m = m, .errbuf = errbuf, .errlen = errlen, .root = dir };
    struct stat st;
    uint64_t loc = 0;
    bool have_loc, have_free;
    int fd, rc;

    *m = (struct tbbt_measure){ 0 };
    if (errlen)
        errbuf[0] = '\0';
    w.il.dev_fd = -1;
    fd = open_root(&w, dir, &st);
    if (fd < 0)
        return fd;
    m->block_size = w.bs;
    if (w.il.kind == FS_EXT4)
        ext4_loc_init(&w.il, w.dev, w.bs);
    else if (w.il.kind == FS_XFS)
        xfs_loc_init(&w.il, fd, w.bs);
    tbbt_measure_acc_init(&w.acc);
    w.fm = g_malloc0(sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent));
    have_free = collect_free(&w, fd);
    have_loc = locate_dir(&w, fd, &st, &loc);
    rc = walk_dir(&w, fd, have_loc, loc); /* takes fd */
    if (rc == 0)
        tbbt_measure_acc_finish(&w.acc, have_free, m);
    if (w.il.dev_fd >= 0)
        close(w.il.dev_fd);
    if (w.linked)
        g_hash_table_destroy(w.linked);
    g_free(w.fm);
    return rc;
}

/* ---- output --------------------------------------------------------------------------- */

static void print_json(const struct tbbt_measure *m, FILE *out)
{
    struct tbbt_json j;
    char *text;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
#define MEASURE_KEY(key, member) tbbt_json_kv(&j, key, m->member);
#define MEASURE_KEY_IF(key, member, have)                                                  \
    if (m->have)                                                                           \
        tbbt_json_kv(&j, key, m->member);                                                  \
    else                                                                                   \
        tbbt_json_kv_null(&j, key);
#include "aging/measure-keys.def"
    tbbt_json_end_object(&j);
    text = tbbt_json_finish(&j);
    fprintf(out, "%s\n", text);
    g_free(text);
}

static void print_avg(FILE *out, const char *label, bool have, double v, const char *why)
{
    if (have)
        fprintf(out, "%-26s %.3f blocks\n", label, v);
    else
        fprintf(out, "%-26s unknown (%s)\n", label, why);
}

void tbbt_measure_print(const struct tbbt_measure *m, bool json, FILE *out)
{
    if (json) {
        print_json(m, out);
        return;
    }
    fprintf(out, "%-26s %s, block size %" PRIu32 " bytes\n", "file system", m->fs_type,
            m->block_size);
    fprintf(out, "%-26s %" PRIu64 " (in %" PRIu64 " directories)\n", "files", m->files, m->dirs);
    fprintf(out, "%-26s %" PRIu64 " (%" PRIu64 " more not located)\n", "blocks", m->blocks,
            m->unlocated_blocks);
    fprintf(out, "%-26s %" PRIu64 "\n", "fragments", m->fragments);
    print_avg(out, "avg block distance", true, m->avg_block_distance, "");
    print_avg(out, "avg fragment size", true, m->avg_fragment_size, "");
    print_avg(out, "avg fragment distance", true, m->avg_fragment_distance, "");
    print_avg(out, "avg parent distance", m->have_parent_distance, m->avg_parent_distance,
              "directories cannot be located on this file system");
    print_avg(out, "avg inode distance", m->have_inode_distance, m->avg_inode_distance,
              "inodes cannot be located on this file system");
    print_avg(out, "free avg fragment size", m->have_free, m->free_avg_fragment_size,
              "no FS_IOC_GETFSMAP");
    if (m->have_free)
        fprintf(out, "%-26s %" PRIu64 " in %" PRIu64 " fragments\n", "free blocks",
                m->free_blocks, m->free_fragments);
    if (m->vanished || m->skipped)
        fprintf(out, "%-26s %" PRIu64 " vanished during the walk, %" PRIu64 " unreadable\n",
                "not measured", m->vanished, m->skipped);
}
