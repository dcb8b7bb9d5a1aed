// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output files written safely (the sampler often runs as root): a temporary file created
 * exclusively (O_EXCL, never through a symlink, unpredictable name) in the target's
 * directory, written, fsync'd and renamed over the target. A target that exists and is
 * not a regular file (a device, a FIFO, a directory) is refused.
 */
#ifndef RTGATE_OUTFILE_H
#define RTGATE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Before measuring: the target is acceptable and its directory writable. 0, or -1 with err. */
int outfile_check(const char *path, char *err, size_t errlen);
/* Write through write(f, ctx). Returns 0, or -1 with errno set. */
int outfile_write(const char *path, void (*write)(FILE *f, const void *ctx), const void *ctx);

#endif
