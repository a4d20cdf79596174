/* SPDX-License-Identifier: MIT */
/*
 * manifest: tbbt-init's manifest (docs/tbbt-init.md, "The manifest"), the one place
 * that knows its line format.  A text file of tab-separated lines, `# tbbt-manifest 2`
 * first and a checksum line (util/textsum.h) last; paths escaped as in the hierarchy
 * map (tbbt_ns_escape(), escape.c).  tbbt-init writes it as the image is built
 * (manifest-write.c, through struct tbbt_manifest_writer) and reads back the `made`
 * lines of a previous one for --force (tbbt_manifest_made()); the player loads and
 * validates it whole (manifest-read.c, tbbt_manifest_load()) to learn where each
 * TBBT-ID of the image lives.
 *
 * What it does not do: build images, look paths up, decide what goes in the parameter
 * lines (the caller formats their values).  Threading: nothing here is thread-safe; a
 * loaded manifest is read-only and may be read by several threads.
 */
#ifndef TBBT_NS_MANIFEST_H
#define TBBT_NS_MANIFEST_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TBBT_MANIFEST_HEADER "# tbbt-manifest 2"   /* the first line, without newline */

/* ---- writing (tbbt-init) ----------------------------------------------------------- */

/* A manifest being written: caller storage, tbbt_manifest_writer_init()/_fini(). */
struct tbbt_manifest_writer {
    FILE *f;                /* borrowed: the stream lines go to */
    uint32_t crc;           /* CRC32 of the bytes written so far (the checksum line) */
    GString *line;          /* the line being written */
    GString *esc;           /* an escaped path */
};

/*
 * Starts a manifest on f (borrowed until _fini(); write errors are not checked here:
 * the caller checks the stream when it closes it) and writes the header line.
 */
void tbbt_manifest_writer_init(struct tbbt_manifest_writer *w, FILE *f);

/* Frees w's buffers (not f); the checksum line must have been written before. */
void tbbt_manifest_writer_fini(struct tbbt_manifest_writer *w);

/* Writes "KEY\tVALUE\n", VALUE formatted from fmt (printable ASCII, no tab). */
void tbbt_manifest_write(struct tbbt_manifest_writer *w, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Writes "KEY\tPATH\n", or "KEY\tEXTRA\tPATH\n" when extra is not NULL, path (borrowed,
 * NUL-terminated) escaped: map, root, server, export, clone, made, obj, status failed.
 */
void tbbt_manifest_write_path(struct tbbt_manifest_writer *w, const char *key,
                              const char *extra, const char *path);

/*
 * Writes text[0..len) as it is (lines already in the manifest's format, e.g. made by other
 * writers: tbbt-init's MPI ranks) and adds it to the checksum.
 */
void tbbt_manifest_write_raw(struct tbbt_manifest_writer *w, const char *text, size_t len);

/* Writes the checksum line of every byte before it: the last line. */
void tbbt_manifest_write_sum(struct tbbt_manifest_writer *w);

/*
 * One line of a manifest's text (line, borrowed, without its newline) as a `made KIND
 * PATH` line (tbbt-init --force): 1 with *kind ('d' or 'f' as written) and the
 * unescaped path in path; 0 when it is another line; -1 when its path field (*raw,
 * pointing into line, for the message) is badly escaped.
 */
int tbbt_manifest_made(const char *line, char *kind, GString *path, const char **raw);

/* ---- reading (tbbt-play) ----------------------------------------------------------- */

/* One `obj` line of the manifest. */
struct tbbt_manifest_obj {
    uint64_t id;        /* TBBT-ID, > 0 */
    char *path;         /* unescaped, relative to a clone directory; "." = the clone
                           directory itself; components joined by '/', each valid
                           (tbbt_ns_name_ok()); NUL-terminated; owned by the manifest */
    size_t len;         /* bytes of path */
};

/* A loaded manifest.  Given by tbbt_manifest_load(): free with tbbt_manifest_free(). */
struct tbbt_manifest {
    char *root, *map;       /* from the root/map lines (unescaped; NULL if absent) */
    char *server;           /* from the server line: the image was built through NFS
                               (tbbt-init --server) on this host; NULL if absent.
                               tbbt-play's default --server */
    char *export_path;      /* from the export line (with server): the export it mounted;
                               root is then a server path under it.  Default --export */
    GPtrArray *clones;      /* char *: clone directories relative to the root ("." for
                               one clone), in manifest order */
    GArray *objs;           /* struct tbbt_manifest_obj, in manifest order (parents
                               first) */
    bool complete;          /* status complete (always true after a successful load) */
    int version;            /* 1 (no checksum line: read with a warning) or 2 */
    uint32_t crc;           /* version 2: the checksum line's value */
    bool have_map_crc;      /* map_crc holds the map-crc32 line: the checksum of the map
                               the image was built from */
    uint32_t map_crc;
    GStringChunk *strings;  /* private: holds the obj paths */
};

/*
 * Loads and validates the manifest at path (borrowed).  Strict: the first line must be
 * `# tbbt-manifest 2` (its last line is then a checksum line, util/textsum.h, checked
 * before any other line is read: TBBT_E_TRUNC without it, TBBT_E_CHECKSUM when it does
 * not match) or `# tbbt-manifest 1` (no checksum; read with one warning); every line
 * must be one of map, map-crc32, root, server, export, seed,
 * clones, scope, appends, classes, fill, clone, made, obj, stats, status with its fields (tab
 * separated, paths escaped as in the map); a path component that is empty, ".", "..",
 * longer than 255 bytes, or holds '/' (also escaped) or NUL is refused; the number of
 * clone lines must match `clones`; the last line must be `status complete`.  Returns 0
 * and *out (given: tbbt_manifest_free()), or a negative error (TBBT_E_SYNTAX for a bad
 * line, TBBT_E_MAGIC for a missing header, TBBT_E_TRUNC for a manifest without status,
 * -EIO for `status failed`, -errno) with the one-line reason "manifest 'F' line N: ..."
 * in err (errlen bytes, may be 0).  *out is untouched on error.
 */
int tbbt_manifest_load(const char *path, struct tbbt_manifest **out, char *err, size_t errlen);

/* Frees m and everything it holds; NULL is a no-op. */
void tbbt_manifest_free(struct tbbt_manifest *m);

#endif
