// The POSIX file helpers every layer uses: a whole write to a descriptor
// and the pieces of a path. Free functions, safe from any thread.
#pragma once

#include <sys/types.h>

#include <string>

namespace muon {

// write(2)s all of [data, data+len) to `fd`, retrying EINTR and short
// writes. Returns 0, or the errno of the write that failed (EIO for one that
// took nothing without an error). Async-signal-safe; leaves errno as it was.
int writeToFd(int fd, const char* data, size_t len);

// "dir/name" -> "dir" ("." for a bare name, "/" for "/name").
std::string directoryOf(const std::string& path);
// "dir/name" -> "name".
std::string fileNameOf(const std::string& path);
// `path` itself if it is absolute, else the working directory now joined
// with it ("./" dropped); `path` itself if the working directory cannot be
// had. Symbolic links are left as they are.
std::string absolutePath(const std::string& path);
// Whether `path` names the file open as `fd` now (same device and inode).
bool pathNamesFile(const std::string& path, int fd);

}  // namespace muon
