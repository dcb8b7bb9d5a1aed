// SPDX-License-Identifier: GPL-2.0-or-later
#include "toolpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tool_path(const char *tool, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(tool, '/')) {
		if ((size_t)snprintf(out, len, "%s", tool) < len && access(out, X_OK) == 0)
			return 0;
		out[0] = '\0';
		return -1;
	}
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's execvp without PATH */
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, path, tool) < len && access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	out[0] = '\0';
	return -1;
}
