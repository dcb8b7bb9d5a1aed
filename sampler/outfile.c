// SPDX-License-Identifier: GPL-2.0-or-later
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "params.h"

static int target_is_acceptable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	return 0;
}

/* PATH.XXXXXX in the same directory, created with O_EXCL (mkostemp), mode 0644. */
static int create_temp(const char *path, char *tmp, size_t len)
{
	int fd;

	if ((size_t)snprintf(tmp, len, "%s.XXXXXX", path) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd >= 0 && fchmod(fd, 0644) != 0) {
		int err = errno;
		close(fd);
		unlink(tmp);
		errno = err;
		return -1;
	}
	return fd;
}

int outfile_check(const char *path, char *err, size_t errlen)
{
	char tmp[PATH_LEN + 16];
	int fd;

	if (target_is_acceptable(path)) {
		if (errno == EEXIST)
			snprintf(err, errlen, "%s exists and is not a regular file: refusing to replace it", path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fd = create_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(tmp);
	return 0;
}

int outfile_write(const char *path, void (*write)(FILE *f, const void *ctx), const void *ctx)
{
	char tmp[PATH_LEN + 16];
	FILE *f;
	int fd, err = 0;

	if (target_is_acceptable(path))
		return -1;
	fd = create_temp(path, tmp, sizeof(tmp));
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		unlink(tmp);
		errno = err;
		return -1;
	}
	errno = 0;
	write(f, ctx);
	if (fflush(f) || ferror(f) || fsync(fd))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}
