// Multi-file candidates (a SOL-ExecBench solution's kernel.h + kernel.cu): the candidate's own local headers
// and sources inlined into one text, so that a candidate stays one file for the builder, the cache key covers
// every file it uses, and the run directory keeps what was built.
//
//   std::string src = amalgamate_source("sol/kernel.cu");
//
// Each `#include "rel"` whose file exists relative to the including file's directory is replaced by that file
// (recursively; each file once, as with #pragma once), between `#line` directives so that the compiler's
// messages still name the original file and line. <system> includes and includes of files that do not exist
// next to the candidate are left alone. A file with no local include comes back byte for byte unchanged.
// Throws std::runtime_error naming the file that cannot be read.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace khive {

std::string amalgamate_source(const std::filesystem::path& source);

// The same over in-memory files (a Solution JSON's sources): `entry` first, then every other file named in
// `extra_units` (further translation units, e.g. a second .cu) appended in order, each local include inlined.
struct SourceFile {
  std::string path;  // relative, as in the Solution ("kernel.h", "src/kernel.cu")
  std::string content;
};
std::string amalgamate_files(const std::vector<SourceFile>& files, const std::string& entry,
                             const std::vector<std::string>& extra_units);

}  // namespace khive
