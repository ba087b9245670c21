#ifndef CHILD_PROCESS_H
#define CHILD_PROCESS_H

#include <spawn.h>

/// glibc's GNU extensions to posix_spawn, which Swift's Glibc module does not show: the child's working directory,
/// and closing every descriptor from `lowest` up in the child.
int child_process_add_chdir(posix_spawn_file_actions_t *actions, const char *path);
int child_process_add_closefrom(posix_spawn_file_actions_t *actions, int lowest);

#endif
