// Linear scans of C++ source text from outside (a model's reply, an imported Solution): what a std::regex did here
// before, without its recursion. libstdc++'s regex executor recurses once per character a repetition consumes, so one
// long line (`#include "` followed by ~100 kB) overflowed the stack and killed khive itself (exit 139) in build, eval,
// import solution and optimize.
//
//   local_include("  # include \"a/b.h\"  // why") == "a/b.h"     local_include("#include <x>") == nullopt
//   is_pragma_once(" #pragma  once ") == true
//   function_params("void f (int a, float* b) {", "f") == "int a, float* b"
//   function_params("g(); void f(int);", "f") == nullopt            (a declaration: no body)
//   function_return_type("int* f(int a) {", "f") == "int*"
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace khive {

// The quoted name of a local include directive that is the whole line (`#include "name"`, optional white space and a
// trailing // comment), as ^\s*#\s*include\s*"([^"]+)"\s*(//.*)?$ matched it.
std::optional<std::string> local_include(std::string_view line);
// The line is `#pragma once` with optional white space.
bool is_pragma_once(std::string_view line);
// The parameter text of the first definition of `fn` in src: `fn` after a non-identifier character (or at the
// start), white space, '(', the text up to the first ')', white space and '{', as \bfn\s*\(([^)]*)\)\s*\{ found it;
// nullopt when there is none. fn is an identifier, matched as plain text (never as a pattern).
std::optional<std::string> function_params(std::string_view src, std::string_view fn);
// The result type of that definition, white space collapsed (none beside punctuation), without linkage, storage
// and attribute words and without preprocessor lines or // comments before it:
//   function_return_type("#include <v>\nextern \"C\" const float *f(int a) {", "f") == "const float*"
//   function_return_type("static std::vector< float > f() {", "f") == "std::vector<float>"
std::optional<std::string> function_return_type(std::string_view src, std::string_view fn);

}  // namespace khive
