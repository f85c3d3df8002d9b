// The model's replies: search/replace edits on the current source, or one whole file in a fenced block.
//
//   <<<<<<< SEARCH
//   exact lines of the current source
//   =======
//   their replacement
//   >>>>>>> REPLACE
//
//   PatchResult r = apply_edits(source, parse_edits(reply));
//   if (!r.ok) ask_again(r.error);        // names the block and why it did not apply
//   r.changed_fraction                    // share of the original lines an edit replaced (rewrite check)
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace khive::llm {

struct Edit {
  std::string search, replace;
};

struct ParsedEdits {
  std::vector<Edit> edits;
  std::string error;  // a block that is opened but not closed, a missing "=======", ...
};
ParsedEdits parse_edits(const std::string& reply);

struct PatchResult {
  bool ok = false;
  std::string source;           // the patched source
  std::string error;            // which edit did not apply and why (goes back to the model)
  int fuzzy = 0;                // edits applied by the whitespace-tolerant fallback
  double changed_fraction = 0;  // original lines replaced by the edits / original line count
};
PatchResult apply_edits(const std::string& source, const std::vector<Edit>& edits);

// The code of a whole-file reply: the longest fenced block (```cpp / ```cuda / ``` ...). nullopt with
// `why` set when there is none or the last fence is not closed (a reply cut off at max_tokens); `lang` is the fence's
// language the message names ("cuda", or "cpp" on the CPU).
std::optional<std::string> extract_code_block(const std::string& reply, std::string* why = nullptr,
                                              const std::string& lang = "cuda");

// "KEY: value" on a line of its own in the reply (e.g. CLASS, OPTIMIZATION, NOTE); "" when absent.
std::string reply_field(const std::string& reply, const std::string& key);

}  // namespace khive::llm
