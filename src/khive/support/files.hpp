// Small file helpers used across parts.
#pragma once
#include <filesystem>
#include <string>

namespace khive {

std::string read_file(const std::filesystem::path& p);                 // throws std::runtime_error naming p
void write_file_atomic(const std::filesystem::path& p, const std::string& data);  // tmp + fsync + rename
// A fresh directory under parent named prefix-XXXXXX (mkdtemp).
std::filesystem::path make_temp_dir(const std::filesystem::path& parent, const std::string& prefix);
// $KHIVE_CACHE, else $XDG_CACHE_HOME/khive, else $HOME/.cache/khive, else /tmp/khive-cache-<uid>.
std::filesystem::path cache_root();

}  // namespace khive
