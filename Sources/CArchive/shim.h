// libarchive (archive.h, archive_entry.h) for the feed archive routes, plus a few inline helpers.
// They exist because libarchive's file-type macros carry a cast Swift cannot import, and the
// routes need to tell regular files, folders and everything else apart.
#ifndef CARCHIVE_SHIM_H
#define CARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>

/// Whether the entry is a regular file (AE_IFREG).
static inline int CArchive_entry_is_regular(struct archive_entry *entry) {
    return archive_entry_filetype(entry) == AE_IFREG;
}

/// Whether the entry is a folder (AE_IFDIR).
static inline int CArchive_entry_is_directory(struct archive_entry *entry) {
    return archive_entry_filetype(entry) == AE_IFDIR;
}

/// Whether the entry is a symbolic link (AE_IFLNK).
static inline int CArchive_entry_is_symlink(struct archive_entry *entry) {
    return archive_entry_filetype(entry) == AE_IFLNK;
}

/// Marks a new entry as a regular file with mode 0644.
static inline void CArchive_entry_set_regular(struct archive_entry *entry) {
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
}

/// Marks a new entry as a folder with mode 0755.
static inline void CArchive_entry_set_directory(struct archive_entry *entry) {
    archive_entry_set_filetype(entry, AE_IFDIR);
    archive_entry_set_perm(entry, 0755);
}

#endif
