// Small file helpers used across parts.
#pragma once
#include <filesystem>
#include <string>

namespace khive {

std::string read_file(const std::filesystem::path& p);                            // throws std::runtime_error naming p
void write_file_atomic(const std::filesystem::path& p, const std::string& data);  // tmp + fsync + rename
// A fresh directory under parent named prefix-p<pid>-XXXXXX (mkdtemp): the pid says whose it is, so that the
// leftovers of a process that died without cleaning up can be told apart from live ones (khive cache prune).
std::filesystem::path make_temp_dir(const std::filesystem::path& parent, const std::string& prefix);
// The pid in a make_temp_dir name, 0 when the name carries none.
long temp_dir_owner(const std::filesystem::path& dir);
// $KHIVE_CACHE, else $XDG_CACHE_HOME/khive, else $HOME/.cache/khive, else /tmp/khive-cache-<uid>.
std::filesystem::path cache_root();
// One of khive's executables (khive-judge, khive-exec, khive-jail): $`env` when set, else `name` next to this
// executable (bin/) or, for test executables deeper in the build tree, in an ancestor's bin/; else `name` itself.
std::filesystem::path sibling_executable(const char* env, const char* name);

}  // namespace khive
