// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A program found as execvp would find it: the loads' tools and rtla are looked up here once,
 * before anything starts, so that a missing one is a reason in the record, not a failed exec.
 */
#ifndef RTGATE_TOOLPATH_H
#define RTGATE_TOOLPATH_H

#include <stddef.h>

/* 0 and its path in out (a name with a '/' is taken as it is), or -1 and out empty. */
int tool_path(const char *tool, char *out, size_t len);

#endif
